"""The characteristic time ``T*(μ)`` and the optimal allocation ``w*(μ)`` of Bernoulli arms
(and of Poisson arms, by the same solver).

Math layer. For Bernoulli arms with means ``μ`` in ``[0, 1]`` and a unique best arm ``b``
(Garivier & Kaufmann, 2016, Section 2.2), with :math:`\\mathrm{kl}` the Bernoulli divergence
of :func:`bai_lib.kl.kl_bernoulli`,

.. math:: T^*(\\mu)^{-1} = \\sup_{w \\in \\Sigma_K} \\min_{j \\ne b}
    \\Big[w_b\\,\\mathrm{kl}(\\mu_b, m_j) + w_j\\,\\mathrm{kl}(\\mu_j, m_j)\\Big],
    \\qquad m_j = \\frac{w_b\\mu_b + w_j\\mu_j}{w_b + w_j},

and any δ-correct algorithm has :math:`E_\\mu[\\tau] \\ge T^*(\\mu)\\log(1/(2.4\\delta))`.
The same holds for any one-parameter exponential family with its own divergence; for Poisson
arms (counts per visitor, means ``λ_i >= 0`` with no upper end) it is that of
:func:`bai_lib.kl_poisson.kl_poisson`, ``q - p + p log(p/q)``
(:func:`poisson_characteristic_time`, :func:`solve_oracle_poisson`).

How it is solved
----------------
Fix :math:`w_b = 1` and write :math:`x_j = w_j/w_b`. For one arm, with
:math:`m(x) = (\\mu_b + x\\mu_j)/(1 + x)` and :math:`t = 1/(1+x)`, the constraint
:math:`g_j(x) = \\mathrm{kl}(\\mu_b, m) + x\\,\\mathrm{kl}(\\mu_j, m)` has

.. math:: g_j' = \\mathrm{kl}(\\mu_j, m),

.. math:: g_j'' = -\\frac{(m - \\mu_j)^2\\,t}{V(m)},

.. math:: g_j''' = -g_j''\\,t\\Big(3 - \\frac{V'(m)(m - \\mu_j)}{V(m)}\\Big)

with :math:`V` the variance function of the family, :math:`V(m) = m(1-m)` for Bernoulli and
:math:`V(m) = m` for Poisson arms (the terms from :math:`m'(x)` cancel in :math:`g_j'`, as
:math:`m` minimises the weighted sum, and :math:`\\partial_m\\mathrm{kl}(p, m) = (m - p)/V(m)`
in either family): :math:`g_j` increases and is concave, from 0 to
:math:`\\mathrm{kl}(\\mu_b, \\mu_j)`, which is :math:`+\\infty` exactly when :math:`\\mu_j = 0`
in both families (for Bernoulli arms with :math:`\\mu_b = 1` it is :math:`-\\log\\mu_j`;
Poisson arms have no such end of the range). At the optimum all constraints share one value
:math:`y`, so :math:`x_j = x_j(y)` solves :math:`g_j(x) = y`, and setting the derivative of
:math:`y/(1 + \\sum_j x_j(y))` to zero (with :math:`x_j' = 1/g_j'`) gives Theorem 5's

.. math:: F(y) = \\sum_{j \\ne b} r_j = 1, \\qquad
    r_j = \\frac{\\mathrm{kl}(\\mu_b, m_j)}{\\mathrm{kl}(\\mu_j, m_j)}
        = \\frac{y}{g_j'} - x_j, \\qquad
    \\frac{dr_j}{dy} = -\\frac{y\\,g_j''}{g_j'^3} > 0,

:math:`F` increasing from 0 to :math:`+\\infty`. Then :math:`w^* \\propto (1, x_j(y^*))` and
:math:`T^*(\\mu) = (1 + \\sum_j x_j(y^*))/y^*`. For two arms :math:`F = 1` says
:math:`\\mathrm{kl}(\\mu_1, m) = \\mathrm{kl}(\\mu_2, m) = 1/T^*`.

Both nested equations are solved by Halley steps on a bracket with a bisection fallback, in
variables chosen so that two Gaussian arms of equal variance would need one step each. Each
:math:`g_j(x) = y` is solved in :math:`t`, in which :math:`g_j` would be linear, the iterate
kept as :math:`x` so that tiny and huge weights keep their relative precision. The outer
equation is parametrised by :math:`x_0`, the weight of the closest arm :math:`j_0` (largest
:math:`\\mu_j`), with :math:`y = g_{j_0}(x_0)`: every :math:`g_j(x) = y` then has a root, also
when some :math:`\\mathrm{kl}(\\mu_b, \\mu_j)` are infinite, and :math:`\\log F` is solved in
:math:`\\log x_0` (it would be :math:`2\\log x_0`). Derivatives are carried as
:math:`y\\,dr/dy` and :math:`y^2 d^2r/dy^2` and all tolerances are relative, so that nothing
depends on the scale of :math:`y` (about :math:`\\mathrm{gap}^2/V(\\mu_b)`, or :math:`\\mu_b`
when the means are tiny). For gaps near ``1e-6`` the accuracy is limited by the rounding of
:math:`m` (relative ``eps/gap``, about ``1e-10`` for Bernoulli means).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V
from .kl import kl_bernoulli
from .kl_poisson import kl_poisson

__all__ = ["solve_oracle_bernoulli", "bernoulli_characteristic_time",
           "bernoulli_allocation_time", "solve_oracle_poisson", "poisson_characteristic_time",
           "poisson_allocation_time"]

_MAX_ITER = 200
_FIRST_TOL = 1e-2    # first pass: about one Halley step per arm (F used for a step only)
_INNER_TOL = 1e-5    # a relative Halley step this small leaves an error of order 1e-15
_FINAL_TOL = 1e-4    # the same for the outer iteration, followed by one last pass


@njit(cache=True, nogil=True)
def _kl(p: float, q: float, poisson: bool) -> float:
    """The divergence of the family: :func:`~bai_lib.kl_poisson.kl_poisson` or
    :func:`~bai_lib.kl.kl_bernoulli`."""
    return kl_poisson(p, q) if poisson else kl_bernoulli(p, q)


@njit(cache=True, nogil=True)
def _mean(a: float, c: float, x: float) -> float:
    """``m(x) = (a + x c)/(1 + x)`` in ``[c, a]``, formed from the nearer end."""
    if x <= 1.0:
        m = a - (a - c) * (x / (1.0 + x))
    else:
        m = c + (a - c) / (1.0 + x)
    return min(max(m, c), a)


@njit(cache=True, nogil=True)
def _guess(a: float, c: float, y: float, poisson: bool) -> float:
    """A start for ``g(x) = y``: the root of ``A x/(x + A/D)``, the curve with ``g(0) = 0``,
    ``g'(0) = D = kl(c, a)`` and ``g(∞) = A = kl(a, c)``; for Bernoulli ``a = 1`` (``D = ∞``)
    ``D`` is the secant slope ``g(x)/x ≈ (1 - c)(1 + log(1/x))`` at ``x ≈ y/(1 - c)``."""
    big = _kl(a, c, poisson) if c > 0.0 else np.inf
    if poisson or a < 1.0:
        slope = _kl(c, a, poisson)
    else:
        slope = (1.0 - c) * (1.0 + max(math.log((1.0 - c) / y), 0.0))
    den = slope * (1.0 - y / big) if big > 0.0 else 0.0
    x = y / den if den > 0.0 else 1.0
    return x if 0.0 < x < 1e300 else 1.0


@njit(cache=True, nogil=True)
def _derivs(a: float, c: float, x: float, m: float, poisson: bool) -> tuple[float, float]:
    """``g''(x)`` and ``g'''(x)`` at ``m = m(x)`` inside the range of means, from the variance
    function: ``V(m) = m``, ``V'(m) = 1`` (Poisson) or ``V(m) = m(1 - m)``, ``V'(m) = 1 - 2m``."""
    t = 1.0 / (1.0 + x)
    mc = (a - c) * t  # m - c
    v, dv = (m, 1.0) if poisson else (m * (1.0 - m), 1.0 - 2.0 * m)
    q = mc / v
    g2 = -mc * q * t
    return g2, -g2 * t * (3.0 - dv * q)


@njit(cache=True, nogil=True)
def _rho(y: float, kc: float, g2: float, g3: float) -> tuple[float, float]:
    """``y dr/dy = -(y/g')^2 g''/g'`` and ``y^2 d^2r/dy^2`` along ``g(x) = y`` (``g' = kc``),
    from ``d(dr/dy)/dy = (dr/dy)/y + 3 (dr/dy)^2 g'/y - y g'''/g'^4``."""
    q = y / kc
    rho = -q * q * (g2 / kc)
    return rho, rho + 3.0 * rho * rho * (kc / y) - q * q * q * (g3 / kc)


