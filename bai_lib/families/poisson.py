"""Poisson arms: arm ``i`` pays a count ``X ~ Poisson(λ_i)`` (orders or clicks per visitor), drawn
by inversion from the run's standard normal ``z``, so that Poisson, Bernoulli and Gaussian runs
consume the same stream: ``X`` is the least ``n`` with ``F_λ(n) >= Φ(z)``.

The divergence is :func:`bai_lib.kl_poisson.kl_poisson`, ``d(p, q) = q − p + p log(p/q)`` (its
GLR statistic, confidence intervals and inner points in :mod:`bai_lib.kl_poisson`), the GLR test
and challenger cost those of :mod:`bai_lib.families.expfam` (variance function ``V(t) = t``),
Track-and-Stop's weights those of :func:`bai_lib.oracle_bernoulli.solve_oracle_poisson`, and the
posterior of Top-Two Thompson sampling the conjugate ``Gamma(a_i + S_i, b_i + N_i)`` (shape,
rate) of a :class:`~bai_lib.GammaPrior`. Empirical means are the correctly rounded ``S_i / N_i``.

A Poisson reward is not sub-Gaussian, so nothing built on the widths ``σ √(2L/N)`` carries a
guarantee here: Algorithm 1, NoElim and LUCB run with KL widths (``widths="kl"``), the GLR
algorithms with a GLR threshold proven for one-parameter exponential families, and the
indifference stop of the GLR algorithms (whose widths are sub-Gaussian) is refused. The
``noise_stds`` of Poisson runs (1 unless given) only scale the exploration bonus of TTUCB.
The functions are those of :mod:`bai_lib.families.family`, for the bundle :class:`Poisson`;
:data:`MODEL` describes the family to the layers above.
"""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from .. import _variates
from .._variates import gamma_variate
from ..gamma_prior import GammaPrior
from ..kl_poisson import kl_poisson, kl_poisson_glr, kl_poisson_inner, kl_poisson_lower
from ..kl_poisson import kl_poisson_upper
from ..oracle_bernoulli import solve_oracle_poisson
from . import family
from .bernoulli import observe
from .expfam import challenger_cost, glr_passes
from .family import RewardModel

__all__ = ["Poisson", "MODEL", "MAX_MEAN", "draw", "observe", "glr_passes", "challenger_cost",
           "solve_oracle", "kl_lower", "kl_upper", "kl_inner", "upper_exceeds", "glr_stat",
           "mean_variance", "reward_max", "posterior_draw", "posterior_update",
           "posterior_moments", "posterior_normal", "poisson_inverse"]

#: The largest arm mean the simulators take. A draw costs about ``λ`` steps of the inversion
#: (``√λ`` beyond ``λ = 600``), so means are counts per visitor, not totals.
MAX_MEAN = 1e6
_INV_SQRT2 = 1.0 / math.sqrt(2.0)
_TAIL = 1e-17            # a term this small against the sum ends the search: rounding of F


class Poisson(NamedTuple):
    """The bundle of Poisson arms in the compiled loops (no constants: the per-arm noise levels
    and variances are passed beside it, :mod:`bai_lib.families.family`)."""


@njit(cache=True, nogil=True)
def poisson_inverse(u: float, lam: float) -> int:
    """The least ``n >= 0`` with ``F_λ(n) >= u``: a ``Poisson(λ)`` variate for ``u`` uniform.

    For ``λ < 600`` the terms ``e^{-λ} λ^n / n!`` are summed from ``n = 0``; beyond, where
    ``e^{-λ}`` underflows, the terms relative to the one at the mode ``m = ⌊λ⌋`` are summed
    down and up until negligible (about ``40 √λ`` of them), and ``u`` times their total is
    searched from the mode in whichever direction it lies. The search ends where a term falls
    below ``1e-17`` of the sum past the mean: a ``u`` the rounded sum cannot reach (``u``
    within about ``1e-16`` of 1) gets the count there, an error of that order in law.
    """
    if lam < 600.0:
        p = math.exp(-lam)
        f = p
        n = 0
        while f < u:
            n += 1
            p *= lam / n
            f += p
            if p < _TAIL * f and n > lam:
                break
        return n
    # λ >= 600: the terms relative to the one at the mode m, summed down and up to where they
    # are negligible, so that F is normalised by its own total (e^{-λ} λ^m / m! would carry a
    # relative error of m log(λ) ulps)
    m = math.floor(lam)
    low, p, n = 1.0, 1.0, m
    while n > 0 and p >= _TAIL * low:
        p *= n / lam
        n -= 1
        low += p
    up, p, n = 0.0, 1.0, m
    while p >= _TAIL * (low + up):
        n += 1
        p *= lam / n
        up += p
    target = u * (low + up)
    f, p, n = low, 1.0, m
    if f >= target:
        while n > 0 and f - p >= target:
            f -= p
            p *= n / lam
            n -= 1
        return int(n)
    while f < target:
        n += 1
        p *= lam / n
        f += p
        if p < _TAIL * f:
            break
    return int(n)


