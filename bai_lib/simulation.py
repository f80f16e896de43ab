"""Monte Carlo simulation of Bayesian fixed-confidence BAI algorithms.

:func:`~bai_lib.simulate` draws ``n_runs`` bandit instances ``mu ~ H`` from a
:class:`~bai_lib.priors.GaussianPrior` and runs one algorithm on each with
the compiled kernels of :mod:`bai_lib.kernels`, returning a
:class:`~bai_lib.SimulationResult`.

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
time; long runs start first and short runs fill the gaps at the end
(:mod:`bai_lib.executor`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from . import kernels as _k
from .algorithms import Algorithm, resolve
from .executor import check_memory, default_threads, execute, progress_enabled, warm_up
from .priors import GaussianPrior, check_prior
from .result import SimulationResult

__all__ = ["simulate", "simulate_deltas", "CensoringWarning", "MAX_SAMPLES_LIMIT"]


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


class CensoringWarning(UserWarning):
    """Some runs of :func:`simulate` reached ``max_samples`` and were censored."""


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
        Worker threads; default ``numba.get_num_threads()``.
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
    check_prior(prior, allow_none=True)
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
    check_memory(n_runs, k, len(deltas))
    if n_threads is None:
        n_threads = default_threads()
    else:
        n_threads = V.integer(n_threads, "n_threads", 1)
    chunk_size = 1 if chunk_size is None else V.integer(chunk_size, "chunk_size", 1)
    show_progress = progress_enabled(progress)

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
        warm_up(lambda: run(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k), t_rows[0].copy(),
                             r_rows[0].copy(), c_rows[0].copy()),  # compile or load before timing
                 spec.label, show_progress)

        def task(r, cancel):
            run(states[r], means[r], t_rows[r], r_rows[r], c_rows[r], cancel)

        execute(task, levels.cost_keys(means), n_runs, secs[0], n_threads, chunk_size,
                 show_progress, desc, max_samples)
        for pos, j in enumerate(order_desc):
            taus[j], recs[j], codes[j], secs[j] = t_rows[:, pos], r_rows[:, pos], c_rows[:, pos], \
                secs[0]
    else:
        for j in order_desc:
            bound = spec.bind(prior, sig, deltas[j], max_samples)
            delta0s[j] = bound.delta0
            kernel = bound.run
            warm_up(lambda: kernel(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k), max_samples=k),
                     spec.label, show_progress)
            tj, rj, cj = taus[j], recs[j], codes[j]
            # kernels advance the states in place: each level starts from fresh copies
            st = states.copy() if m > 1 else states

            def task(r, cancel, kernel=kernel, tj=tj, rj=rj, cj=cj, st=st):
                tj[r], rj[r], _, cj[r] = kernel(st[r], means[r], cancel=cancel)

            execute(task, bound.cost_keys(means), n_runs, secs[j], n_threads, chunk_size,
                     show_progress, desc if m == 1 else f"{desc}, delta = {deltas[j]:g}",
                     max_samples)

    means.setflags(write=False)
    sig.setflags(write=False)
    names = np.array(_k.STOP_REASON_NAMES)
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
        out.append(SimulationResult.from_runs(
            algorithm=spec, prior=prior, noise_stds=sig, delta=delta, delta0=delta0s[j],
            seed=seed, max_samples=max_samples, means=means, means_given=means_given,
            first_run=first_run, stopping_times=taus[j].copy(), recommendations=recs[j].copy(),
            stop_reasons=names[codes[j]], seconds=secs[j].copy()))
    return out
