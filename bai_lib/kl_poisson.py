"""Poisson Kullback-Leibler divergence and the KL confidence bounds built on it.

Math layer. For Poisson arms (arm ``i`` pays a count drawn from ``Poisson(λ_i)``, ``λ_i >= 0``)
the divergence of the distribution of mean ``p`` from that of mean ``q`` is

.. math:: \\mathrm{kl}(p, q) = q - p + p\\log\\frac{p}{q}

(with ``0 log 0 = 0``), the rate of Chernoff's bound for the empirical mean ``μ̂_n`` of
``n`` draws: ``P(μ̂_n >= q) <= exp(-n kl(q, μ))`` for ``q > μ``, and
``P(μ̂_n <= q) <= exp(-n kl(q, μ))`` for ``q < μ`` (the log-moment generating function of
``Poisson(μ)`` is ``μ (e^θ - 1)``, whose Legendre transform is ``kl(·, μ)``). The interval

.. math:: \\{q \\ge 0 : n\\,\\mathrm{kl}(\\hat\\mu_n, q) \\le L\\}

therefore misses ``μ`` with probability at most ``2 e^{-L}``. Unlike the Bernoulli interval of
:mod:`bai_lib.kl` it has no upper end of the parameter range to stop at: its upper end grows
like ``L/n`` when ``L/n`` is large against ``μ̂_n``. As ``kl(p, q) = ∫_p^q (t - p)/t dt``,
with the variance function ``v(t) = t`` of the family in the denominator, the interval has
half-width about ``sqrt(2 μ̂_n L / n)`` when ``L/n`` is small against ``μ̂_n``: the Gaussian
one for the variance ``μ̂_n``.

:func:`kl_poisson`, :func:`kl_poisson_upper`, :func:`kl_poisson_lower`,
:func:`kl_poisson_inner` and :func:`kl_poisson_glr` are compiled scalar functions for the
simulators, with the contracts of their Bernoulli counterparts in :mod:`bai_lib.kl` (``nan`` on
an argument outside the domain instead of an exception); :func:`kl_poisson_interval` evaluates
both ends for arrays and checks its arguments.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V
from .kl import interval_of, kl_g, polish_bound, shrunk_point

__all__ = ["kl_poisson", "kl_poisson_upper", "kl_poisson_lower", "kl_poisson_inner",
           "kl_poisson_interval", "kl_poisson_glr"]

_EPS = 2.220446049250313e-16
_SMALLEST = 5e-324                   # the smallest positive (subnormal) double
_BIGGEST = sys.float_info.max        # the largest double, about 1.8e308
_SQRT2 = math.sqrt(2.0)
_MAX_ITER = 100


@njit(cache=True, nogil=True)
def kl_poisson(p: float, q: float) -> float:
    """Kullback-Leibler divergence ``kl(p, q) = KL(Poisson(p) || Poisson(q))`` in nats.

    ``q - p + p log(p/q)`` with ``0 log 0 = 0``: ``0`` when ``p == q``, ``q`` when ``p == 0``,
    ``+inf`` when ``p > 0`` and ``q`` is ``0`` or ``+inf``, ``nan`` when ``p`` is negative,
    infinite or ``nan`` or ``q`` negative or ``nan``. For ``|p - q| < q/10`` it is evaluated as
    ``q g((p - q)/q)`` with ``g(x) = (1 + x) log(1 + x) - x`` summed as a series (no logarithm,
    nothing cancels: a relative error of a few ulps however close ``p`` and ``q`` are);
    otherwise as ``q (1 - r) + p log r`` with ``r = p/q`` rounded, an expression stationary in
    ``r`` at the exact ratio, so that the rounding of ``r`` does not count (the two terms
    cancel to about 1/20 where ``|p - q|`` is just above ``q/10``: a relative error of up to
    about 30 ulps there, fewer further out), and with ``log p - log q`` where ``r`` overflows
    or underflows.

    A compiled kernel of the simulators, called for every sample in their loops: bad input
    gives ``nan``, not an exception.
    """
    if not (0.0 <= p < np.inf and q >= 0.0):
        return np.nan
    d = p - q
    if abs(d) < 0.1 * q:     # q > 0 finite; includes p == q > 0
        return q * kl_g(d / q)
    if p == 0.0:
        return q
    if q == 0.0 or q == np.inf:
        return np.inf
    r = p / q
    if 0.0 < r < np.inf:
        # q (1 - r) + p log r is stationary in r at p/q: the rounding of r costs nothing
        return q * (1.0 - r) + p * math.log(r)
    return p * (math.log(p) - math.log(q)) - d


@njit(cache=True, nogil=True)
def _newton(p: float, level: float, x: float, upper: bool) -> float:
    """Newton's iteration for ``kl(p, q) = level`` from ``x`` with ``kl(p, x) >= level``.

    Upper (``x > p``): in ``q``, where ``kl(p, ·)`` is convex and increasing
    (``d kl/dq = (q - p)/q``); lower (``x < p``): in ``s = log q``, where it is convex and
    decreasing (``d kl/ds = q - p``, ``d² kl/ds² = q``). Started on the far side of the root, the
    iterates of a convex function move monotonically towards it (each tangent lies below the
    graph) and converge quadratically near it. Stops when ``kl(p, x) <= level`` (the root
    crossed by rounding), when a step no longer moves ``x`` by more than two ulps, or after
    ``_MAX_ITER`` steps; the polish of ``polish_bound`` does the rest.
    """
    for _ in range(_MAX_ITER):
        f = kl_poisson(p, x) - level
        if not f > 0.0:       # kl(p, x) > level > 0 below: x != p
            return x
        if upper:
            xn = x - f * (x / (x - p))
        else:
            xn = x * math.exp(f / (p - x))
        if not (xn < x if upper else xn > x):
            return x
        if abs(xn - x) <= 2.0 * _EPS * x:
            return xn
        x = xn
    return x


@njit(cache=True, nogil=True)
def kl_poisson_inner(p: float, level: float) -> tuple[float, float]:
    """A point on each side of ``p`` inside ``{q >= 0 : kl(p, q) <= level}``, in closed form.

    ``kl(p, q) = ∫_p^q (t - p)/t dt <= (q - p)² / (2 m)`` with ``m`` the least value of
    ``v(t) = t`` between ``p`` and ``q``. As ``v`` increases, ``m = p`` above ``p``, so with
    ``s = sqrt(2 level p)`` the point ``p + s`` is inside; below ``p``, ``m >= p - s`` on
    ``[p - s, p]``, so ``p - sqrt(2 level (p - s))`` is inside when ``p > s`` (else the point
    on that side is ``p`` itself). Returned shrunk by a relative ``1e-9`` and rounded towards
    ``p``, they lie in ``[kl_poisson_lower(p, level), kl_poisson_upper(p, level)]``; as
    ``level → 0`` their distances to ``p`` are those of the exact ends to first order. Two or
    three square roots, no logarithm: the cheap first test of a round before the exact ends
    are solved. For ``p == 0`` the upper point is the exact end ``level`` (``kl(0, q) = q``).
    Arguments as for :func:`kl_poisson_upper`, unchecked; an infinite ``level`` gives
    ``(p, p)``.

    Returns
    -------
    (lower, upper)
    """
    if not (p > 0.0 and level < np.inf):
        return (p, level) if p == 0.0 and level < np.inf else (p, p)
    root = math.sqrt(level)
    s = _SQRT2 * root * math.sqrt(p)   # sqrt(2 level p) without overflow in the product
    d_lo = _SQRT2 * root * math.sqrt(p - s) if p > s else 0.0
    return shrunk_point(p, d_lo, -1.0), shrunk_point(p, s, 1.0)


@njit(cache=True, nogil=True)
def kl_poisson_upper(p: float, level: float) -> float:
    """Largest ``q >= p`` with ``kl(p, q) <= level``: the Poisson KL-UCB index.

    ``kl(p, ·)`` increases on ``[p, ∞)`` from 0 to ``+inf`` with no end of the range in
    between, so the bound is ``+inf`` only for ``level == inf``; ``level == 0`` gives ``p``,
    and ``p == 0`` the closed form ``level`` itself (``kl(0, q) = q``). Otherwise Newton's
    iteration in ``q`` descends to the root from
    ``p + level + sqrt(level (level + 2p))``, where ``(q - p)²/(2q) = level`` (a lower bound of
    ``kl(p, q)``), and the result is polished to the largest double with
    ``kl(p, q) <= level``. The root is about ``level`` once ``level`` is large against ``p``
    (``kl(p, q) = q - p log q + O(p)``): for every finite ``level`` the answer comes in about
    a microsecond, and it is finite: the largest double, about ``1.8e308``, once
    ``level >= kl(p, 1.8e308)`` (a ``level`` near the largest double).
    ``nan`` when ``p`` is negative, infinite or ``nan`` or ``level`` is negative or ``nan``
    (a compiled kernel of the simulators: no exception; :func:`kl_poisson_interval` checks its
    arguments).
    """
    if not (0.0 <= p < np.inf and level >= 0.0):
        return np.nan
    if level == np.inf:
        return np.inf
    if level == 0.0:
        return p
    if p == 0.0:
        return level
    hi = p + level + math.sqrt(level) * math.sqrt(level + 2.0 * p)
    if not hi < _BIGGEST:
        if kl_poisson(p, _BIGGEST) <= level:
            return _BIGGEST
        hi = _BIGGEST
    return polish_bound(kl_poisson, p, level, _newton(p, level, hi, True), True, _BIGGEST)


@njit(cache=True, nogil=True)
def kl_poisson_lower(p: float, level: float) -> float:
    """Smallest ``q`` in ``[0, p]`` with ``kl(p, q) <= level``: the lower KL confidence bound.

    Trivial (exactly ``0.0``) only for ``p == 0`` or ``level == inf``, as ``kl(p, 0) = +inf``
    for ``p > 0``; ``level == 0`` gives ``p``. Otherwise Newton's iteration in ``log q`` climbs
    to the root from the larger of ``p - sqrt(2 level p)`` and ``p e^{-level/p - 1}`` (where
    ``(p - q)²/(2p)`` resp. ``p log(p/q) - p``, both lower bounds of ``kl(p, q)``, reach
    ``level``; the first is close for ``level`` small against ``p``, the second, within a
    factor ``e`` of the root, for ``level`` large), and the result is polished to the smallest
    double with ``kl(p, q) <= level``. The root is about ``p e^{-level/p - 1}``, which
    underflows for large ``level/p``: the result is then the smallest positive double
    ``5e-324``, once ``level >= kl(p, 5e-324)`` (``743.4`` for ``p = 1``), for any finite
    ``level``. ``nan`` on a bad argument (compiled kernel, as :func:`kl_poisson_upper`).
    """
    if not (0.0 <= p < np.inf and level >= 0.0):
        return np.nan
    if p == 0.0 or level == np.inf:
        return 0.0
    if level == 0.0:
        return p
    near = p - _SQRT2 * math.sqrt(level) * math.sqrt(p)
    far = math.exp(math.log(p) - level / p - 1.0)
    x = max(near, far, _SMALLEST)
    return polish_bound(kl_poisson, p, level, _newton(p, level, x, False), False, _BIGGEST)


@njit(cache=True, nogil=True)
def kl_poisson_glr(mean_a: float, n_a: float, mean_b: float, n_b: float) -> float:
    r"""The Poisson GLR statistic of "arm ``a`` beats arm ``b``" (0 when ``mean_a <= mean_b``).

    .. math:: Z_{ab} = N_a\,\mathrm{kl}(\hat\mu_a, m) + N_b\,\mathrm{kl}(\hat\mu_b, m),
        \qquad m = \frac{N_a\hat\mu_a + N_b\hat\mu_b}{N_a + N_b},

    with :math:`\mathrm{kl}` the Poisson divergence (:func:`kl_poisson`): the log-likelihood
    ratio of the empirical means against the best pair of equal means, the common mean ``m``
    maximising the likelihood of both samples. As :func:`bai_lib.kl.kl_glr`, a compiled
    kernel of the GLR loops whose arguments (means ``>= 0``, counts ``> 0``) are not checked;
    ``0`` when ``mean_a`` is ``nan``.
    """
    if not mean_a > mean_b:
        return 0.0
    m = (n_a * mean_a + n_b * mean_b) / (n_a + n_b)
    m = min(max(m, mean_b), mean_a)  # rounding must not carry m outside [mean_b, mean_a]
    return n_a * kl_poisson(mean_a, m) + n_b * kl_poisson(mean_b, m)


@njit(cache=True, nogil=True)
def _interval(means: np.ndarray, levels: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
    for i in range(means.size):
        lower[i] = kl_poisson_lower(means[i], levels[i])
        upper[i] = kl_poisson_upper(means[i], levels[i])


def kl_poisson_interval(means: ArrayLike, counts: ArrayLike,
                        log_level: float) -> tuple[float | np.ndarray, float | np.ndarray]:
    """KL confidence interval ``{q >= 0 : n kl(μ̂, q) <= L}`` of Poisson arms (vectorised).

    Parameters
    ----------
    means : float or array
        Empirical means ``μ̂ >= 0`` (finite).
    counts : int or array of int
        Numbers of draws ``n >= 1`` (broadcast against ``means``).
    log_level : float
        ``L >= 0`` (finite): each interval misses the arm's mean with probability at most
        ``2 e^{-L}`` (e.g. ``L = log(2/δ)`` for level ``δ``).

    Returns
    -------
    (lower, upper)
        :func:`kl_poisson_lower` and :func:`kl_poisson_upper` at ``level = L / n``: floats
        when both ``means`` and ``counts`` are scalars, else arrays of their broadcast shape.

    Raises
    ------
    ValueError
        Naming ``means``, ``counts`` or ``log_level``, or saying they do not broadcast.
    """
    m = V.reals(means, "means", max_ndim=None)
    if np.any(m < 0.0):
        raise ValueError(f"means must be >= 0 (Poisson means), got {m.tolist()}")
    return interval_of(m, counts, log_level, _interval)
