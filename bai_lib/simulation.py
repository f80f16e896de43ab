"""Monte Carlo simulation of Bayesian fixed-confidence BAI algorithms.

:func:`simulate` draws ``n_runs`` bandit instances ``mu ~ H`` from a
:class:`~bai_lib.priors.GaussianPrior` and runs one algorithm on each with
the compiled kernels of :mod:`bai_lib.kernels`, returning a
:class:`SimulationResult`.

Reproducibility
---------------
Run ``r`` uses two generator states derived only from ``(seed, r)`` (see
:mod:`bai_lib._rng`): stream 0 draws its arm means (so ``.means`` is the
same for every algorithm with the same seed — common random numbers, and
equals ``prior.sample_means(seed, n_runs)``), stream 1 drives its rewards
and the algorithm's own randomness.  Results therefore do not depend on
``n_threads``, ``chunk_size`` or ``NUMBA_NUM_THREADS``.

Execution
---------
Runs are executed by ``n_threads`` Python threads that call the kernels
(compiled with ``nogil=True``, so the threads run in parallel).  The
stopping times are heavy-tailed, so runs are handed out dynamically, in
decreasing order of a rough cost estimate computed from the drawn means
(``sum_j 1 / max(gap_j, Delta_0)^2`` and similar), ``chunk_size`` runs at a
time; long runs start first and short runs fill the gaps at the end.
"""

from __future__ import annotations

import operator
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _rng
from . import kernels as _k
from .algorithms import Algorithm, resolve
from .priors import GaussianPrior

__all__ = ["simulate", "SimulationResult"]


def _clopper_pearson(n_success: int, n: int, level: float = 0.95) -> tuple[float, float]:
    from scipy.stats import beta

    alpha = 1.0 - level
    lo = 0.0 if n_success == 0 else float(beta.ppf(alpha / 2, n_success, n - n_success + 1))
    hi = 1.0 if n_success == n else float(beta.ppf(1 - alpha / 2, n_success + 1, n - n_success))
    return lo, hi


@dataclass(frozen=True, eq=False, repr=False)
class SimulationResult:
    """Per-run output of :func:`simulate`.

    All per-run arrays have length ``n_runs`` (first axis) and are
    read-only; index ``r`` refers to run ``r`` of the seed.

    Attributes
    ----------
    algorithm : Algorithm
        The specification that was run (:mod:`bai_lib.algorithms`); a name
        passed to :func:`simulate` is resolved to its default specification.
    prior : GaussianPrior
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
        ``argmax_i mu_i`` of the drawn instance.
    correct : ndarray of bool
        ``recommendations == best_arms``.
    means : ndarray, shape (n_runs, k)
        Drawn arm means ``mu`` (identical across algorithms for a seed).
    censored : ndarray of bool
        Run stopped by ``max_samples``.
    stop_reasons : ndarray of str
        ``"single_arm"``, ``"indifference"``, ``"glr"`` or ``"censored"``.
    seconds : ndarray of float64
        Wall-clock time of each run's kernel call (measured per run, with
        ``time.perf_counter``; includes a call overhead of about a
        microsecond, excludes seeding).
    """

    algorithm: Algorithm
    prior: GaussianPrior
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
    censored: np.ndarray
    stop_reasons: np.ndarray
    seconds: np.ndarray

    @property
    def n_runs(self) -> int:
        """Number of runs."""
        return int(self.stopping_times.size)

    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.means.shape[1])

    @property
    def error_rate(self) -> float:
        """Fraction of runs whose recommendation is not the best arm."""
        return float(1.0 - self.correct.mean())

    def summary(self) -> dict:
        """Summary statistics as a plain ``dict``.

        Keys
        ----
        ``n_runs``; ``avg``, ``max``, ``median``, ``q90``, ``q99``: mean,
        maximum and quantiles of the stopping times; ``error``: fraction of
        wrong recommendations and ``n_errors`` their number; ``error_ci``:
        exact two-sided 95% **Clopper–Pearson** interval ``(lo, hi)`` for
        the error probability; ``n_censored``; ``stop_reasons``: number of
        runs per stop reason (censored runs are counted under
        ``"censored"`` only, never as regular stops); ``mean_seconds``: mean
        wall time per run.

        Censored runs enter the stopping-time statistics with their
        truncated ``tau`` (so these are lower bounds when ``n_censored > 0``)
        and the error with their empirical-best recommendation.
        """
        tau = self.stopping_times
        n = self.n_runs
        n_err = int(n - np.count_nonzero(self.correct))
        reasons = {name: int(np.count_nonzero(self.stop_reasons == name))
                   for name in _k.STOP_REASON_NAMES}
        return {
            "n_runs": n,
            "avg": float(tau.mean()),
            "max": int(tau.max()),
            "median": float(np.median(tau)),
            "q90": float(np.quantile(tau, 0.90)),
            "q99": float(np.quantile(tau, 0.99)),
            "error": n_err / n,
            "n_errors": n_err,
            "error_ci": _clopper_pearson(n_err, n),
            "n_censored": int(np.count_nonzero(self.censored)),
            "stop_reasons": reasons,
            "mean_seconds": float(self.seconds.mean()),
        }

    def __repr__(self) -> str:
        d0 = "None" if self.delta0 is None else f"{self.delta0:.6g}"
        return (
            f"SimulationResult(algorithm={self.algorithm!r}, k={self.k}, "
            f"n_runs={self.n_runs}, delta={self.delta:g}, delta0={d0}, seed={self.seed}, "
            f"avg_tau={self.stopping_times.mean():.6g}, error={self.error_rate:.6g}, "
            f"n_censored={int(np.count_nonzero(self.censored))})"
        )


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------


