"""The GLR test and the challenger cost of one-parameter exponential families (Bernoulli, Poisson
arms), written once over the family's divergence (:data:`bai_lib.families.family.KL_WIDTHS`).

With ``V`` the family's variance function, ``d(p, q) = ∫_p^q (s − p) / V(s) ds``, so
``d(p, q) <= (p − q)² / (2 min V)`` over the segment between ``p`` and ``q``; for the GLR
statistic at the pooled mean this gives
``Z_ab <= (μ̂_a − μ̂_b)² / (2 V_min (1/N_a + 1/N_b))``, where ``V_min`` is the least value of
``V`` on ``[μ̂_b, μ̂_a]``: at an end of the segment, as
``V`` is concave (Bernoulli ``t(1 − t)``) or monotone (Poisson ``t``). The test evaluates the
logarithms only for the pairs whose bound reaches the level, which makes its decision that of
the exact test.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from . import family as F

__all__ = ["glr_passes", "challenger_cost"]


@njit(cache=True, nogil=True)
def glr_passes(fam: NamedTuple, mh: np.ndarray, v: np.ndarray, N: np.ndarray, best: int,
               c: float) -> bool:
    """Whether ``Z_{best,j} >= c / 2`` for every ``j != best``
    (:func:`bai_lib.families.family.glr_passes`), ``Z`` the family's
    :func:`~bai_lib.families.family.glr_stat`, behind the bound of the module docstring."""
    for j in range(mh.size):
        if j != best:
            a, b = mh[best], mh[j]
            d = a - b
            bound_var = (min(F.mean_variance(fam, a), F.mean_variance(fam, b))
                         * (1.0 / N[best] + 1.0 / N[j]))
            if d * d < c * bound_var * (1.0 - 1e-12):
                return False
            if F.glr_stat(fam, a, float(N[best]), b, float(N[j])) < 0.5 * c:
                return False
    return True


@njit(cache=True, nogil=True)
def challenger_cost(fam: NamedTuple, mh: np.ndarray, v: np.ndarray, N: np.ndarray, lead: int,
                    j: int, signed: bool) -> float:
    """``Z_{lead,j}`` (:func:`~bai_lib.families.family.glr_stat`); ``signed``: ``−Z_{j,lead}``
    where ``μ̂_lead < μ̂_j``, the form of the released TTUCB code's signed cost."""
    z = F.glr_stat(fam, mh[lead], float(N[lead]), mh[j], float(N[j]))
    if signed and mh[lead] - mh[j] < 0.0:
        z = -F.glr_stat(fam, mh[j], float(N[j]), mh[lead], float(N[lead]))
    return z
