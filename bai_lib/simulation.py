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

import math
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
from .priors import GaussianPrior
from .priors import delta0 as _delta0_of
from .stopping import ttucb_cg

__all__ = ["ALGORITHMS", "simulate", "SimulationResult", "ttucb_cg"]

#: Algorithm names accepted by :func:`simulate`.
ALGORITHMS = ("elimination", "noelim", "ttts", "ttucb")

_USES_DELTA0 = ("elimination", "noelim")
#: Stopping rules of TTUCB: multiplier of ``c(t, delta)`` (see :func:`bai_lib.kernels.ttucb_run`).
_TTUCB_RULES = {"printed": 1.0, "gaussian_glr": 2.0}


# ---------------------------------------------------------------------------
# TTUCB constant C_G
# ---------------------------------------------------------------------------


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
    algorithm : str
        One of :data:`ALGORITHMS`.
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
    cg : str or None
        ``C_G`` variant for ``ttucb`` (``None`` otherwise).
    ttucb_rule : str or None
        Stopping rule of ``ttucb`` (``"printed"`` or ``"gaussian_glr"``; ``None`` otherwise).
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

    algorithm: str
    prior: GaussianPrior
    noise_stds: np.ndarray
    delta: float
    delta0: Optional[float]
    seed: int
    max_samples: int
    cg: Optional[str]
    stopping_times: np.ndarray
    recommendations: np.ndarray
    best_arms: np.ndarray
    correct: np.ndarray
    means: np.ndarray
    censored: np.ndarray
    stop_reasons: np.ndarray
    seconds: np.ndarray
    ttucb_rule: Optional[str] = None

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


def _cost_keys(algorithm, means, noise_stds, delta0_value):
    """Rough relative cost of each run, used only to order the work."""
    k = means.shape[1]
    best = np.argmax(means, axis=1)
    top = means[np.arange(means.shape[0]), best]
    gaps = top[:, None] - means
    var = noise_stds[best][:, None] ** 2 + (noise_stds**2)[None, :]
    floor = delta0_value if delta0_value is not None else 1e-12
    g2 = np.maximum(gaps, floor) ** 2
    per_arm = var / g2
    per_arm[np.arange(means.shape[0]), best] = 0.0
    if algorithm == "noelim":
        return k * per_arm.max(axis=1)
    return per_arm.sum(axis=1)


