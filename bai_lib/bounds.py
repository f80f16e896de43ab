"""Lower and upper bounds on the expected stopping time, and the relaxed problem (Opt2).

This is part of the *math layer* of :mod:`bai_lib`. It implements, for Gaussian arms
and independent Gaussian priors :math:`H_i = N(m_i, \\xi_i^2)`, the quantities of
Jang, Komiyama and Yamazaki, *Fixed Confidence Best Arm Identification in the Bayesian
Setting* (NeurIPS 2024):

* the Bernoulli divergence :math:`d(a, b)` (Section 2), :func:`bernoulli_kl`;
* the frequentist two-armed lower bound of Corollary 1 (Section 3),
  :func:`frequentist_lower_bound`, and its prior average restricted to
  :math:`|\\mu_1 - \\mu_2| \\ge \\varepsilon`, which grows like :math:`1/\\varepsilon`
  (the argument of Section 3.1 behind Theorem 1), :func:`truncated_bayes_lower_bound`;
* the Bayesian lower bound of Theorem 2 (Section 4), :func:`N_V`, together with the
  "sufficiently small δ" threshold :math:`\\delta_L(H)` of Appendix "Sufficiently small δ",
  :func:`delta_L`;
* the leading term of the upper bound of Theorem 3 (Section 5) and its hypothesis on δ,
  :func:`theorem3_upper_bound`, :func:`theorem3_condition`;
* the relaxed optimisation problem (Opt2) of Section 4 for two arms with a common noise
  level, solved exactly through its KKT conditions and one-dimensional integrals,
  :func:`solve_opt2` and friends.

Notation: ``gap`` is :math:`\\mu_1 - \\mu_2`; ``sigma`` is a noise *standard deviation*
(the arms are :math:`N(\\mu_i, \\sigma_i^2)`); ``noise_stds`` is one such value per arm (or a
scalar shared by all arms); ``delta`` is the confidence level δ.

For two arms the gap :math:`g = \\mu_1 - \\mu_2` is, under the prior,
:math:`N(m_1 - m_2, \\xi_1^2 + \\xi_2^2)`; its density at zero is
:math:`h_g(0) = L(H)/2` (Definition 1 sums over the two ordered pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple, Union

import numpy as np
from scipy import integrate, optimize, special
from scipy.stats import norm

from .priors import GaussianPrior

__all__ = [
    "opt2_budget_for_poe",
    "bernoulli_kl",
    "frequentist_lower_bound",
    "truncated_bayes_lower_bound",
    "gap_distribution",
    "N_V",
    "d0_threshold",
    "d0_printed",
    "d1_threshold",
    "delta_L",
    "THEOREM3_C",
    "theorem3_upper_bound",
    "theorem3_delta_threshold",
    "theorem3_condition",
    "KAUFMANN_CONSTANT",
    "opt2_allocation",
    "opt2_budget_and_poe",
    "Opt2Solution",
    "solve_opt2",
    "Opt2Frontier",
    "opt2_frontier",
    "uniform_allocation_poe",
    "opt2_poe_lower_bound",
    "opt2_large_budget_poe",
]

ArrayLike = Union[float, np.ndarray, list, tuple]

#: The constant 2.4 of :math:`d(\\delta, 1-\\delta) \\ge \\log(1/(2.4\\delta))`
#: (Eq. (3) of Kaufmann, Cappé and Garivier, 2016), used in Corollary 1 and Section 4.
KAUFMANN_CONSTANT = 2.4

#: The universal constant :math:`C = 320(\\pi^2/3 + 1)` of Theorem 3.
THEOREM3_C = 320.0 * (math.pi**2 / 3.0 + 1.0)

_QUAD = dict(epsabs=0.0, epsrel=1e-11, limit=500)

# range of log g0 (indifference gap) handled by solve_opt2
_LOG_G0_MIN = -700.0
_LOG_G0_MAX = 300.0


# ----------------------------------------------------------------------------- helpers
def _scalar_or_array(x: np.ndarray, like) -> Union[float, np.ndarray]:
    """Return a Python float when the input ``like`` was a scalar, else the array."""
    return float(x) if np.ndim(like) == 0 else x


def _check_prior(prior) -> GaussianPrior:
    if not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    return prior


def _check_two_arm_prior(prior) -> GaussianPrior:
    _check_prior(prior)
    if prior.k != 2:
        raise ValueError(f"prior must have k = 2 arms for this bound, got k = {prior.k}")
    return prior


def _check_delta(delta) -> float:
    try:
        d = float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"delta must be a number in (0, 1), got {delta!r}") from None
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    return d


def _check_positive(x, name: str, *, allow_zero: bool = False) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {x!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        cond = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be a finite number {cond}, got {x!r}")
    return v


def _noise_stds(noise_stds, k: int) -> np.ndarray:
    arr = np.asarray(noise_stds, dtype=float)
    if arr.ndim == 0:
        arr = np.full(k, float(arr))
    if arr.ndim != 1 or arr.size != k:
        raise ValueError(
            f"noise_stds must be a scalar or a sequence of length k = {k}, got shape {arr.shape}"
        )
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"noise_stds must be finite and > 0, got {arr.tolist()}")
    return arr


def _check_form(form: str) -> str:
    if form not in ("kl", "log"):
        raise ValueError(f"form must be 'kl' or 'log', got {form!r}")
    return form


def gap_distribution(prior: GaussianPrior) -> tuple[float, float]:
    """Location and scale of the prior law of the gap :math:`g = \\mu_1 - \\mu_2` (k = 2).

    Under independent priors :math:`H_i = N(m_i, \\xi_i^2)`,
    :math:`g \\sim N(m_1 - m_2, \\xi_1^2 + \\xi_2^2)`.

    Parameters
    ----------
    prior : GaussianPrior
        A two-armed prior.

    Returns
    -------
    loc, scale : float
        :math:`m_1 - m_2` and :math:`\\sqrt{\\xi_1^2 + \\xi_2^2}`.
    """
    _check_two_arm_prior(prior)
    m, s = prior.means, prior.stds
    return float(m[0] - m[1]), float(math.hypot(s[0], s[1]))


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _abs_gap_density(x: float, loc: float, scale: float) -> float:
    """Density of :math:`|g|` at a scalar ``x >= 0``: :math:`h_g(x) + h_g(-x)`."""
    zp = (x - loc) / scale
    zm = (x + loc) / scale
    return (math.exp(-0.5 * zp * zp) + math.exp(-0.5 * zm * zm)) * _INV_SQRT_2PI / scale


# ------------------------------------------------------------------- Section 2
def bernoulli_kl(a: ArrayLike, b: ArrayLike) -> Union[float, np.ndarray]:
    """Bernoulli Kullback–Leibler divergence :math:`d(a, b)` (Section 2).

    .. math:: d(a, b) = a \\log\\frac{a}{b} + (1 - a) \\log\\frac{1 - a}{1 - b},

    with the convention :math:`0 \\log 0 = 0` (so :math:`d(0, b) = -\\log(1 - b)`) and
    :math:`d(a, b) = +\\infty` when ``b`` is 0 or 1 and ``a != b``. Broadcasts over
    ``a`` and ``b``.

    Parameters
    ----------
    a, b : float or array_like
        Means of the two Bernoulli distributions, in ``[0, 1]``.

    Returns
    -------
    float or numpy.ndarray
        A float if both inputs are scalars, otherwise an array.

    Raises
    ------
    ValueError
        If a value of ``a`` or ``b`` is non-finite or outside ``[0, 1]``.

    Examples
    --------
    >>> round(bernoulli_kl(0.5, 0.25), 6)
    0.143841
    """
    aa = np.asarray(a, dtype=float)
    bb = np.asarray(b, dtype=float)
    for arr, name in ((aa, "a"), (bb, "b")):
        if not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
            raise ValueError(f"{name} must lie in [0, 1], got {arr.tolist()}")
    out = special.rel_entr(aa, bb) + special.rel_entr(1.0 - aa, 1.0 - bb)
    out = np.maximum(out, 0.0)  # remove rounding below zero when a ≈ b
    return _scalar_or_array(out, aa + bb)


# ------------------------------------------------------------------- Section 3
def _corollary1_numerator(delta: float, form: str) -> float:
    """:math:`d(\\delta, 1-\\delta)` or :math:`\\log(1/(2.4\\delta))`, clipped to be valid.

    Both expressions are lower bounds on ``E[τ] Δ²`` only for ``δ < 1/2``: for
    ``δ >= 1/2`` guessing without sampling is δ-correct, so the bound is 0.
    ``log(1/(2.4δ))`` is negative for ``δ > 1/2.4`` and is clipped at 0.
    """
    if delta >= 0.5:
        return 0.0
    if form == "kl":
        return float(bernoulli_kl(delta, 1.0 - delta))
    return max(0.0, math.log(1.0 / (KAUFMANN_CONSTANT * delta)))


def frequentist_lower_bound(
    gap: ArrayLike,
    delta: float,
    sigma: float = 1.0,
    *,
    form: Literal["kl", "log"] = "kl",
    constant: float = 1.0,
) -> Union[float, np.ndarray]:
    """Corollary 1: lower bound on :math:`E_\\mu[\\tau]` for frequentist δ-correct algorithms.

    For two Gaussian arms with common noise standard deviation σ and gap
    :math:`\\Delta = |\\mu_1 - \\mu_2|`,

    .. math::
        E_\\mu[\\tau] \\ \\ge\\ c\\, \\sigma^2 \\frac{d(\\delta, 1-\\delta)}{\\Delta^2}
        \\ \\ge\\ c\\, \\sigma^2 \\frac{\\log(1/(2.4\\delta))}{\\Delta^2}.

    With ``constant`` :math:`c = 1` and σ = 1 this is exactly Corollary 1 as printed.

    **How σ enters.** The problem with noise σ and gap Δ is the problem with noise 1 and
    gap Δ/σ (rescale all observations by 1/σ), so any bound of the form
    :math:`K/\\Delta^2` at σ = 1 becomes :math:`K\\sigma^2/\\Delta^2`. Equivalently, from the
    transportation lemma (Lemma 2) with :math:`\\mathrm{KL}_i(a, b) = (a-b)^2/(2\\sigma^2)`
    for both arms: swapping the means (the alternative :math:`\\nu(\\mu)` of Section 4)
    gives :math:`E_\\mu[\\tau]\\,\\Delta^2/(2\\sigma^2) \\ge d(\\delta, 1-\\delta)`, i.e.
    :math:`c = 2`; optimising over the alternative (both means moved to a common point,
    worst allocation 1/2–1/2) gives the sharp two-armed constant :math:`c = 8`
    (Kaufmann, Cappé and Garivier, 2016). Corollary 1's :math:`c = 1` is therefore a valid,
    slightly conservative statement; pass ``constant=2`` or ``8`` for the sharper forms.

    Parameters
    ----------
    gap : float or array_like
        :math:`|\\mu_1 - \\mu_2| > 0` (finite). Vectorised.
    delta : float
        Confidence level in (0, 1). For ``δ >= 1/2`` the bound is 0 (an algorithm that
        guesses without sampling is then δ-correct); Corollary 1 is meaningful for δ < 1/2.
    sigma : float, default 1.0
        Common noise standard deviation σ > 0.
    form : {"kl", "log"}, default "kl"
        ``"kl"`` uses :math:`d(\\delta, 1-\\delta)`; ``"log"`` the weaker
        :math:`\\log(1/(2.4\\delta))` (clipped at 0 for δ > 1/2.4).
    constant : float, default 1.0
        Multiplicative constant ``c > 0`` (1: Corollary 1 as printed).

    Returns
    -------
    float or numpy.ndarray
        The bound, with the shape of ``gap``.

    Raises
    ------
    ValueError
        If ``gap`` is not finite and positive, ``delta`` is not in (0, 1), ``sigma`` or
        ``constant`` is not positive, or ``form`` is unknown.
    """
    g = np.asarray(gap, dtype=float)
    if not np.all(np.isfinite(g)) or np.any(g <= 0):
        raise ValueError(f"gap must be finite and > 0, got {g.tolist()}")
    d = _check_delta(delta)
    s = _check_positive(sigma, "sigma")
    c = _check_positive(constant, "constant")
    _check_form(form)
    out = c * s**2 * _corollary1_numerator(d, form) / g**2
    return _scalar_or_array(out, gap)


def _inverse_square_mass(loc: float, scale: float, cutoff: float) -> float:
    """:math:`\\int_{|g| \\ge \\varepsilon} h_g(g)/g^2\\, dg` for :math:`g \\sim N(loc, scale^2)`.

    Both tails are folded onto :math:`x = |g| \\ge \\varepsilon` and the substitution
    :math:`u = 1/x` turns the singular integrand into the bounded
    :math:`h_g(1/u) + h_g(-1/u)` on :math:`[0, 1/\\varepsilon]`.
    """
    upper = 1.0 / cutoff

    def f(u):
        if u == 0.0:
            return 0.0
        return _abs_gap_density(1.0 / u, loc, scale)

    # the mode of |g| sits near |loc|; give quad the matching u-locations
    pts = []
    for kk in (-3.0, -1.0, 0.0, 1.0, 3.0):
        x = abs(loc) + kk * scale
        if x > 0 and 0.0 < 1.0 / x < upper:
            pts.append(1.0 / x)
    x0 = 0.25 * scale  # beyond this u the integrand is essentially constant
    if 0.0 < 1.0 / x0 < upper:
        pts.append(1.0 / x0)
    pts = sorted(set(pts))
    val, _ = integrate.quad(f, 0.0, upper, points=pts or None, **_QUAD)
    return float(val)


def truncated_bayes_lower_bound(
    prior: GaussianPrior,
    delta: float,
    cutoff: float,
    sigma: float = 1.0,
    *,
    form: Literal["kl", "log"] = "kl",
    constant: float = 1.0,
) -> float:
    """Prior average of Corollary 1 on :math:`\\{|\\mu_1 - \\mu_2| \\ge \\varepsilon\\}` (Section 3).

    For a frequentist δ-correct algorithm and a two-armed prior,

    .. math::
        E_{\\mu\\sim H}[\\tau] \\ \\ge\\ \\int_{|g| \\ge \\varepsilon}
        c\\,\\sigma^2 \\frac{d(\\delta, 1-\\delta)}{g^2}\\, h_g(g)\\, dg,
        \\qquad g = \\mu_1 - \\mu_2 \\sim N(m_1 - m_2, \\xi_1^2 + \\xi_2^2),

    (see :func:`frequentist_lower_bound` for ``form``, ``constant`` and the role of σ).
    As :math:`\\varepsilon \\to 0` the right-hand side behaves like
    :math:`2 h_g(0)\\, c\\,\\sigma^2 d(\\delta,1-\\delta)/\\varepsilon
    = L(H)\\, c\\,\\sigma^2 d(\\delta,1-\\delta)/\\varepsilon` (the odd part of :math:`h_g`
    cancels, so the remainder is O(1)); it diverges, which is Theorem 1 for k = 2.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    delta : float
        Confidence level in (0, 1).
    cutoff : float
        :math:`\\varepsilon > 0` (finite).
    sigma : float, default 1.0
        Common noise standard deviation.
    form : {"kl", "log"}, default "kl"
    constant : float, default 1.0

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On a prior with ``k != 2``, ``delta`` outside (0, 1), non-positive or non-finite
        ``cutoff``, ``sigma`` or ``constant``, or an unknown ``form``.
    """
    _check_two_arm_prior(prior)
    d = _check_delta(delta)
    eps = _check_positive(cutoff, "cutoff")
    s = _check_positive(sigma, "sigma")
    c = _check_positive(constant, "constant")
    _check_form(form)
    loc, scale = gap_distribution(prior)
    return c * s**2 * _corollary1_numerator(d, form) * _inverse_square_mass(loc, scale, eps)


# ------------------------------------------------------------------- Section 4
def N_V(
    prior: GaussianPrior,
    delta: float,
    noise_stds: ArrayLike = 1.0,
    *,
    convention: Literal["printed", "variance"] = "printed",
) -> float:
    """The budget :math:`N_V` of Theorem 2 (Bayesian lower bound).

    Theorem 2 defines :math:`\\sigma_{\\min} = \\min_i \\sigma_i^2` and

    .. math:: N_V = \\frac{L(H)^2\\, \\sigma_{\\min}^2 \\ln 2}{16 e^4 \\delta};

    for δ below :math:`\\delta_L(H)` (:func:`delta_L`) every algorithm with
    :math:`E_{\\mu\\sim H}[\\tau] \\le N_V` has :math:`\\mathrm{PoE} \\ge \\delta`.

    Remark on :math:`\\sigma_{\\min}`: since :math:`\\sigma_{\\min}` is already a variance,
    the printed :math:`\\sigma_{\\min}^2` is :math:`\\min_i \\sigma_i^4`
    (``convention="printed"``, the default, reproduces this literally). The proof in the
    appendix (last display of the proof of Theorem 2) carries :math:`\\min_s \\sigma_s^2`
    to the first power, which is also what dimensional analysis requires (KL divergences
    scale as :math:`\\Delta^2/\\sigma^2`); ``convention="variance"`` uses
    :math:`\\min_i \\sigma_i^2`. The two agree when :math:`\\min_i \\sigma_i = 1`.

    Parameters
    ----------
    prior : GaussianPrior
    delta : float
        Confidence level in (0, 1).
    noise_stds : float or array_like, default 1.0
        Noise standard deviations :math:`\\sigma_i > 0` (scalar: shared by all arms).
    convention : {"printed", "variance"}, default "printed"
        Power of the smallest noise variance, see above.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On bad ``prior``, ``delta``, ``noise_stds`` or ``convention``.
    """
    _check_prior(prior)
    d = _check_delta(delta)
    sig = _noise_stds(noise_stds, prior.k)
    sigma_min = float(np.min(sig**2))  # the paper's σ_min (a variance)
    if convention == "printed":
        factor = sigma_min**2
    elif convention == "variance":
        factor = sigma_min
    else:
        raise ValueError(f"convention must be 'printed' or 'variance', got {convention!r}")
    L = prior.L()
    return L**2 * factor * math.log(2.0) / (16.0 * math.e**4 * d)


def _d0_log_margin(log_delta: float, xi: np.ndarray) -> float:
    """min over i != j of log LHS − log RHS of the D0 condition, at Δ = exp(log_delta)."""
    k = xi.size
    inv = math.exp(-log_delta) / 8.0  # 1/(8Δ)
    worst = math.inf
    for i in range(k):
        for j in range(k):
            if i == j:
                continue
            lhs = 2.0 * log_delta - math.log(xi[i])
            rhs = math.log(2.0) + float(np.logaddexp(-inv / xi[i] ** 2, -inv / xi[j] ** 2))
            worst = min(worst, lhs - rhs)
    return worst


def d0_threshold(prior: GaussianPrior) -> float:
    """:math:`D_0(H)`: the range of Δ on which the tail condition of the volume lemma holds.

    The lower-bound part of the formal volume lemma (Appendix, proof of Lemma 1) needs,
    for all ordered pairs :math:`i \\ne j`,

    .. math:: \\frac{\\Delta^2}{\\xi_i} > 2 e^{-1/(8\\Delta\\xi_i^2)} + 2 e^{-1/(8\\Delta\\xi_j^2)},

    and Appendix "Sufficiently small δ" states that :math:`\\Delta < D_0(H)` suffices. This
    function returns the largest :math:`D \\le 1` such that the condition holds for every
    :math:`\\Delta \\in (0, D)`, computed numerically (log-space grid scan and Brent's
    method). The closed form printed in the paper, see :func:`d0_printed`, is negative
    whenever its Lambert-W branch applies, so it cannot be used as a threshold; this
    function implements the condition the threshold is meant to guarantee.

    Parameters
    ----------
    prior : GaussianPrior

    Returns
    -------
    float
        :math:`D_0(H) \\in (0, 1]`.
    """
    _check_prior(prior)
    xi = np.asarray(prior.stds, dtype=float)
    grid = np.linspace(-700.0, 0.0, 7001)
    prev = None
    for t in grid:
        if _d0_log_margin(t, xi) <= 0.0:
            if prev is None:  # condition fails even at Δ = e^-700
                return math.exp(grid[0])
            root = optimize.brentq(lambda u: _d0_log_margin(u, xi), prev, t, xtol=1e-13)
            return float(math.exp(root))
        prev = t
    return 1.0


def d0_printed(prior: GaussianPrior) -> float:
    """:math:`D_0(H)` exactly as printed in Appendix "Sufficiently small δ".

    .. math::
        D_0(H) = W\\!\\left(-\\frac{1}{32 \\max_i \\xi_i^{3/2}}\\right)
        \\text{ if } \\max_i \\xi_i > (e^2/2^{10})^{1/3}, \\quad 1 \\text{ otherwise},

    with the principal branch :math:`W_0` of the Lambert W function. On
    :math:`(-1/e, 0)`, :math:`W_0` takes values in :math:`(-1, 0)`, so the first case is
    negative; kept for reference only — :func:`delta_L` uses :func:`d0_threshold`.

    Parameters
    ----------
    prior : GaussianPrior

    Returns
    -------
    float
    """
    _check_prior(prior)
    xi_max = float(np.max(prior.stds))
    if xi_max > (math.e**2 / 2.0**10) ** (1.0 / 3.0):
        return float(special.lambertw(-1.0 / (32.0 * xi_max**1.5), k=0).real)
    return 1.0


def d1_threshold(prior: GaussianPrior, stds: ArrayLike) -> float:
    """:math:`D_1(H)` of the ratio lemma (Lemma 4 in the appendix on the lower bound).

    .. math::
        D_1 = \\min_{i \\ne j} \\min\\left\\{ \\left|\\frac{m_i}{s_i^2} - \\frac{m_j}{s_j^2}\\right|^{-1},
        \\left(\\frac{1}{2 s_i^2} + \\frac{1}{2 s_j^2}\\right)^{-2} \\right\\},

    where the paper writes :math:`s_i = \\sigma_i`. The ratio lemma bounds
    :math:`h_i(a) h_j(b) / (h_i(b) h_j(a))`, a ratio of *prior* densities, whose proof
    expands :math:`h_i` with variance :math:`\\sigma_i^2`; the consistent reading is
    therefore :math:`s_i = \\xi_i`. The caller chooses (see :func:`delta_L`). A first term
    with :math:`m_i/s_i^2 = m_j/s_j^2` is :math:`+\\infty`.

    Parameters
    ----------
    prior : GaussianPrior
    stds : float or array_like
        The scales :math:`s_i > 0` (scalar: shared).

    Returns
    -------
    float
    """
    _check_prior(prior)
    s = _noise_stds(stds, prior.k)
    m = prior.means
    best = math.inf
    for i in range(prior.k):
        for j in range(prior.k):
            if i == j:
                continue
            diff = abs(m[i] / s[i] ** 2 - m[j] / s[j] ** 2)
            first = math.inf if diff == 0 else 1.0 / diff
            second = (1.0 / (2 * s[i] ** 2) + 1.0 / (2 * s[j] ** 2)) ** -2
            best = min(best, first, second)
    return float(best)


def delta_L(
    prior: GaussianPrior,
    noise_stds: ArrayLike | None = None,
    *,
    ratio_lemma_stds: Literal["prior", "noise"] = "prior",
) -> float:
    """The "sufficiently small δ" threshold :math:`\\delta_L(H)` of Theorem 2.

    Appendix "Sufficiently small δ":

    .. math::
        \\delta_L = \\frac{L(H)}{32 e^4} \\min\\left( D_0(H),\\ D_1(H),\\
        \\min_i \\frac{1}{4 m_i^2},\\ \\frac{L(H)}{4(k-1)\\sum_i 1/\\xi_i} \\right),

    which makes :math:`\\tilde\\Delta = 32 e^4 \\delta / L(H)` small enough for the
    volume lemma (lower-bound part) and the ratio lemma. Readings adopted:

    * :math:`D_0` is computed from the condition it must guarantee
      (:func:`d0_threshold`), since the printed Lambert-W expression
      (:func:`d0_printed`) is negative;
    * :math:`D_1` is evaluated with the prior standard deviations :math:`\\xi_i` by
      default (the ratio lemma is about prior densities); ``ratio_lemma_stds="noise"``
      uses ``noise_stds`` as printed (:math:`\\sigma_i`);
    * a term :math:`1/(4 m_i^2)` with :math:`m_i = 0` is :math:`+\\infty`.

    Parameters
    ----------
    prior : GaussianPrior
    noise_stds : float or array_like, optional
        Noise standard deviations; only used (and then required) with
        ``ratio_lemma_stds="noise"``.
    ratio_lemma_stds : {"prior", "noise"}, default "prior"

    Returns
    -------
    float
    """
    _check_prior(prior)
    if ratio_lemma_stds == "prior":
        d1 = d1_threshold(prior, prior.stds)
    elif ratio_lemma_stds == "noise":
        if noise_stds is None:
            raise ValueError("noise_stds is required when ratio_lemma_stds='noise'")
        d1 = d1_threshold(prior, noise_stds)
    else:
        raise ValueError(f"ratio_lemma_stds must be 'prior' or 'noise', got {ratio_lemma_stds!r}")
    L = prior.L()
    m2 = float(np.max(prior.means**2))
    mean_term = math.inf if m2 == 0 else 1.0 / (4.0 * m2)
    vol_term = L / (4.0 * (prior.k - 1) * float(np.sum(1.0 / prior.stds)))
    return L / (32.0 * math.e**4) * min(d0_threshold(prior), d1, mean_term, vol_term)


# ------------------------------------------------------------------- Section 5
def theorem3_upper_bound(prior: GaussianPrior, delta: float, noise_stds: ArrayLike = 1.0) -> float:
    """Leading term of the upper bound of Theorem 3 (Algorithm 1).

    .. math::
        C\\,\\sigma_{\\max}^2 \\frac{L(H)^2}{\\delta} \\log\\frac{L(H)}{\\delta},
        \\qquad C = 320\\left(\\frac{\\pi^2}{3} + 1\\right),\\quad
        \\sigma_{\\max} = \\max_i \\sigma_i.

    The theorem adds an :math:`O(\\log \\delta^{-1})` term (prior-dependent) that is not
    included, and assumes :func:`theorem3_condition`; neither is enforced here.

    Parameters
    ----------
    prior : GaussianPrior
    delta : float
        Confidence level in (0, 1).
    noise_stds : float or array_like, default 1.0
        Noise standard deviations :math:`\\sigma_i > 0` (scalar: shared).

    Returns
    -------
    float
    """
    _check_prior(prior)
    d = _check_delta(delta)
    sig = _noise_stds(noise_stds, prior.k)
    L = prior.L()
    return THEOREM3_C * float(np.max(sig)) ** 2 * L**2 / d * math.log(L / d)


def theorem3_delta_threshold(prior: GaussianPrior) -> float:
    """Right-hand side of the hypothesis of Theorem 3.

    .. math::
        4 L(H) \\min\\left( \\frac{L(H)}{\\sum_i (k-1)/\\xi_i},\\
        \\Big(\\min_{i \\ne j} \\xi_i L_{ij}(H)\\Big)^2 \\right).

    The theorem writes :math:`\\min_{i,j\\in[k]}`; :math:`L_{ii}` is undefined, so the
    minimum is over ordered pairs :math:`i \\ne j` as in the appendix.
    """
    _check_prior(prior)
    L = prior.L()
    Lm = np.asarray(prior.L_matrix())
    xi = prior.stds
    k = prior.k
    pair = min(xi[i] * Lm[i, j] for i in range(k) for j in range(k) if i != j)
    return 4.0 * L * min(L / float(np.sum((k - 1) / xi)), float(pair) ** 2)


def theorem3_condition(prior: GaussianPrior, delta: float) -> bool:
    """Whether δ satisfies the hypothesis of Theorem 3 (see :func:`theorem3_delta_threshold`)."""
    d = _check_delta(delta)
    return bool(d < theorem3_delta_threshold(prior))


# ------------------------------------------------------------------- (Opt2)
def opt2_allocation(gap: ArrayLike, lam: float, sigma: float = 1.0) -> Union[float, np.ndarray]:
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
    sigma : float, default 1.0
        Common noise standard deviation.

    Returns
    -------
    float or numpy.ndarray
    """
    g = np.asarray(gap, dtype=float)
    if not np.all(np.isfinite(g)):
        raise ValueError(f"gap must be finite, got {g.tolist()}")
    lm = _check_positive(lam, "lam")
    s = _check_positive(sigma, "sigma")
    a = g**2 / (2.0 * s**2)
    out = np.zeros_like(a)
    pos = a > lm
    out[pos] = np.log(a[pos] / lm) / a[pos]
    return _scalar_or_array(out, gap)


