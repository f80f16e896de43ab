"""Conventions and shared steps of the compiled single-run simulators (numba).

A simulator simulates **one** run of a best arm identification algorithm on a fixed Gaussian
bandit instance ``mu`` (arm means) with known noise standard deviations ``sigma``: arm ``i``
returns ``mu[i] + sigma[i] * Z`` with ``Z ~ N(0, 1)`` (paper, Section 2). Each simulator lives
with its algorithm in :mod:`bai_lib.algorithms` (``elimination_run``, ``lucb_run`` and the
GLR algorithms' ``*_levels_run``); this module holds what
they share: the stop codes, the normal buffer, the GLR stopping steps and the bookkeeping of a
sample. All randomness (rewards and the algorithm's own coin flips) comes from the
xoshiro256++ state ``state`` (see :mod:`bai_lib._rng`), which is advanced in place. Every
simulator returns a tuple

``(tau, recommendation, censored, stop_reason)``

with ``tau`` the total number of samples (int64), ``recommendation`` the
0-based index of the recommended arm, ``censored`` a bool, and
``stop_reason`` one of :data:`STOP_SINGLE_ARM`, :data:`STOP_INDIFFERENCE`,
:data:`STOP_GLR`, :data:`STOP_CENSORED`, :data:`STOP_SEPARATION`.

Every simulator takes a last argument ``cancel`` (uint8[1], see :func:`cancel_flag`) and reads
it each time it refills its normal buffer, that is every :data:`NORMAL_BUFFER` rewards at most
(TTTS with more than two arms, whose steps draw the whole posterior, at every step):
once ``cancel[0]`` is nonzero it returns at once with ``stop_reason=STOP_INTERRUPTED``
(recommendation ``-1``, ``censored=True``). Another thread sets the flag, which is how
:func:`bai_lib.simulate` stops every thread within a fraction of a second on Ctrl-C.

``max_samples`` bounds the work of a run: when the next sampling step would
make the number of samples exceed ``max_samples`` the run stops with
``censored=True`` and ``stop_reason=STOP_CENSORED``, ``tau <= max_samples``,
and recommends the empirical best arm (among the active arms for the
elimination algorithms).  No simulator can loop forever.

The kernels avoid the transcendental functions of the stopping and
confidence thresholds at most steps by checking first against a cheap bound
that can only err on the side of "maybe"; the exact threshold is evaluated
whenever the bound does not settle the question, so the decisions are those
of the direct implementation.  See each docstring for the bound used.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from numba import njit

from ._rng import fill_normal
from .kl import kl_glr
from .stopping import glr_beta

__all__ = [
    "STOP_SINGLE_ARM",
    "STOP_INDIFFERENCE",
    "STOP_GLR",
    "STOP_CENSORED",
    "STOP_SEPARATION",
    "STOP_INTERRUPTED",
    "STOP_REASON_NAMES",
    "cancel_flag",
    "NORMAL_BUFFER",
    "argmax",
    "first_round",
    "glr_check",
    "glr_check_bernoulli",
    "glr_passes",
    "glr_passes_bernoulli",
    "glr_refresh",
    "observe",
    "level_records",
    "record_level",
    "record_glr_levels",
    "record_glr_levels_bernoulli",
    "record_rest",
    "refill",
]

#: Stopped because a single active arm remained (Algorithm 1, first return).
STOP_SINGLE_ARM = 0
#: Stopped by the indifference rule ``Delta_safe <= Delta_0`` (second return).
STOP_INDIFFERENCE = 1
#: Stopped by a GLR / Chernoff-type test (TTTS, TTUCB).
STOP_GLR = 2
#: Stopped because ``max_samples`` would have been exceeded.
STOP_CENSORED = 3
#: Stopped because the confidence intervals of the leader and the rest separated (LUCB).
STOP_SEPARATION = 4
#: Stopped because the caller raised the cancellation flag (Ctrl-C); the run is incomplete.
STOP_INTERRUPTED = 5
#: Names of the stop reason codes, indexed by code.
STOP_REASON_NAMES = ("single_arm", "indifference", "glr", "censored", "separation", "interrupted")

#: Rewards use standard normals taken from a buffer of this length, refilled with
#: :func:`bai_lib._rng.fill_normal` (which keeps the generator state in
#: registers); unused entries are dropped when a step needs more than remain.
NORMAL_BUFFER = 512

def cancel_flag(cancel: Optional[np.ndarray] = None) -> np.ndarray:
    """The cancellation flag a simulator reads: ``cancel`` itself, or a new lowered flag.

    Parameters
    ----------
    cancel : ndarray of uint8, shape (1,), optional
        A flag shared with another thread, which raises it (``cancel[0] = 1``) to stop the run.
    """
    if cancel is None:
        return np.zeros(1, dtype=np.uint8)
    if not (isinstance(cancel, np.ndarray) and cancel.dtype == np.uint8 and cancel.shape == (1,)):
        raise ValueError(f"cancel must be a uint8 array of shape (1,), got {cancel!r}")
    return cancel


# ---------------------------------------------------------------------------
# Steps shared by the GLR-stopped kernels (TTTS, TTUCB, EB-TC, Track-and-Stop, plug-ins)
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def glr_passes(mh: np.ndarray, v: np.ndarray, best: int, c: float) -> bool:
    """Whether ``(mh[best] - mh[j])² >= c (v[best] + v[j])`` for every ``j != best``.

    With ``v_i = σ_i²/N_i`` and ``c = 2β`` this is the Gaussian GLR (Chernoff) test
    ``min_j Z_{best,j} >= β``, ``Z_{ab} = (μ̂_a − μ̂_b)² / (2(σ_a²/N_a + σ_b²/N_b))``; the caller
    passes the empirical best arm, at which ``max_a min_b Z_ab`` is attained. Two arms take a
    branch-free path (the same comparison), which the compiler keeps in registers.
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
def glr_passes_bernoulli(mh: np.ndarray, N: np.ndarray, best: int, c: float) -> bool:
    """:func:`glr_passes` for Bernoulli arms: whether ``Z_{best,j} >= c / 2`` for every
    ``j != best``, ``Z`` the Bernoulli GLR statistic :func:`~bai_lib.kl.kl_glr`.

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
def glr_check(mh, v, t, delta, rule, thr_lo):
    """``(best, stop)``: the empirical best arm and whether the GLR test passes at time ``t``.

    ``thr_lo <= β(t, δ)`` is a cheap lower bound of the threshold (its value at an earlier time,
    :func:`~bai_lib.stopping.glr_beta` being increasing in ``t``); the exact threshold is computed
    only when the
    test passes against it, so the decision is that of the exact test.
    """
    best = argmax(mh)
    if glr_passes(mh, v, best, 2.0 * thr_lo):
        if glr_passes(mh, v, best, 2.0 * glr_beta(t, delta, rule)):
            return best, True
    return best, False


@njit(cache=True, nogil=True)
def glr_check_bernoulli(mh, N, t, delta, rule, thr_lo):
    """:func:`glr_check` for Bernoulli arms (:func:`glr_passes_bernoulli`, ``N`` the counts)."""
    best = argmax(mh)
    if glr_passes_bernoulli(mh, N, best, 2.0 * thr_lo):
        if glr_passes_bernoulli(mh, N, best, 2.0 * glr_beta(t, delta, rule)):
            return best, True
    return best, False


@njit(cache=True, nogil=True)
def glr_refresh(t, delta, rule):
    """``(thr_lo, t_next)``: a lower bound of ``β(t', δ)`` valid until ``t' = t_next``.

    ``β`` is increasing in ``t``, so its value at ``t`` (less a rounding margin) bounds it from
    below for every later time; it is refreshed every ``max(64, t/64)`` samples.
    """
    return glr_beta(t, delta, rule) - 1e-9, t + max(64, t >> 6)


@njit(cache=True, nogil=True)
def level_records(m):
    """``(out_tau, out_rec, out_code)``: the int64 arrays of :func:`record_level` for ``m``
    levels (one for a run at a single ``δ``)."""
    return (np.empty(m, dtype=np.int64), np.empty(m, dtype=np.int64),
            np.empty(m, dtype=np.int64))


@njit(cache=True, nogil=True)
def record_level(p: int, t: int, rec: int, code: int, out_tau: np.ndarray, out_rec: np.ndarray,
                 out_code: np.ndarray) -> int:
    """Record level ``p`` of a run scored at several confidence levels; return ``p + 1``.

    Simulators whose sampling rule does not depend on ``δ`` follow one trajectory and record,
    for each level ``δ_0 > δ_1 > ...`` in turn, the first time ``t`` its stopping test passes,
    the recommendation ``rec`` and the stop code: exactly what a run at that ``δ`` alone returns.
    """
    out_tau[p] = t
    out_rec[p] = rec
    out_code[p] = code
    return p + 1


@njit(cache=True, nogil=True)
def record_glr_levels(p, t, best, mh, v, deltas, rule, out_tau, out_rec, out_code):
    """Record level ``p``, whose GLR test has just passed at ``t``, and every later level whose
    test (threshold :func:`~bai_lib.stopping.glr_beta` at ``deltas[q]``) passes at ``t`` too;
    return the next
    level to reach (``deltas.size`` when all are recorded)."""
    p = record_level(p, t, best, STOP_GLR, out_tau, out_rec, out_code)
    while p < deltas.size and glr_passes(mh, v, best, 2.0 * glr_beta(t, deltas[p], rule)):
        p = record_level(p, t, best, STOP_GLR, out_tau, out_rec, out_code)
    return p


@njit(cache=True, nogil=True)
def record_glr_levels_bernoulli(p, t, best, mh, N, deltas, rule, out_tau, out_rec, out_code):
    """:func:`record_glr_levels` for Bernoulli arms (:func:`glr_passes_bernoulli`)."""
    p = record_level(p, t, best, STOP_GLR, out_tau, out_rec, out_code)
    while p < deltas.size and glr_passes_bernoulli(mh, N, best,
                                                   2.0 * glr_beta(t, deltas[p], rule)):
        p = record_level(p, t, best, STOP_GLR, out_tau, out_rec, out_code)
    return p


@njit(cache=True, nogil=True)
def record_rest(p, t, rec, code, out_tau, out_rec, out_code):
    """Record every level from ``p`` on as ended at ``t`` with ``code`` (censored, interrupted)."""
    for q in range(p, out_tau.size):
        record_level(q, t, rec, code, out_tau, out_rec, out_code)


@njit(cache=True, nogil=True)
def first_round(state, mu, sigma, var, buf, S, N, mh, v):
    """Sample every arm once from a freshly filled buffer; return the buffer position (``k``).

    Sets ``S_i = N_i μ̂_i`` to the reward, ``N_i = 1``, ``mh_i`` to the reward and
    ``v_i = var_i``.
    """
    fill_normal(state, buf)
    for i in range(mu.size):
        x = mu[i] + sigma[i] * buf[i]
        S[i] = x
        N[i] = 1
        mh[i] = x
        v[i] = var[i]
    return mu.size


@njit(cache=True, nogil=True)
def refill(state, buf, cancel):
    """Refill the normal buffer, unless the cancellation flag is raised: then return ``False``.

    Where simulators look at ``cancel``: once per :data:`NORMAL_BUFFER` rewards (TTTS with
    more than two arms also at every step).
    """
    if cancel[0]:
        return False
    fill_normal(state, buf)
    return True


@njit(cache=True, nogil=True)
def observe(arm, x, S, N, mh, v, inv_next, var):
    """Book reward ``x`` of ``arm``: sums, counts, mean ``S/N`` and ``v = var/N``.

    ``inv_next[arm]`` holds ``1/(N_arm + 1)``, prepared one pull ahead so that the division is off
    the critical path; it is refreshed here.
    """
    S[arm] += x
    N[arm] += 1
    inv = inv_next[arm]
    mh[arm] = S[arm] * inv
    v[arm] = var[arm] * inv
    inv_next[arm] = 1.0 / (N[arm] + 1)


@njit(cache=True, nogil=True)
def argmax(x):
    """Index of the largest entry of ``x`` (the first one on ties)."""
    best = 0
    for i in range(1, x.size):
        if x[i] > x[best]:
            best = i
    return best
