"""What a simulation will cost, known before it runs: :func:`~bai_lib.estimate_cost`.

Orchestration layer, beside :mod:`bai_lib.simulation`. Stopping times under a prior are
heavy-tailed: the few instances with nearly tied best arms cost most of the samples, and a
short pilot of a few runs never meets them. So the estimate splits the work in two.

* **The theory says which instances are hard, and how the length grows.** Every specification
  gives a cost key per instance, ``Σ_j (σ_best² + σ_j²) / max(gap_j, Δ0)²``
  (:func:`bai_lib.algorithms.base.gap_cost`, its binding's ``cost_keys``), and the logarithmic level
  its test must clear after ``t`` samples
  (:meth:`~bai_lib.algorithms.Algorithm.exploration_level`: the GLR threshold, or the log term of
  the confidence widths). A run on an instance of key ``c`` takes about ``τ = α · c ·
  level(τ)`` samples. The keys of *all* the plan's instances are computed (drawn exactly as
  the runs will draw them), so the near ties that will occur are known, however rare.
* **A pilot measures the constant and the speed.** About a second of real runs, on instances
  drawn at random among those a pilot can afford (the cheapest ones when too few can), fits
  ``α = Σ τ / Σ c · level(τ)``, and each run's wall time as a fixed cost plus a cost per
  sample.
  A pilot run is the plan's own run (same instance, same stream), so one that finishes is known
  exactly.

A run is then predicted to take the fixed point of ``t = α · c · level(t)`` samples, at most
``max_samples`` (or the specification's bound on its stopping time). A GLR algorithm with the
indifference stop ends a near tie by that stop, whose length the theory gives instead
(:data:`NEAR_TIE_SAMPLES`, the one constant here set from measured runs). The wall time is the
larger of the runs' total time shared among the threads and the longest run's. When every
pilot run was censored, ``α``, and so the estimate, is a lower bound, and the result says so.
The benchmark ``benchmarks/bench_cost_estimate.py`` compares the predictions with the
measured runs.
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from .algorithms import Algorithm
from .beta_prior import BetaPrior
from .executor import default_threads, notice_enabled, warm_up
from .gamma_prior import GammaPrior
from .plan import RunPlan
from .priors import GaussianPrior

__all__ = ["CostEstimate", "CostWarning", "estimate_cost", "estimate_plan_cost", "PILOT_RUNS",
           "FIRST_PILOT_SAMPLES_PER_ARM", "MAX_PILOT_RUN_SECONDS", "NEAR_TIE_SAMPLES"]

#: The most runs a pilot makes (it stops earlier when its time is spent).
PILOT_RUNS = 64

#: Seconds a single pilot run may take at most, so that Ctrl-C never waits longer.
MAX_PILOT_RUN_SECONDS = 0.5

#: Samples of the first pilot run, per arm, before the pilot knows this machine's speed.
FIRST_PILOT_SAMPLES_PER_ARM = 10_000


class CostWarning(UserWarning):
    """The predicted wall time of a simulation exceeds the ``budget`` it was given."""


@dataclass(frozen=True)
class CostEstimate:
    """The predicted cost of a simulation (:func:`~bai_lib.estimate_cost`).

    Attributes
    ----------
    samples_per_run : float
        Predicted mean number of samples of a run, censoring at ``max_samples`` included (for a
        :func:`~bai_lib.simulate_deltas` call that runs each level on its own, summed over the
        levels).
    censored_share : float
        Predicted share of the runs that reach ``max_samples``.
    longest_run : float
        Predicted samples of the longest run.
    samples_per_second : float
        Samples per second of one thread over all the runs, as predicted from the pilot on
        this machine.
    seconds : float
        Predicted wall time of the runs on ``n_threads`` threads (compiling aside).
    n_runs, n_threads : int
        The runs and threads the prediction is for.
    pilot_runs : int
        Runs the pilot made; ``pilot_seconds`` the wall time they took.
    pilot_seconds : float
        Wall time of the pilot.
    ratio : float
        ``α``: samples per unit of cost key and exploration level, fitted on the pilot.
    lower_bound : bool
        Whether every pilot run was censored, which makes the ratio, and every prediction, a
        lower bound.
    """

    samples_per_run: float
    censored_share: float
    longest_run: float
    samples_per_second: float
    seconds: float
    n_runs: int
    n_threads: int
    pilot_runs: int
    pilot_seconds: float
    ratio: float
    lower_bound: bool

    @property
    def total_samples(self) -> float:
        """Predicted samples of all the runs."""
        return self.samples_per_run * self.n_runs

    def __str__(self) -> str:
        at_least = "at least " if self.lower_bound else "about "
        censored = (f"; {self.censored_share:.1%} of the runs expected to reach max_samples"
                    if self.censored_share > 0 else "")
        threads = f"{self.n_threads} thread{'s' if self.n_threads > 1 else ''}"
        return (f"{at_least}{_count(self.samples_per_run)} samples per run "
                f"({_count(self.longest_run)} for the longest{censored}): "
                f"{at_least}{_duration(self.seconds)} for {self.n_runs:,} runs on {threads} at "
                f"{_figures(self.samples_per_second / 1e6, 3)} million samples per second each "
                f"(pilot: {self.pilot_runs} runs, {_figures(self.pilot_seconds, 2)} s)")


def _figures(x: float, digits: int) -> str:
    """``x`` to ``digits`` significant figures, never in e-notation (``1,234``, ``12.3``)."""
    if x <= 0 or not math.isfinite(x):
        return f"{x:g}"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(x))))
    return f"{round(x, decimals):,.{decimals}f}"


def _count(x: float) -> str:
    if x < 1e6:
        return f"{x:,.0f}"
    return f"{_figures(x / 1e6, 3)} million" if x < 1e9 else f"{_figures(x / 1e9, 3)} billion"


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size if unit == "days" else seconds >= size:
            return f"{_figures(seconds / size, 2)} {unit}"
    return f"{_figures(seconds, 2)} s"


def estimate_cost(algorithm: Algorithm | str,
                  prior: Optional[GaussianPrior | BetaPrior | GammaPrior],
                  noise_stds: Optional[ArrayLike], delta: float, n_runs: int, seed: int, *,
                  means: Optional[ArrayLike] = None, first_run: int = 0,
                  max_samples: Optional[int] = None, rewards: Optional[str] = None,
                  n_threads: Optional[int] = None, pilot_seconds: float = 1.0,
                  budget: Optional[float] = None) -> CostEstimate:
    """Predict the samples and wall time of :func:`bai_lib.simulate` with the same arguments,
    from the theory's cost of each instance and a pilot of about ``pilot_seconds`` (module
    docstring).

    Parameters
    ----------
    algorithm, prior, noise_stds, delta, n_runs, seed, means, first_run, max_samples, rewards
        As in :func:`bai_lib.simulate`.
    n_threads : int, optional
        The threads the simulation will use (default as in :func:`~bai_lib.simulate`); the pilot
        itself runs on one.
    pilot_seconds : float
        Wall time the pilot may spend (compiling aside), in ``(0, 3600]``.
    budget : float, optional
        Seconds: warn (:class:`CostWarning`) when the predicted wall time exceeds it.

    Returns
    -------
    CostEstimate
        Its ``str`` is one sentence for people.

    Raises
    ------
    ValueError
        As :func:`~bai_lib.simulate` for its arguments; ``pilot_seconds`` and ``budget`` must be
        positive.
    """
    plan = RunPlan.build(algorithm, prior, noise_stds, [V.confidence_level(delta)], n_runs, seed,
                         means=means, first_run=first_run, max_samples=max_samples,
                         rewards=rewards)
    return estimate_plan_cost(plan, n_threads=n_threads, pilot_seconds=pilot_seconds,
                              budget=budget)


def estimate_plan_cost(plan: RunPlan, *, n_threads: Optional[int] = None,
                       pilot_seconds: float = 1.0,
                       budget: Optional[float] = None) -> CostEstimate:
    """:func:`~bai_lib.estimate_cost` of a checked :class:`~bai_lib.plan.RunPlan` (every level: one
    trajectory where the specification follows one, else one run per level)."""
    pilot_seconds = V.positive(pilot_seconds, "pilot_seconds")
    if pilot_seconds > 3600:
        raise ValueError(f"pilot_seconds must be at most 3600, got {pilot_seconds:g}")
    if budget is not None:
        budget = V.positive(budget, "budget")
    threads = default_threads() if n_threads is None else V.integer(n_threads, "n_threads", 1)
    spec = plan.algorithm
    groups = ([list(plan.deltas)] if len(plan.deltas) == 1 or spec.one_trajectory
              else [[d] for d in plan.deltas])
    means = plan.instance_means()
    parts = [_level_cost(plan, g, means, pilot_seconds / len(groups)) for g in groups]
    total = sum(p.samples for p in parts)  # one run per level where levels run apart
    run_seconds = sum(p.seconds for p in parts)
    workers = min(threads, plan.n_runs)
    est = CostEstimate(
        samples_per_run=float(total.mean()),
        censored_share=max(p.censored_share for p in parts),
        longest_run=float(total.max()),
        samples_per_second=float(total.sum() / run_seconds.sum()),
        seconds=float(max(run_seconds.sum() / workers, run_seconds.max())),
        n_runs=plan.n_runs, n_threads=workers, pilot_runs=sum(p.pilot_runs for p in parts),
        pilot_seconds=float(sum(p.pilot_seconds for p in parts)), ratio=parts[-1].ratio,
        lower_bound=any(p.lower_bound for p in parts))
    if budget is not None and est.seconds > budget:
        warnings.warn(f"{spec.label}: predicted {est}; over the budget of {_duration(budget)}",
                      CostWarning, stacklevel=3)
    return est


class _Level(NamedTuple):
    """One binding's pilot and prediction."""

    samples: np.ndarray     # predicted samples of each run
    seconds: np.ndarray     # predicted wall seconds of each run
    pilot_seconds: float
    pilot_runs: int
    censored_share: float
    lower_bound: bool
    ratio: float            # α