def _opt2_integrals(loc: float, scale: float, g0: float, sigma: float) -> tuple[float, float]:
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
        return t * math.exp(-t) * _abs_gap_density(g0 * math.exp(t), loc, scale)

    def fv(t):
        return math.exp(-t) * _abs_gap_density(g0 * math.exp(t), loc, scale)

    ib, _ = integrate.quad(fb, 0.0, upper, points=pts, **_QUAD)
    iv, _ = integrate.quad(fv, 0.0, upper, points=pts, **_QUAD)
    inside = float(norm.cdf((g0 - loc) / scale) - norm.cdf((-g0 - loc) / scale))
    budget = 4.0 * sigma**2 / g0 * ib
    objective = inside + g0 * iv
    return float(budget), float(min(objective, 1.0))


def opt2_budget_and_poe(prior: GaussianPrior, lam: float, sigma: float = 1.0) -> tuple[float, float]:
    """Budget used and objective of the KKT allocation :func:`opt2_allocation` for a given λ.

    Returns :math:`(\\int \\tilde n^*_\\lambda\\, dH,\\ \\int e^{-a\\tilde n^*_\\lambda} dH)`
    for a two-armed prior, via one-dimensional integrals over the gap. For every λ > 0 the
    allocation is optimal for (Opt2) with the budget it uses.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    lam : float
        Multiplier λ > 0.
    sigma : float, default 1.0

    Returns
    -------
    budget, poe : float
    """
    _check_two_arm_prior(prior)
    lm = _check_positive(lam, "lam")
    s = _check_positive(sigma, "sigma")
    loc, scale = gap_distribution(prior)
    return _opt2_integrals(loc, scale, math.sqrt(2.0 * s**2 * lm), s)


