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
from .algorithms import Algorithm
from .beta_prior import BetaPrior
from .cost import estimate_plan_cost
from .executor import (check_memory, default_threads, execute, notice_enabled, progress_enabled,
                       warm_up)
from .gamma_prior import GammaPrior
from .plan import CensoringWarning, RunPlan
from .priors import GaussianPrior
from .result import SimulationResult
from .runcache import Records, active_cache

__all__ = ["simulate", "simulate_deltas", "run_plan"]


def simulate(
    algorithm: Algorithm | str,
    prior: Optional[GaussianPrior | BetaPrior | GammaPrior],
    noise_stds: Optional[ArrayLike],
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
    rewards: Optional[str] = None,
    budget: Optional[float] = None,
    look_every: int = 1,
    look_at: Optional[Sequence[int]] = None,
    **options: Any,
) -> SimulationResult:
    """Simulate ``n_runs`` Bayesian BAI runs of one algorithm.

    In run ``r`` the arm means ``mu`` are drawn from ``prior`` (Section 2)
    and the algorithm samples rewards (Gaussian ``N(mu_i, sigma_i^2)``, Bernoulli or Poisson)
    until it stops.

    Parameters
    ----------
    algorithm : Algorithm or str
        A specification from :mod:`bai_lib.algorithms` (``Elimination(...)``,
        ``NoElim(...)``, ``TTTS(...)``, ``TTUCB(...)``, ``EBTC(...)``, ``TrackAndStop(...)``,
        ``LUCB(...)``, a :class:`~bai_lib.algorithms.SamplingRule`), whose fields hold the
        algorithm's options and conventions, or the name of one with default options (a key
        of :data:`bai_lib.algorithms.ALGORITHMS`): ``"elimination"`` is Algorithm 1 of the
        paper (Section 5), ``"noelim"`` its no-elimination variant, ``"ttts"`` Top-Two Thompson
        Sampling with Chernoff stopping, ``"ttucb"`` TTUCB with the stopping rule of the
        authors' released code, ``"ebtc"``, ``"tas"`` and ``"lucb"`` the other baselines.
    prior : GaussianPrior, BetaPrior, GammaPrior or None
        Prior ``H`` on the arm means. May be ``None`` when ``means`` is given and the algorithm
        does not use a prior (TTUCB, EB-TC, Track-and-Stop, LUCB, Algorithm 1 with an explicit
        ``delta0``). A :class:`~bai_lib.BetaPrior` draws the means of Bernoulli arms, a
        :class:`~bai_lib.GammaPrior` those of Poisson arms.
    noise_stds : float or sequence of float, or None
        Known reward standard deviations ``sigma_i`` (scalar = same for all
        arms). With Bernoulli rewards, the sub-Gaussian parameters the algorithm's widths use;
        ``None`` gives ``1/2``, valid for any mean in ``[0, 1]``
        (:data:`~bai_lib.families.bernoulli.NOISE_STD`); a smaller value runs with a
        :class:`~bai_lib.plan.GuaranteeWarning`, as the widths lose their guarantee at means
        near ``1/2``. With Poisson rewards, which are not sub-Gaussian, only the scale of
        TTUCB's exploration bonus (``None`` gives 1; no guarantee rests on it).
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
        and coin flips come from the same seeded stream as when the means are drawn. With an
        exact tie between best arms (``[1, 1, 0]``) recommending any of them is correct.
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
    rewards : {"gaussian", "bernoulli", "poisson"}, optional
        The reward family (:data:`bai_lib.families.REWARD_MODELS`): Gaussian
        ``N(mu_i, sigma_i^2)``, Bernoulli with mean ``mu_i`` (means in ``[0, 1]``), or Poisson
        counts with mean ``mu_i >= 0``. Default: the family of the prior's class
        (``"bernoulli"`` with a :class:`~bai_lib.BetaPrior`, ``"poisson"`` with a
        :class:`~bai_lib.GammaPrior`), else ``"gaussian"``. Every algorithm except the
        user's :class:`~bai_lib.algorithms.SamplingRule` runs each family (its
        ``reward_models``); Poisson rewards need ``widths="kl"`` for Algorithm 1, NoElim and
        LUCB and refuse the GLR algorithms' indifference stop. A pull consumes the one normal a
        Gaussian pull would (Bernoulli: reward ``1`` when it is below
        :math:`\\Phi^{-1}(\\mu_i)`; Poisson: by inversion), so seeding, threads and censoring
        behave the same.
    budget : float, optional
        Seconds. When given, the runs' cost is estimated first (:func:`bai_lib.estimate_cost`:
        each instance's difficulty from the theory, the constant and this machine's speed from
        a pilot of about a second) and a :class:`~bai_lib.CostWarning` states the estimate when
        the predicted wall time exceeds ``budget``; the runs go ahead (Ctrl-C stops them).
    look_every : int, optional
        Batched looks: the stop is checked only when the number of samples is a multiple of
        ``look_every`` (Algorithm 1 and NoElim: at the end of the round that completes such a
        look, eliminating only there), as platforms check hourly or daily; ``max_samples``
        censors at any step (LUCB: before the round after such a look). 1 (default) checks at
        every sample.
        The runs take the ask/tell engine's steps (:meth:`bai_lib.algorithms.Binding.with_looks`),
        which at ``look_every = 1`` are the default runs exactly.
    look_at : sequence of int, optional
        Instead of ``look_every``, the stop is checked when the number of samples is one of
        these strictly increasing counts (a group-sequential design: looks after 1,000, 5,000
        and 20,000 samples, say), with the same conventions; after the last one only
        ``max_samples`` ends a run.

    Warns
    -----
    CensoringWarning
        When some runs reach ``max_samples``, with their number and fraction.
    CostWarning
        With ``budget``, when the predicted wall time exceeds it.

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
    plan = RunPlan.build(algorithm, prior, noise_stds, [V.confidence_level(delta)], n_runs, seed,
                         means=means, first_run=first_run, max_samples=max_samples,
                         rewards=rewards, look_every=look_every, look_at=look_at)
    if budget is not None:
        estimate_plan_cost(plan, n_threads=n_threads, budget=budget)
    (res,) = run_plan(plan, n_threads=n_threads, chunk_size=chunk_size, progress=progress)
    return res


def simulate_deltas(
    algorithm: Algorithm | str,
    prior: Optional[GaussianPrior | BetaPrior | GammaPrior],
    noise_stds: Optional[ArrayLike],
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
    rewards: Optional[str] = None,
    budget: Optional[float] = None,
    look_every: int = 1,
    look_at: Optional[Sequence[int]] = None,
) -> dict:
    """:func:`simulate` at several confidence levels, one result per ``δ``.

    ``simulate_deltas(alg, H, σ, [δ_1, δ_2, ...], n, seed)[δ_j]`` holds exactly the arrays of
    ``simulate(alg, H, σ, δ_j, n, seed)`` (wall-clock ``seconds`` aside): the same instances,
    stopping times, recommendations and stop reasons. For an algorithm whose sampling rule does
    not depend on ``δ`` (TTTS, TTUCB, EB-TC, Track-and-Stop, a
    :class:`~bai_lib.algorithms.SamplingRule`:
    ``one_trajectory`` of :class:`~bai_lib.algorithms.Algorithm`)
    each run follows **one trajectory** until its stopping test passes at the smallest ``δ``,
    and records along the way the first time the test passes at each larger ``δ``: a whole
    curve over ``δ`` costs about one run at the smallest ``δ``. Other algorithms (Algorithm 1,
    whose confidence bounds depend on ``δ``) are run once per ``δ``, and so is every algorithm
    with ``look_every > 1`` or ``look_at``.

    Parameters
    ----------
    deltas : sequence of float
        Distinct confidence levels in ``(0, 1)``, in any order. The other parameters are those of
        :func:`simulate` (``budget`` counts every level); ``seconds`` of each result is the time
        of the shared run.

    Returns
    -------
    dict
        ``{δ: SimulationResult}`` in the order of ``deltas``.
    """
    plan = RunPlan.build(algorithm, prior, noise_stds, deltas, n_runs, seed, means=means,
                         first_run=first_run, max_samples=max_samples, rewards=rewards,
                         look_every=look_every, look_at=look_at)
    if budget is not None:
        estimate_plan_cost(plan, n_threads=n_threads, budget=budget)
    results = run_plan(plan, n_threads=n_threads, chunk_size=chunk_size, progress=progress)
    return dict(zip(plan.deltas, results))


def run_plan(plan: RunPlan, *, n_threads: Optional[int] = None, chunk_size: Optional[int] = None,
             progress: Optional[bool] = None) -> list[SimulationResult]:
    """Execute ``plan`` (:class:`~bai_lib.plan.RunPlan`): one result per level of
    ``plan.deltas``, in that order. ``n_threads``, ``chunk_size`` and ``progress`` as in
    :func:`~bai_lib.simulate`; they change nothing but the wall-clock times.

    While a run cache is in use (:func:`bai_lib.runcache.use_run_cache`), the records come from
    it as its mode says: read and audited, computed and stored, or computed."""
    if n_threads is None:
        n_threads = default_threads()
    else:
        n_threads = V.integer(n_threads, "n_threads", 1)
    chunk_size = 1 if chunk_size is None else V.integer(chunk_size, "chunk_size", 1)
    check_memory(plan.n_runs, plan.k, len(plan.deltas),
                 working=min(n_threads, plan.n_runs) * plan.algorithm.working_memory(plan.k))
    show = (progress_enabled(progress), notice_enabled(progress))

    def compute(p: RunPlan, index: Optional[np.ndarray]) -> Records:
        return _compute(p, index, n_threads, chunk_size, show)

    cache = active_cache()
    rec = compute(plan, None) if cache is None else cache.records(plan, compute)
    return _results(plan, rec)


def _compute(plan: RunPlan, index: Optional[np.ndarray], n_threads: int, chunk_size: int,
             show: tuple[bool, bool]) -> Records:
    """The records of the runs of ``plan`` at positions ``index`` (all runs for ``None``);
    ``show``: the progress bar, the compile notice."""
    show_progress, show_notice = show
    spec, prior, sig, deltas = plan.algorithm, plan.prior, plan.noise_stds, plan.deltas
    k, max_samples = plan.k, plan.max_samples
    means = plan.instance_means()
    if index is None:
        runs = plan.runs
    else:
        means = np.ascontiguousarray(means[index])
        runs = [plan.first_run + int(i) for i in index]
    n_runs = len(runs)
    states = _rng.seed_states(plan.seed, runs, _rng.STREAM_ALGO)
    m = len(deltas)
    order_desc = sorted(range(m), key=lambda j: -deltas[j])  # levels by decreasing delta
    taus = np.empty((m, n_runs), dtype=np.int64)
    recs = np.empty((m, n_runs), dtype=np.int64)
    codes = np.empty((m, n_runs), dtype=np.int64)
    secs = np.empty((m, n_runs), dtype=np.float64)
    delta0s = [None] * m
    desc = f"simulate {spec.name}" if index is None else f"audit {spec.name}"

    # One binding for all levels where one trajectory serves them (rows in decreasing delta),
    # else one binding per level, each from fresh copies of the states (kernels advance them).
    one = m == 1 or (spec.one_trajectory and not plan.batched)
    groups = [order_desc] if one else [[j] for j in order_desc]
    for group in groups:
        bound = spec.bind(prior, sig, [deltas[j] for j in group], max_samples,
                          rewards=plan.rewards)
        if plan.batched:
            bound = bound.with_looks(plan.look_every, k, plan.look_at)
        run, n_lev = bound.run, len(group)
        t_rows = np.empty((n_runs, n_lev), dtype=np.int64)
        r_rows = np.empty((n_runs, n_lev), dtype=np.int64)
        c_rows = np.empty((n_runs, n_lev), dtype=np.int64)
        warm_up(lambda: run(np.array([1, 2, 3, 4], dtype=np.uint64), np.zeros(k),
                            t_rows[0].copy(), r_rows[0].copy(), c_rows[0].copy(),
                            max_samples=k),  # compile or load before timing
                spec.label, show_notice)
        st = states.copy() if len(groups) > 1 else states

        def task(r, cancel, run=run, st=st, t_rows=t_rows, r_rows=r_rows, c_rows=c_rows):
            run(st[r], means[r], t_rows[r], r_rows[r], c_rows[r], cancel)

        first = group[0]
        execute(task, bound.cost_keys(means), n_runs, secs[first], n_threads, chunk_size,
                show_progress, desc if len(groups) == 1 else f"{desc}, delta = {deltas[first]:g}",
                max_samples)
        for pos, j in enumerate(group):
            taus[j], recs[j], codes[j] = t_rows[:, pos], r_rows[:, pos], c_rows[:, pos]
            secs[j], delta0s[j] = secs[first], bound.delta0s[pos]
    return Records(taus, recs, codes, secs, delta0s)


def _results(plan: RunPlan, rec: Records) -> list[SimulationResult]:
    """One :class:`~bai_lib.SimulationResult` per level, warning about censored runs."""
    spec, sig, n_runs, max_samples = plan.algorithm, plan.noise_stds, plan.n_runs, plan.max_samples
    means = plan.instance_means()
    means.setflags(write=False)
    sig.setflags(write=False)
    names = np.array(_k.STOP_REASON_NAMES)
    m = len(plan.deltas)
    out = []
    for j, delta in enumerate(plan.deltas):
        cens = rec.codes[j] == _k.STOP_CENSORED
        n_cens = int(np.count_nonzero(cens))
        if n_cens:
            at = "" if m == 1 else f" at delta = {delta:g}"
            warnings.warn(
                f"{n_cens:,} of {n_runs:,} runs ({n_cens / n_runs:.2%}) of {spec.label}{at} "
                f"reached max_samples = {max_samples:,} and were censored: their stopping times "
                "are lower bounds and their recommendations the empirical best arm",
                CensoringWarning, stacklevel=4)
        out.append(SimulationResult.from_runs(
            algorithm=spec, prior=plan.prior, noise_stds=sig, delta=delta,
            delta0=rec.delta0s[j], seed=plan.seed, max_samples=max_samples, means=means,
            means_given=plan.means_given, first_run=plan.first_run,
            stopping_times=rec.taus[j].copy(), recommendations=rec.recs[j].copy(),
            stop_reasons=names[rec.codes[j]], seconds=rec.seconds[j].copy(),
            rewards=plan.rewards, look_every=plan.look_every, look_at=plan.look_at))
    return out
