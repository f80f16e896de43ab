"""The per-run output of :func:`~bai_lib.simulate` and of a stored sweep cell.

Orchestration layer. :meth:`bai_lib.SimulationResult.from_runs` is the one constructor: it derives the
best arm, correctness and censoring from the runs and makes every array read-only, for
:func:`~bai_lib.simulate` and :meth:`bai_lib.store.ResultStore.result` alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import numpy as np

from . import _rng
from . import _validate as V
from . import kernels as _k
from .algorithms import Algorithm
from .priors import GaussianPrior
from .stats import clopper_pearson, top_two_gap

if TYPE_CHECKING:  # imported where they are used (pandas only for to_frame)
    import pandas as pd

    from .trace import EliminationTrace

__all__ = ["SimulationResult"]


@dataclass(frozen=True, eq=False, repr=False)
class SimulationResult:
    """Per-run output of :func:`simulate`.

    All per-run arrays have length ``n_runs`` (first axis) and are
    read-only; index ``j`` refers to run ``first_run + j`` of the seed (run ``j`` when
    ``first_run = 0``, the default of :func:`simulate`).

    Attributes
    ----------
    algorithm : Algorithm
        The specification that was run (:mod:`bai_lib.algorithms`); a name
        passed to :func:`simulate` is resolved to its default specification.
    prior : GaussianPrior, BetaPrior, GammaPrior or None
        The prior the instances were drawn from, or the prior the algorithm was given with fixed
        ``means`` (``None`` if none was).
    noise_stds : ndarray, shape (k,)
        Known reward standard deviations ``sigma_i``.
    delta : float
        Confidence level.
    delta0 : float or None
        Indifference level ``Delta_0`` used (``None`` for ``ttts``/``ttucb``).
    seed : int
    max_samples : int
        Censoring bound in force.
    stopping_times : ndarray of int64
        Total number of samples ``tau`` of each run.
    recommendations : ndarray of int64
        Recommended arm (0-based).
    best_arms : ndarray of int64
        ``argmax_i mu_i`` of the instance (the lowest index among exactly tied best arms).
    correct : ndarray of bool
        Whether the recommended arm has the largest mean: ``recommendations == best_arms``,
        except that with an exact tie between best arms (fixed ``means`` such as ``[1, 1, 0]``;
        probability zero under a prior) recommending any of the tied arms is correct.
    means : ndarray, shape (n_runs, k)
        Arm means ``mu`` of each run: drawn from the prior (identical across algorithms for a
        seed), or the ``means`` given to :func:`simulate`.
    means_given : bool
        Whether the means were given (frequentist setting) rather than drawn from the prior.
    censored : ndarray of bool
        Run stopped by ``max_samples``.
    stop_reasons : ndarray of str
        ``"single_arm"``, ``"indifference"``, ``"glr"``, ``"separation"`` (LUCB) or
        ``"censored"``.
    seconds : ndarray of float64
        Wall-clock time of each run's kernel call (measured per run, with
        ``time.perf_counter``; includes a call overhead of about a
        microsecond, excludes seeding).
    first_run : int
        Index of the first run (``simulate(..., first_run=...)``); see :attr:`runs`.
    rewards : {"gaussian", "bernoulli", "poisson"}
        The reward distribution of the runs (``simulate(..., rewards=...)``).
    look_every : int
        The runs checked their stop every ``look_every`` samples
        (``simulate(..., look_every=...)``; 1: at every sample).
    look_at : tuple of int or None
        Or the numbers of samples at which they checked it (``simulate(..., look_at=...)``).
    """

    algorithm: Algorithm
    prior: Optional[GaussianPrior]
    noise_stds: np.ndarray
    delta: float
    delta0: Optional[float]
    seed: int
    max_samples: int
    stopping_times: np.ndarray
    recommendations: np.ndarray
    best_arms: np.ndarray
    correct: np.ndarray
    means: np.ndarray
    means_given: bool
    censored: np.ndarray
    stop_reasons: np.ndarray
    seconds: np.ndarray
    first_run: int = 0
    rewards: str = "gaussian"
    look_every: int = 1
    look_at: Optional[tuple] = None

    @classmethod
    def from_runs(cls, *, algorithm: Algorithm, prior: Optional[GaussianPrior],
                  noise_stds: np.ndarray, delta: float, delta0: Optional[float], seed: int,
                  max_samples: int, means: np.ndarray, means_given: bool, first_run: int,
                  stopping_times: np.ndarray, recommendations: np.ndarray,
                  stop_reasons: np.ndarray, seconds: np.ndarray,
                  rewards: str = "gaussian", look_every: int = 1,
                  look_at: Optional[tuple] = None) -> "SimulationResult":
        """The result of runs ``first_run, ...`` on ``means`` (one row per run): ``best_arms``,
        ``correct`` and ``censored`` are derived, and every array is made read-only (arrays the
        caller shares between results, ``means`` and ``noise_stds``, are not copied)."""
        best = np.argmax(means, axis=1).astype(np.int64)
        stop_reasons = np.asarray(stop_reasons, dtype=str)
        recommendations = np.asarray(recommendations, dtype=np.int64)
        # correct: the recommended arm has the largest mean (with an exact tie, any of the tied
        # best arms is; a tie has probability zero under a prior, and appears with fixed means)
        rows = np.arange(recommendations.size)
        correct = means[rows, recommendations] == means[rows, best]
        arrays = dict(
            stopping_times=np.asarray(stopping_times, dtype=np.int64),
            recommendations=recommendations, best_arms=best, correct=correct,
            means=means, censored=stop_reasons == _k.STOP_REASON_NAMES[_k.STOP_CENSORED],
            stop_reasons=stop_reasons, seconds=np.asarray(seconds, dtype=np.float64),
            noise_stds=noise_stds)
        for a in arrays.values():
            a.setflags(write=False)
        return cls(algorithm=algorithm, prior=prior, delta=delta, delta0=delta0, seed=seed,
                   max_samples=max_samples, means_given=means_given, first_run=first_run,
                   rewards=rewards, look_every=look_every, look_at=look_at, **arrays)

    @property
    def batched(self) -> bool:
        """Whether the runs checked their stop at fewer samples than every one."""
        return self.look_every > 1 or self.look_at is not None

    @property
    def n_runs(self) -> int:
        """Number of runs."""
        return int(self.stopping_times.size)

    @property
    def runs(self) -> range:
        """The run indices of the seed that this result holds, in order."""
        return range(self.first_run, self.first_run + self.n_runs)

    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.means.shape[1])

    @property
    def error_rate(self) -> float:
        """Fraction of runs whose recommendation is not the best arm."""
        return float(1.0 - self.correct.mean())

    def summary(self, flat: bool = False) -> dict:
        """Summary statistics as a plain ``dict``.

        Keys
        ----
        ``n_runs``; ``avg``, ``max``, ``median``, ``q90``, ``q99``: mean,
        maximum and quantiles of the stopping times (``q90`` and ``q99`` are order statistics,
        the smallest observed ``τ`` with at least 90% / 99% of the runs at or below it, so
        they are whole numbers); ``error``: fraction of
        wrong recommendations and ``n_errors`` their number; ``error_ci``:
        exact two-sided 95% **Clopper–Pearson** interval ``(lo, hi)`` for
        the error probability; ``n_censored``; ``stop_reasons``: number of
        runs per stop reason (censored runs are counted under
        ``"censored"`` only, never as regular stops; ``"posterior"`` only when some run stopped
        so); ``mean_seconds``: mean
        wall time per run.

        Censored runs enter the stopping-time statistics with their
        truncated ``tau`` (so these are lower bounds when ``n_censored > 0``)
        and the error with their empirical-best recommendation.

        With ``flat=True`` every value is a plain number, ready for a CSV row or a DataFrame:
        ``error_ci`` becomes ``error_lo`` and ``error_hi``, and ``stop_reasons`` one count
        ``stops_<reason>`` per reason.
        """
        tau = self.stopping_times
        n = self.n_runs
        n_err = int(n - np.count_nonzero(self.correct))
        reasons = {name: int(np.count_nonzero(self.stop_reasons == name))
                   for name in _k.STOP_REASON_NAMES}
        if reasons["posterior"] == 0:  # only the platforms' rules stop so: not a column for others
            del reasons["posterior"]
        out = {
            "n_runs": n,
            "avg": float(tau.mean()),
            "max": int(tau.max()),
            "median": float(np.median(tau)),
            "q90": int(np.quantile(tau, 0.90, method="inverted_cdf")),
            "q99": int(np.quantile(tau, 0.99, method="inverted_cdf")),
            "error": n_err / n,
            "n_errors": n_err,
            "error_ci": clopper_pearson(n_err, n),
            "n_censored": int(np.count_nonzero(self.censored)),
            "stop_reasons": reasons,
            "mean_seconds": float(self.seconds.mean()),
        }
        if flat:
            out["error_lo"], out["error_hi"] = out.pop("error_ci")
            for name, count in out.pop("stop_reasons").items():
                out[f"stops_{name}"] = count
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row per run as a pandas DataFrame (pandas is needed here only).

        Columns: ``run`` (the run index of the seed), ``tau``, ``recommendation``,
        ``best_arm``, ``correct``, ``censored``, ``stop_reason``, ``gap`` (best minus
        second-best arm mean of the instance) and ``seconds`` (wall clock of the run); the
        columns :mod:`bai_lib.store` keeps for each run.
        """
        import pandas as pd


        return pd.DataFrame({
            "run": np.arange(self.first_run, self.first_run + self.n_runs, dtype=np.int64),
            "tau": self.stopping_times, "recommendation": self.recommendations,
            "best_arm": self.best_arms, "correct": self.correct, "censored": self.censored,
            "stop_reason": self.stop_reasons.astype(str), "gap": top_two_gap(self.means),
            "seconds": self.seconds,
        })

    def _run_index(self, run) -> int:
        r = V.integer(run, "run", 0)
        if r >= self.n_runs:
            raise ValueError(f"run must be < n_runs = {self.n_runs}, got {run!r}")
        return r

    def replay(self, run: int) -> dict:
        """Run ``run`` (position in this result, ``0 <= run < n_runs``) again from its seed.

        The run's generator state depends only on ``(seed, run)``, so the replay reproduces the
        stored stopping time, recommendation and stop reason exactly (for any algorithm).

        Returns
        -------
        dict
            ``tau``, ``recommendation``, ``censored``, ``stop_reason`` and the run's ``means``.
        """
        r = self._run_index(run)
        bound = self.algorithm.bind(self.prior, self.noise_stds, [self.delta], self.max_samples,
                                    rewards=self.rewards)
        if self.batched:
            bound = bound.with_looks(self.look_every, self.k, self.look_at)
        state = _rng.seed_state(self.seed, self.first_run + r, _rng.STREAM_ALGO)
        tau, rec, cens, code = bound.run_one(state, self.means[r])
        return {"tau": int(tau), "recommendation": int(rec), "censored": bool(cens),
                "stop_reason": _k.STOP_REASON_NAMES[code], "means": self.means[r].copy()}

    def trace(self, run: int, *, max_rounds: int = 200_000) -> EliminationTrace:
        """Round-by-round record of run ``run`` of Algorithm 1 (:func:`bai_lib.trace.trace_elimination`).

        Available for :class:`~bai_lib.algorithms.Elimination` with ``recommend="uniform"``
        (the printed Algorithm 1); the trace consumes the run's random stream exactly as the
        kernel did, so its ``tau`` and ``recommendation`` equal the stored ones.
        """
        from .trace import trace_elimination

        spec = self.algorithm
        if self.rewards != "gaussian":
            raise ValueError(f"trace() replays Gaussian runs; these runs have {self.rewards} "
                             f"rewards; use replay() instead")
        if not spec.can_trace():
            raise ValueError(f"trace() covers Algorithm 1 (Elimination with recommend='uniform'); "
                             f"this result is from {spec.label}; use replay() instead")
        if self.batched:
            looked = (f"every {self.look_every} samples" if self.look_at is None
                      else f"after {len(self.look_at)} given numbers of samples")
            raise ValueError(f"trace() replays runs that look at every round; these looked "
                             f"{looked}; use replay() instead")
        r = self._run_index(run)
        state = _rng.seed_state(self.seed, self.first_run + r, _rng.STREAM_ALGO)
        return trace_elimination(self.means[r], self.noise_stds, self.delta, self.delta0, state,
                                 max_rounds=max_rounds)

    def __repr__(self) -> str:
        d0 = "None" if self.delta0 is None else f"{self.delta0:.6g}"
        return (
            f"SimulationResult(algorithm={self.algorithm!r}, k={self.k}, "
            f"n_runs={self.n_runs}, delta={self.delta:g}, delta0={d0}, seed={self.seed}, "
            f"avg_tau={self.stopping_times.mean():.6g}, error={self.error_rate:.6g}, "
            f"n_censored={int(np.count_nonzero(self.censored))})"
        )