@njit(cache=True, nogil=True)
def _predict(mem: np.ndarray, j: int, y: float, x: float) -> tuple[float, bool]:
    """A start for ``g_j(x) = y`` from the last point ``x_e`` evaluated for arm ``j`` (``x`` if
    none), and whether it is the root to about ``1e-15``: the inverse Taylor polynomial
    ``x_e + d1 + d2 + d3``, ``d1 = (y - g(x_e))/g'``, ``d2 = -u d1²/2``, ``u = g''/g'``,
    ``d3 = (3u² - g'''/g') d1³/6`` (degree 1 unless the terms decrease quickly)."""
    xe, ge, g1, g2, g3 = mem[j, 0], mem[j, 1], mem[j, 2], mem[j, 3], mem[j, 4]
    if not 0.0 < g1 < np.inf:
        return x, False
    d1 = (y - ge) / g1
    u = g2 / g1
    d2 = -0.5 * u * d1 * d1
    d3 = (3.0 * u * u - g3 / g1) * d1 * d1 * d1 / 6.0
    if abs(d2) > 0.25 * abs(d1) or abs(d3) > 0.25 * abs(d2):
        xp, done = xe + d1, False
    else:
        xp = xe + d1 + d2 + d3
        done = abs(d3) * abs(d3) <= 1e-15 * xp * abs(d2) and abs(d3) <= 1e-10 * xp
    return (xp, done) if 0.0 < xp < np.inf else (x, False)


