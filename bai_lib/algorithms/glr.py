"""The one compiled loop of the GLR-stopped algorithms: TTTS, TTUCB, EB-TC, Track-and-Stop and
a user's :class:`~bai_lib.algorithms.SamplingRule`.

:func:`glr_run` owns everything those algorithms share: the first round, drawing and booking
rewards (through the reward family, :mod:`bai_lib.families`), the GLR test and its cheap lower
bound, the indifference stop and its forced exploration, recording every confidence level,
censoring and cancellation. What differs is the *sampling rule*, given as a bundle of scalar
constants (a named tuple) whose class has four compiled steps registered with :func:`register`
(``refresh`` and ``update`` may be left out). Its state is :data:`SLOTS` arrays ``s0, …, s5``
(unused ones empty) and a tuple of scalars ``carry``:

``start(steps, data, mh, var) -> ((s0, …, s5), carry)``
    The state after the first round (every arm sampled once, ``mh`` the rewards, ``data`` the
    rule's arrays, a tuple, ``var`` the statistic variances).
``refresh(steps, s0, …, s5, carry, t, t_next) -> carry``
    Called at the start of every block of times ``[t, t_next)`` (the blocks of the threshold's
    lower bound, ``max(64, t/64)`` long).
``choose(steps, s0, …, s5, carry, fam, t, best, mh, v, N, S, sigma, var, state) -> (arm, carry)``
    The arm to sample at time ``t`` (``best`` the empirical best arm, ``state`` the run's
    generator, from which the rule may draw).
``update(steps, s0, …, s5, carry, arm, x, N, S, var) -> carry``
    After the reward ``x`` of ``arm`` is booked.

The compiler resolves the steps and the family's functions from the bundles' types
(:func:`bai_lib.kernels.bundle_generic`) and writes them out inside the loop, so each algorithm
and family gets its own compiled and cached loop, with no call and no branch on either at run
time. Three rules keep that loop as fast as one written by hand (measured with
``benchmarks/bench_simulators.py``):

* bundles hold scalars only, and arrays travel as arguments (a bundle's array read at every
  sample cost nine tenths of the speed);
* the arrays are handed to the steps as :func:`~bai_lib.kernels.borrowed` views, which numba
  does not reference-count (each counted array costs two atomic operations per step);
* the state arrays are separate arguments, never unpacked from a tuple inside a step: numba's
  dead-code pass does not follow an array out of a tuple, and would drop the step's writes to
  it once the step is written out in the loop. Scalars that change at every step (the leader
  coin's bits, the bonus scales) are carried in ``carry`` and stay in registers.
"""

from __future__ import annotations

from typing import Callable, NamedTuple, Optional

import numpy as np
from numba import njit

from .._rng import fill_normal
from ..confidence import conf_factor
from ..families import family as F
from ..families import family_bundle
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_GLR, STOP_INDIFFERENCE,
                       STOP_INTERRUPTED, argmax, borrowed, bundle_generic, cancel_flag,
                       record_level, record_rest, refill)
from ..stopping import glr_beta, ttucb_c
from .ask_tell import RUNNING, SIMULATE, buffer_position, scheduled_look, take_pull
from .base import Binding, gap_cost
from .indifference import NEVER, conf_widths, forced_arm, forcing_start, indifferent

__all__ = ["glr_run", "glr_ask_tell", "bind_glr", "GLRThreshold", "gap_level", "register",
           "start", "refresh",
           "choose", "update", "SLOTS"]

class GLRThreshold(NamedTuple):
    """The threshold of a GLR test, as the level of the squared normalised gap
    (:func:`~bai_lib.algorithms.glr.gap_level`).

    Attributes
    ----------
    rule : int
        A code of :data:`bai_lib.stopping.GLR_THRESHOLDS` (``2 β(t, δ)``), or ``-1`` for TTUCB's
        ``c_scale · c(t, δ)`` (:func:`bai_lib.stopping.ttucb_c`).
    c_scale, log_shift : float
        With ``rule = -1``: the multiplier of ``c(t, δ)`` and the ``a`` of ``log((t - a)/2)``.
    """

    rule: int
    c_scale: float
    log_shift: float