def _level_cost(plan: RunPlan, deltas: list, means: np.ndarray, seconds: float) -> _Level:
    """The pilot and the prediction of the runs of ``plan`` bound at ``deltas`` (one binding:
    one level, or several on one trajectory)."""
    spec, k, n = plan.algorithm, plan.k, plan.n_runs
    bound = spec.bind(plan.prior, plan.noise_stds, deltas, plan.max_samples, rewards=plan.rewards)
    keys = np.asarray(bound.cost_keys(means), dtype=np.float64)
    keys = np.maximum(np.where(np.isfinite(keys), keys, np.finfo(np.float64).max), 1e-300)
    limit = float(plan.max_samples)
    n0 = None
    if len(deltas) == 1:
        most = spec.max_stopping_time(plan.prior, plan.noise_stds, deltas[0])
        limit = min(limit, float(most)) if most is not None else limit
        n0 = spec.indifference_samples(plan.prior, plan.noise_stds, deltas[0])
    n_lev = len(deltas)

    def level(t):
        return np.maximum(spec.exploration_level(t, min(deltas), k, plan.rewards), 1e-3)

    out_tau = np.empty(n_lev, dtype=np.int64)
    out_rec, out_code = np.empty_like(out_tau), np.empty_like(out_tau)
    warm_up(lambda: bound.run(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k), out_tau,
                              out_rec, out_code, max_samples=k),  # compile or load before timing
            spec.label, notice_enabled(None))

    rng = np.random.default_rng([plan.seed, plan.first_run, 0x636F7374])  # "cost"
    random_order = rng.permutation(n)
    ran = np.zeros(n, dtype=bool)
    tau = np.zeros(n)       # a pilot run's samples (its cap when censored)
    wall = np.zeros(n)      # a pilot run's wall seconds
    censored = np.zeros(n, dtype=bool)
    spent = used = 0.0      # wall seconds of the pilot runs; samples they drew
    per_run = min(seconds / 16, MAX_PILOT_RUN_SECONDS)  # the longest a pilot run may take
    sps = ratio = None
    key_max = math.inf      # the largest key a pilot run can afford
    deadline = time.perf_counter() + seconds  # bookkeeping counts too

    def pilot(i: int, cap: int) -> None:
        nonlocal spent, used, sps, ratio, key_max
        state = _rng.seed_state(plan.seed, plan.first_run + i, _rng.STREAM_ALGO)
        start = time.perf_counter()
        bound.run(state, means[i].copy(), out_tau, out_rec, out_code, max_samples=cap)
        wall[i] = time.perf_counter() - start
        spent += wall[i]
        ran[i] = True
        tau[i] = float(out_tau.max())
        censored[i] = tau[i] >= cap
        used += tau[i]
        sps = used / spent if spent > 1e-4 else None
        ratio = tau[ran].sum() / (keys[ran] * level(np.maximum(tau[ran], 1.0))).sum()
        cap = cap_now()
        key_max = cap / (2.0 * ratio * float(level(cap)))

    def cap_now() -> int:
        guess = FIRST_PILOT_SAMPLES_PER_ARM * k if sps is None else sps * per_run
        return int(max(k, min(limit, guess)))

    def more() -> bool:
        return time.perf_counter() < deadline and ran.sum() < PILOT_RUNS

    for i in random_order:  # at random, among the instances a pilot run can afford
        if keys[i] <= key_max:
            if not more():
                break
            pilot(int(i), cap_now())
    finished = ran & ~censored
    if finished.sum() < PILOT_RUNS // 8:  # near ties everywhere: the cheapest instances
        for i in np.argsort(keys, kind="stable"):
            if not more():
                break
            if not ran[i]:
                pilot(int(i), cap_now())
    while time.perf_counter() < deadline and censored.any() and sps is not None:
        # longer caps, cheapest first
        i = int(np.flatnonzero(censored)[np.argmin(keys[censored])])
        left = deadline - time.perf_counter()
        cap = int(min(limit, 4.0 * tau[i], sps * min(left, MAX_PILOT_RUN_SECONDS)))
        if cap <= tau[i]:
            break
        used -= tau[i]
        pilot(i, cap)
    finished = ran & ~censored
    predicted = np.minimum(_solve(ratio, keys, level, limit), limit)
    if n0 is not None:
        predicted = _indifference_stop(predicted, means, spec.resolve_delta0(plan.prior,
                                                                             deltas[0]), n0)
    predicted[censored] = np.maximum(predicted[censored], tau[censored])
    predicted[finished] = tau[finished]
    lower = not finished.any()
    censored_share = float(np.mean(predicted >= plan.max_samples))
    run_seconds = _run_seconds(tau[ran], wall[ran], predicted)
    run_seconds[finished] = wall[finished]
    return _Level(predicted, run_seconds, spent, int(ran.sum()), censored_share, lower,
                  float(ratio))


