"""Run a real experiment: the algorithms of :mod:`bai_lib.algorithms` on observations that
arrive from outside (an ask/tell interface).

Orchestration layer. An :class:`Experiment` is made from a specification, a prior (or, for an
algorithm that needs none, the number of arms) and ``δ``. It answers three questions at any
time: which arms to sample next (:meth:`~Experiment.next_arms`), whether to stop, which arm to
choose and what is guaranteed (:meth:`~Experiment.status`); it takes the observations as they
come (:meth:`~Experiment.record`, one by one or per arm as counts and sums,
:meth:`~Experiment.record_counts`).

**Looks.** The stop is checked at the end of each recorded batch, as platforms do (hourly,
daily): recording observations one at a time checks after each, as the simulators do; recording
a day's worth at once checks once. Algorithm 1 checks at the end of the first round that
completes at or after a look (its rounds sample every active arm once), and eliminates arms
only there. Checking at fewer times keeps the guarantees of the library's stopping rules, whose
confidence bounds hold at all times at once (Algorithm 1's ``Conf``, the GLR thresholds); the
stop comes later, by an amount the simulations measure (the test may pass at one step and fail
again at the next look).

**Same runs as the simulators.** The experiment consumes its generator (seeded by ``seed`` and
``run``, as run ``run`` of :func:`bai_lib.simulate` with that seed) exactly as the simulator
does: recorded one at a time, the rewards a simulated run draws give that run's stopping time,
stop reason and recommendation (:meth:`~Experiment.simulate` draws them), which the tests check
for every algorithm and reward family. (On two arms the importance sampler
:func:`bai_lib.poe.importance_poe` runs Algorithm 1 by its two-arm walk, same law, another
stream; :func:`bai_lib.simulate` and the experiment take the elimination kernel's steps.)

**State.** The state of an experiment is its log of observations: :meth:`~Experiment.save`
writes it with the specification to a versioned JSON file, :meth:`~Experiment.load` replays it
and checks the stored status against the replay. Every call replays the log in one compiled
pass (:mod:`bai_lib.algorithms.ask_tell`): from about 1 ms (Algorithm 1) to 40 ms (TTTS on
Bernoulli arms) per 10⁵ observations (``benchmarks/bench_online.py``), so recording a batch at a
time suits experiments of any length, and recording one observation at a time suits those of up
to about 10⁵.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from ._version import VERSION
from .algorithms import ALGORITHMS, Algorithm, resolve
from .algorithms.ask_tell import PLAN, RUNNING, SIMULATE, look_schedule
from .beta_prior import BetaPrior
from .families import reward_model
from .gamma_prior import GammaPrior
from .kernels import STOP_CENSORED, STOP_REASON_NAMES, cancel_flag
from .plan import RunPlan
from .priors import GaussianPrior

__all__ = ["Experiment", "Status", "SCHEMA"]

#: The format of the state files :meth:`Experiment.save` writes; a file of another format is
#: refused.
SCHEMA = "bai_lib.online/1"

_PRIORS = {"GaussianPrior": GaussianPrior, "BetaPrior": BetaPrior, "GammaPrior": GammaPrior}


@dataclass(frozen=True)
class Status:
    """Where an :class:`Experiment` stands.

    Attributes
    ----------
    stopped : bool
        Whether the algorithm has stopped (at a look, or at ``max_samples``).
    reason : str
        ``"running"``, or the stop reason (a name of :data:`bai_lib.kernels.STOP_REASON_NAMES`:
        ``"glr"``, ``"indifference"``, ``"single_arm"``, ``"censored"``).
    recommendation : int
        The arm to choose: the recommendation at the stop, else the current empirical best
        (the leader; 0-based).
    samples : int
        Observations at the stop, or recorded so far.
    unused : int
        Observations recorded after the stop (Algorithm 1 stops at the end of a round, which
        may fall inside the batch that brought the look).
    counts, sums : ndarray
        Per-arm observations and their sums up to ``samples``.
    guarantee : str
        What the stop guarantees, in one sentence (while running, what a stop will
        guarantee; after a censored stop, nothing).
    """

    stopped: bool
    reason: str
    recommendation: int
    samples: int
    unused: int
    counts: np.ndarray
    sums: np.ndarray
    guarantee: str

    @property
    def means(self) -> np.ndarray:
        """The empirical means (``nan`` for an arm without observations)."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)

    def as_dict(self) -> dict:
        """The status as plain JSON values."""
        return {"stopped": self.stopped, "reason": self.reason,
                "recommendation": self.recommendation, "samples": self.samples,
                "unused": self.unused, "counts": [int(c) for c in self.counts],
                "sums": [float(s) for s in self.sums], "guarantee": self.guarantee}