#: The number of state arrays of a sampling rule (see the module docstring).
SLOTS = 6
_S = ", ".join(f"s{i}" for i in range(SLOTS))

#: The sampling rule's steps, resolved from the class of its bundle (see the module docstring).
start = bundle_generic("start", "steps, data, mh, var")
refresh = bundle_generic("refresh", f"steps, {_S}, carry, t, t_next")
choose = bundle_generic("choose",
                        f"steps, {_S}, carry, fam, t, best, mh, v, N, S, sigma, var, state")
update = bundle_generic("update", f"steps, {_S}, carry, arm, x, N, S, var")


@njit(cache=True, nogil=True)
def _no_refresh(steps, s0, s1, s2, s3, s4, s5, carry, t, t_next):
    return carry


@njit(cache=True, nogil=True)
def _no_update(steps, s0, s1, s2, s3, s4, s5, carry, arm, x, N, S, var):
    return carry


def register(bundle: type, start_step: Callable, choose_step: Callable,
             update_step: Optional[Callable] = None,
             refresh_step: Optional[Callable] = None) -> type:
    """Register the compiled steps of the sampling rule whose constants are the named tuple class
    ``bundle`` (a rule without ``update`` or ``refresh`` step keeps its state as it is); return
    ``bundle``."""
    for generic, step in ((start, start_step), (choose, choose_step),
                          (update, update_step or _no_update),
                          (refresh, refresh_step or _no_refresh)):
        generic.register(bundle, step)
    return bundle


@njit(cache=True, nogil=True)
def gap_level(th: GLRThreshold, t: int, level: float) -> float:
    """The level the squared normalised gap must reach at time ``t`` (twice the GLR statistic):
    ``2 β(t, δ)`` (:func:`~bai_lib.stopping.glr_beta`, ``level`` its level argument), or for
    ``th.rule = -1`` ``c_scale c(t, δ)`` (:func:`~bai_lib.stopping.ttucb_c`, ``level``
    its constant term); never below 0. Increasing in ``t``."""
    if th.rule < 0:
        c = th.c_scale * ttucb_c(float(t), level, th.log_shift)
    else:
        c = 2.0 * glr_beta(float(t), level, th.rule)
    return max(c, 0.0)


