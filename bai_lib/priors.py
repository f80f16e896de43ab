"""Gaussian priors over bandit instances and the constant :math:`L(\\boldsymbol H)`.

This is the *math layer* of :mod:`bai_lib`: it implements Definition 2 (``L_ij(H)``
and ``L(H)``), the volume lemma (Lemma 1, ``L(H, Δ)``) and the indifference level
``Δ0 = δ / (4 L(H))`` of Algorithm 1 (Section 5) of Jang, Komiyama and Yamazaki,
*Fixed Confidence Best Arm Identification in the Bayesian Setting* (NeurIPS 2024).

All integrals are one-dimensional. For ``k <= 10`` arms of comparable widths ``L(H)`` is
the sum of the pairwise integrals of Definition 2, each computed with
:func:`scipy.integrate.quad`, as in the paper's appendix ("Computation of Δ0"); otherwise it
is a single integral whose integrand costs ``O(k)`` (see :meth:`~bai_lib.GaussianPrior.L`).

Scale: every quantity is computed on the prior shifted by a common location and divided by
a power of two ``c`` close to the largest prior standard deviation, then scaled back. Both
steps are exact in floating point for the priors of the paper (the shift is zero and ``c`` is
``1`` or ``2``), so the results do not depend on the units of the means, and a result that is
not representable in double precision raises a ``ValueError`` instead of becoming ``inf``
or ``0``.
"""

from __future__ import annotations

import math
import reprlib
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, Union

import numpy as np
from scipy.special import ndtr
from scipy.stats import norm

from . import _validate as V
from .quadrature import integrate_over_prior, normal_pdf, pair_integrals, single_integral
from .shape_prior import ShapePrior
from .stats import top_two_gap, wilson_interval

__all__ = ["GaussianPrior", "check_prior", "L_released", "delta0", "volume_ratio_mc"]

ArrayLike = Union[float, np.ndarray, list, tuple]

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_SQRT_HALF = math.sqrt(0.5)
_LOG_2 = math.log(2.0)
_TINY = sys.float_info.min  # smallest normal double: below it a result has lost precision

#: ``method="auto"`` sums the pairwise integrals of Definition 2 up to this many arms (the
#: values used by the book are those of this method) and uses the single integral otherwise.
PAIRWISE_MAX_K = 10
#: ... and only while ``max(stds) / min(stds)`` is at most this: the pairwise quadratures lose
#: the tails of an arm about 100 times narrower than another (relative error ~1e-3).
PAIRWISE_MAX_STD_RATIO = 16.0



def _short(value) -> str:
    """A bounded ``repr`` for error messages (priors may have thousands of arms)."""
    return reprlib.repr(value.tolist() if isinstance(value, np.ndarray) else value)


def _as_vector(values, name: str) -> np.ndarray:
    """``values`` as a new, one-dimensional float array of finite real numbers."""
    arr = V.reals(values, name)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence, got shape {arr.shape}")
    return arr


def _ldexp(value: float, n: int) -> float:
    """``value * 2**n`` exactly (``inf`` on overflow instead of an exception)."""
    try:
        return math.ldexp(value, n)
    except OverflowError:
        return math.copysign(math.inf, value)


def _representable(value: float) -> bool:
    return math.isfinite(value) and value >= _TINY


