"""The integrals behind ``L(H)`` and the volume lemma, for a prior given by its means and stds.

Math layer, below :mod:`bai_lib.priors`. :func:`pair_integrals` computes the ``L_ij`` of
Definition 2 one quadrature per pair, and :func:`integrate_over_prior` any integral over the
region where the prior densities matter. For many arms, or arms of very different widths,
:meth:`bai_lib.GaussianPrior.L` evaluates the volume-lemma constant as one integral over
:math:`x` of :math:`\\prod_s H_s(x)` times a sum over pairs of the ratios
:math:`r_i = h_i/H_i`; the integrand is computed in logs (it spans far more than the double
range) and integrated on panels that are halved where the two halves disagree.

The priors over bounded or half-bounded supports (:mod:`bai_lib.beta_prior`,
:mod:`bai_lib.gamma_prior`) share :func:`panel_integral`: the support is cut at one point
into two halves, each mapped onto ``[0, 1]`` by its prior's own change of variables (the
Jacobian is part of the log integrand), so the integrator only sees local coordinates ``u`` of
a left and a right half. Several integrals (columns) are computed on one set of panels, each
to its own relative tolerance ``1e-13``; :func:`exponent_map` gives the exponents of a power
substitution that keeps an integrand like :math:`x^p` (``-1 < p < 0``) bounded, and
:func:`sum_except` and :func:`log_pair_sum` are the integrands' sums over arms in log space.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from scipy import integrate
from scipy.special import log_ndtr, ndtr

from . import _validate as V

__all__ = ["normal_pdf", "integrate_over_prior", "pair_integrals", "single_integral", "iid_L",
           "panel_integral", "exponent_map", "sum_except", "log_pair_sum"]

_QUAD_OPTS = dict(epsabs=0.0, epsrel=1e-11, limit=400)
_QUAD_IID = dict(epsabs=0.0, epsrel=1e-10, limit=500)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_2 = math.log(2.0)

# Gauss-Legendre panels, adaptively halved
_GL_X, _GL_W = np.polynomial.legendre.leggauss(16)
_N_PANELS = 32        # initial panels on the interval where the integrand matters
_N_SCAN = 1024        # cells of the grid that locates that interval
_TAIL = 200.0         # the interval keeps every point within e^-200 of the largest value
_RTOL = 1e-13         # target relative error of the single integral
_MAX_ROUNDS = 60
_MAX_WORK = 2 * 10**7  # cap on panels x arms (a safety valve, far above normal needs)
_BLOCK = 1 << 18      # (points x arms) evaluated at once, to bound the memory

# panel_integral (two halves in local coordinates, several columns)
_TINY, _EPS = np.finfo(float).tiny, np.finfo(float).eps
_CONVERGED = 1e-9     # below this estimated relative error a result is returned
_PANEL_ROUNDS, _MAX_PANELS = 80, 40_000   # safety valves, far above normal needs
_PANEL_BLOCK = 1 << 19  # (points x columns) evaluated at once, to bound the memory


def normal_pdf(x: float, mean: float, std: float) -> float:
    """Normal density (scalar, fast path for the quadrature integrands)."""
    z = (x - mean) / std
    return _INV_SQRT_2PI * math.exp(-0.5 * z * z) / std


def integrate_over_prior(f: Callable[[float], float], means: np.ndarray,
                         stds: np.ndarray) -> float:
    """``∫ f`` over the interval outside which every prior density is below ``1e-300`` of its
    peak (``m_i ± 40 ξ_i``), with breakpoints at every ``m_i`` and ``m_i ± 3 ξ_i``."""
    lo = float(np.min(means - 40.0 * stds))
    hi = float(np.max(means + 40.0 * stds))
    breaks = sorted(set(np.concatenate([means, means - 3 * stds, means + 3 * stds]).tolist()))
    pts = [p for p in breaks if lo < p < hi]
    value, _ = integrate.quad(f, lo, hi, points=pts, **_QUAD_OPTS)
    return float(value)


def pair_integrals(means: np.ndarray, stds: np.ndarray) -> np.ndarray:
    """The ``L_ij = ∫ h_i h_j Π_{s≠i,j} H_s`` of Definition 2 (zero diagonal), one quadrature
    per pair (``O(k²)``)."""
    k, m, s = means.size, means, stds
    out = np.zeros((k, k))
    for i in range(k):
        for j in range(i + 1, k):
            others = np.array([t for t in range(k) if t not in (i, j)], dtype=int)
            mo, so = m[others], s[others]

            def integrand(x, i=i, j=j, mo=mo, so=so):
                val = normal_pdf(x, m[i], s[i]) * normal_pdf(x, m[j], s[j])
                return val * float(np.prod(ndtr((x - mo) / so))) if mo.size else val

            out[i, j] = out[j, i] = integrate_over_prior(integrand, means, stds)
    return out


def single_integral(means: np.ndarray, stds: np.ndarray,
                    weighted: bool) -> tuple[float, float, bool]:
    """``(J, g0, converged)``: ``J * exp(g0)`` is the single integral of
    :meth:`bai_lib.GaussianPrior.L` for the prior with these ``means`` and ``stds``.

    ``weighted`` multiplies each :math:`r_i` by :math:`\\xi_i` (the released code's
    convention, :func:`bai_lib.priors.L_released`). Meant for a normalised prior (largest std
    near 1). ``converged`` is False if the adaptive quadrature stopped before its tolerance.
    """
    m, s = means, stds
    # below m_i - 40 xi_i, H_i < e^-800, so is the product; above the second largest
    # m_i + 40 xi_i, at most one density is not below e^-800 of its peak
    lo = float(np.max(m - 40.0 * s))
    hi = float(np.sort(m + 40.0 * s)[-2])
    if not lo < hi:  # the best arm is far from all others: look between them
        wide = 40.0 * float(np.max(s))
        lo, hi = max(hi - wide, float(np.min(m - 40.0 * s))), lo + wide
    # arms with m_i + 40 xi_i < lo have H_i = 1 and h_i below e^-800 on [lo, hi]
    keep = m + 40.0 * s >= lo
    if np.count_nonzero(keep) >= 2:
        m, s = m[keep], s[keep]
    log_c = np.full(m.size, _LOG_SQRT_2PI) if weighted else np.log(s) + _LOG_SQRT_2PI
    rows = max(1, _BLOCK // m.size)

    def log_f(x: np.ndarray) -> np.ndarray:
        """log of the integrand at the points ``x``.

        With the largest log r_i = l1 (arm t) and the next largest l2, the bracket is
        2 e^(l1 + l2) [sum_{i != t} v_i + e^(l2 - l1) sum_{j < i; i, j != t} v_i v_j],
        v_i = e^(log r_i - l2) <= 1: positive terms only, and the leading pair r_t r_(2)
        never underflows even when the r_i span more than the double range.
        """
        out = np.empty(x.size)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
            for start in range(0, x.size, rows):
                z = (x[start:start + rows, None] - m) / s
                log_H = log_ndtr(z)
                log_r = -0.5 * z * z - log_H - log_c
                n = np.arange(log_r.shape[0])
                t = np.argmax(log_r, axis=1)
                l1 = log_r[n, t]
                log_r[n, t] = -np.inf
                l2 = np.max(log_r, axis=1)
                v = np.exp(log_r - l2[:, None])
                below = np.cumsum(v, axis=1)
                pairs = np.einsum("ij,ij->i", v[:, 1:], below[:, :-1])
                bracket = below[:, -1] + np.exp(l2 - l1) * pairs
                out[start:start + rows] = (np.sum(log_H, axis=1) + _LOG_2 + l1 + l2
                                           + np.log(bracket))
        out[np.isnan(out)] = -np.inf  # points where the product or the densities vanish
        return out

    # locate the interval where the integrand matters (an arm much narrower than the
    # grid cells lies near ``lo``, where the product steps up from ~0, so the interval
    # starts at or just below it; its peak is found by the breakpoints below)
    pts = np.linspace(lo, hi, _N_SCAN + 1)
    g = log_f(pts)
    g0 = float(np.max(g))
    if not math.isfinite(g0):
        return 0.0, 0.0, True
    inside = np.flatnonzero(g >= g0 - _TAIL)
    a = float(pts[max(inside[0] - 1, 0)])
    b = float(pts[min(inside[-1] + 1, pts.size - 1)])
    edges = np.linspace(a, b, _N_PANELS + 1)
    # breakpoints around the arms much narrower than a panel, where the integrand matters
    narrow = (s < (b - a) / (8 * _N_PANELS)) & (m + 8.0 * s > a) & (m - 8.0 * s < b)
    if np.any(narrow):
        mn, sn = m[narrow], s[narrow]
        probe = np.array([-3.0, -1.0, 0.0, 1.0, 3.0])
        gp = log_f(np.clip(mn[:, None] + sn[:, None] * probe, a, b).ravel())
        near = np.max(gp.reshape(-1, probe.size), axis=1) >= g0 - _TAIL
        bp = (mn[near, None]
              + sn[near, None] * np.array([-8.0, -3.0, -1.0, 0.0, 1.0, 3.0, 8.0])).ravel()
        edges = np.unique(np.concatenate([edges, bp[(bp > a) & (bp < b)]]))

    # adaptive Gauss-Legendre panels; values are stored divided by e^g0, and g0 is
    # raised (and the stored values rescaled) if a node exceeds it
    st = dict(g0=g0, whole=np.empty(0), left=np.empty(0), right=np.empty(0))

    def panels(*bounds: tuple[np.ndarray, np.ndarray]) -> list[np.ndarray]:
        half = [0.5 * (hi_ - lo_) for lo_, hi_ in bounds]
        x = np.concatenate([(0.5 * (lo_ + hi_))[:, None] + hf[:, None] * _GL_X
                            for (lo_, hi_), hf in zip(bounds, half)])
        lv = log_f(x.ravel())
        top = float(np.max(lv))
        if top > st["g0"]:
            factor = math.exp(st["g0"] - top)
            for key in ("whole", "left", "right"):
                st[key] = st[key] * factor
            st["g0"] = top
        sums = np.exp(lv - st["g0"]).reshape(x.shape) @ _GL_W
        out, start = [], 0
        for hf in half:
            out.append(hf * sums[start:start + hf.size])
            start += hf.size
        return out

    A, B = edges[:-1], edges[1:]
    C = 0.5 * (A + B)
    st["whole"], st["left"], st["right"] = panels((A, B), (A, C), (C, B))
    eps = np.finfo(float).eps
    # the log-integrand is only known to about eps * |log f|: do not ask for more
    rtol = max(_RTOL, 16 * eps * (1.0 + abs(g0)))
    max_panels = max(2_000, _MAX_WORK // m.size)

    def noise(halves: np.ndarray) -> np.ndarray:
        # rounding the nodes to doubles moves them by eps |x|: relative to a panel of
        # width w that is noise of about eps |x| / w in its estimate (arms far narrower
        # than their distance to the origin); do not split panels below it
        x_over_w = np.maximum(np.abs(A), np.abs(B)) / (B - A)
        return 64 * eps * np.abs(halves) * np.maximum(1.0, x_over_w)

    for _ in range(_MAX_ROUNDS):
        halves = st["left"] + st["right"]
        total = float(np.sum(halves))
        err = np.abs(st["whole"] - halves)
        if float(np.sum(err)) <= rtol * total or A.size > max_panels:
            break
        split = err > np.maximum(rtol * total / err.size, noise(halves))
        if not np.any(split):
            break
        stay = ~split
        nA = np.concatenate([A[split], C[split]])
        nB = np.concatenate([C[split], B[split]])
        nC = 0.5 * (nA + nB)
        new_left, new_right = panels((nA, nC), (nC, nB))  # may rescale the stored values
        nW = np.concatenate([st["left"][split], st["right"][split]])
        A, B, C = (np.concatenate([A[stay], nA]), np.concatenate([B[stay], nB]),
                   np.concatenate([C[stay], nC]))
        st["whole"] = np.concatenate([st["whole"][stay], nW])
        st["left"] = np.concatenate([st["left"][stay], new_left])
        st["right"] = np.concatenate([st["right"][stay], new_right])
    halves = st["left"] + st["right"]
    total = float(np.sum(halves))
    err = float(np.sum(np.abs(st["whole"] - halves)))
    converged = err <= 1e-9 * total + 2.0 * float(np.sum(noise(halves)))
    return total, st["g0"], converged


def iid_L(dist: Any, k: int) -> float:
    """:math:`L(H)` of ``k`` arms whose means are iid with a continuous law ``dist``, Gaussian or not.

    For iid arms with density :math:`f` and distribution function :math:`F`, Definition 2
    reduces to :math:`L(H) = k(k-1)\\int f(x)^2 F(x)^{k-2}\\,dx`: the density at zero of the gap
    between the two best arms, times two. For a standard normal law this is
    ``GaussianPrior.standard(k).L()``; for a standard Cauchy law and ``k = 2`` it is
    :math:`1/\\pi`. Used for priors the algorithm does not assume (a heavy-tailed truth).

    Parameters
    ----------
    dist : frozen scipy.stats distribution
        Continuous, with ``pdf``, ``cdf`` and ``support``; e.g. ``scipy.stats.t(3, scale=2)``.
    k : int
        Number of arms, ``>= 2``.
    """
    k = V.integer(k, "k", 2)
    if not all(hasattr(dist, name) for name in ("pdf", "cdf", "support")):
        raise ValueError(f"dist must be a frozen continuous scipy.stats distribution, got {dist!r}")
    lo, hi = (float(b) for b in dist.support())

    def integrand(x):
        f = float(dist.pdf(x))
        return f * f * float(dist.cdf(x)) ** (k - 2) if f > 0.0 else 0.0

    med = float(dist.median())
    left, _ = integrate.quad(integrand, lo, med, **_QUAD_IID)
    right, _ = integrate.quad(integrand, med, hi, **_QUAD_IID)
    value = k * (k - 1) * (left + right)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"L of {k} iid arms with law {dist!r} is not finite and positive "
                         f"(got {value!r}); the law needs a square-integrable density")
    return value


def exponent_map(p0: float, p1: float) -> tuple[float, float]:
    """Exponents ``(m0, m1)`` of the substitutions ``z = u^m`` at the outer ends of two halves.

    An integrand behaving like :math:`z^p` near the end ``z = 0`` of a half becomes
    :math:`m\\, u^{m (p + 1) - 1}` in ``u``: bounded for ``m = 1/(p + 1)`` when ``-1 < p < 0``,
    and left alone (``m = 1``) when ``p >= 0``.

    Parameters
    ----------
    p0, p1 : float
        The powers ``p > -1`` at the outer ends of the left and right half (for ``[0, 1]`` split
        at ``1/2``: :math:`x^{p_0}` at 0 and :math:`(1-x)^{p_1}` at 1).

    Returns
    -------
    tuple of float
        ``(m0, m1)``, each in ``(0, 1]`` unless ``p >= 0`` (then ``1``).
    """
    return (1.0 / (p0 + 1.0) if p0 < 0 else 1.0), (1.0 / (p1 + 1.0) if p1 < 0 else 1.0)


def panel_integral(log_f: Callable[[np.ndarray, np.ndarray], np.ndarray],
                   edges: tuple[np.ndarray, np.ndarray], width: int, what: str) -> np.ndarray:
    """``∫ exp(log_f)`` over two halves in local coordinates, one value per column of ``log_f``.

    Each panel carries a 16-point Gauss-Legendre rule on itself and on its two halves; a panel
    is halved while these disagree by more than its share of ``1e-13`` of a column's total
    (rounding the nodes to doubles sets a floor). Each column is kept relative to its largest
    value ``exp(g0_c)``, so integrands far beyond the double range are integrated exactly.

    Parameters
    ----------
    log_f : callable
        ``log_f(u, left)``: ``u`` a 1-D array of local coordinates in ``(0, 1)`` and ``left`` a
        boolean array of the same length (True on the left half); returns an array
        ``(len(u), C)`` of log integrands, the Jacobian of the prior's change of variables
        included (``-inf`` where the integrand vanishes; NaN is read as ``-inf``).
    edges : tuple of two ndarray
        Sorted initial panel edges of the left and right half, from ``0`` to ``1``.
    width : int
        ``C``, or any size per point that bounds the memory of one call of ``log_f``.
    what : str
        The quantity computed, for the error message.

    Returns
    -------
    ndarray, shape (C,)
        The integrals (they may overflow to ``inf`` or underflow to ``0``).

    Raises
    ------
    RuntimeError
        If a column's estimated relative error stays above ``1e-9`` (after 80 rounds or
        40,000 panels; far beyond what a smooth integrand needs).
    """
    lo, hi = (np.concatenate([edges[0][s], edges[1][s]]) for s in (np.s_[:-1], np.s_[1:]))
    side = np.concatenate([np.ones(edges[0].size - 1, bool), np.zeros(edges[1].size - 1, bool)])
    st: dict = {"g0": None}
    rows = max(16, _PANEL_BLOCK // max(width, 1))

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

    for _ in range(_PANEL_ROUNDS):
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


def sum_except(v: np.ndarray) -> np.ndarray:
    """Row sums of ``v`` leaving out each column in turn, without subtracting it.

    Entry ``(n, i)`` is :math:`\\sum_{s \\ne i} v_{ns}` from prefix and suffix sums, so a
    column of ``-inf`` (a log factor that vanishes) does not turn the others into NaN.

    Parameters
    ----------
    v : ndarray, shape (N, k)

    Returns
    -------
    ndarray, shape (N, k)
    """
    z = np.zeros((v.shape[0], 1))
    pre = np.cumsum(np.hstack([z, v[:, :-1]]), axis=1)
    return pre + np.cumsum(np.hstack([z, v[:, :0:-1]]), axis=1)[:, ::-1]


def log_pair_sum(lh: np.ndarray, lH: np.ndarray) -> np.ndarray:
    """:math:`\\log \\prod_s H_s [(\\sum_i r_i)^2 - \\sum_i r_i^2]`, the log integrand of
    :math:`L(H)` as one integral, with :math:`\\log r_i = \\log h_i - \\log H_i`.

    The bracket is :math:`2 \\sum_{i<j} r_i r_j`, written with the two largest ratios factored
    out as a sum of positive terms, as :meth:`bai_lib.GaussianPrior.L` evaluates it: no
    cancellation, and no overflow even where the :math:`r_i` span more than the double range.

    Parameters
    ----------
    lh, lH : ndarray, shape (N, k)
        :math:`\\log h_s` and :math:`\\log H_s` of every arm (columns) at ``N`` points (rows),
        ``k >= 2``.

    Returns
    -------
    ndarray, shape (N,)
    """
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
