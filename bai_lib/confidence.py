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
from numpy.typing import ArrayLike

from . import _validate as V

__all__ = ["conf_log_term", "conf_width", "failure_bound", "indifference_round", "stopping_time_cap"]


def _check(delta: float, k: int) -> tuple[float, int]:
    return V.open_unit(delta, "delta"), V.integer(k, "k", 2)


def conf_log_term(n: ArrayLike, delta: float, k: int) -> float | np.ndarray:
    """The logarithm inside ``Conf``: :math:`\\log(6n^2 / ((\\delta^2/(2K))\\pi^2))` (vectorised)."""
    delta, k = _check(delta, k)
    n_arr = np.asarray(n, dtype=float)
    if np.any(n_arr < 1) or not np.all(np.isfinite(n_arr)):
        raise ValueError("n must be >= 1")
    out = np.log(6.0 * n_arr**2 * 2.0 * k / (delta**2 * math.pi**2))
    return float(out) if np.ndim(out) == 0 else out


def conf_width(n: ArrayLike, noise_stds: ArrayLike, delta: float, k: int) -> float | np.ndarray:
    """``Conf(i, t)`` of Section 5 for ``N_i(t) = n`` pulls (vectorised over ``n``).

    Parameters
    ----------
    n : int or array of int
        Number of pulls of the arm, ``n >= 1``.
    noise_stds : float or array
        Noise standard deviation ``σ_i`` of the arm (an array broadcasts against ``n``).
    delta : float
        Confidence level ``δ`` in (0, 1).
    k : int
        Number of arms ``K``.
    """
    delta, k = _check(delta, k)
    sigma = V.noise_stds(noise_stds)
    n_arr = np.asarray(n, dtype=float)
    out = np.sqrt(2.0 * sigma**2 * conf_log_term(n_arr, delta, k) / n_arr)
    return float(out) if np.ndim(out) == 0 else out


def indifference_round(delta: float, delta0: float, k: int, noise_stds: ArrayLike = 1.0) -> int:
    """Smallest round ``n*`` with ``2 Conf(n*) ≤ Δ0`` (equal noise ``σ`` on all arms).

    ``2 Conf(n)`` is decreasing for ``n >= 1`` once the log term exceeds 1, which holds
    for every ``δ < 1``; the root is bracketed by doubling and found by bisection on
    integers, so the result is exact. ``noise_stds`` is the common level ``σ`` (a scalar, or
    a sequence of equal entries).
    """
    delta, k = _check(delta, k)
    sigma = V.common_noise_std(noise_stds)
    delta0 = V.positive(delta0, "delta0")

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


def stopping_time_cap(delta: float, delta0: float, k: int, noise_stds: ArrayLike = 1.0) -> int:
    """Largest possible stopping time ``k n*`` of Algorithm 1 and NoElim (equal noise).

    NoElim pulls all ``k`` arms every round and stops at round ``n*`` at the latest;
    Algorithm 1 reaches the same cap only when no arm is eliminated before ``n*``.
    """
    return V.integer(k, "k", 2) * indifference_round(delta, delta0, k, noise_stds)


def failure_bound(delta: float) -> float:
    """Union bound on the probability that some ``Conf`` interval ever fails: ``π⁴δ²/72``.

    On any instance, arm ``i`` after ``n`` pulls has ``P(|μ̂_i - μ_i| > Conf) <= exp(-t²/2)``
    with ``t²/2`` the log term of :func:`conf_log_term`, i.e. ``δ²π²/(12 K n²)``. Summing over
    ``n >= 1`` (``Σ 1/n² = π²/6``) and the ``K`` arms gives ``π⁴δ²/72 ≈ 1.35 δ²``, whatever
    ``K``. The paper's lemma on this event states ``δ²``.
    """
    d = V.open_unit(delta, "delta")
    return math.pi**4 * d * d / 72.0
