"""Gamma priors over Poisson arm means and their constant :math:`L(\\boldsymbol H)`.

The Poisson analogue of :class:`bai_lib.priors.GaussianPrior` and
:class:`bai_lib.beta_prior.BetaPrior` (math layer): arm ``i`` has mean
:math:`\\lambda_i \\sim \\mathrm{Gamma}(a_i, b_i)` (shape :math:`a_i`, rate :math:`b_i`) on
``(0, ∞)``, independently, the conjugate prior of Poisson counts. It implements, for this prior,
Definition 2 (``L_ij(H)`` and ``L(H)``), the volume lemma (Lemma 1, ``L(H, Δ)``) and the
indifference level ``Δ0 = δ / (4 L(H))`` of Algorithm 1 of Jang, Komiyama and Yamazaki, *Fixed
Confidence Best Arm Identification in the Bayesian Setting* (NeurIPS 2024).

How the integrals over the half-line are computed
-------------------------------------------------
Every quantity is a one-dimensional integral over ``(0, ∞)`` of products of Gamma densities
:math:`h_s` and distribution functions :math:`H_s`, in log space. With :math:`z = b_s x`,
:math:`\\log h_s(x) = \\log b_s - \\log z + \\ell_{a_s}(z)`, where
:math:`\\ell_a(z) = a \\log z - z - \\log\\Gamma(a)` is written, for ``a >= 20``, from Stirling's
series as :math:`\\frac12 \\log\\frac{a}{2\\pi} - \\omega(a) - a\\,(t - \\log(1 + t))` with
:math:`z = a (1 + t)` (:math:`t - \\log(1 + t)` by its Taylor series for ``|t| <= 0.1``), free
of the cancellation between terms of size :math:`a \\log a`. :math:`\\log H_s` is
``log(gammainc)`` left of :math:`z = a_s` and ``log1p(-gammaincc)`` right of it; below
``H_s = 1e-250`` it is

.. math:: \\ell_a(z) - \\log a + \\log \\sum_{n \\ge 0} \\frac{z^n}{(a+1) \\cdots (a+n)}

(the series converges geometrically there, ``z < a``), so no factor underflows. For
``a_s >= 1e5`` and ``z`` at least :math:`3 \\sqrt{a_s}` below :math:`a_s`, where ``gammainc``
loses up to 2% at ``a = 1e7``, that sum is

.. math:: \\frac{a}{a-z} \\int_0^\\infty e^{-y} \\exp\\big(-z\\,(e^{-v} - 1 + v)\\big)\\, dy,
    \\qquad v = \\frac{y}{a - z},

by fixed Gauss-Legendre panels.

The half-line is split at :math:`c`, the geometric mean of the prior means
:math:`a_i / b_i`. On the left ``x = c u^{m_0}`` and on the right ``x = c / v``, with ``u, v`` in
``(0, 1]``: the two halves of :func:`bai_lib.quadrature.panel_integral`, whose log integrands
carry the Jacobians :math:`\\log(c\\, m_0\\, u^{m_0 - 1})` and :math:`\\log(c / v^2)`. The
exponent :math:`m_0 = 1/(p+1)` makes an integrand like :math:`x^p`, ``-1 < p < 0``, bounded
near ``0`` (``m_0 = 1`` for ``p >= 0``); on the right the integrands decay like
:math:`x^q e^{-\\beta x}`, which ``x = c / v`` turns into a function vanishing with all its
derivatives at ``v = 0``. Both maps are relative to ``c``, so multiplying every rate by a
constant only moves ``c``. Panels are cut at every arm's quantiles of levels
``1e-15 ... 1 - 1e-15`` and carry 16-point Gauss-Legendre rules, halved until the estimated
relative error of every integral is below ``1e-13``. Nothing is truncated. The size of every
computation is estimated before it starts, and refused beyond ``MAX_EVALUATIONS`` and
``MAX_BYTES`` of ``bai_lib._validate``. What does not depend on the family (the checks of the
inputs, the quadratures of Definition 2 and Lemma 1, the sampling) is
:class:`bai_lib.shape_prior.ShapePrior`'s, shared with :class:`bai_lib.BetaPrior`; this module
holds the Gamma densities, distribution functions and quantiles, and the map of ``(0, ∞)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np
from scipy.special import gammainc, gammaincc, gammaln
from scipy.stats import gamma as gamma_dist

from . import _validate as V
from . import shape_prior
from ._variates import prior_gamma_means
from .quadrature import exponent_map
from .shape_prior import ShapePrior

__all__ = ["GammaPrior", "PAIRWISE_MAX_K", "PARAM_RANGE", "RATE_RANGE"]

#: ``method="auto"`` of :meth:`bai_lib.GammaPrior.L` sums the pairwise integrals up to this
#: many arms (:data:`bai_lib.shape_prior.PAIRWISE_MAX_K`, shared with ``BetaPrior``).
PAIRWISE_MAX_K = shape_prior.PAIRWISE_MAX_K
#: Supported range of the shapes ``a_i``. Below ``1e-2`` many draws of a mean are below the
#: smallest double (``gamma_variate``); the shape is a prior count, and beyond ``1e7`` the
#: rounding of a point ``x`` to a double alone moves :math:`\log h_s(x)` by about
#: :math:`\sqrt{a}\, 2^{-53}` where the prior has its mass (as for ``BetaPrior``'s range).
PARAM_RANGE = (1e-2, 1e7)
#: Supported range of the rates ``b_i``: ``1 / b_i`` is the prior's scale, in the library's
#: ``SCALE_RANGE`` (``bai_lib._validate``). A rate only fixes the unit of the means
#: (:math:`L(H)` is proportional to a common factor of the rates), and within this range the
#: means, ``L(H)`` and the gaps ``Δ`` of interest are normal doubles far from overflow.
RATE_RANGE = V.SCALE_RANGE

_EPS = np.finfo(float).eps
_LOG_2PI = math.log(2.0 * math.pi)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_STIRLING = 20.0                 # from this shape on, log Γ(a) by Stirling's series
_T_TAYLOR = [(-1.0) ** n / (n + 2) for n in range(18, -1, -1)]  # (t - log1p(t)) / t^2
_DEEP_TAIL, _SERIES_ITER = 1e-250, 100_000  # below H_s = 1e-250, the series
# from this shape on, and ``3 sqrt(a)`` or more below ``z = a``, log H_s by the integral of
# _log_lower_big (``gammainc`` loses up to 2% there at ``a = 1e7``, 6e-7 at ``1e6``)
_BIG_SHAPE, _BIG_SIGMAS = 1e5, 3.0
_Y_EDGES = np.linspace(0.0, 40.0, 9)  # panels of y in the integral (e^-40: below 1e-17)
_Y_NODES = ((_Y_EDGES[:-1, None] + _Y_EDGES[1:, None]) / 2 + 2.5 * _GL_X).ravel()
_Y_WEIGHTS = np.tile(2.5 * _GL_W, _Y_EDGES.size - 1)
_H_TAYLOR = [(-1.0) ** n / math.factorial(n) for n in range(2, 10)]  # e^-v - 1 + v, v^2..v^9
_CHUNK = 4096                    # elements of the integral evaluated at once (x 128 nodes)


def _omega(a):
    """Remainder of Stirling's series, :math:`\\log\\Gamma(a) - (a-\\frac12)\\log a + a -
    \\frac12\\log 2\\pi`, for ``a >= 20`` (error below ``2e-15``)."""
    a2 = 1.0 / (a * a)
    return (1.0 / 12 - a2 * (1.0 / 360 - a2 * (1.0 / 1260 - a2 / 1680))) / a


def _ell(z, lz, a):
    """:math:`\\ell_a(z) = a \\log z - z - \\log\\Gamma(a)`, elementwise (``a`` broadcast on
    the columns), from ``z`` and ``log z``; for ``a >= 20`` by Stirling's series around
    ``z = a``, in :math:`t = z/a - 1`: :math:`t - \\log(1 + t)` by its Taylor series for
    ``|t| <= 0.1`` (no cancellation), with ``log(1 + t)`` from ``log z`` when ``t < -1/2``."""
    small = a < _STIRLING
    out = np.empty(z.shape)
    with np.errstate(invalid="ignore", over="ignore"):
        if np.any(small):
            out[:, small] = a[small] * lz[:, small] - z[:, small] - gammaln(a[small])
        if not np.all(small):
            ab = a[~small]
            t, llz = (z[:, ~small] - ab) / ab, lz[:, ~small] - np.log(ab)  # z - a exact
            with np.errstate(divide="ignore"):
                l1t = np.where(t < -0.5, llz, np.log1p(np.maximum(t, -0.5)))
            tc = np.clip(t, -0.1, 0.1)  # t - log(1 + t) by its Taylor series for |t| <= 0.1
            d = np.where(np.abs(t) <= 0.1, tc * tc * np.polyval(_T_TAYLOR, tc), t - l1t)
            out[:, ~small] = (0.5 * (np.log(ab) - _LOG_2PI) - _omega(ab) - ab * d)
    return out


def _log_series(z, a):
    """:math:`\\log \\sum_{n \\ge 0} z^n / ((a+1) \\cdots (a+n))`, elementwise, for ``z < a``
    (terms decrease at least like :math:`(z/a)^n`); each element stops at its own
    convergence."""
    term, total = np.ones_like(z), np.ones_like(z)
    live = np.ones(z.shape, bool)
    for n in range(1, _SERIES_ITER):
        term[live] *= z[live] / (a[live] + n)
        total[live] += term[live]
        live &= term > _EPS * total
        if not np.any(live):
            break
    return np.log(total)


def _log_lower_big(z, a):
    """:math:`\\log S` with :math:`P(a, z) = e^{\\ell_a(z)} S / a`, elementwise, for large ``a``
    and ``z <= a - 3 \\sqrt{a}``: with :math:`t = e^{-y/(a-z)}` in
    :math:`S = a \\int_0^1 t^{a-1} e^{z(1-t)} dt`,

    .. math:: S = \\frac{a}{a - z} \\int_0^\\infty e^{-y}
        \\exp\\big(-z\\, (e^{-v} - 1 + v)\\big)\\, dy, \\qquad v = \\frac{y}{a - z} \\le 0.05,

    a smooth integrand (Gaussian-like factor of width at least ``3`` in ``y``) integrated on
    ``[0, 40]`` by 16-point Gauss-Legendre panels of width 5, the bracket by its Taylor series."""
    out = np.empty(z.shape)
    for j in range(0, z.size, _CHUNK):
        zc, ac = z[j:j + _CHUNK, None], a[j:j + _CHUNK, None]
        v = _Y_NODES / (ac - zc)
        h = v * v * np.polyval(_H_TAYLOR[::-1], v)
        integral = np.exp(-_Y_NODES - zc * h) @ _Y_WEIGHTS
        out[j:j + _CHUNK] = np.log(ac[:, 0]) - np.log(ac[:, 0] - zc[:, 0]) + np.log(integral)
    return out


def _log_cdf(z, lz, ell, a):
    """:math:`\\log H_s` of every arm (columns) at the points (rows) where :math:`b_s x = z`:
    ``log(gammainc)`` for ``z <= a``, ``log1p(-gammaincc)`` beyond (where ``H_s > 1/2``); from
    ``ell`` (:func:`_ell`) and :func:`_log_series` below ``H_s = 1e-250``, and from ``ell`` and
    :func:`_log_lower_big` for ``a >= 1e5`` and ``z <= a - 3 sqrt(a)``."""
    ab = np.broadcast_to(a, z.shape)
    right = z > ab
    big = (ab >= _BIG_SHAPE) & (z <= ab - _BIG_SIGMAS * np.sqrt(ab))
    rest = ~right & ~big
    out = np.empty(z.shape)
    with np.errstate(divide="ignore"):
        out[right] = np.log1p(-gammaincc(ab[right], z[right]))
        p = gammainc(ab[rest], z[rest])
        out[rest] = np.log(p)
    deep = np.zeros(z.shape, bool)
    deep[rest] = p < _DEEP_TAIL
    if np.any(deep):
        out[deep] = ell[deep] - np.log(ab[deep]) + _log_series(z[deep], ab[deep])
    if np.any(big):
        out[big] = ell[big] - np.log(ab[big]) + _log_lower_big(z[big], ab[big])
    return out


@dataclass(frozen=True, eq=False, repr=False, init=False)
class GammaPrior(ShapePrior):
    """Independent Gamma priors :math:`H_i = \\mathrm{Gamma}(a_i, b_i)` on Poisson arm means.

    Arm ``i`` has mean :math:`\\lambda_i` with density :math:`h_i(x) = b_i^{a_i} x^{a_i-1}
    e^{-b_i x} / \\Gamma(a_i)` on ``(0, ∞)`` (shape :math:`a_i`, rate :math:`b_i`; prior mean
    :math:`a_i / b_i`), the conjugate prior of Poisson rewards: after counts summing to
    :math:`S_i` in :math:`N_i` pulls the posterior is :math:`\\mathrm{Gamma}(a_i + S_i, b_i +
    N_i)`. The Poisson counterpart of :class:`~bai_lib.beta_prior.BetaPrior` (Definition 2 and
    Lemma 1 only need densities). The prior keeps read-only copies of the inputs. What does
    not depend on the family (:attr:`k`, :meth:`volume_ratio`, equality and hashing by value,
    the quadratures) is inherited from :class:`~bai_lib.shape_prior.ShapePrior`.

    Parameters
    ----------
    a : sequence of float
        The shapes :math:`a_i > 0`, one per arm, within
        :data:`~bai_lib.gamma_prior.PARAM_RANGE`: about :math:`a_i` prior counts.
    b : sequence of float
        The rates :math:`b_i > 0`, within :data:`~bai_lib.gamma_prior.RATE_RANGE`: about
        :math:`b_i` prior pulls.

    Raises
    ------
    ValueError
        Naming ``a`` or ``b``: if a value is not a real number (strings, booleans, ``None``),
        the input is not one-dimensional, the lengths differ, ``k < 2``, or a value is not
        finite, not positive or outside its supported range.

    Examples
    --------
    >>> round(GammaPrior.exponential(3).L(), 12)  # iid exponential arms: L = rate, for any k
    1.0
    """

    _RANGES = (PARAM_RANGE, RATE_RANGE)
    _SUPPORT_END = math.inf
    _L_TOO_SMALL = "is not a normal double"

    @classmethod
    def exponential(cls, k: int, rate: float = 1.0) -> "GammaPrior":
        """``k`` arms with exponential priors of rate ``rate``, ``a_i = 1``, ``b_i = rate``.

        The top two of ``k`` iid exponential means are separated by an exponential gap of the
        same rate, so :math:`L(H) = ` ``rate`` and :math:`P[\\lambda_{(1)} - \\lambda_{(2)} \\le
        \\Delta] = 1 - e^{-\\mathrm{rate}\\,\\Delta}` for every ``k``. ``2 <= k``, 16 bytes per arm
        within ``MAX_BYTES`` of ``bai_lib._validate``; a ``ValueError`` names ``k`` or ``rate``
        (within :data:`~bai_lib.gamma_prior.RATE_RANGE`).
        """
        k = V.integer(k, "k", 2, V.MAX_BYTES // 16)
        r = V.positive(rate, "rate")
        lo, hi = RATE_RANGE
        if not lo <= r <= hi:
            raise ValueError(f"rate must lie in the supported range [{lo:g}, {hi:g}], got {r!r}")
        return cls(np.ones(k), np.full(k, r))

    # ------------------------------------------------------------------ closed forms
    @property
    def means(self) -> np.ndarray:
        """Prior means :math:`a_i / b_i` (read-only)."""
        return self._stored("means", lambda: self.a / self.b)

    @property
    def stds(self) -> np.ndarray:
        """Prior standard deviations :math:`\\sqrt{a_i} / b_i` (read-only)."""
        return self._stored("stds", lambda: np.sqrt(self.a) / self.b)

    def _log_c(self) -> float:
        """``log c``, the split point: the geometric mean of the prior means."""
        return self._stored("log_c", lambda: float(np.mean(np.log(self.a) - np.log(self.b))))

    # ------------------------------------------------------------------ the family's hooks
    def _nodes(self, u, left, m0):
        """``(x, log x, log dx/du)`` at the local coordinates ``u`` of the two halves:
        ``x = c u^m0`` where ``left``, ``x = c / u`` elsewhere."""
        lc, lu = self._log_c(), np.log(u)
        lx = lc + np.where(left, m0 * lu, -lu)
        ljac = lc + np.where(left, math.log(m0) + (m0 - 1.0) * lu, -2.0 * lu)
        return np.exp(lx), lx, ljac

    def _arms(self, u, left, m0):
        """``(log h, log H, log dx/du, (x, log x))``, arms in columns, at local coordinates
        ``u``."""
        x, lx, ljac = self._nodes(u, left, m0)
        z, lz = x[:, None] * self.b, lx[:, None] + np.log(self.b)
        ell = _ell(z, lz, self.a)
        lh = np.log(self.b) - lz + ell
        return lh, _log_cdf(z, lz, ell, self.a), ljac, (x, lx)

    def _quantiles(self, q) -> np.ndarray:
        """Every arm's quantiles of levels ``q`` and their complements (``isf`` for the upper
        ones)."""
        lower = gamma_dist.ppf(q, self.a).ravel()
        upper = gamma_dist.isf(q[:-1], self.a).ravel()
        b = np.tile(self.b, q.size)
        return np.concatenate([lower / b, upper / b[:upper.size]])

    def _edges(self, px, m0) -> tuple[np.ndarray, np.ndarray]:
        """Panel edges (local coordinates of both halves) at the points ``px``, plus uniform
        ones."""
        c = math.exp(self._log_c())
        px = px[np.isfinite(px)]
        on_left = px <= c
        u, v = (px[on_left] / c) ** (1.0 / m0), c / px[~on_left]
        return self._panel_edges(u, v)

    def _l_map(self) -> float:
        """``m0`` for integrands like :math:`x^{A-2}` near 0 (``A = Σ a_i``); ``ValueError``
        if ``L(H)`` is infinite."""
        return exponent_map(self._sum_a() - 2.0, 0.0)[0]

    def _gap_map(self) -> float:
        """``m0`` for the gap probability's integrands, like :math:`x^{A-1}` near 0."""
        return exponent_map(float(np.sum(self.a)) - 1.0, 0.0)[0]

    def _shifted(self, px, d) -> np.ndarray:
        """The points ``px``, those shifted by ``Δ``, and ``Δ`` itself."""
        return np.concatenate([px, px + d, [d]])

    def _right_rate(self, pts) -> np.ndarray:
        """``1 / scale`` of each :math:`h_s` to the right of ``x``: the rates :math:`b_s`."""
        return self.b

    def _right_psi(self, pts, i, s, dc):
        """The :math:`e^{-b_s x}` part of :math:`\\log h_s(x - \\Delta c) - \\log h_s(x)`."""
        return self.b[s, None] * dc

    def _log_cdf_before(self, pts, rows, d):
        """:math:`\\log H_s(x - \\Delta)` of every arm at the points ``rows``."""
        xs = pts[0][rows] - d
        zs, lzs = xs[:, None] * self.b, np.log(xs)[:, None] + np.log(self.b)
        return _log_cdf(zs, lzs, _ell(zs, lzs, self.a), self.a)

    # ------------------------------------------------------------------ Definition 2
    def L_matrix(self) -> np.ndarray:
        """The matrix of :math:`L_{ij}(H)` of Definition 2 (zero diagonal, symmetric, read-only).

        .. math:: L_{ij}(H) = \\int_0^\\infty h_i(x)\\, h_j(x) \\prod_{s \\ne i,j} H_s(x)\\, dx,

        the density, at gap zero, of the event that arms ``i`` and ``j`` are the top two.
        Near ``x = 0`` the integrand behaves like :math:`x^{A - 2}`, :math:`A = \\sum_s a_s`
        (:math:`h_s \\propto x^{a_s - 1}`, :math:`H_s \\propto x^{a_s}`), so every entry is
        finite exactly when :math:`A > 1`; the tail at infinity is exponential. All
        ``k(k-1)/2`` integrals share one set of adaptive panels (each meets its own relative
        tolerance): ``O(k)`` incomplete gamma functions per node, ``O(k^2)`` sums and 16 bytes
        per node and pair (limits as for :meth:`L`).

        Raises
        ------
        ValueError
            Naming ``a`` if the entries are infinite (``sum(a) <= 1``). Entries that underflow
            (pairs practically never the top two) are returned as they come, possibly ``0``.
            Naming ``k`` beyond the limits.
        """
        return self._l_matrix("L_matrix", "k")

    def L(self, method: str = "auto") -> float:
        """:math:`L(H) = \\sum_{i \\ne j} L_{ij}(H)` (Definition 2; a sum over ordered pairs).

        Parameters
        ----------
        method : {"auto", "pairwise", "single"}, default "auto"
            ``"pairwise"`` sums :meth:`L_matrix` (each unordered pair counted twice).
            ``"single"`` computes the same quantity as one integral whose integrand costs
            ``O(k)`` per point (below). ``"auto"`` uses ``"pairwise"`` for ``k <= 10``
            (:data:`~bai_lib.gamma_prior.PAIRWISE_MAX_K`) and ``"single"`` otherwise; the two
            agree to about ``1e-12`` relative.

        Notes
        -----
        With :math:`r_i = h_i / H_i`, :math:`h_i h_j \\prod_{s \\ne i,j} H_s = r_i r_j \\prod_s
        H_s`, so

        .. math::
            L(H) = \\int_0^\\infty \\prod_{s=1}^k H_s(x)
            \\Big[\\Big(\\sum_i r_i(x)\\Big)^2 - \\sum_i r_i(x)^2\\Big]\\, dx ,

        the bracket evaluated as a sum of positive terms, in log space
        (:func:`bai_lib.quadrature.log_pair_sum`; the integrals as in the module docstring).
        Near ``0`` the integrand behaves like :math:`x^{A-2}`, :math:`A = \\sum_s a_s`, so
        :math:`L(H)` is finite exactly when :math:`A > 1`. If every rate is multiplied by
        ``c``, :math:`L(H)` is multiplied by ``c`` (the means are divided by ``c``).

        Accuracy: relative error within ``1e-12 + 2e-16 max_i a_i`` (log densities of size
        ``a``; checked against :math:`2 b\\, \\Gamma(2a-1) / (\\Gamma(a)^2\\, 2^{2a-1})` of two
        iid arms, ``a`` from ``0.51`` to ``1e7``). Cost: ``k`` evaluations on each of
        ``48 (16 + 13 u)`` nodes for ``u`` distinct arms (``"pairwise"``: and 16 bytes per node
        and pair), refused beforehand beyond ``bai_lib._validate.budget``.

        Raises
        ------
        ValueError
            Naming ``method`` if it is not one of the three; naming ``a`` if ``L(H)`` is
            infinite (``sum(a) <= 1``); naming ``a`` and ``b`` if it underflows (arms far
            apart); naming ``k`` (or ``method``) beyond the limits.
        """
        return self._L(method)

    # ------------------------------------------------------------------ volume lemma
    def gap_probability(self, delta: float) -> float:
        """:math:`P_{\\lambda\\sim H}[\\lambda_{(1)} - \\lambda_{(2)} \\le \\Delta]`, exactly
        (Lemma 1).

        .. math:: P[\\text{gap} \\le \\Delta] = \\sum_i \\int_0^\\infty h_i(x)
            \\Big[\\prod_{s\\ne i} H_s(x) - \\prod_{s \\ne i} H_s(x-\\Delta)\\Big] dx,

        (arm ``i`` is best at ``x``, all others lie in ``(x-Δ, x]``; :math:`H_s(y) = 0` for
        ``y <= 0``). The bracket is :math:`\\prod_{s \\ne i} H_s(x)\\,(1 - e^{D})`, with ``expm1``
        and :math:`D = \\sum_{s \\ne i} \\mathrm{log1p}(-\\int_{x-\\Delta}^x h_s / H_s(x))`, the
        integral by Gauss-Legendre where ``Δ`` is below a tenth of the scale of :math:`h_s`
        (``x - Δ`` over ``max(1, |a_s - 1|)``, and :math:`1 / b_s`; elsewhere a difference of
        :math:`\\log H_s`), so tiny gaps keep their accuracy (checked against
        :math:`1 - e^{-b\\Delta}` of iid exponential arms from ``Δ = 1e-300`` on). The result
        is below ``1`` for every ``Δ`` (the means are unbounded). Cost: twice that of
        :meth:`L` by the single integral, with its limit.

        Parameters
        ----------
        delta : float
            Gap threshold ``Δ >= 0``; ``Δ = 0`` gives ``0``.

        Raises
        ------
        ValueError
            Naming ``delta`` if not a finite number ``>= 0``, if ``0 < Δ < 2.2e-308`` (not a
            normal double) or if the result underflows; naming ``k`` beyond the limit.
        """
        return self._gap_probability(delta)

    # ------------------------------------------------------------------ sampling
    def sample_means(self, rng_or_seed: Union[int, np.random.Generator], size: int) -> np.ndarray:
        """``size >= 1`` draws of the mean vector ``λ ~ H``, an array of shape ``(size, k)``.

        With an integer seed ``>= 0``, row ``r`` is drawn from run ``r``'s prior stream
        (``bai_lib._variates.prior_gamma_means``), as :meth:`bai_lib.BetaPrior.sample_means`
        draws from :func:`bai_lib._variates.prior_beta_means`; with a
        :class:`numpy.random.Generator`, by its ``gamma`` method (scale ``1 / b_i``). At most
        2 GiB of draws (``MAX_BYTES`` of ``bai_lib._validate``). For shapes near ``1e-2`` a
        draw may underflow to ``0``."""
        return self._sample_means(
            rng_or_seed, size, lambda rng, shape: rng.gamma(self.a, 1.0 / self.b, size=shape),
            prior_gamma_means)
