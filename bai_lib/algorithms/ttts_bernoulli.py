"""Top-Two Thompson Sampling on Bernoulli arms, with the conjugate Beta posterior.

The kernel of :class:`~bai_lib.algorithms.TTTS` for Bernoulli rewards (a
:class:`~bai_lib.BetaPrior`); the Gaussian kernel and the specification are in
:mod:`bai_lib.algorithms.ttts`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._rng import beta_variate, fill_normal, next_u64, uniform
from ..confidence import conf_factor
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_GLR, STOP_INDIFFERENCE,
                       STOP_INTERRUPTED, glr_check_bernoulli, glr_refresh,
                       record_glr_levels_bernoulli, record_rest, refill)
from .indifference import (NEVER, conf_widths, forced_arm, forcing_start, indifferent,
                           record_glr_stops)
from .challenger import TTTS_MAX_RESAMPLE

__all__ = ["ttts_levels_run_bernoulli"]

_NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _beta_draw_argmax(state, A, B, skip):
    """The argmax, over the arms other than ``skip`` (``-1``: none), of one draw of the Beta
    posteriors ``Beta(A_i, B_i)``, drawn in arm order."""
    best = -1
    best_val = _NEG_INF
    for i in range(A.size):
        if i != skip:
            x = beta_variate(state, A[i], B[i])
            if best < 0 or x > best_val:
                best_val = x
                best = i
    return best


@njit(cache=True, nogil=True)
def ttts_levels_run_bernoulli(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray,
                              prior_a: np.ndarray, prior_b: np.ndarray, deltas: np.ndarray,
                              delta0s: np.ndarray, log_consts: np.ndarray, rule: int, beta: float,
                              max_samples: int, challenger: int, out_tau: np.ndarray,
                              out_rec: np.ndarray, out_code: np.ndarray,
                              cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """:func:`~bai_lib.algorithms.ttts.ttts_levels_run` on Bernoulli arms, with the conjugate Beta posterior.

    ``mu`` holds the standard normal quantiles of the arms' means: a pull pays ``1`` when its
    standard normal draw lies below the quantile. Under the prior ``Beta(a_i, b_i)`` arm ``i``'s
    posterior after ``S_i`` successes in ``N_i`` pulls is ``Beta(a_i + S_i, b_i + N_i - S_i)``;
    a posterior draw is one :func:`bai_lib._rng.beta_variate` per arm, in arm order. The steps
    are those of :func:`~bai_lib.algorithms.ttts.ttts_levels_run`: every arm once, then the coin (one bit of a 64-bit draw
    for ``beta = 1/2``, else ``uniform < beta``), the leader the argmax of a posterior draw, and
    with probability ``1 - beta`` a challenger instead:

    * ``k = 2`` and ``beta = 1/2``: a uniformly random arm, without drawing the posterior (equal
      in law, as for Gaussian arms).
    * ``k = 2``: the other arm.
    * ``challenger = 1`` (``"resample"``): the posterior is re-drawn, at most
      :data:`~bai_lib.algorithms.challenger.TTTS_MAX_RESAMPLE` times, until its argmax differs from the leader; if none does,
      the arm most likely to beat the leader under a normal approximation of the posteriors,
      ``argmin_{j != B} (m_B - m_j) / sqrt(s_B² + s_j²)`` with the Beta means ``m`` and
      standard deviations ``s``.
    * ``challenger = 2`` (``"released"``): the argmax over the other arms of one fresh draw.

    The run stops with the GLR test on the Bernoulli statistic
    (:func:`~bai_lib.kernels.glr_passes_bernoulli`) at the Gaussian threshold ``β(t, δ)`` of
    ``rule``, used as is, and recommends the empirical best arm (the first on ties). Empirical
    means are the correctly rounded ``S_i / N_i``. Levels, records and censoring as in
    :func:`~bai_lib.algorithms.ttts.ttts_levels_run`; the cancellation flag is read every step for ``k > 2``.

    Parameters
    ----------
    sigma : float64[k]
        Sub-Gaussian parameters of the arms, for the widths of the indifference stop.
    prior_a, prior_b : float64[k]
        Shapes of the prior ``Beta(a_i, b_i)`` of each arm.
    delta0s, log_consts : float64[m] or empty
        The indifference stop of each level (empty: none), as in
        :func:`~bai_lib.algorithms.top_two.ttucb_levels_run`.
    """
    if delta0s.size > 0:
        return _ttts_levels_bernoulli(state, mu, sigma, prior_a, prior_b, deltas, delta0s,
                                      log_consts, rule, beta, max_samples, challenger, True,
                                      out_tau, out_rec, out_code, cancel)
    return _ttts_levels_bernoulli(state, mu, sigma, prior_a, prior_b, deltas, delta0s, log_consts,
                                  rule, beta, max_samples, challenger, False, out_tau, out_rec,
                                  out_code, cancel)


@njit(cache=True, nogil=True)
def _ttts_levels_bernoulli(state, mu, sigma, prior_a, prior_b, deltas, delta0s, log_consts, rule,
                           beta, max_samples, challenger, indifference, out_tau, out_rec,
                           out_code, cancel):
    k = mu.size
    S = np.zeros(k)
    N = np.zeros(k, dtype=np.int64)
    mh = np.empty(k)
    A = prior_a.copy()
    B = prior_b.copy()
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    for i in range(k):
        x = np.float64(buf[i] < mu[i])
        S[i] = x
        N[i] = 1
        mh[i] = x
        A[i] += x
        B[i] += 1.0 - x
    pos = k
    v = np.empty(0)  # unused by the Bernoulli GLR test
    wd = np.empty(k)  # the Conf widths of the indifference stop, at the current level
    n0, t_force = np.int64(NEVER), np.int64(NEVER)  # forced exploration (forcing_start)
    if indifference:
        conf_widths(wd, sigma, N, log_consts[0])
        n0, t_force = forcing_start(sigma, log_consts[0], delta0s[0])
    p = 0  # the next level to reach
    m = deltas.size
    t = np.int64(k)
    t_next = t
    thr_lo = 0.0
    bits = np.uint64(0)
    nbits = 0
    one = np.uint64(1)
    fair = beta == 0.5
    while True:
        if t >= t_next:
            thr_lo, t_next = glr_refresh(t, deltas[p], rule)
        best, stop = glr_check_bernoulli(mh, N, t, deltas[p], rule, thr_lo)
        if indifference and (stop or indifferent(mh, wd, best, delta0s[p])):
            p, code = record_glr_stops(p, t, best, STOP_GLR if stop else STOP_INDIFFERENCE, mh, v,
                                       N, wd, sigma, deltas, delta0s, log_consts, rule, True,
                                       out_tau, out_rec, out_code)
            if p == m:
                return t, np.int64(best), False, code
            thr_lo, t_next = glr_refresh(t, deltas[p], rule)
            n0, t_force = forcing_start(sigma, log_consts[p], delta0s[p])
        elif stop:
            p = record_glr_levels_bernoulli(p, t, best, mh, N, deltas, rule, out_tau, out_rec,
                                            out_code)
            if p == m:
                return t, np.int64(best), False, STOP_GLR
            thr_lo, t_next = glr_refresh(t, deltas[p], rule)
        if t + 1 > max_samples:
            record_rest(p, t, best, STOP_CENSORED, out_tau, out_rec, out_code)
            return t, np.int64(best), True, STOP_CENSORED
        if k > 2 and cancel[0]:
            record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
            return t, np.int64(-1), True, STOP_INTERRUPTED
        # the coin written out: as a function returning (coin, bits, nbits) it halved the
        # throughput of the fair two-arm case
        if fair:
            if nbits == 0:
                bits = next_u64(state)
                nbits = 64
            coin = (bits & one) != 0
            bits >>= one
            nbits -= 1
        else:
            coin = uniform(state) < beta
        if k == 2 and fair:
            arm = 1 if coin else 0
        else:
            leader = _beta_draw_argmax(state, A, B, -1)
            if coin:
                arm = leader
            elif k == 2:
                arm = 1 - leader
            elif challenger == 2:
                arm = _beta_draw_argmax(state, A, B, leader)
            else:
                arm = leader
                for _ in range(TTTS_MAX_RESAMPLE):
                    c = _beta_draw_argmax(state, A, B, -1)
                    if c != leader:
                        arm = c
                        break
                if arm == leader:
                    arm = _likeliest_rival(A, B, leader)
        if indifference and t >= t_force:
            arm = forced_arm(N, n0, arm)
        if pos == buf.size:
            if not refill(state, buf, cancel):
                record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
                return t, np.int64(-1), True, STOP_INTERRUPTED
            pos = 0
        x = np.float64(buf[pos] < mu[arm])
        pos += 1
        S[arm] += x
        N[arm] += 1
        mh[arm] = S[arm] / N[arm]
        A[arm] += x
        B[arm] += 1.0 - x
        if indifference:
            wd[arm] = sigma[arm] * conf_factor(float(N[arm]), log_consts[p])
        t += 1


@njit(cache=True, nogil=True)
def _likeliest_rival(A, B, leader):
    """``argmin_{j != leader} (m_L - m_j) / sqrt(s_L² + s_j²)`` for the ``Beta(A, B)`` means
    ``m`` and standard deviations ``s``."""
    arm = -1
    best_score = np.inf
    n_l = A[leader] + B[leader]
    m_l = A[leader] / n_l
    v_l = A[leader] * B[leader] / (n_l * n_l * (n_l + 1.0))
    for j in range(A.size):
        if j != leader:
            n_j = A[j] + B[j]
            score = (m_l - A[j] / n_j) / math.sqrt(v_l + A[j] * B[j] / (n_j * n_j * (n_j + 1.0)))
            if arm < 0 or score < best_score:
                best_score = score
                arm = j
    return arm