@njit(cache=True, nogil=True)
def _solve_arm(a: float, c: float, y: float, x: float, tol: float, mem: np.ndarray,
               j: int, poisson: bool) -> tuple[float, float, float, float]:
    """Root ``x`` of ``g(x) = y`` from ``x > 0``, with ``r``, ``y dr/dy`` and ``y² d²r/dy²``:
    Halley steps in ``t = 1/(1+x)`` on a bracket of ``x``, bisection in ``t`` (``x -> 4x + 1``
    with no upper end) for a step that leaves it or fails to halve the previous one. The last
    step, once at most ``tol x``, is taken without a new evaluation, ``r`` moved by its Taylor
    polynomial of degree 2 and ``y dr/dy`` of degree 1. ``mem[j]`` keeps the last point."""
    top = np.inf if poisson else 1.0  # the upper end of the means
    lo, hi, step_old = 0.0, np.inf, np.inf
    r = rho = drho = 0.0
    x = x if 0.0 < x < np.inf else 1.0
    for _ in range(_MAX_ITER):
        m = _mean(a, c, x)
        ka = kc = g = 0.0
        f = -y if m >= top else np.inf  # a = 1 and 1 - m below 1 ulp: g ~ x log(1/x) ~ 0
        if 0.0 < m < top:                # c = 0 and m below the smallest double: g ~ inf
            ka = _kl(a, m, poisson)
            kc = _kl(c, m, poisson)
            g = ka + x * kc
            f = g - y
        ok = 0.0 < kc < np.inf
        xn = -1.0
        g2 = g3 = 0.0
        if ok:
            g2, g3 = _derivs(a, c, x, m, poisson)
            r = ka / kc
            rho, drho = _rho(y, kc, g2, g3)
            mem[j, 0], mem[j, 1], mem[j, 2], mem[j, 3], mem[j, 4] = x, g, kc, g2, g3
            t = 1.0 / (1.0 + x)
            fr = f / kc
            den = 2.0 - fr * (g2 / kc + 2.0 * t)
            e = 2.0 * fr * t / den if den > 0.0 else fr * t  # relative step in t
            if 1.0 + e > 0.0:
                xn = (x - e) / (1.0 + e)
        if f == 0.0:
            return x, r, rho, drho
        lo, hi = (lo, x) if f > 0.0 else (x, hi)
        bisect = not (lo < xn < hi) or abs(xn - x) > 0.5 * step_old
        if bisect:
            if hi == np.inf:
                xn = 4.0 * lo + 1.0
            elif lo == 0.0:
                xn = hi / (2.0 + hi)
            else:
                xn = (lo + hi + 2.0 * lo * hi) / (2.0 + lo + hi)
            if not lo < xn < hi:  # the bracket is down to adjacent doubles
                return x, r, rho, drho
        step = abs(xn - x)
        if step <= tol * xn and not bisect:
            dx = xn - x
            u = g2 / kc
            q = g / kc
            r1 = -q * u  # dr/dx = -g g''/g'^2
            r2 = -u - q * (g3 / kc) + 2.0 * q * u * u  # d2r/dx2
            return (xn, r + dx * (r1 + 0.5 * dx * r2),
                    rho + (rho + drho) * (kc * dx / y), drho)
        step_old = step
        x = xn
    return x, r, rho, drho


