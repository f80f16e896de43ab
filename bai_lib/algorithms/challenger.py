"""Russo's challenger for Top-Two Thompson Sampling, sampled exactly at bounded cost.

Given the leader ``l`` and a Gaussian posterior ``θ ~ N(m, s²)`` (independent arms), Russo's
challenger is ``argmax θ`` conditioned on ``argmax θ ≠ l``. Re-drawing the posterior until its
argmax changes needs ``1/P(argmax θ ≠ l)`` draws on average, hundreds once the leader is nearly
certain. :func:`exact_challenger` samples the same law with a union sampler whose acceptance
probability is at least ``1/(k − 1)``, about 1 near the end of a run; its weights are cached
between the steps of a run (:func:`new_workspace`, :func:`note_sampled`). The sampling rule that
uses it is :class:`bai_lib.algorithms.ttts.TTTSSteps`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import fill_normal, next_u64, uniform

__all__ = ["TTTS_MAX_RESAMPLE", "exact_challenger", "challenger_workspace", "new_workspace",
           "note_sampled", "refill_normals", "leader_coin", "std_normal_above", "log_ndtr",
           "PLAIN_DRAW_WEIGHT",
           "POSTERIOR_BUFFER", "Z_POS"]

#: Number of posterior re-draws TTTS's ``"resample"`` challenger tries (``k > 2``), on Gaussian
#: and on Bernoulli arms.
TTTS_MAX_RESAMPLE = 100

_NEG_INF = -np.inf
_SQRT_HALF = math.sqrt(0.5)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)


@njit(cache=True, nogil=True)
def log_ndtr(z: float) -> float:
    """``log Φ(z)`` of the standard normal distribution function, accurate to a few ulps in
    relative terms also far in the lower tail (where ``Φ`` underflows) and near 0 above
    (``log1p`` of the upper tail for ``z > 0``): ``erfc`` down to ``z = -30``, the asymptotic
    series of Mills' ratio with six terms below (relative error under ``1e-14`` there)."""
    if z > 0.0:
        return math.log1p(-0.5 * math.erfc(z * _SQRT_HALF))
    if z > -30.0:
        return math.log(0.5 * math.erfc(-z * _SQRT_HALF))
    r = 1.0 / (z * z)
    series = 1.0 + r * (-1.0 + r * (3.0 + r * (-15.0 + r * (105.0 + r * (-945.0 + r * 10395.0)))))
    return -0.5 * z * z - math.log(-z) - _LOG_SQRT_2PI + math.log(series)


#: A top-two step tries one plain posterior draw before :func:`exact_challenger` while the last
#: weight it returned (an upper bound on ``P(argmax ≠ leader)``) was above this: below it a plain
#: draw seldom gives a challenger and only costs its normals.
PLAIN_DRAW_WEIGHT = 0.25

#: Standard normals drawn at a time for the ``"exact"`` rule's posterior draws (``2k + 2`` when
#: that is more).
POSTERIOR_BUFFER = 1024

# The helpers of the exact challenger take arrays and call other compiled functions; numba then
# keeps reference-count operations on the arrays at every call (numba issue #2345), which cost
# more than the helpers' work. They allocate nothing, so they are compiled without the runtime:
# the exact challenger takes 76 ns instead of 217 ns with cached weights (ten arms).
_LEAF = dict(cache=True, nogil=True, _nrt=False)
#: Slot of a workspace's ``meta`` that holds the position in its normal buffer.
Z_POS = 0
_W_LEADER, _W_STALE = 1, 2  # the other slots: leader of the cached weights, whether it moved


def challenger_workspace(k: int) -> tuple:
    """The arrays :func:`exact_challenger` works in for ``k`` arms: a buffer of standard normals
    (empty: the first draw fills it), its bookkeeping (``meta``: buffer position, leader of the
    cached weights or -1, whether the leader moved since), the cached weights ``p_j`` and their
    arguments ``z_j``, their cumulative sums, and the flags of the arms sampled since the
    weights were computed."""
    zb, meta, work, dirty = new_workspace(V.integer(k, "k", 2), True)
    return zb, meta, work[0], work[1], work[2], dirty


@njit(cache=True, nogil=True, inline="always")  # a call would halve the fair two-arm rate
def leader_coin(state, beta, bits, nbits):
    """``(coin, bits, nbits)``: whether a top-two step samples its leader (probability ``beta``).

    For ``beta = 1/2`` the coin is the next bit of ``bits``, a 64-bit draw of which ``nbits``
    are unused (a new one is drawn when none is left); otherwise ``uniform < beta``. The caller
    keeps ``bits`` and ``nbits`` between steps (both 0 at the start of a run).
    """
    if beta == 0.5:
        if nbits == 0:
            bits = next_u64(state)
            nbits = 64
        coin = (bits & np.uint64(1)) != 0
        return coin, bits >> np.uint64(1), nbits - 1
    return uniform(state) < beta, bits, nbits


