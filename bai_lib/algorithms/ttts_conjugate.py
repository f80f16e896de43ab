"""Top-Two Thompson Sampling with a conjugate posterior of two shape parameters: Beta on
Bernoulli arms, Gamma on Poisson arms.

The sampling rule of :class:`~bai_lib.algorithms.TTTS` for the families with a conjugate
posterior (:data:`bai_lib.families.family.CONJUGATE`: a :class:`~bai_lib.BetaPrior` or a
:class:`~bai_lib.GammaPrior`); the Gaussian rule and the specification are in
:mod:`bai_lib.algorithms.ttts`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ..families import family as F
from .challenger import (PLAIN_DRAW_WEIGHT, TTTS_MAX_RESAMPLE, exact_challenger, leader_coin,
                         new_workspace, note_sampled)
from .glr import register

__all__ = ["TTTSConjugateSteps"]

_NEG_INF = -np.inf


@njit(cache=True, nogil=True)
def _draw_argmax(fam, state, A, B, skip):
    """The argmax, over the arms other than ``skip`` (``-1``: none), of one draw of the
    posteriors of shapes ``(A_i, B_i)``, drawn in arm order."""
    best = -1
    best_val = _NEG_INF
    for i in range(A.size):
        if i != skip:
            x = F.posterior_draw(fam, state, A[i], B[i])
            if best < 0 or x > best_val:
                best_val = x
                best = i
    return best


class TTTSConjugateSteps(NamedTuple):
    """The sampling rule of Top-Two Thompson Sampling with the conjugate posterior of the reward
    family, for :func:`bai_lib.algorithms.glr.glr_run`.

    Arm ``i``'s posterior has shapes ``(A_i, B_i)``, those of the prior updated by each reward
    (:func:`~bai_lib.families.family.posterior_update`): under ``Beta(a_i, b_i)`` after ``S_i``
    successes in ``N_i`` pulls it is ``Beta(a_i + S_i, b_i + N_i - S_i)``, under
    ``Gamma(a_i, b_i)`` (shape, rate) after counts summing to ``S_i`` in ``N_i`` pulls
    ``Gamma(a_i + S_i, b_i + N_i)``. A posterior draw is one
    :func:`~bai_lib.families.family.posterior_draw` per arm, in arm order. The steps are those of
    :class:`~bai_lib.algorithms.ttts.TTTSSteps`: the coin
    (:func:`~bai_lib.algorithms.challenger.leader_coin`), the leader the argmax of a posterior draw,
    and with probability ``1 - β`` a challenger instead:

    * ``k = 2`` and ``β = 1/2``: a uniformly random arm, without drawing the posterior (equal in
      law, as for Gaussian arms).
    * ``k = 2``: the other arm.
    * ``challenger = 0`` (``"normal"``, the default): one plain draw of the posterior, whose argmax
      is the challenger if it is not the leader (a draw of Russo's challenger, exactly); if it
      is the leader, Russo's challenger under a *normal approximation* of the posteriors,
      ``g(θ_i) ≈ N(c_i, s_i²)`` for an increasing ``g`` common to the arms
      (:func:`~bai_lib.families.family.posterior_normal`: the Beta posterior's mean and
      variance; the Gamma posterior's cube root, after Wilson and Hilferty), sampled exactly
      for that approximation by :func:`~bai_lib.algorithms.challenger.exact_challenger` at
      bounded cost. The plain draw is skipped while the last such weight
      ``Σ_j P(θ_j > θ_leader)`` was at most
      :data:`~bai_lib.algorithms.challenger.PLAIN_DRAW_WEIGHT` (it would seldom succeed). This is
      an approximation of Russo's rule, not the rule: the approximation error vanishes as the
      posteriors concentrate (they become normal), and the stopping rule, hence the guarantee
      on the error, does not depend on it.
    * ``challenger = 1`` (``"resample"``): the posterior is re-drawn, at most
      :data:`~bai_lib.algorithms.challenger.TTTS_MAX_RESAMPLE` times, until its argmax differs from
      the leader; if none does, the arm most likely to beat the leader under a normal approximation
      of the posteriors, ``argmin_{j≠B} (m_B − m_j) / sqrt(s_B² + s_j²)`` with the posterior
      means ``m`` and standard deviations ``s``.
    * ``challenger = 2`` (``"released"``): the argmax over the other arms of one fresh draw.

    Attributes
    ----------
    beta : float
        Probability of sampling the leader, in ``(0, 1)``.
    challenger : int
        ``0``, ``1`` or ``2`` (:data:`~bai_lib.algorithms.ttts.CHALLENGERS`).
    family : NamedTuple
        The family's bundle (:class:`~bai_lib.families.bernoulli.Bernoulli`,
        :class:`~bai_lib.families.poisson.Poisson`), for the steps that receive no ``fam``.

    Its arrays (the ``data`` of :func:`~bai_lib.algorithms.glr.glr_run`) are ``(prior_a, prior_b)``,
    the shapes of each arm's prior.
    """

    beta: float
    challenger: int
    family: NamedTuple


@njit(cache=True, nogil=True)
def _start(steps, data, mh, var):
    k = mh.size
    shapes = np.empty((2, k))  # the posterior shapes A (row 0) and B (row 1)
    shapes[0] = data[0]
    shapes[1] = data[1]
    for i in range(k):
        F.posterior_update(steps.family, shapes[0], shapes[1], i, mh[i])
    normal = k > 2 and steps.challenger == 0
    zb, meta, work, dirty = new_workspace(k, normal)
    post = np.empty((2, k))  # the normal approximation's centres and scales (posterior_normal)
    if normal:
        for i in range(k):
            _set_normal(steps.family, shapes, post, i)
    # carried: the leader coin's bits (leader_coin), and whether the normal challenger tries
    # one plain draw first
    return (shapes, post, zb, meta, work, dirty), (np.uint64(0), np.int64(0), True)


@njit(cache=True, nogil=True)
def _set_normal(fam, shapes, post, i):
    post[0, i], post[1, i] = F.posterior_normal(fam, shapes[0, i], shapes[1, i])


@njit(cache=True, nogil=True)
def _choose(steps, shapes, post, zb, meta, work, dirty, carry, fam, t, best, mh, v, N, S, sigma,
            var, state):
    bits, nbits, try_plain = carry
    A, B = shapes[0], shapes[1]
    k = mh.size
    coin, bits, nbits = leader_coin(state, steps.beta, bits, nbits)
    if k == 2 and steps.beta == 0.5:
        arm = 1 if coin else 0
    else:
        leader = _draw_argmax(fam, state, A, B, -1)
        if coin:
            arm = leader
        elif k == 2:
            arm = 1 - leader
        elif steps.challenger == 0:
            arm = _draw_argmax(fam, state, A, B, -1) if try_plain else leader
            if arm == leader:
                arm, weight = exact_challenger(state, post[0], post[1], leader, zb, meta,
                                               work[0], work[1], work[2], dirty)
                try_plain = weight > PLAIN_DRAW_WEIGHT
        elif steps.challenger == 2:
            arm = _draw_argmax(fam, state, A, B, leader)
        else:
            arm = leader
            for _ in range(TTTS_MAX_RESAMPLE):
                c = _draw_argmax(fam, state, A, B, -1)
                if c != leader:
                    arm = c
                    break
            if arm == leader:
                arm = _likeliest_rival(fam, A, B, leader)
    return arm, (bits, nbits, try_plain)


@njit(cache=True, nogil=True)
def _update(steps, shapes, post, zb, meta, work, dirty, carry, arm, x, N, S, var):
    F.posterior_update(steps.family, shapes[0], shapes[1], arm, x)
    if steps.challenger == 0 and N.size > 2:
        _set_normal(steps.family, shapes, post, arm)
        note_sampled(arm, dirty, meta)  # the normal challenger's cached weights
    return carry


@njit(cache=True, nogil=True)
def _likeliest_rival(fam, A, B, leader):
    """``argmin_{j != leader} (m_L - m_j) / sqrt(s_L² + s_j²)`` for the posterior means ``m``
    and standard deviations ``s`` (:func:`~bai_lib.families.family.posterior_moments`)."""
    arm = -1
    best_score = np.inf
    m_l, v_l = F.posterior_moments(fam, A[leader], B[leader])
    for j in range(A.size):
        if j != leader:
            m_j, v_j = F.posterior_moments(fam, A[j], B[j])
            score = (m_l - m_j) / math.sqrt(v_l + v_j)
            if arm < 0 or score < best_score:
                best_score = score
                arm = j
    return arm


register(TTTSConjugateSteps, _start, _choose, _update)