@njit(cache=True, nogil=True)
def _split(lo: float, hi: float) -> float:
    """A point of the bracket ``(lo, hi)`` of ``x_0``: the geometric mean, or a step by 4."""
    if hi == np.inf:
        return 4.0 * lo + 1.0
    return math.sqrt(lo * hi) if lo > 0.0 else 0.25 * hi


@njit(cache=True, nogil=True)
def _solve_oracle(mu: np.ndarray, best: int, w: np.ndarray, y_guess: float,
                  poisson: bool) -> tuple[float, float]:
    """:func:`solve_oracle_bernoulli` (``poisson`` false) or :func:`solve_oracle_poisson`.

    The family enters through its divergence, its variance function (``_derivs``) and the end
    of its range of means (``1`` for Bernoulli arms, where ``m`` can round to 1 when
    ``μ_b = 1``; none for Poisson arms): the Bernoulli path does the arithmetic of a solver
    written for Bernoulli arms alone. The passes are those of :func:`solve_oracle_bernoulli`.
    """
    k = mu.size
    a = mu[best]
    mem = np.empty((k, 5))  # per arm: x, g and three derivatives at its last evaluation
    c0, n0 = -1.0, 0  # the largest other mean and how many arms have it
    for j in range(k):
        mem[j, 2] = np.nan
        if j != best:
            if mu[j] > c0:
                c0, n0 = mu[j], 1
            elif mu[j] == c0:
                n0 += 1
    # y_guess must be below sup g_{j_0}; with all other arms tied the cold start is as good
    warm = y_guess > 0.0 and n0 < k - 1 and (c0 == 0.0 or y_guess < _kl(a, c0, poisson))
    if warm:
        x0 = _solve_arm(a, c0, y_guess, _guess(a, c0, y_guess, poisson), _FIRST_TOL, mem, best,
                        poisson)[0]
    else:
        f = 0.0  # Gaussian arms of equal variance, y small: x_j = x_0 (Δ_0/Δ_j)², r_j = x_j²
        for j in range(k):
            f += ((a - c0) / (a - mu[j])) ** 4 if j != best else 0.0
        x0 = 1.0 / math.sqrt(f)
    top = np.inf if poisson else 1.0  # the upper end of the means
    lo, hi, y, passes = 0.0, np.inf, 0.0, 0
    for it in range(_MAX_ITER):
        m = _mean(a, c0, x0)
        ka = _kl(a, m, poisson) if 0.0 < m < top else 0.0
        kc = _kl(c0, m, poisson) if 0.0 < m < top else 0.0
        y = ka + x0 * kc
        if not (0.0 < kc < np.inf and 0.0 < y < np.inf):
            # m rounds to μ_b (x_0 too small, F < 1) or to μ_{j_0} (too large), as after a far
            # warm start; T* is reported as inf once the bracket is down to that
            lo, hi = (x0, hi) if (m == a or m >= top or y == 0.0) else (lo, x0)
            xn, y = _split(lo, hi), 0.0
            if not lo < xn < hi or it == _MAX_ITER - 1:
                break
            x0 = xn
            continue
        g2, g3 = _derivs(a, c0, x0, m, poisson)
        rho, drho = _rho(y, kc, g2, g3)
        f, s, s2 = n0 * (ka / kc), n0 * rho, n0 * drho
        exact = passes > 0 or warm or n0 == k - 1
        for j in range(k):
            if j != best and mu[j] != c0:
                start = (_predict(mem, j, y, w[j])[0] if passes > 0
                         else _guess(a, mu[j], y, poisson))
                xj, rj, rhoj, drhoj = _solve_arm(a, mu[j], y, start,
                                                 _INNER_TOL if exact else _FIRST_TOL, mem, j,
                                                 poisson)
                w[j] = xj
                f += rj
                s += rhoj
                s2 += drhoj
        passes += 1
        if exact and f == 1.0:
            break
        if exact:
            lo, hi = (lo, x0) if f > 1.0 else (x0, hi)
        # Halley on phi = log F in sigma = log x_0; y1 = (dy/dsigma)/y, y2 = (d2y/dsigma2)/y
        xn = -1.0
        y1 = kc * x0 / y
        p1 = s * y1 / f if 0.0 < f < np.inf and 0.0 < s < np.inf else 0.0
        if p1 > 0.0:
            y2 = g2 * x0 * (x0 / y) + y1
            phi = math.log(f)
            p2 = (s2 * y1 * y1 + s * y2) / f - p1 * p1
            den = 2.0 * p1 * p1 - phi * p2
            ds = -2.0 * phi * p1 / den if den > 0.0 else -phi / p1
            if abs(ds) < np.inf:
                xn = x0 * math.exp(max(min(ds, 5.0), -5.0))
        if not lo < xn < hi:
            xn = _split(lo, hi)
            if not lo < xn < hi:
                break
        elif exact and abs(xn - x0) <= _FINAL_TOL * x0:
            x0 = xn
            m = _mean(a, c0, x0)
            y = _kl(a, m, poisson) + x0 * _kl(c0, m, poisson)
            for j in range(k):
                if j != best and mu[j] != c0:
                    xj, done = _predict(mem, j, y, w[j])
                    if not done:
                        xj = _solve_arm(a, mu[j], y, xj, _FINAL_TOL, mem, j, poisson)[0]
                    w[j] = xj
            break
        if (hi < np.inf and hi - lo <= 1e-14 * hi) or it == _MAX_ITER - 1:
            break
        x0 = xn
    total = 1.0
    for j in range(k):
        if j != best:
            if mu[j] == c0:
                w[j] = x0
            total += w[j]
    w[best] = 1.0
    for j in range(k):
        w[j] /= total
    return (total / y if y > 0.0 else np.inf), y


