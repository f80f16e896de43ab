"""The characteristic time ``T*(μ)`` and the optimal allocation ``w*(μ)`` of Gaussian arms.

Math layer. For arms with means ``μ`` and known noise standard deviations ``σ_i`` (Garivier &
Kaufmann, 2016, Section 2; Jourdan et al. for unequal variances), with ``1`` the best arm,

.. math:: T^*(\\mu)^{-1} = \\sup_{w \\in \\Sigma_K} \\min_{j \\ne 1}
    \\frac{(\\mu_1 - \\mu_j)^2}{2(\\sigma_1^2/w_1 + \\sigma_j^2/w_j)},

and any δ-correct algorithm has :math:`E_\\mu[\\tau] \\ge T^*(\\mu)\\log(1/(2.4\\delta))`.

How it is solved
----------------
At the optimum every constraint is active. Fix :math:`w_1 = 1` and write the common value of
the constraints as :math:`y = u/\\sigma_1^2`; with :math:`a_j = (\\mu_1-\\mu_j)^2/2`, equality
gives :math:`w_j = x_j(u) = (\\sigma_j^2/\\sigma_1^2)\\,u/(a_j - u)` for
:math:`u \\in (0, \\min_j a_j)`. Setting the derivative of :math:`y/(1+\\sum_j x_j)` to zero
gives the optimality condition

.. math:: h(u) = \\sigma_1^2 \\sum_{j \\ne 1} x_j(u)^2/\\sigma_j^2 - 1 = 0,

(for equal variances, the condition :math:`\\sum_j w_j^2 = w_1^2` of Garivier & Kaufmann),
with :math:`h` increasing and convex from :math:`-1` to :math:`+\\infty`. :func:`solve_oracle`
finds the root by Halley's method safeguarded by bisection, warm-started from a previous root
when one is given (Track-and-Stop re-solves after every sample), then
:math:`w^* \\propto (1, x_2, \\dots, x_K)` and :math:`T^* = (1 + \\sum_j x_j)\\,\\sigma_1^2/u`.
For two arms this is :math:`w_1^* = \\sigma_1/(\\sigma_1+\\sigma_2)` and
:math:`T^* = 2(\\sigma_1+\\sigma_2)^2/\\Delta^2`.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V
from .stopping import GLR_THRESHOLDS, glr_beta

__all__ = ["characteristic_time", "allocation_time", "glr_time", "solve_oracle",
           "check_variances"]


def check_variances(var: np.ndarray, name: str = "noise_stds") -> None:
    """Refuse noise levels whose variance ratios :func:`solve_oracle` cannot represent: it
    forms every ``var_j / var_best``, which must be a finite double."""
    lo, hi = float(np.min(var)), float(np.max(var))
    if not math.isfinite(hi / lo):
        raise ValueError(f"{name}: the largest variance is {hi:.3g} and the smallest {lo:.3g}; "
                         "their ratio overflows double precision, and the oracle allocation "
                         "(T*, Track-and-Stop) forms it")


@njit(cache=True, nogil=True)
def solve_oracle(mu: np.ndarray, var: np.ndarray, best: int, w: np.ndarray,
                 u_guess: float) -> tuple[float, float]:
    """Optimal weights for means ``mu`` and variances ``var`` with best arm ``best``.

    Writes ``w*`` into ``w`` and returns ``(T_star, u)``; pass ``u`` back as ``u_guess`` to
    warm-start the next solve (``u_guess <= 0`` starts cold). The caller guarantees that
    ``mu[best] > mu[j]`` for every ``j != best``. Iterations stop when ``|h| <= 1e-12``, when a
    Halley step changes ``u`` by at most ``1e-6 u`` (cubic convergence leaves an error far
    below that), or when the bisection bracket is narrower than ``1e-12 u``; at most 200.
    """
    k = mu.size
    s1 = var[best]
    inv_s1 = 1.0 / s1
    m = mu[best]
    a_min = np.inf
    for j in range(k):
        if j != best:
            d = m - mu[j]
            a = 0.5 * d * d  # a_j = (mu_best - mu_j)^2 / 2
            if a < a_min:
                a_min = a
    # The iteration runs on a_j / scale and u / scale with scale the power of two next to
    # a_min: exact in floating point (the same bits as unscaled arithmetic), and the
    # derivatives, which scale like 1/a and 1/a^2, can neither underflow nor overflow.
    scale = math.ldexp(1.0, math.frexp(a_min)[1])
    inv_scale = 1.0 / scale
    u_guess = u_guess * inv_scale
    a_min = a_min * inv_scale
    lo = 0.0
    hi = a_min
    u = u_guess if 0.0 < u_guess < a_min else 0.5 * a_min
    for _ in range(200):
        h = 0.0
        dh = 0.0
        d2h = 0.0
        for j in range(k):
            if j != best:
                d = m - mu[j]
                a = 0.5 * d * d * inv_scale
                inv = 1.0 / (a - u)
                r = u * inv  # x_j = (var_j / var_best) r
                dr = a * inv * inv  # dr/du
                q = var[j] * r
                h += q * r
                dh += q * dr
                d2h += var[j] * (dr * dr + 2.0 * r * dr * inv)
        h = h * inv_s1 - 1.0
        dh *= 2.0 * inv_s1
        d2h *= 2.0 * inv_s1
        if h > 0.0:
            hi = u
        else:
            lo = u
        if abs(h) <= 1e-12:
            break
        step = u - 2.0 * h * dh / (2.0 * dh * dh - h * d2h)  # Halley
        if not lo < step < hi:
            step = 0.5 * (lo + hi)
        elif abs(step - u) <= 1e-6 * u:
            u = step  # cubic convergence: the error left is far below 1e-12
            break
        u = step
        if hi - lo <= 1e-12 * hi:
            break
    total = 1.0
    for j in range(k):
        if j != best:
            d = m - mu[j]
            w[j] = var[j] * inv_s1 * u / (0.5 * d * d * inv_scale - u)
            total += w[j]
    w[best] = 1.0
    inv_total = 1.0 / total
    for j in range(k):
        w[j] *= inv_total
    u = u * scale
    return total * s1 / u, u


def _instance(means, noise_stds):
    """Checked ``(mu, var, best)`` of an instance with a unique best arm."""
    mu = V.reals(means, "means")
    if mu.ndim != 1 or mu.size < 2:
        raise ValueError(f"means must be a finite vector of length >= 2, got {means!r}")
    sig = V.noise_stds(noise_stds, mu.size)
    best = int(np.argmax(mu))
    if np.count_nonzero(mu == mu[best]) > 1:
        raise ValueError("means: the best arm must be unique (with a tie, T* is infinite)")
    var = np.ascontiguousarray(sig**2)
    if (not np.all(np.isfinite(var)) or np.any(var == 0)
            or not np.isfinite(np.max((mu[best] - mu) ** 2))):
        raise ValueError("means and noise_stds are out of floating-point range")
    check_variances(var)
    gap2 = (mu[best] - np.delete(mu, best)) ** 2
    if float(np.min(gap2)) < sys.float_info.min:
        raise ValueError(f"means: the smallest gap to the best arm, "
                         f"{float(mu[best] - np.max(np.delete(mu, best))):.3g}, is too small: "
                         "its square underflows double precision (T* is then beyond range)")
    return mu, var, best


def allocation_time(means: ArrayLike, noise_stds: ArrayLike, weights: ArrayLike) -> float:
    """``T(w, μ)``: the characteristic time of the fixed allocation ``w``.

    .. math:: T(w, \\mu)^{-1} = \\min_{j \\ne 1}
        \\frac{(\\mu_1 - \\mu_j)^2}{2(\\sigma_1^2/w_1 + \\sigma_j^2/w_j)},

    so that a rule sampling the arms in the proportions ``w`` and stopping with the GLR test
    needs about :math:`T(w, \\mu)\\log(1/\\delta)` samples; :math:`T^*(\\mu) = \\min_w T(w, \\mu)`.
    For the uniform allocation and equal noise, :math:`T = 4\\sigma^2 k / \\Delta_{\\min}^2`.

    Parameters
    ----------
    means, noise_stds
        As for :func:`~bai_lib.characteristic_time`.
    weights : array_like, shape (k,)
        Non-negative proportions summing to 1 (to ``1e-9``), positive on the best arm.
    """
    mu, var, best = _instance(means, noise_stds)
    w = V.allocation(weights, mu.size, best)
    others = np.arange(mu.size) != best
    with np.errstate(divide="ignore"):
        cost = (mu[best] - mu[others]) ** 2 / (2 * (var[best] / w[best] + var[others] / w[others]))
    if np.any(cost == 0):
        raise ValueError("weights: every arm must get a positive weight (else T is infinite)")
    return float(1.0 / cost.min())


def characteristic_time(means: ArrayLike, noise_stds: ArrayLike = 1.0) -> tuple[float, np.ndarray]:
    """``(T_star, w_star)``: the characteristic time and optimal allocation of a Gaussian bandit.

    Parameters
    ----------
    means : array_like, shape (k,)
        Arm means ``μ``, ``k >= 2``, with a unique best arm (otherwise ``T*`` is infinite).
    noise_stds : float or array_like, shape (k,)
        Known noise standard deviations ``σ_i > 0``.

    Returns
    -------
    T_star : float
        :math:`T^*(\\mu)`, so that :math:`E_\\mu[\\tau] \\ge T^*(\\mu)\\log(1/(2.4\\delta))`.
    w_star : ndarray, shape (k,)
        The allocation attaining the supremum (sums to 1).
    """
    mu, var, best = _instance(means, noise_stds)
    w = np.empty(mu.size)
    t_star, _ = solve_oracle(mu, var, best, w, 0.0)
    if not (math.isfinite(t_star) and t_star > 0):
        raise ValueError("means and noise_stds are out of floating-point range")
    return float(t_star), w


def glr_time(T: float, delta: float, threshold: str = "chernoff") -> float:
    """The fixed point of ``t = T β(t, δ)``: when a rule with characteristic time ``T`` stops.

    A rule that samples in proportions with :math:`T(w, \\mu) = T` makes the GLR statistic grow
    like :math:`t/T`, so without noise it would stop when :math:`t/T` reaches the threshold
    :math:`\\beta(t, \\delta)`. For ``"chernoff"``, :math:`\\beta = \\log(t/\\delta)`, this is
    :math:`t = T\\log(t/\\delta)`: about :math:`T\\log(1/\\delta)` plus the :math:`T\\log t`
    the threshold adds, which matters at moderate δ.

    Parameters
    ----------
    T : float
        Characteristic time ``T(w, μ) > 0`` (:func:`allocation_time`,
        :func:`~bai_lib.characteristic_time`).
    delta : float
        Confidence level in ``(0, 1)``.
    threshold : {"chernoff", "gk2016"}
        The GLR threshold (:data:`bai_lib.stopping.GLR_THRESHOLDS`).
    """
    T = V.positive(T, "T")
    delta = V.open_unit(delta, "delta")
    rule = GLR_THRESHOLDS[V.choice(threshold, ("chernoff", "gk2016"), "threshold")]
    # g(t) = T β(t, δ) is increasing and concave with g'(t) <= T/t < 1 for t > T, so the
    # iteration converges monotonically to the largest fixed point from any start above T.
    t = max(T * math.log(1.0 / delta), math.e * T, 2.0)
    for _ in range(10_000):
        t_new = max(T * glr_beta(t, delta, rule), t * 1e-300)
        if abs(t_new - t) <= 1e-14 * t:
            return float(t_new)
        t = t_new
    raise ValueError(f"no fixed point of t = T β(t, δ) found for T = {T!r}, delta = {delta!r}")