@njit(cache=True, nogil=True)
def _buffer_size(k):
    """A step takes up to ``2k`` normals at once (leader and plain draw), a proposal ``k + 1``."""
    return max(POSTERIOR_BUFFER, 2 * k + 2)


@njit(cache=True, nogil=True)
def new_workspace(k: int, exact: bool) -> tuple:
    """:func:`challenger_workspace` inside compiled code, as a kernel keeps it:
    ``(zb, meta, work, dirty)`` with the weights, their arguments and their sums the rows of
    ``work`` (``float64[3, k]``); with ``exact`` false, an empty normal buffer (a kernel that
    never calls :func:`exact_challenger`)."""
    n_buffer = _buffer_size(k) if exact else 0
    meta = np.zeros(3, dtype=np.int64)
    meta[Z_POS] = n_buffer
    meta[_W_LEADER] = -1
    return np.empty(n_buffer), meta, np.zeros((3, k)), np.zeros(k, dtype=np.uint8)


@njit(**_LEAF)
def note_sampled(arm: int, dirty: np.ndarray, meta: np.ndarray) -> None:
    """Record that the posterior of ``arm`` changed: its cached weight is recomputed at the next
    :func:`exact_challenger` call, and all of them if it is the leader they were cached for."""
    dirty[arm] = 1
    if arm == meta[_W_LEADER]:
        meta[_W_STALE] = 1


@njit(**_LEAF)
def refill_normals(state: np.ndarray, zb: np.ndarray, meta: np.ndarray, need: int) -> None:
    """Make sure ``need`` normals are left in the buffer (refilling it whole, the rest unused).

    Call sites test ``meta[0] + need > zb.size`` first: a call that passes arrays costs
    reference counting, tens of nanoseconds, too much for every variate."""
    if meta[Z_POS] + need > zb.size:
        fill_normal(state, zb)
        meta[Z_POS] = 0


@njit(**_LEAF)
def std_normal_above(state: np.ndarray, zb: np.ndarray, meta: np.ndarray, a: float) -> float:
    """A standard normal variate conditioned to exceed ``a``, exactly, at bounded cost: plain
    rejection for ``a < 0.3`` (acceptance above 38%), else Robert's (1995) translated
    exponential proposal with the optimal rate (acceptance above 75% for every ``a``).
    ``zb, meta``: a workspace's normal buffer (:func:`challenger_workspace`)."""
    if a < 0.3:
        while True:
            if meta[Z_POS] + 1 > zb.size:
                refill_normals(state, zb, meta, 1)
            z = zb[meta[Z_POS]]
            meta[Z_POS] += 1
            if z > a:
                return z
    lam = 0.5 * (a + math.sqrt(a * a + 4.0))
    while True:
        z = a - math.log(1.0 - uniform(state)) / lam
        h = 0.5 * (z - lam) * (z - lam)
        u = uniform(state)
        if u < 1.0 - h or u < math.exp(-h):  # 1 - h <= exp(-h): most accept without exp
            return z


@njit(**_LEAF)
def _weights(pmean, psd, leader, pw, zs, cum, dirty, meta):
    """Fill ``cum`` with the cumulative weights ``p_j = Φ(z_j)``, ``j ≠ leader``, and return
    ``(total, log scale)``.

    A weight below the resolution of the sum (``2^-54`` of the largest, which adding to the sum
    leaves unchanged) is taken as 0 and costs no ``erfc``: Mills' ratio bounds
    ``φ(z)|z|/(z²+1) ≤ Φ(z) ≤ φ(z)/|z|`` (``z < 0``) give
    ``Φ(z_j)/Φ(z_top) ≤ 2 exp(-(z_j² - z_top²)/2) ≤ 2^-54`` once ``z_j² > z_top² + 76.5``
    (``z_j < z_top < -1``), and ``Φ(z_j) < 2^-54 Φ(-1)`` for ``z_j < -8.6`` when ``z_top ≥ -1``.
    ``z_j`` and ``p_j`` are cached for the leader: only the arms sampled since are recomputed
    (all of them after the leader itself was sampled). When even the largest ``z_j`` is below
    ``-30`` the weights are taken relative to it, in logs (not cached)."""
    k = pmean.size
    m_l = pmean[leader]
    v_l = psd[leader] * psd[leader]
    if meta[_W_LEADER] != leader or meta[_W_STALE] != 0:
        for j in range(k):  # branch-free, so that the compiler vectorises it
            zs[j] = (pmean[j] - m_l) / math.sqrt(psd[j] * psd[j] + v_l)
            pw[j] = -1.0  # to compute
    else:
        for j in range(k):
            if dirty[j] != 0:
                zs[j] = (pmean[j] - m_l) / math.sqrt(psd[j] * psd[j] + v_l)
                pw[j] = -1.0
    z_top = _NEG_INF
    for j in range(k):
        dirty[j] = 0
        if j != leader and zs[j] > z_top:
            z_top = zs[j]
    if z_top < -30.0:
        meta[_W_LEADER] = -1  # nothing cached
        log_top = log_ndtr(z_top)
        total = 0.0
        for j in range(k):
            if j != leader:
                total += math.exp(log_ndtr(zs[j]) - log_top)
            cum[j] = total
        return total, log_top
    cut = -math.sqrt(z_top * z_top + 76.5) if z_top < -1.0 else -8.6
    total = 0.0
    for j in range(k):
        if j != leader:
            if zs[j] < cut:
                pw[j] = 0.0
            elif pw[j] <= 0.0:  # new, or skipped before the largest weight fell
                pw[j] = 0.5 * math.erfc(-zs[j] * _SQRT_HALF)
            total += pw[j]
        cum[j] = total
    meta[_W_LEADER] = leader
    meta[_W_STALE] = 0
    return total, 0.0


