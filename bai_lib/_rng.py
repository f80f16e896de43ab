"""Random number generation for the compiled simulators.

The simulators in :mod:`bai_lib.kernels` draw every random number from a
small generator implemented with numba, so that a whole simulated run can
execute inside one compiled function without calling back into Python:

* **xoshiro256++** (Blackman & Vigna, 2019) produces 64-bit words from a
  state of four ``uint64`` words.  The state is a plain ``numpy`` array of
  shape ``(4,)`` and dtype ``uint64`` that the kernels update in place.
* :func:`uniform` turns the top 53 bits of a word into a double in
  ``[0, 1)``.
* :func:`std_normal` is a 256-layer **ziggurat** sampler (Marsaglia & Tsang,
  2000) for the standard normal distribution.  Its tables are computed at
  import time with numpy (see :func:`_ziggurat_tables`); the rightmost region
  beyond ``r`` is sampled with Marsaglia's exact exponential-rejection tail
  method and the wedges are handled by the usual exact rejection test, so the
  output has exactly the N(0, 1) law up to floating-point resolution.

Seeding
-------
Every generator state is derived deterministically from a triple
``(seed, run, stream)`` in compiled code, see :func:`seed_state`: the pair
``(seed, stream)`` selects a SplitMix64 sequence (Steele, Lea & Flood, 2014;
the seeding Blackman & Vigna recommend for xoshiro), and run ``r`` takes its
words ``4r + 1, ..., 4r + 4``.  Stream :data:`STREAM_PRIOR` (0) is used to draw
the arm means of run ``run`` from the prior, stream :data:`STREAM_ALGO` (1) for
the rewards and the internal randomisation of the algorithm.  Because the
state of run ``r`` depends only on ``(seed, r, stream)``, simulation results
do not depend on how runs are split between threads, processes or machines,
and the same seed gives the same arm means in run ``r`` for every algorithm
(common random numbers).  Deriving a state costs a few nanoseconds.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _validate as V

__all__ = [
    "SEED_MAX",
    "RUN_MAX",
    "STREAM_PRIOR",
    "STREAM_ALGO",
    "seed_state",
    "seed_states",
    "prior_means",
    "next_u64",
    "uniform",
    "std_normal",
    "uniform_positive",
    "fill_uniform",
    "fill_normal",
    "fill_u64",
    "coin_word",
    "coin_ones",
]

#: Stream index used to draw the arm means of a run from the prior.
STREAM_PRIOR = 0
#: Stream index used for the rewards and the algorithm's own randomness.
STREAM_ALGO = 1

# ---------------------------------------------------------------------------
# Ziggurat tables
# ---------------------------------------------------------------------------

ZIGGURAT_LAYERS = 256


def _ziggurat_tables(n_layers: int = ZIGGURAT_LAYERS):
    """Compute the ziggurat tables for ``f(x) = exp(-x**2 / 2)``.

    The area under ``f`` on ``[0, inf)`` is covered by ``n_layers`` regions
    of equal area ``v``: a base region made of the rectangle
    ``[0, r] x [0, f(r)]`` plus the tail ``{x > r, y < f(x)}``, and
    ``n_layers - 1`` horizontal rectangles stacked above it.  Rectangle
    ``i`` (``1 <= i < n_layers``) spans heights ``[f(x[i]), f(x[i+1])]`` and
    widths ``[0, x[i]]``.  Given ``r`` the edges follow from
    ``x[i] * (f(x[i+1]) - f(x[i])) = v``; ``r`` is found by bisection so that
    the top rectangle ends exactly at height ``f(0) = 1``.

    Returns
    -------
    x : ndarray, shape (n_layers + 1,)
        ``x[0] = v / f(r)`` (width of the pseudo-rectangle standing for the
        base region), ``x[1] = r``, decreasing to ``x[n_layers] = 0``.
    f : ndarray, shape (n_layers + 1,)
        ``f[i] = exp(-x[i]**2 / 2)`` for ``i >= 1``, ``f[0] = f(r)``
        (unused) and ``f[n_layers] = 1``.
    r : float
        Start of the tail.
    """

    def area(r):
        return r * math.exp(-0.5 * r * r) + math.sqrt(math.pi / 2.0) * math.erfc(
            r / math.sqrt(2.0)
        )

    def top_residual(r):
        # Height reached at the top of the last rectangle minus one; positive
        # means the layers are too thick (r too small).
        v = area(r)
        x = r
        for _ in range(n_layers - 2):
            y = math.exp(-0.5 * x * x) + v / x
            if y >= 1.0:
                return 1.0
            x = math.sqrt(-2.0 * math.log(y))
        return math.exp(-0.5 * x * x) + v / x - 1.0

    lo, hi = 2.0, 5.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if top_residual(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    r = hi
    v = area(r)
    x = np.empty(n_layers + 1)
    x[1] = r
    for i in range(1, n_layers - 1):
        y = math.exp(-0.5 * x[i] * x[i]) + v / x[i]
        x[i + 1] = math.sqrt(-2.0 * math.log(y))
    x[n_layers] = 0.0
    x[0] = v / math.exp(-0.5 * r * r)
    f = np.exp(-0.5 * x * x)
    f[0] = math.exp(-0.5 * r * r)
    f[n_layers] = 1.0
    return x, f, r


_ZIG_X, _ZIG_F, _ZIG_R = _ziggurat_tables()
_ZIG_INV_R = 1.0 / _ZIG_R
_ZIG_MASK = np.uint64(ZIGGURAT_LAYERS - 1)
_ZIG_SIGN_SHIFT = np.uint64(8)  # bits 0..7 select the layer, bit 8 the sign

# ---------------------------------------------------------------------------
# xoshiro256++
# ---------------------------------------------------------------------------

_U64_11 = np.uint64(11)
_U64_17 = np.uint64(17)
_U64_23 = np.uint64(23)
_U64_41 = np.uint64(41)
_U64_45 = np.uint64(45)
_U64_19 = np.uint64(19)
_U64_1 = np.uint64(1)
_U64_4 = np.uint64(4)
_U64_27 = np.uint64(27)
_U64_30 = np.uint64(30)
_U64_31 = np.uint64(31)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, nogil=True, inline="always")
def _xoshiro(s0, s1, s2, s3):
    # One xoshiro256++ step on a state held in local variables; returns the
    # output word and the new state.
    a = s0 + s3
    result = ((a << _U64_23) | (a >> _U64_41)) + s0
    t = s1 << _U64_17
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = (s3 << _U64_45) | (s3 >> _U64_19)
    return result, s0, s1, s2, s3


@njit(cache=True, nogil=True)
def next_u64(state):
    """Advance a xoshiro256++ state in place and return the next ``uint64``."""
    result, s0, s1, s2, s3 = _xoshiro(state[0], state[1], state[2], state[3])
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3
    return result


@njit(cache=True, nogil=True)
def uniform(state: np.ndarray) -> float:
    """Uniform double in ``[0, 1)`` with 53 random bits."""
    return float(next_u64(state) >> _U64_11) * _TWO_M53


@njit(cache=True, nogil=True)
def uniform_positive(state: np.ndarray) -> float:
    """Uniform double in ``(0, 1]`` with 53 random bits (a safe argument for ``log``)."""
    return float((next_u64(state) >> _U64_11) + _U64_1) * _TWO_M53


@njit(cache=True, nogil=True)
def _normal_tail(state):
    # Marsaglia (1964): X = r + E1 / r conditioned on 2 E2 > (E1 / r)**2 has
    # the density of N(0, 1) restricted to (r, inf).
    while True:
        x = -math.log(uniform_positive(state)) * _ZIG_INV_R
        y = -math.log(uniform_positive(state))
        if y + y > x * x:
            return _ZIG_R + x


@njit(cache=True, nogil=True)
def _normal_from_bits(state, bits):
    # Ziggurat step for the word ``bits``; on rejection in a wedge the
    # procedure restarts with fresh words from ``state``.
    while True:
        i = np.intp(bits & _ZIG_MASK)
        negative = ((bits >> _ZIG_SIGN_SHIFT) & _U64_1) != 0
        x = float(bits >> _U64_11) * _TWO_M53 * _ZIG_X[i]
        if x < _ZIG_X[i + 1]:
            return -x if negative else x
        if i == 0:
            x = _normal_tail(state)
            return -x if negative else x
        # Wedge between x[i+1] and x[i]: uniform height in [f[i], f[i+1]].
        y = _ZIG_F[i] + uniform(state) * (_ZIG_F[i + 1] - _ZIG_F[i])
        if y < math.exp(-0.5 * x * x):
            return -x if negative else x
        bits = next_u64(state)


@njit(cache=True, nogil=True)
def std_normal(state: np.ndarray) -> float:
    """Standard normal variate (256-layer ziggurat).

    One 64-bit word supplies the layer (bits 0-7), the sign (bit 8) and a
    53-bit uniform (bits 11-63).  About 99% of the calls return after one
    comparison; the rest go through the exact wedge or tail rejection step.
    """
    return _normal_from_bits(state, next_u64(state))


@njit(cache=True, nogil=True)
def fill_normal(state: np.ndarray, out: np.ndarray) -> None:
    """Fill ``out`` (float64 array) with standard normal variates.

    Produces exactly the values of ``len(out)`` successive calls of
    :func:`~bai_lib.algorithms.plugin.std_normal`, but keeps the generator state in registers on the
    fast path (about twice as fast).
    """
    s0 = state[0]
    s1 = state[1]
    s2 = state[2]
    s3 = state[3]
    for j in range(out.size):
        bits, s0, s1, s2, s3 = _xoshiro(s0, s1, s2, s3)
        i = np.intp(bits & _ZIG_MASK)
        x = float(bits >> _U64_11) * _TWO_M53 * _ZIG_X[i]
        if x < _ZIG_X[i + 1]:
            out[j] = -x if ((bits >> _ZIG_SIGN_SHIFT) & _U64_1) else x
        else:
            state[0] = s0
            state[1] = s1
            state[2] = s2
            state[3] = s3
            out[j] = _normal_from_bits(state, bits)
            s0 = state[0]
            s1 = state[1]
            s2 = state[2]
            s3 = state[3]
    state[0] = s0
    state[1] = s1
    state[2] = s2
    state[3] = s3


@njit(cache=True, nogil=True)
def fill_u64(state, out):
    """Fill ``out`` (uint64 array) with raw generator output."""
    for j in range(out.size):
        out[j] = next_u64(state)


@njit(cache=True, nogil=True)
def fill_uniform(state, out):
    """Fill ``out`` (float64 array) with uniforms in ``[0, 1)``."""
    for j in range(out.size):
        out[j] = uniform(state)


# ---------------------------------------------------------------------------
# Seeding
# ---------------------------------------------------------------------------


#: Largest seed: seeds are unsigned 64-bit integers.
SEED_MAX = 2**64 - 1
#: Largest run index: ``4 * run + 4`` must not wrap around ``2**64``.
RUN_MAX = 2**62 - 1

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's increment, 2**64 / golden ratio (odd)
_STREAM_STEP = np.uint64(0xD1B54A32D192ED03)  # another odd constant, separates the streams
_MIX_M1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_M2 = np.uint64(0x94D049BB133111EB)


@njit(cache=True, nogil=True, inline="always")
def _mix64(z):
    # SplitMix64's output function (Stafford's "Mix13"): a bijection of the 64-bit words.
    z = (z ^ (z >> _U64_30)) * _MIX_M1
    z = (z ^ (z >> _U64_27)) * _MIX_M2
    return z ^ (z >> _U64_31)


@njit(cache=True, nogil=True)
def _stream_key(seed, stream):
    # Seed of the SplitMix64 sequence of (seed, stream); injective in stream for a fixed seed.
    return _mix64(_mix64(seed + _GOLDEN) + (stream + _U64_1) * _STREAM_STEP)


@njit(cache=True, nogil=True)
def _fill_states(key, first_run, out):
    # Row j of ``out`` is the state of run ``first_run + j``: words 4r+1..4r+4 of the sequence.
    for j in range(out.shape[0]):
        counter = np.uint64(first_run + j) * _U64_4
        for w in range(4):
            counter += _U64_1
            out[j, w] = _mix64(key + counter * _GOLDEN)
        if out[j, 0] == 0 and out[j, 1] == 0 and out[j, 2] == 0 and out[j, 3] == 0:
            out[j, 0] = _GOLDEN  # the fixed point of xoshiro256++ (probability 2**-256)


@njit(cache=True, nogil=True, inline="always")
def _popcount(x):
    # Set bits of a 64-bit word (the SWAR sum of bit fields).
    x = x - ((x >> _U64_1) & np.uint64(0x5555555555555555))
    m2 = np.uint64(0x3333333333333333)
    x = (x & m2) + ((x >> np.uint64(2)) & m2)
    x = (x + (x >> _U64_4)) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, nogil=True)
def coin_word(key: int, w: int) -> int:
    """Word ``w >= 0`` of the SplitMix64 sequence seeded with ``key``: 64 fair coins that can be
    read in any order (a counter-based stream: each word is the bijective mix of
    ``key + (w + 1) γ`` with which ``seed_states`` seeds the generator states; ``key`` a
    ``uint64``)."""
    return _mix64(key + (np.uint64(w) + _U64_1) * _GOLDEN)


@njit(cache=True, nogil=True)
def coin_ones(key: int, a: int, b: int) -> int:
    """Number of heads among the coins ``a <= j < b`` of the stream of :func:`coin_word` (coin
    ``j`` is bit ``j % 64`` of word ``j // 64``): a random-access fair coin sequence, so the
    heads of any stretch are counted in ``(b - a) / 64`` words."""
    if b <= a:
        return 0
    wa = a >> 6
    wb = (b - 1) >> 6
    lo = np.uint64(a & 63)
    hi = np.uint64(((b - 1) & 63) + 1)  # bits below hi in the last word
    full = np.uint64(0xFFFFFFFFFFFFFFFF)
    if wa == wb:
        mask = (full >> (np.uint64(64) - hi)) & (full << lo)
        return _popcount(coin_word(key, wa) & mask)
    total = _popcount(coin_word(key, wa) & (full << lo))
    for w in range(wa + 1, wb):
        total += _popcount(coin_word(key, w))
    return total + _popcount(coin_word(key, wb) & (full >> (np.uint64(64) - hi)))


def _key(seed, stream):
    # numba hands a uint64 back as a Python int; keep it a uint64 for the next call.
    return np.uint64(_stream_key(np.uint64(seed), np.uint64(stream)))


def seed_state(seed: int, run: int, stream: int) -> np.ndarray:
    """Generator state for ``(seed, run, stream)``.

    With ``mix`` the output function of SplitMix64 (a bijection of 64-bit words) and
    ``G = 0x9E3779B97F4A7C15``, the key of ``(seed, stream)`` is
    ``mix(mix(seed + G) + (stream + 1) * 0xD1B54A32D192ED03)`` and word ``w`` (0 to 3) of the
    state of run ``r`` is ``mix(key + (4 r + w + 1) * G)`` (arithmetic modulo ``2**64``): the
    words ``4r + 1`` to ``4r + 4`` of the SplitMix64 sequence started at ``key``.  For a fixed
    ``(seed, stream)`` distinct runs therefore get distinct words; the all-zero state (a fixed
    point of xoshiro256++, probability ``2**-256``) would be replaced by a non-zero constant.

    Parameters
    ----------
    seed : int
        In ``[0, 2**64 - 1]``.
    run : int
        In ``[0, 2**62 - 1]``.
    stream : int
        Non-negative, below ``2**64``.

    Returns
    -------
    ndarray of uint64, shape (4,)
    """
    seed = V.integer(seed, "seed", 0, SEED_MAX)
    run = V.integer(run, "run", 0, RUN_MAX)
    stream = V.integer(stream, "stream", 0, SEED_MAX)
    out = np.empty((1, 4), dtype=np.uint64)
    _fill_states(_key(seed, stream), run, out)
    return out[0]


def seed_states(seed: int, runs, stream: int) -> np.ndarray:
    """Stack :func:`seed_state` for each run index in ``runs`` (a ``range`` or a sequence).

    A ``range`` is derived in one compiled loop, a few nanoseconds a state.

    Returns
    -------
    ndarray of uint64, shape (len(runs), 4)
    """
    seed = V.integer(seed, "seed", 0, SEED_MAX)
    stream = V.integer(stream, "stream", 0, SEED_MAX)
    key = _key(seed, stream)
    if isinstance(runs, range) and runs.step == 1:
        first = V.integer(runs.start, "runs", 0, RUN_MAX) if len(runs) else 0
        if len(runs):
            V.integer(runs.stop - 1, "runs", 0, RUN_MAX)
        out = np.empty((len(runs), 4), dtype=np.uint64)
        _fill_states(key, first, out)
    else:
        runs = [V.integer(r, "runs", 0, RUN_MAX) for r in runs]
        out = np.empty((len(runs), 4), dtype=np.uint64)
        for j, r in enumerate(runs):
            _fill_states(key, r, out[j:j + 1])
    return out


@njit(cache=True, nogil=True)
def _fill_prior_means(states, means, stds, out):
    n_runs, k = out.shape
    for r in range(n_runs):
        st = states[r]
        for i in range(k):
            out[r, i] = means[i] + stds[i] * std_normal(st)


def prior_means(means, stds, seed: int, n_runs: int, first_run: int = 0) -> np.ndarray:
    """Arm means of ``n_runs`` runs drawn from a Gaussian prior.

    Row ``j`` is ``means + stds * z`` where ``z`` are the first ``k``
    variates of :func:`~bai_lib.algorithms.plugin.std_normal` from the state
    ``seed_state(seed, first_run + j, STREAM_PRIOR)``.  This is the draw used by
    :func:`bai_lib.simulate`, so ``prior_means(m, s, seed, n)``
    equals ``simulate(..., seed=seed, n_runs=n).means``.

    Parameters
    ----------
    means, stds : array_like, shape (k,)
        Prior means ``m_i`` and prior standard deviations ``xi_i`` (paper,
        Section 2: ``mu_i ~ N(m_i, xi_i^2)``).
    seed : int
        Non-negative integer seed.
    n_runs : int
        Number of runs (rows).
    first_run : int
        Index of the first run (a shard of runs ``first_run, ..., first_run + n_runs - 1``).

    Returns
    -------
    ndarray of float64, shape (n_runs, k)
    """
    means = np.ascontiguousarray(means, dtype=np.float64).reshape(-1)
    stds = np.ascontiguousarray(stds, dtype=np.float64).reshape(-1)
    if means.shape != stds.shape:
        raise ValueError("means and stds must have the same length")
    n_runs = V.integer(n_runs, "n_runs", 0)
    first_run = V.integer(first_run, "first_run", 0, RUN_MAX)
    states = seed_states(seed, range(first_run, first_run + n_runs), STREAM_PRIOR)
    out = np.empty((n_runs, means.size), dtype=np.float64)
    _fill_prior_means(states, means, stds, out)
    return out
