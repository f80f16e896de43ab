"""Lower and upper bounds on the expected stopping time.

This is part of the *math layer* of :mod:`bai_lib`. It implements, for Gaussian arms
and independent Gaussian priors :math:`H_i = N(m_i, \\xi_i^2)`, the quantities of
Jang, Komiyama and Yamazaki, *Fixed Confidence Best Arm Identification in the Bayesian
Setting* (NeurIPS 2024):

* the Bernoulli divergence :math:`d(a, b)` (Section 2), :func:`bernoulli_kl`;
* the frequentist two-armed lower bound of Corollary 3 (Section 3),
  :func:`frequentist_lower_bound`, and its prior average restricted to
  :math:`|\\mu_1 - \\mu_2| \\ge \\varepsilon`, which grows like :math:`1/\\varepsilon`
  (the argument of Section 3.1 behind Theorem 2), :func:`truncated_bayes_lower_bound`;
* the Bayesian lower bound of Theorem 4 (Section 4), :func:`N_V`, together with the
  "sufficiently small δ" threshold :math:`\\delta_L(H)` of Appendix "Sufficiently small δ",
  :func:`delta_L`;
* the leading term of the upper bound of Theorem 6 (Section 5) and its hypothesis on δ,
  :func:`upper_bound_leading_term`, :func:`upper_bound_condition`;
* the relaxed optimisation problem (Opt2) of Section 4 lives in :mod:`bai_lib.opt2`.

Notation: ``gap`` is :math:`\\mu_1 - \\mu_2`; ``noise_stds`` holds the noise *standard
deviations* σ_i (the arms are :math:`N(\\mu_i, \\sigma_i^2)`), one per arm or a scalar shared by
all arms, and the two-arm bounds take one common σ; ``delta`` is the confidence level δ.

For two arms the gap :math:`g = \\mu_1 - \\mu_2` is, under the prior,
:math:`N(m_1 - m_2, \\xi_1^2 + \\xi_2^2)`; its density at zero is
:math:`h_g(0) = L(H)/2` (Definition 2 sums over the two ordered pairs).
"""

from __future__ import annotations

import math
from typing import Literal, Optional, Union

import numpy as np
from scipy import integrate, optimize, special

from . import _validate as V
from .kl import kl_bernoulli
from .priors import GaussianPrior, check_prior

__all__ = [
    "bernoulli_kl",
    "frequentist_lower_bound",
    "truncated_bayes_lower_bound",
    "gap_distribution",
    "abs_gap_density",
    "QUAD_OPTIONS",
    "N_V",
    "d0_threshold",
    "d0_printed",
    "d1_threshold",
    "delta_L",
    "UPPER_BOUND_C",
    "upper_bound_leading_term",
    "upper_bound_delta_threshold",
    "upper_bound_condition",
    "KAUFMANN_CONSTANT",
]

ArrayLike = Union[float, np.ndarray, list, tuple]

#: The constant 2.4 of :math:`d(\\delta, 1-\\delta) \\ge \\log(1/(2.4\\delta))`
#: (Eq. (3) of Kaufmann, Cappé and Garivier, 2016), used in Corollary 3 and Section 4.
KAUFMANN_CONSTANT = 2.4

#: The universal constant :math:`C = 320(\\pi^2/3 + 1)` of Theorem 6.
UPPER_BOUND_C = 320.0 * (math.pi**2 / 3.0 + 1.0)

#: Options of ``scipy.integrate.quad`` for the one-dimensional integrals over the gap's law.
QUAD_OPTIONS = dict(epsabs=0.0, epsrel=1e-11, limit=500)


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
    check_prior(prior, k=2)
    m, s = prior.means, prior.stds
    return float(m[0] - m[1]), float(math.hypot(s[0], s[1]))


_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def abs_gap_density(x: float, loc: float, scale: float) -> float:
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
    ``a`` and ``b``. The values are those of the simulators' compiled
    :func:`~bai_lib.kl.kl_bernoulli`, behind a check of the arguments.

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
    aa = V.reals(a, "a", max_ndim=None)
    bb = V.reals(b, "b", max_ndim=None)
    for arr, name in ((aa, "a"), (bb, "b")):
        if np.any((arr < 0) | (arr > 1)):
            raise ValueError(f"{name} must lie in [0, 1], got {arr.tolist()}")
    pa, pb = np.broadcast_arrays(aa, bb)
    out = np.array([kl_bernoulli(x, y) for x, y in zip(pa.ravel().tolist(), pb.ravel().tolist())],
                   dtype=np.float64).reshape(pa.shape)
    return V.like_input(out, aa + bb)