@njit(cache=True, nogil=True)
def solve_oracle_bernoulli(mu: np.ndarray, best: int, w: np.ndarray,
                           y_guess: float) -> tuple[float, float]:
    """Optimal weights for Bernoulli means ``mu`` with best arm ``best``.

    Writes ``w*`` into ``w`` and returns ``(T_star, y)``, ``y`` the common value of the
    constraints with ``w_best = 1``; pass ``y`` back as ``y_guess`` to warm-start the next
    solve (``y_guess <= 0`` starts cold). The caller guarantees ``0 <= mu <= 1`` and
    ``mu[best] > mu[j]`` for every ``j != best``; ``T_star`` is ``inf`` when the gaps are
    out of floating-point range.

    A cold start takes about one Halley step per arm from ``_guess`` in its first pass
    (an inexact ``F``, used for a step but not for the bracket); a warm start begins at the
    ``x_0`` of ``y_guess`` (one Halley step; ignored when all other arms are tied) and
    converges its first pass. Later passes start each arm at ``_predict``. Once an
    outer Halley step (``log F`` in ``log x_0``) is at most ``1e-4`` relative it is taken
    (cubic convergence leaves an error of order ``1e-12`` or less, and ``T*``, stationary in
    ``x_0``, the square of that) and every ``x_j`` follows to the new ``y`` by ``_predict``
    or one Halley step. ``w`` holds the ``x_j`` while iterating (``x_0`` for ties with ``j_0``).
    """
    return _solve_oracle(mu, best, w, y_guess, False)