#: Samples per arm near the best, in units of ``n0``, at which a GLR algorithm's indifference
#: stop ends a run on a near tie (the top arms are not sampled evenly: 1.5 is the middle of the
#: ratios ``benchmarks/bench_cost_estimate.py`` measures).
NEAR_TIE_SAMPLES = 1.5


def _indifference_stop(predicted: np.ndarray, means: np.ndarray, delta0: float,
                       n0: int) -> np.ndarray:
    """Runs of a GLR algorithm with the indifference stop
    (:meth:`~bai_lib.algorithms.TTUCB.indifference_samples`) on instances whose runner-up is
    within ``Δ0`` of the best: the GLR test rarely separates them, and the indifference stop
    fires once the arms within ``Δ0`` of the best have about ``n0`` samples each (those further
    away are far enough below: :func:`~bai_lib.algorithms.indifference.indifferent`), at about
    :data:`NEAR_TIE_SAMPLES` ``· n0`` samples per such arm. Every run stops by ``(3k - 1) n0``."""
    k = means.shape[1]
    gaps = means.max(axis=1, keepdims=True) - means
    near = np.count_nonzero(gaps < delta0, axis=1)  # the best arm included
    out = predicted.copy()
    tie = near >= 2
    out[tie] = np.maximum(out[tie], NEAR_TIE_SAMPLES * near[tie] * n0)
    return np.minimum(out, (3 * k - 1) * n0)


