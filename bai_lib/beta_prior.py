"""Beta priors over Bernoulli arm means and their constant :math:`L(\\boldsymbol H)`.

The Bernoulli analogue of :class:`bai_lib.priors.GaussianPrior` (math layer): arm ``i`` has
mean :math:`\\mu_i \\sim \\mathrm{Beta}(a_i, b_i)` on ``[0, 1]``, independently. It implements,
for this prior, Definition 2 (``L_ij(H)`` and ``L(H)``), the volume lemma (Lemma 1,
``L(H, Δ)``) and the indifference level ``Δ0 = δ / (4 L(H))`` of Algorithm 1 of Jang,
Komiyama and Yamazaki, *Fixed Confidence Best Arm Identification in the Bayesian Setting*
(NeurIPS 2024).

How the integrals are computed
------------------------------
Every quantity is a one-dimensional integral over ``[0, 1]`` of products of Beta densities
:math:`h_s` and distribution functions :math:`H_s`, in log space: :math:`\\log B(a, b)` from
Stirling's series for large parameters (``scipy.special.betaln`` loses up to ``3e-8``),
:math:`\\log H_s` from ``betainc`` at ``x`` or ``1 - x`` (whichever is exact; ``betaincc`` in
the lower tail) and, below ``H_s = 1e-250``, the continued fraction, so no factor underflows.
The interval is split at ``1/2``: ``x = u^m0 / 2``, ``1 - x = v^m1 / 2`` with ``u, v`` in
``[0, 1]``, the exponents ``1/(p+1)`` making an integrand like :math:`x^p`, ``-1 < p < 0``
(U-shaped priors), bounded; otherwise ``m = 1``. Panels are cut at every arm's quantiles of
levels ``1e-15 ... 1 - 1e-15`` and carry 16-point Gauss-Legendre rules, halved until the
estimated relative error of every integral is below ``1e-13`` (values are stored relative to
their largest one; :func:`bai_lib.quadrature.panel_integral`). Nothing is truncated. The size
of every computation is estimated before it starts, and refused beyond ``MAX_EVALUATIONS`` and
``MAX_BYTES`` of ``bai_lib._validate``. What does not depend on the family (the checks of the
inputs, the quadratures of Definition 2 and Lemma 1, the sampling) is
:class:`bai_lib.shape_prior.ShapePrior`'s, shared with :class:`bai_lib.GammaPrior`; this module
holds the Beta densities, distribution functions and quantiles, and the map of ``[0, 1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np
from scipy.special import betainc, betaincc, betaln, gammaln
from scipy.stats import beta as beta_dist

from . import _validate as V
from . import shape_prior
from ._variates import prior_beta_means
from .quadrature import exponent_map
from .shape_prior import ShapePrior

__all__ = ["BetaPrior", "PAIRWISE_MAX_K", "PARAM_RANGE"]

#: ``method="auto"`` of :meth:`bai_lib.BetaPrior.L` sums the pairwise integrals up to this
#: many arms (:data:`bai_lib.shape_prior.PAIRWISE_MAX_K`, shared with ``GammaPrior``).
PAIRWISE_MAX_K = shape_prior.PAIRWISE_MAX_K
#: Supported range of the parameters ``a_i`` and ``b_i``. Below ``1e-2`` many draws of a mean
#: are below the smallest double; at ``a + b = 1e7`` the log densities (differences of
#: numbers of size ``a + b``) are accurate to about ``1e-9``, and less beyond.
PARAM_RANGE = (1e-2, 1e7)

_SPLIT = 0.5                     # the interval is split at x = 1/2 (see the module docstring)
_LOG_SPLIT = math.log(_SPLIT)
_EPS = np.finfo(float).eps
_DEEP_TAIL, _CF_ITER = 1e-250, 2000  # below H_s = 1e-250, the continued fraction


def _log_tail(x, lx, ly, a, b, lbeta):
    """:math:`\\log I_x(a, b)` far in the lower tail, elementwise, from ``log x`` and
    ``log(1-x)``: :math:`x^a (1-x)^b / (a B(a,b))` times the continued fraction
    :math:`1/(1 + d_1/(1 + \\dots))` (modified Lentz; a few terms this far from the mean)."""
    def nonzero(z):
        return np.where(np.abs(z) < 1e-300, 1e-300, z)

    c, d = np.ones_like(x), 1.0 / nonzero(1.0 - (a + b) * x / (a + 1.0))
    f, done = d.copy(), np.zeros(x.shape, bool)
    for m in range(1, _CF_ITER):
        for coef in (m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
                     -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0))):
            d, c = 1.0 / nonzero(1.0 + coef * d), nonzero(1.0 + coef / c)
            step = c * d
            f = np.where(done, f, f * step)  # each element stops at its own convergence
        done |= np.abs(step - 1.0) <= 4 * _EPS
        if np.all(done):
            break
    return a * lx + b * ly - np.log(a) - lbeta + np.log(f)


def _log_cdf(x, y, lx, ly, a, b, lbeta):
    """:math:`\\log H_s` of every arm (columns) at ``x = 1 - y`` (rows), from the smaller (exact)
    of ``x`` and ``y``: :math:`I_x(a, b)`, or :math:`\\mathrm{log1p}(-I_y(b, a))` (``betaincc``
    where ``H < 1e-3``); :func:`_log_tail` below ``H = 1e-250``."""
    right = x > 0.5
    p = np.empty((x.size, a.size))
    p[~right] = betainc(a, b, x[~right, None])
    q = betainc(b, a, y[right, None])  # 1 - H
    p[right] = 1.0 - q
    with np.errstate(divide="ignore"):
        out = np.log(p)
        out[right] = np.log1p(-q)
        small = right[:, None] & (p < 1e-3)  # 1 - q has lost digits
        if np.any(small):
            i, s = np.nonzero(small)
            p[small] = betaincc(b[s], a[s], y[i])
            out[small] = np.log(p[small])
    deep = p < _DEEP_TAIL
    if np.any(deep):
        i, s = np.nonzero(deep)
        out[deep] = _log_tail(x[i], lx[i], ly[i], a[s], b[s], lbeta[s])
    return out


def _omega(z):
    """Remainder of Stirling's series, :math:`\\log\\Gamma(z) - (z-\\frac12)\\log z + z -
    \\frac12\\log 2\\pi`, for ``z >= 20`` (error below ``2e-15``)."""
    z2 = 1.0 / (z * z)
    return (1.0 / 12 - z2 * (1.0 / 360 - z2 * (1.0 / 1260 - z2 / 1680))) / z


def _betaln(a, b):
    """:math:`\\log B(a, b)`; for ``max(a, b) >= 20`` from Stirling's series written with
    ``log1p`` (``scipy.special.betaln`` is off by ~3e-8 at ``a = b = 5e6``)."""
    s, l = np.minimum(a, b), np.maximum(a, b)
    n = s + l
    out = betaln(a, b)
    big = l >= 20.0
    sb, lb, nb = s[big], l[big], n[big]
    tail = -(lb - 0.5) * np.log1p(sb / lb) + _omega(lb) - _omega(nb)
    both = sb >= 20.0
    sc = np.where(both, sb, 20.0)
    head = np.where(both, (sc - 0.5) * np.log(sc / nb) - 0.5 * np.log(nb)
                    + 0.5 * math.log(2 * math.pi) + _omega(sc),
                    gammaln(sb) - sb * np.log(nb) + sb)
    out[big] = head + tail
    return out


def _nodes(u, left, m0, m1):
    """``(x, y, log x, log y, log dx/du)`` at the local coordinates ``u`` of the two halves:
    ``x = u^m0 / 2`` where ``left``, ``y = 1 - x = u^m1 / 2`` elsewhere."""
    lu, m = np.log(u), np.where(left, m0, m1)
    lz = _LOG_SPLIT + m * lu               # log of the smaller one of x and y
    z = np.exp(lz)
    w, lw = 1.0 - z, np.log1p(-z)
    ljac = _LOG_SPLIT + np.log(m) + (m - 1.0) * lu
    x, y, lx, ly = np.where(left, [z, w, lz, lw], [w, z, lw, lz])
    return x, y, lx, ly, ljac


@dataclass(frozen=True, eq=False, repr=False, init=False)
class BetaPrior(ShapePrior):
    """Independent Beta priors :math:`H_i = \\mathrm{Beta}(a_i, b_i)` on Bernoulli arm means.

    The Bernoulli counterpart of :class:`~bai_lib.priors.GaussianPrior` (Definition 2 and
    Lemma 1 only need densities). The prior keeps read-only copies of the inputs. What does
    not depend on the family (:attr:`k`, :meth:`volume_ratio`, equality and hashing by value,
    the quadratures) is inherited from :class:`~bai_lib.shape_prior.ShapePrior`.

    Parameters
    ----------
    a, b : sequence of float
        The Beta parameters :math:`a_i, b_i > 0`, one per arm, within
        :data:`~bai_lib.beta_prior.PARAM_RANGE`: ``a_i - 1`` and ``b_i - 1`` prior successes and
        failures.

    Raises
    ------
    ValueError
        Naming ``a`` or ``b``: if a value is not a real number (strings, booleans, ``None``),
        the input is not one-dimensional, the lengths differ, ``k < 2``, or a value is not
        finite, not positive or outside :data:`~bai_lib.beta_prior.PARAM_RANGE`.

    Examples
    --------
    >>> round(BetaPrior.uniform(3).L(), 12)  # k uniform arms: L = k(k-1) ∫ x^(k-2) dx = k
    3.0
    """

    _RANGES = (PARAM_RANGE, PARAM_RANGE)
    _SUPPORT_END = 1.0
    _L_TOO_SMALL = "underflows double precision"

    @classmethod
    def uniform(cls, k: int) -> "BetaPrior":
        """``k`` arms with uniform priors, ``a_i = b_i = 1`` (``2 <= k``, 16 bytes per arm within
        ``MAX_BYTES`` of ``bai_lib._validate``)."""
        k = V.integer(k, "k", 2, V.MAX_BYTES // 16)
        return cls(np.ones(k), np.ones(k))

    # ------------------------------------------------------------------ closed forms
    @property
    def means(self) -> np.ndarray:
        """Prior means :math:`a_i / (a_i + b_i)` (read-only)."""
        return self._stored("means", lambda: self.a / (self.a + self.b))

    @property
    def stds(self) -> np.ndarray:
        """Prior standard deviations :math:`\\sqrt{a_i b_i / ((a_i+b_i)^2 (a_i+b_i+1))}`."""
        n = self.a + self.b
        return self._stored("stds", lambda: np.sqrt(self.a * self.b / (n * n * (n + 1.0))))

    def _lbeta(self) -> np.ndarray:
        return self._stored("lbeta", lambda: _betaln(self.a, self.b))

    # ------------------------------------------------------------------ the family's hooks
    def _arms(self, u, left, m):
        """``(log h, log H, log dx/du, (x, y))``, arms in columns, at local coordinates ``u``
        (``m = (m0, m1)``)."""
        (x, y, lx, ly, ljac), lbeta = _nodes(u, left, *m), self._lbeta()
        lh = (self.a - 1.0) * lx[:, None] + (self.b - 1.0) * ly[:, None] - lbeta
        return lh, _log_cdf(x, y, lx, ly, self.a, self.b, lbeta), ljac, (x, y)

    def _quantiles(self, q) -> tuple[np.ndarray, np.ndarray]:
        """``(x, 1 - x)`` at every arm's quantiles of levels ``q`` and their complements (from
        the reversed Beta)."""
        lower = beta_dist.ppf(q, self.a, self.b).ravel()
        upper = beta_dist.ppf(q[:-1], self.b, self.a).ravel()
        return np.concatenate([lower, 1.0 - upper]), np.concatenate([1.0 - lower, upper])

    def _edges(self, points, m) -> tuple[np.ndarray, np.ndarray]:
        """Panel edges (local coordinates of both halves) at ``x = px = 1 - py``, plus uniform
        ones."""
        (px, py), (m0, m1) = points, m
        on_left = px <= _SPLIT
        u, v = (px[on_left] / _SPLIT) ** (1.0 / m0), (py[~on_left] / _SPLIT) ** (1.0 / m1)
        return self._panel_edges(u, v)

    def _l_map(self) -> tuple[float, float]:
        """``(m0, m1)`` for integrands like :math:`x^{A-2}` (``A = Σ a_i``) and
        :math:`(1-x)^{b_{(1)} + b_{(2)} - 2}` (the two smallest ``b``); ``ValueError`` if
        ``L(H)`` is infinite."""
        A, b2 = self._sum_a(), float(np.sum(np.sort(self.b)[:2]))
        if not b2 > 1.0:
            raise ValueError(f"b: L(H) is infinite for this prior: the two smallest b sum to "
                             f"{b2:.6g} <= 1, so L_ij behaves like (1-x)^(b_i + b_j - 2) near 1")
        return exponent_map(A - 2.0, b2 - 2.0)

    def _gap_map(self) -> tuple[float, float]:
        """``(m0, m1)`` for the gap probability's integrands, like :math:`x^{A-1}` near 0 and
        :math:`(1-x)^{b_{(1)} - 1}` near 1."""
        return exponent_map(float(np.sum(self.a)) - 1.0, float(np.min(self.b)) - 1.0)

    def _shifted(self, points, d):
        """The points ``(x, 1 - x)``, those shifted by ``Δ`` (inside ``[0, 1]``) and ``Δ``."""
        px, py = points
        sh = py > d
        return np.concatenate([px, px[sh] + d, [d]]), np.concatenate([py, py[sh] - d, [1 - d]])

    def _right_rate(self, pts):
        """``1 / scale`` of each :math:`h_s` towards ``1`` (``1 - x`` over
        ``max(1, |b_s - 1|)``)."""
        cb = np.where(self.b == 1.0, 0.0, np.maximum(1.0, np.abs(self.b - 1.0)))
        return cb / pts[1][:, None]

    def _right_psi(self, pts, i, s, dc):
        """The ``(1 - x)`` part of :math:`\\log h_s(x - \\Delta c) - \\log h_s(x)`."""
        return (self.b[s, None] - 1.0) * np.log1p(dc / pts[1][i, None])

    def _log_cdf_before(self, pts, rows, d):
        """:math:`\\log H_s(x - \\Delta)` of every arm at the points ``rows``."""
        xs, ys = pts[0][rows] - d, pts[1][rows] + d
        return _log_cdf(xs, ys, np.log(xs), np.log(ys), self.a, self.b, self._lbeta())

    # ------------------------------------------------------------------ Definition 2
    def L_matrix(self) -> np.ndarray:
        """The matrix of :math:`L_{ij}(H)` of Definition 2 (zero diagonal, symmetric, read-only).

        .. math:: L_{ij}(H) = \\int_0^1 h_i(x)\\, h_j(x) \\prod_{s \\ne i,j} H_s(x)\\, dx,

        the density, at gap zero, of the event that arms ``i`` and ``j`` are the top two.
        All ``k(k-1)/2`` integrals share one set of adaptive panels (each meets its own
        relative tolerance): ``O(k)`` incomplete beta functions per node, ``O(k^2)`` sums and
        16 bytes per node and pair (limits as for :meth:`L`: about 440 iid arms).

        Raises
        ------
        ValueError
            Naming ``a`` or ``b`` if an entry is infinite: ``sum(a) <= 1`` or two ``b`` sum to
            at most ``1``. Entries that underflow (pairs practically never the top two) are
            returned as they come, possibly ``0``. Naming ``k`` beyond the limits.
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
            (:data:`~bai_lib.beta_prior.PAIRWISE_MAX_K`) and ``"single"`` otherwise; the two
            agree to about ``1e-12`` relative.

        Notes
        -----
        With :math:`r_i = h_i / H_i`, :math:`h_i h_j \\prod_{s \\ne i,j} H_s = r_i r_j \\prod_s
        H_s`, so

        .. math::
            L(H) = \\int_0^1 \\prod_{s=1}^k H_s(x)
            \\Big[\\Big(\\sum_i r_i(x)\\Big)^2 - \\sum_i r_i(x)^2\\Big]\\, dx ,

        the bracket evaluated as a sum of positive terms, in log space, as for
        :meth:`~bai_lib.GaussianPrior.L` (the integrals as in the module docstring).

        Accuracy: relative error within ``1e-12 + 2e-16 max_i(a_i + b_i)`` (log densities of size
        ``a + b``; checked against :math:`2 B(2a-1, 2b-1) / B(a, b)^2` of two iid arms, ``a, b``
        from ``0.6`` to ``1e7``). Cost: ``k`` evaluations on each of ``48 (16 + 13 u)`` nodes for
        ``u`` distinct arms (``"pairwise"``: and 16 bytes per node and pair), refused beforehand
        beyond ``bai_lib._validate.budget``: ``10,000`` iid arms take seconds; ``1,000``
        distinct arms, or ``"pairwise"`` beyond ``440`` iid arms, are refused.

        Raises
        ------
        ValueError
            Naming ``method`` if it is not one of the three; naming ``a`` or ``b`` if ``L(H)``
            is infinite (``sum(a) <= 1``, or the two smallest ``b`` sum to at most ``1``) or
            underflows (arms far apart); naming ``k`` (or ``method``) beyond the limits.
        """
        return self._L(method)

    # ------------------------------------------------------------------ volume lemma
    def gap_probability(self, delta: float) -> float:
        """:math:`P_{\\mu\\sim H}[\\mu_{(1)} - \\mu_{(2)} \\le \\Delta]`, exactly (Lemma 1).

        .. math:: P[\\text{gap} \\le \\Delta] = \\sum_i \\int_0^1 h_i(x)
            \\Big[\\prod_{s\\ne i} H_s(x) - \\prod_{s \\ne i} H_s(x-\\Delta)\\Big] dx,

        (arm ``i`` is best at ``x``, all others lie in ``(x-Δ, x]``; :math:`H_s(y) = 0` for
        ``y < 0``). The bracket is :math:`\\prod_{s \\ne i} H_s(x)\\,(1 - e^{D})`, with ``expm1``
        and :math:`D = \\sum_{s \\ne i} \\mathrm{log1p}(-\\int_{x-\\Delta}^x h_s / H_s(x))`, the
        integral by Gauss-Legendre where ``Δ`` is below a tenth of the scale of :math:`h_s`
        (``x - Δ`` over ``max(1, |a_s - 1|)``, ``1 - x`` over ``max(1, |b_s - 1|)``; elsewhere a
        difference of :math:`\\log H_s`), so tiny gaps keep their accuracy: relative error
        within ``2e-13 + 2e-16 max_i(a_i + b_i)`` for every ``Δ`` (checked against
        ``1 - (1 - Δ)^k`` of uniform arms from ``1e-300`` to ``0.99``). Cost: twice that of
        :meth:`L` by the single integral, with its limit.

        Parameters
        ----------
        delta : float
            Gap threshold ``Δ >= 0``; ``Δ = 0`` gives ``0`` and ``Δ >= 1`` gives ``1``.

        Raises
        ------
        ValueError
            Naming ``delta`` if not a finite number ``>= 0``, if ``0 < Δ < 2.2e-308`` (not a
            normal double) or if the result underflows; naming ``k`` beyond the limit.
        """
        return self._gap_probability(delta)

    # ------------------------------------------------------------------ sampling
    def sample_means(self, rng_or_seed: Union[int, np.random.Generator], size: int) -> np.ndarray:
        """``size >= 1`` draws of the mean vector ``μ ~ H``, an array of shape ``(size, k)``.

        With an integer seed ``>= 0``, row ``r`` is drawn from run ``r``'s prior stream
        (:func:`bai_lib._variates.prior_beta_means`), as :meth:`bai_lib.GaussianPrior.sample_means`
        draws from :func:`bai_lib._rng.prior_means`; with a :class:`numpy.random.Generator`, by
        its ``beta`` method. At most 2 GiB of draws (``MAX_BYTES`` of ``bai_lib._validate``)."""
        return self._sample_means(rng_or_seed, size,
                                  lambda rng, shape: rng.beta(self.a, self.b, size=shape),
                                  prior_beta_means)