@dataclass(frozen=True, eq=False, init=False)
class GaussianPrior:
    """Independent Gaussian prior :math:`H_i = N(m_i, \\xi_i^2)` on the arm means (Section 2).

    The inputs are copied (the prior keeps read-only copies; the caller's arrays stay
    writeable and unchanged).

    Parameters
    ----------
    means : sequence of float
        Prior means :math:`m_i`, one per arm.
    stds : sequence of float
        Prior standard deviations :math:`\\xi_i > 0`, one per arm.

    Raises
    ------
    ValueError
        Naming ``means`` or ``stds``: if a value is not a real number (strings, booleans,
        ``None``, complex numbers), the input is not one-dimensional, the lengths differ,
        ``k < 2``, a value is non-finite or a std is not positive.

    Examples
    --------
    >>> H = GaussianPrior.standard(2)
    >>> round(H.L(), 6)  # 1/sqrt(pi) for two standard normal arms
    0.56419
    """

    means: np.ndarray
    stds: np.ndarray
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __init__(self, means: ArrayLike, stds: ArrayLike) -> None:
        # written out so that the parameters take any array-like (the fields hold arrays)
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "stds", stds)
        object.__setattr__(self, "_cache", {})
        self.__post_init__()

    def __post_init__(self) -> None:
        m = _as_vector(self.means, "means")
        s = _as_vector(self.stds, "stds")
        if m.shape != s.shape:
            raise ValueError(
                f"means and stds must have the same length, got {m.size} and {s.size}"
            )
        if m.size < 2:
            raise ValueError(
                f"means and stds: need k >= 2 arms (best arm identification compares arms), "
                f"got k = {m.size}"
            )
        if np.any(s <= 0):
            raise ValueError(f"stds must be positive, got {_short(s)}")
        m.setflags(write=False)
        s.setflags(write=False)
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "stds", s)

    @classmethod
    def standard(cls, k: int) -> "GaussianPrior":
        """The prior of both experiments of Section 6: ``m_i = 0``, ``ξ_i = 1`` for ``k`` arms."""
        k = V.integer(k, "k", 2)
        return cls(np.zeros(k), np.ones(k))

    # ------------------------------------------------------------------ basics
    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.means.size)

    def __repr__(self) -> str:
        return f"GaussianPrior(means={self.means.tolist()}, stds={self.stds.tolist()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GaussianPrior):
            return NotImplemented
        return np.array_equal(self.means, other.means) and np.array_equal(self.stds, other.stds)

    def __hash__(self) -> int:
        return hash((self.means.tobytes(), self.stds.tobytes()))

    def _normalised(self) -> tuple["GaussianPrior", int]:
        """``(H', e)`` with :math:`H_i = \\text{loc} + 2^e H'_i` for a common location ``loc``.

        ``2**e`` is the power of two nearest (in log scale) to the largest prior std, so the
        largest std of ``H'`` lies in ``[2**-0.5, 2**0.5]``. ``loc`` is the midpoint of the
        means rounded to a multiple of ``64 * 2**e``: it is ``0`` whenever the means lie
        within ``32 * 2**e`` of the origin, and then ``H'`` is ``H`` scaled by a power of two,
        which is exact in floating point. Every quantity below is computed on ``H'``:
        ``L(H) = L(H') / 2**e``, ``P_H[gap <= Δ] = P_H'[gap <= Δ / 2**e]``.
        """
        if "normalised" not in self._cache:
            frac, exp = math.frexp(float(np.max(self.stds)))
            e = exp if frac >= _SQRT_HALF else exp - 1
            unit = math.ldexp(1.0, min(e + 6, 1023))
            mid = 0.5 * float(np.max(self.means)) + 0.5 * float(np.min(self.means))
            q = mid / unit
            loc = float(round(q)) * unit if math.isfinite(q) else mid
            if e == 0 and loc == 0.0:
                result = (self, 0)
            else:
                with np.errstate(over="ignore", under="ignore"):
                    m = np.ldexp(self.means - loc, -e)
                    s = np.ldexp(self.stds, -e)
                if not np.all(np.isfinite(m)):
                    raise ValueError(
                        f"means: the spread of the means ({_short(self.means)}) is too large "
                        f"relative to the stds (largest {np.max(self.stds):.3g}) to be represented"
                    )
                if np.any(s == 0.0):
                    raise ValueError(
                        f"stds span too wide a range to be represented together "
                        f"(from {np.min(self.stds):.3g} to {np.max(self.stds):.3g})"
                    )
                H = GaussianPrior(m, s)
                H._cache["normalised"] = (H, 0)
                result = (H, e)
            self._cache["normalised"] = result
        return self._cache["normalised"]

    def _quad(self, f) -> float:
        return integrate_over_prior(f, self.means, self.stds)

    # --------------------------------------------------------- Definition 2
    def _pairwise_matrix(self) -> np.ndarray:
        """The ``L_ij`` of this prior's own parameters, one quadrature per pair (``O(k^2)``)."""
        if "pairwise" not in self._cache:
            out = pair_integrals(self.means, self.stds)
            out.setflags(write=False)
            self._cache["pairwise"] = out
        return self._cache["pairwise"]

    def L_matrix(self) -> np.ndarray:
        """The matrix of :math:`L_{ij}(H)` of Definition 2 (zero diagonal).

        .. math:: L_{ij}(H) = \\int h_i(x)\\, h_j(x) \\prod_{s \\ne i,j} H_s(x)\\, dx,

        the density, at gap zero, of the event that arms ``i`` and ``j`` are the top two.
        The matrix is symmetric and read-only. It costs one quadrature per pair, ``O(k^2)``
        integrals of ``O(k)`` work each: use it for small ``k``. :meth:`L` sums it only for
        ``k <= 10`` arms of comparable widths; for an arm about 100 times narrower than
        another its quadratures lose that arm's tails (relative error ~1e-3).

        Raises
        ------
        ValueError
            If an entry overflows double precision (stds far below 1e-300). Entries that
            underflow (pairs of arms that are practically never the top two) are returned as
            they come, possibly ``0``.
        """
        if "L_matrix" not in self._cache:
            H, e = self._normalised()
            out = H._pairwise_matrix()
            if H is not self:
                with np.errstate(over="ignore", under="ignore"):
                    out = np.ldexp(out, -e)
                if not np.all(np.isfinite(out)):
                    raise ValueError(
                        f"stds: L_ij(H) overflows double precision for stds this small "
                        f"(largest {np.max(self.stds):.3g})"
                    )
                out.setflags(write=False)
            self._cache["L_matrix"] = out
        return self._cache["L_matrix"]

    def L(self, method: str = "auto") -> float:
        """:math:`L(H) = \\sum_{i \\ne j} L_{ij}(H)` (Definition 2; a sum over ordered pairs).

        Parameters
        ----------
        method : {"auto", "pairwise", "single"}, default "auto"
            ``"pairwise"`` sums the entries of :meth:`L_matrix`: one quadrature per unordered
            pair, each entry counted twice, ``O(k^2)`` integrals. ``"single"`` computes the
            same quantity as one integral whose integrand costs ``O(k)`` (below).
            ``"auto"`` uses ``"pairwise"`` for ``k <= 10`` arms whose stds are within a factor
            16 of each other (:data:`~bai_lib.priors.PAIRWISE_MAX_K`,
            :data:`~bai_lib.priors.PAIRWISE_MAX_STD_RATIO`; the
            values printed in the book come from it) and ``"single"`` otherwise: the two
            agree to about ``1e-14`` relative on the book's priors, and the pairwise
            quadratures lose the tails of much narrower arms.

        Notes
        -----
        With :math:`r_i = h_i / H_i`, the integrand of :math:`L_{ij}` is
        :math:`h_i h_j \\prod_{s \\ne i,j} H_s = r_i r_j \\prod_s H_s`, so summing over the
        ordered pairs under one integral,

        .. math::
            L(H) = \\int_{-\\infty}^{\\infty} \\prod_{s=1}^k H_s(x)
            \\Big[\\Big(\\sum_i r_i(x)\\Big)^2 - \\sum_i r_i(x)^2\\Big]\\, dx ,

        where :math:`\\prod_s H_s` is the distribution function of the best mean
        :math:`\\mu_{(1)}` (and :math:`\\prod_s H_s \\sum_i r_i` its density). The bracket is
        :math:`\\sum_{i \\ne j} r_i r_j`; with :math:`r_{(1)} \\ge r_{(2)}` the two largest
        ratios it is evaluated as

        .. math::

            2 r_{(1)} r_{(2)} \\Big[\\sum_{i \\ne (1)} v_i
            + \\frac{r_{(2)}}{r_{(1)}} \\sum_{j<i;\\, i,j \\ne (1)} v_i v_j\\Big],
            \\qquad v_i = r_i / r_{(2)},

        a sum of positive terms (no cancellation when one :math:`r_i` dominates, no underflow
        when the ratios span more than the double range). Everything is computed in log space:
        :math:`\\log \\prod_s H_s = \\sum_s \\log \\Phi(z_s)` with
        :func:`scipy.special.log_ndtr`, :math:`z_s = (x - m_s)/\\xi_s`, and
        :math:`\\log r_i = \\log h_i - \\log \\Phi(z_i)`. The work is ``O(k)`` per point,
        vectorised over the quadrature nodes. The integral uses Gauss-Legendre panels (16
        nodes) on the interval where the integrand is within :math:`e^{-200}` of its largest
        value (located on a grid that starts at :math:`\\max_i (m_i - 40\\xi_i)`, below which
        :math:`\\prod_s H_s < e^{-800}`, with panel breakpoints around arms much narrower
        than a panel), halved adaptively until the estimated relative error is below
        ``1e-13``. For ``k = 10,000`` standard arms this takes about a second. For an arm
        narrower than about ``1e-7`` of its distance to the other means, rounding the nodes
        to doubles limits the relative accuracy to about ``1e-16 |m_i| / ξ_i``.

        Both methods are computed on the normalised prior (see the module docstring), so
        :math:`L(cH) = L(H)/c` holds exactly for powers of two ``c``.

        Raises
        ------
        ValueError
            If ``L(H)`` is not representable in double precision: it overflows (stds far
            below 1e-300) or underflows (arms many standard deviations apart, or stds far
            above 1e300).
        """
        V.choice(method, _METHODS, "method")
        key = ("L", method)
        if key not in self._cache:
            self._cache[key] = _pair_sum(self, False, method, "L(H)")
        return self._cache[key]


    # ------------------------------------------------------- volume lemma
    def gap_probability(self, delta: float) -> float:
        """:math:`P_{\\mu\\sim H}[\\mu_{(1)} - \\mu_{(2)} \\le \\Delta]`, exactly.

        Uses the one-dimensional representation

        .. math:: P[\\text{gap} \\le \\Delta] = \\sum_i \\int h_i(x)
            \\Big[\\prod_{s\\ne i} H_s(x) - \\prod_{s \\ne i} H_s(x-\\Delta)\\Big] dx,

        since arm ``i`` is best with value ``x`` and all others lie in ``(x-Δ, x)``
        or below. For ``k = 2`` the closed form
        :math:`\\Phi((\\Delta-d)/s) - \\Phi((-\\Delta-d)/s)` with ``d = m1 - m2``,
        ``s^2 = ξ1^2 + ξ2^2`` is used. Computed on the normalised prior with
        ``Δ / 2**e`` (module docstring), so it does not depend on the units. It costs ``k``
        quadratures of ``O(k)`` work each.

        Parameters
        ----------
        delta : float
            Gap threshold ``Δ >= 0`` (named ``delta`` as in the paper's ``Δ``).
        """
        d = V.real(delta, "delta")
        if d < 0:
            raise ValueError(f"delta must be a finite number >= 0, got {delta!r}")
        H, e = self._normalised()
        if H is not self:
            with np.errstate(over="ignore", under="ignore"):
                d = float(np.ldexp(d, -e))
            return 1.0 if math.isinf(d) else H.gap_probability(d)
        if d == 0.0:
            return 0.0
        m, s = self.means, self.stds
        if self.k == 2:
            loc = m[0] - m[1]
            scale = math.hypot(s[0], s[1])
            return float(norm.cdf((d - loc) / scale) - norm.cdf((-d - loc) / scale))
        total = 0.0
        for i in range(self.k):
            others = np.array([t for t in range(self.k) if t != i], dtype=int)
            mo, so = m[others], s[others]

            def integrand(x, i=i, mo=mo, so=so):
                upper = np.prod(ndtr((x - mo) / so))
                lower = np.prod(ndtr((x - d - mo) / so))
                return normal_pdf(x, m[i], s[i]) * float(upper - lower)

            total += self._quad(integrand)
        return float(min(max(total, 0.0), 1.0))

    def volume_ratio(self, delta: float) -> float:
        """:math:`L(H, \\Delta) = P[\\text{gap} \\le \\Delta] / \\Delta` of the volume lemma (Lemma 1).

        Tends to :math:`L(H)` as ``Δ → 0``.

        Raises
        ------
        ValueError
            If ``delta`` is not positive, or so small relative to the stds that
            :math:`P[\\text{gap} \\le \\Delta]` underflows or the ratio overflows.
        """
        d = V.positive(delta, "delta")
        p = self.gap_probability(d)
        ratio = p / d
        if p == 0.0 or not math.isfinite(ratio):
            raise ValueError(
                f"delta = {d!r} is too small relative to the stds (largest "
                f"{np.max(self.stds):.3g}) for P[gap <= delta] / delta to be represented"
            )
        return ratio

    def volume_lemma_threshold(self) -> float:
        """The level below which Lemma 1 guarantees ``L(H,Δ) ∈ (L/2, 2L)``.

        :math:`L(H) / \\sum_i \\frac{2(k-1)}{\\xi_i}` (Lemma 1, informal statement). Computed
        on the normalised prior (the expression is unchanged by a common rescaling of the
        stds, so this is exact).
        """
        H, _ = self._normalised()
        return H.L() / float(np.sum(2.0 * (self.k - 1) / H.stds))
    # ------------------------------------------------------------- sampling
    def sample_means(self, rng_or_seed: Union[int, np.random.Generator], size: int) -> np.ndarray:
        """Draw ``size`` mean vectors ``μ ~ H``; returns an array of shape ``(size, k)``.

        With an integer seed, row ``r`` is exactly the ``μ`` that
        :func:`bai_lib.simulate` uses in run ``r`` for that seed (common random numbers).
        With a :class:`numpy.random.Generator`, draws come from that generator.
        """
        size = V.integer(size, "size", 1, max(1, V.MAX_BYTES // (8 * self.k)))
        if isinstance(rng_or_seed, np.random.Generator):
            z = rng_or_seed.standard_normal((size, self.k))
            return self.means + self.stds * z
        if isinstance(rng_or_seed, (bool, np.bool_)) or not isinstance(
            rng_or_seed, (int, np.integer)
        ) or rng_or_seed < 0:
            raise ValueError(
                f"rng_or_seed must be a non-negative int or a numpy Generator, got {rng_or_seed!r}"
            )
        from ._rng import prior_means

        return prior_means(self.means, self.stds, int(rng_or_seed), size)


_METHODS = ("auto", "pairwise", "single")


def _check_result(value: float, prior: GaussianPrior, what: str) -> float:
    """``value`` if it is a finite, normal double; else a ``ValueError`` naming the cause."""
    where = (f"means from {np.min(prior.means):.6g} to {np.max(prior.means):.6g}, "
             f"stds from {np.min(prior.stds):.3g} to {np.max(prior.stds):.3g}")
    if not math.isfinite(value):
        raise ValueError(
            f"stds: {what} overflows double precision for this prior ({where}); "
            f"rescale the means and stds"
        )
    if not value >= _TINY:
        raise ValueError(
            f"means and stds: {what} underflows double precision (below {_TINY:.3g}) for this "
            f"prior ({where}): the arms are many standard deviations apart, or the scale of "
            f"the stds puts it out of range; rescale the means and stds"
        )
    return value


def _pairwise_is_auto(prior: GaussianPrior) -> bool:
    """The rule of ``method="auto"``: few arms of comparable widths."""
    s = prior.stds
    return (prior.k <= PAIRWISE_MAX_K
            and float(np.max(s)) <= PAIRWISE_MAX_STD_RATIO * float(np.min(s)))


def _pair_sum(prior: GaussianPrior, weighted: bool, method: str, what: str) -> float:
    """:math:`\\sum_{i \\ne j} w_i w_j L_{ij}(H)` with ``w = 1`` or, if ``weighted``, ``w = ξ``.

    Computed on the normalised prior ``H'`` (``H = loc + 2**e H'``) and scaled back exactly:
    ``L_ij(H) = 2**-e L_ij(H')`` and ``ξ_i ξ_j = 4**e ξ'_i ξ'_j``.
    """
    H, e = prior._normalised()
    n = e if weighted else -e
    if method == "pairwise" or (method == "auto" and _pairwise_is_auto(prior)):
        M = H._pairwise_matrix()
        value = float((M * np.outer(H.stds, H.stds)).sum()) if weighted else float(M.sum())
        if method == "pairwise" or _representable(value):
            return _check_result(_ldexp(value, n), prior, what)
        # the pairwise integrals underflow: the single integral keeps the scale in log form
    J, g0, converged = single_integral(H.means, H.stds, weighted)
    if J > 0.0:
        try:
            base = J * math.exp(g0)
        except OverflowError:
            base = math.inf
        if _representable(base):
            value = _ldexp(base, n)
        else:
            p = round(g0 / math.log(2.0))
            value = _ldexp(J * math.exp(g0 - p * math.log(2.0)), p + n)
    else:
        value = 0.0
    value = _check_result(value, prior, what)  # an unrepresentable value raises first
    if not converged:
        raise RuntimeError(
            f"{what}: the single-integral quadrature did not converge for means "
            f"{_short(prior.means)}, stds {_short(prior.stds)}; try method='pairwise'"
        )
    return value


def check_prior(prior: Any, name: str = "prior", *, k: Optional[int] = None,
                allow_none: bool = False) -> Optional[GaussianPrior]:
    """``prior`` if it is a :class:`GaussianPrior` (with ``k`` arms when ``k`` is given; ``None``
    passes with ``allow_none``); otherwise a ``ValueError`` naming ``name``."""
    if prior is None and allow_none:
        return None
    if not isinstance(prior, GaussianPrior):
        alt = " or None" if allow_none else ""
        raise ValueError(f"{name} must be a GaussianPrior{alt}, got {type(prior).__name__}")
    if k is not None and prior.k != k:
        raise ValueError(f"{name} must have k = {k} arms here, got k = {prior.k}")
    return prior


def L_released(prior: GaussianPrior, method: str = "auto") -> float:
    """``L`` as computed by the authors' released code: :math:`\\sum_{i \\ne j} \\xi_i \\xi_j L_{ij}(H)`.

    The released notebooks integrate ``φ((x - m_i)/ξ_i) φ((x - m_j)/ξ_j) ∏ Φ((x - m_s)/ξ_s)``,
    i.e. the prior densities :math:`h_i(x) = φ((x-m_i)/ξ_i)/ξ_i` of Definition 2 without their
    factor :math:`1/\\xi_i`. Each term is therefore :math:`\\xi_i\\xi_j L_{ij}(H)`; the two agree
    when every :math:`\\xi_i = 1` (Experiments 1 and 2) and differ in Experiment 3.

    Parameters
    ----------
    prior : GaussianPrior
    method : {"auto", "pairwise", "single"}, default "auto"
        As in :meth:`~bai_lib.GaussianPrior.L`; the single integral uses :math:`\\xi_i r_i` in place
        of :math:`r_i`.

    Raises
    ------
    ValueError
        If the value is not representable in double precision (it scales like the stds).
    """
    check_prior(prior)
    V.choice(method, _METHODS, "method")
    key = ("L_released", method)
    if key not in prior._cache:
        prior._cache[key] = _pair_sum(prior, True, method, "L_released(H)")
    return prior._cache[key]


def delta0(prior: GaussianPrior | ShapePrior, delta: float,
           factor: float = 4.0) -> float:
    """Indifference level :math:`\\Delta_0 = \\delta / (\\text{factor}\\cdot L(H))`.

    Algorithm 1 prints ``factor = 4``, which by the volume lemma gives
    :math:`P(\\text{gap} \\le \\Delta_0) \\le \\delta/2` (Section 5). The code released with
    the paper used ``factor = 1`` for Experiment 2; both conventions are reachable.

    Parameters
    ----------
    prior : GaussianPrior or ShapePrior
        A :class:`~bai_lib.GaussianPrior`, or a prior with shape parameters
        (:class:`~bai_lib.BetaPrior`, :class:`~bai_lib.GammaPrior`).
    delta : float
        Confidence level in (0, 1).
    factor : float, default 4.0
        Positive divisor.

    Raises
    ------
    ValueError
        For invalid arguments, if :math:`L(H)` is not representable (see
        :meth:`~bai_lib.GaussianPrior.L`), or if :math:`\\Delta_0` itself overflows or underflows;
        ``Δ0`` is never returned as ``0`` or ``inf``.
    """
    shaped = isinstance(prior, ShapePrior)  # Beta, Gamma: priors with shape parameters
    if not shaped:
        check_prior(prior)
    d = V.open_unit(delta, "delta")
    f = V.positive(factor, "factor")
    L = prior.L()
    value = d / (f * L)
    if not _representable(value):
        raise ValueError(
            f"delta0 = delta / (factor * L(H)) = {d!r} / ({f!r} * {L!r}) is not "
            f"representable in double precision: change factor"
            + ("" if shaped else " or rescale the prior's means and stds")
        )
    return value


def volume_ratio_mc(
    prior: GaussianPrior,
    deltas: ArrayLike,
    n_samples: int,
    rng: np.random.Generator,
    *,
    z: float = 1.96,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Monte Carlo estimate of :math:`L(H,\\Delta)` with a pointwise confidence band.

    Draws ``n_samples`` mean vectors from ``prior``, and for each ``Δ`` in ``deltas``
    estimates :math:`P[\\text{gap} \\le \\Delta]` by a proportion with a Wilson score
    interval (``z = 1.96`` gives 95%), divided by ``Δ``.

    Returns
    -------
    estimate, lower, upper : ndarray
        Arrays of the same length as ``deltas``.
    """
    d = _as_vector(np.atleast_1d(deltas), "deltas")
    if np.any(d <= 0):
        raise ValueError("deltas must be positive")
    if int(n_samples) != n_samples or n_samples < 1:
        raise ValueError(f"n_samples must be a positive integer, got {n_samples!r}")
    if not isinstance(rng, np.random.Generator):
        raise ValueError("rng must be a numpy Generator")
    n = int(n_samples)
    mus = prior.sample_means(rng, n)
    gaps = np.sort(top_two_gap(mus))
    counts = np.searchsorted(gaps, d, side="right")
    lower, upper = wilson_interval(counts, n, z)
    return counts / n / d, lower / d, upper / d
