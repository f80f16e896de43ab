"""Monte Carlo simulation of Bayesian fixed-confidence BAI algorithms.

:func:`~bai_lib.simulate` draws ``n_runs`` bandit instances ``mu ~ H`` from a
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

import os
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from . import kernels as _k
from .algorithms import Algorithm, resolve
from .priors import GaussianPrior
from .stats import clopper_pearson, top_two_gap

if TYPE_CHECKING:  # imported where they are used (pandas only for to_frame)
    import pandas as pd

    from .trace import EliminationTrace

__all__ = ["simulate", "simulate_deltas", "SimulationResult"]


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
    prior : GaussianPrior or None
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
        ``argmax_i mu_i`` of the drawn instance.
    correct : ndarray of bool
        ``recommendations == best_arms``.
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
        ``"censored"`` only, never as regular stops); ``mean_seconds``: mean
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
        bound = self.algorithm.bind(self.prior, self.noise_stds, self.delta, self.max_samples)
        state = _rng.seed_state(self.seed, self.first_run + r, _rng.STREAM_ALGO)
        tau, rec, cens, code = bound.run(state, self.means[r])
        return {"tau": int(tau), "recommendation": int(rec), "censored": bool(cens),
                "stop_reason": _k.STOP_REASON_NAMES[code], "means": self.means[r].copy()}

    def trace(self, run: int, *, max_rounds: int = 200_000) -> EliminationTrace:
        """Round-by-round record of run ``run`` of Algorithm 1 (:func:`bai_lib.trace.trace_elimination`).

        Available for :class:`~bai_lib.algorithms.Elimination` with ``recommend="uniform"``
        (the printed Algorithm 1); the trace consumes the run's random stream exactly as the
        kernel did, so its ``tau`` and ``recommendation`` equal the stored ones.
        """
        from .algorithms import Elimination, NoElim
        from .trace import trace_elimination

        spec = self.algorithm
        if (not isinstance(spec, Elimination) or isinstance(spec, NoElim)
                or spec.recommend != "uniform"):
            raise ValueError(f"trace() covers Algorithm 1 (Elimination with recommend='uniform'); "
                             f"this result is from {spec.label}; use replay() instead")
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


# ---------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------


def _fixed_means(means, n_runs):
    try:
        raw = np.asarray(means)
    except (TypeError, ValueError):
        raise ValueError(f"means must be an array of real numbers, got {means!r}") from None
    if raw.dtype.kind not in "iuf":  # no strings, bools, None or objects
        raise ValueError(f"means must be an array of real numbers, got {means!r}")
    m = np.array(raw, dtype=np.float64)  # a copy: the caller's array is never modified
    if m.ndim == 1:
        m = np.broadcast_to(m, (n_runs, m.size))
    if m.ndim != 2 or m.shape[0] != n_runs:
        raise ValueError(f"means must have shape (k,) or (n_runs, k) = ({n_runs}, k), "
                         f"got {np.shape(means)}")
    if not np.all(np.isfinite(m)):
        raise ValueError("means must be finite")
    _check_scale(m, "means", zero_ok=True)
    return np.ascontiguousarray(m)


def _check_scale(values, name, zero_ok=False):
    """Refuse magnitudes outside :data:`bai_lib._validate.SCALE_RANGE` (0 allowed for means)."""
    lo, hi = V.SCALE_RANGE
    a = np.abs(np.asarray(values, dtype=float))
    bad = (a > hi) | ((a < lo) & ~((a == 0) & zero_ok))
    if np.any(bad):
        raise ValueError(f"{name} must have magnitudes in the supported range [{lo:g}, {hi:g}]"
                         f"{' (or 0)' if zero_ok else ''}, got {a[bad].ravel()[0]:g}")


#: Largest ``max_samples``: the simulators count samples in int64 and may add one round of
#: ``k`` samples before they compare with the cap.
MAX_SAMPLES_LIMIT = 2**62
#: Bytes of per-run storage in :func:`simulate`, besides ``8 k`` for the means: generator state
#: (32), the best arm (8) and the schedule (8 + 8).
_BYTES_PER_RUN = 32 + 8 + 16
#: ... per run and confidence level: the work arrays (4 x 8, and 3 x 8 for one trajectory scored
#: at several levels) and the result's arrays (8 + 8 + 1 + 1 + 8, and the stop reason names, 4
#: bytes a character, 12 characters).
_BYTES_PER_RUN_LEVEL = 32 + 24 + 26 + 48
#: ... and per run and arm: the means and the scheduling temporaries of ``cost_keys``.
_BYTES_PER_RUN_ARM = 8 * 4


def _available_memory() -> Optional[int]:
    """Bytes of memory available to this process (Linux ``MemAvailable``), or ``None``."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def memory_needed(n_runs: int, k: int, n_deltas: int = 1) -> int:
    """Bytes :func:`simulate` (or :func:`simulate_deltas` with ``n_deltas`` levels) allocates
    for ``n_runs`` runs on ``k`` arms (an upper estimate)."""
    return int(n_runs) * (_BYTES_PER_RUN + _BYTES_PER_RUN_ARM * int(k)
                          + _BYTES_PER_RUN_LEVEL * int(n_deltas))


