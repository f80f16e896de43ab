"""Per-run results kept on disk and audited on every read: the run cache.

Orchestration layer, beside :mod:`bai_lib.plan` and below :mod:`bai_lib.simulation`. Every
simulation (:func:`~bai_lib.simulate`, :func:`~bai_lib.simulate_deltas`, and through them the
PoE estimators, the paper's runner, instance sets and sweep cells) executes a checked
:class:`~bai_lib.plan.RunPlan`. While a cache is in use (:func:`use_run_cache`), the per-run
records of each plan (stopping time, recommendation and stop reason at every ``δ``, and the
wall-clock time of the run) are kept in one Parquet file per plan, named by a SHA-256 of the plan:
the specification (its class and every option set to other than its default), the prior or the
fixed means, the noise levels, the reward model, the confidence levels, seed, run range, cap and
:data:`SCHEMA`. The key is what was asked, never the code's version: a change in the kernels that
alters results is *caught* by the audit, not silently given a new entry; so is a changed default,
and a new option left at its default keeps every key.

Modes (:data:`MODES`; the environment variable :data:`MODE_ENV` chooses, default ``"audit"``):

``"audit"``
    A plan found in the cache is read, its file checked against its manifest (a SHA-256 of its
    values), and a sample of its runs is computed again and compared bit for bit with the stored
    ones (:func:`audit_sample`, about a tenth of the plan's samples). A difference raises
    :class:`AuditFailure` naming the cache, the plan, the run and both values. A plan not in the
    cache is computed in full and not written; it is counted as a miss in the log
    (:data:`LOG_ENV`), which the test session turns into a failure.
``"off"``
    Every plan is computed in full; the cache is neither read nor written.
``"refresh"``
    Every plan is computed in full and its file written. An existing file whose deterministic
    values are identical is kept as it is (its wall-clock times included), so a refresh with no
    change leaves the cache byte-identical; ``timings=True`` (``BAI_LIB_REFRESH_TIMINGS=1``)
    stores the new wall-clock times.

The audit sample depends on the audit seed (:data:`SEED_ENV`; a fresh random seed when unset) and
on the plan, so every test session checks other runs; the seed is in every failure message, and
setting :data:`SEED_ENV` replays the same sample.

On top of the random sample, a *rotation* (:data:`ROTATION_ENV`, ``"r/S"``) recomputes slice ``r``
of ``S`` of every plan read (:func:`rotation_runs`): a plan's runs, ranked by cost, are dealt out to
the slices in turn, so that each slice holds one run in ``S`` of every range of cost and the
longest runs of a plan, and of different plans, fall in different slices. A session that takes
``r`` from a counter such as the commit hash recomputes, over the ``S`` values, every run of
every plan, the longest ones included, at about ``1/S`` of the full cost each time.

Reading and writing need pyarrow (the ``book``, ``scale`` and ``test`` extras).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Iterator
from dataclasses import MISSING, dataclass, fields
from pathlib import Path
from typing import Callable, Optional

import numpy as np

from . import _validate as V
from ._parquet import hash_arrays, read_table, write_table
from .kernels import STOP_CENSORED, STOP_REASON_NAMES
from .plan import RunPlan
from .priors import GaussianPrior
from .shape_prior import ShapePrior

__all__ = ["RunCache", "AuditFailure", "CacheFileProblem", "use_run_cache", "active_cache",
           "stop_using_run_cache", "run_cache", "plan_key", "audit_sample", "Records", "MODES",
           "MODE_ENV", "SEED_ENV", "LOG_ENV", "FULL_ENV", "ROTATION_ENV", "ROTATION_SLICES",
           "rotation_runs", "TIMINGS_ENV", "SCHEMA", "AUDIT_SHARE", "AUDIT_LONG_RUNS",
           "AUDIT_MIN_RUNS", "AUDIT_RARE_SHARE", "run_costs", "erring_runs"]

#: Version of the file layout and of the key; part of every key.
SCHEMA = 2
#: The cache's modes (see the module docstring).
MODES = ("audit", "off", "refresh")
#: Environment variable choosing the mode of :func:`use_run_cache` (default ``"audit"``).
MODE_ENV = "BAI_LIB_RUN_CACHE"
#: Environment variable holding the audit seed, a non-negative integer; setting it replays an
#: audit.
SEED_ENV = "BAI_LIB_AUDIT_SEED"
#: Environment variable naming a file to which every cached plan appends one JSON line.
LOG_ENV = "BAI_LIB_RUN_CACHE_LOG"
#: Environment variable listing cache names (comma-separated) computed in full, mode ``"off"``.
FULL_ENV = "BAI_LIB_RUN_CACHE_FULL"
#: Environment variable holding the audit's rotation ``"r/S"`` (``0 <= r < S``). Slice ``r`` of
#: every plan read is recomputed too (:func:`rotation_runs`).
ROTATION_ENV = "BAI_LIB_RUN_CACHE_ROTATION"
#: Number of rotation slices the test session uses. Each session recomputes one run in this
#: many of every cached plan, and this many sessions recompute them all.
ROTATION_SLICES = 50
#: Environment variable that makes ``"refresh"`` store new wall-clock times.
TIMINGS_ENV = "BAI_LIB_REFRESH_TIMINGS"
#: Share of a plan's samples its audit may recompute (see :func:`audit_sample`).
AUDIT_SHARE = 0.10
#: Extra runs of the top decile of the cost an audit draws, budget permitting.
AUDIT_LONG_RUNS = 10
#: Runs audited per plan at least (all of them when the plan has fewer).
AUDIT_MIN_RUNS = 20
#: Share of the erring runs, and of the censored runs, added to the sample (at least one each).
AUDIT_RARE_SHARE = 0.05

_STOP_CODE_TYPE = np.int8
_REC_TYPE = np.int32


class AuditFailure(AssertionError):
    """A run recomputed by the audit differs from the cached one."""


class CacheFileProblem(ValueError):
    """A cache file that cannot be trusted: unreadable, edited, or another plan's."""


