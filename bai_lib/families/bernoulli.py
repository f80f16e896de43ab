"""Bernoulli arms: arm ``i`` pays ``1`` when the run's standard normal draw lies below the
normal quantile of its mean, so that Gaussian and Bernoulli runs consume the same stream.

The GLR statistic is :func:`bai_lib.kl.kl_glr` and Track-and-Stop's weights those of
:func:`bai_lib.oracle_bernoulli.solve_oracle_bernoulli`. Empirical means are the correctly
rounded ``S_i / N_i``, so that arms with equal proportions (frequent with counts) tie exactly
and ties go to the lowest index. The functions are those of :mod:`bai_lib.families.family`,
for the bundle :class:`Bernoulli`.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from ..kl import kl_glr
from ..oracle_bernoulli import solve_oracle_bernoulli
from . import family

__all__ = ["Bernoulli", "draw", "observe", "glr_passes", "challenger_cost", "solve_oracle"]

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
def glr_passes(fam: Bernoulli, mh: np.ndarray, v: np.ndarray, N: np.ndarray, best: int,
               c: float) -> bool:
    """Whether ``Z_{best,j} >= c / 2`` for every ``j != best``, ``Z`` the Bernoulli GLR statistic
    :func:`~bai_lib.kl.kl_glr`.

    ``kl(p, q) <= (p - q)² / (2 min(v(p), v(q)))`` with ``v(t) = t (1 - t)`` (the integral
    form of :func:`~bai_lib.kl.kl_inner`), so ``Z_{ab} <= d² / (2 V (1/N_a + 1/N_b))`` with
    ``d = μ̂_a − μ̂_b`` and ``V = min(v(μ̂_a), v(μ̂_b))``; the logarithms are evaluated only for
    pairs whose bound reaches ``c / 2``, which makes the decision that of the exact test.
    """
    for j in range(mh.size):
        if j != best:
            a, b = mh[best], mh[j]
            d = a - b
            bound_var = min(a * (1.0 - a), b * (1.0 - b)) * (1.0 / N[best] + 1.0 / N[j])
            if d * d < c * bound_var * (1.0 - 1e-12):
                return False
            if kl_glr(a, float(N[best]), b, float(N[j])) < 0.5 * c:
                return False
    return True


@njit(cache=True, nogil=True)
def challenger_cost(fam: Bernoulli, mh: np.ndarray, v: np.ndarray, N: np.ndarray, lead: int, j: int,
                    signed: bool) -> float:
    """``Z_{lead,j}`` (:func:`~bai_lib.kl.kl_glr`); ``signed``: ``−Z_{j,lead}`` where
    ``μ̂_lead < μ̂_j``, the Bernoulli form of the released TTUCB code's signed cost."""
    z = kl_glr(mh[lead], float(N[lead]), mh[j], float(N[j]))
    if signed and mh[lead] - mh[j] < 0.0:
        z = -kl_glr(mh[j], float(N[j]), mh[lead], float(N[lead]))
    return z


@njit(cache=True, nogil=True)
def solve_oracle(fam: Bernoulli, mh: np.ndarray, var: np.ndarray, best: int, w: np.ndarray,
                 u_guess: float) -> tuple[float, float]:
    """:func:`bai_lib.oracle_bernoulli.solve_oracle_bernoulli`."""
    return solve_oracle_bernoulli(mh, best, w, u_guess)


family.register(Bernoulli, sys.modules[__name__])