def _check_memory(n_runs: int, k: int, n_deltas: int = 1) -> None:
    need = memory_needed(n_runs, k, n_deltas)
    avail = _available_memory()
    if avail is not None and need > 0.8 * avail:
        raise ValueError(
            f"n_runs = {n_runs:,} needs about {need / 2**30:,.1f} GiB for the per-run arrays "
            f"(k = {k}), more than 80% of the {avail / 2**30:,.1f} GiB available; "
            "use fewer runs per call (several calls with different seeds)")


class CensoringWarning(UserWarning):
    """Some runs of :func:`simulate` reached ``max_samples`` and were censored."""


def _progress_enabled(progress) -> bool:
    """The progress bar's default: ``BAI_LIB_PROGRESS`` (``"0"``/``"1"``) when set, else on when
    stderr is a terminal or the caller is an interactive Jupyter kernel."""
    if progress is None:
        env = os.environ.get("BAI_LIB_PROGRESS")
        if env is not None:
            return env != "0"
        try:
            if sys.stderr.isatty():
                return True
        except (AttributeError, ValueError):
            return False
        return "ipykernel" in sys.modules
    if isinstance(progress, (bool, np.bool_)):
        return bool(progress)
    raise ValueError(f"progress must be None, True or False, got {progress!r}")


class _CostProgress:
    """A tqdm bar over runs whose time-left estimate is weighted by each run's expected cost.

    Runs are scheduled longest first, so a count-based ETA starts far too pessimistic. Here the
    time left is ``elapsed * (cost left) / (cost done)`` with the scheduling keys of the
    algorithm (proportional to a run's expected number of samples) capped at ``max_samples``.
    """

    def __init__(self, desc, keys, max_samples):
        from tqdm import tqdm

        cost = np.where(np.isfinite(keys), keys, np.inf)
        self.cost = np.minimum(np.maximum(cost, 0.0), float(max_samples)) + 1.0
        self.total = float(self.cost.sum())
        self.done = 0.0
        self.t0 = time.perf_counter()
        self.bar = tqdm(total=len(keys), desc=desc, unit="run", file=sys.stderr, leave=False,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} runs "
                                   "[{elapsed}{postfix}]")

    def update(self, runs) -> None:
        self.done += float(self.cost[runs].sum())
        left = (time.perf_counter() - self.t0) * max(self.total - self.done, 0.0) / self.done
        self.bar.set_postfix_str(f"about {self.bar.format_interval(left)} left", refresh=False)
        self.bar.update(len(runs))

    def close(self) -> None:
        self.bar.close()


COMPILE_NOTICE_AFTER = 1.0  # seconds of compiling before the notice is printed


def _warm_up(call, label: str, show: bool) -> None:
    """Call the kernel once on a trivial instance, so that it is compiled before runs are timed.

    With progress output on (``show``), a compilation still going after
    :data:`COMPILE_NOTICE_AFTER` seconds is announced on stderr, once per call, so that a first
    call does not sit silent for the 10 s a kernel can take to compile.
    """
    if not show:
        call()
        return
    from numba.core import event

    class Compiles(event.Listener):  # numba:compile events; a load from numba's cache fires none
        started = 0

        def on_start(self, ev):
            self.started += 1

        def on_end(self, ev):
            pass

    watch = Compiles()
    finished = threading.Event()

    def notice():
        if not finished.wait(COMPILE_NOTICE_AFTER) and watch.started:
            print(f"compiling the {label} simulator (first call in this process only) ...",
                  file=sys.stderr, flush=True)

    with event.install_listener("numba:compile", watch):
        thread = threading.Thread(target=notice, daemon=True)
        thread.start()
        try:
            call()
        finally:
            finished.set()
            thread.join()


# ---------------------------------------------------------------------------
# simulate
# ---------------------------------------------------------------------------