def _int_param(value, name, minimum):
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}") from None
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _float_param(value, name):
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None


def _progress_enabled(progress) -> bool:
    if progress is None:
        return os.environ.get("BAI_LIB_PROGRESS", "1") != "0"
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    raise ValueError(f"progress must be None, True or False, got {progress!r}")


# ---------------------------------------------------------------------------
# simulate
# ---------------------------------------------------------------------------


def simulate(
    algorithm,
    prior: GaussianPrior,
    noise_stds,
    delta: float,
    n_runs: int,
    seed: int,
    *,
    max_samples: int = 10**9,
    n_threads: Optional[int] = None,
    chunk_size: Optional[int] = None,
    progress: Optional[bool] = None,
    **options,
) -> SimulationResult:
    """Simulate ``n_runs`` Bayesian BAI runs of one algorithm.

    In run ``r`` the arm means ``mu`` are drawn from ``prior`` (Section 2)
    and the algorithm samples Gaussian rewards ``N(mu_i, sigma_i^2)`` until
    it stops.

    Parameters
    ----------
    algorithm : Algorithm or {"elimination", "noelim", "ttts", "ttucb"}
        A specification from :mod:`bai_lib.algorithms` (``Elimination(...)``,
        ``NoElim(...)``, ``TTTS(...)``, ``TTUCB(...)``), whose fields hold the
        algorithm's options and conventions, or the name of one with default
        options: ``"elimination"`` is Algorithm 1 of the paper (Section 5),
        ``"noelim"`` its no-elimination variant, ``"ttts"`` Top-Two Thompson
        Sampling with Chernoff stopping, ``"ttucb"`` TTUCB with the stopping
        rule of the authors' released code.
    prior : GaussianPrior
        Prior ``H`` on the arm means.
    noise_stds : float or sequence of float
        Known reward standard deviations ``sigma_i`` (scalar = same for all
        arms).
    delta : float
        Confidence level in ``(0, 1)``.
    n_runs : int
        Number of runs (``>= 1``).
    seed : int
        Non-negative integer; results depend only on ``seed`` and the other
        arguments, not on the threading parameters.
    max_samples : int, default 10**9
        Censoring bound on the samples of one run (``>= k``); see
        :mod:`bai_lib.kernels`.
    n_threads : int, optional
        Worker threads; default ``numba.get_num_threads()`` (else
        ``os.cpu_count()``).
    chunk_size : int, optional
        Runs handed to a worker at a time (default 1).
    progress : bool, optional
        Show a tqdm progress bar on stderr.  Default: on unless the
        environment variable ``BAI_LIB_PROGRESS`` is ``"0"``.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        For any invalid argument or unknown option; the message names it.
        Options of an algorithm (``delta0_factor``, ``threshold``, ...) are
        fields of its specification, not keyword arguments of this function.
    """
    if options:
        name = sorted(options)[0]
        raise ValueError(
            f"unknown option {name!r} for simulate(); an algorithm's options are fields of its "
            f"specification, e.g. simulate(Elimination(delta0_factor=1), ...) or "
            f"simulate(TTUCB(threshold='printed'), ...)"
        )
    spec = resolve(algorithm)
    if not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    k = prior.k
    if k < 2:
        raise ValueError(f"prior: need k >= 2 arms, got k = {k}")

    try:
        sig = np.array(noise_stds, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"noise_stds must be a positive number or a sequence of them, "
                         f"got {noise_stds!r}") from None
    if sig.ndim == 0:
        sig = np.full(k, float(sig))
    if sig.ndim != 1 or sig.size != k:
        raise ValueError(f"noise_stds must be a scalar or have length k = {k}, got shape {sig.shape}")
    if not np.all(np.isfinite(sig)) or np.any(sig <= 0):
        raise ValueError(f"noise_stds must be finite and positive, got {sig.tolist()}")
    sig = np.ascontiguousarray(sig)

    delta = _float_param(delta, "delta")
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    n_runs = _int_param(n_runs, "n_runs", 1)
    seed = _int_param(seed, "seed", 0)
    max_samples = _int_param(max_samples, "max_samples", k)
    if n_threads is None:
        try:
            import numba

            n_threads = int(numba.get_num_threads())
        except Exception:  # pragma: no cover - numba always present here
            n_threads = os.cpu_count() or 1
    else:
        n_threads = _int_param(n_threads, "n_threads", 1)
    chunk_size = 1 if chunk_size is None else _int_param(chunk_size, "chunk_size", 1)
    show_progress = _progress_enabled(progress)

    bound = spec.bind(prior, sig, delta, max_samples)
    kernel = bound.run
    d0 = bound.delta0

    means = _rng.prior_means(prior.means, prior.stds, seed, n_runs)
    states = _rng.seed_states(seed, range(n_runs), _rng.STREAM_ALGO)
    order = np.argsort(-bound.cost_keys(means), kind="stable")

    taus = np.empty(n_runs, dtype=np.int64)
    recs = np.empty(n_runs, dtype=np.int64)
    cens = np.empty(n_runs, dtype=bool)
    codes = np.empty(n_runs, dtype=np.int64)
    secs = np.empty(n_runs, dtype=np.float64)

    # Compile (or load from cache) before timing anything.
    kernel(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k), max_samples=k)

    lock = threading.Lock()
    cursor = [0]
    bar = None
    if show_progress:
        from tqdm import tqdm

        bar = tqdm(total=n_runs, desc=f"simulate {spec.name}", unit="run",
                   file=sys.stderr, leave=False)

    def worker():
        while True:
            with lock:
                start = cursor[0]
                if start >= n_runs:
                    return
                stop = min(start + chunk_size, n_runs)
                cursor[0] = stop
            for j in range(start, stop):
                r = order[j]
                t0 = time.perf_counter()
                out = kernel(states[r], means[r])
                secs[r] = time.perf_counter() - t0
                taus[r], recs[r], cens[r], codes[r] = out
            if bar is not None:
                with lock:
                    bar.update(stop - start)

    try:
        if n_threads == 1 or n_runs == 1:
            worker()
        else:
            with ThreadPoolExecutor(max_workers=min(n_threads, n_runs)) as pool:
                futures = [pool.submit(worker) for _ in range(min(n_threads, n_runs))]
                for f in futures:
                    f.result()
    finally:
        if bar is not None:
            bar.close()

    best = np.argmax(means, axis=1).astype(np.int64)
    reasons = np.array(_k.STOP_REASON_NAMES)[codes]
    correct = recs == best
    arrays = dict(
        stopping_times=taus, recommendations=recs, best_arms=best, correct=correct,
        means=means, censored=cens, stop_reasons=reasons, seconds=secs,
    )
    for a in arrays.values():
        a.setflags(write=False)
    sig.setflags(write=False)
    return SimulationResult(
        algorithm=spec, prior=prior, noise_stds=sig, delta=delta, delta0=d0, seed=seed,
        max_samples=max_samples, **arrays,
    )