def _spec_description(spec: Algorithm) -> dict:
    name = spec.name
    if ALGORITHMS.get(name) is not type(spec):
        raise ValueError(f"algorithm: {spec!r} is not a registered specification; a state file "
                         f"can hold only those of bai_lib.algorithms.ALGORITHMS")
    options = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)
               if getattr(spec, f.name) != f.default}
    for key, value in options.items():
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise ValueError(f"algorithm: option {key}={value!r} cannot be saved")
    return {"name": name, "options": options}


def _prior_description(prior) -> Optional[dict]:
    if prior is None:
        return None
    if isinstance(prior, GaussianPrior):
        return {"type": "GaussianPrior", "means": [float(x) for x in prior.means],
                "stds": [float(x) for x in prior.stds]}
    return {"type": type(prior).__name__, "a": [float(x) for x in prior.a],
            "b": [float(x) for x in prior.b]}


def _prior_from(d: Optional[dict]):
    if d is None:
        return None
    cls = _PRIORS.get(d.get("type")) if isinstance(d, dict) else None
    if cls is None:
        raise ValueError(f"prior: unknown prior description {d!r}")
    if cls is GaussianPrior:
        return GaussianPrior(np.asarray(d["means"], float), np.asarray(d["stds"], float))
    return cls(d["a"], d["b"])


