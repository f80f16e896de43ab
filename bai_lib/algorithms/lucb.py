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
from .ask_tell import RUNNING, SIMULATE, empirical_leader, scheduled_look, take_pull
from .base import Algorithm, Binding, gap_cost, one_level
from .elimination import WIDTHS

__all__ = ["LUCB", "lucb_run", "lucb_pair", "lucb_ask_tell"]


@njit(cache=True, nogil=True)
def lucb_pair(fam: NamedTuple, mh: np.ndarray, N: np.ndarray, sigma: np.ndarray, n: int,
              log_const: float, kl_widths: bool) -> tuple[int, int, bool]:
    """``(h, l, separated)`` before round ``n``: the empirical best arm ``h``, its strongest
    rival ``l = argmax_{j≠h} UCB_j`` (ties to the lowest index) and whether ``LCB_h > UCB_l``
    (the stop), with the bounds of :func:`lucb_run`."""
    k = mh.size
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
    return h, low, lcb > top


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
        h, low, separated = lucb_pair(fam, mh, N, sigma, n, log_const, kl_widths)
        if separated:
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


@njit(cache=True, nogil=True)
def lucb_ask_tell(fam: NamedTuple, state: np.ndarray, sigma: np.ndarray, log_const: float,
                  kl_widths: bool, max_samples: int, arms: np.ndarray, xs: np.ndarray,
                  looks: np.ndarray, mode: int, n_more: int, schedule: np.ndarray,
                  mu: np.ndarray,
                  out_arms: np.ndarray, out_xs: np.ndarray, S: np.ndarray, N: np.ndarray,
                  cancel: np.ndarray) -> tuple[int, int, int, int, int]:
    """The engine of :class:`LUCB` (:mod:`bai_lib.algorithms.ask_tell` describes the engines):
    replay the log ``(arms, xs, looks)``, then plan or simulate ``n_more`` pulls; ``S`` and
    ``N`` receive the sums and counts.

    The rounds are those of :func:`lucb_run`: the first samples every arm once, each later one
    the pair ``(h, l)`` of :func:`lucb_pair`, in either order; a pull of an arm that is not due
    in the current round is refused (``bad``). The stop ``LCB_h > UCB_l`` is checked before a
    round when a look fell in the round before: after a log entry whose ``looks`` flag is set,
    and in the simulate mode at the looks of ``schedule``
    (:func:`~bai_lib.algorithms.ask_tell.look_schedule`; at every round with
    ``look_every = 1``, as the kernel does). The run is censored before a round that would take
    it past ``max_samples``. A plan completes the current round and then believes every pending
    pull to pay its arm's current mean: the means stay, the counts and the widths move on."""
    k = sigma.size
    act = np.arange(k)
    due = np.ones(k, dtype=np.uint8)   # round 1: every arm, the normal of arm i at slot i
    slot = np.arange(k)
    mh = np.zeros(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    pos = 0
    t = np.int64(0)
    n = 1
    in_round = 0
    pulls = k
    pending = False
    h, low = 0, 0
    n_log = arms.size
    total = n_log + (n_more if mode == SIMULATE else 0)
    n_out = 0
    for j in range(total + 1):
        logged = j < n_log
        if in_round == 0 and n > 1:  # a new round of the pair
            h, low, separated = lucb_pair(fam, mh, N, sigma, n, log_const, kl_widths)
            if pending and separated:
                return STOP_SEPARATION, h, t, n_out, -1
            pending = False
            if t + 2 > max_samples:
                return STOP_CENSORED, h, t, n_out, -1
            if j == total:
                break
            if pos + 2 > buf.size:
                if not refill(state, buf, cancel):
                    return STOP_INTERRUPTED, -1, t, n_out, -1
                pos = 0
            pulls = 2
            due[h], due[low] = 1, 1
            slot[h], slot[low] = 0, 1
        if j == total:
            break
        if logged:
            if not due[arms[j]]:
                return RUNNING, empirical_leader(S, N, act, k), t, n_out, j
            arm = arms[j]
        else:
            if cancel[0]:
                return STOP_INTERRUPTED, -1, t, n_out, -1
            arm = h if n > 1 and due[h] else low if n > 1 else _first_due(due)
        arm, x, n_out = take_pull(fam, j, arm, arms, xs, buf[pos + slot[arm]], mu, sigma,
                                  out_arms, out_xs, n_out)
        S[arm] += x
        N[arm] += 1
        mh[arm] = S[arm] / N[arm]
        due[arm] = 0
        in_round += 1
        t += 1
        if (looks[j] if logged else scheduled_look(t, schedule)):
            pending = True
        if in_round == pulls:
            pos += pulls
            n += 1
            in_round = 0
    if mode == SIMULATE:
        return RUNNING, empirical_leader(S, N, act, k), t, n_out, -1
    planned = 0
    counts = N.astype(np.float64)
    while planned < n_more:
        if in_round == 0 and n > 1:
            h, low, _ = lucb_pair(fam, mh, counts, sigma, n, log_const, kl_widths)
            due[h], due[low] = 1, 1
            pulls = 2
        arm = h if n > 1 and due[h] else low if n > 1 else _first_due(due)
        out_arms[planned] = arm
        planned += 1
        counts[arm] += 1
        due[arm] = 0
        in_round += 1
        if in_round == pulls:
            n += 1
            in_round = 0
    return RUNNING, empirical_leader(S, N, act, k), t, planned, -1


@njit(cache=True, nogil=True)
def _first_due(due):
    for i in range(due.size):
        if due[i]:
            return i
    return 0


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
    short_label: ClassVar[str] = "LUCB"
    color: ClassVar[str] = "#8c564b"

    #: ``k₁`` of LUCB1's exploration rate.
    K1: ClassVar[float] = 1.25

    def __post_init__(self):
        V.choice(self.widths, WIDTHS, "widths")

    def due_now(self, counts: np.ndarray, planned: np.ndarray, t: int) -> list:
        """After the first round, the rest of the current pair: one arm mid-round, both at its
        start (the first of ``planned``)."""
        k = counts.size
        if counts.min() == 0:
            return super().due_now(counts, planned, t)
        return sorted({int(a) for a in planned[:2 - (t - k) % 2]})

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

        def ask_tell(state, arms, xs, looks, mode, n_more, schedule, mu, *out,
                     max_samples=max_samples):
            return lucb_ask_tell(fam, state, sig, log_const, kl_widths, max_samples, arms, xs,
                                 looks, mode, n_more, schedule, mu, *out)

        return one_level(call, None, lambda means: gap_cost(means, sig), max_samples, ask_tell)
