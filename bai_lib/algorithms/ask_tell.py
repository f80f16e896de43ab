"""The compiled engines of the ask/tell experiments (:mod:`bai_lib.online`): an algorithm run on
observations that arrive from outside, in the steps of the simulators. This module holds their
conventions and Algorithm 1's engine (:func:`elimination_ask_tell`); the GLR algorithms' engine
is :func:`bai_lib.algorithms.glr.glr_ask_tell`, beside the loop whose steps it takes, LUCB's
:func:`bai_lib.algorithms.lucb.lucb_ask_tell` and the platforms' rules'
:func:`bai_lib.algorithms.posterior_rules.posterior_ask_tell`.

An experiment keeps no compiled state between calls: its state is the log of observations, in
the order they were recorded, with the looks (the times the stop was checked). Every call
replays the log from the run's generator state, in one compiled call, with the same steps as the
simulator, and then continues in one of two modes:

* **plan** (:data:`PLAN`): the next ``n`` arms the rule would sample, each pending pull being
  believed to pay its arm's current empirical mean (the means stay put, the counts move on);
  before every arm has its first reward, the plan goes round the arms in index order;
* **simulate** (:data:`SIMULATE`): pulls with rewards drawn from the instance ``mu`` exactly as
  the simulator draws them, the stop checked at every look, until the run stops or ``n`` pulls.

A logged pull runs the sampling rule's step (its draws, its counters) and then books the logged
arm, as the simulators book a forced pull; when the logged arm is the rule's, the run is the
simulator's. The generator is consumed as the simulator consumes it, the normal buffer of the
rewards included (its normals are unused for logged rewards), so a log of the rewards a
simulated run draws replays that run exactly: same stopping time, stop reason and
recommendation, which the tests check for every algorithm and reward family.

The cost of a call is one pass over the log: from about 1 ms (Algorithm 1) to 40 ms (TTTS on
Bernoulli arms) per 10⁵ observations (``benchmarks/bench_online.py``).

Every engine returns ``(code, recommendation, t, n_out, bad)``: ``code`` a stop code of
:mod:`bai_lib.kernels` or :data:`RUNNING`, the recommendation (the current empirical best arm
while running), the number of observations at the stop (or in all), the number of planned or
simulated pulls written, and the index of the first log entry the algorithm cannot take (or
``-1``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Optional

import numpy as np
from numba import njit

from .._rng import uniform
from ..confidence import conf_factor, conf_level
from ..families import family as F
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_INDIFFERENCE, STOP_INTERRUPTED,
                       STOP_SINGLE_ARM, argmax, refill)

__all__ = ["elimination_ask_tell", "evaluate_round", "decide_round", "active_best", "buffer_position", "take_pull",
           "empirical_leader", "look_schedule", "scheduled_look", "RUNNING", "PLAN", "SIMULATE"]

#: The code of a run that has not stopped.
RUNNING = -1
#: The mode that plans the next pulls.
PLAN = 0
#: The mode that simulates pulls on an instance.
SIMULATE = 1


def look_schedule(look_every: int = 1, look_at: Optional[Sequence[int]] = None) -> np.ndarray:
    """The looks of a simulation as the engines take them: ``[look_every]`` (a look at every
    multiple of ``look_every``), or ``[0, n_1, n_2, ...]`` (a look when the number of samples
    is one of the increasing counts ``look_at``). The caller validates the values."""
    if look_at is None:
        return np.array([look_every], dtype=np.int64)
    return np.concatenate([[0], np.asarray(look_at, dtype=np.int64)]).astype(np.int64)


@njit(cache=True, nogil=True)
def scheduled_look(t: int, schedule: np.ndarray) -> bool:
    """Whether the simulate mode looks after ``t`` samples under ``schedule``
    (:func:`look_schedule`)."""
    if schedule[0] > 0:
        return t % schedule[0] == 0
    i = np.searchsorted(schedule[1:], t)
    return i < schedule.size - 1 and schedule[1 + i] == t


@njit(cache=True, nogil=True)
def buffer_position(state: np.ndarray, buf: np.ndarray, pos: int, cancel: np.ndarray) -> int:
    """The position of the next normal in ``buf``: ``pos``, or 0 after refilling a used-up
    buffer, as the simulators refill theirs; ``-1`` when the cancellation flag is raised."""
    if pos == buf.size:
        if not refill(state, buf, cancel):
            return -1
        return 0
    return pos


@njit(cache=True, nogil=True)
def take_pull(fam: NamedTuple, j: int, arm: int, arms: np.ndarray, xs: np.ndarray, z: float,
              mu: np.ndarray, sigma: np.ndarray, out_arms: np.ndarray, out_xs: np.ndarray,
              n_out: int) -> tuple[int, float, int]:
    """``(arm, x, n_out)``: log entry ``j`` if there is one, else a pull of ``arm`` paying the
    family's reward for the normal ``z`` (:func:`bai_lib.families.family.draw`), written to
    ``out_arms``/``out_xs`` while they have room."""
    if j < arms.size:
        return arms[j], xs[j], n_out
    x = F.draw(fam, z, mu[arm], sigma[arm])
    if n_out < out_arms.size:  # none kept by a simulation with looks
        out_arms[n_out] = arm
        out_xs[n_out] = x
        n_out += 1
    return arm, x, n_out


@njit(cache=True, nogil=True)
def evaluate_round(fam: NamedTuple, S: np.ndarray, n: int, act: np.ndarray, n_act: int,
                   means: np.ndarray, ucb: np.ndarray, sigma: np.ndarray, log_const: float,
                   kl_widths: bool) -> tuple[int, float]:
    """The exact end of round ``n`` of Algorithm 1 (every active arm sampled ``n`` times):
    eliminate every active arm whose upper bound does not exceed the largest lower bound, and
    return ``(n_act, safe_gap)``, the active arms left (first ``n_act`` entries of ``act``) and
    ``Δ̂_safe``, the largest upper bound minus the largest lower bound among them, for the
    indifference stop ``Δ̂_safe <= Δ0``. The arm with the largest lower bound is never
    eliminated. ``means`` and ``ucb`` are work arrays (the means and upper bounds of the active
    arms on return). See :func:`~bai_lib.algorithms.elimination.elimination_run`.

    With the subgaussian widths ``Δ̂_safe`` is computed as
    ``max_i (μ̂_i - μ̂_l) + (σ_i + σ_l) c(n)`` over the arms left, ``l`` the arm with the largest
    lower bound, not as the difference of the rounded bounds, whose rounding error grows with the means (at ``10¹¹`` rounds and means near
    1 it hid the stop at ``n*``): with a common noise level the maximum is the rounded
    ``2σ c(n)`` of :func:`~bai_lib.confidence.first_indifference_round` itself."""
    inv_n = 1.0 / n
    max_l = -np.inf
    top_l = act[0]
    if kl_widths:
        # Every active arm has n pulls and the KL ends increase with the mean, so the largest
        # LCB and UCB are those of the first arm with the largest mean: two solved ends, and
        # one kl per other arm to test UCB_i > max LCB (kl_upper is the largest double q
        # with kl(mean, q) <= level, so UCB_i > x exactly when the double after x passes).
        level = conf_level(float(n), log_const)
        for j in range(n_act):
            i = act[j]
            means[i] = S[i] * inv_n
            if S[i] > S[top_l]:
                top_l = i
        max_l = F.kl_lower(fam, means[top_l], level)
        max_u = F.kl_upper(fam, means[top_l], level)
        kept = 0
        for j in range(n_act):
            i = act[j]
            if i == top_l or F.upper_exceeds(fam, means[i], level, max_l):
                act[kept] = i
                kept += 1
        return kept, max_u - max_l
    c = conf_factor(float(n), log_const)
    for j in range(n_act):
        i = act[j]
        m = S[i] * inv_n
        means[i] = m
        lcb = m - sigma[i] * c
        ucb[i] = m + sigma[i] * c
        if lcb > max_l:
            max_l = lcb
            top_l = i
    kept = 0
    for j in range(n_act):
        i = act[j]
        # The arm with the largest LCB always survives (UCB > LCB); the explicit check
        # keeps it when sigma * c is below the rounding of its mean and UCB == LCB.
        if ucb[i] > max_l or i == top_l:
            act[kept] = i
            kept += 1
    safe_gap = -np.inf
    for j in range(kept):
        i = act[j]
        safe_gap = max(safe_gap, (means[i] - means[top_l]) + (sigma[i] + sigma[top_l]) * c)
    return kept, safe_gap


@njit(cache=True, nogil=True)
def active_best(values: np.ndarray, act: np.ndarray, n_act: int) -> int:
    """The active arm with the largest of ``values`` (the first on ties): of the sums at the end
    of a round, where every active arm has the same count, the empirical best, as the kernel
    finds it."""
    best = act[0]
    for j in range(1, n_act):
        if values[act[j]] > values[best]:
            best = act[j]
    return best


@njit(cache=True, nogil=True)
def decide_round(fam: NamedTuple, state: np.ndarray, S: np.ndarray, n: int, act: np.ndarray,
                 n_act: int, means: np.ndarray, ucb: np.ndarray, sigma: np.ndarray,
                 log_const: float, kl_widths: bool, delta0: float, pull_all: bool,
                 recommend_best: bool) -> tuple[int, int, int]:
    """Round ``n`` of Algorithm 1 evaluated exactly (:func:`evaluate_round`) and its decision:
    ``(n_act, code, recommendation)``, with ``code`` :data:`RUNNING`, or
    :data:`~bai_lib.kernels.STOP_SINGLE_ARM` (the arm left), or
    :data:`~bai_lib.kernels.STOP_INDIFFERENCE` when ``Δ̂_safe <= Δ0``: a uniformly drawn active
    arm (one uniform from ``state``), or with ``recommend_best`` the empirical best among the
    arms sampled in the round (every arm with ``pull_all``)."""
    n_act, safe_gap = evaluate_round(fam, S, n, act, n_act, means, ucb, sigma, log_const,
                                     kl_widths)
    if n_act == 1:
        return n_act, STOP_SINGLE_ARM, act[0]
    if safe_gap > delta0:
        return n_act, RUNNING, -1
    if recommend_best:
        return n_act, STOP_INDIFFERENCE, argmax(S) if pull_all else active_best(means, act, n_act)
    pick = np.intp(uniform(state) * n_act)
    if pick >= n_act:
        pick = n_act - 1
    return n_act, STOP_INDIFFERENCE, act[pick]


@njit(cache=True, nogil=True)
def empirical_leader(S: np.ndarray, N: np.ndarray, act: np.ndarray, n_act: int) -> int:
    """The active arm with the largest empirical mean (the first on ties), any counts."""
    best = act[0]
    for j in range(1, n_act):
        i = act[j]
        if S[i] * N[best] > S[best] * N[i]:
            best = i
    return best


@njit(cache=True, nogil=True)
def elimination_ask_tell(fam: NamedTuple, state: np.ndarray, sigma: np.ndarray,
                         log_const: float, delta0: float, max_samples: int, pull_all: bool,
                         recommend_best: bool, kl_widths: bool, arms: np.ndarray, xs: np.ndarray,
                         looks: np.ndarray, mode: int, n_more: int, schedule: np.ndarray,
                         mu: np.ndarray, out_arms: np.ndarray, out_xs: np.ndarray, S: np.ndarray,
                         N: np.ndarray, cancel: np.ndarray) -> tuple[int, int, int, int, int]:
    """Replay the log ``(arms, xs, looks)`` of Algorithm 1 (NoElim with ``pull_all``), then plan
    or simulate ``n_more`` pulls (the module docstring); ``S`` and ``N`` receive the sums and
    counts.

    The constants are those of :func:`~bai_lib.algorithms.elimination.elimination_run`. A round
    samples every active arm once (every arm for NoElim), in any order; a pull of an arm that
    is not due in the current round is refused (``bad``). The end of a round is evaluated
    exactly (:func:`evaluate_round`) when a look fell in the round: after a log entry whose
    ``looks`` flag is set, and in the simulate mode at the looks of ``schedule``
    (:func:`look_schedule`). The
    Conf intervals hold at every round at once, so checking at fewer rounds keeps the
    guarantee. The run is censored at the end of a round when the next one would take it past
    ``max_samples``.
    """
    k = sigma.size
    act = np.arange(k)
    n_act = k
    means = np.zeros(k)
    ucb = np.zeros(k)
    due = np.zeros(k, dtype=np.uint8)  # the arms still due in the current round
    slot = np.zeros(k, dtype=np.int64)  # their place in the round (their normal in the buffer)
    buf = np.empty(max(NORMAL_BUFFER, k))
    pos = buf.size
    t = np.int64(0)
    n = 0  # rounds completed
    in_round = 0
    pulls = k
    pending = False
    n_log = arms.size
    total = n_log + (n_more if mode == SIMULATE else 0)
    n_out = 0
    for j in range(total):
        logged = j < n_log
        if in_round == 0:  # a new round
            pulls = k if pull_all else n_act
            if pos + pulls > buf.size:
                if not refill(state, buf, cancel):
                    return STOP_INTERRUPTED, -1, t, n_out, -1
                pos = 0
            for q in range(pulls):
                i = q if pull_all else act[q]
                due[i] = 1
                slot[i] = q
        arm = 0
        if logged:
            if not due[arms[j]]:
                return RUNNING, empirical_leader(S, N, act, n_act), t, n_out, j
        else:
            if cancel[0]:
                return STOP_INTERRUPTED, -1, t, n_out, -1
            for q in range(pulls):
                arm = q if pull_all else act[q]
                if due[arm]:
                    break
        # (a logged pull reads no normal: any arm's slot will do)
        arm, x, n_out = take_pull(fam, j, arm, arms, xs, buf[pos + slot[arm]], mu, sigma,
                                  out_arms, out_xs, n_out)
        S[arm] += x
        N[arm] += 1
        due[arm] = 0
        in_round += 1
        t += 1
        if (looks[j] if logged else scheduled_look(t, schedule)):
            pending = True
        if in_round < pulls:
            continue
        pos += pulls
        n += 1
        in_round = 0
        if pending:
            pending = False
            n_act, code, rec = decide_round(fam, state, S, n, act, n_act, means, ucb, sigma,
                                            log_const, kl_widths, delta0, pull_all,
                                            recommend_best)
            if code != RUNNING:
                return code, rec, t, n_out, -1
        if t + (k if pull_all else n_act) > max_samples:
            return STOP_CENSORED, active_best(S, act, n_act), t, n_out, -1
    if mode == SIMULATE:
        return RUNNING, empirical_leader(S, N, act, n_act), t, n_out, -1
    # plan: the rest of the round, then whole rounds of the same arms (no elimination can
    # happen before the next look)
    if in_round == 0:
        pulls = k if pull_all else n_act
        for q in range(pulls):
            due[q if pull_all else act[q]] = 1
    planned = 0
    while planned < n_more:
        for q in range(pulls):
            i = q if pull_all else act[q]
            if due[i] and planned < n_more:
                out_arms[planned] = i
                due[i] = 0
                planned += 1
        for q in range(pulls):
            due[q if pull_all else act[q]] = 1
    return RUNNING, empirical_leader(S, N, act, n_act), t, planned, -1