# ------------------------------------------------------------------- Section 3
def _two_arm_numerator(delta: float, form: str) -> float:
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
    noise_stds: ArrayLike = 1.0,
    *,
    form: Literal["kl", "log"] = "kl",
    constant: float = 1.0,
) -> Union[float, np.ndarray]:
    """Corollary 3: lower bound on :math:`E_\\mu[\\tau]` for frequentist δ-correct algorithms.

    For two Gaussian arms with common noise standard deviation σ and gap
    :math:`\\Delta = |\\mu_1 - \\mu_2|`,

    .. math::
        E_\\mu[\\tau] \\ \\ge\\ c\\, \\sigma^2 \\frac{d(\\delta, 1-\\delta)}{\\Delta^2}
        \\ \\ge\\ c\\, \\sigma^2 \\frac{\\log(1/(2.4\\delta))}{\\Delta^2}.

    With ``constant`` :math:`c = 1` and σ = 1 this is exactly Corollary 3 as printed.

    **How σ enters.** The problem with noise σ and gap Δ is the problem with noise 1 and
    gap Δ/σ (rescale all observations by 1/σ), so any bound of the form
    :math:`K/\\Delta^2` at σ = 1 becomes :math:`K\\sigma^2/\\Delta^2`. Equivalently, from the
    transportation lemma (Lemma 5) with :math:`\\mathrm{KL}_i(a, b) = (a-b)^2/(2\\sigma^2)`
    for both arms: swapping the means (the alternative :math:`\\nu(\\mu)` of Section 4)
    gives :math:`E_\\mu[\\tau]\\,\\Delta^2/(2\\sigma^2) \\ge d(\\delta, 1-\\delta)`, i.e.
    :math:`c = 2`; optimising over the alternative (both means moved to a common point,
    worst allocation 1/2–1/2) gives the sharp two-armed constant :math:`c = 8`
    (Kaufmann, Cappé and Garivier, 2016). Corollary 3's :math:`c = 1` is therefore a valid,
    slightly conservative statement; pass ``constant=2`` or ``8`` for the sharper forms.

    Parameters
    ----------
    gap : float or array_like
        :math:`|\\mu_1 - \\mu_2| > 0` (finite). Vectorised.
    delta : float
        Confidence level in (0, 1). For ``δ >= 1/2`` the bound is 0 (an algorithm that
        guesses without sampling is then δ-correct); Corollary 3 is meaningful for δ < 1/2.
    noise_stds : float, default 1.0
        Common noise standard deviation σ > 0.
    form : {"kl", "log"}, default "kl"
        ``"kl"`` uses :math:`d(\\delta, 1-\\delta)`; ``"log"`` the weaker
        :math:`\\log(1/(2.4\\delta))` (clipped at 0 for δ > 1/2.4).
    constant : float, default 1.0
        Multiplicative constant ``c > 0`` (1: Corollary 3 as printed).

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
    g = V.reals(gap, "gap", positive=True)
    d = V.open_unit(delta, "delta")
    s = V.common_noise_std(noise_stds)
    c = V.positive(constant, "constant")
    V.choice(form, ("kl", "log"), "form")
    out = c * s**2 * _two_arm_numerator(d, form) / g**2
    return V.like_input(out, gap)


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
        return abs_gap_density(1.0 / u, loc, scale)

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
    val, _ = integrate.quad(f, 0.0, upper, points=pts or None, **QUAD_OPTIONS)
    return float(val)


def truncated_bayes_lower_bound(
    prior: GaussianPrior,
    delta: float,
    cutoff: float,
    noise_stds: ArrayLike = 1.0,
    *,
    form: Literal["kl", "log"] = "kl",
    constant: float = 1.0,
) -> float:
    """Prior average of Corollary 3 on :math:`\\{|\\mu_1 - \\mu_2| \\ge \\varepsilon\\}` (Section 3).

    For a frequentist δ-correct algorithm and a two-armed prior,

    .. math::
        E_{\\mu\\sim H}[\\tau] \\ \\ge\\ \\int_{|g| \\ge \\varepsilon}
        c\\,\\sigma^2 \\frac{d(\\delta, 1-\\delta)}{g^2}\\, h_g(g)\\, dg,

    with :math:`h_g` the density of the gap
    :math:`g = \\mu_1 - \\mu_2 \\sim N(m_1 - m_2, \\xi_1^2 + \\xi_2^2)`
    (see :func:`frequentist_lower_bound` for ``form``, ``constant`` and the role of σ).
    As :math:`\\varepsilon \\to 0` the right-hand side behaves like

    .. math::

        2 h_g(0)\\, c\\,\\sigma^2 \\frac{d(\\delta,1-\\delta)}{\\varepsilon}
        = L(H)\\, c\\,\\sigma^2 \\frac{d(\\delta,1-\\delta)}{\\varepsilon}

    (the odd part of :math:`h_g` cancels, so the remainder is O(1)); it diverges, which is
    Theorem 2 for k = 2.

    Parameters
    ----------
    prior : GaussianPrior
        Two-armed prior.
    delta : float
        Confidence level in (0, 1).
    cutoff : float
        :math:`\\varepsilon > 0` (finite).
    noise_stds : float, default 1.0
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
    check_prior(prior, k=2)
    d = V.open_unit(delta, "delta")
    eps = V.positive(cutoff, "cutoff")
    s = V.common_noise_std(noise_stds)
    c = V.positive(constant, "constant")
    V.choice(form, ("kl", "log"), "form")
    loc, scale = gap_distribution(prior)
    return c * s**2 * _two_arm_numerator(d, form) * _inverse_square_mass(loc, scale, eps)