@njit(cache=True, nogil=True)
def glr_run(fam: NamedTuple, th: GLRThreshold, steps: NamedTuple, data: tuple,
            state: np.ndarray, mu: np.ndarray, sigma: np.ndarray, var: np.ndarray,
            levels: np.ndarray, delta0s: Optional[np.ndarray],
            log_consts: np.ndarray, max_samples: int, out_tau: np.ndarray, out_rec: np.ndarray,
            out_code: np.ndarray, cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of a GLR-stopped algorithm on the instance ``mu``, scored at every level.

    Each arm is sampled once; then at every time ``t`` (samples so far), with ``B`` the empirical
    best arm (the first on ties): stop at level ``p`` if the GLR test passes, that is
    ``Z_{B,j} >= gap_level(th, t, levels[p]) / 2`` for every ``j != B``
    (:func:`bai_lib.families.family.glr_passes`), or, with the indifference stop, if
    ``max_{j≠B} (μ̂_j + w_j) − (μ̂_B − w_B) <= Δ0``
    (:func:`~bai_lib.algorithms.indifference.indifferent`, ``w_j = σ_j c(N_j)``), and recommend
    ``B``; otherwise sample the arm the rule ``steps`` chooses, except that from the forcing time
    of the indifference stop an arm below ``n0`` samples is sampled first (:func:`~bai_lib.algorithms.indifference.forcing_start`).

    A level's stop implies the same at every earlier level, so one trajectory is scored at every
    level in turn, each record being exactly a run at that level alone when the rule does not
    depend on it (:func:`bai_lib.kernels.record_level`). The test is first checked against a lower
    bound of the threshold, its value at the start of the current block of times (the threshold
    is increasing in ``t``), and the exact threshold is computed only when that passes, so the
    decisions are those of the exact test.

    Parameters
    ----------
    fam
        The reward family's bundle (:func:`bai_lib.families.family_bundle`); rewards come from
        the run's normal stream (:func:`bai_lib.families.family.draw`).
    th : GLRThreshold
        The threshold; ``levels[p]`` is its level argument at level ``p``.
    steps, data
        The sampling rule's bundle, its steps registered with :func:`register`, and its arrays
        (a tuple, handed to its ``start``).
    sigma, var : float64[k]
        The noise levels of the rewards and of the ``Conf`` widths, and the variances of the
        statistics (``σ²``, or 1 for TTUCB's released code).
    delta0s, log_consts : float64[m], or None and any array
        ``Δ0`` and the ``Conf`` constant (:func:`bai_lib.confidence.conf_factor`) of the
        indifference stop at each level; ``delta0s=None`` without it (the compiler then drops
        it).
    state, mu, max_samples, cancel
        As for :func:`~bai_lib.algorithms.elimination.elimination_run`; the flag is also read at
        every step on more than two arms, where a step scans every arm.
    levels : float64[m]
        The threshold's level argument per confidence level, ``δ`` decreasing.
    out_tau, out_rec, out_code : int64[m]
        Each level's stopping time, recommendation and stop code.

    Returns
    -------
    tau, recommendation, censored, stop_reason
        Of the last level.
    """
    k = mu.size
    S = np.zeros(k)
    N = np.zeros(k, dtype=np.int64)
    mh = np.empty(k)
    v = np.empty(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    for i in range(k):
        x = F.draw(fam, buf[i], mu[i], sigma[i])
        S[i] = x
        N[i] = 1
        mh[i] = x
        v[i] = var[i]
    pos = k
    (s0, s1, s2, s3, s4, s5), carry = start(steps, data, mh, var)
    inv_next = np.full(k, 0.5)  # 1 / (N_i + 1), prepared one pull ahead
    w = np.empty(k)  # the Conf widths of the indifference stop, at the current level
    n0, t_force = np.int64(NEVER), np.int64(NEVER)  # forced exploration (forcing_start)
    if delta0s is not None:
        conf_widths(w, sigma, N, log_consts[0])
        n0, t_force = forcing_start(sigma, log_consts[0], delta0s[0])
    t = np.int64(k)
    t_next = t
    c_lo = 0.0
    p = 0  # the next level to reach
    m = levels.size
    while True:
        if t >= t_next:
            t_next = t + max(64, t >> 6)
            c_lo = max(gap_level(th, t, levels[p]) - 1e-9, 0.0)
            carry = refresh(steps, borrowed(s0), borrowed(s1), borrowed(s2), borrowed(s3),
                            borrowed(s4), borrowed(s5), carry, t, t_next)
        best = (1 if mh[1] > mh[0] else 0) if k == 2 else argmax(mh)  # argmax, unrolled
        code = -1
        if F.glr_passes(fam, borrowed(mh), borrowed(v), borrowed(N), best, c_lo):
            if F.glr_passes(fam, borrowed(mh), borrowed(v), borrowed(N), best,
                            gap_level(th, t, levels[p])):
                code = STOP_GLR
        if delta0s is not None:
            if code < 0 and indifferent(mh, w, best, delta0s[p]):
                code = STOP_INDIFFERENCE
        if code >= 0:
            p, code = _record_stops(fam, th, p, t, best, code, mh, v, N, w, sigma, levels,
                                    delta0s, log_consts, out_tau, out_rec, out_code)
            if p == m:
                return t, np.int64(best), False, code
            if delta0s is not None:
                n0, t_force = forcing_start(sigma, log_consts[p], delta0s[p])
            # a lower bound for the new level until the next refresh (increasing in t)
            c_lo = max(gap_level(th, t, levels[p]) - 1e-9, 0.0)
        if t + 1 > max_samples:
            record_rest(p, t, best, STOP_CENSORED, out_tau, out_rec, out_code)
            return t, np.int64(best), True, STOP_CENSORED
        if k > 2 and cancel[0]:
            # a step scans every arm (TTTS draws the posterior several times): with thousands of
            # arms, NORMAL_BUFFER steps between refills would take seconds
            record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
            return t, np.int64(-1), True, STOP_INTERRUPTED
        arm, carry = choose(steps, borrowed(s0), borrowed(s1), borrowed(s2), borrowed(s3),
                            borrowed(s4), borrowed(s5), carry, fam, t, best, borrowed(mh),
                            borrowed(v), borrowed(N), borrowed(S), borrowed(sigma),
                            borrowed(var), borrowed(state))
        if delta0s is not None:
            if t >= t_force:
                arm = forced_arm(N, n0, arm)
        if pos == buf.size:
            if not refill(state, buf, cancel):
                record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
                return t, np.int64(-1), True, STOP_INTERRUPTED
            pos = 0
        x = F.draw(fam, buf[pos], mu[arm], sigma[arm])
        pos += 1
        F.observe(fam, arm, x, borrowed(S), borrowed(N), borrowed(mh), borrowed(v),
                  borrowed(inv_next), borrowed(var))
        if delta0s is not None:
            w[arm] = sigma[arm] * conf_factor(float(N[arm]), log_consts[p])
        carry = update(steps, borrowed(s0), borrowed(s1), borrowed(s2), borrowed(s3),
                       borrowed(s4), borrowed(s5), carry, arm, x, borrowed(N), borrowed(S),
                       borrowed(var))
        t += 1


@njit(cache=True, nogil=True)
def _record_stops(fam, th, p, t, best, code, mh, v, N, w, sigma, levels, delta0s, log_consts,
                  out_tau, out_rec, out_code):
    """Record level ``p``, stopped at ``t`` with ``code``, and every later level whose GLR test
    or indifference stop passes at ``t`` too (each implies the same at the earlier levels, so
    the records are those of each level alone); return the next level and the last code. The
    widths ``w`` are left at the next level's constant."""
    while True:
        p = record_level(p, t, best, code, out_tau, out_rec, out_code)
        if p == levels.size:
            return p, code
        if delta0s is not None:
            conf_widths(w, sigma, N, log_consts[p])
        if F.glr_passes(fam, mh, v, N, best, gap_level(th, t, levels[p])):
            code = STOP_GLR
        elif delta0s is None:
            return p, code
        elif indifferent(mh, w, best, delta0s[p]):
            code = STOP_INDIFFERENCE
        else:
            return p, code


@njit(cache=True, nogil=True)
def _first_unsampled(N):
    """The first arm without a reward, or ``-1``."""
    for i in range(N.size):
        if N[i] == 0:
            return i
    return -1


@njit(cache=True, nogil=True)
def _glr_stop(fam, th, level, mh, v, N, w, delta0s, t):
    """The stop at a look at time ``t``: ``(code, best)``, :data:`RUNNING` if none (censoring
    at ``max_samples`` is checked at every step, look or not)."""
    best = argmax(mh)
    if F.glr_passes(fam, mh, v, N, best, gap_level(th, t, level)):
        return STOP_GLR, best
    if delta0s is not None and indifferent(mh, w, best, delta0s[0]):
        return STOP_INDIFFERENCE, best
    return RUNNING, best


@njit(cache=True, nogil=True)
def glr_ask_tell(fam: NamedTuple, th: GLRThreshold, steps: NamedTuple, data: tuple,
                 state: np.ndarray, sigma: np.ndarray, var: np.ndarray, level: float,
                 delta0s: Optional[np.ndarray], log_consts: np.ndarray, max_samples: int,
                 arms: np.ndarray, xs: np.ndarray, looks: np.ndarray, mode: int, n_more: int,
                 schedule: np.ndarray, mu: np.ndarray, out_arms: np.ndarray, out_xs: np.ndarray,
                 S: np.ndarray, N: np.ndarray,
                 cancel: np.ndarray) -> tuple[int, int, int, int, int]:
    """Replay the log ``(arms, xs, looks)`` of a GLR-stopped algorithm, then plan or simulate
    ``n_more`` pulls (:mod:`bai_lib.algorithms.ask_tell` describes the engines, their modes and
    what they return); ``S`` and ``N`` receive the sums and counts.

    The constants are those of :func:`glr_run` at one level (``level``,
    ``delta0s`` of size one or ``None``, ``log_consts``). The stop is checked after a log entry
    whose ``looks`` flag is set, and in the simulate mode at the looks of ``schedule``
    (:func:`~bai_lib.algorithms.ask_tell.look_schedule`); a look before every arm has a reward
    checks nothing. A second reward of an
    arm before every arm has its first one is refused (``bad``): the rule starts from one reward
    per arm.
    """
    k = sigma.size
    mh = np.zeros(k)
    v = np.zeros(k)
    inv_next = np.ones(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    n_log = arms.size
    total = n_log + (n_more if mode == SIMULATE else 0)
    n_out = 0
    j = 0
    while j < total and j < k:  # the first round: every arm once (in index order if simulated)
        if j < n_log and N[arms[j]] > 0:
            return RUNNING, argmax(mh), j, n_out, j
        arm, x, n_out = take_pull(fam, j, _first_unsampled(N), arms, xs, buf[j], mu, sigma,
                                  out_arms, out_xs, n_out)
        F.observe(fam, arm, x, S, N, mh, v, inv_next, var)
        j += 1
    if j < k:
        if mode == SIMULATE:
            return RUNNING, argmax(mh), j, n_out, -1
        planned = 0  # the arms without a reward, then round-robin from arm 0
        for i in range(k):
            if N[i] == 0 and planned < n_more:
                out_arms[planned] = i
                planned += 1
        while planned < n_more:
            out_arms[planned] = (planned - (k - j)) % k
            planned += 1
        return RUNNING, argmax(mh), j, planned, -1
    return _glr_rounds(fam, th, steps, data, state, sigma, var, level, delta0s, log_consts,
                       max_samples, arms, xs, looks, mode, n_more, schedule, mu, out_arms,
                       out_xs, S, N, cancel, mh, v, inv_next, buf, n_out)


@njit(cache=True, nogil=True)
def _glr_rounds(fam, th, steps, data, state, sigma, var, level, delta0s, log_consts,
                max_samples, arms, xs, looks, mode, n_more, schedule, mu, out_arms, out_xs, S,
                N, cancel, mh, v, inv_next, buf, n_out):
    """:func:`glr_ask_tell` from the end of the first round on (``t = k``). Each of the rule's
    steps is called at one place (numba writes them out at the call)."""
    k = sigma.size
    (s0, s1, s2, s3, s4, s5), carry = start(steps, data, mh, var)
    w = np.zeros(k)
    n0, t_force = np.int64(NEVER), np.int64(NEVER)
    if delta0s is not None:
        conf_widths(w, sigma, N, log_consts[0])
        n0, t_force = forcing_start(sigma, log_consts[0], delta0s[0])
    pos = k
    t = np.int64(k)
    t_next = t
    n_log = arms.size
    total = n_log + (n_more if mode == SIMULATE else 0)
    look = k - 1 < n_log and looks[k - 1]  # a look after the last logged entry
    for j in range(k, total + 1):
        if t >= t_next:
            t_next = t + max(64, t >> 6)
            carry = refresh(steps, s0, s1, s2, s3, s4, s5, carry, t, t_next)
        logged = j < n_log
        if look or (j > n_log and scheduled_look(t, schedule)):
            code, best = _glr_stop(fam, th, level, mh, v, N, w, delta0s, t)
            if code != RUNNING:
                return code, best, t, n_out, -1
        if t >= max_samples:  # the maximum duration, whatever the looks
            return STOP_CENSORED, argmax(mh), t, n_out, -1
        if j == total:
            break
        if not logged and cancel[0]:
            return STOP_INTERRUPTED, -1, t, n_out, -1
        arm, carry = choose(steps, s0, s1, s2, s3, s4, s5, carry, fam, t, argmax(mh), mh, v, N,
                            S, sigma, var, state)
        if delta0s is not None and t >= t_force:
            arm = forced_arm(N, n0, arm)
        pos = buffer_position(state, buf, pos, cancel)
        if pos < 0:
            return STOP_INTERRUPTED, -1, t, n_out, -1
        arm, x, n_out = take_pull(fam, j, arm, arms, xs, buf[pos], mu, sigma, out_arms, out_xs,
                                  n_out)
        pos += 1
        F.observe(fam, arm, x, S, N, mh, v, inv_next, var)
        if delta0s is not None:
            w[arm] = sigma[arm] * conf_factor(float(N[arm]), log_consts[0])
        carry = update(steps, s0, s1, s2, s3, s4, s5, carry, arm, x, N, S, var)
        t += 1
        look = logged and looks[j]
    if mode == SIMULATE:
        return RUNNING, argmax(mh), t, n_out, -1
    best = argmax(mh)
    _glr_plan(fam, steps, s0, s1, s2, s3, s4, s5, carry, state, sigma, var, n_more, out_arms,
              S.copy(), N.copy(), mh, v, inv_next, t, t_next, n0, t_force, delta0s is not None)
    return RUNNING, best, t, n_more, -1


@njit(cache=True, nogil=True)
def _glr_plan(fam, steps, s0, s1, s2, s3, s4, s5, carry, state, sigma, var, n_more, out_arms,
              S, N, mh, v, inv_next, t, t_next, n0, t_force, forcing):
    """The believer's next ``n_more`` pulls (each pays its arm's current mean, so the means stay
    put), written to ``out_arms``; ``S``, ``N``, ``mh``, ``v`` and the rule's state move on."""
    for planned in range(n_more):
        if t >= t_next:
            t_next = t + max(64, t >> 6)
            carry = refresh(steps, s0, s1, s2, s3, s4, s5, carry, t, t_next)
        arm, carry = choose(steps, s0, s1, s2, s3, s4, s5, carry, fam, t, argmax(mh), mh, v, N,
                            S, sigma, var, state)
        if forcing and t >= t_force:
            arm = forced_arm(N, n0, arm)
        x = mh[arm]
        F.observe(fam, arm, x, S, N, mh, v, inv_next, var)
        carry = update(steps, s0, s1, s2, s3, s4, s5, carry, arm, x, N, S, var)
        out_arms[planned] = arm
        t += 1


def bind_glr(steps: NamedTuple, data: tuple, rewards: str, sigma: np.ndarray, th: GLRThreshold,
             levels: np.ndarray, delta0s: np.ndarray, log_consts: np.ndarray, max_samples: int,
             var: Optional[np.ndarray] = None) -> Binding:
    """The :class:`~bai_lib.algorithms.Binding` of :func:`glr_run` for the sampling rule ``steps``
    (its arrays ``data``), the reward model ``rewards`` with noise levels ``sigma`` and statistic
    variances ``var`` (``σ²`` unless given), the threshold ``th`` at the levels ``levels``, and
    the indifference stop of ``delta0s`` and ``log_consts`` (empty arrays: none)."""
    fam = family_bundle(rewards)
    sig = np.ascontiguousarray(sigma, dtype=np.float64)
    var = sig**2 if var is None else np.ascontiguousarray(var, dtype=np.float64)
    d0s = delta0s if delta0s.size else None
    default = max_samples

    def run(state, mu, out_tau, out_rec, out_code, cancel=None, max_samples=default):
        glr_run(fam, th, steps, data, state, mu, sig, var, levels, d0s, log_consts, max_samples,
                out_tau, out_rec, out_code, cancel_flag(cancel))

    def ask_tell(state, arms, xs, looks, mode, n_more, schedule, mu, *out,
                 max_samples=default):
        return glr_ask_tell(fam, th, steps, data, state, sig, var, levels[0], d0s, log_consts,
                            max_samples, arms, xs, looks, mode, n_more, schedule, mu, *out)

    d0 = tuple(delta0s.tolist()) if delta0s.size else (None,) * levels.size
    floor = delta0s.min() if delta0s.size else 1e-12
    return Binding(run, d0, lambda means: gap_cost(means, sig, floor),
                   ask_tell if levels.size == 1 else None)
