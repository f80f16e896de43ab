"""The relaxed optimisation problem (Opt2) of Section 4, for two arms with a common noise level.

Math layer. (Opt2) chooses a sampling budget ``n(g)`` for every gap ``g = μ1 − μ2`` to minimise
the expected probability of error under the prior subject to an average budget; its solution
gives the lower bound of Theorem 4 its shape. It is solved exactly through its KKT conditions and
one-dimensional integrals over the gap distribution (:func:`bai_lib.bounds.gap_distribution`):
:func:`solve` for one budget, :func:`frontier` for many, :func:`budget_for_poe` for the budget
that reaches a target error, and the comparisons :func:`uniform_allocation_poe`,
:func:`poe_lower_bound` and :func:`large_budget_poe`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Union

import numpy as np
from scipy import integrate, optimize
from scipy.stats import norm

from . import _validate as V
from .bounds import (KAUFMANN_CONSTANT, QUAD_OPTIONS, ArrayLike, abs_gap_density,
                     gap_distribution)
from .priors import GaussianPrior, check_prior

# range of log g0 (indifference gap) handled by solve()
_LOG_G0_MIN = -700.0
_LOG_G0_MAX = 300.0

__all__ = ["allocation", "budget_and_poe", "Solution", "solve", "Frontier", "frontier",
           "budget_for_poe", "uniform_allocation_poe", "poe_lower_bound", "large_budget_poe"]


def allocation(gap: ArrayLike, lam: float, noise_stds: ArrayLike = 1.0) -> Union[float, np.ndarray]:
    """Optimal relaxed allocation :math:`\\tilde n^*(\\mu)` of (Opt2) for a multiplier λ.

    With :math:`a(\\mu) = (\\mu_1 - \\mu_2)^2/(2\\sigma^2)`, stationarity of the Lagrangian
    :math:`e^{-a n} + \\lambda n` gives

    .. math:: \\tilde n^*(\\mu) = \\max\\left(0, \\frac{\\log(a/\\lambda)}{a}\\right),

    which is zero on the indifference zone :math:`|g| \\le \\sqrt{2\\sigma^2\\lambda}`
    (including :math:`g = 0`).

    Parameters
    ----------
    gap : float or array_like
        :math:`g = \\mu_1 - \\mu_2` (any sign, finite). Vectorised.
    lam : float
        Multiplier λ > 0.
    noise_stds : float, default 1.0
        Common noise standard deviation.

    Returns
    -------
    float or numpy.ndarray
    """
    g = V.reals(gap, "gap")
    lm = V.positive(lam, "lam")
    s = V.common_noise_std(noise_stds)
    a = g**2 / (2.0 * s**2)
    out = np.zeros_like(a)
    pos = a > lm
    out[pos] = np.log(a[pos] / lm) / a[pos]
    return V.like_input(out, gap)


def _integrals(loc: float, scale: float, g0: float, sigma: float) -> tuple[float, float]:
    """Budget :math:`\\int \\tilde n^* dH` and objective :math:`\\int e^{-a\\tilde n^*} dH`.

    With :math:`g_0 = \\sqrt{2\\sigma^2\\lambda}`, density :math:`f` of :math:`|g|` and
    :math:`x = g_0 e^t`:

    * budget :math:`= (4\\sigma^2/g_0) \\int_0^\\infty t e^{-t} f(g_0 e^t)\\, dt`;
    * objective :math:`= P(|g| \\le g_0) + g_0 \\int_0^\\infty e^{-t} f(g_0 e^t)\\, dt`

    (outside the zone :math:`e^{-a\\tilde n^*} = \\lambda/a = g_0^2/g^2`).
    """
    x_hi = max(abs(loc), g0) + 40.0 * scale
    upper = math.log(x_hi / g0)
    pts = []
    for kk in (-4.0, -2.0, -1.0, 0.0, 1.0, 2.0, 4.0):
        x = abs(loc) + kk * scale
        if x > g0:
            t = math.log(x / g0)
            if 0.0 < t < upper:
                pts.append(t)
    for t in (1.0, 2.0, 5.0):
        if t < upper:
            pts.append(t)
    if g0 > abs(loc):  # the density falls off from g0 on the scale scale²/(g0 - |loc|)
        for kk in (0.1, 1.0):
            t = math.log1p(kk * scale**2 / ((g0 - abs(loc)) * g0))
            if 0.0 < t < upper:
                pts.append(t)
    pts = sorted(set(pts)) or None

    def fb(t):
        return t * math.exp(-t) * abs_gap_density(g0 * math.exp(t), loc, scale)

    def fv(t):
        return math.exp(-t) * abs_gap_density(g0 * math.exp(t), loc, scale)

    ib, _ = integrate.quad(fb, 0.0, upper, points=pts, **QUAD_OPTIONS)
    iv, _ = integrate.quad(fv, 0.0, upper, points=pts, **QUAD_OPTIONS)
    inside = float(norm.cdf((g0 - loc) / scale) - norm.cdf((-g0 - loc) / scale))
    budget = 4.0 * sigma**2 / g0 * ib
    objective = inside + g0 * iv
    return float(budget), float(min(objective, 1.0))


def budget_and_poe(prior: GaussianPrior, lam: float,
                   noise_stds: ArrayLike = 1.0) -> tuple[float, float]:
    """Budget used and objective of the KKT allocation :func:`allocation` for a given λ.

    Returns :math:`(\\int \\tilde n^*_\\lambda\\, dH,\\ \\int e^{-a\\tilde n^*_\\lambda} dH)`
    for a two-armed prior, via one-dimensional integrals over the gap. For every λ > 0 the
    allocation is optimal for (Opt2) with the budget it uses.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    lam : float
        Multiplier λ > 0.
    noise_stds : float, default 1.0

    Returns
    -------
    budget, poe : float
    """
    check_prior(prior, k=2)
    lm = V.positive(lam, "lam")
    s = V.common_noise_std(noise_stds)
    loc, scale = gap_distribution(prior)
    return _integrals(loc, scale, math.sqrt(2.0 * s**2 * lm), s)


@dataclass(frozen=True)
class Solution:
    """Solution of the relaxed problem (Opt2) for two arms (see :func:`solve`).

    Attributes
    ----------
    budget : float
        The expected budget :math:`N` (the constraint binds: :math:`\\int\\tilde n^* dH = N`).
    lam : float
        The Lagrange multiplier λ.
    indifference_gap : float
        :math:`g_0 = \\sqrt{2\\sigma^2\\lambda}`: the allocation is zero for
        :math:`|\\mu_1 - \\mu_2| \\le g_0`.
    min_expected_poe : float
        The optimal value :math:`V = \\int e^{-a\\tilde n^*} dH` of (Opt2).
    indifference_mass : float
        Prior probability :math:`P(|\\mu_1 - \\mu_2| \\le g_0)` of the indifference zone.
    noise_stds : float
        Common noise standard deviation.
    """

    budget: float
    lam: float
    indifference_gap: float
    min_expected_poe: float
    indifference_mass: float
    noise_stds: float

    def allocation(self, gap: ArrayLike) -> Union[float, np.ndarray]:
        """:math:`\\tilde n^*` at gap(s) :math:`\\mu_1 - \\mu_2` (see :func:`allocation`)."""
        return allocation(gap, self.lam, self.noise_stds)

    @property
    def poe_lower_bound(self) -> float:
        """:math:`V / 2.4` (see :func:`poe_lower_bound`)."""
        return self.min_expected_poe / KAUFMANN_CONSTANT


def _check_budget(budget) -> float:
    return V.positive(budget, "budget")


def solve(prior: GaussianPrior, budget: float, noise_stds: ArrayLike = 1.0) -> Solution:
    """Solve the relaxed lower-bound problem (Opt2) of Section 4 for two arms.

    .. math::
        V = \\inf_{\\tilde n \\ge 0} \\int e^{-\\frac{(\\mu_1-\\mu_2)^2}{2\\sigma^2}\\tilde n(\\mu)}
        \\, dH(\\mu) \\quad \\text{s.t.} \\quad \\int \\tilde n\\, dH \\le N.

    The problem is convex and separable; its KKT conditions give the allocation
    :func:`allocation` with the multiplier λ fixed by :math:`\\int\\tilde n^* dH = N`
    (the budget used is continuous and strictly decreasing in λ, from :math:`+\\infty` to
    0). Only the gap :math:`g \\sim N(m_1 - m_2, \\xi_1^2 + \\xi_2^2)` matters, so every
    integral is one-dimensional; λ is found by Brent's method on :math:`\\log\\lambda`.

    For large budgets :math:`V \\approx 8\\sigma^2 L(H)^2 / N` (see
    :func:`large_budget_poe`): the :math:`L(H)^2/\\delta` rate of Theorem 4.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budget : float
        :math:`N > 0`, finite.
    noise_stds : float, default 1.0
        Common noise standard deviation.

    Returns
    -------
    Solution
    """
    check_prior(prior, k=2)
    n = _check_budget(budget)
    s = V.common_noise_std(noise_stds)
    loc, scale = gap_distribution(prior)
    log_two_var = math.log(2.0 * s**2)

    def excess(log_lam: float) -> float:
        g0 = math.exp(0.5 * (log_two_var + log_lam))
        b, _ = _integrals(loc, scale, g0, s)
        return math.log(max(b, 1e-300)) - math.log(n)

    # bracket: the used budget decreases in λ; keep g0 = sqrt(2σ²λ) within double range
    log_lam_min = 2.0 * _LOG_G0_MIN - log_two_var
    log_lam_max = 2.0 * _LOG_G0_MAX - log_two_var
    lo = hi = 2.0 * math.log(abs(loc) + scale) - log_two_var
    f_lo = f_hi = excess(lo)
    step = math.log(10.0)
    while f_lo < 0:
        hi, f_hi = lo, f_lo
        lo -= step
        if lo < log_lam_min:
            raise ValueError(
                f"budget = {budget!r} is too large for this prior: the multiplier λ of (Opt2) "
                "underflows double precision"
            )
        f_lo = excess(lo)
    while f_hi > 0:
        lo, f_lo = hi, f_hi
        hi += step
        if hi > log_lam_max:
            raise ValueError(
                f"budget = {budget!r} is too small to be resolved in double precision"
            )
        f_hi = excess(hi)
    if f_lo == 0:
        log_lam = lo
    elif f_hi == 0:
        log_lam = hi
    else:
        log_lam = optimize.brentq(excess, lo, hi, xtol=1e-14, rtol=1e-14, maxiter=200)
    lam = math.exp(log_lam)
    g0 = math.sqrt(2.0 * s**2 * lam)
    _, v = _integrals(loc, scale, g0, s)
    mass = float(norm.cdf((g0 - loc) / scale) - norm.cdf((-g0 - loc) / scale))
    return Solution(
        budget=n, lam=lam, indifference_gap=g0, min_expected_poe=v, indifference_mass=mass, noise_stds=s
    )


class Frontier(NamedTuple):
    """Arrays of the (Opt2) frontier, see :func:`frontier`.

    Attributes
    ----------
    budgets : ndarray
        The expected budgets :math:`N`.
    min_expected_poe : ndarray
        The optimal value :math:`V` of (Opt2) at each budget.
    lam : ndarray
        The Lagrange multiplier λ at each budget.
    """

    budgets: np.ndarray
    min_expected_poe: np.ndarray
    lam: np.ndarray


def frontier(prior: GaussianPrior, budgets: ArrayLike, noise_stds: ArrayLike = 1.0) -> Frontier:
    """Minimal expected PoE of (Opt2) as a function of the expected budget.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budgets : array_like
        Budgets :math:`N > 0`.
    noise_stds : float, default 1.0

    Returns
    -------
    Frontier
        ``(budgets, min_expected_poe, lam)``, arrays of the shape of ``budgets`` (1-D).
    """
    b = np.atleast_1d(np.asarray(budgets, dtype=float))
    if b.ndim != 1:
        raise ValueError(f"budgets must be one-dimensional, got shape {b.shape}")
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"budgets must be finite and > 0, got {b.tolist()}")
    sols = [solve(prior, float(x), noise_stds) for x in b]
    return Frontier(
        budgets=b.copy(),
        min_expected_poe=np.array([z.min_expected_poe for z in sols]),
        lam=np.array([z.lam for z in sols]),
    )


def budget_for_poe(prior: GaussianPrior, target: float, noise_stds: ArrayLike = 1.0) -> float:
    """Smallest expected budget :math:`N` at which the (Opt2) optimum reaches ``target``.

    Inverts :func:`frontier`: solves :math:`V(N) = \\text{target}` by Brent's method on
    :math:`\\log N` (``V`` is continuous and decreasing in ``N``).

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    target : float
        Value of the (Opt2) objective, strictly between 0 and ``V(0) = 1``.
    noise_stds : float, default 1.0
    """
    t = V.open_unit(target, "target")

    def f(log_n: float) -> float:
        return math.log(solve(prior, math.exp(log_n), noise_stds).min_expected_poe / t)

    lo, hi = math.log(1e-6), math.log(1e3)
    while f(hi) > 0:
        hi += math.log(1e3)
        if hi > math.log(1e15):
            raise ValueError(f"target={target!r} needs a budget above 1e15")
    while f(lo) < 0:
        lo -= math.log(1e3)
        if lo < math.log(1e-15):
            raise ValueError(f"target={target!r} is reached by a budget below 1e-15")
    return float(math.exp(optimize.brentq(f, lo, hi, xtol=1e-12)))


def uniform_allocation_poe(prior: GaussianPrior, budget: float,
                           noise_stds: ArrayLike = 1.0) -> float:
    """Objective of (Opt2) for the constant allocation :math:`\\tilde n \\equiv N`.

    With :math:`g \\sim N(\\bar m, s^2)` and :math:`c = N/(2\\sigma^2)`,

    .. math::
        E[e^{-c g^2}] = \\frac{1}{\\sqrt{1 + 2cs^2}} \\exp\\left(-\\frac{c\\bar m^2}{1 + 2cs^2}\\right),

    which decays only like :math:`N^{-1/2}`, against :math:`N^{-1}` for the optimum.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budget : float
        :math:`N \\ge 0`.
    noise_stds : float, default 1.0

    Returns
    -------
    float
    """
    check_prior(prior, k=2)
    n = V.nonnegative(budget, "budget")
    s = V.common_noise_std(noise_stds)
    loc, scale = gap_distribution(prior)
    c = n / (2.0 * s**2)
    den = 1.0 + 2.0 * c * scale**2
    return float(math.exp(-c * loc**2 / den) / math.sqrt(den))


def poe_lower_bound(prior: GaussianPrior, budget: float, noise_stds: ArrayLike = 1.0) -> float:
    """PoE lower bound :math:`V/2.4` implied by (Opt2) (sketch of Theorem 4, Section 4).

    In Section 4, Eq. (modified transportation lemma) gives
    :math:`V_0 = \\int \\frac{1}{2.4} e^{-a(\\mu) E_\\mu[\\tau]} dH \\le \\mathrm{PoE}(\\pi; H)`
    (Opt1), and since :math:`\\mu \\mapsto E_\\mu[\\tau]` is feasible for (Opt2) whenever
    :math:`E_{\\mu\\sim H}[\\tau] \\le N`, :math:`V \\le 2.4 V_0 \\le 2.4\\,\\mathrm{PoE}`. Hence
    any algorithm with expected stopping time at most ``budget`` has
    :math:`\\mathrm{PoE} \\ge V/2.4`.

    Note: this follows the two-armed sketch of the main text, whose "symmetry tricks" pair
    :math:`\\mu` with its swap :math:`\\nu(\\mu)`; the rigorous appendix argument for
    general priors uses the constant :math:`1/8` instead of :math:`1/2.4`, a density-ratio
    factor :math:`e^{-4}` and a restricted region. Use this value as the quantitative
    version of the sketch, exact in spirit for exchangeable priors
    (:math:`m_1 = m_2`, :math:`\\xi_1 = \\xi_2`).

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budget : float
        :math:`N > 0`.
    noise_stds : float, default 1.0

    Returns
    -------
    float
    """
    return solve(prior, budget, noise_stds).min_expected_poe / KAUFMANN_CONSTANT


def large_budget_poe(prior: GaussianPrior, budget: float, noise_stds: ArrayLike = 1.0) -> float:
    """Large-budget asymptote :math:`8\\sigma^2 L(H)^2 / N` of the (Opt2) value.

    For small :math:`g_0`, the budget used is :math:`\\approx 4\\sigma^2 f(0)/g_0` and the
    objective :math:`\\approx 2 g_0 f(0)`, where :math:`f(0) = 2h_g(0) = L(H)` is the density
    of :math:`|\\mu_1 - \\mu_2|` at 0; eliminating :math:`g_0` gives the formula.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budget : float
        :math:`N > 0`.
    noise_stds : float, default 1.0

    Returns
    -------
    float
    """
    check_prior(prior, k=2)
    n = _check_budget(budget)
    s = V.common_noise_std(noise_stds)
    loc, scale = gap_distribution(prior)
    L = 2.0 * float(norm.pdf(0.0, loc, scale))
    return 8.0 * s**2 * L**2 / n