@dataclass(frozen=True)
class Opt2Solution:
    """Solution of the relaxed problem (Opt2) for two arms (see :func:`solve_opt2`).

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
    sigma : float
        Common noise standard deviation.
    """

    budget: float
    lam: float
    indifference_gap: float
    min_expected_poe: float
    indifference_mass: float
    sigma: float

    def allocation(self, gap: ArrayLike) -> Union[float, np.ndarray]:
        """:math:`\\tilde n^*` at gap(s) :math:`\\mu_1 - \\mu_2` (see :func:`opt2_allocation`)."""
        return opt2_allocation(gap, self.lam, self.sigma)

    @property
    def poe_lower_bound(self) -> float:
        """:math:`V / 2.4` (see :func:`opt2_poe_lower_bound`)."""
        return self.min_expected_poe / KAUFMANN_CONSTANT


def _check_budget(budget) -> float:
    return _check_positive(budget, "budget")


def solve_opt2(prior: GaussianPrior, budget: float, sigma: float = 1.0) -> Opt2Solution:
    """Solve the relaxed lower-bound problem (Opt2) of Section 4 for two arms.

    .. math::
        V = \\inf_{\\tilde n \\ge 0} \\int e^{-\\frac{(\\mu_1-\\mu_2)^2}{2\\sigma^2}\\tilde n(\\mu)}
        \\, dH(\\mu) \\quad \\text{s.t.} \\quad \\int \\tilde n\\, dH \\le N.

    The problem is convex and separable; its KKT conditions give the allocation
    :func:`opt2_allocation` with the multiplier λ fixed by :math:`\\int\\tilde n^* dH = N`
    (the budget used is continuous and strictly decreasing in λ, from :math:`+\\infty` to
    0). Only the gap :math:`g \\sim N(m_1 - m_2, \\xi_1^2 + \\xi_2^2)` matters, so every
    integral is one-dimensional; λ is found by Brent's method on :math:`\\log\\lambda`.

    For large budgets :math:`V \\approx 8\\sigma^2 L(H)^2 / N` (see
    :func:`opt2_large_budget_poe`): the :math:`L(H)^2/\\delta` rate of Theorem 2.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budget : float
        :math:`N > 0`, finite.
    sigma : float, default 1.0
        Common noise standard deviation.

    Returns
    -------
    Opt2Solution
    """
    _check_two_arm_prior(prior)
    n = _check_budget(budget)
    s = _check_positive(sigma, "sigma")
    loc, scale = gap_distribution(prior)
    log_two_var = math.log(2.0 * s**2)

    def excess(log_lam: float) -> float:
        g0 = math.exp(0.5 * (log_two_var + log_lam))
        b, _ = _opt2_integrals(loc, scale, g0, s)
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
    _, v = _opt2_integrals(loc, scale, g0, s)
    mass = float(norm.cdf((g0 - loc) / scale) - norm.cdf((-g0 - loc) / scale))
    return Opt2Solution(
        budget=n, lam=lam, indifference_gap=g0, min_expected_poe=v, indifference_mass=mass, sigma=s
    )


