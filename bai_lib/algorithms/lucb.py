"""LUCB (Kalyanakrishnan, Tewari, Auer & Stone, 2012) with Gaussian confidence bounds, on
Bernoulli arms with LUCB1's or KL-LUCB's bounds, and on Poisson arms with KL-LUCB's."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import fill_normal
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_INTERRUPTED, STOP_SEPARATION, argmax,
                       refill)
from ..families import family as F
from ..families import family_bundle
from .base import Algorithm, Binding, gap_cost, one_level
from .elimination import WIDTHS

__all__ = ["LUCB", "lucb_run"]


@njit(cache=True, nogil=True)
def lucb_run(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray, log_const: float,
             fam: NamedTuple, kl_widths: bool, max_samples: int,
             cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of LUCB1 with the confidence width ``σ_i √(2 log(k₁ k n⁴ / δ) / N_i)``.

    Each arm is sampled once (round ``n = 1``). Before each further round ``n = 2, 3, ...``, with
    ``h`` the empirical best arm and ``l = argmax_{j≠h} UCB_j`` (ties to the lowest index),
    ``UCB_j = μ̂_j + b_j``, ``LCB_h = μ̂_h − b_h`` and
    ``b_i = σ_i √(2 log(log_const · n⁴) / N_i)``:
    stop and recommend ``h`` if ``LCB_h > UCB_l``; otherwise sample ``h`` and then ``l``.
    ``log_const = k₁ k / δ`` with ``k₁ = 5/4`` (LUCB1); the width is the sub-Gaussian form of
    the ``√(log(k₁ k n⁴/δ) / (2u))`` of rewards in ``[0, 1]``. ``n`` counts rounds, as in the
    paper; the stopping time counts samples (``k`` then 2 per round). A round that would exceed
    ``max_samples`` is not started.

    ``fam`` is the reward family's bundle (:func:`bai_lib.families.family_bundle`; ``mu`` its
    mean parameters, a pull paying :func:`~bai_lib.families.family.draw` of one normal). Bernoulli
    arms run with these widths (``σ = 1/2``: LUCB1's own bounds for rewards in ``[0, 1]``) or,
    with ``kl_widths``, KL-LUCB's (Kaufmann & Kalyanakrishnan, 2013): ``UCB_j`` and ``LCB_h`` the
    ends of ``{q : N_i d(μ̂_i, q) <= log(log_const · n⁴)}`` with the family's divergence ``d``
    (:func:`~bai_lib.families.family.kl_upper`, :func:`~bai_lib.families.family.kl_lower`),
    never wider for Bernoulli arms by Pinsker's inequality; Poisson arms with these only.

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    k = mu.size
    S = np.zeros(k)
    N = np.zeros(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    for i in range(k):
        S[i] = F.draw(fam, buf[i], mu[i], sigma[i])
        N[i] = 1.0
    pos = k
    mh = S / N
    t = np.int64(k)
    n = 1
    while True:
        n += 1
        log_term = 2.0 * math.log(log_const * float(n) ** 4)
        h = argmax(mh)
        low = -1
        top = -np.inf
        for j in range(k):
            if j != h:
                if kl_widths:
                    ucb = F.kl_upper(fam, mh[j], 0.5 * log_term / N[j])
                else:
                    ucb = mh[j] + sigma[j] * math.sqrt(log_term / N[j])
                if ucb > top:
                    top = ucb
                    low = j
        if kl_widths:
            lcb = F.kl_lower(fam, mh[h], 0.5 * log_term / N[h])
        else:
            lcb = mh[h] - sigma[h] * math.sqrt(log_term / N[h])
        if lcb > top:
            return t, np.int64(h), False, STOP_SEPARATION
        if t + 2 > max_samples:
            return t, np.int64(h), True, STOP_CENSORED
        if pos + 2 > buf.size:
            if not refill(state, buf, cancel):
                return t, np.int64(-1), True, STOP_INTERRUPTED
            pos = 0
        for arm in (h, low):
            S[arm] += F.draw(fam, buf[pos], mu[arm], sigma[arm])
            pos += 1
            N[arm] += 1.0
            mh[arm] = S[arm] / N[arm]
        t += 2


@dataclass(frozen=True)
class LUCB(Algorithm):
    """LUCB1 (Kalyanakrishnan et al., 2012): sample the empirical best and its strongest rival.

    The classic fixed-confidence algorithm of the confidence-bound family; semantics in
    :func:`~bai_lib.algorithms.lucb.lucb_run`. ``k₁ = 5/4`` and the width are those of LUCB1.

    Parameters
    ----------
    widths : {"subgaussian", "kl"}
        LUCB1's widths (default), or, for Bernoulli and Poisson rewards, KL-LUCB's
        (:data:`~bai_lib.algorithms.elimination.WIDTHS`; Poisson rewards take these only).
    """

    widths: str = "subgaussian"

    name: ClassVar[str] = "lucb"
    live: ClassVar[bool] = False  # no ask/tell engine yet
    short_label: ClassVar[str] = "LUCB"
    color: ClassVar[str] = "#8c564b"

    #: ``k₁`` of LUCB1's exploration rate.
    K1: ClassVar[float] = 1.25

    def __post_init__(self):
        V.choice(self.widths, WIDTHS, "widths")

    def exploration_level(self, t: np.ndarray, delta: float, k: int,
                          rewards: str = "gaussian") -> np.ndarray:
        """``2 log(k₁ k n⁴ / δ)`` at round ``n = t / 2`` (two pulls a round), the level of the
        widths."""
        n = np.maximum(np.asarray(t, dtype=np.float64) / 2.0, 1.0)
        return 2.0 * (math.log(self.K1 * k / delta) + 4.0 * np.log(n))

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        """:func:`~bai_lib.algorithms.lucb.lucb_run` for the family ``rewards``
        (``widths="kl"``: KL-LUCB)."""
        kl_widths = self._kl_widths(self.widths, rewards)
        log_const = self.K1 * noise_stds.size / self._single_level(deltas)
        sig = noise_stds
        fam = family_bundle(rewards)

        def call(state, mu, max_samples, cancel):
            return lucb_run(state, mu, sig, log_const, fam, kl_widths, max_samples, cancel)

        return one_level(call, None, lambda means: gap_cost(means, sig), max_samples)
