"""Gaussian arms with known noise levels: arm ``i`` pays ``μ_i + σ_i Z`` (paper, Section 2).

The GLR statistic of "``a`` beats ``b``" is ``Z_ab = (μ̂_a − μ̂_b)² / (2 (v_a + v_b))`` with
``v_i = var_i / N_i`` (Garivier & Kaufmann, 2016), and Track-and-Stop's weights are those of
:func:`bai_lib.oracle.solve_oracle`. The functions are those of
:mod:`bai_lib.families.family`, for the bundle :class:`Gaussian`; :data:`MODEL` describes the
family to the layers above.
"""

from __future__ import annotations

import math
import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from .. import _rng
from ..oracle import solve_oracle as _gaussian_oracle
from ..priors import GaussianPrior
from . import family
from .family import RewardModel

__all__ = ["Gaussian", "MODEL", "draw", "observe", "glr_passes", "challenger_cost",
           "solve_oracle"]

class Gaussian(NamedTuple):
    """The bundle of gaussian arms in the compiled loops (no constants: the
    per-arm noise levels and variances are passed beside it, :mod:`bai_lib.families.family`)."""


@njit(cache=True, nogil=True)
def draw(fam: Gaussian, z: float, mu_arm: float, sigma_arm: float) -> float:
    """``μ_arm + σ_arm z``."""
    return mu_arm + sigma_arm * z


@njit(cache=True, nogil=True)
def observe(fam: Gaussian, arm: int, x: float, S: np.ndarray, N: np.ndarray, mh: np.ndarray,
            v: np.ndarray, inv_next: np.ndarray, var: np.ndarray) -> None:
    """Book reward ``x`` of ``arm``: sums, counts, mean ``S/N`` and ``v = var/N``.

    ``inv_next[arm]`` holds ``1/(N_arm + 1)``, prepared one pull ahead so that the division is
    off the critical path; it is refreshed here.
    """
    S[arm] += x
    N[arm] += 1
    inv = inv_next[arm]
    mh[arm] = S[arm] * inv
    v[arm] = var[arm] * inv
    inv_next[arm] = 1.0 / (N[arm] + 1)


@njit(cache=True, nogil=True)
def glr_passes(fam: Gaussian, mh: np.ndarray, v: np.ndarray, N: np.ndarray, best: int,
               c: float) -> bool:
    """Whether ``(mh[best] - mh[j])² >= c (v[best] + v[j])`` for every ``j != best``.

    With ``v_i = σ_i²/N_i`` and ``c = 2β`` this is the Gaussian GLR (Chernoff) test
    ``min_j Z_{best,j} >= β``; the caller passes the empirical best arm, at which
    ``max_a min_b Z_ab`` is attained. Two arms take a branch-free path (the same comparison),
    which the compiler keeps in registers.
    """
    if mh.size == 2:
        d = mh[0] - mh[1]
        return d * d >= c * (v[0] + v[1])
    for j in range(mh.size):
        if j != best:
            d = mh[best] - mh[j]
            if d * d < c * (v[best] + v[j]):
                return False
    return True


@njit(cache=True, nogil=True)
def challenger_cost(fam: Gaussian, mh: np.ndarray, v: np.ndarray, N: np.ndarray, lead: int, j: int,
                    signed: bool) -> float:
    """``(μ̂_lead − μ̂_j)_+² / (v_lead + v_j)``, or the signed
    ``(μ̂_lead − μ̂_j) / √(v_lead + v_j)``
    (the same order where the gap is positive)."""
    d = mh[lead] - mh[j]
    if signed:
        return d / math.sqrt(v[lead] + v[j])
    if d < 0.0:
        d = 0.0
    return d * d / (v[lead] + v[j])


@njit(cache=True, nogil=True)
def solve_oracle(fam: Gaussian, mh: np.ndarray, var: np.ndarray, best: int, w: np.ndarray,
                 u_guess: float) -> tuple[float, float]:
    """:func:`bai_lib.oracle.solve_oracle`."""
    return _gaussian_oracle(mh, var, best, w, u_guess)


family.register(Gaussian, sys.modules[__name__])

#: The Gaussian family as the layers above the kernels see it.
MODEL = RewardModel(
    name="gaussian", bundle=Gaussian, prior=GaussianPrior, describe="N(μ_i, σ_i²)",
    mean_range=(-np.inf, np.inf), noise_std=None, sub_gaussian=True,
    kernel_means=lambda means: means,
    prior_means=lambda prior, seed, n_runs, first_run: _rng.prior_means(
        prior.means, prior.stds, seed, n_runs, first_run=first_run))