class Opt2Frontier(NamedTuple):
    """Arrays of the (Opt2) frontier, see :func:`opt2_frontier`."""

    budgets: np.ndarray
    min_expected_poe: np.ndarray
    lam: np.ndarray


def opt2_frontier(prior: GaussianPrior, budgets: ArrayLike, sigma: float = 1.0) -> Opt2Frontier:
    """Minimal expected PoE of (Opt2) as a function of the expected budget.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    budgets : array_like
        Budgets :math:`N > 0`.
    sigma : float, default 1.0

    Returns
    -------
    Opt2Frontier
        ``(budgets, min_expected_poe, lam)``, arrays of the shape of ``budgets`` (1-D).
    """
    b = np.atleast_1d(np.asarray(budgets, dtype=float))
    if b.ndim != 1:
        raise ValueError(f"budgets must be one-dimensional, got shape {b.shape}")
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"budgets must be finite and > 0, got {b.tolist()}")
    sols = [solve_opt2(prior, float(x), sigma) for x in b]
    return Opt2Frontier(
        budgets=b.copy(),
        min_expected_poe=np.array([z.min_expected_poe for z in sols]),
        lam=np.array([z.lam for z in sols]),
    )


def opt2_budget_for_poe(prior: GaussianPrior, target: float, sigma: float = 1.0) -> float:
    """Smallest expected budget :math:`N` at which the (Opt2) optimum reaches ``target``.

    Inverts :func:`opt2_frontier`: solves :math:`V(N) = \\text{target}` by Brent's method on
    :math:`\\log N` (``V`` is continuous and decreasing in ``N``).

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    target : float
        Value of the (Opt2) objective, strictly between 0 and ``V(0) = 1``.
    sigma : float, default 1.0
    """
    t = float(target)
    if not (math.isfinite(t) and 0.0 < t < 1.0):
        raise ValueError(f"target must lie in (0, 1), got {target!r}")

    def f(log_n: float) -> float:
        return math.log(solve_opt2(prior, math.exp(log_n), sigma).min_expected_poe / t)

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