@dataclass
class Records:
    """The per-run records of a plan at its levels (rows: ``plan.deltas``; columns: runs)."""

    taus: np.ndarray      # int64, (m, n)
    recs: np.ndarray      # int64, (m, n)
    codes: np.ndarray     # int64, (m, n)
    seconds: np.ndarray   # float64, (m, n)
    delta0s: list

    def take(self, index: np.ndarray) -> "Records":
        return Records(self.taus[:, index], self.recs[:, index], self.codes[:, index],
                       self.seconds[:, index], list(self.delta0s))


# --------------------------------------------------------------------------------------------
# the key


def _canonical(value):
    """A JSON value standing for ``value`` exactly, or ``None`` when there is none."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)  # json writes repr(float): exact round trip
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"shape": list(value.shape), "values": value.ravel().tolist()}
    if isinstance(value, tuple):
        items = [_canonical(v) for v in value]
        return _NOT if any(i is _NOT for i in items) else {"tuple": items}
    return _NOT


_NOT = object()


def _spec_key(spec):
    """The class's name and the options that differ from their defaults."""
    out = {}
    for f in fields(spec):
        v = _canonical(getattr(spec, f.name))
        if v is _NOT:
            return None  # a field holding code (a sampling rule of one's own): not keyable
        if f.default is not MISSING and v == _canonical(f.default):
            continue
        out[f.name] = v
    return {"class": type(spec).__qualname__, "options": out}


def _prior_key(prior):
    if prior is None:
        return None
    if isinstance(prior, GaussianPrior):
        return {"GaussianPrior": {"means": np.asarray(prior.means, float).tolist(),
                                  "stds": np.asarray(prior.stds, float).tolist()}}
    if isinstance(prior, ShapePrior):  # BetaPrior, GammaPrior: keyed by class name
        return {type(prior).__name__: {"a": np.asarray(prior.a, float).tolist(),
                                       "b": np.asarray(prior.b, float).tolist()}}
    return _NOT


def plan_key(plan: RunPlan) -> Optional[dict]:
    """The description of ``plan`` the cache is keyed by (JSON-ready), or ``None`` for a plan it
    cannot key (a specification holding code, such as a
    :class:`~bai_lib.algorithms.SamplingRule`).

    Fixed means enter by shape and SHA-256 of their float64 bytes; every other value exactly."""
    spec = _spec_key(plan.algorithm)
    prior = _prior_key(plan.prior)
    if spec is None or prior is _NOT:
        return None
    means = None
    if plan.means is not None:
        m = np.ascontiguousarray(plan.means, dtype="<f8")
        means = {"shape": list(m.shape), "sha256": hashlib.sha256(m.tobytes()).hexdigest()}
    return {"schema": SCHEMA, "algorithm": spec, "prior": prior, "means": means,
            "noise_stds": np.asarray(plan.noise_stds, float).tolist(),
            "rewards": plan.rewards, "deltas": [float(d) for d in plan.deltas],
            "n_runs": int(plan.n_runs), "seed": int(plan.seed),
            "first_run": int(plan.first_run), "max_samples": int(plan.max_samples),
            # only when set, so that the keys of the plans that look at every sample stay
            **({} if plan.look_every == 1 else {"look_every": int(plan.look_every)}),
            **({} if plan.look_at is None else {"look_at": list(plan.look_at)})}


