"""Deterministic computations kept beside the runs in the run cache, and audited on read.

Orchestration layer, above :mod:`bai_lib.runcache`. Some results the book needs are not runs
but long deterministic computations, such as the Bayes-optimal rule of :mod:`bai_lib.optimal`
(seconds to a minute per ``δ``, mostly spent tuning ``λ``). While a run cache is in use
(:func:`~bai_lib.runcache.use_run_cache`), :func:`cached_computation` keeps each result in the
cache's folder, one Parquet file per key (the scalars in its manifest, written exactly, the
arrays as columns, a SHA-256 of both), and follows the cache's mode:

``"audit"``
    A stored result is read and checked against its manifest; with probability
    :data:`AUDIT_PROBABILITY`, drawn from the cache's audit seed and the key, and for the keys of
    the cache's rotation slice, the ``verify`` function recomputes it (or the part of it that
    costs least to recompute, for the optimum the last backward induction at the stored ``λ``)
    and every value it returns must equal the stored one bit for bit, else
    :class:`~bai_lib.runcache.AuditFailure`. A key not stored is computed and logged as a miss.
``"off"``
    Computed, neither read nor written.
``"refresh"``
    Computed and written, unless the stored values are identical (the file is then kept as is).

Without a cache in use the computation simply runs. Keys are what was asked (every argument and
:data:`SCHEMA`), never the code's version, as for the runs.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Callable, Mapping, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _validate as V
from .optimal import OptimalStopping, two_arm_bayes_optimal, two_arm_lagrangian
from .priors import GaussianPrior
from ._parquet import hash_arrays, read_table, write_table
from .runcache import SEED_ENV, AuditFailure, CacheFileProblem, active_cache

__all__ = ["cached_computation", "cached_optimum", "Computed", "AUDIT_PROBABILITY", "SCHEMA"]

#: Version of the memo's file layout and key; part of every key.
SCHEMA = 1
#: Probability that the audit recomputes a stored result it reads (besides the rotation).
AUDIT_PROBABILITY = 0.25

#: The result of a computation, a pair of dicts, scalars (written exactly in the manifest)
#: and 1-d arrays of one length (the file's columns).
Computed = tuple[dict, dict]


def _digest(value) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


def _write(path: Path, key: dict, name: str, result: Computed) -> None:
    scalars, arrays = result
    write_table(path, {c: np.ascontiguousarray(a) for c, a in arrays.items()},
                {"schema": SCHEMA, "cache": name, "key": key, "scalars": scalars,
                 "sha256": hash_arrays(arrays, json.dumps(scalars, sort_keys=True))})


def _read(path: Path, key: dict) -> Computed:
    try:
        arrays, manifest, _ = read_table(path)
        scalars = manifest["scalars"]
    except (ValueError, KeyError) as err:
        raise CacheFileProblem(f"cached computation {path} {err}; delete it or refresh the "
                               "cache") from None
    if manifest.get("key") != key:
        raise CacheFileProblem(f"cached computation {path} holds another key than its name "
                               "says; delete it or refresh the cache")
    if hash_arrays(arrays, json.dumps(scalars, sort_keys=True)) != manifest.get("sha256"):
        raise CacheFileProblem(f"cached computation {path} does not match its manifest (edited "
                               "or damaged); delete it or refresh the cache")
    return scalars, arrays


def _same(a: Computed, b: Computed) -> bool:
    return a[0] == b[0] and a[1].keys() == b[1].keys() and all(
        a[1][c].dtype == b[1][c].dtype and np.array_equal(a[1][c], b[1][c]) for c in a[1])


def _audited(seed: int, digest: str, rotation: Optional[tuple[int, int]]) -> bool:
    draw = int(hashlib.sha256(f"{seed}:{digest}".encode()).hexdigest()[:15], 16) / 16**15
    turn = rotation is not None and int(digest[:15], 16) % rotation[1] == rotation[0]
    return draw < AUDIT_PROBABILITY or turn


def cached_computation(kind: str, key: Mapping, compute: Callable[[], Computed],
                       verify: Optional[Callable[[Computed], Computed]] = None) -> Computed:
    """The result of ``compute()``, kept in the run cache in use (module docstring).

    Parameters
    ----------
    kind : str
        Names the computation (the file's prefix; letters, digits, ``_`` and ``-``).
    key : mapping
        JSON-ready description of every argument; ``kind`` and :data:`SCHEMA` are added.
    compute : callable
        Returns ``(scalars, arrays)``: a dict of JSON numbers and a dict of 1-d arrays of one
        length.
    verify : callable, optional
        Given the stored ``(scalars, arrays)``, recomputes some of them at lower cost; every
        value it returns must equal the stored one bit for bit. Default: ``compute``.

    Returns
    -------
    (dict, dict)
        The scalars and the arrays.

    Raises
    ------
    AuditFailure
        When a recomputed value differs from the stored one.
    CacheFileProblem
        For a stored file that is unreadable, edited or another key's.
    """
    if not (isinstance(kind, str) and kind and kind.replace("_", "").replace("-", "").isalnum()):
        raise ValueError(f"kind must be a non-empty name of letters, digits, _ and -, got "
                         f"{kind!r}")
    cache = active_cache()
    if cache is None or cache.mode == "off":
        return compute()
    full = {"schema": SCHEMA, "kind": kind, **dict(key)}
    digest = _digest(full)
    path = cache.directory / f"{kind}-{digest[:24]}.parquet"
    what = f"{kind} {json.dumps(dict(key), sort_keys=True)}"
    if cache.mode == "refresh":
        cpu = time.process_time()
        result = compute()
        cpu = time.process_time() - cpu
        try:
            keep = path.exists() and _same(_read(path, full), result)
        except CacheFileProblem:
            keep = False
        if not keep:
            _write(path, full, cache.name, result)
        cache.log(event="refresh", plan=what, file=path.name, rewritten=not keep,
                  cpu_seconds=cpu)
        return result
    if not path.exists():
        cpu = time.process_time()
        result = compute()
        cache.log(event="miss", plan=what, file=path.name,
                  cpu_seconds=time.process_time() - cpu)
        return result
    stored = _read(path, full)
    if _audited(cache.audit_seed, digest, cache.rotation):
        cpu = time.process_time()
        fresh = (verify or (lambda _: compute()))(stored)
        cpu = time.process_time() - cpu
        for name, value in fresh[0].items():
            if stored[0].get(name) != value:
                _fail(cache, path, what, name, stored[0].get(name), value)
        for name, value in fresh[1].items():
            want = stored[1].get(name)
            if want is None or want.shape != value.shape or not np.array_equal(want, value):
                where = "its shape" if want is None or want.shape != value.shape else \
                    f"index {int(np.flatnonzero(want != value)[0])}"
                _fail(cache, path, what, f"{name} ({where})", want, value)
        cache.log(event="memo-audit", plan=what, file=path.name, verified=True, cpu_seconds=cpu,
                  audit_seed=cache.audit_seed)
    else:
        cache.log(event="memo-audit", plan=what, file=path.name, verified=False,
                  cpu_seconds=0.0, audit_seed=cache.audit_seed)
    return stored


def _fail(cache, path, what, name, stored, fresh):
    def show(v):
        return np.array2string(v, threshold=6) if isinstance(v, np.ndarray) else repr(v)

    raise AuditFailure(
        f"run cache audit failed in {cache.name!r}: {name} of the cached computation {what} "
        f"(file {path}) differs. Stored: {show(stored)}; recomputed: {show(fresh)}. Audit seed "
        f"{cache.audit_seed} (replay with {SEED_ENV}={cache.audit_seed}); if the change is "
        "intended, refresh the cache (`make reproduce`).")


def _optimum_result(rule: OptimalStopping) -> Computed:
    return ({"lam": rule.lam, "expected_samples": rule.expected_samples, "error": rule.error,
             "start_probability": rule.start_probability},
            {"pairs": rule.pairs.astype(np.int64), "boundary": rule.boundary.astype(np.float64)})


def cached_optimum(prior: GaussianPrior, delta: float, noise_stds: ArrayLike = 1.0, *,
                   dense: int = 200, step: float = 0.005, m_points: int = 200, nodes: int = 8,
                   rtol: float = 1e-3) -> OptimalStopping:
    """:func:`~bai_lib.optimal.two_arm_bayes_optimal`, through :func:`cached_computation`.

    The audit recomputes the backward induction at the stored ``λ`` only (the tuning of ``λ``
    costs several of them) and checks that the stored error is within ``rtol · δ`` of ``δ``;
    a rule with a randomised start is recomputed in full.

    Parameters
    ----------
    prior, delta, noise_stds, dense, step, m_points, nodes, rtol
        As :func:`~bai_lib.optimal.two_arm_bayes_optimal`.

    Returns
    -------
    OptimalStopping
    """
    if not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    delta = V.open_unit(delta, "delta")
    sig = V.noise_stds(noise_stds, prior.k)
    grid = {"dense": V.integer(dense, "dense", 1), "step": V.positive(step, "step"),
            "m_points": V.integer(m_points, "m_points", 8),
            "nodes": V.integer(nodes, "nodes", 4, 200)}
    rtol = V.positive(rtol, "rtol")
    key = {"prior": {"means": np.asarray(prior.means, float).tolist(),
                     "stds": np.asarray(prior.stds, float).tolist()},
           "noise_stds": np.asarray(sig, float).tolist(), "delta": float(delta),
           "rtol": float(rtol), **{k: (float(v) if k == "step" else int(v))
                                   for k, v in grid.items()}}

    def compute() -> Computed:
        return _optimum_result(two_arm_bayes_optimal(prior, delta, sig, rtol=rtol, **grid))

    def verify(stored: Computed) -> Computed:
        scalars = stored[0]
        if scalars["start_probability"] != 1.0 or scalars["lam"] == 0.0:
            return compute()
        if not abs(scalars["error"] - delta) <= rtol * delta:
            raise AuditFailure(f"the cached optimum at delta = {delta:g} errs with probability "
                               f"{scalars['error']!r}, not within rtol = {rtol:g} of delta; "
                               "refresh the cache (`make reproduce`)")
        return _optimum_result(two_arm_lagrangian(prior, scalars["lam"], sig, **grid))

    scalars, arrays = cached_computation("optimum", key, compute, verify)
    return OptimalStopping(arrays["pairs"], arrays["boundary"], scalars["lam"],
                           scalars["expected_samples"], scalars["error"], delta,
                           scalars["start_probability"])
