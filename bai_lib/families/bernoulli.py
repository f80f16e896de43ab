"""Bernoulli arms: arm ``i`` pays ``1`` when the run's standard normal draw lies below the
normal quantile of its mean, so that Gaussian and Bernoulli runs consume the same stream.

The divergence is :func:`bai_lib.kl.kl_bernoulli` (its GLR statistic
:func:`bai_lib.kl.kl_glr`, its confidence intervals :func:`bai_lib.kl.kl_lower` and
:func:`bai_lib.kl.kl_upper`), the GLR test and challenger cost those of
:mod:`bai_lib.families.expfam`, Track-and-Stop's weights those of
:func:`bai_lib.oracle_bernoulli.solve_oracle_bernoulli`, and the posterior of Top-Two Thompson
sampling the conjugate ``Beta(a_i + S_i, b_i + N_i − S_i)`` of a :class:`~bai_lib.BetaPrior`.
Empirical means are the correctly rounded ``S_i / N_i``, so that arms with equal proportions
(frequent with counts) tie exactly and ties go to the lowest index. The functions are those of
:mod:`bai_lib.families.family`, for the bundle :class:`Bernoulli`; :data:`MODEL` describes the
family to the layers above.
"""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy.special import ndtri

from .. import _variates
from .._variates import beta_variate
from ..beta_prior import BetaPrior
from ..kl import kl_bernoulli, kl_glr
from ..kl import kl_inner as _kl_inner
from ..kl import kl_lower as _kl_lower
from ..kl import kl_upper as _kl_upper
from ..oracle_bernoulli import solve_oracle_bernoulli
from . import family
from .expfam import challenger_cost, glr_passes
from .family import RewardModel

__all__ = ["Bernoulli", "MODEL", "NOISE_STD", "draw", "observe", "glr_passes", "challenger_cost",
           "solve_oracle", "kl_lower", "kl_upper", "kl_inner", "upper_exceeds", "glr_stat",
           "mean_variance", "reward_max", "posterior_draw", "posterior_update",
           "posterior_moments", "posterior_normal"]

#: The noise level Bernoulli runs give the algorithm when ``noise_stds`` is ``None``: a reward in
#: ``[0, 1]`` is ``1/2``-sub-Gaussian whatever its mean (Hoeffding's lemma).
NOISE_STD = 0.5

class Bernoulli(NamedTuple):
    """The bundle of bernoulli arms in the compiled loops (no constants: the
    per-arm noise levels and variances are passed beside it, :mod:`bai_lib.families.family`)."""


@njit(cache=True, nogil=True)
def draw(fam: Bernoulli, z: float, mu_arm: float, sigma_arm: float) -> float:
    """``1`` if ``z < mu_arm`` (``mu_arm`` the normal quantile of the mean), else ``0``."""
    return np.float64(z < mu_arm)


@njit(cache=True, nogil=True)
def observe(fam: Bernoulli, arm: int, x: float, S: np.ndarray, N: np.ndarray, mh: np.ndarray,
            v: np.ndarray, inv_next: np.ndarray, var: np.ndarray) -> None:
    """Book reward ``x`` of ``arm`` as :func:`bai_lib.families.gaussian.observe` does, the mean
    the correctly rounded ``S / N``."""
    S[arm] += x
    N[arm] += 1
    inv = inv_next[arm]
    mh[arm] = S[arm] / N[arm]
    v[arm] = var[arm] * inv
    inv_next[arm] = 1.0 / (N[arm] + 1)


@njit(cache=True, nogil=True)
def solve_oracle(fam: Bernoulli, mh: np.ndarray, var: np.ndarray, best: int, w: np.ndarray,
                 u_guess: float) -> tuple[float, float]:
    """:func:`bai_lib.oracle_bernoulli.solve_oracle_bernoulli`."""
    return solve_oracle_bernoulli(mh, best, w, u_guess)


@njit(cache=True, nogil=True)
def kl_lower(fam: Bernoulli, p: float, level: float) -> float:
    """:func:`bai_lib.kl.kl_lower`."""
    return _kl_lower(p, level)


@njit(cache=True, nogil=True)
def kl_upper(fam: Bernoulli, p: float, level: float) -> float:
    """:func:`bai_lib.kl.kl_upper`."""
    return _kl_upper(p, level)


@njit(cache=True, nogil=True)
def kl_inner(fam: Bernoulli, p: float, level: float) -> tuple[float, float]:
    """:func:`bai_lib.kl.kl_inner`."""
    return _kl_inner(p, level)


@njit(cache=True, nogil=True)
def upper_exceeds(fam: Bernoulli, p: float, level: float, x: float) -> bool:
    """Whether ``kl_upper(p, level) > x``, from one evaluation of ``kl``: true when ``p > x``,
    else exactly when the double after ``x`` still has ``kl(p, ·) <= level``."""
    if p > x:
        return True
    if x >= 1.0:
        return False
    return kl_bernoulli(p, np.nextafter(x, 2.0)) <= level


@njit(cache=True, nogil=True)
def glr_stat(fam: Bernoulli, mean_a: float, n_a: float, mean_b: float, n_b: float) -> float:
    """:func:`bai_lib.kl.kl_glr`."""
    return kl_glr(mean_a, n_a, mean_b, n_b)


@njit(cache=True, nogil=True)
def mean_variance(fam: Bernoulli, t: float) -> float:
    """``t (1 − t)``."""
    return t * (1.0 - t)


@njit(cache=True, nogil=True)
def reward_max(fam: Bernoulli, t: float) -> float:
    """``1``."""
    return 1.0


@njit(cache=True, nogil=True)
def posterior_draw(fam: Bernoulli, state: np.ndarray, A_i: float, B_i: float) -> float:
    """A ``Beta(A_i, B_i)`` draw (:func:`bai_lib._variates.beta_variate`)."""
    return beta_variate(state, A_i, B_i)


@njit(cache=True, nogil=True)
def posterior_update(fam: Bernoulli, A: np.ndarray, B: np.ndarray, arm: int, x: float) -> None:
    """``A += x``, ``B += 1 − x`` (a success or a failure)."""
    A[arm] += x
    B[arm] += 1.0 - x


@njit(cache=True, nogil=True)
def posterior_moments(fam: Bernoulli, A_i: float, B_i: float) -> tuple[float, float]:
    """The mean ``A/(A+B)`` and variance ``AB/((A+B)²(A+B+1))`` of ``Beta(A_i, B_i)``."""
    n = A_i + B_i
    return A_i / n, A_i * B_i / (n * n * (n + 1.0))


@njit(cache=True, nogil=True)
def posterior_normal(fam: Bernoulli, A_i: float, B_i: float) -> tuple[float, float]:
    """The mean and standard deviation of ``Beta(A_i, B_i)`` (``g`` the identity)."""
    m, v = posterior_moments(fam, A_i, B_i)
    return m, math.sqrt(v)


family.register(Bernoulli, sys.modules[__name__])

#: The Bernoulli family as the layers above the kernels see it.
MODEL = RewardModel(
    name="bernoulli", bundle=Bernoulli, prior=BetaPrior, describe="Bernoulli(μ_i)",
    mean_range=(0.0, 1.0), noise_std=NOISE_STD, sub_gaussian=True,
    kernel_means=ndtri,  # a pull pays 1 when its normal lies below the quantile of the mean
    prior_means=lambda prior, seed, n_runs, first_run: _variates.prior_beta_means(
        prior.a, prior.b, seed, n_runs, first_run=first_run))