def _key_digest(key: dict) -> str:
    text = json.dumps(key, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _describe(plan: RunPlan) -> str:
    prior = "fixed means" if plan.means is not None else repr(plan.prior)
    levels = ", ".join(f"{d:g}" for d in plan.deltas)
    return (f"{plan.algorithm.label} on {prior}, δ = {levels}, runs {plan.first_run:,}.."
            f"{plan.first_run + plan.n_runs - 1:,} of seed {plan.seed}, "
            f"max_samples {plan.max_samples:,}")


# --------------------------------------------------------------------------------------------
# the audit sample


def run_costs(plan: RunPlan, taus: np.ndarray) -> np.ndarray:
    """Samples a run costs to recompute: its stopping time at the smallest ``δ`` when one
    trajectory serves every level, else the sum over levels. Given the per-level wall-clock
    times of the runs instead of ``taus``, the same rule gives their seconds."""
    taus = taus.astype(np.float64)  # runs by blocks stand for up to 2**62 samples each
    if len(plan.deltas) == 1 or plan.algorithm.one_trajectory:
        return taus.max(axis=0)
    return taus.sum(axis=0)


def audit_sample(audit_seed: int, digest: str, costs: np.ndarray, erring: np.ndarray,
                 censored: np.ndarray, *, min_runs: int = AUDIT_MIN_RUNS,
                 rare_share: float = AUDIT_RARE_SHARE, share: float = AUDIT_SHARE) -> np.ndarray:
    """The runs (sorted positions) one audit recomputes, drawn from ``audit_seed`` and the plan's
    ``digest``.

    Every run when there are at most ``min_runs``. Otherwise, within a budget of ``share`` of the
    plan's samples (``costs``, :func:`run_costs`):

    - one run from each decile of the cost, so that a change touching only short or only long
      runs is seen;
    - a random ``rare_share`` of the erring runs and of the censored runs, at least one of each
      when there are any, which a change touching only rare runs would otherwise dodge;
    - filled up to ``min_runs`` with runs of the nine lower deciles (budget permitting);
    - up to :data:`AUDIT_LONG_RUNS` more runs of the top decile, drawn with probabilities
      proportional to their cost: the budget left goes to the long runs, where a change that
      only touches long runs shows.

    Each of these is drawn at random among the runs of its group that fit in what is left of the
    budget; a group with no such run is left out, so a plan whose runs each cost more than
    ``share / min_runs`` of it gets fewer than ``min_runs`` audited runs (at least one, the
    cheapest when none fits), and a run that alone costs more than ``share`` of its plan is never
    audited: the audit of the book is the sum of many plans'. The share of the samples an audit
    costs is reported by the log (:data:`LOG_ENV`)."""
    n = len(costs)
    if n <= min_runs:
        return np.arange(n)
    rng = np.random.default_rng([int(audit_seed), int(digest[:15], 16)])
    costs = np.asarray(costs, dtype=float)
    left = [share * costs.sum()]
    chosen = np.zeros(n, dtype=bool)

    def draw(group, count=1, by_cost=False):
        for _ in range(count):
            fit = group[~chosen[group] & (costs[group] <= left[0])]
            if not fit.size:
                return
            i = int(rng.choice(fit, p=costs[fit] / costs[fit].sum() if by_cost else None))
            chosen[i] = True
            left[0] -= costs[i]

    order = np.argsort(costs, kind="stable")
    for decile in np.array_split(order, 10):
        draw(decile)
    for flags in (erring, censored):
        idx = np.flatnonzero(flags)
        if idx.size:
            draw(idx, max(1, int(rng.binomial(idx.size, rare_share))))
    lower = order[:(9 * n) // 10]
    draw(lower, max(0, min_runs - int(chosen.sum())))
    draw(order[(9 * n) // 10:], AUDIT_LONG_RUNS, by_cost=True)
    if not chosen.any():  # every run costs more than the budget: the cheapest one
        chosen[order[0]] = True
    return np.flatnonzero(chosen)


def rotation_runs(costs: np.ndarray, digest: str, rotation: Optional[tuple[int, int]]
                  ) -> np.ndarray:
    """Positions (sorted) of the runs of a plan that slice ``r`` of ``S`` recomputes, for
    ``rotation = (r, S)``; none for ``None``.

    The plan's runs, ranked by ``costs`` (:func:`run_costs`; longest first, ties by position),
    are dealt out to the ``S`` slices in turn, starting at a slice set by the plan's ``digest``
    (hexadecimal). The slices partition the runs, so ``S`` sessions with ``r = 0, ..., S - 1``
    recompute every run once; each slice holds one run in ``S`` of every range of cost, so it
    costs about ``1/S`` of the plan plus at most one of its ``S`` longest runs; and the offset
    spreads the longest runs of different plans over different slices, so that a session does
    not pay for the longest run of every plan at once (a slice by run index would gather them
    by chance)."""
    if rotation is None:
        return np.empty(0, dtype=np.int64)
    r, slices = rotation
    costs = np.asarray(costs)
    n = costs.size
    order = np.lexsort((np.arange(n), -costs.astype(np.float64)))
    offset = int(digest[:15], 16) % slices
    return np.sort(order[(np.arange(n) + offset) % slices == r]).astype(np.int64)


def _env_rotation() -> Optional[tuple[int, int]]:
    raw = os.environ.get(ROTATION_ENV, "").strip()
    if not raw:
        return None
    m = re.fullmatch(r"(\d+)\s*/\s*(\d+)", raw)
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise ValueError(f"{ROTATION_ENV} must be 'r/S' with 0 <= r < S, got {raw!r}")
    return int(m.group(1)), int(m.group(2))


def erring_runs(means: np.ndarray, recs: np.ndarray) -> np.ndarray:
    """Whether each run recommends, at some level, an arm below the best mean."""
    best = means.max(axis=1)
    rows = np.arange(means.shape[0])
    return np.any(means[rows[None, :], recs] < best[None, :], axis=0)


# --------------------------------------------------------------------------------------------
# files


def _columns(rec: Records) -> tuple[dict, dict]:
    """The deterministic columns and the wall-clock ones of a file."""
    det, clock = {}, {}
    for j in range(rec.taus.shape[0]):
        det[f"tau_{j}"] = rec.taus[j].astype(np.int64)
        det[f"recommendation_{j}"] = rec.recs[j].astype(_REC_TYPE)
        det[f"stop_code_{j}"] = rec.codes[j].astype(_STOP_CODE_TYPE)
    if np.all(rec.seconds == rec.seconds[:1]):  # one trajectory timed once for every level
        clock["seconds"] = rec.seconds[0].astype(np.float32)
    else:
        for j in range(rec.taus.shape[0]):
            clock[f"seconds_{j}"] = rec.seconds[j].astype(np.float32)
    return det, clock


def _write(path: Path, key: dict, name: str, rec: Records) -> None:
    det, clock = _columns(rec)
    write_table(path, {**det, **clock},
                {"schema": SCHEMA, "cache": name, "key": key, "rows": int(rec.taus.shape[1]),
                 "delta0s": rec.delta0s, "sha256": hash_arrays(det)})


def _read(path: Path, key: dict) -> tuple[Records, dict]:
    try:
        cols, manifest, rows = read_table(path)
    except ValueError as err:
        raise CacheFileProblem(f"run cache file {path} {err}; delete it or refresh the "
                               "cache") from None
    if manifest.get("key") != key:
        raise CacheFileProblem(f"run cache file {path} holds another plan than its name says; "
                               "delete it or refresh the cache")
    m = len(key["deltas"])
    try:
        det = {f"{p}_{j}": cols[f"{p}_{j}"] for j in range(m)
               for p in ("tau", "recommendation", "stop_code")}
        if "seconds" in cols:
            secs = np.tile(cols["seconds"].astype(np.float64), (m, 1))
        else:
            secs = np.stack([cols[f"seconds_{j}"].astype(np.float64) for j in range(m)])
    except KeyError as err:
        raise CacheFileProblem(f"run cache file {path} lacks column {err}") from None
    if hash_arrays(det) != manifest.get("sha256") or rows != manifest.get("rows"):
        raise CacheFileProblem(f"run cache file {path} does not match its manifest (edited or "
                               "damaged); delete it or refresh the cache")
    rec = Records(np.stack([det[f"tau_{j}"] for j in range(m)]).astype(np.int64),
                  np.stack([det[f"recommendation_{j}"] for j in range(m)]).astype(np.int64),
                  np.stack([det[f"stop_code_{j}"] for j in range(m)]).astype(np.int64),
                  secs, list(manifest.get("delta0s", [None] * m)))
    return rec, manifest


# --------------------------------------------------------------------------------------------
# the cache


def _env_seed() -> int:
    raw = os.environ.get(SEED_ENV, "").strip()
    if not raw:
        return secrets.randbits(63)
    try:
        return V.integer(int(raw), SEED_ENV, 0, 2**63 - 1)
    except ValueError:
        raise ValueError(f"{SEED_ENV} must be a non-negative integer, got {raw!r}") from None


@dataclass
class RunCache:
    """A folder of cached plans in one mode (see the module docstring).

    Attributes
    ----------
    directory : Path
        Where the plans' files are (``<digest>.parquet``).
    name : str
        The name failures and the log give (a chapter's name in the book).
    mode : {"audit", "off", "refresh"}
    audit_seed : int
        Seed of the audit samples.
    timings : bool
        Whether ``"refresh"`` stores new wall-clock times in files whose values are unchanged.
    rotation : (int, int) or None
        ``(r, S)``: the audit also recomputes the runs of index ``r`` modulo ``S``
        (:func:`rotation_runs`).
    """

    directory: Path
    name: str
    mode: str
    audit_seed: int
    timings: bool = False
    rotation: Optional[tuple[int, int]] = None

    def path(self, key: dict) -> Path:
        """The file of the plan with this key."""
        return self.directory / f"{_key_digest(key)[:24]}.parquet"

    def log(self, **entry) -> None:
        """Append one JSON line to the log (:data:`LOG_ENV`), if one is set."""
        target = os.environ.get(LOG_ENV)
        if not target:
            return
        line = json.dumps({"cache": self.name, "mode": self.mode, **entry}) + "\n"
        with open(target, "a", encoding="utf-8") as fh:  # one append per line: atomic enough
            fh.write(line)

    def records(self, plan: RunPlan, compute: Callable[[RunPlan, Optional[np.ndarray]], Records]
                ) -> Records:
        """The records of ``plan``: computed, read and audited, or computed and stored, as the
        mode says. ``compute(plan, index)`` computes the runs at positions ``index`` (all of
        them for ``None``)."""
        key = plan_key(plan) if self.mode != "off" else None
        if key is None:
            return compute(plan, None)
        path = self.path(key)
        if self.mode == "refresh":
            return self._refresh(plan, key, path, compute)
        if not path.exists():
            cpu = time.process_time()
            rec = compute(plan, None)
            self.log(event="miss", plan=_describe(plan), file=path.name, runs=plan.n_runs,
                      cpu_seconds=time.process_time() - cpu)
            return rec
        stored, _ = _read(path, key)
        self._audit(plan, key, path, stored, compute)
        return stored

    def _refresh(self, plan, key, path, compute) -> Records:
        rec = compute(plan, None)
        keep = False
        if path.exists() and not self.timings:
            try:
                old, _ = _read(path, key)
            except CacheFileProblem:
                old = None
            keep = old is not None and all(
                np.array_equal(a, b) for a, b in ((old.taus, rec.taus), (old.recs, rec.recs),
                                                  (old.codes, rec.codes))) \
                and old.delta0s == rec.delta0s
        if not keep:
            _write(path, key, self.name, rec)
        self.log(event="refresh", plan=_describe(plan), file=path.name, runs=plan.n_runs,
                  rewritten=not keep, samples=int(run_costs(plan, rec.taus).sum()),
                  seconds=float(run_costs(plan, rec.seconds).sum()))
        return rec

    def _audit(self, plan, key, path, stored: Records, compute) -> None:
        means = plan.instance_means()
        costs, digest = run_costs(plan, stored.taus), _key_digest(key)
        sample = audit_sample(self.audit_seed, digest, costs, erring_runs(means, stored.recs),
                              np.any(stored.codes == STOP_CENSORED, axis=0))
        rotated = rotation_runs(costs, digest, self.rotation)
        index = np.union1d(sample, rotated)
        cpu = time.process_time()
        fresh = compute(plan, index)
        cpu = time.process_time() - cpu
        want = stored.take(index)
        for name, a, b in (("stopping time", want.taus, fresh.taus),
                           ("recommendation", want.recs, fresh.recs),
                           ("stop code", want.codes, fresh.codes)):
            bad = np.argwhere(a != b)
            if bad.size:
                j, pos = (int(x) for x in bad[0])
                self._fail(plan, path, index[pos], j, name, want, fresh, pos)
        if [_canonical(d) for d in want.delta0s] != [_canonical(d) for d in fresh.delta0s]:
            raise AuditFailure(
                f"run cache audit failed in {self.name!r}: plan {_describe(plan)} "
                f"(file {path}): stored Δ0 {want.delta0s}, recomputed {fresh.delta0s}")
        seconds = run_costs(plan, stored.seconds)
        self.log(event="audit", plan=_describe(plan), file=path.name, runs=plan.n_runs,
                  audited=int(index.size), samples=int(costs.sum()),
                  samples_audited=int(costs[index].sum()),
                  seconds=float(seconds.sum()), seconds_audited=float(seconds[index].sum()),
                  rotated=int(rotated.size), samples_rotated=int(costs[rotated].sum()),
                  cpu_seconds=cpu, audit_seed=self.audit_seed)

    def _fail(self, plan, path, pos_in_plan, j, what, want, fresh, pos):
        def show(r):
            return (f"τ = {int(r.taus[j, pos]):,}, recommendation {int(r.recs[j, pos])}, "
                    f"stop reason {STOP_REASON_NAMES[int(r.codes[j, pos])]!r}")

        raise AuditFailure(
            f"run cache audit failed in {self.name!r}: the {what} of run "
            f"{plan.first_run + int(pos_in_plan):,} at δ = {plan.deltas[j]:g} differs. Plan: "
            f"{_describe(plan)} (file {path}). Stored: {show(want)}; recomputed: {show(fresh)}. "
            f"Audit seed {self.audit_seed} (replay with {SEED_ENV}={self.audit_seed}); if the "
            f"change is intended, refresh the cache ({MODE_ENV}=refresh, `make reproduce`).")


_ACTIVE: list = [None]


def use_run_cache(directory: str | Path, *, name: Optional[str] = None,
                  mode: Optional[str] = None) -> RunCache:
    """Keep the per-run results of every simulation of this process in ``directory`` (see the
    module docstring), from now on.

    Parameters
    ----------
    directory : path
        The cache's folder (created when a plan is first written).
    name : str, optional
        Its name in failures and in the log; default: the folder's name.
    mode : {"audit", "off", "refresh"}, optional
        Default: ``"off"`` when ``name`` is listed in :data:`FULL_ENV`, else
        :data:`MODE_ENV`, else ``"audit"``. The audit's rotation comes from
        :data:`ROTATION_ENV`.

    Returns
    -------
    RunCache
    """
    directory = Path(directory)
    name = directory.name if name is None else str(name)
    if mode is None:
        full = {s.strip() for s in os.environ.get(FULL_ENV, "").split(",") if s.strip()}
        mode = "off" if name in full else (os.environ.get(MODE_ENV, "").strip() or "audit")
        V.choice(mode, MODES, MODE_ENV)
    else:
        V.choice(mode, MODES, "mode")
    timings = os.environ.get(TIMINGS_ENV, "").strip() not in ("", "0")
    cache = RunCache(directory, name, mode, _env_seed(), timings, _env_rotation())
    _ACTIVE[0] = cache
    return cache


def stop_using_run_cache() -> None:
    """Compute every simulation in full again (no cache in use)."""
    _ACTIVE[0] = None


def active_cache() -> Optional[RunCache]:
    """The cache in use, or ``None``."""
    return _ACTIVE[0]


@contextlib.contextmanager
def run_cache(directory: str | Path, *, name: Optional[str] = None,
              mode: Optional[str] = None) -> Iterator[RunCache]:
    """:func:`use_run_cache` for a ``with`` block; the previous cache (or none) afterwards."""
    previous = _ACTIVE[0]
    try:
        yield use_run_cache(directory, name=name, mode=mode)
    finally:
        _ACTIVE[0] = previous

