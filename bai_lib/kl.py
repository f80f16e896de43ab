"""Bernoulli Kullback-Leibler divergence and the KL confidence bounds built on it.

Math layer. For Bernoulli arms the divergence

.. math:: \\mathrm{kl}(p, q) = p\\log\\frac{p}{q} + (1-p)\\log\\frac{1-p}{1-q}

(with ``0 log 0 = 0``) gives the tightest exponential tail bound of the empirical mean
``μ̂_n`` of ``n`` pulls: by Chernoff's bound ``P(μ̂_n >= q) <= exp(-n kl(q, μ))`` for
``q > μ``, and symmetrically ``P(μ̂_n <= q) <= exp(-n kl(q, μ))`` for ``q < μ``. The interval

.. math:: \\{q \\in [0, 1] : n\\,\\mathrm{kl}(\\hat\\mu_n, q) \\le L\\}

therefore misses ``μ`` with probability at most ``2 e^{-L}``, the same guarantee as the
sub-Gaussian interval ``μ̂_n ± σ sqrt(2L/n)`` with ``σ = 1/2``; by Pinsker's inequality
``kl(p, q) >= 2 (p - q)²`` it is never wider, and it is much narrower for means near 0 or 1.
Its upper end is the KL-UCB index.

:func:`kl_bernoulli`, :func:`kl_upper` and :func:`kl_lower` are compiled scalar functions
for the simulators (they return ``nan`` on arguments outside their domain instead of
raising); :func:`kl_inner` gives closed-form points inside the interval, for a cheap first
test before the exact ends are solved; :func:`kl_interval` evaluates both ends for arrays and
checks its arguments. :func:`kl_glr` is the GLR statistic of two Bernoulli arms.

The parts that do not depend on the family are shared with :mod:`bai_lib.kl_poisson` under
names without an underscore, outside ``__all__``: ``kl_g`` (the function
``g(x) = (1 + x) log(1 + x) - x`` of both divergences), ``polish_bound`` (the last-ulp search
of a bound, for any divergence), ``shrunk_point`` (an inner point moved safely towards ``p``)
and ``interval_of`` (the checked, broadcast evaluation behind :func:`kl_interval`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V

__all__ = ["kl_bernoulli", "kl_upper", "kl_lower", "kl_inner", "kl_interval", "kl_glr"]

_EPS = 2.220446049250313e-16
_ONE_BELOW = 1.0 - 2.0 ** -53    # the largest double below 1
_SMALLEST = 5e-324               # the smallest positive (subnormal) double
_MAX_ITER = 100


@njit(cache=True, nogil=True)
def kl_g(x: float) -> float:
    """``(1 + x) log(1 + x) - x`` for ``x >= -1`` (``>= 0``), by its series for ``|x| <= 0.1``.

    ``g(x) = Σ_{k>=2} (-1)^k x^k / (k (k-1))``: 17 terms leave a relative error below 1e-17.
    ``q g((p - q)/q)`` is the Poisson divergence of mean ``p`` from mean ``q``; the Bernoulli
    divergence is the sum of two such terms (:func:`kl_bernoulli`).
    """
    if abs(x) <= 0.1:
        s = 0.0
        for k in range(18, 1, -1):
            s = s * (-x) + 1.0 / (k * (k - 1.0))
        return s * x * x
    if x == -1.0:
        return 1.0
    return (1.0 + x) * math.log1p(x) - x


@njit(cache=True, nogil=True)
def kl_bernoulli(p: float, q: float) -> float:
    """Kullback-Leibler divergence ``kl(p, q) = KL(Ber(p) || Ber(q))`` in nats.

    ``p log(p/q) + (1-p) log((1-p)/(1-q))`` with ``0 log 0 = 0``: ``0`` when ``p == q``,
    ``+inf`` when ``q`` is 0 or 1 and ``p != q``, ``nan`` when ``p`` or ``q`` is outside
    ``[0, 1]``. Evaluated as the sum of two nonnegative terms,
    ``kl = q g((p-q)/q) + (1-q) g((q-p)/(1-q))`` with ``g(x) = (1+x) log(1+x) - x``, so that
    nothing cancels when ``p`` and ``q`` are close; the complements use ``log1p``, so that
    ``p`` and ``q`` near 0 or 1 keep their relative accuracy.

    A compiled kernel of the simulators and of :mod:`bai_lib.oracle_bernoulli`, called in inner
    loops on checked arguments: bad input gives ``nan``, not an exception. The checked,
    vectorised form is :func:`bai_lib.bounds.bernoulli_kl` (a ``ValueError`` naming ``a`` or
    ``b``).
    """
    if not (0.0 <= p <= 1.0 and 0.0 <= q <= 1.0):
        return np.nan
    if p == q:
        return 0.0
    d = p - q
    # q g((p-q)/q) = p log(p/q) - (p - q)
    if abs(d) <= 0.1 * q:
        a = q * kl_g(d / q)
    else:
        a = (p * (math.log(p) - math.log(q)) if p > 0.0 else 0.0) - d
    # (1-q) g((q-p)/(1-q)) = (1-p) log((1-p)/(1-q)) - (q - p)
    cq = 1.0 - q
    if abs(d) <= 0.1 * cq:
        b = cq * kl_g(-d / cq)
    else:
        b = ((1.0 - p) * (math.log1p(-p) - math.log1p(-q)) if p < 1.0 else 0.0) + d
    return a + b


@njit(cache=True, nogil=True)
def _far_end(p: float, level: float, upper: bool) -> float:
    """A ``q`` beyond the root with ``kl(p, q) >= level``: ``1 - (1-p) e^{-level/(1-p) - 1}``
    (upper) or ``p e^{-level/p - 1}`` (lower), from ``kl(p, q) >= p log(p/q) - p``."""
    if upper:
        return 1.0 - (1.0 - p) * math.exp(-level / (1.0 - p) - 1.0)
    return p * math.exp(-level / p - 1.0)


@njit(cache=True, nogil=True)
def _solve(p: float, level: float, x: float, upper: bool) -> float:
    """Root of ``kl(p, q) = level`` in ``(p, 1)`` (upper) or ``(0, p)`` (lower), ``0 < p < 1``.

    ``h(q) = kl(p, q) - level`` (upper) or ``level - kl(p, q)`` (lower) increases on the
    bracket ``[lo, hi]`` with ``h(lo) <= 0 < h(hi)``: ``[p, 1 - (1-p) e^{-level/(1-p) - 1}]``
    resp. ``[p e^{-level/p - 1}, p]``, by ``kl(p, q) >= p log(p/q) - p`` and its mirror image
    (these ends are within a factor of about ``e`` of the root, measured from 0 or 1, and
    round to 1 resp. 0 only when the root does). ``x`` in the bracket is the starting point.
    The Newton steps are taken in ``s = -log(1 - q)`` (upper, ``q > 1/2``) or ``s = log q``
    (lower), in which ``kl(p, ·)`` is still convex (``d²kl/ds² = p(1-q)/q²``, resp.
    ``q(1-p)/(1-q)²``) and nearly linear close to the end of ``[0, 1]``, so roots like
    ``1 - 1e-30`` or ``1e-30`` take a few steps; for the upper end below ½ in ``q`` itself
    (in ``s``, ``1 - (1 - q) e^{...}`` cannot resolve ``q`` finer than an ulp of 1). A step is
    kept when it lands inside the bracket and at most halves the previous step, else the
    bracket is bisected. Stops when the step or the bracket is down to a few ulps of ``q``,
    when a Newton step from ``|kl - level| <= 1e-10 level`` fails to divide it by 4 (the
    rounding floor of ``kl``), or
    after ``_MAX_ITER`` iterations (bisection alone brings ``[0, 1]`` below 1e-30 by then).
    """
    sign = 1.0 if upper else -1.0
    if upper:
        lo, hi = p, _far_end(p, level, True)
    else:
        lo, hi = _far_end(p, level, False), p
    x = min(max(x, lo), hi)
    dx_old = 2.0 * (hi - lo)
    h_prev = np.inf
    x_prev = x
    newton = False
    for _ in range(_MAX_ITER):
        h = sign * (kl_bernoulli(p, x) - level)
        if h == 0.0:
            return x
        if newton and abs(h_prev) <= 1e-10 * level and abs(h) > 0.25 * abs(h_prev):
            # A Newton step this close to the root divides |h| by far more than 4; one that does
            # not has reached the rounding floor of kl (its terms can cancel): the polish ends.
            return x if abs(h) < abs(h_prev) else x_prev
        h_prev = h
        x_prev = x
        if h > 0.0:
            hi = x
        else:
            lo = x
        if hi - lo <= 2.0 * _EPS * hi:
            break
        bisect, xn = True, x
        if upper and x > p and x <= 0.5:  # Newton in q: dh/dq = (q - p) / (q (1 - q))
            xn = x - h * x * (1.0 - x) / (x - p)
            bisect = False
        elif upper and x > p:    # dh/ds = (q - p) / q with q = 1 - exp(-s)
            xn = 1.0 - (1.0 - x) * math.exp(h * x / (x - p))
            bisect = False
        elif not upper and x < p:  # dh/ds = (p - q) / (1 - q) with q = exp(s)
            xn = x * math.exp(-h * (1.0 - x) / (p - x))
            bisect = False
        if not bisect and abs(xn - x) <= 2.0 * _EPS * x:
            return x  # a Newton step below rounding: converged (the polish does the rest)
        newton = not bisect and lo < xn < hi and abs(xn - x) <= 0.5 * dx_old
        if not newton:
            if upper and hi < 1.0:     # bisect in s = -log(1 - q)
                xn = 1.0 - math.sqrt((1.0 - lo) * (1.0 - hi))
            elif not upper and lo > 0.0:  # bisect in s = log q
                xn = math.sqrt(lo * hi)
            else:
                xn = 0.5 * (lo + hi)
            if not lo < xn < hi:
                xn = 0.5 * (lo + hi)
        dx_old = abs(xn - x)
        if dx_old <= 2.0 * _EPS * xn:
            return xn
        x = xn
    return hi if upper else lo


@njit(cache=True, nogil=True, inline="always")
def polish_bound(div: Callable[[float, float], float], p: float, level: float, x: float,
                 upper: bool, top: float) -> float:
    """The largest (upper) / smallest (lower) double ``q`` with ``div(p, q) <= level`` near ``x``.

    ``div`` is a compiled divergence (:func:`kl_bernoulli`, or
    :func:`bai_lib.kl_poisson.kl_poisson`), increasing away from ``p``; the doubles ``q``
    searched lie in ``[0, top]``, ``top`` being ``1`` for Bernoulli means. ``x`` is a converged
    root; where ``div(p, ·)`` is flat at the scale of an ulp of ``q`` many doubles share its
    value, so the boundary is bracketed by steps doubling from an ulp of ``x`` (``p`` itself
    satisfies the constraint; the end, ``top`` or ``0``, must not) and the bracket is bisected
    down to two adjacent doubles (halving each end first where their sum would overflow).

    Written out in the caller (``inline="always"``), where ``div`` is a fixed function: passed
    across a call, a function argument would keep the caller out of numba's disk cache.
    """
    out = 1.0 if upper else -1.0           # away from p
    step = max(abs(x) * _EPS, 5e-324)
    if div(p, x) <= level:
        inner = x
        while True:
            outer = min(max(x + out * step, 0.0), top)
            if not div(p, outer) <= level:
                break
            inner = outer
            step *= 2.0
    else:
        outer = x
        while True:
            inner = max(x - step, p) if upper else min(x + step, p)
            if div(p, inner) <= level:
                break
            outer = inner
            step *= 2.0
    while True:
        mid = 0.5 * (inner + outer)
        if mid == np.inf:
            mid = 0.5 * inner + 0.5 * outer
        if mid == inner or mid == outer:
            return inner
        if div(p, mid) <= level:
            inner = mid
        else:
            outer = mid


@njit(cache=True, nogil=True)
def shrunk_point(p: float, d: float, sign: float) -> float:
    """``p + sign · d · (1 - 1e-9)`` rounded, one step back towards ``p`` unless rounding moved it
    inwards: the relative ``1e-9`` absorbs the rounding of ``d``, the step that of the sum."""
    d *= 1.0 - 1e-9
    x = p + sign * d
    if x != p and abs(x - p) >= d:
        return np.nextafter(x, p)
    return x


@njit(cache=True, nogil=True)
def kl_inner(p: float, level: float) -> tuple[float, float]:
    """A point on each side of ``p`` inside ``{q : kl(p, q) <= level}``, in closed form.

    ``kl(p, q) = ∫_p^q (t - p) / (t (1 - t)) dt``, so ``kl(p, q) <= (q - p)² / (2 m)`` with
    ``m`` the least value of ``v(t) = t (1 - t)`` between ``p`` and ``q``. With
    ``s = sqrt(2 level v(p))`` and ``m_± = min(v(p), v(p ± s))`` (``v`` is concave, so
    ``m_±`` is its least value on ``[p, p ± s]``), the points ``p ± sqrt(2 level m_±)`` lie in
    ``[p, p ± s]`` and satisfy ``kl(p, q) <= level``. Returned shrunk by a relative ``1e-9`` and
    rounded towards ``p``, they lie in ``[kl_lower(p, level), kl_upper(p, level)]``. As
    ``level → 0`` their distances to ``p`` are those of the exact ends to first order (within
    about 3% at ``p = 0.03``, ``level = 1e-4``). Three square roots, no logarithm or division:
    the cheap first test of a round before the exact ends are solved, and the starting points
    of :func:`kl_upper` and :func:`kl_lower`. Arguments as for :func:`kl_upper` (no checks);
    for a level so large that ``p ± s`` passes an end of ``[0, 1]`` the point on that side is
    ``p`` itself.

    Returns
    -------
    (lower, upper)
    """
    v = p * (1.0 - p)
    if not (v > 0.0 and level < np.inf):
        return p, p
    s = math.sqrt(2.0 * level * v)
    up = min(p + s, 1.0)
    lo = max(p - s, 0.0)
    # m_± = 0 when p ± s reaches an end of [0, 1]; the point is then p itself (this also holds
    # when 2 level overflows to inf, where the product inf · 0 would be nan)
    m_up, m_lo = min(v, up * (1.0 - up)), min(v, lo * (1.0 - lo))
    d_up = math.sqrt(2.0 * level * m_up) if m_up > 0.0 else 0.0
    d_lo = math.sqrt(2.0 * level * m_lo) if m_lo > 0.0 else 0.0
    return shrunk_point(p, d_lo, -1.0), shrunk_point(p, d_up, 1.0)


@njit(cache=True, nogil=True)
def kl_upper(p: float, level: float) -> float:
    """Largest ``q`` in ``[p, 1]`` with ``kl(p, q) <= level``: the KL-UCB index.

    ``kl(p, ·)`` increases on ``[p, 1]`` from 0 to ``kl(p, 1) = +inf`` (``p < 1``), so the
    bound is trivial (exactly ``1.0``) only for ``p == 1`` or ``level == inf``; ``level == 0``
    gives ``p``, and ``p == 0`` the closed form ``1 - exp(-level)`` (rounded to nearest: within
    an ulp of the extreme double, on either side), or the largest double below 1,
    ``1 - 2^-53``, where that rounds to 1 (``level > 37.4``). Otherwise the root of
    ``kl(p, q) = level`` is found by safeguarded Newton (in ``q`` below ½, in
    ``-log(1 - q)`` above, where ``kl`` is convex in either) from the inner point of
    :func:`kl_inner`, then polished to the largest double with ``kl(p, q) <= level``. For every
    finite ``level``, however large (up to the largest double), the result is below 1: it is
    ``1 - 2^-53`` once ``level >= kl(p, 1 - 2^-53)``, in about a microsecond like any other.
    ``nan`` when ``p`` is outside ``[0, 1]`` or ``level`` is negative or ``nan`` (a compiled
    kernel of the simulators: no exception; :func:`kl_interval` checks its arguments).
    """
    if not (0.0 <= p <= 1.0 and level >= 0.0):
        return np.nan
    if p == 1.0 or level == np.inf:
        return 1.0
    if level == 0.0:
        return p
    if p == 0.0:
        # kl(0, 1) = inf: where 1 - e^-level rounds to 1 (level > 37.4), the largest double
        # below 1 (kl(0, 1 - 2^-53) = 53 log 2 = 36.7) is the bound
        return min(-math.expm1(-level), _ONE_BELOW)
    x = _solve(p, level, kl_inner(p, level)[1], True)
    return polish_bound(kl_bernoulli, p, level, x, True, 1.0)


@njit(cache=True, nogil=True)
def kl_lower(p: float, level: float) -> float:
    """Smallest ``q`` in ``[0, p]`` with ``kl(p, q) <= level``: the lower KL confidence bound.

    The mirror image of :func:`kl_upper`: trivial (exactly ``0.0``) only for ``p == 0`` or
    ``level == inf``; ``level == 0`` gives ``p``, ``p == 1`` the closed form ``exp(-level)``
    (rounded to nearest), or the smallest positive double ``5e-324`` where that underflows
    (``level > 745.1``);
    otherwise safeguarded Newton in ``log q`` from the inner point of :func:`kl_inner`, then
    polished to the smallest double with ``kl(p, q) <= level``: ``5e-324`` once
    ``level >= kl(p, 5e-324)``, for any finite ``level``. ``nan`` on a bad argument (compiled
    kernel, as :func:`kl_upper`).
    """
    if not (0.0 <= p <= 1.0 and level >= 0.0):
        return np.nan
    if p == 0.0 or level == np.inf:
        return 0.0
    if level == 0.0:
        return p
    if p == 1.0:
        # kl(1, 0) = inf: where e^-level underflows to 0 (level > 745.1), the smallest positive
        # double (kl(1, 5e-324) = 744.4) is the bound
        return max(math.exp(-level), _SMALLEST)
    x = _solve(p, level, kl_inner(p, level)[0], False)
    return polish_bound(kl_bernoulli, p, level, x, False, 1.0)


@njit(cache=True, nogil=True)
def kl_glr(mean_a: float, n_a: float, mean_b: float, n_b: float) -> float:
    r"""The Bernoulli GLR statistic of "arm ``a`` beats arm ``b``" (0 when ``mean_a <= mean_b``).

    .. math:: Z_{ab} = N_a\,\mathrm{kl}(\hat\mu_a, m) + N_b\,\mathrm{kl}(\hat\mu_b, m),
        \qquad m = \frac{N_a\hat\mu_a + N_b\hat\mu_b}{N_a + N_b},

    the log-likelihood ratio of the empirical means against the best pair of equal means
    (Garivier & Kaufmann, 2016, Section 3.2). For Gaussian arms the same definition gives
    ``(μ̂_a − μ̂_b)² / (2 (σ²/N_a + σ²/N_b))``.

    A compiled kernel of the GLR algorithms' inner loops: its arguments (means in ``[0, 1]``,
    counts ``> 0``) are not checked; ``0`` when ``mean_a`` is ``nan``.
    """
    if not mean_a > mean_b:
        return 0.0
    m = (n_a * mean_a + n_b * mean_b) / (n_a + n_b)
    m = min(max(m, mean_b), mean_a)  # rounding must not carry m outside [mean_b, mean_a]
    return n_a * kl_bernoulli(mean_a, m) + n_b * kl_bernoulli(mean_b, m)


@njit(cache=True, nogil=True)
def _interval(means: np.ndarray, levels: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
    for i in range(means.size):
        lower[i] = kl_lower(means[i], levels[i])
        upper[i] = kl_upper(means[i], levels[i])


def _counts(counts) -> np.ndarray:
    bad = ValueError(f"counts must be integers >= 1 (a scalar or an array), got {counts!r}")
    if isinstance(counts, (str, bytes)) or V.mixed_sequence(counts):
        raise bad
    try:
        raw = np.asarray(counts)
    except (TypeError, ValueError):
        raise bad from None
    if raw.dtype.kind not in "iu" or np.any(raw < 1):
        raise bad
    return raw.astype(np.float64)


def kl_interval(means: ArrayLike, counts: ArrayLike,
                log_level: float) -> tuple[float | np.ndarray, float | np.ndarray]:
    """KL confidence interval ``{q : n kl(μ̂, q) <= L}`` of Bernoulli arms (vectorised).

    Parameters
    ----------
    means : float or array
        Empirical means ``μ̂`` in ``[0, 1]``.
    counts : int or array of int
        Numbers of pulls ``n >= 1`` (broadcast against ``means``).
    log_level : float
        ``L >= 0``: each interval misses the arm's mean with probability at most ``2 e^{-L}``
        (e.g. ``L = log(2/δ)`` for level ``δ``).

    Returns
    -------
    (lower, upper)
        :func:`kl_lower` and :func:`kl_upper` at ``level = L / n``: floats when both
        ``means`` and ``counts`` are scalars, else arrays of their broadcast shape.
    """
    m = V.reals(means, "means", max_ndim=None)
    if np.any(m < 0.0) or np.any(m > 1.0):
        raise ValueError(f"means must lie in [0, 1], got {m.tolist()}")
    return interval_of(m, counts, log_level, _interval)


def interval_of(m: np.ndarray, counts: ArrayLike, log_level: float,
                kernel: Callable[..., None]) -> tuple[float | np.ndarray, float | np.ndarray]:
    """``kernel``'s interval ends of the checked means ``m`` at ``level = L / n``.

    ``counts`` and ``log_level`` are checked here (a ``ValueError`` naming them) and broadcast
    against ``m``; ``kernel(means, levels, lower, upper)`` is a compiled loop filling the two
    flat arrays. Floats when ``m`` and ``counts`` are scalars, else arrays of their broadcast
    shape (the return value of :func:`kl_interval`).
    """
    n = _counts(counts)
    big = V.nonnegative(log_level, "log_level")
    try:
        m, n = np.broadcast_arrays(m, n)
    except ValueError:
        raise ValueError(f"means and counts must broadcast together, got shapes "
                         f"{np.shape(m)} and {np.shape(n)}") from None
    means_flat = np.ascontiguousarray(m, dtype=np.float64).ravel()
    levels = (big / np.ascontiguousarray(n, dtype=np.float64)).ravel()
    lower, upper = np.empty_like(means_flat), np.empty_like(means_flat)
    kernel(means_flat, levels, lower, upper)
    lower, upper = lower.reshape(m.shape), upper.reshape(m.shape)
    if m.ndim == 0:
        return float(lower), float(upper)
    return lower, upper