def simulate(
    algorithm: str,
    prior: GaussianPrior,
    noise_stds,
    delta: float,
    n_runs: int,
    seed: int,
    *,
    delta0: Optional[float] = None,
    delta0_factor: Optional[float] = None,
    max_samples: int = 10**9,
    n_threads: Optional[int] = None,
    chunk_size: Optional[int] = None,
    progress: Optional[bool] = None,
    cg: Optional[str] = None,
    ttucb_rule: Optional[str] = None,
    **options,
) -> SimulationResult:
    """Simulate ``n_runs`` Bayesian BAI runs of one algorithm.

    In run ``r`` the arm means ``mu`` are drawn from ``prior`` (Section 2)
    and the algorithm samples Gaussian rewards ``N(mu_i, sigma_i^2)`` until
    it stops.

    Parameters
    ----------
    algorithm : {"elimination", "noelim", "ttts", "ttucb"}
        ``"elimination"``: Algorithm 1 of the paper (Section 5);
        ``"noelim"``: its no-elimination variant (Appendix, NoElim);
        ``"ttts"``: Top-Two Thompson Sampling with Chernoff stopping;
        ``"ttucb"``: TTUCB with its GLR stopping rule.  Semantics in
        :mod:`bai_lib.kernels`.
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
    delta0 : float, optional
        Indifference level ``Delta_0 > 0`` (``elimination``/``noelim``
        only).  Default: ``bai_lib.priors.delta0(prior, delta,
        factor=delta0_factor)``.
    delta0_factor : float, optional
        Divisor in ``Delta_0 = delta / (factor L(H))``; default 4 as printed
        in Algorithm 1 (``elimination``/``noelim`` only; not together with
        ``delta0``).
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
    cg : {"approx", "exact"}, optional
        ``C_G`` variant of the TTUCB threshold (``ttucb`` only; default
        ``"approx"``), see :func:`ttucb_cg`.
    ttucb_rule : {"printed", "gaussian_glr"}, optional
        TTUCB stopping rule (``ttucb`` only). ``"printed"`` (default) compares the
        normalised gap with ``sqrt(c(t, delta))`` as in the paper's appendix;
        ``"gaussian_glr"`` compares the Gaussian GLR statistic (half the squared
        normalised gap) with ``c(t, delta)``, i.e. the gap with ``sqrt(2 c)``.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        For any invalid argument or unknown option; the message names it.
    """
    if options:
        name = sorted(options)[0]
        raise ValueError(f"unknown option {name!r} for simulate()")
    if not isinstance(algorithm, str) or algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
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

    if algorithm in _USES_DELTA0:
        if cg is not None:
            raise ValueError(f"cg applies to 'ttucb' only, not to {algorithm!r}")
        if delta0 is not None and delta0_factor is not None:
            raise ValueError("give either delta0 or delta0_factor, not both")
        if delta0 is not None:
            d0 = _float_param(delta0, "delta0")
            if not (math.isfinite(d0) and d0 > 0):
                raise ValueError(f"delta0 must be a finite positive number, got {delta0!r}")
        else:
            factor = 4.0 if delta0_factor is None else _float_param(delta0_factor, "delta0_factor")
            if not (math.isfinite(factor) and factor > 0):
                raise ValueError(
                    f"delta0_factor must be a finite positive number, got {delta0_factor!r}"
                )
            d0 = float(_delta0_of(prior, delta, factor=factor))
    else:
        if delta0 is not None:
            raise ValueError(f"delta0 applies to 'elimination'/'noelim' only, not to {algorithm!r}")
        if delta0_factor is not None:
            raise ValueError(
                f"delta0_factor applies to 'elimination'/'noelim' only, not to {algorithm!r}"
            )
        d0 = None
        if algorithm == "ttucb":
            cg = "approx" if cg is None else cg
            if cg not in ("approx", "exact"):
                raise ValueError(f"cg must be 'approx' or 'exact', got {cg!r}")
            ttucb_rule = "printed" if ttucb_rule is None else ttucb_rule
            if ttucb_rule not in _TTUCB_RULES:
                raise ValueError(
                    f"ttucb_rule must be one of {sorted(_TTUCB_RULES)}, got {ttucb_rule!r}"
                )
        elif cg is not None:
            raise ValueError(f"cg applies to 'ttucb' only, not to {algorithm!r}")
    if algorithm != "ttucb" and ttucb_rule is not None:
        raise ValueError(f"ttucb_rule applies to 'ttucb' only, not to {algorithm!r}")

    kernel = _make_kernel(algorithm, prior, sig, delta, d0, max_samples, cg, ttucb_rule)

    means = _rng.prior_means(prior.means, prior.stds, seed, n_runs)
    states = _rng.seed_states(seed, range(n_runs), _rng.STREAM_ALGO)
    order = np.argsort(-_cost_keys(algorithm, means, sig, d0), kind="stable")

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

        bar = tqdm(total=n_runs, desc=f"simulate {algorithm}", unit="run",
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
        algorithm=algorithm, prior=prior, noise_stds=sig, delta=delta, delta0=d0, seed=seed,
        max_samples=max_samples, cg=cg if algorithm == "ttucb" else None,
        ttucb_rule=ttucb_rule, **arrays,
    )


def _make_kernel(algorithm, prior, sig, delta, d0, max_samples, cg, ttucb_rule=None):
    """Bind the algorithm's parameters; returns ``f(state, mu, max_samples=...)``."""
    if algorithm in _USES_DELTA0:
        pull_all = algorithm == "noelim"

        def run(state, mu, max_samples=max_samples):
            return _k.elimination_run(state, mu, sig, delta, d0, max_samples, pull_all, False)

    elif algorithm == "ttts":
        pm = np.ascontiguousarray(prior.means, dtype=np.float64)
        ps = np.ascontiguousarray(prior.stds, dtype=np.float64)

        def run(state, mu, max_samples=max_samples):
            return _k.ttts_run(state, mu, sig, pm, ps, delta, max_samples)

    else:
        two_cg = 2.0 * ttucb_cg(0.5 * math.log((prior.k - 1) / delta), cg)
        c_scale = _TTUCB_RULES[ttucb_rule]

        def run(state, mu, max_samples=max_samples):
            return _k.ttucb_run(
                state, mu, sig, delta, two_cg, _k.TTUCB_UCB_COEF, 0.5, max_samples, c_scale
            )

    return run