@njit(cache=True, nogil=True)
def solve_oracle_poisson(mu: np.ndarray, best: int, w: np.ndarray,
                         y_guess: float) -> tuple[float, float]:
    """Optimal weights for Poisson means ``mu`` with best arm ``best``: the contract of
    :func:`solve_oracle_bernoulli`, for finite means ``mu >= 0`` (guaranteed by the caller,
    with ``mu[best]`` above all others).

    The divergence is :func:`bai_lib.kl_poisson.kl_poisson` and the variance function
    ``V(m) = m``; an arm with mean 0 has ``kl(μ_b, 0) = inf``, so its constraint has no upper
    limit, as for a Bernoulli arm with mean 0. ``(T_star, y)`` with ``w*`` written into ``w``;
    ``y`` warm-starts the next solve (``y_guess <= 0``: a cold start), by the same passes.
    """
    return _solve_oracle(mu, best, w, y_guess, True)


def _instance(means, poisson: bool) -> tuple[np.ndarray, int]:
    """Checked ``(mu, best)`` of a Bernoulli or Poisson instance with a unique best arm."""
    mu = V.reals(means, "means")
    if mu.ndim != 1 or mu.size < 2:
        raise ValueError(f"means must be a finite vector of length >= 2, got {means!r}")
    if poisson and np.any(mu < 0.0):
        raise ValueError(f"means must be >= 0 (Poisson arms), got {mu.tolist()}")
    if not poisson and (np.any(mu < 0.0) or np.any(mu > 1.0)):
        raise ValueError(f"means must lie in [0, 1] (Bernoulli arms), got {mu.tolist()}")
    best = int(np.argmax(mu))
    if np.count_nonzero(mu == mu[best]) > 1:
        raise ValueError("means: the best arm must be unique (with a tie, T* is infinite)")
    gap = float(mu[best] - np.max(np.delete(mu, best)))
    if gap < 64 * np.spacing(mu[best]):  # m in (μ_j, μ_b) would be a few doubles apart
        raise ValueError(f"means: the gap to the best arm, {gap:.3g}, is under 64 ulps of "
                         f"{float(mu[best])!r}: T* is out of floating-point precision")
    return np.ascontiguousarray(mu), best


def _out_of_range(mu: np.ndarray, best: int) -> ValueError:
    gap = float(mu[best] - np.max(np.delete(mu, best)))
    return ValueError(f"means: T* is out of floating-point range (the smallest gap to the "
                      f"best arm is {gap:.3g}, best mean {float(mu[best]):.3g})")


def _allocation_time(means: ArrayLike, weights: ArrayLike, poisson: bool) -> float:
    """``T(w, μ)`` of Bernoulli or Poisson arms, checked."""
    mu, best = _instance(means, poisson)
    w = V.allocation(weights, mu.size, best)
    if np.count_nonzero(w == 0):
        raise ValueError("weights: every arm must get a positive weight (else T is infinite)")
    a, wb, cost = mu[best], w[best], np.inf
    for j in np.flatnonzero(np.arange(mu.size) != best):
        m = min(max((wb * a + w[j] * mu[j]) / (wb + w[j]), mu[j]), a)  # rounded into [μ_j, μ_b]
        cost = min(cost, float(wb * _kl(a, m, poisson) + w[j] * _kl(mu[j], m, poisson)))
    t = 1.0 / cost if cost > 0 else math.inf
    if not math.isfinite(t):
        raise _out_of_range(mu, best)
    return t


def _characteristic_time(means: ArrayLike, poisson: bool) -> tuple[float, np.ndarray]:
    """``(T_star, w_star)`` of Bernoulli or Poisson arms, checked."""
    mu, best = _instance(means, poisson)
    w = np.empty(mu.size)
    t_star, _ = _solve_oracle(mu, best, w, 0.0, poisson)
    if not (math.isfinite(t_star) and t_star > 0 and np.all(np.isfinite(w))):
        raise _out_of_range(mu, best)
    return float(t_star), w