@njit(**_LEAF)
def exact_challenger(state: np.ndarray, pmean: np.ndarray, psd: np.ndarray, leader: int,
                     zb: np.ndarray, meta: np.ndarray, pw: np.ndarray, zs: np.ndarray,
                     cum: np.ndarray, dirty: np.ndarray) -> tuple[int, float]:
    """Russo's challenger, ``argmax θ`` given ``argmax θ ≠ leader`` for ``θ ~ N(pmean, psd²)``
    (independent arms), sampled exactly without a rejection loop that lengthens as the posterior
    concentrates.

    The event ``A = {argmax θ ≠ leader}`` is the union over ``j ≠ leader`` of
    ``A_j = {θ_j > θ_leader}``, each of probability ``p_j = Φ((m_j − m_l) / √(s_j² + s_l²))``.
    A proposal picks ``j`` with probability ``p_j / Σ p``, draws ``θ`` from the posterior
    conditioned on ``A_j`` (the difference ``θ_j − θ_leader`` from a truncated normal,
    :func:`std_normal_above`, then ``θ_leader`` given it, the other arms free), and is accepted
    with probability ``1 / c``, ``c`` the number of arms above ``θ_leader``: the proposal
    density is the posterior's times ``c / Σ p``, so an accepted ``θ`` has the law of the
    posterior given ``A`` (the union sampler of Karp, Luby and Madras, 1989). A proposal is
    accepted with probability ``P(A) / Σ p ≥ 1 / (k − 1)``, close to 1 once the leader is
    nearly certain.

    Parameters
    ----------
    state : uint64[4]
        Generator state.
    pmean, psd : float64[k]
        Posterior means and standard deviations.
    leader : int
    zb, meta, pw, zs, cum, dirty
        A workspace (:func:`challenger_workspace`). A caller that changes ``pmean[a]`` or
        ``psd[a]`` between two calls sets ``dirty[a] = 1``, and ``meta[2] = 1`` when ``a`` is
        the leader of the cached weights, ``meta[1]``.

    Returns
    -------
    challenger : int
    weight : float
        ``Σ_j p_j``, an upper bound on ``P(A)`` (it can underflow to 0).
    """
    k = pmean.size
    total, log_scale = _weights(pmean, psd, leader, pw, zs, cum, dirty, meta)
    m_l = pmean[leader]
    v_l = psd[leader] * psd[leader]
    while True:
        u = uniform(state) * total
        j = 0
        while cum[j] <= u or j == leader:
            j += 1
        v_j = psd[j] * psd[j]
        v_d = v_l + v_j
        sd_d = math.sqrt(v_d)
        mu_d = pmean[j] - m_l
        d = mu_d + sd_d * std_normal_above(state, zb, meta, -mu_d / sd_d)  # θ_j − θ_l > 0
        if meta[Z_POS] + k + 1 > zb.size:
            refill_normals(state, zb, meta, k + 1)
        pos = meta[Z_POS]
        meta[Z_POS] = pos + k + 1  # zb[pos] for θ_leader, zb[pos + 1 + i] for arm i
        x_l = m_l - (v_l / v_d) * (d - mu_d) + math.sqrt(v_l * v_j / v_d) * zb[pos]
        best = j
        best_val = x_l + d
        count = 1
        for i in range(k):
            if i != leader and i != j:
                x = pmean[i] + psd[i] * zb[pos + 1 + i]
                if x > x_l:
                    count += 1
                    if x > best_val:
                        best_val = x
                        best = i
        if count == 1 or uniform(state) * count < 1.0:
            return best, total * math.exp(log_scale)
