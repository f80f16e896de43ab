"""Simulation in law: two-arm Top-Two Thompson Sampling with ``β = 1/2`` by blocks of samples.

On two arms with ``β = 1/2`` the sampled arm is a fair coin independent of the data
(:class:`~bai_lib.algorithms.ttts.TTTSSteps`), so the pull counts do not depend on the rewards
and, between two checks, nothing but the arms' sums and counts matters.
:func:`ttts_blocks_run` jumps from time ``t0`` to ``t1`` (samples taken) with one Gaussian draw
per arm and checks that no GLR test in between could have passed, by the argument below; where
it cannot tell, it bisects as :func:`~bai_lib.algorithms.skip_ahead.elimination_blocks_run`
does, and walks blocks of at most :data:`LEAF_SAMPLES` samples one by one, each pull's reward
drawn on its arm's bridge and every time tested as the per-sample kernel tests it.

* The coins are read from a counter-based stream (:func:`bai_lib._rng.coin_ones`, seeded by one
  draw of the run's generator): the number of pulls of arm 1 over any stretch of samples is
  counted exactly, in any order, at a cost of one word per 64 samples.
* Given the sums at ``t0`` and ``t1``, arm ``i``'s partial sums in its own clock (its pull count,
  ``K_i`` pulls in the block) are a Gaussian bridge with variance ``σ_i²`` per pull, the values
  at integer times of a continuous Brownian bridge, which leaves the band ``±ε`` around its
  chord with probability at most ``2 exp(-2ε²/(σ_i² K_i))``. With
  ``ε_i = σ_i sqrt(K_i log(4/η) / 2)`` both arms stay in their bands with probability at least
  ``1 - η``.
* In the bands, at every time of the block the mean ``μ̂_i`` lies between its values at the two
  ends (the chord of the sum divided by the count is monotone in the count) widened by
  ``ε_i / N_i(t0)``, so ``|μ̂_1 - μ̂_2| <= D``. The test passes at ``t`` only when
  ``(μ̂_1 - μ̂_2)² >= c(t) (σ_1²/N_1(t) + σ_2²/N_2(t))``
  (:func:`~bai_lib.algorithms.glr.gap_level`), and ``c`` increases with ``t`` while the counts
  increase, so the right side is at least ``c(t0 + 1) (σ_1²/N_1(t1) + σ_2²/N_2(t1))``. When
  ``D²`` is below it (with a relative margin of ``10⁻⁹`` for the rounding of the per-sample
  kernel's comparisons) no check inside the block can pass except on an event of probability
  at most ``η`` given the ends.

A block of ``L`` samples is skipped with ``η = tolerance · L / max_samples``; the skipped blocks
of a run cover at most ``max_samples`` samples, so coupling a blocked run with a per-sample run
through the same coins and bridges, the law of ``(τ, recommendation, stop reason)`` is within
``tolerance`` in total variation of that of :func:`~bai_lib.algorithms.glr.glr_run`. The band is
a sufficient condition, not the exact crossing probability, so blocks near the threshold are
bisected more often than the elimination kernel's, and a run of a few thousand samples costs
about as much as sample by sample; a tie censored at ``10⁹`` samples costs hundreds of block
steps and the ``1.6 × 10⁷`` words of its coins, a few milliseconds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .._rng import coin_ones, fill_normal, next_u64
from ..kernels import STOP_CENSORED, STOP_GLR, STOP_INTERRUPTED
from .glr import GLRThreshold, gap_level
from .skip_ahead import GROWTH

__all__ = ["ttts_blocks_run", "band_exit_bound", "LEAF_SAMPLES"]

#: Pending block ends: a block of at most 2**62 samples is halved at most 62 times.
_STACK = 66
#: Blocks of at most this many samples that cannot be skipped are walked sample by sample.
LEAF_SAMPLES = 16
#: Relative margin on the threshold for the rounding of the per-sample kernel's comparisons.
_REL_MARGIN = 1e-9
#: Margin per unit of mean on the bound of the difference of the means.
_ABS_MARGIN = 1e-14


@njit(cache=True, nogil=True)
def band_exit_bound(eps: float, variance: float) -> float:
    """Bound on the probability that a Brownian bridge with variance ``variance`` over its
    duration leaves the band ``±eps`` around its chord: ``2 exp(-2 eps² / variance)`` (each side
    is crossed with probability ``exp(-2 eps²/variance)``, the bridge's reflection; Siegmund,
    *Sequential Analysis*, 1985). 1 for ``eps <= 0``; 0 for a bridge of no duration."""
    if variance <= 0.0:
        return 0.0 if eps > 0.0 else 1.0
    if not eps > 0.0:
        return 1.0
    return min(1.0, 2.0 * math.exp(-2.0 * eps * eps / variance))


@njit(cache=True, nogil=True)
def _passes(S, N, var, c):
    """The per-sample kernel's test at counts ``N``: its empirical best arm (the first on ties)
    and whether ``(μ̂_1 - μ̂_2)² >= c (σ_1²/N_1 + σ_2²/N_2)``, with the means and variances
    rounded as :func:`~bai_lib.families.gaussian.observe` books them."""
    inv0 = 1.0 / N[0]
    inv1 = 1.0 / N[1]
    m0 = S[0] * inv0
    m1 = S[1] * inv1
    d = m0 - m1
    return (1 if m1 > m0 else 0), d * d >= c * (var[0] * inv0 + var[1] * inv1)


@njit(cache=True, nogil=True)
def ttts_blocks_run(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray, var: np.ndarray,
                    th: GLRThreshold, level: float, max_samples: int, tolerance: float,
                    cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of two-arm TTTS with ``β = 1/2`` and the GLR stop on Gaussian arms, by blocks.

    The law of ``(tau, recommendation, censored, stop_reason)`` is that of
    :func:`~bai_lib.algorithms.glr.glr_run` with :class:`~bai_lib.algorithms.ttts.TTTSSteps`
    at one level within ``tolerance`` in total variation (the module's docstring gives the
    argument).

    Parameters
    ----------
    state : uint64[4]
        Generator state, advanced in place.
    mu, sigma, var : float64[2]
        Arm means, noise standard deviations, and the statistic's variances ``σ²``.
    th : GLRThreshold
        The threshold (:func:`~bai_lib.algorithms.glr.gap_level`); ``level`` its level argument.
    max_samples : int
        Censoring level.
    tolerance : float
        Bound on the total variation from the per-sample law; ``inf`` skips every block whole,
        which misses stops (a deliberately wrong simulation, for tests).
    cancel : uint8[1]
        The cancellation flag (:func:`bai_lib.kernels.cancel_flag`), read before every block.

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    z = np.empty(2)
    fill_normal(state, z)
    S = np.empty(2)
    N = np.ones(2, dtype=np.int64)
    for i in range(2):
        S[i] = mu[i] + sigma[i] * z[i]
    key = next_u64(state)  # the coins: sample s >= 3 pulls arm 1 when coin s - 3 is heads
    rate = tolerance / float(max_samples)
    ends = np.empty(_STACK, dtype=np.int64)
    sums = np.empty((_STACK, 2))
    counts = np.empty(_STACK, dtype=np.int64)  # arm 1's pulls at each pending end
    walk = np.empty(LEAF_SAMPLES)  # the normals of a walked block
    depth = 0
    t = np.int64(2)
    best, stop = _passes(S, N, var, gap_level(th, t, level))
    if stop:
        return t, np.int64(best), False, STOP_GLR
    while True:
        if depth == 0:
            if t >= max_samples:
                return t, np.int64(best), True, STOP_CENSORED
            if cancel[0]:
                return t, np.int64(-1), True, STOP_INTERRUPTED
            t_new = t + min(max(GROWTH * t, np.int64(1)), max_samples - t)
            bridge = False
        else:
            top = depth - 1
            length = ends[top] - t
            # at most c at every time of the block (only a block of two or more samples needs it)
            c_next = gap_level(th, t + 1, level) if length > 1 else 0.0
            go = True
            if length > 1 and not _band_holds(S, N, sums, counts, top, ends[top], sigma, var,
                                              c_next, rate * length):
                if length > LEAF_SAMPLES:  # bisect
                    t_new = t + length // 2
                    bridge = True
                    go = False
                else:
                    # a short block: walk each arm's bridge pull by pull up to the block's last
                    # sample, testing every time (against c_next first, then exactly)
                    fill_normal(state, walk)
                    rem0 = ends[top] - counts[top] - N[0]
                    rem1 = counts[top] - N[1]
                    for j in range(length - 1):
                        arm = coin_ones(key, t - 2, t - 1)  # the arm of sample t + 1
                        rem = rem1 if arm else rem0
                        S[arm] += ((sums[top, arm] - S[arm]) / rem
                                   + sigma[arm] * math.sqrt((rem - 1) / rem) * walk[j])
                        if arm:
                            rem1 -= 1
                        else:
                            rem0 -= 1
                        N[arm] += 1
                        t += 1
                        best, stop = _passes(S, N, var, c_next)
                        if stop:
                            best, stop = _passes(S, N, var, gap_level(th, t, level))
                            if stop:
                                return t, np.int64(best), False, STOP_GLR
            if go:
                # no check can have passed before ends[top]: go there and test that time
                t = ends[top]
                N[1] = counts[top]
                N[0] = t - N[1]
                S[0] = sums[top, 0]
                S[1] = sums[top, 1]
                depth = top
                best, stop = _passes(S, N, var, gap_level(th, t, level))
                if stop:
                    return t, np.int64(best), False, STOP_GLR
                continue
        # draw the sums at time t_new into slot depth: from t for a new block, or on each arm's
        # bridge from t to the pending end ends[depth - 1]
        k1 = coin_ones(key, t - 2, t_new - 2)
        k = (t_new - t - k1, k1)
        fill_normal(state, z)
        for i in range(2):
            if not bridge:
                sums[depth, i] = S[i] + k[i] * mu[i] + sigma[i] * math.sqrt(k[i]) * z[i]
                continue
            span = (ends[depth - 1] - counts[depth - 1] - N[0]) if i == 0 else \
                counts[depth - 1] - N[1]
            if k[i] == 0:
                sums[depth, i] = S[i]
            elif k[i] == span:
                sums[depth, i] = sums[depth - 1, i]
            else:
                w = k[i] / span
                sd = sigma[i] * math.sqrt(k[i] * (span - k[i]) / span)
                sums[depth, i] = S[i] + w * (sums[depth - 1, i] - S[i]) + sd * z[i]
        ends[depth] = t_new
        counts[depth] = N[1] + k1
        depth += 1


@njit(cache=True, nogil=True)
def _band_holds(S, N, sums, counts, row, t_end, sigma, var, c_lo, budget):
    """Whether the band argument of the module docstring rules out a stop strictly inside the
    block from ``(S, N)`` to time ``t_end`` (sums ``sums[row]``, arm 1's count
    ``counts[row]``), except on an event of probability at most ``budget``."""
    n_end1 = counts[row]
    n_end0 = t_end - n_end1
    if not budget < 4.0:  # a bound of 4 or more holds whatever happens
        return True
    lg = math.log(4.0 / budget)
    lo0, hi0, big0 = _mean_range(S[0], N[0], sums[row, 0], n_end0, sigma[0], lg)
    lo1, hi1, big1 = _mean_range(S[1], N[1], sums[row, 1], n_end1, sigma[1], lg)
    D = max(hi0 - lo1, hi1 - lo0) + _ABS_MARGIN * (big0 + big1)
    need = c_lo * (var[0] / n_end0 + var[1] / n_end1) * (1.0 - _REL_MARGIN)
    return D * D < need


@njit(cache=True, nogil=True)
def _mean_range(s0, n0, s1, n1, sigma, lg):
    """Where an arm's mean stays over the block when its bridge keeps within its band: the two
    end means widened by ``ε / n0``; and the largest end mean's size, for the margin."""
    m0 = s0 / n0
    m1 = s1 / n1
    eps = sigma * math.sqrt((n1 - n0) * lg * 0.5) / n0
    return min(m0, m1) - eps, max(m0, m1) + eps, max(abs(m0), abs(m1))