# ------------------------------------------------------------------- Section 4
def N_V(
    prior: GaussianPrior,
    delta: float,
    noise_stds: ArrayLike = 1.0,
    *,
    convention: Literal["printed", "variance"] = "printed",
) -> float:
    """The budget :math:`N_V` of Theorem 4 (Bayesian lower bound).

    Theorem 4 defines :math:`\\sigma_{\\min} = \\min_i \\sigma_i^2` and

    .. math:: N_V = \\frac{L(H)^2\\, \\sigma_{\\min}^2 \\ln 2}{16 e^4 \\delta};

    for δ below :math:`\\delta_L(H)` (:func:`delta_L`) every algorithm with
    :math:`E_{\\mu\\sim H}[\\tau] \\le N_V` has :math:`\\mathrm{PoE} \\ge \\delta`.

    Remark on :math:`\\sigma_{\\min}`: since :math:`\\sigma_{\\min}` is already a variance,
    the printed :math:`\\sigma_{\\min}^2` is :math:`\\min_i \\sigma_i^4`
    (``convention="printed"``, the default, reproduces this literally). The proof in the
    appendix (last display of the proof of Theorem 4) carries :math:`\\min_s \\sigma_s^2`
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
    check_prior(prior)
    d = V.open_unit(delta, "delta")
    sig = V.noise_stds(noise_stds, prior.k)
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
    check_prior(prior)
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
    check_prior(prior)
    xi_max = float(np.max(prior.stds))
    if xi_max > (math.e**2 / 2.0**10) ** (1.0 / 3.0):
        return float(special.lambertw(-1.0 / (32.0 * xi_max**1.5), k=0).real)
    return 1.0


def d1_threshold(prior: GaussianPrior, stds: ArrayLike) -> float:
    """:math:`D_1(H)` of the ratio lemma (Lemma 12, in the appendix on the lower bound).

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
    check_prior(prior)
    s = V.noise_stds(stds, prior.k, "stds")
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
    noise_stds: Optional[ArrayLike] = None,
    *,
    ratio_lemma_stds: Literal["prior", "noise"] = "prior",
) -> float:
    """The "sufficiently small δ" threshold :math:`\\delta_L(H)` of Theorem 4.

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
    check_prior(prior)
    if noise_stds is not None:
        V.noise_stds(noise_stds, prior.k)
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
def upper_bound_leading_term(prior: GaussianPrior, delta: float, noise_stds: ArrayLike = 1.0) -> float:
    """Leading term of the upper bound of Theorem 6 (Algorithm 1).

    .. math::
        C\\,\\sigma_{\\max}^2 \\frac{L(H)^2}{\\delta} \\log\\frac{L(H)}{\\delta},
        \\qquad C = 320\\left(\\frac{\\pi^2}{3} + 1\\right),\\quad
        \\sigma_{\\max} = \\max_i \\sigma_i.

    The theorem adds an :math:`O(\\log \\delta^{-1})` term (prior-dependent) that is not
    included, and assumes :func:`upper_bound_condition`; neither is enforced here.

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
    check_prior(prior)
    d = V.open_unit(delta, "delta")
    sig = V.noise_stds(noise_stds, prior.k)
    L = prior.L()
    return UPPER_BOUND_C * float(np.max(sig)) ** 2 * L**2 / d * math.log(L / d)


def upper_bound_delta_threshold(prior: GaussianPrior) -> float:
    """Right-hand side of the hypothesis of Theorem 6.

    .. math::
        4 L(H) \\min\\left( \\frac{L(H)}{\\sum_i (k-1)/\\xi_i},\\
        \\Big(\\min_{i \\ne j} \\xi_i L_{ij}(H)\\Big)^2 \\right).

    The theorem writes :math:`\\min_{i,j\\in[k]}`; :math:`L_{ii}` is undefined, so the
    minimum is over ordered pairs :math:`i \\ne j` as in the appendix.
    """
    check_prior(prior)
    L = prior.L()
    Lm = np.asarray(prior.L_matrix())
    xi = prior.stds
    k = prior.k
    pair = min(xi[i] * Lm[i, j] for i in range(k) for j in range(k) if i != j)
    return 4.0 * L * min(L / float(np.sum((k - 1) / xi)), float(pair) ** 2)


def upper_bound_condition(prior: GaussianPrior, delta: float) -> bool:
    """Whether δ satisfies the hypothesis of Theorem 6 (see :func:`upper_bound_delta_threshold`)."""
    d = V.open_unit(delta, "delta")
    return bool(d < upper_bound_delta_threshold(prior))
