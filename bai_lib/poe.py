"""The Bayesian probability of error, estimated by importance sampling near ties.

Orchestration layer. The probability of error (PoE) of Section 2,

.. math:: \\mathrm{PoE} = \\mathbb{E}_{\\mu \\sim H}\\big[\\,\\mathbb{P}(J \\ne i^*(\\mu) \\mid \\mu)\\big],

is, for Algorithm 1, almost entirely the mass of the instances whose two best arms are closer
than about ``Δ0`` (Section 5: the indifference stop recommends a uniformly drawn survivor, and
otherwise an error needs a confidence bound to fail). Plain Monte Carlo spends nearly all its
runs elsewhere, so it needs of the order of ``1/δ`` runs per observed error.

:class:`NearTieProposal` draws instances whose top two arms are within ``±half_width`` of each
other far more often, with the exact likelihood ratio ``w(μ) = h(μ)/q(μ)`` as weight, and
:func:`importance_poe` averages ``w(μ_r) e_r`` over runs ``r``, where ``e_r`` is the error of
run ``r``. The average is unbiased for the PoE whatever the proposal's parameters (they only
change its variance), and its standard error comes from the same runs. :func:`plain_poe` is
the plain Monte Carlo estimate it is compared with.

On two arms with a common noise level, Algorithm 1's runs depend on the instance only through
the gap, and :func:`gap_average` integrates the mean stopping time and the PoE over the prior's
gap instead (runs at a grid of gaps, the trapezoid rule): near ties are on the grid by
construction, so the mean stopping time is measured as well as the PoE.

Two exact variance reductions are used where they apply:

* at an indifference stop of Algorithm 1 on two arms, both arms are active and the
  recommendation is a fair coin, so ``e_r`` is replaced by its conditional expectation ``1/2``
  (the coin is drawn after the last reward, so this changes nothing else);
* Algorithm 1 on two arms with a common noise level is simulated through the difference of the
  two sums (:func:`bai_lib.algorithms.elimination.two_arm_elimination_run`), which has the same
  distribution of decisions at a quarter of the cost.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr
from scipy.stats import norm, truncnorm

from . import _validate as V
from .algorithms import Algorithm, resolve
from .executor import check_memory
from .priors import GaussianPrior, check_prior
from .simulation import simulate
from .stats import clopper_pearson, normal_interval

__all__ = ["NearTieProposal", "PoEEstimate", "importance_poe", "plain_poe", "GapAverage",
           "gap_average"]

#: Default ``half_width`` of the proposal for Algorithm 1, in units of its ``Δ0``.
HALF_WIDTH_FACTOR = 1.2
#: Default probability of drawing an instance from the prior itself (the defensive component).
DEFENSIVE = 0.02
#: Seed-sequence tag of the proposal's draws, distinct from the streams of :mod:`bai_lib._rng`.
_PROPOSAL_STREAM = 0x504F45


def _pair_moments(prior: GaussianPrior, i: int, j: int) -> tuple[float, float]:
    """Mean and standard deviation of ``x`` under ``h_i(x) h_j(x) Π_{s≠i,j} H_s(x)``.

    The density of the common value of arms ``i`` and ``j`` when they tie at the top (the
    integrand of ``L_ij`` in Definition 2, normalised). ``h_i h_j`` is proportional to a
    Gaussian ``N(c0, s0^2)``; the factor ``Π H_s`` is integrated on a fine grid in
    ``y = (x - c0)/s0``. These moments only shape the proposal, so grid accuracy is ample.
    """
    m, s = prior.means, prior.stds
    vi, vj = s[i] ** 2, s[j] ** 2
    c0 = (m[i] * vj + m[j] * vi) / (vi + vj)
    s0 = s[i] * s[j] / math.sqrt(vi + vj)
    others = [t for t in range(prior.k) if t not in (i, j)]
    if not others:
        return float(c0), float(s0)
    y = np.linspace(-12.0, 12.0, 4801)
    x = c0 + s0 * y
    log_f = -0.5 * y**2 + log_ndtr((x[:, None] - m[others]) / s[others]).sum(axis=1)
    f = np.exp(log_f - log_f.max())
    z = f.sum()
    mean_y = (y * f).sum() / z
    var_y = ((y - mean_y) ** 2 * f).sum() / z
    return float(c0 + s0 * mean_y), float(s0 * math.sqrt(var_y))


@dataclass(frozen=True, eq=False)
class NearTieProposal:
    """A distribution of arm means that over-samples near ties, with exact weights.

    A mixture: with probability ``defensive`` the means are drawn from the prior ``H``;
    otherwise a pair ``{i, j}`` is chosen with probability ``L_ij(H) / Σ L`` (Definition 2), a
    centre ``x ~ N(c_ij, s_ij^2)`` with the mean and spread of the pair's tie value at the top,
    a gap ``u ~ Uniform(-half_width, half_width)``, and ``μ_i = x + u/2``, ``μ_j = x - u/2``,
    the other arms from the prior truncated below ``x`` (so that the pair is the top two, as at
    a tie of ``L_ij``). The density of the result is

    .. math:: q(\\mu) = \\alpha\\, h(\\mu) + (1-\\alpha) \\sum_{i<j} \\pi_{ij}\\,
              \\varphi_{ij}(x_{ij})\\, r(u_{ij}) \\prod_{s \\ne i,j}
              \\frac{h_s(\\mu_s)\\,\\mathbb{1}\\{\\mu_s < x_{ij}\\}}{H_s(x_{ij})},

    with ``x_ij = (μ_i + μ_j)/2``, ``u_ij = μ_i - μ_j`` (the change of variables has Jacobian
    1), so the weight ``w = h/q`` is exact and at most ``1/α``. Any ``half_width``, centre and
    spread give an unbiased estimator; those chosen make ``w`` nearly constant on the near
    ties, which is where the variance would come from.

    Parameters
    ----------
    prior : GaussianPrior
        The prior ``H`` of the arm means (``k <= 10`` or so: it uses ``L_matrix``).
    half_width : float
        Half-width of the uniform gap ``u`` of the near-tie component (> 0).
    defensive : float
        Probability ``α`` in (0, 1) of the prior component, which keeps every instance
        reachable and bounds the weights by ``1/α``.
    """

    prior: GaussianPrior
    half_width: float
    defensive: float = DEFENSIVE
    _pairs: np.ndarray = field(init=False, repr=False)
    _log_pi: np.ndarray = field(init=False, repr=False)
    _centres: np.ndarray = field(init=False, repr=False)
    _spreads: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        check_prior(self.prior)
        object.__setattr__(self, "half_width", V.positive(self.half_width, "half_width"))
        a = V.open_unit(self.defensive, "defensive")
        object.__setattr__(self, "defensive", a)
        k = self.prior.k
        L = self.prior.L_matrix()
        pairs = np.array([(i, j) for i in range(k) for j in range(i + 1, k)], dtype=np.intp)
        weights = np.array([L[i, j] for i, j in pairs])
        if not np.all(weights > 0):
            raise ValueError("prior: some pair of arms has L_ij(H) = 0 (it never ties at the "
                             "top); this proposal needs every L_ij > 0")
        moments = np.array([_pair_moments(self.prior, i, j) for i, j in pairs])
        object.__setattr__(self, "_pairs", pairs)
        object.__setattr__(self, "_log_pi", np.log(weights / weights.sum()))
        object.__setattr__(self, "_centres", moments[:, 0])
        object.__setattr__(self, "_spreads", moments[:, 1])

    def sample(self, seed: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` instances and their weights ``h(μ)/q(μ)``; identical for identical ``seed``.

        Returns
        -------
        means : ndarray, shape (n, k)
        weights : ndarray, shape (n,)
        """
        seed = V.integer(seed, "seed", 0)
        n = V.integer(n, "n", 1)
        rng = np.random.default_rng([seed, _PROPOSAL_STREAM])
        prior = self.prior
        means = prior.means + prior.stds * rng.standard_normal((n, prior.k))
        tie = rng.random(n) >= self.defensive
        m = int(tie.sum())
        if m:
            which = rng.choice(len(self._pairs), size=m, p=np.exp(self._log_pi))
            x = self._centres[which] + self._spreads[which] * rng.standard_normal(m)
            u = self.half_width * (2.0 * rng.random(m) - 1.0)
            rows = np.flatnonzero(tie)
            i, j = self._pairs[which, 0], self._pairs[which, 1]
            means[rows, i] = x + 0.5 * u
            means[rows, j] = x - 0.5 * u
            if prior.k > 2:
                # the other arms from the prior truncated below the centre x
                other = np.ones((m, prior.k), dtype=bool)
                other[np.arange(m), i] = False
                other[np.arange(m), j] = False
                r_idx, s_idx = np.nonzero(other)
                upper = (x[r_idx] - prior.means[s_idx]) / prior.stds[s_idx]
                draws = truncnorm.rvs(-np.inf, upper, loc=prior.means[s_idx],
                                      scale=prior.stds[s_idx], random_state=rng)
                means[rows[r_idx], s_idx] = draws
        return means, self.weights(means)

    def weights(self, means: ArrayLike) -> np.ndarray:
        """The likelihood ratio ``h(μ)/q(μ)`` of each row of ``means`` (shape ``(n, k)``)."""
        mu = np.asarray(means, dtype=float)
        if mu.ndim != 2 or mu.shape[1] != self.prior.k or not np.all(np.isfinite(mu)):
            raise ValueError(f"means must be a finite array of shape (n, {self.prior.k})")
        rows = max(1, 2_000_000 // (len(self._pairs) * self.prior.k))
        return np.concatenate([self._weights(mu[a:a + rows])
                               for a in range(0, mu.shape[0], rows)] or [np.empty(0)])

    def _weights(self, mu: np.ndarray) -> np.ndarray:
        pm, ps = self.prior.means, self.prior.stds
        log_h = norm.logpdf(mu, pm, ps)
        i, j = self._pairs[:, 0], self._pairs[:, 1]
        x = 0.5 * (mu[:, i] + mu[:, j])                     # (n, pairs)
        u = mu[:, i] - mu[:, j]
        log_ratio = (self._log_pi + norm.logpdf(x, self._centres, self._spreads)
                     - math.log(2.0 * self.half_width) - log_h[:, i] - log_h[:, j])
        inside = np.abs(u) <= self.half_width
        if self.prior.k > 2:
            # the other arms: prior density truncated below x, i.e. 1{μ_s < x} / H_s(x)
            log_H = log_ndtr((x[:, :, None] - pm) / ps)      # (n, pairs, k)
            below = mu[:, None, :] < x[:, :, None]
            cols = np.arange(len(self._pairs))
            log_H[:, cols, i] = 0.0
            log_H[:, cols, j] = 0.0
            below[:, cols, i] = True
            below[:, cols, j] = True
            log_ratio = log_ratio - log_H.sum(axis=2)
            inside &= below.all(axis=2)
        ratio = np.where(inside, np.exp(np.where(inside, log_ratio, 0.0)), 0.0).sum(axis=1)
        return 1.0 / (self.defensive + (1.0 - self.defensive) * ratio)


@dataclass(frozen=True)
class PoEEstimate:
    """An estimate of the probability of error with its confidence interval.

    Attributes
    ----------
    estimate : float
        The estimate of the PoE.
    std_error : float
        Its standard error.
    ci : (float, float)
        Two-sided confidence interval at ``level``: ``estimate ± z·std_error`` for importance
        sampling, exact Clopper–Pearson for plain Monte Carlo.
    level : float
        Confidence level of ``ci``.
    delta : float
        The confidence level ``δ`` the algorithm ran at.
    n_runs : int
        Simulated runs.
    samples : int
        Rewards drawn in all runs together (the simulation cost).
    method : str
        ``"importance"`` or ``"plain"``.
    means : ndarray, shape (n_runs, k)
        The instance of each run.
    weights : ndarray, shape (n_runs,)
        Each run's likelihood ratio ``h(μ)/q(μ)`` (all ones for plain Monte Carlo).
    errors : ndarray, shape (n_runs,)
        Each run's error: 0 or 1, or 1/2 at a two-arm indifference stop of Algorithm 1 for
        importance sampling (module docstring). ``estimate`` is the mean of ``weights * errors``.
    """

    estimate: float
    std_error: float
    ci: tuple
    level: float
    delta: float
    n_runs: int
    samples: int
    method: str
    means: np.ndarray = field(repr=False, compare=False)
    weights: np.ndarray = field(repr=False, compare=False)
    errors: np.ndarray = field(repr=False, compare=False)

    @property
    def relative_half_width(self) -> float:
        """Half the width of ``ci`` over ``estimate`` (``inf`` when the estimate is 0)."""
        half = 0.5 * (self.ci[1] - self.ci[0])
        return half / self.estimate if self.estimate > 0 else math.inf

    @property
    def certified(self) -> bool:
        """Whether the whole interval lies at or below ``δ`` (PoE ≤ δ at ``level``).

        The interval only reflects what the runs saw. Errors too rare to appear in them (for
        Algorithm 1, a failed confidence bound, probability at most
        :func:`bai_lib.confidence.failure_bound` on any instance) are not in it; a conservative
        certificate adds their bound to ``ci[1]``.
        """
        return self.ci[1] <= self.delta

    @property
    def refuted(self) -> bool:
        """Whether the whole interval lies above ``δ`` (PoE > δ at ``level``)."""
        return self.ci[0] > self.delta


def _run_errors(result, rao_blackwell: bool) -> np.ndarray:
    """Per-run error: the indicator, or ``1/2`` at a two-arm indifference stop of Algorithm 1."""
    if np.any(result.censored):
        raise ValueError(
            f"{int(np.count_nonzero(result.censored))} runs reached max_samples: a censored run "
            f"has no recommendation of its own; raise max_samples")
    err = (~result.correct).astype(float)
    if rao_blackwell:
        err[result.stop_reasons == "indifference"] = 0.5
    return err


def importance_poe(algorithm: Algorithm | str, prior: GaussianPrior, noise_stds: ArrayLike,
                   delta: float, n_runs: int, seed: int, *, half_width: Optional[float] = None,
                   defensive: float = DEFENSIVE, level: float = 0.95, engine: str = "auto",
                   max_samples: Optional[int] = None, n_threads: Optional[int] = None,
                   progress: Optional[bool] = None) -> PoEEstimate:
    """Importance-sampling estimate of the PoE of ``algorithm`` under ``prior``.

    Draws ``n_runs`` instances from :class:`NearTieProposal`, simulates one run on each
    (:func:`bai_lib.simulate` with ``means=``, so threads, progress and Ctrl-C behave as
    there) and returns the mean of ``w_r e_r`` with the normal-approximation interval
    ``± z·s/√n`` (the weights are bounded by ``1/defensive``, so the average is
    asymptotically normal).

    Parameters
    ----------
    algorithm : Algorithm or str
        Any specification; Algorithm 1 gets the two exact variance reductions of the module
        docstring when it runs on two arms.
    prior, noise_stds, delta, n_runs, seed
        As in :func:`bai_lib.simulate`.
    half_width : float, optional
        Half-width of the proposal's gap. Default ``1.2 Δ0`` for Algorithm 1 and NoElim;
        required for other algorithms.
    defensive : float
        Probability of an instance drawn from the prior itself.
    level : float
        Confidence level of the interval.
    engine : {"auto", "general", "two_arm"}
        ``"two_arm"`` simulates Algorithm 1 on two arms with a common noise level through the
        difference of the sums; ``"general"`` uses the algorithm's own kernel; ``"auto"``
        picks ``"two_arm"`` whenever it applies.
    max_samples : int, optional
        Censoring bound per run. Default: the largest stopping time ``k n*`` for Algorithm 1 and
        NoElim (no run is censored), the algorithm's default otherwise. A censored run makes
        the estimate meaningless, so it raises ``ValueError``.
    n_threads, progress
        As in :func:`bai_lib.simulate`.
    """
    spec = resolve(algorithm)
    check_prior(prior)
    delta = V.confidence_level(delta)
    n_runs = V.integer(n_runs, "n_runs", 2)
    level = V.open_unit(level, "level")
    engine = V.choice(engine, ("auto", "general", "two_arm"), "engine")
    k = prior.k
    # before the proposal draws anything: its means, weights and errors are about one more
    # level's worth of per-run arrays on top of the simulation's
    check_memory(n_runs, k, n_deltas=2)
    sigma = V.noise_stds(noise_stds, k)
    equal_noise = bool(np.all(sigma == sigma[0]))
    walk = spec.two_arm_walk() if spec.coin_at_indifference(k) and equal_noise else None
    two_arm_ok = walk is not None
    if engine == "two_arm" and not two_arm_ok:
        raise ValueError("engine='two_arm' needs Algorithm 1 (Elimination, recommend='uniform') "
                         "on two arms with a common noise level")
    if engine == "auto":
        engine = "two_arm" if two_arm_ok else "general"
    if half_width is None:
        d0 = spec.resolve_delta0(prior, delta)
        if d0 is None:
            raise ValueError(f"half_width: give the gap scale of the near ties for {spec.label}")
        half_width = HALF_WIDTH_FACTOR * d0
    if max_samples is None:
        max_samples = spec.max_stopping_time(prior, sigma, delta)
    proposal = NearTieProposal(prior, half_width, defensive)
    means, weights = proposal.sample(seed, n_runs)
    run_spec = walk if engine == "two_arm" else spec
    result = simulate(run_spec, prior, sigma, delta, n_runs, seed, means=means,
                      max_samples=max_samples, n_threads=n_threads, progress=progress)
    errors = _run_errors(result, spec.coin_at_indifference(k))
    values = weights * errors
    est = float(values.mean())
    se = float(values.std(ddof=1) / math.sqrt(n_runs))
    lower, upper = normal_interval(est, se, level)
    return PoEEstimate(est, se, (max(lower, 0.0), upper), level, delta, n_runs,
                       int(result.stopping_times.sum(dtype=object)), "importance", result.means, weights,
                       errors)


def plain_poe(algorithm: Algorithm | str, prior: GaussianPrior, noise_stds: ArrayLike,
              delta: float, n_runs: int, seed: int, *, level: float = 0.95,
              max_samples: Optional[int] = None, n_threads: Optional[int] = None,
              progress: Optional[bool] = None) -> PoEEstimate:
    """Plain Monte Carlo estimate of the PoE: the error rate of :func:`bai_lib.simulate`.

    The interval is the exact Clopper–Pearson interval at ``level``; the standard error is the
    binomial ``sqrt(p(1-p)/n)``. Arguments as in :func:`importance_poe`.
    """
    spec = resolve(algorithm)
    check_prior(prior)
    level = V.open_unit(level, "level")
    if max_samples is None:
        max_samples = spec.max_stopping_time(prior, V.noise_stds(noise_stds, prior.k),
                                             V.confidence_level(delta))
    result = simulate(spec, prior, noise_stds, delta, n_runs, seed, max_samples=max_samples,
                      n_threads=n_threads, progress=progress)
    errors = _run_errors(result, False)
    n_err = int(errors.sum())
    p = n_err / result.n_runs
    return PoEEstimate(p, math.sqrt(p * (1 - p) / result.n_runs),
                       clopper_pearson(n_err, result.n_runs, level), level, result.delta,
                       result.n_runs, int(result.stopping_times.sum(dtype=object)), "plain", result.means,
                       np.ones(result.n_runs), errors)


@dataclass(frozen=True)
class GapAverage:
    """The prior averages of a two-arm run's stopping time and error, integrated over the gap.

    Attributes
    ----------
    delta : float
        The confidence level ``δ`` the algorithm ran at.
    mean_tau, mean_tau_se : float
        ``E[τ]`` under the prior, and the standard error of the simulation (the quadrature's own
        error is not in it).
    poe, poe_se : float
        The probability of error, and its standard error.
    level : float
        Confidence level of ``mean_tau_ci`` and ``poe_ci``.
    gaps : ndarray
        The gaps ``u`` of the grid (better arm minus worse), increasing.
    tau_by_gap, error_by_gap : ndarray
        The mean stopping time and error of the runs at each gap.
    runs : int
        Simulated runs (``runs_per_gap`` per gap).
    samples : int
        The samples the runs stand for (their stopping times added up).
    """

    delta: float
    mean_tau: float
    mean_tau_se: float
    poe: float
    poe_se: float
    level: float
    gaps: np.ndarray = field(repr=False, compare=False)
    tau_by_gap: np.ndarray = field(repr=False, compare=False)
    error_by_gap: np.ndarray = field(repr=False, compare=False)
    runs: int = 0
    samples: int = 0

    @property
    def mean_tau_ci(self) -> tuple[float, float]:
        """Normal interval of ``E[τ]`` at the confidence level ``level``."""
        return normal_interval(self.mean_tau, self.mean_tau_se, self.level)

    @property
    def poe_ci(self) -> tuple[float, float]:
        """Normal interval of the PoE at the confidence level ``level`` (lower end at least 0)."""
        lo, hi = normal_interval(self.poe, self.poe_se, self.level)
        return max(lo, 0.0), hi


def gap_average(algorithm: Algorithm | str, prior: GaussianPrior, noise_stds: ArrayLike,
                delta: float, seed: int, *, runs_per_gap: int = 500, step: float = 0.05,
                lowest: float = 1e-3, level: float = 0.95, n_threads: Optional[int] = None,
                progress: Optional[bool] = None) -> GapAverage:
    """``E[τ]`` and the PoE of a two-arm algorithm whose runs depend on the instance only
    through its gap, as an integral over the gap.

    On two Gaussian arms with a common noise level, a translation-invariant algorithm
    (:meth:`~bai_lib.algorithms.Algorithm.translation_invariant`: Algorithm 1 and NoElim) that
    treats both arms alike has a run law that depends on ``μ`` only through ``u = |μ_1 - μ_2|``:
    ``E[τ | μ] = f(u)`` and ``P(error | μ) = e(u)``. Under the prior the gap ``μ_1 - μ_2`` is
    ``N(m_1 - m_2, s_1² + s_2²)``, so ``E[τ] = ∫ f(u) p(u) du`` with ``p`` the density of ``|gap|``,
    and the same for the PoE. The integral is taken over ``x = log(u/Δ0)`` by the trapezoid rule,
    with ``runs_per_gap`` runs at each of the gaps ``Δ0 e^x``, ``x`` from ``log(lowest)`` to the
    gap ``|m_1 - m_2| + 8 sqrt(s_1² + s_2²)`` in steps of ``step``; below the first gap, ``f`` and ``e``
    are taken to be their values there (every such run ends at the indifference round with a coin
    flip) and weighted by the prior mass below it. Errors at an indifference stop count ``1/2``
    when the recommendation there is a fair coin (as in :func:`importance_poe`).

    Every stopping time matters, the longest most: run it with runs simulated in law
    (``method="blocks"``), whose cost does not grow with ``n*``. No run is censored
    (``max_samples`` is ``k n*``).

    Parameters
    ----------
    algorithm, prior, noise_stds, delta, seed
        As in :func:`bai_lib.simulate`; two arms and a common noise level.
    runs_per_gap : int
        Runs at each gap of the grid.
    step : float
        Spacing of the grid in ``log(u/Δ0)``.
    lowest : float
        The smallest gap of the grid, in units of ``Δ0``.
    level : float
        Confidence level of the intervals.
    n_threads, progress
        As in :func:`bai_lib.simulate`.
    """
    spec = resolve(algorithm)
    check_prior(prior)
    delta = V.confidence_level(delta)
    if prior.k != 2:
        raise ValueError(f"prior: gap_average needs two arms, got k = {prior.k}")
    sigma = V.noise_stds(noise_stds, 2)
    if sigma[0] != sigma[1]:
        raise ValueError(f"noise_stds: gap_average needs a common noise level, got "
                         f"{sigma.tolist()}")
    if not spec.translation_invariant():
        raise ValueError(f"algorithm: {spec.label} does not depend on the means through their "
                         f"gap only; gap_average needs a translation-invariant algorithm")
    runs_per_gap = V.integer(runs_per_gap, "runs_per_gap", 2)
    step = V.positive(step, "step")
    lowest = V.positive(lowest, "lowest")
    level = V.open_unit(level, "level")
    d0 = spec.resolve_delta0(prior, delta)
    centre = float(prior.means[0] - prior.means[1])
    spread = math.hypot(float(prior.stds[0]), float(prior.stds[1]))
    top = math.log((abs(centre) + 8.0 * spread) / d0)
    if not top > math.log(lowest):
        raise ValueError(f"lowest: {lowest:g} Δ0 is beyond the prior's gaps")
    xs = np.linspace(math.log(lowest), top, int(math.ceil((top - math.log(lowest)) / step)) + 1)
    gaps = d0 * np.exp(xs)
    means = np.repeat(np.column_stack([gaps, np.zeros_like(gaps)]), runs_per_gap, axis=0)
    result = simulate(spec, prior, sigma, delta, means.shape[0], seed, means=means,
                      max_samples=spec.max_stopping_time(prior, sigma, delta),
                      n_threads=n_threads, progress=progress)
    errors = _run_errors(result, spec.coin_at_indifference(2)).reshape(gaps.size, runs_per_gap)
    taus = result.stopping_times.astype(np.float64).reshape(gaps.size, runs_per_gap)
    density = (norm.pdf(gaps, centre, spread) + norm.pdf(-gaps, centre, spread)) * gaps
    trapezoid = np.full(xs.size, xs[1] - xs[0])
    trapezoid[[0, -1]] *= 0.5
    weights = density * trapezoid
    # below the first gap, f and e are taken at the first gap: its weight takes that prior mass
    weights[0] += float(norm.cdf(gaps[0], centre, spread) - norm.cdf(-gaps[0], centre, spread))

    def integral(values):
        means_j = values.mean(axis=1)
        var_j = values.var(axis=1, ddof=1) / runs_per_gap
        return float(weights @ means_j), float(math.sqrt(weights**2 @ var_j)), means_j

    mean_tau, tau_se, tau_j = integral(taus)
    poe, poe_se, err_j = integral(errors)
    return GapAverage(delta, mean_tau, tau_se, poe, poe_se, level, gaps, tau_j, err_j,
                      int(means.shape[0]), int(result.stopping_times.sum(dtype=object)))
