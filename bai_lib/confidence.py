"""The confidence width of Algorithm 1 and the round at which its early stop must fire.

Math layer. Section 5 of the paper defines, for arm ``i`` pulled ``N_i`` times,

.. math:: \\mathrm{Conf}(i,t) = \\sqrt{\\frac{2\\sigma_i^2}{N_i}
          \\log\\frac{6 N_i^2}{(\\delta^2/(2K))\\,\\pi^2}}

and ``UCB/LCB = μ̂ ± Conf``. Algorithm 1 pulls every active arm once per round, so all
active arms share ``N_i = n`` (the round number). With equal noise ``σ`` the safe empirical
gap is then exactly ``Δ̂safe = 2 Conf(n)`` while two or more arms are active, so the
indifference stop fires at the latest at the first round ``n*`` with ``2 Conf(n*) ≤ Δ0``:
this caps the stopping time at ``k n*`` (reached by NoElim, or when no arm is eliminated).

The width and the round ``n*`` are defined here once, as compiled scalar functions the
simulators call (:func:`conf_factor`, :func:`first_indifference_round`); the functions below
them evaluate the same formulas for arrays and check their arguments.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V

__all__ = ["indifference_split", "conf_log_const", "conf_level", "conf_factor",
           "first_indifference_round", "conf_log_term", "conf_width", "failure_bound",
           "indifference_round", "stopping_time_cap"]


def _check(delta: float, k: int) -> tuple[float, int]:
    return V.open_unit(delta, "delta"), V.integer(k, "k", 2)


def conf_log_const(delta: float, k: int) -> float:
    """The constant ``12 K / (δ² π²)`` with ``log(6n² / ((δ²/(2K)) π²)) = log(const · n²)``."""
    delta, k = _check(delta, k)
    return 12.0 * k / (delta * delta * math.pi * math.pi)


@njit(cache=True, nogil=True)
def conf_level(n: float, log_const: float) -> float:
    """The log term per pull, ``log(log_const · n²) / n`` (``n`` a float).

    ``c(n)² / 2`` for :func:`conf_factor`; it is the level of the KL interval
    ``{q : kl(μ̂, q) <= conf_level(n)}`` of Bernoulli arms (:mod:`bai_lib.kl`), which, by
    Chernoff's bound, misses an arm's mean with the same probability bound as ``Conf``.
    """
    return math.log(log_const * n * n) / n


@njit(cache=True, nogil=True)
def conf_factor(n: float, log_const: float) -> float:
    """Width factor ``c(n)`` with ``Conf(i, t) = σ_i c(N_i(t))`` (``n`` a float).

    ``c(n) = sqrt(2 log(log_const · n²) / n)`` with ``log_const`` from :func:`conf_log_const`:
    the confidence width of Section 5,
    ``Conf = sqrt(2σ² log(6N² / ((δ²/(2K)) π²)) / N)``.
    """
    return math.sqrt(2.0 * conf_level(n, log_const))


@njit(cache=True, nogil=True)
def first_indifference_round(two_sigma: float, log_const: float, delta0: float) -> int:
    """First round ``n`` with ``2σ c(n) <= Δ0`` (``two_sigma = 2σ``), or ``-1`` beyond ``2**62``.

    ``c`` decreases for ``n >= 2`` (the log term exceeds 1 for every ``δ < 1``), so the root is
    bracketed by doubling and found by bisection on integers: the result is exact.
    """
    if two_sigma * conf_factor(1.0, log_const) <= delta0:
        return np.int64(1)
    hi = np.int64(2)
    while two_sigma * conf_factor(float(hi), log_const) > delta0:
        if hi > np.int64(2) ** 61:
            return np.int64(-1)
        hi *= 2
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if two_sigma * conf_factor(float(mid), log_const) <= delta0:
            hi = mid
        else:
            lo = mid
    return hi


_conf_factor_array = np.vectorize(conf_factor, otypes=[float])


def conf_log_term(n: ArrayLike, delta: float, k: int) -> float | np.ndarray:
    """The logarithm inside ``Conf``: :math:`\\log(6n^2 / ((\\delta^2/(2K))\\pi^2))` (vectorised)."""
    const = conf_log_const(delta, k)
    n_arr = _rounds(n)
    out = np.log(const * n_arr * n_arr)
    return float(out) if np.ndim(out) == 0 else out


def _rounds(n) -> np.ndarray:
    n_arr = V.reals(n, "n")
    if np.any(n_arr < 1):
        raise ValueError(f"n must be >= 1, got {n_arr.tolist()}")
    return n_arr


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
    const = conf_log_const(delta, k)
    sigma = V.noise_stds(noise_stds)
    out = sigma * _conf_factor_array(_rounds(n), const)
    return float(out) if np.ndim(out) == 0 else out


def indifference_round(delta: float, delta0: float, k: int, noise_stds: ArrayLike = 1.0) -> int:
    """Smallest round ``n*`` with ``2 Conf(n*) ≤ Δ0`` (equal noise ``σ`` on all arms).

    :func:`first_indifference_round` with ``2σ`` and the constant of ``δ`` and ``k``.
    ``noise_stds`` is the common level ``σ`` (a scalar, or a sequence of equal entries).
    """
    const = conf_log_const(delta, k)
    sigma = V.common_noise_std(noise_stds)
    delta0 = V.positive(delta0, "delta0")
    n_star = int(first_indifference_round(2.0 * sigma, const, delta0))
    if n_star < 0:
        raise ValueError("delta0 is too small: the indifference round exceeds 2**62")
    return n_star


def stopping_time_cap(delta: float, delta0: float, k: int, noise_stds: ArrayLike = 1.0) -> int:
    """Largest possible stopping time ``k n*`` of Algorithm 1 and NoElim (equal noise).

    NoElim pulls all ``k`` arms every round and stops at round ``n*`` at the latest;
    Algorithm 1 reaches the same cap only when no arm is eliminated before ``n*``.
    """
    return V.integer(k, "k", 2) * indifference_round(delta, delta0, k, noise_stds)


def failure_bound(delta: float) -> float:
    """Union bound on some ``Conf`` interval ever failing on one side: ``π⁴δ²/72``.

    On any instance, arm ``i`` after ``n`` pulls has ``P(μ̂_i - μ_i > Conf) <= exp(-t²/2)`` (one
    tail of a sub-Gaussian mean) with ``t²/2`` the log term of :func:`conf_log_term`, i.e.
    ``δ²π²/(12 K n²)``. Summing over ``n >= 1`` (``Σ 1/n² = π²/6``) and the ``K`` arms gives
    ``π⁴δ²/72 ≈ 1.35 δ²``, whatever ``K``. An interval that fails on either side is twice as
    likely: ``π⁴δ²/36 ≈ 2.7 δ²`` (the bound :func:`indifference_split` uses). The paper's
    lemma on this event states ``δ²``.
    """
    d = V.open_unit(delta, "delta")
    return math.pi**4 * d * d / 72.0


def indifference_split(delta: float) -> tuple[float, float]:
    """How a GLR algorithm with an indifference stop spends ``δ``: ``(δ_glr, δ_conf)``.

    The option ``indifference=True`` of TTTS, TTUCB, EB-TC and Track-and-Stop stops at the first time either
    its GLR test at level ``δ_glr`` passes, or the intervals ``μ̂_j ± σ_j c(N_j)`` of ``Conf``
    at level ``δ_conf`` (:func:`conf_factor`, ``K`` arms) put every other arm's upper end within
    ``Δ0`` of the empirical best arm's lower end; it recommends the empirical best arm. Following
    the proof of Theorem 3, an error needs one of three events:

    * the GLR stop errs: probability at most ``δ_glr`` on every instance, so also under the
      prior, for a threshold proven ``δ_glr``-correct whatever the sampling rule
      (:func:`bai_lib.stopping.glr_beta`, the default ``indifference_glr="proven"``);
      with the algorithm's own threshold (``"own"``) this step has no proof;
    * some interval misses its arm's mean at some pull count: at most ``2 exp(-c²n/2)`` per
      arm and pull count ``n`` (two-sided sub-Gaussian tails), ``π⁴δ_conf²/36`` in all
      (twice :func:`failure_bound`, which counts one tail);
    * on the intervals' event, an indifference stop that recommends ``b`` while the best arm
      ``i*`` differs has ``μ* <= UCB_{i*} <= LCB_b + Δ0 <= μ_b + Δ0``: the instance's two best
      means are within ``Δ0``, which the prior makes likely with probability ``L(H) Δ0 (1 + o(1))``
      (the volume lemma), ``δ/4`` at ``Δ0 = δ/(4L)``.

    With ``δ_glr = δ/4`` and ``δ_conf = 3 √δ / π²`` (so that ``π⁴δ_conf²/36 = δ/4``) the three
    sum to ``3δ/4``, and the remaining ``δ/4`` covers the volume lemma's ``o(1)``.

    Parameters
    ----------
    delta : float
        Target Bayesian probability of error, in ``(0, 1)``.

    Returns
    -------
    (delta_glr, delta_conf)
    """
    d = V.open_unit(delta, "delta")
    return d / 4.0, 3.0 * math.sqrt(d) / math.pi**2