class Experiment:
    """One algorithm run on observations recorded from outside (the module docstring).

    Parameters
    ----------
    algorithm : Algorithm or str
        A specification of :mod:`bai_lib.algorithms` or a name of
        :data:`~bai_lib.algorithms.ALGORITHMS` (:meth:`supported` lists them: every one has an
        engine; a :class:`~bai_lib.algorithms.SamplingRule` runs too, but its state cannot be
        saved).
    prior : GaussianPrior, BetaPrior, GammaPrior or None
        The prior the algorithm is given (Algorithm 1 derives ``Δ0`` from it, TTTS samples its
        posterior); its class sets the reward model (Gaussian, Bernoulli, Poisson), as in
        :func:`bai_lib.simulate`. ``None`` for an algorithm that uses none: then give ``k``.
    delta : float
        The confidence level, in ``(0, 1)``.
    k : int, optional
        The number of arms when ``prior`` is ``None``.
    noise_stds, rewards, max_samples
        As in :func:`bai_lib.simulate`; ``max_samples`` is the maximum duration (the run stops,
        censored, when the next pull or round would pass it).
    seed, run : int
        The generator of the algorithm's own draws (TTTS's posterior samples, Algorithm 1's
        coin at an indifference stop): that of run ``run`` of :func:`bai_lib.simulate` with
        ``seed``.
    """

    def __init__(self, algorithm: Algorithm | str,
                 prior: Optional[GaussianPrior | BetaPrior | GammaPrior], delta: float, *,
                 k: Optional[int] = None, noise_stds: Optional[ArrayLike] = None,
                 rewards: Optional[str] = None, seed: int = 0, run: int = 0,
                 max_samples: Optional[int] = None) -> None:
        spec = resolve(algorithm)
        delta = V.confidence_level(delta)
        if prior is None:
            if k is None:
                raise ValueError("k is None: give the number of arms when prior is None")
            k = V.integer(k, "k", 2)
        elif k is not None and V.integer(k, "k", 2) != prior.k:
            raise ValueError(f"k = {k} but the prior has {prior.k} arms")
        # a plan of one run checks every argument as simulate does (means stand in for the
        # instance of a prior-free algorithm: they only carry the number of arms)
        placeholder = None
        if prior is None:
            lo, hi = reward_model(rewards or "gaussian").mean_range
            placeholder = np.full(k, 0.5 if math.isinf(hi) or math.isinf(lo) else (lo + hi) / 2)
        plan = RunPlan.build(spec, prior, noise_stds, [delta], 1, seed, means=placeholder,
                             first_run=run, max_samples=max_samples, rewards=rewards)
        binding = spec.bind(prior, plan.noise_stds, plan.deltas, plan.max_samples, plan.rewards)
        if binding.ask_tell is None:
            raise ValueError(f"algorithm: {spec.label} has no ask/tell engine; the experiments "
                             f"run {', '.join(self.supported())}")
        self.algorithm = spec
        self.prior = prior
        self.delta = delta
        self.k = plan.k
        self.noise_stds = plan.noise_stds
        self.rewards = plan.rewards
        self.seed = plan.seed
        self.run = plan.first_run
        self.max_samples = plan.max_samples
        self._model = reward_model(plan.rewards)
        self._engine = binding.ask_tell
        self._arms = np.zeros(0, dtype=np.int64)
        self._xs = np.zeros(0)
        self._looks = np.zeros(0, dtype=np.uint8)
        self._status = self._replay(self._arms, self._xs, self._looks)[0]

    @property
    def guarantee(self) -> str:
        """What a stop of this experiment guarantees
        (:meth:`bai_lib.algorithms.Algorithm.guarantee`)."""
        return self.algorithm.guarantee(self.prior, self.rewards, self.delta)

    @staticmethod
    def supported() -> list[str]:
        """The names of :data:`~bai_lib.algorithms.ALGORITHMS` an experiment runs."""
        return list(ALGORITHMS)

    # -- the engine -------------------------------------------------------------------------
    def _replay(self, arms, xs, looks, mode=PLAN, n_more=0, look_every=1, means=None):
        state = _rng.seed_state(self.seed, self.run, _rng.STREAM_ALGO)
        out_arms = np.zeros(max(n_more, 1), dtype=np.int64)
        out_xs = np.zeros(max(n_more, 1))
        S = np.zeros(self.k)
        N = np.zeros(self.k, dtype=np.int64)
        mu = np.zeros(self.k) if means is None else means
        code, rec, t, n_out, bad = self._engine(state, arms, xs, looks, mode, n_more,
                                                look_schedule(look_every), mu, out_arms, out_xs,
                                                S, N, cancel_flag())
        if bad >= 0:
            return None, int(bad), int(t)
        stopped = code != RUNNING
        if code == RUNNING:
            promise = f"Running; a stop will guarantee: {self.guarantee}"
        elif code == STOP_CENSORED:
            promise = "None: the run reached max_samples without its stopping rule firing."
        else:
            promise = self.guarantee
        status = Status(stopped=stopped, reason=STOP_REASON_NAMES[code] if stopped else "running",
                        recommendation=int(rec), samples=int(t),
                        unused=int(arms.size - t) if stopped else 0, counts=N, sums=S,
                        guarantee=promise)
        return status, out_arms[:n_out], out_xs[:n_out]

    # -- asking -----------------------------------------------------------------------------
    def status(self) -> Status:
        """Whether the algorithm stopped, the arm to choose and what is guaranteed."""
        return self._status

    def next_arms(self, n: int = 1) -> np.ndarray:
        """The next ``n`` arms to sample (0-based), fewer if ``max_samples`` comes first.

        One arm is the rule's own choice. For a batch, each pending pull is believed to pay its
        arm's current empirical mean, so that the counts move on and the means stay put (before
        every arm has a reward, the plan samples each arm once, then goes round the arms);
        Algorithm 1 goes round its active arms, which no elimination changes before the next
        look. Recording other arms is allowed (the rule's step is taken, then the recorded arm
        is booked), except where Algorithm 1's rounds forbid it.
        """
        n = V.integer(n, "n", 1)
        self._refuse_if_stopped()
        n = min(n, self.max_samples - self._arms.size)
        status, planned, _ = self._replay(self._arms, self._xs, self._looks, PLAN, n)
        return planned.copy()

    # -- telling ----------------------------------------------------------------------------
    def record(self, arms: ArrayLike, rewards: ArrayLike) -> Status:
        """Record observations, in the order they came (``arms[i]`` paid ``rewards[i]``), then
        look: check the stop. Returns the new :meth:`status`.

        Rewards must fit the reward model: finite numbers (Gaussian), 0 or 1 (Bernoulli),
        non-negative integers (Poisson). Nothing is recorded when any observation is refused.
        """
        self._refuse_if_stopped()
        arms_a = np.atleast_1d(np.asarray(arms))
        xs_a = np.atleast_1d(np.asarray(rewards))
        if arms_a.ndim != 1 or xs_a.shape != arms_a.shape or arms_a.size == 0:
            raise ValueError(f"arms and rewards must be two sequences of the same non-zero "
                             f"length, got shapes {arms_a.shape} and {xs_a.shape}")
        if not np.issubdtype(arms_a.dtype, np.integer) or np.any(arms_a < 0) or \
                np.any(arms_a >= self.k):
            raise ValueError(f"arms must be integers in 0..{self.k - 1}, got "
                             f"{arms_a[:8].tolist()}")
        xs_a = self._check_rewards(xs_a)
        room = self.max_samples - self._arms.size
        if arms_a.size > room:
            raise ValueError(f"arms: {arms_a.size} observations, but max_samples = "
                             f"{self.max_samples:,} leaves room for {room:,}")
        return self._append(arms_a.astype(np.int64), xs_a)

    def record_counts(self, counts: ArrayLike, totals: ArrayLike) -> Status:
        """Record a batch given per arm: ``counts[i]`` observations of arm ``i`` summing to
        ``totals[i]`` (successes for Bernoulli arms), then look.

        The batch is booked in the order :meth:`next_arms` planned when the counts match it,
        else going round the arms with observations left. Only the totals at the look matter for
        the stop; each pull is booked with the arm's batch mean (Gaussian; sums then agree to
        rounding), its successes first (Bernoulli), or the total split as evenly as integers
        allow (Poisson).
        """
        self._refuse_if_stopped()
        counts_a = np.asarray(counts)
        totals_a = np.asarray(totals, dtype=float)
        if counts_a.shape != (self.k,) or totals_a.shape != (self.k,):
            raise ValueError(f"counts and totals must each hold one value per arm ({self.k}), "
                             f"got shapes {counts_a.shape} and {totals_a.shape}")
        if not np.issubdtype(counts_a.dtype, np.integer) or np.any(counts_a < 0) or \
                counts_a.sum() == 0:
            raise ValueError(f"counts must be non-negative integers, not all zero, got "
                             f"{counts_a.tolist()}")
        if not np.all(np.isfinite(totals_a)):
            raise ValueError(f"totals must be finite, got {totals_a.tolist()}")
        counts_a = counts_a.astype(np.int64)
        per_arm = []
        for i in range(self.k):
            c, tot = int(counts_a[i]), float(totals_a[i])
            per_arm.append(self._split(i, c, tot))
        planned = self.next_arms(int(counts_a.sum()))
        if planned.size == counts_a.sum() and np.array_equal(
                np.bincount(planned, minlength=self.k), counts_a):
            order = planned
        else:
            order = _round_robin(counts_a)
        taken = np.zeros(self.k, dtype=np.int64)
        xs = np.empty(order.size)
        for j, arm in enumerate(order):
            xs[j] = per_arm[arm][taken[arm]]
            taken[arm] += 1
        return self.record(order, xs)

    def simulate(self, means: ArrayLike, n: Optional[int] = None, look_every: int = 1) -> Status:
        """Record pulls of the rule's arms with rewards drawn from the instance ``means``,
        exactly as :func:`bai_lib.simulate` draws them, looking whenever the number of
        observations is a multiple of ``look_every``, until the stop or ``n`` pulls."""
        self._refuse_if_stopped()
        means_a = np.asarray(means, dtype=float)
        lo, hi = self._model.mean_range
        if means_a.shape != (self.k,) or np.any(~np.isfinite(means_a) & ~np.isinf(hi)) or \
                np.any(means_a < lo) or np.any(means_a > hi):
            raise ValueError(f"means must hold {self.k} values in [{lo:g}, {hi:g}], got "
                             f"{means_a.tolist()}")
        look_every = V.integer(look_every, "look_every", 1)
        room = self.max_samples - self._arms.size
        n = room if n is None else min(V.integer(n, "n", 1), room)
        status, arms, xs = self._replay(self._arms, self._xs, self._looks, SIMULATE, n,
                                        look_every, means_a)
        t0 = self._arms.size
        looks = ((t0 + np.arange(1, arms.size + 1)) % look_every == 0).astype(np.uint8)
        self._arms = np.concatenate([self._arms, arms])
        self._xs = np.concatenate([self._xs, xs])
        self._looks = np.concatenate([self._looks, looks])
        self._status = self._replay(self._arms, self._xs, self._looks)[0]
        return self._status

    # -- state files ------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The experiment as plain JSON values (what :meth:`save` writes)."""
        return {
            "schema": SCHEMA,
            "bai_lib_version": VERSION,
            "algorithm": _spec_description(self.algorithm),
            "prior": _prior_description(self.prior),
            "k": self.k,
            "delta": self.delta,
            "noise_stds": [float(x) for x in self.noise_stds],
            "rewards": self.rewards,
            "seed": self.seed,
            "run": self.run,
            "max_samples": self.max_samples,
            "log": {"arms": self._arms.tolist(), "rewards": self._xs.tolist(),
                    "looks": np.flatnonzero(self._looks).tolist()},
            "status": self._status.as_dict(),
        }

    @classmethod
    def from_dict(cls, d: Any) -> "Experiment":
        """The experiment :meth:`to_dict` described, its log replayed; refused with a
        ``ValueError`` naming the key when the description is not of this format or its stored
        status differs from the replay."""
        if not isinstance(d, dict) or d.get("schema") != SCHEMA:
            got = d.get("schema") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"schema: not a bai_lib experiment state of format {SCHEMA!r} "
                             f"(got {got!r})")
        missing = [key for key in ("algorithm", "prior", "k", "delta", "noise_stds", "rewards",
                                   "seed", "run", "max_samples", "log", "status") if key not in d]
        if missing:
            raise ValueError(f"{missing[0]}: missing from the state")
        a = d["algorithm"]
        if not isinstance(a, dict) or a.get("name") not in ALGORITHMS or \
                not isinstance(a.get("options"), dict):
            raise ValueError(f"algorithm: unknown algorithm description {a!r}")
        spec = ALGORITHMS[a["name"]](**a["options"])
        exp = cls(spec, _prior_from(d["prior"]), d["delta"], k=d["k"],
                  noise_stds=d["noise_stds"], rewards=d["rewards"], seed=d["seed"], run=d["run"],
                  max_samples=d["max_samples"])
        log = d["log"]
        if not isinstance(log, dict) or set(log) != {"arms", "rewards", "looks"}:
            raise ValueError("log: must hold 'arms', 'rewards' and 'looks'")
        arms = np.asarray(log["arms"], dtype=np.int64)
        xs = np.asarray(log["rewards"], dtype=float)
        looks = np.zeros(arms.size, dtype=np.uint8)
        where = np.asarray(log["looks"], dtype=np.int64)
        if arms.shape != xs.shape or np.any(where < 0) or np.any(where >= max(arms.size, 1)):
            raise ValueError("log: arms, rewards and looks do not fit together")
        looks[where] = 1
        if arms.size:
            if np.any(arms < 0) or np.any(arms >= exp.k):
                raise ValueError(f"log: arms must lie in 0..{exp.k - 1}")
            exp._check_rewards(xs, "log: rewards")
            status, bad, t = exp._replay(arms, xs, looks)
            if status is None:
                raise ValueError(f"log: entry {bad} (arm {arms[bad]}) cannot be taken by "
                                 f"{spec.label}")
            exp._arms, exp._xs, exp._looks, exp._status = arms, xs, looks, status
        if exp._status.as_dict() != d["status"]:
            raise ValueError("status: the stored status differs from the replay of the log (the "
                             "file was edited, or written by another version of bai_lib)")
        return exp

    def save(self, path: str | Path) -> Path:
        """Write the state to ``path`` (JSON; :meth:`load` reads it back)."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1))
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "Experiment":
        """Read a state file written by :meth:`save` (:meth:`from_dict` checks it)."""
        path = Path(path)
        try:
            d = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ValueError(f"path: {path} is not a readable JSON state file ({err})") from None
        return cls.from_dict(d)

    # -- helpers ----------------------------------------------------------------------------
    def _refuse_if_stopped(self):
        s = self._status
        if s.stopped:
            raise ValueError(f"the experiment stopped ({s.reason}) after {s.samples:,} "
                             f"observations, recommending arm {s.recommendation}")

    def _check_rewards(self, xs: np.ndarray, name: str = "rewards") -> np.ndarray:
        if not np.issubdtype(xs.dtype, np.number) or np.issubdtype(xs.dtype, np.complexfloating):
            raise ValueError(f"{name} must be numbers, got dtype {xs.dtype}")
        xs = xs.astype(float)
        if not np.all(np.isfinite(xs)):
            raise ValueError(f"{name} must be finite, got {xs[~np.isfinite(xs)][0]}")
        if self.rewards == "bernoulli" and np.any((xs != 0) & (xs != 1)):
            raise ValueError(f"{name} of Bernoulli arms must be 0 or 1, got "
                             f"{xs[(xs != 0) & (xs != 1)][0]:g}")
        if self.rewards == "poisson" and np.any((xs < 0) | (xs != np.round(xs))):
            raise ValueError(f"{name} of Poisson arms must be non-negative integers, got "
                             f"{xs[(xs < 0) | (xs != np.round(xs))][0]:g}")
        return xs

    def _split(self, arm: int, count: int, total: float) -> np.ndarray:
        name = f"totals[{arm}]"
        if count == 0:
            if total != 0:
                raise ValueError(f"{name} = {total:g} with counts[{arm}] = 0")
            return np.zeros(0)
        if self.rewards == "bernoulli":
            if total != round(total) or not 0 <= total <= count:
                raise ValueError(f"{name} must be a number of successes in 0..{count}, got "
                                 f"{total:g}")
            return (np.arange(count) < total).astype(float)
        if self.rewards == "poisson":
            if total != round(total) or total < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {total:g}")
            q, r = divmod(int(total), count)
            return q + (np.arange(count) < r).astype(float)
        return np.full(count, total / count)

    def _append(self, arms: np.ndarray, xs: np.ndarray) -> Status:
        new_arms = np.concatenate([self._arms, arms])
        new_xs = np.concatenate([self._xs, xs])
        looks = np.zeros(arms.size, dtype=np.uint8)
        looks[-1] = 1
        new_looks = np.concatenate([self._looks, looks])
        status, bad, t = self._replay(new_arms, new_xs, new_looks)
        if status is None:
            raise ValueError(self._refusal(int(bad), new_arms, new_xs, new_looks))
        self._arms, self._xs, self._looks, self._status = new_arms, new_xs, new_looks, status
        return status

    def _refusal(self, bad: int, arms, xs, looks) -> str:
        """Why entry ``bad`` of the log is refused: the algorithm takes its arms in rounds (the
        GLR algorithms every arm once first, Algorithm 1 every active arm once per round)."""
        status, planned, _ = self._replay(arms[:bad], xs[:bad], looks[:bad], PLAN, self.k)
        due = self.algorithm.due_now(status.counts, planned, bad)
        return (f"arms[{bad - self._arms.size}] = {int(arms[bad])}: {self.algorithm.label} "
                f"takes its arms in rounds (every arm once first; for Algorithm 1 every active "
                f"arm once per round, for LUCB the empirical best and its strongest rival), and "
                f"the arms due now are {due}")


def _round_robin(counts: np.ndarray) -> np.ndarray:
    """Arms going round in index order while they have observations left."""
    left = counts.copy()
    order = []
    while left.sum():
        for i in np.flatnonzero(left):
            order.append(i)
            left[i] -= 1
    return np.asarray(order, dtype=np.int64)
