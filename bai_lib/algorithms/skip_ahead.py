"""Simulation in law: Algorithm 1 and NoElim by blocks of rounds instead of sample by sample.

Between two rounds at which no check can fire, nothing but the arms' sums matters, and the sum of
``L`` Gaussian rewards is one Gaussian draw. :func:`elimination_blocks_run` jumps from round
``n0`` to a round ``n1`` with one draw per arm, and checks that the path between them is unlikely
to have fired a check with the closed form for a Brownian bridge crossing a line
(:func:`bridge_crossing_bound`). Where that bound is too large it draws the path's midpoint from
the bridge (exact) and treats the two halves the same way; a block of at most :data:`LEAF` rounds
that cannot be skipped is walked round by round on its bridge (each round's sums drawn given the
previous round's and the block's end, also exact). Single rounds are evaluated as the per-sample
kernel evaluates them.

The argument, for Algorithm 1 with a common noise level ``σ`` (Section 5 of the paper):

* while two or more arms are active, arm ``i`` is eliminated at round ``n`` when
  ``S_j(n) - S_i(n) >= b(n) = 2σ n c(n)`` for some active ``j``
  (:func:`~bai_lib.confidence.conf_factor`), and the indifference stop fires at the fixed round
  ``n*`` (:func:`~bai_lib.confidence.first_indifference_round`), since ``Δ_safe = 2σ c(n)``;
* given the sums at ``n0`` and ``n1``, the arms' paths are independent Gaussian bridges, so each
  difference ``S_j - S_i`` at the rounds in between is a Gaussian bridge with variance ``2σ²``
  per round, the values at integer rounds of a continuous Brownian bridge;
* ``b`` is concave (``b² = 8σ² n log(C n²)`` has ``2 b² (b²)'' - ((b²)')² < 0``), so it lies above
  its chord over ``[n0, n1]``; a discrete path that reaches ``b`` at some round in between lets
  the continuous bridge cross the chord, with probability
  ``exp(-2 a0 a1 / (2σ² L))`` (``a0, a1`` the distances below the chord at the two ends,
  ``L = n1 - n0``); the union over ordered pairs of active arms bounds the probability that any
  elimination was due in the block.

A block is skipped only when that bound is at most ``tolerance · L / N``, with ``N`` the largest
number of rounds a run can skip (``min(n*, max_samples // 2)``): the skipped blocks of a run cover
at most ``N`` rounds, so the probability that a skipped block hid a check is at most
``tolerance``. Couple a blocked run with a per-sample run through the same bridge paths: they
differ only on that event, so the law of ``(τ, recommendation, stop reason)`` is within
``tolerance`` in total variation of the per-sample kernel's. The chord is lowered by a relative
``10⁻⁹`` and by ``10⁻¹⁴`` times the largest mean at the block's ends, a margin for the rounding
of the per-sample kernel's floating-point comparisons (a few ``10⁻¹⁶`` of the means), which can
fire an elimination a little below the exact boundary.

The indifference stop needs no bound: the exact test at a round is the rounded ``2σ c(n) <= Δ0``
(:func:`~bai_lib.algorithms.ask_tell.evaluate_round`), and rounds are evaluated one by one from
the last round at which ``2σ c(n)`` exceeds ``Δ0`` by less than a relative ``10⁻¹³`` (a few
hundred rounds before ``n*`` at ``10¹⁵`` rounds, where ``c`` changes by ``10⁻¹⁶`` of itself per
round and its rounding may make it go up and down), so no round at which the test could pass is
skipped.

The stream of random numbers is not the per-sample kernel's (single runs differ for the same
seed), but each run depends only on its generator state, so results do not depend on threads or
shards. The number of draws of a run grows like the logarithm of its length: a run of ``10⁹``
rounds costs a few hundred block steps.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import fill_normal
from ..confidence import conf_factor, first_indifference_round
from ..kernels import STOP_CENSORED, STOP_INTERRUPTED
from .ask_tell import RUNNING, active_best, decide_round

__all__ = ["bridge_crossing_bound", "elimination_blocks_run", "METHODS", "DEFAULT_TOLERANCE",
           "GROWTH", "LEAF", "checked_tolerance"]

#: The ways a specification's runs are simulated, ``"samples"`` (one reward at a time, the
#: reference) and ``"blocks"`` (in law, by blocks of rounds, this module).
METHODS = ("samples", "blocks")
#: Default bound on the total variation between a run by blocks and a run sample by sample.
DEFAULT_TOLERANCE = 1e-12
#: Relative margin by which the chord of the elimination boundary is lowered.
_REL_MARGIN = 1e-9
#: Margin per unit of mean for the rounding of the kernel's comparisons.
_ABS_MARGIN = 1e-14
#: A new block covers this many times the rounds so far (the bisection refines it).
GROWTH = 1
#: Blocks of at most this many rounds that cannot be skipped are walked round by round.
LEAF = 8
#: Pending block ends: a block of at most 2**62 rounds is halved at most 62 times.
_STACK = 66


def checked_tolerance(method: str, tolerance: float) -> float:
    """A specification's ``method`` (one of :data:`METHODS`) and ``tolerance`` checked
    (``ValueError`` naming the parameter): the tolerance, in ``(0, 1)`` and given only with
    ``method="blocks"``."""
    V.choice(method, METHODS, "method")
    tol = V.positive(tolerance, "tolerance")
    if not tol < 1.0:
        raise ValueError(f"tolerance must be in (0, 1), got {tol!r}")
    if method == "samples" and tol != DEFAULT_TOLERANCE:
        raise ValueError("tolerance applies to method='blocks' only")
    return tol


@njit(cache=True, nogil=True)
def bridge_crossing_bound(a0: float, a1: float, variance: float) -> float:
    """Probability that a Brownian bridge crosses a line it starts and ends below.

    A Brownian motion with variance ``variance`` over the bridge's duration (per-unit variance
    times its length), pinned at ``x0`` and ``x1``, crosses the line from ``y0`` to ``y1`` with
    probability ``exp(-2 (y0 - x0)(y1 - x1) / variance)`` when ``a0 = y0 - x0 > 0`` and
    ``a1 = y1 - x1 > 0`` (Siegmund, *Sequential Analysis*, 1985, eq. 3.40 and the bridge's
    reflection). Returns 1 when either end is on or above the line.
    """
    if not (a0 > 0.0 and a1 > 0.0):
        return 1.0
    x = 2.0 * a0 * a1 / variance
    return 0.0 if x > 745.2 else math.exp(-x)  # exp underflows to 0 there, slowly


@njit(cache=True, nogil=True)
def _skippable(S0: np.ndarray, sums: np.ndarray, row: int, b0: float, b1: float,
               act: np.ndarray, n_act: int, variance: float, budget: float) -> bool:
    """Whether the union of the pairs' crossing bounds over the block, from the sums ``S0`` to
    ``sums[row]`` (indexed, not sliced: a view costs two atomic reference counts), is at most
    ``budget``.

    First with one term per arm: arm ``i``'s distance below the chord is smallest for the
    largest other sum, so ``(n_act - 1)`` times its crossing bound against the largest sums
    bounds the arm's terms; the pairs one by one only when that is not enough.
    """
    top0 = -np.inf
    top1 = -np.inf
    for p in range(n_act):
        top0 = max(top0, S0[act[p]])
        top1 = max(top1, sums[row, act[p]])
    # cheapest first, one logarithm: n_act (n_act - 1) times the largest arm's term
    least = np.inf
    for p in range(n_act):
        i = act[p]
        a0 = b0 - (top0 - S0[i])
        a1 = b1 - (top1 - sums[row, i])
        if not (a0 > 0.0 and a1 > 0.0):
            least = -np.inf
            break
        least = min(least, 2.0 * a0 * a1 / variance)
    if least > math.log(n_act * (n_act - 1) / budget) + 1e-9 * least:
        return True
    total = 0.0
    for p in range(n_act):
        i = act[p]
        total += bridge_crossing_bound(b0 - (top0 - S0[i]), b1 - (top1 - sums[row, i]), variance)
    if total * (n_act - 1) <= budget:
        return True
    total = 0.0
    for p in range(n_act):
        j = act[p]
        for q in range(n_act):
            if q == p:
                continue
            i = act[q]
            total += bridge_crossing_bound(b0 - (S0[j] - S0[i]),
                                           b1 - (sums[row, j] - sums[row, i]), variance)
            if total > budget:
                return False
    return True


@njit(cache=True, nogil=True)
def _quiet_round(S: np.ndarray, n: int, act: np.ndarray, n_act: int, width: float,
                 delta0: float) -> bool:
    """Whether round ``n`` can neither eliminate nor stop, by the per-sample kernel's own test
    with a width ``width = σ c_lo`` at most ``σ c(n)`` (see
    :func:`~bai_lib.algorithms.elimination.elimination_run`, ``check_every_round``): rounded
    ``m ± width`` move monotonically with the width, so the exact round decides the same (the
    difference of the rounded bounds, which errs by a few of their ulps, is checked with that
    margin against the exact round's ``Δ̂_safe``)."""
    inv_n = 1.0 / n
    max_l = -np.inf
    min_u = np.inf
    max_u = -np.inf
    for j in range(n_act):
        m = S[act[j]] * inv_n
        max_l = max(max_l, m - width)
        min_u = min(min_u, m + width)
        max_u = max(max_u, m + width)
    return min_u > max_l and max_u - max_l > delta0 + 1e-15 * (abs(max_u) + abs(max_l))


@njit(cache=True, nogil=True)
def elimination_blocks_run(state: np.ndarray, mu: np.ndarray, sigma: float, log_const: float,
                           delta0: float, max_samples: int, pull_all: bool, recommend_best: bool,
                           tolerance: float, fam: NamedTuple,
                           cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of Algorithm 1 (or NoElim) on Gaussian arms with a common noise level, by blocks.

    The law of ``(tau, recommendation, censored, stop_reason)`` is that of
    :func:`~bai_lib.algorithms.elimination.elimination_run` (subgaussian widths) within
    ``tolerance`` in total variation (the module's docstring gives the argument).

    Parameters
    ----------
    state : uint64[4]
        Generator state, advanced in place.
    mu : float64[k]
        Arm means.
    sigma : float
        The common noise standard deviation.
    log_const, delta0, max_samples, pull_all, recommend_best
        As in :func:`~bai_lib.algorithms.elimination.elimination_run`.
    tolerance : float
        Bound on the total variation from the per-sample law; ``inf`` skips every block whole,
        which misses eliminations (a deliberately wrong simulation, for tests).
    fam : NamedTuple
        The Gaussian family's bundle (:func:`bai_lib.families.family_bundle`), for the exact
        evaluation of a round (:func:`~bai_lib.algorithms.ask_tell.decide_round`).
    cancel : uint8[1]
        The cancellation flag (:func:`bai_lib.kernels.cancel_flag`), read before every block.

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    k = mu.size
    sig = np.full(k, sigma)
    two_sigma = 2.0 * sigma
    variance = 2.0 * sigma * sigma  # of a difference of two arms' sums, per round
    n_star = first_indifference_round(two_sigma, log_const, delta0)
    if n_star < 0:
        n_star = np.int64(2) ** 62
    # from n_one on, rounds are evaluated one by one: before it 2σ c(n) exceeds Δ0 by more than
    # a relative 1e-13, far beyond the few ulps by which the rounded c(n) may go up and down
    n_one = first_indifference_round(two_sigma * (1.0 - 1e-13), log_const, delta0)
    n_one = n_star if n_one < 0 else min(n_one, n_star) - 1
    rate = tolerance / float(max(1, min(n_star, max_samples // 2)))
    S = np.zeros(k)
    means = np.zeros(k)
    ucb = np.zeros(k)
    act = np.arange(k)
    n_act = k
    ends = np.empty(_STACK, dtype=np.int64)
    sums = np.empty((_STACK, k))
    chords = np.empty(_STACK)  # the lowered boundary at each pending end
    depth = 0
    n = np.int64(0)
    t = np.int64(0)
    b_now = 0.0  # the lowered boundary at round n
    width_end = np.int64(0)  # rounds up to width_end are checked first with width_lo
    width_lo = 0.0
    leaf_end = np.int64(0)  # rounds up to leaf_end are walked one by one
    z = np.empty(k)  # the normals of a draw
    while True:
        pulls = k if pull_all else n_act
        if depth == 0:
            if cancel[0]:
                return t, np.int64(-1), True, STOP_INTERRUPTED
            room = (max_samples - t) // pulls
            if room == 0:
                return t, np.int64(active_best(S, act, n_act)), True, STOP_CENSORED
            # blocks of GROWTH times the rounds so far; rounds n* - 1 and on one by one
            length = (np.int64(1) if n + 1 >= n_one
                      else min(max(GROWTH * n, np.int64(1)), n_one - n))
            n_new = n + min(length, room)
            bridge, chord = False, True
        else:
            top = depth - 1
            length = ends[top] - n
            if length > 1 and (ends[top] <= leaf_end or not _skippable(
                    S, sums, top, b_now, chords[top], act, n_act, variance * length,
                    rate * length)):
                if length <= LEAF:  # a short block: walk its bridge round by round
                    leaf_end = max(leaf_end, ends[top])
                inside = ends[top] <= leaf_end
                n_new = n + 1 if inside else n + length // 2
                bridge, chord = True, not inside
            else:
                # no check can have fired before ends[top]: go there and evaluate that round
                t += length * pulls
                n = ends[top]
                for j in range(pulls):
                    i = j if pull_all else act[j]
                    S[i] = sums[top, i]
                b_now = chords[top]
                depth = top
                if n < n_one:
                    if n > width_end:
                        width_end = n + max(8, n >> 5)
                        width_lo = sigma * conf_factor(float(width_end), log_const) * (1.0 - 1e-12)
                    if _quiet_round(S, n, act, n_act, width_lo, delta0):
                        continue
                n_act, code, rec = decide_round(fam, state, S, n, act, n_act, means, ucb, sig,
                                                log_const, False, delta0, pull_all,
                                                recommend_best)
                if code != RUNNING:
                    return t, np.int64(rec), False, code
                continue
        # draw the sums at round n_new into slot depth: from round n for a new block, or on the
        # bridge from round n to the pending end ends[depth - 1] (written out here rather than
        # called: a call passing the arrays costs two atomic reference counts per array)
        h = float(n_new - n)
        fill_normal(state, z)
        if bridge:
            span = float(ends[depth - 1] - n)
            w = h / span
            sd = sigma * math.sqrt(h * (span - h) / span)
            for j in range(pulls):
                i = j if pull_all else act[j]
                sums[depth, i] = S[i] + w * (sums[depth - 1, i] - S[i]) + sd * z[j]
        else:
            sd = sigma * math.sqrt(h)
            for j in range(pulls):
                i = j if pull_all else act[j]
                sums[depth, i] = S[i] + h * mu[i] + sd * z[j]
        ends[depth] = n_new
        chords[depth] = np.nan  # rounds inside a walked block need no boundary
        if chord:
            # the lowered elimination boundary b(n_new)
            big = 0.0
            for j in range(n_act):
                big = max(big, abs(sums[depth, act[j]]))
            nf = float(n_new)
            chords[depth] = (nf * two_sigma * conf_factor(nf, log_const) * (1.0 - _REL_MARGIN)
                             - _ABS_MARGIN * big)
        depth += 1