def bernoulli_allocation_time(means: ArrayLike, weights: ArrayLike) -> float:
    """``T(w, μ)``: the characteristic time of the fixed allocation ``w`` (Bernoulli arms).

    .. math:: T(w, \\mu)^{-1} = \\min_{j \\ne b}
        \\Big[w_b\\,\\mathrm{kl}(\\mu_b, m_j) + w_j\\,\\mathrm{kl}(\\mu_j, m_j)\\Big],
        \\qquad m_j = \\frac{w_b\\mu_b + w_j\\mu_j}{w_b + w_j},

    so that :math:`T^*(\\mu) = \\min_w T(w, \\mu)`, attained at ``w_star``.

    Parameters
    ----------
    means : array_like, shape (k,)
        As for :func:`bernoulli_characteristic_time`.
    weights : array_like, shape (k,)
        Non-negative proportions summing to 1 (to ``1e-9``), positive on the best arm.
    """
    return _allocation_time(means, weights, False)


def bernoulli_characteristic_time(means: ArrayLike) -> tuple[float, np.ndarray]:
    """``(T_star, w_star)``: the characteristic time and optimal allocation of Bernoulli arms.

    Parameters
    ----------
    means : array_like, shape (k,)
        Arm means in ``[0, 1]`` (0 and 1 included), ``k >= 2``, with a unique best arm
        (otherwise ``T*`` is infinite).

    Returns
    -------
    T_star : float
        :math:`T^*(\\mu)`, so that :math:`E_\\mu[\\tau] \\ge T^*(\\mu)\\log(1/(2.4\\delta))`.
    w_star : ndarray, shape (k,)
        The allocation attaining the supremum (sums to 1, positive).
    """
    return _characteristic_time(means, False)


def poisson_allocation_time(means: ArrayLike, weights: ArrayLike) -> float:
    """``T(w, λ)``: the characteristic time of the fixed allocation ``w`` of Poisson arms.

    The formula of :func:`bernoulli_allocation_time` with the Poisson divergence
    :func:`bai_lib.kl_poisson.kl_poisson`: :math:`T(w, \\lambda)^{-1}` is the least over
    :math:`j \\ne b` of :math:`w_b\\,\\mathrm{kl}(\\lambda_b, m_j) +
    w_j\\,\\mathrm{kl}(\\lambda_j, m_j)`, ``m_j`` the ``w``-weighted mean of ``λ_b`` and
    ``λ_j``; :math:`T^*(\\lambda) = \\min_w T(w, \\lambda)`.

    Parameters
    ----------
    means : array_like, shape (k,)
        As for :func:`poisson_characteristic_time`.
    weights : array_like, shape (k,)
        Proportions ``>= 0`` summing to 1 (to ``1e-9``), positive on every arm.
    """
    return _allocation_time(means, weights, True)


def poisson_characteristic_time(means: ArrayLike) -> tuple[float, np.ndarray]:
    """``(T_star, w_star)``: the characteristic time and optimal allocation of Poisson arms.

    The problem of the module's docstring with the Poisson divergence ``q - p + p log(p/q)``
    (:func:`bai_lib.kl_poisson.kl_poisson`) in place of the Bernoulli one, solved by the same
    iteration.

    Parameters
    ----------
    means : array_like, shape (k,)
        Arm means ``λ_i >= 0`` (finite; 0 included), ``k >= 2``, the largest one unique (with
        a tie ``T*`` is infinite) and ahead of the next by at least 64 ulps.

    Returns
    -------
    T_star : float
        :math:`T^*(\\lambda)`: any δ-correct algorithm has
        :math:`E_\\lambda[\\tau] \\ge T^*(\\lambda)\\log(1/(2.4\\delta))`.
    w_star : ndarray, shape (k,)
        The optimal proportions (positive, summing to 1).

    Raises
    ------
    ValueError
        Naming ``means``: a negative, infinite or ``nan`` mean, fewer than two arms, a tie at
        the top, or ``T*`` out of floating-point range.
    """
    return _characteristic_time(means, True)