def _run_workers(worker, n_workers: int, cancel: np.ndarray, bar) -> None:
    """Run ``worker`` on ``n_workers`` threads while the calling thread stays free for Ctrl-C.

    The calling thread only waits, so a KeyboardInterrupt reaches it at once (also with one
    worker, which then runs on its own thread); it raises ``cancel``, which every kernel polls
    at each refill of its normal buffer, waits for the threads to return, and re-raises. An
    exception in a worker cancels the others and is re-raised here.
    """
    pool = ThreadPoolExecutor(max_workers=n_workers)
    futures = [pool.submit(worker) for _ in range(n_workers)]
    try:
        pending = set(futures)
        while pending:
            done, pending = wait(pending, timeout=0.1, return_when=FIRST_EXCEPTION)
            for f in done:
                f.result()  # re-raises the exception of a failed worker
    except KeyboardInterrupt:
        cancel[0] = 1
        t0 = time.perf_counter()
        pool.shutdown(wait=True, cancel_futures=True)
        waited = time.perf_counter() - t0
        raise KeyboardInterrupt(
            f"simulate interrupted; the threads stopped {waited:.2f} s later and no result "
            "was returned") from None
    except BaseException:
        cancel[0] = 1
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
        if bar is not None:
            bar.close()


def simulate(
    algorithm: Algorithm | str,
    prior: GaussianPrior,
    noise_stds: ArrayLike,
    delta: float,
    n_runs: int,
    seed: int,
    *,
    means: Optional[ArrayLike] = None,
    first_run: int = 0,
    max_samples: Optional[int] = None,
    n_threads: Optional[int] = None,
    chunk_size: Optional[int] = None,
    progress: Optional[bool] = None,
    **options: Any,
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
    prior : GaussianPrior or None
        Prior ``H`` on the arm means. May be ``None`` when ``means`` is given and the algorithm
        does not use a prior (TTUCB, EB-TC, Track-and-Stop, LUCB, Algorithm 1 with an explicit
        ``delta0``).
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
    means : array_like, shape (k,) or (n_runs, k), optional
        Fixed arm means instead of draws from the prior (the frequentist setting, or instances
        drawn by the caller): one instance for every run, or one per run. Run ``r``'s rewards
        and coin flips come from the same seeded stream as when the means are drawn.
    first_run : int
        Index of the first run: the call simulates runs ``first_run, ..., first_run + n_runs -
        1``. Run ``r`` depends only on ``(seed, r)``, so shards of runs simulated separately
        (on other threads, processes or machines) concatenate to exactly the result of one call
        (apart from the wall-clock ``seconds``).
    max_samples : int, optional
        Censoring bound on the samples of one run (``>= k``); see :mod:`bai_lib.kernels`.
        Default: the specification's ``default_max_samples(k)``, ``10**9`` except ``10**7``
        for TTTS with ``k > 2`` (whose steps are slow).
    n_threads : int, optional
        Worker threads; default ``numba.get_num_threads()`` (else
        ``os.cpu_count()``).
    chunk_size : int, optional
        Runs handed to a worker at a time (default 1).
    progress : bool, optional
        Show a tqdm progress bar on stderr. Default: as the environment variable
        ``BAI_LIB_PROGRESS`` says (``"0"`` off, ``"1"`` on) when it is set; otherwise on when
        stderr is a terminal or the call comes from a Jupyter kernel, off when output is
        captured (a pipe, a file, a test run).

    Warns
    -----
    CensoringWarning
        When some runs reach ``max_samples``, with their number and fraction.

    Returns
    -------
    SimulationResult

    Raises
    ------
    ValueError
        For any invalid argument or unknown option; the message names it. Also when the
        per-run arrays of ``n_runs`` runs would not fit in 80% of the available memory, and for
        magnitudes outside the supported ranges (``delta >= 1e-100``; noise, prior scales and
        means within ``[1e-100, 1e100]``; ``max_samples <= 2**62``).
    KeyboardInterrupt
        On Ctrl-C, within a fraction of a second whatever ``n_threads`` (every simulator polls a
        cancellation flag); no partial result is returned.
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
    (res,) = _simulate(algorithm, prior, noise_stds, [V.confidence_level(delta)], n_runs, seed,
                       means, first_run, max_samples, n_threads, chunk_size, progress)
    return res


def simulate_deltas(
    algorithm: Algorithm | str,
    prior: GaussianPrior,
    noise_stds: ArrayLike,
    deltas: Sequence[float],
    n_runs: int,
    seed: int,
    *,
    means: Optional[ArrayLike] = None,
    first_run: int = 0,
    max_samples: Optional[int] = None,
    n_threads: Optional[int] = None,
    chunk_size: Optional[int] = None,
    progress: Optional[bool] = None,
) -> dict:
    """:func:`simulate` at several confidence levels, one result per ``δ``.

    ``simulate_deltas(alg, H, σ, [δ_1, δ_2, ...], n, seed)[δ_j]`` holds exactly the arrays of
    ``simulate(alg, H, σ, δ_j, n, seed)`` (wall-clock ``seconds`` aside): the same instances,
    stopping times, recommendations and stop reasons. For an algorithm whose sampling rule does
    not depend on ``δ`` (TTTS, TTUCB, EB-TC, Track-and-Stop, a
    :class:`~bai_lib.algorithms.SamplingRule`:
    :meth:`~bai_lib.algorithms.Algorithm.bind_levels`)
    each run follows **one trajectory** until its stopping test passes at the smallest ``δ``,
    and records along the way the first time the test passes at each larger ``δ``: a whole
    curve over ``δ`` costs about one run at the smallest ``δ``. Other algorithms (Algorithm 1,
    whose confidence bounds depend on ``δ``) are run once per ``δ``.

    Parameters
    ----------
    deltas : sequence of float
        Distinct confidence levels in ``(0, 1)``, in any order. The other parameters are those of
        :func:`simulate`; ``seconds`` of each result is the time of the shared run.

    Returns
    -------
    dict
        ``{δ: SimulationResult}`` in the order of ``deltas``.
    """
    if isinstance(deltas, (str, bytes)) or not hasattr(deltas, "__len__"):
        raise ValueError(f"deltas must be a sequence of confidence levels, got {deltas!r}")
    levels = [V.confidence_level(d, f"deltas[{i}]") for i, d in enumerate(deltas)]
    if not levels:
        raise ValueError("deltas must hold at least one confidence level")
    if len(set(levels)) != len(levels):
        raise ValueError(f"deltas must be distinct, got {list(deltas)!r}")
    results = _simulate(algorithm, prior, noise_stds, levels, n_runs, seed, means, first_run,
                        max_samples, n_threads, chunk_size, progress)
    return {d: r for d, r in zip(levels, results)}


def _simulate(algorithm, prior, noise_stds, deltas, n_runs, seed, means, first_run, max_samples,
              n_threads, chunk_size, progress) -> list:
    """The work of :func:`simulate` and :func:`simulate_deltas`: one result per ``δ``."""
    spec = resolve(algorithm)
    n_runs = V.integer(n_runs, "n_runs", 1)
    if prior is not None and not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior or None, got {type(prior).__name__}")
    if means is None:
        if prior is None:
            raise ValueError("prior is None: give a GaussianPrior, or fixed means=...")
        k = prior.k
    else:
        means = _fixed_means(means, n_runs)
        k = means.shape[1]
        if prior is not None and prior.k != k:
            raise ValueError(f"means have k = {k} arms but the prior has {prior.k}")
        if prior is None and spec.uses_prior():
            raise ValueError(f"prior is None but {spec.label} uses the prior; give a GaussianPrior")
    if k < 2:
        raise ValueError(f"prior: need k >= 2 arms, got k = {k}")

    sig = V.noise_stds(noise_stds, k)
    sig = np.ascontiguousarray(sig)

    if prior is not None:
        _check_scale(prior.means, "prior: means", zero_ok=True)
        _check_scale(prior.stds, "prior: stds")
    seed = V.integer(seed, "seed", 0, _rng.SEED_MAX)
    first_run = V.integer(first_run, "first_run", 0, _rng.RUN_MAX + 1 - n_runs)
    if max_samples is None:
        max_samples = spec.default_max_samples(k)
    max_samples = V.integer(max_samples, "max_samples", k, MAX_SAMPLES_LIMIT)
    _check_memory(n_runs, k, len(deltas))
    if n_threads is None:
        try:
            import numba

            n_threads = int(numba.get_num_threads())
        except Exception:  # pragma: no cover - numba always present here
            n_threads = os.cpu_count() or 1
    else:
        n_threads = V.integer(n_threads, "n_threads", 1)
    chunk_size = 1 if chunk_size is None else V.integer(chunk_size, "chunk_size", 1)
    show_progress = _progress_enabled(progress)

    means_given = means is not None
    runs = range(first_run, first_run + n_runs)
    if not means_given:
        means = _rng.prior_means(prior.means, prior.stds, seed, n_runs, first_run=first_run)
    states = _rng.seed_states(seed, runs, _rng.STREAM_ALGO)
    m = len(deltas)
    order_desc = sorted(range(m), key=lambda j: -deltas[j])  # levels by decreasing delta
    taus = np.empty((m, n_runs), dtype=np.int64)
    recs = np.empty((m, n_runs), dtype=np.int64)
    codes = np.empty((m, n_runs), dtype=np.int64)
    secs = np.empty((m, n_runs), dtype=np.float64)
    delta0s = [None] * m
    desc = f"simulate {spec.name}"

    levels = None if m == 1 else spec.bind_levels(prior, sig, [deltas[j] for j in order_desc],
                                                   max_samples)
    if levels is not None:
        # One trajectory per run, scored at every level: rows in decreasing delta.
        t_rows = np.empty((n_runs, m), dtype=np.int64)
        r_rows = np.empty((n_runs, m), dtype=np.int64)
        c_rows = np.empty((n_runs, m), dtype=np.int64)
        run = levels.run
        _warm_up(lambda: run(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k), t_rows[0].copy(),
                             r_rows[0].copy(), c_rows[0].copy()),  # compile or load before timing
                 spec.label, show_progress)

        def task(r, cancel):
            run(states[r], means[r], t_rows[r], r_rows[r], c_rows[r], cancel)

        _execute(task, levels.cost_keys(means), n_runs, secs[0], n_threads, chunk_size,
                 show_progress, desc, max_samples)
        for pos, j in enumerate(order_desc):
            taus[j], recs[j], codes[j], secs[j] = t_rows[:, pos], r_rows[:, pos], c_rows[:, pos], \
                secs[0]
    else:
        for j in order_desc:
            bound = spec.bind(prior, sig, deltas[j], max_samples)
            delta0s[j] = bound.delta0
            kernel = bound.run
            _warm_up(lambda: kernel(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k), max_samples=k),
                     spec.label, show_progress)
            tj, rj, cj = taus[j], recs[j], codes[j]
            # kernels advance the states in place: each level starts from fresh copies
            st = states.copy() if m > 1 else states

            def task(r, cancel, kernel=kernel, tj=tj, rj=rj, cj=cj, st=st):
                tj[r], rj[r], _, cj[r] = kernel(st[r], means[r], cancel=cancel)

            _execute(task, bound.cost_keys(means), n_runs, secs[j], n_threads, chunk_size,
                     show_progress, desc if m == 1 else f"{desc}, delta = {deltas[j]:g}",
                     max_samples)

    best = np.argmax(means, axis=1).astype(np.int64)
    best.setflags(write=False)
    means.setflags(write=False)
    sig.setflags(write=False)
    out = []
    for j, delta in enumerate(deltas):
        cens = codes[j] == _k.STOP_CENSORED
        n_cens = int(np.count_nonzero(cens))
        if n_cens:
            at = "" if m == 1 else f" at delta = {delta:g}"
            warnings.warn(
                f"{n_cens:,} of {n_runs:,} runs ({n_cens / n_runs:.2%}) of {spec.label}{at} "
                f"reached max_samples = {max_samples:,} and were censored: their stopping times "
                "are lower bounds and their recommendations the empirical best arm",
                CensoringWarning, stacklevel=3)
        arrays = dict(
            stopping_times=taus[j].copy(), recommendations=recs[j].copy(), best_arms=best,
            correct=recs[j] == best, means=means, censored=cens,
            stop_reasons=np.array(_k.STOP_REASON_NAMES)[codes[j]], seconds=secs[j].copy(),
        )
        for a in arrays.values():
            a.setflags(write=False)
        out.append(SimulationResult(
            algorithm=spec, prior=prior, noise_stds=sig, delta=delta, delta0=delta0s[j],
            seed=seed, max_samples=max_samples, means_given=means_given, first_run=first_run,
            **arrays))
    return out


def _execute(task, keys, n_runs, secs, n_threads, chunk_size, show_progress, desc, max_samples):
    """Run ``task(r, cancel)`` for every run on ``n_threads`` threads, longest (largest key)
    first, timing each run into ``secs[r]``; Ctrl-C stops it (see :func:`_run_workers`)."""
    order = np.argsort(-keys, kind="stable")
    lock = threading.Lock()
    cursor = [0]
    cancel = np.zeros(1, dtype=np.uint8)  # raised on Ctrl-C or a failed worker; kernels poll it
    bar = _CostProgress(desc, keys, max_samples) if show_progress else None

    def worker():
        try:
            while not cancel[0]:
                with lock:
                    start = cursor[0]
                    if start >= n_runs:
                        return
                    stop = min(start + chunk_size, n_runs)
                    cursor[0] = stop
                for j in range(start, stop):
                    r = order[j]
                    t0 = time.perf_counter()
                    task(r, cancel)
                    secs[r] = time.perf_counter() - t0
                if bar is not None:
                    with lock:
                        bar.update(order[start:stop])
        except BaseException:
            cancel[0] = 1
            raise

    _run_workers(worker, min(n_threads, n_runs), cancel, bar)