@njit(cache=True, nogil=True)
def draw(fam: Poisson, z: float, mu_arm: float, sigma_arm: float) -> float:
    """:func:`poisson_inverse` at ``u = Φ(z)``, ``λ = mu_arm``."""
    return float(poisson_inverse(0.5 * math.erfc(-z * _INV_SQRT2), mu_arm))


@njit(cache=True, nogil=True)
def solve_oracle(fam: Poisson, mh: np.ndarray, var: np.ndarray, best: int, w: np.ndarray,
                 u_guess: float) -> tuple[float, float]:
    """:func:`bai_lib.oracle_bernoulli.solve_oracle_poisson`."""
    return solve_oracle_poisson(mh, best, w, u_guess)


@njit(cache=True, nogil=True)
def kl_lower(fam: Poisson, p: float, level: float) -> float:
    """:func:`bai_lib.kl_poisson.kl_poisson_lower`."""
    return kl_poisson_lower(p, level)


@njit(cache=True, nogil=True)
def kl_upper(fam: Poisson, p: float, level: float) -> float:
    """:func:`bai_lib.kl_poisson.kl_poisson_upper`."""
    return kl_poisson_upper(p, level)


@njit(cache=True, nogil=True)
def kl_inner(fam: Poisson, p: float, level: float) -> tuple[float, float]:
    """:func:`bai_lib.kl_poisson.kl_poisson_inner`."""
    return kl_poisson_inner(p, level)


@njit(cache=True, nogil=True)
def upper_exceeds(fam: Poisson, p: float, level: float, x: float) -> bool:
    """Whether ``kl_poisson_upper(p, level) > x``: true when ``p > x``, else exactly when the
    double after ``x`` still has ``d(p, ·) <= level`` (the upper end is unbounded)."""
    if p > x:
        return True
    return kl_poisson(p, np.nextafter(x, np.inf)) <= level


@njit(cache=True, nogil=True)
def glr_stat(fam: Poisson, mean_a: float, n_a: float, mean_b: float, n_b: float) -> float:
    """:func:`bai_lib.kl_poisson.kl_poisson_glr`."""
    return kl_poisson_glr(mean_a, n_a, mean_b, n_b)


@njit(cache=True, nogil=True)
def mean_variance(fam: Poisson, t: float) -> float:
    """``t``."""
    return t


@njit(cache=True, nogil=True)
def reward_max(fam: Poisson, t: float) -> float:
    """``inf``: a count has no upper bound."""
    return np.inf


@njit(cache=True, nogil=True)
def posterior_draw(fam: Poisson, state: np.ndarray, A_i: float, B_i: float) -> float:
    """A ``Gamma(A_i, rate B_i)`` draw (:func:`bai_lib._variates.gamma_variate` over ``B_i``)."""
    return gamma_variate(state, A_i) / B_i


@njit(cache=True, nogil=True)
def posterior_update(fam: Poisson, A: np.ndarray, B: np.ndarray, arm: int, x: float) -> None:
    """``A += x``, ``B += 1`` (one more visitor and its count)."""
    A[arm] += x
    B[arm] += 1.0


@njit(cache=True, nogil=True)
def posterior_moments(fam: Poisson, A_i: float, B_i: float) -> tuple[float, float]:
    """The mean ``A/B`` and variance ``A/B²`` of ``Gamma(A_i, rate B_i)``."""
    m = A_i / B_i
    return m, m / B_i


@njit(cache=True, nogil=True)
def posterior_normal(fam: Poisson, A_i: float, B_i: float) -> tuple[float, float]:
    """Wilson and Hilferty's (1931) approximation of ``Gamma(A_i, rate B_i)`` on the cube-root
    scale (``g(λ) = λ^(1/3)``): ``(X B/A)^(1/3) ≈ N(1 − 1/(9A), 1/(9A))``, close also for
    small shapes, where the moments on the natural scale miss the right skew."""
    c = (A_i / B_i) ** (1.0 / 3.0)
    return c * (1.0 - 1.0 / (9.0 * A_i)), c / (3.0 * math.sqrt(A_i))


family.register(Poisson, sys.modules[__name__])

#: The Poisson family as the layers above the kernels see it.
MODEL = RewardModel(
    name="poisson", bundle=Poisson, prior=GammaPrior, describe="Poisson(λ_i)",
    mean_range=(0.0, MAX_MEAN), noise_std=1.0, sub_gaussian=False,
    kernel_means=lambda means: means,
    prior_means=lambda prior, seed, n_runs, first_run: _variates.prior_gamma_means(
        prior.a, prior.b, seed, n_runs, first_run=first_run))
