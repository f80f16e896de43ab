"""The confidence width of Algorithm 1 and the round at which its early stop must fire.

Math layer. Section 5 of the paper defines, for arm ``i`` pulled ``N_i`` times,

.. math:: \\mathrm{Conf}(i,t) = \\sqrt{\\frac{2\\sigma_i^2}{N_i}
          \\log\\frac{6 N_i^2}{(\\delta^2/(2K))\\,\\pi^2}}

and ``UCB/LCB = μ̂ ± Conf``. Algorithm 1 pulls every active arm once per round, so all
active arms share ``N_i = n`` (the round number). With equal noise ``σ`` the safe empirical
gap is then exactly ``Δ̂safe = 2 Conf(n)`` while two or more arms are active, so the
indifference stop fires at the latest at the first round ``n*`` with ``2 Conf(n*) ≤ Δ0``:
this caps the stopping time at ``k n*`` (reached by NoElim, or when no arm is eliminated).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["conf_log_term", "conf_width", "indifference_round", "stopping_time_cap"]


def _check(delta: float, k: int, sigma: float) -> None:
    if not (0.0 < float(delta) < 1.0):
        raise ValueError(f"delta must lie in (0, 1), got {delta!r}")
    if int(k) != k or k < 2:
        raise ValueError(f"k must be an integer >= 2, got {k!r}")
    if not (math.isfinite(float(sigma)) and float(sigma) > 0):
        raise ValueError(f"sigma must be finite and positive, got {sigma!r}")


def conf_log_term(n, delta: float, k: int):
    """The logarithm inside ``Conf``: :math:`\\log(6n^2 / ((\\delta^2/(2K))\\pi^2))` (vectorised)."""
    _check(delta, k, 1.0)
    n_arr = np.asarray(n, dtype=float)
    if np.any(n_arr < 1) or not np.all(np.isfinite(n_arr)):
        raise ValueError("n must be >= 1")
    out = np.log(6.0 * n_arr**2 * 2.0 * k / (delta**2 * math.pi**2))
    return float(out) if np.ndim(out) == 0 else out


def conf_width(n, sigma: float, delta: float, k: int):
    """``Conf(i, t)`` of Section 5 for ``N_i(t) = n`` pulls (vectorised over ``n``).

    Parameters
    ----------
    n : int or array of int
        Number of pulls of the arm, ``n >= 1``.
    sigma : float
        Noise standard deviation ``σ_i`` of the arm.
    delta : float
        Confidence level ``δ`` in (0, 1).
    k : int
        Number of arms ``K``.
    """
    _check(delta, k, sigma)
    n_arr = np.asarray(n, dtype=float)
    out = np.sqrt(2.0 * sigma**2 * conf_log_term(n_arr, delta, k) / n_arr)
    return float(out) if np.ndim(out) == 0 else out


def indifference_round(delta: float, delta0: float, k: int, sigma: float = 1.0) -> int:
    """Smallest round ``n*`` with ``2 Conf(n*) ≤ Δ0`` (equal noise ``σ`` on all arms).

    ``2 Conf(n)`` is decreasing for ``n >= 1`` once the log term exceeds 1, which holds
    for every ``δ < 1``; the root is bracketed by doubling and found by bisection on
    integers, so the result is exact.
    """
    _check(delta, k, sigma)
    if not (math.isfinite(float(delta0)) and float(delta0) > 0):
        raise ValueError(f"delta0 must be finite and positive, got {delta0!r}")

    def stops(n: int) -> bool:
        return 2.0 * conf_width(n, sigma, delta, k) <= delta0

    hi = 1
    while not stops(hi):
        hi *= 2
        if hi > 2**62:
            raise ValueError("delta0 is too small: the indifference round exceeds 2**62")
    lo = hi // 2  # stops(lo) is False unless hi == 1
    if hi == 1:
        return 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if stops(mid):
            hi = mid
        else:
            lo = mid
    return hi


def stopping_time_cap(delta: float, delta0: float, k: int, sigma: float = 1.0) -> int:
    """Largest possible stopping time ``k n*`` of Algorithm 1 and NoElim (equal noise).

    NoElim pulls all ``k`` arms every round and stops at round ``n*`` at the latest;
    Algorithm 1 reaches the same cap only when no arm is eliminated before ``n*``.
    """
    return int(k) * indifference_round(delta, delta0, k, sigma)
