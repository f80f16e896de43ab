"""Gamma and Beta variates for the compiled simulators, and arm means from Beta and Gamma priors.

Drawn from the generator of :mod:`bai_lib._rng` (its normals and uniforms), in compiled code, so
that TTTS's Beta posteriors and the Beta and Gamma priors' arm means come from the per-run
streams like every other random number.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import _validate as V
from ._rng import RUN_MAX, SEED_MAX, STREAM_PRIOR, seed_states, std_normal, uniform_positive

__all__ = ["gamma_variate", "beta_variate", "prior_beta_means", "prior_gamma_means"]


_BELOW_ONE = 1.0 - 2.0**-53  # largest double below 1; 5e-324 is the smallest above 0


@njit(cache=True, nogil=True)
def _gamma_mt(state, shape):
    # Marsaglia & Tsang (2000), shape >= 1: d = shape - 1/3, v = (1 + x / sqrt(9 d))**3 with
    # x ~ N(0, 1); d v is accepted if log(u) < x**2 / 2 + d (1 - v + log v).  The squeeze
    # u < 1 - 0.0331 x**4 implies that test and skips both logarithms in ~98% of the draws.
    d = shape - 1.0 / 3.0
    c = 1.0 / math.sqrt(9.0 * d)
    while True:
        x = std_normal(state)
        v = 1.0 + c * x
        if v <= 0.0:
            continue
        v = v * v * v
        u = uniform_positive(state)  # (0, 1]: log(u) is finite
        x2 = x * x
        if u < 1.0 - 0.0331 * x2 * x2 or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v


@njit(cache=True, nogil=True)
def _log_gamma_variate(state, shape):
    # log of gamma_variate(state, shape), same words consumed; finite even where X underflows.
    if shape >= 1.0:
        return math.log(_gamma_mt(state, shape))
    g = _gamma_mt(state, shape + 1.0)
    return math.log(g) + math.log(uniform_positive(state)) / shape


@njit(cache=True, nogil=True)
def gamma_variate(state: np.ndarray, shape: float) -> float:
    """Gamma(``shape``, 1) variate by Marsaglia & Tsang's squeeze method (2000).

    For ``shape >= 1`` an attempt draws ``x`` by :func:`~bai_lib.algorithms.plugin.std_normal`,
    then ``u`` uniform in
    ``(0, 1]``; with ``d = shape - 1/3`` and ``v = (1 + x / sqrt(9 d))**3`` it returns ``d v`` if
    ``v > 0`` and ``u < 1 - 0.0331 x**4`` (the squeeze) or ``log u < x**2/2 + d (1 - v + log v)``,
    else tries again (under 1.05 attempts on average).  For ``shape < 1``:
    ``exp(log G + log(U) / shape)`` with ``G ~ Gamma(shape + 1)`` drawn first, then ``U`` uniform
    in ``(0, 1]`` (the boost ``G U**(1/shape)`` in log space).  The result is not clipped, and
    small shapes do reach the subnormals and 0: ``P(X < 1e-308)`` is ``8.4e-4`` and
    ``P(X < 5e-324)`` ``5.9e-4`` for ``shape = 0.01``, ``3.5e-7`` for ``0.02``, ``< 1e-16`` for
    ``shape >= 0.05``.  :func:`beta_variate` works with the logarithms instead.

    Parameters
    ----------
    state : ndarray of uint64, shape (4,)
        Generator state, advanced in place.
    shape : float
        Shape ``> 0`` (tested in ``[1e-2, 1e7]``); otherwise NaN, no randomness consumed.

    Returns
    -------
    float
    """
    if not shape > 0.0:
        return math.nan
    if shape >= 1.0:
        return _gamma_mt(state, shape)
    return math.exp(_log_gamma_variate(state, shape))


@njit(cache=True, nogil=True)
def beta_variate(state: np.ndarray, a: float, b: float) -> float:
    """Beta(``a``, ``b``) variate ``X / (X + Y)``, ``X ~ Gamma(a)`` drawn before ``Y ~ Gamma(b)``.

    A call consumes the words of ``gamma_variate(state, a)`` then ``gamma_variate(state, b)``.
    If ``a, b >= 1`` the ratio is formed from the (moderate, positive) values.  Otherwise either
    may underflow, so it is ``1 / (1 + exp(t))``, ``t = log Y - log X`` (``e / (1 + e)`` with
    ``e = exp(-t)`` when ``t > 0``): no ``0 / 0``, full relative accuracy down to the subnormals.
    A result that would round to 0 or 1 is returned as ``5e-324`` or ``1 - 2**-53``, the nearest
    doubles inside ``(0, 1)``, so it lies strictly in ``(0, 1)``.  That happens for small shapes
    only: for ``a = b = 0.01`` about 35% of the exact values lie within ``2**-53`` of 1 (when
    ``1 - B`` matters for a tiny ``b``, draw ``Beta(b, a)`` and take ``1 -`` it), under ``1e-7``
    for ``a, b >= 0.5``.

    Parameters
    ----------
    state : ndarray of uint64, shape (4,)
        Generator state, advanced in place.
    a, b : float
        Shapes ``> 0`` (tested in ``[1e-2, 1e7]``); otherwise NaN, no randomness consumed.

    Returns
    -------
    float
    """
    if not (a > 0.0 and b > 0.0):
        return math.nan
    if a >= 1.0 and b >= 1.0:
        x = _gamma_mt(state, a)
        r = x / (x + _gamma_mt(state, b))
    else:
        log_x = _log_gamma_variate(state, a)
        t = _log_gamma_variate(state, b) - log_x
        if t > 0.0:
            e = math.exp(-t)
            r = e / (1.0 + e)
        else:
            r = 1.0 / (1.0 + math.exp(t))
    return _BELOW_ONE if r >= 1.0 else 5e-324 if r <= 0.0 else r


@njit(cache=True, nogil=True)
def _fill_prior_means(states, a, b, beta, out):
    # row r from run r's stream: Beta(a_i, b_i), or Gamma(a_i) / b_i (shape a_i, rate b_i)
    for r in range(out.shape[0]):
        for i in range(out.shape[1]):
            if beta:
                out[r, i] = beta_variate(states[r], a[i], b[i])
            else:
                out[r, i] = gamma_variate(states[r], a[i]) / b[i]


_RUN_BLOCK = 1 << 16  # runs whose generator states are held at once (32 bytes each)


def _prior_means(a, b, seed, n_runs, first_run, beta: bool) -> np.ndarray:
    """:func:`prior_beta_means` (``beta``) or :func:`prior_gamma_means`: the checks of the
    inputs, then the runs ``65,536`` at a time (their states derived per block)."""
    params = []
    for value, name in ((a, "a"), (b, "b")):
        arr = V.reals(value, name, positive=True)
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D sequence of finite positive "
                             f"numbers, got {value!r}")
        params.append(np.ascontiguousarray(arr, dtype=np.float64))
    a, b = params
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same length, got {a.size} and {b.size}")
    n_runs = V.integer(n_runs, "n_runs", 0)
    first_run = V.integer(first_run, "first_run", 0, RUN_MAX)
    if n_runs:
        V.integer(first_run + n_runs - 1, "first_run + n_runs - 1", 0, RUN_MAX)
    seed = V.integer(seed, "seed", 0, SEED_MAX)  # checked even without runs
    out = np.empty((n_runs, a.size), dtype=np.float64)
    for start in range(0, n_runs, _RUN_BLOCK):
        stop = min(n_runs, start + _RUN_BLOCK)
        states = seed_states(seed, range(first_run + start, first_run + stop), STREAM_PRIOR)
        _fill_prior_means(states, a, b, beta, out[start:stop])
    return out


def prior_beta_means(a, b, seed: int, n_runs: int, first_run: int = 0) -> np.ndarray:
    """Arm means of ``n_runs`` runs drawn from independent Beta priors ``mu_i ~ Beta(a_i, b_i)``.

    Row ``j`` is ``beta_variate(st, a[i], b[i])`` for ``i = 0, ..., k - 1`` in order, with
    ``st = seed_state(seed, first_run + j, STREAM_PRIOR)``: the per-run stream of
    :func:`bai_lib._rng.prior_means`, so shards concatenate (``prior_beta_means(a, b, s, n)`` is
    ``prior_beta_means(a, b, s, m)`` followed by ``prior_beta_means(a, b, s, n - m, first_run=m)``).
    Every entry lies strictly in ``(0, 1)``.

    Parameters
    ----------
    a, b : array_like, shape (k,)
        Finite positive Beta parameters, ``k >= 1`` (tested in ``[1e-2, 1e7]``).
    seed : int
        Seed in ``[0, 2**64 - 1]``.
    n_runs : int
        Number of runs (rows), ``>= 0``.
    first_run : int
        Index of the first run (a shard of runs ``first_run, ..., first_run + n_runs - 1``).

    Returns
    -------
    ndarray of float64, shape (n_runs, k)
    """
    return _prior_means(a, b, seed, n_runs, first_run, beta=True)


def prior_gamma_means(a, b, seed: int, n_runs: int, first_run: int = 0) -> np.ndarray:
    """Arm means of ``n_runs`` runs drawn from independent Gamma priors ``λ_i ~ Gamma(a_i, b_i)``.

    Shape ``a_i`` and rate ``b_i`` (mean ``a_i / b_i``). Row ``j`` is
    ``gamma_variate(st, a[i]) / b[i]`` for ``i = 0, ..., k - 1`` in order, with
    ``st = seed_state(seed, first_run + j, STREAM_PRIOR)``: the per-run stream of
    :func:`bai_lib._rng.prior_means` and :func:`prior_beta_means`, so shards concatenate
    (``prior_gamma_means(a, b, s, n)`` is ``prior_gamma_means(a, b, s, m)`` followed by
    ``prior_gamma_means(a, b, s, n - m, first_run=m)``) and the result depends on nothing else
    (not on threads). The states are derived ``65,536`` runs at a time, so the memory is that of
    the result. Entries are ``>= 0``: for shapes near ``1e-2`` a draw may underflow to ``0``
    (see :func:`gamma_variate`). The arguments are those of :func:`prior_beta_means`, ``a`` and
    ``b`` the finite positive shapes and rates (the shapes tested in ``[1e-2, 1e7]``); the
    result is a float64 array of shape ``(n_runs, k)``.
    """
    return _prior_means(a, b, seed, n_runs, first_run, beta=False)