def uniform_allocation_poe(prior: GaussianPrior, budget: float, sigma: float = 1.0) -> float:
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
    sigma : float, default 1.0

    Returns
    -------
    float
    """
    _check_two_arm_prior(prior)
    n = _check_positive(budget, "budget", allow_zero=True)
    s = _check_positive(sigma, "sigma")
    loc, scale = gap_distribution(prior)
    c = n / (2.0 * s**2)
    den = 1.0 + 2.0 * c * scale**2
    return float(math.exp(-c * loc**2 / den) / math.sqrt(den))


def opt2_poe_lower_bound(prior: GaussianPrior, budget: float, sigma: float = 1.0) -> float:
    """PoE lower bound :math:`V/2.4` implied by (Opt2) (sketch of Theorem 2, Section 4).

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
    sigma : float, default 1.0

    Returns
    -------
    float
    """
    return solve_opt2(prior, budget, sigma).min_expected_poe / KAUFMANN_CONSTANT


def opt2_large_budget_poe(prior: GaussianPrior, budget: float, sigma: float = 1.0) -> float:
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
    sigma : float, default 1.0

    Returns
    -------
    float
    """
    _check_two_arm_prior(prior)
    n = _check_budget(budget)
    s = _check_positive(sigma, "sigma")
    loc, scale = gap_distribution(prior)
    L = 2.0 * float(norm.pdf(0.0, loc, scale))
    return 8.0 * s**2 * L**2 / n
