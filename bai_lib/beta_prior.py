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
their largest one). Nothing is truncated. The size of every computation is estimated before
it starts, and refused beyond ``MAX_EVALUATIONS`` and ``MAX_BYTES`` of ``bai_lib._validate``.
"""

from __future__ import annotations

import math
import reprlib
import warnings
from dataclasses import dataclass, field
from typing import Callable, Union

import numpy as np
from scipy.special import betainc, betaincc, betaln, gammaln
from scipy.stats import beta as beta_dist

from . import _validate as V
from ._rng import SEED_MAX
from ._variates import prior_beta_means

__all__ = ["BetaPrior", "PAIRWISE_MAX_K", "PARAM_RANGE"]

#: ``method="auto"`` of :meth:`bai_lib.BetaPrior.L` sums the pairwise integrals up to this
#: many arms.
PAIRWISE_MAX_K = 10
#: Supported range of the parameters ``a_i`` and ``b_i``. Below ``1e-2`` many draws of a mean
#: are below the smallest double; at ``a + b = 1e7`` the log densities (differences of
#: numbers of size ``a + b``) are accurate to about ``1e-9``, and less beyond.
PARAM_RANGE = (1e-2, 1e7)

_METHODS = ("auto", "pairwise", "single")
_SPLIT = 0.5                     # the interval is split at x = 1/2 (see the module docstring)
_LOG_SPLIT, _LOG_2 = math.log(_SPLIT), math.log(2.0)
_TINY, _EPS = np.finfo(float).tiny, np.finfo(float).eps
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_N_BASE = 8                      # uniform panels of each half, besides the arms' quantiles
#: lower quantile levels of each arm used as panel edges (the upper ones by symmetry)
_LEVELS = np.array([1e-15, 1e-9, 1e-5, 1e-3, 0.02, 0.16, 0.5])
_RTOL = 1e-13                    # target relative error of every integral
_CONVERGED = 1e-9                # below this estimated relative error a result is returned
_MAX_ROUNDS, _MAX_PANELS = 80, 40_000   # safety valves, far above normal needs
_BLOCK = 1 << 19                 # (points x columns) evaluated at once, to bound the memory
_DEEP_TAIL, _CF_ITER = 1e-250, 2000  # below H_s = 1e-250, the continued fraction
_GL_SHIFT = 0.1                  # largest Δ / scale of h_s where H_s(x) - H_s(x-Δ) is integrated


def _short(value: np.ndarray) -> str:  # a bounded repr for error messages
    return reprlib.repr(value.tolist())


def _params(values, name: str) -> np.ndarray:
    """``values`` as a new one-dimensional array of Beta parameters in
    :data:`~bai_lib.beta_prior.PARAM_RANGE`."""
    arr = V.reals(values, name, positive=True)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence, got {values!r}")
    lo, hi = PARAM_RANGE
    if np.any(arr < lo) or np.any(arr > hi):
        raise ValueError(f"{name} must lie in the supported range [{lo:g}, {hi:g}], "
                         f"got {_short(arr)}")
    return arr


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


def _exponent_map(p0: float, p1: float) -> tuple[float, float]:
    """``(m0, m1)`` for an integrand behaving like ``x^p0`` at 0 and ``(1-x)^p1`` at 1."""
    return (1.0 / (p0 + 1.0) if p0 < 0 else 1.0), (1.0 / (p1 + 1.0) if p1 < 0 else 1.0)


def _edges(px, py, m0, m1) -> tuple[np.ndarray, np.ndarray]:
    """Panel edges (local coordinates of both halves) at ``x = px = 1 - py``, plus uniform ones."""
    base, on_left = np.linspace(0.0, 1.0, _N_BASE + 1), px <= _SPLIT
    u, v = (px[on_left] / _SPLIT) ** (1.0 / m0), (py[~on_left] / _SPLIT) ** (1.0 / m1)
    return (np.unique(np.clip(np.concatenate([base, u]), 0.0, 1.0)),
            np.unique(np.clip(np.concatenate([base, v]), 0.0, 1.0)))


def _integrate(log_f: Callable, edges: tuple[np.ndarray, np.ndarray], width: int,
               what: str) -> np.ndarray:
    """``∫ exp(log_f)`` over both halves, one value per column of ``log_f(u, left)`` (an array
    ``(len(u), C)`` of log integrands at local coordinates ``u``, Jacobian included): a panel
    is halved while it and its halves disagree by more than its share of ``1e-13`` of a
    column's total; each column is stored relative to its largest value ``exp(g0_c)``."""
    lo, hi = (np.concatenate([edges[0][s], edges[1][s]]) for s in (np.s_[:-1], np.s_[1:]))
    side = np.concatenate([np.ones(edges[0].size - 1, bool), np.zeros(edges[1].size - 1, bool)])
    st: dict = {"g0": None}
    rows = max(16, _BLOCK // max(width, 1))

    def quad(lo_, hi_, side_):
        half = 0.5 * (hi_ - lo_)
        u = (0.5 * (hi_ + lo_))[:, None] + half[:, None] * _GL_X
        uf, sf = u.ravel(), np.repeat(side_, _GL_X.size)
        lv = np.concatenate([log_f(uf[j:j + rows], sf[j:j + rows])
                             for j in range(0, uf.size, rows)])
        lv[np.isnan(lv)] = -np.inf  # 0 * inf at points where a factor vanishes
        top = np.max(lv, axis=0)
        if st["g0"] is None:
            st["g0"] = top
        else:
            new = np.maximum(st["g0"], top)
            with np.errstate(invalid="ignore"):
                factor = np.where(new > st["g0"], np.exp(st["g0"] - new), 1.0)
            for key in ("whole", "left", "right"):
                st[key] = st[key] * factor
            st["g0"] = new
        with np.errstate(invalid="ignore", under="ignore"):
            vals = np.exp(lv - st["g0"])
        vals[np.isnan(vals)] = 0.0
        sums = np.einsum("pnc,n->pc", vals.reshape(u.shape + (-1,)), _GL_W)
        return sums * half[:, None]

    mid, n = 0.5 * (lo + hi), lo.size
    out = quad(np.concatenate([lo, lo, mid]), np.concatenate([hi, mid, hi]), np.tile(side, 3))
    st["whole"], st["left"], st["right"] = out[:n], out[n:2 * n], out[2 * n:]

    def noise(halves):  # rounding the nodes to doubles: relative noise ~ eps u / width
        return 64 * _EPS * np.abs(halves) * np.maximum(1.0, hi / (hi - lo))[:, None]

    for _ in range(_MAX_ROUNDS):
        halves = st["left"] + st["right"]
        total, err = np.sum(halves, axis=0), np.abs(st["whole"] - halves)
        floor = np.maximum(_RTOL * total, np.sum(noise(halves), axis=0))
        if np.all(np.sum(err, axis=0) <= floor) or lo.size > _MAX_PANELS:
            break
        split = np.any(err > np.maximum(_RTOL * total / lo.size, noise(halves)), axis=1)
        if not np.any(split):
            break
        keep, nlo = ~split, np.concatenate([lo[split], mid[split]])
        nhi = np.concatenate([mid[split], hi[split]])
        nside, nmid, m = np.tile(side[split], 2), 0.5 * (nlo + nhi), nlo.size
        out = quad(np.concatenate([nlo, nmid]), np.concatenate([nmid, nhi]),
                   np.tile(nside, 2))  # may rescale the stored values
        whole = np.concatenate([st["left"][split], st["right"][split]])  # after the rescaling
        for key, new in (("whole", whole), ("left", out[:m]), ("right", out[m:])):
            st[key] = np.concatenate([st[key][keep], new])
        lo, hi, side = (np.concatenate([lo[keep], nlo]), np.concatenate([hi[keep], nhi]),
                        np.concatenate([side[keep], nside]))
        mid = 0.5 * (lo + hi)
    halves = st["left"] + st["right"]
    total, err = np.sum(halves, axis=0), np.sum(np.abs(st["whole"] - halves), axis=0)
    if np.any(err > _CONVERGED * total + 2 * np.sum(noise(halves), axis=0)):
        rel = float(np.max(err / np.maximum(total, _TINY)))
        raise RuntimeError(f"{what}: the adaptive quadrature did not converge (estimated "
                           f"relative error {rel:.2g})")
    with np.errstate(over="ignore", under="ignore"):
        return total * np.exp(st["g0"])


def _sum_except(v: np.ndarray) -> np.ndarray:
    """Row sums of ``v`` leaving out each column in turn, without subtracting it."""
    z = np.zeros((v.shape[0], 1))
    pre = np.cumsum(np.hstack([z, v[:, :-1]]), axis=1)
    return pre + np.cumsum(np.hstack([z, v[:, :0:-1]]), axis=1)[:, ::-1]


def _log_pair_sum(lh: np.ndarray, lH: np.ndarray) -> np.ndarray:
    """:math:`\\log \\prod_s H_s [(\\sum_i r_i)^2 - \\sum_i r_i^2]` with :math:`\\log r_i =
    \\log h_i - \\log H_i` (rows are points), as :meth:`bai_lib.GaussianPrior.L` evaluates it."""
    lr, n = lh - lH, np.arange(lh.shape[0])
    t = np.argmax(lr, axis=1)
    l1 = lr[n, t]
    lr[n, t] = -np.inf
    l2 = np.max(lr, axis=1)
    with np.errstate(invalid="ignore", under="ignore", over="ignore", divide="ignore"):
        v = np.exp(lr - l2[:, None])
        below = np.cumsum(v, axis=1)
        pairs = np.einsum("ij,ij->i", v[:, 1:], below[:, :-1])
        bracket = below[:, -1] + np.exp(l2 - l1) * pairs
        return np.sum(lH, axis=1) + _LOG_2 + l1 + l2 + np.log(bracket)


@dataclass(frozen=True, eq=False)
class BetaPrior:
    """Independent Beta priors :math:`H_i = \\mathrm{Beta}(a_i, b_i)` on Bernoulli arm means.

    The Bernoulli counterpart of :class:`~bai_lib.priors.GaussianPrior` (Definition 2 and
    Lemma 1 only need densities). The prior keeps read-only copies of the inputs.

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

    a: np.ndarray
    b: np.ndarray
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        a, b = _params(self.a, "a"), _params(self.b, "b")
        if a.shape != b.shape:
            raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
        if a.size < 2:
            raise ValueError(f"a and b: need k >= 2 arms (best arm identification compares "
                             f"arms), got k = {a.size}")
        for name, arr in (("a", a), ("b", b)):
            arr.setflags(write=False)
            object.__setattr__(self, name, arr)

    @classmethod
    def uniform(cls, k: int) -> "BetaPrior":
        """``k`` arms with uniform priors, ``a_i = b_i = 1`` (``2 <= k``, 16 bytes per arm within
        ``MAX_BYTES`` of ``bai_lib._validate``)."""
        k = V.integer(k, "k", 2, V.MAX_BYTES // 16)
        return cls(np.ones(k), np.ones(k))

    # ------------------------------------------------------------------ basics
    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.a.size)

    def __repr__(self) -> str:
        return f"BetaPrior(a={self.a.tolist()}, b={self.b.tolist()})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BetaPrior):
            return NotImplemented
        return np.array_equal(self.a, other.a) and np.array_equal(self.b, other.b)

    def __hash__(self) -> int:
        return hash((self.a.tobytes(), self.b.tobytes()))

    def _stored(self, key, make):
        if key not in self._cache:
            value = make()
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            self._cache[key] = value
        return self._cache[key]

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

    def _arms(self, u, left, m0, m1):
        """``(log h, log H, log dx/du, (x, y))``, arms in columns, at local coordinates ``u``."""
        (x, y, lx, ly, ljac), lbeta = _nodes(u, left, m0, m1), self._lbeta()
        lh = (self.a - 1.0) * lx[:, None] + (self.b - 1.0) * ly[:, None] - lbeta
        return lh, _log_cdf(x, y, lx, ly, self.a, self.b, lbeta), ljac, (x, y)

    def _quantile_points(self) -> tuple[np.ndarray, np.ndarray]:
        """``(x, 1 - x)`` at every arm's quantiles of ``_LEVELS`` and their complements (from the
        reversed Beta); only panel edges: an inexact one (boost may warn) costs nothing."""
        def make():
            q = _LEVELS[:, None]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                lower = beta_dist.ppf(q, self.a, self.b).ravel()
                upper = beta_dist.ppf(q[:-1], self.b, self.a).ravel()
            return np.concatenate([lower, 1.0 - upper]), np.concatenate([1.0 - lower, upper])
        return self._stored("quantiles", make)

    def _plan(self, what, name="k", pairs=False, shifted=False) -> None:
        """``V.budget`` of the quadrature's first pass: k evaluations on 48 nodes per panel."""
        n_pairs = self.k * (self.k - 1) // 2 if pairs else 0  # 16 bytes per node and pair
        for u in (1, None):  # one distinct arm is a lower bound: np.unique only if it passes
            n = u or self._stored("u", lambda: int(np.unique(self.a + 1j * self.b).size))
            nodes = 48 * (2 * _N_BASE + (2 * _LEVELS.size - 1) * n * (1 + shifted) + shifted)
            V.budget(name, f"{what} for k = {self.k:,} arms ({nodes:,} quadrature nodes"
                     + ("" if u else f", {n:,} distinct (a, b)")
                     + (f" x {n_pairs:,} pairs x 16 bytes)" if pairs else ")"),
                     nodes * self.k * (1 + shifted), 16 * nodes * n_pairs,
                     "at least" if u else "about", "; method='single' needs O(k)" if pairs else "")

    def _l_map(self) -> tuple[float, float]:
        """``(m0, m1)`` for integrands like :math:`x^{A-2}` (``A = Σ a_i``) and
        :math:`(1-x)^{b_{(1)} + b_{(2)} - 2}` (the two smallest ``b``); ``ValueError`` if
        ``L(H)`` is infinite."""
        A, b2 = float(np.sum(self.a)), float(np.sum(np.sort(self.b)[:2]))
        if not A > 1.0:
            raise ValueError(f"a: L(H) is infinite for this prior: sum(a) = {A:.6g} <= 1, so "
                             f"the integrand behaves like x^(sum(a) - 2) near 0")
        if not b2 > 1.0:
            raise ValueError(f"b: L(H) is infinite for this prior: the two smallest b sum to "
                             f"{b2:.6g} <= 1, so L_ij behaves like (1-x)^(b_i + b_j - 2) near 1")
        return _exponent_map(A - 2.0, b2 - 2.0)

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

    def _l_matrix(self, what: str, name: str) -> np.ndarray:
        def make():
            self._plan(what, name, pairs=True)
            m0, m1 = self._l_map()
            k = self.k
            iu, ju = np.triu_indices(k, 1)

            def log_f(u, left):
                lh, lH, ljac, _ = self._arms(u, left, m0, m1)
                rest = _sum_except(lH)[:, iu] - lH[:, ju]
                return lh[:, iu] + lh[:, ju] + rest + ljac[:, None]

            out = np.zeros((k, k))  # finite (checked above), far below overflow here
            out[iu, ju] = out[ju, iu] = _integrate(
                log_f, _edges(*self._quantile_points(), m0, m1), max(k, iu.size), "L_matrix")
            return out
        return self._stored("L_matrix", make)

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
        V.choice(method, _METHODS, "method")
        name = "method" if method == "pairwise" else "k"  # what the caller can change
        if method == "auto":
            method = "pairwise" if self.k <= PAIRWISE_MAX_K else "single"
        return self._stored(("L", method), lambda: self._compute_L(method, name))

    def _compute_L(self, method: str, name: str) -> float:
        if method == "pairwise":
            value = float(np.sum(self._l_matrix("L(H) by method='pairwise'", name)))
        else:
            self._plan("L(H) by the single integral", name)
            m0, m1 = self._l_map()

            def log_f(u, left):
                lh, lH, ljac, _ = self._arms(u, left, m0, m1)
                return (_log_pair_sum(lh, lH) + ljac)[:, None]

            value = float(_integrate(log_f, _edges(*self._quantile_points(), m0, m1),
                                     self.k, "L(H)")[0])
        if not (math.isfinite(value) and value >= _TINY):
            raise ValueError(f"a and b: L(H) = {value!r} underflows double precision for "
                             f"a = {_short(self.a)}, b = {_short(self.b)} (arms far apart)")
        return value

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
        d = V.nonnegative(delta, "delta")
        if d == 0.0 or d >= 1.0:
            return float(d >= 1.0)
        if d < _TINY:
            raise ValueError(f"delta = {d!r} is too small: below the smallest normal double "
                             f"({_TINY:.3g}) it carries fewer than 53 significant bits")
        self._plan("gap_probability", shifted=True)
        m0, m1 = _exponent_map(float(np.sum(self.a)) - 1.0, float(np.min(self.b)) - 1.0)
        lbeta = self._lbeta()
        ca, cb = (np.where(p == 1.0, 0.0, np.maximum(1.0, np.abs(p - 1.0)))  # 1 / scales
                  for p in (self.a, self.b))

        def log_f(u, left):  # log of sum_i h_i(x) [prod_{s != i} H_s(x) - ... (x - Δ)]
            lh, lH, ljac, (x, y) = self._arms(u, left, m0, m1)
            D, inside = np.full(lH.shape, -np.inf), x > d  # D = log H_s(x - Δ) - log H_s(x)
            with np.errstate(all="ignore"):  # 0 * inf, log 0, 1/0 at the ends
                near = inside[:, None] & (d * (ca / (x - d)[:, None] + cb / y[:, None])
                                          <= _GL_SHIFT)
                far = inside[:, None] & ~near
                rows, (i, s) = np.any(far, axis=1), np.nonzero(near)
                xs, ys = x[rows] - d, y[rows] + d
                D[far] = (_log_cdf(xs, ys, np.log(xs), np.log(ys), self.a, self.b, lbeta)
                          - lH[rows])[far[rows]]
                # H(x) - H(x - Δ) = h(x) Δ/2 Σ w_n exp(ψ_n), nodes x - c_n Δ: with Δ below a
                # tenth of both scales, within e^2 on the Bernstein ellipse 20 (error < 1e-30)
                c, a, b = 0.5 * (1.0 - _GL_X), self.a[s, None] - 1.0, self.b[s, None] - 1.0
                psi = a * np.log1p(-(d * c) / x[i, None]) + b * np.log1p((d * c) / y[i, None])
                ratio = np.exp(lh[i, s] - lH[i, s] + np.log(0.5 * d * (np.exp(psi) @ _GL_W)))
                D[near] = np.log1p(-np.minimum(ratio, 1.0))  # rounding must not pass 1
                terms = lh + _sum_except(lH) + np.log(-np.expm1(np.minimum(_sum_except(D), 0)))
                top = np.max(terms, axis=1)
                total = top + np.log(np.sum(np.exp(terms - top[:, None]), axis=1))
            return (total + ljac)[:, None]

        px, py = self._quantile_points()
        sh = py > d  # the quantiles shifted by Δ, and Δ itself
        px, py = np.concatenate([px, px[sh] + d, [d]]), np.concatenate([py, py[sh] - d, [1 - d]])
        p = float(_integrate(log_f, _edges(px, py, m0, m1), self.k, "gap_probability")[0])
        if not p >= _TINY:
            raise ValueError(f"delta = {d!r}: P[gap <= delta] = {p:.3g} underflows double "
                             f"precision (below {_TINY:.3g}) for this prior: delta is too small "
                             f"or the arms are too far apart")
        return min(p, 1.0)  # a probability; the quadrature may round above 1 by ~1e-15

    def volume_ratio(self, delta: float) -> float:
        """:math:`L(H, \\Delta) = P[\\text{gap} \\le \\Delta] / \\Delta` of the volume lemma
        (Lemma 1); tends to :math:`L(H)` as ``Δ → 0``. A ``ValueError`` names ``delta`` if it is
        not positive; otherwise as :meth:`gap_probability`."""
        d = V.positive(delta, "delta")
        return self.gap_probability(d) / d  # a normal double (else gap_probability raises)

    # ------------------------------------------------------------------ sampling
    def sample_means(self, rng_or_seed: Union[int, np.random.Generator], size: int) -> np.ndarray:
        """``size >= 1`` draws of the mean vector ``μ ~ H``, an array of shape ``(size, k)``.

        With an integer seed ``>= 0``, row ``r`` is drawn from run ``r``'s prior stream
        (:func:`bai_lib._variates.prior_beta_means`), as :meth:`bai_lib.GaussianPrior.sample_means`
        draws from :func:`bai_lib._rng.prior_means`; with a :class:`numpy.random.Generator`, by
        its ``beta`` method. At most 2 GiB of draws (``MAX_BYTES`` of ``bai_lib._validate``)."""
        size = V.integer(size, "size", 1, max(1, V.MAX_BYTES // (8 * self.k)))
        if isinstance(rng_or_seed, np.random.Generator):
            return rng_or_seed.beta(self.a, self.b, size=(size, self.k))
        try:
            seed = V.integer(rng_or_seed, "rng_or_seed", 0, SEED_MAX)
        except ValueError:
            raise ValueError(f"rng_or_seed must be a numpy Generator or an integer seed "
                             f"in [0, 2**64 - 1], got {reprlib.repr(rng_or_seed)}") from None
        return prior_beta_means(self.a, self.b, seed, size)