def _run_seconds(tau: np.ndarray, wall: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Wall seconds of runs of ``samples`` samples, from the pilot's ``(tau, wall)`` pairs:
    ``a + b · samples``, a fixed cost per run and a cost per sample, fitted by least squares
    (``a = 0`` when the fit makes it negative or the pilot runs span less than a factor 10)."""
    a, b = 0.0, float(wall.sum() / max(tau.sum(), 1.0))
    if tau.size >= 8 and tau.max() >= 10.0 * max(tau.min(), 1.0):
        slope = float(np.cov(tau, wall, bias=True)[0, 1] / np.var(tau))
        intercept = float(wall.mean() - slope * tau.mean())
        if slope > 0 and intercept > 0:
            a, b = intercept, slope
    return a + b * np.maximum(samples, 1.0)


def _solve(alpha: float, keys: np.ndarray, level, limit: float) -> np.ndarray:
    """The fixed point of ``t = α · key · level(t)`` per key, at most ``2 · limit``: the map
    grows like ``log t``, so iterating it from ``α · key · level(α · key)`` converges."""
    t = np.minimum(alpha * keys * level(np.maximum(alpha * keys, 1.0)), 2.0 * limit)
    for _ in range(100):
        new = np.minimum(alpha * keys * level(np.maximum(t, 1.0)), 2.0 * limit)
        if np.allclose(new, t, rtol=1e-6, atol=0.5):
            return new
        t = new
    return t
