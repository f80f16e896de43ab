"""The Bayes-optimal stopping rule for two Gaussian arms sampled in pairs, computed.

Math layer. Two arms with independent priors ``μ_i ~ N(m_i, ξ_i²)`` and known noise levels
``σ_i`` are sampled one pair at a time (one sample of each arm, as Algorithm 1 and the balanced
samplers do on two arms). After ``n`` pairs the posterior of ``μ_i`` is ``N(m_i(n), v_i(n))`` with
``v_i(n) = 1 / (1/ξ_i² + n/σ_i²)``, so the gap ``μ_1 − μ_2`` has posterior mean ``M_n = m_1(n) −
m_2(n)`` and the *deterministic* posterior variance ``V(n) = v_1(n) + v_2(n)``. By Gaussian
conjugacy ``M`` is a Gaussian martingale with independent increments,
``M_{n'} − M_n ~ N(0, V(n) − V(n'))`` (the law of total variance, with ``V`` deterministic), and
a rule that stops after ``n`` pairs and recommends the arm with the larger posterior mean errs
with probability ``Φ(−|M_n| / √V(n))`` given what it saw. So ``(n, M_n)`` is the whole state.

**The optimal rule.** Minimising ``E[τ]`` (samples, two per pair) subject to a Bayesian
probability of error at most ``δ`` is solved through the Lagrangian ``E[τ] + λ P(error)``: its
value ``W(n, m) = min(λ Φ(−|m|/√V(n)), 2 (n⁺ − n) + E W(n⁺, m + √(V(n) − V(n⁺)) Z))`` is computed
by backward induction, and ``λ`` is tuned until the error equals ``δ``. The
stopping set is ``{|M_n| ≥ b(n)}`` (checked at every step: the continuation region is an
interval around 0), so the rule is the boundary ``b``.

**Discretisation (stated).** Stopping is allowed at every pair up to ``dense`` pairs, then on a
geometric grid of ratio ``1 + step`` (:func:`stopping_grid`): the value computed is that of the
best rule stopping on the grid, achievable and so, up to the numerical error below, an upper
bound on the optimum over all rules that sample in pairs, which it approaches as ``step → 0`` (``tests/test_optimal.py`` measures the change from halving
``step``). The grid ends where stopping is optimal everywhere: once a step costs more than
``λ/2`` samples (``2 (n⁺ − n) ≥ λ/2``), no error can be worth it. ``W(n⁺, ·)`` is held on
``m_points`` points of ``[0, R(n⁺)]``, where ``R(n) = √V(n) Φ⁻¹(1 − c/λ)`` bounds the continuation
region (outside it stopping is optimal and ``W`` is known in closed form), linearly
interpolated; the expectation over the next step is split where the next time's decision
changes (its values jump there) and integrated by a ``nodes``-point Gauss–Legendre rule on
pieces at most :data:`PIECE_WIDTH` standard deviations wide. Halving ``step`` and doubling
``m_points`` moves ``E[τ]`` and the error by under 0.5% (tested), and simulating the computed
boundary on instances drawn from the prior reproduces both within their 99% intervals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V
from ._rng import STREAM_ALGO, prior_means, seed_states, std_normal, uniform
from .priors import GaussianPrior

__all__ = ["OptimalStopping", "OptimalRuns", "two_arm_bayes_optimal", "two_arm_lagrangian",
           "simulate_optimal", "stopping_grid", "posterior_gap_variance", "Z_MAX",
           "PIECE_WIDTH", "CHUNK_RUNS"]


def posterior_gap_variance(prior: GaussianPrior, noise_stds: ArrayLike,
                           pairs: ArrayLike) -> np.ndarray:
    """``V(n) = Σ_i 1 / (1/ξ_i² + n/σ_i²)``: the posterior variance of ``μ_1 − μ_2`` after ``n``
    pairs (module docstring)."""
    xi, sig = _two_arms(prior, noise_stds)
    n = np.asarray(pairs, dtype=np.float64)
    return 1.0 / (1.0 / xi[0] ** 2 + n / sig[0] ** 2) + 1.0 / (1.0 / xi[1] ** 2 + n / sig[1] ** 2)


def stopping_grid(lam: float, dense: int = 200, step: float = 0.005) -> np.ndarray:
    """The pairs at which the computed rule may stop: ``0, 1, ..., dense``, then
    ``n⁺ = max(n + 1, round(n (1 + step)))`` until a step costs at least ``λ/2`` samples
    (``2 (n⁺ − n) ≥ λ/2``), where stopping is optimal whatever the state."""
    lam = V.positive(lam, "lam")
    dense = V.integer(dense, "dense", 1)
    step = V.positive(step, "step")
    out = list(range(dense + 1))
    n = dense
    while True:
        nxt = max(n + 1, int(round(n * (1.0 + step))))
        out.append(nxt)
        if 2.0 * (nxt - n) >= 0.5 * lam or nxt > 2**62 // 4:
            break
        n = nxt
    return np.asarray(out, dtype=np.int64)


@dataclass(frozen=True)
class OptimalStopping:
    """The optimal rule for one ``λ`` (:func:`two_arm_lagrangian`), or for one ``δ``
    (:func:`two_arm_bayes_optimal`, which tunes ``λ``).

    Attributes
    ----------
    pairs : ndarray of int64
        The pairs ``n`` at which the rule may stop (:func:`stopping_grid`).
    boundary : ndarray of float
        ``b(n)`` per grid point: stop as soon as ``|M_n| ≥ b(n)`` (``M_n`` the posterior mean of
        ``μ_1 − μ_2``); 0 where the rule stops whatever it saw.
    lam : float
        The Lagrange multiplier ``λ``.
    expected_samples : float
        ``E[τ]`` of the rule, in samples (two per pair), averaged over the prior.
    error : float
        Its Bayesian probability of error.
    delta : float or None
        The target error ``λ`` was tuned to (``None`` for a given ``λ``).
    start_probability : float
        The probability with which the rule takes its first pair; otherwise (a randomised
        start) it stops at once and recommends the arm of the larger prior mean. Below 1 only
        for a ``δ`` between the error of stopping at once and that of the cheapest rule that
        samples (:func:`two_arm_bayes_optimal`); ``expected_samples`` and ``error`` include it.
    """

    pairs: np.ndarray
    boundary: np.ndarray
    lam: float
    expected_samples: float
    error: float
    delta: float | None = None
    start_probability: float = 1.0

    def stops(self, n: int, m: float) -> bool:
        """Whether the rule stops after ``n`` pairs (a grid point) with posterior mean ``m``
        (once started, see ``start_probability``)."""
        i = int(np.searchsorted(self.pairs, n))
        if i >= self.pairs.size or self.pairs[i] != n:
            raise ValueError(f"n must be a pair count of the rule's grid, got {n}")
        return bool(abs(m) >= self.boundary[i])


def _two_arms(prior, noise_stds):
    if not isinstance(prior, GaussianPrior):
        raise ValueError(f"prior must be a GaussianPrior, got {type(prior).__name__}")
    if prior.k != 2:
        raise ValueError(f"prior: the optimal rule is computed for k = 2 arms, got k = {prior.k}")
    return np.asarray(prior.stds, dtype=np.float64), V.noise_stds(noise_stds, 2)


def two_arm_lagrangian(prior: GaussianPrior, lam: float, noise_stds: ArrayLike = 1.0, *,
                       dense: int = 200, step: float = 0.005, m_points: int = 200,
                       nodes: int = 8) -> OptimalStopping:
    """The rule minimising ``E[τ] + λ P(error)`` over the rules that stop on
    :func:`stopping_grid` (module docstring), by backward induction.

    Parameters
    ----------
    prior : GaussianPrior
        Two arms.
    lam : float
        ``λ > 0``, the price of an error in samples.
    noise_stds : float or sequence of two floats
        Known noise levels ``σ_i``.
    dense, step : int, float
        The grid (:func:`stopping_grid`).
    m_points, nodes : int
        Points of the posterior-mean grid at each stopping time, and of the Gauss–Legendre rule
        on each piece of the expectation over the next step.

    Raises
    ------
    ValueError
        For a prior that is not Gaussian on two arms, or a non-positive ``λ``, ``step``, grid size.
    ArithmeticError
        When the computed continuation region is not an interval around 0 at some stopping time
        (a grid too coarse for the problem; it has not happened at the defaults).
    """
    xi, sig = _two_arms(prior, noise_stds)
    lam = V.positive(lam, "lam")
    m_points = V.integer(m_points, "m_points", 8)
    nodes = V.integer(nodes, "nodes", 4, 200)
    grid = stopping_grid(lam, dense, step)
    var = posterior_gap_variance(prior, sig, grid)
    x, u = np.polynomial.legendre.leggauss(nodes)
    m0 = float(prior.means[0] - prior.means[1])
    boundary = np.zeros(grid.size)
    samples, error, intervals = _backward(grid, var, lam, m0, m_points, x, u, boundary)
    if not intervals:
        raise ArithmeticError("the continuation region is not an interval around 0 at some "
                              "stopping time: refine the grid (m_points, step)")
    return OptimalStopping(grid, boundary, lam, samples, error)


def two_arm_bayes_optimal(prior: GaussianPrior, delta: float, noise_stds: ArrayLike = 1.0, *,
                          dense: int = 200, step: float = 0.005, m_points: int = 200,
                          nodes: int = 8, rtol: float = 1e-3) -> OptimalStopping:
    """The Bayes-optimal stopping rule at error ``δ`` for two Gaussian arms sampled in pairs:
    :func:`two_arm_lagrangian` with ``λ`` tuned until its error is within ``rtol · δ`` of ``δ``
    (the error decreases as ``λ`` grows; secant steps on ``log λ``, kept inside the bracket,
    bisection after 20 steps).

    The error is not continuous in ``λ`` where the cheapest rule that samples takes over from
    stopping at once (for two standard normal arms: at ``λ ≈ 8``, where the error falls from
    ``1/2`` to ``1/4``). A ``δ`` inside that jump is met by the randomised rule that starts with
    probability ``p`` and otherwise stops at once, ``p`` solving ``p e₁ + (1 − p) e₀ = δ``
    (``e₀``, ``e₁`` the two errors): by Lagrangian duality the optimum over randomised rules,
    with ``E[τ*] = p E[τ₁]`` (``start_probability``). A ``δ`` at least ``e₀``, the error of
    stopping at once, needs no sample.

    Returns
    -------
    OptimalStopping
        The rule, its ``E[τ*]`` (``expected_samples``) and error, with ``delta`` set.

    Raises
    ------
    ValueError
        As :func:`two_arm_lagrangian`; ``delta`` must be in ``(0, 1/2)`` (an error of ``1/2``
        needs no sample: recommend either arm) and ``rtol`` in ``(0, 1)``.
    ArithmeticError
        As :func:`two_arm_lagrangian`, or when no ``λ`` is found within 100 steps, or when the
        error jumps between two rules that both sample (not met: only the jump from stopping
        at once is bridged).
    """
    delta = V.open_unit(delta, "delta")
    if delta >= 0.5:
        raise ValueError(f"delta must be below 1/2 (a coin errs with probability 1/2), got "
                         f"{delta:g}")
    rtol = V.positive(rtol, "rtol")
    if rtol >= 1:
        raise ValueError(f"rtol must be below 1, got {rtol:g}")

    def solve(lam):
        return two_arm_lagrangian(prior, lam, noise_stds, dense=dense, step=step,
                                  m_points=m_points, nodes=nodes)

    _, sig = _two_arms(prior, noise_stds)
    m0 = float(prior.means[0] - prior.means[1])
    at_once = 0.5 * math.erfc(abs(m0) / math.sqrt(2.0 * float(
        posterior_gap_variance(prior, sig, 0))))
    if delta >= at_once:  # stopping at once already errs little enough
        return OptimalStopping(np.zeros(1, dtype=np.int64), np.zeros(1), 0.0, 0.0, at_once,
                               delta)
    # log P(error) is close to linear in log λ (slope -1/2 for large λ): secant steps in log-log,
    # kept inside the bracket found so far, bisection when a step would leave it and after 20
    lo, hi = 0.0, math.inf
    lam, prev = 1.0 / delta, None
    for it in range(100):
        rule = solve(lam)
        if abs(rule.error - delta) <= rtol * delta:
            break
        if rule.error > delta:
            lo = lam
        else:
            hi = lam
        if 0 < lo and hi <= lo * (1.0 + 1e-9):  # the error jumps at λ = lo ≈ hi
            return _randomised_start(solve(lo), solve(hi), delta)
        x, y = math.log(lam), math.log(max(rule.error, 1e-300) / delta)
        slope = -0.5
        if prev is not None and prev[0] != x and (y - prev[1]) / (x - prev[0]) < 0:
            slope = (y - prev[1]) / (x - prev[0])
        prev = (x, y)
        new = lam * math.exp(min(max(-y / slope, -7.0), 7.0))
        if not lo < new < hi or (it >= 20 and 0 < lo and hi < math.inf):
            new = math.sqrt(lo * hi) if 0 < lo and hi < math.inf else new
        if new > 1e300:
            raise ArithmeticError(f"no λ up to 1e300 brings the error down to {delta:g}")
        lam = new
    else:
        raise ArithmeticError(f"λ not found within rtol = {rtol:g} of delta = {delta:g} in 100 "
                              f"steps (bracket [{lo:g}, {hi:g}])")
    best = rule
    return OptimalStopping(best.pairs, best.boundary, best.lam, best.expected_samples,
                           best.error, delta)


def _randomised_start(below: OptimalStopping, above: OptimalStopping,
                      delta: float) -> OptimalStopping:
    """The mixture of stopping at once (``below``, just under the jump) and ``above`` whose
    error is ``δ`` (:func:`two_arm_bayes_optimal`)."""
    if below.expected_samples != 0.0:
        raise ArithmeticError(
            f"the error jumps from {below.error:g} to {above.error:g} at λ = {above.lam:g} "
            f"between two rules that both sample; no single rule errs with delta = {delta:g}")
    p = (below.error - delta) / (below.error - above.error)
    return OptimalStopping(above.pairs, above.boundary, above.lam, p * above.expected_samples,
                           p * above.error + (1.0 - p) * below.error, delta, p)


_SQRT_2PI = math.sqrt(2.0 * math.pi)


@njit(cache=True, nogil=True)
def _stop_error(m, v):
    return 0.5 * math.erfc(abs(m) / math.sqrt(2.0 * v))


@njit(cache=True, nogil=True)
def _lookup(table, radius, y):
    """Linear interpolation of ``table`` (values on ``[0, radius]``, evenly spaced) at ``y``."""
    pos = y / radius * (table.size - 1)
    i = min(int(pos), table.size - 2)
    f = pos - i
    return table[i] * (1.0 - f) + table[i + 1] * f


#: Standard normal mass beyond this many standard deviations is left out (below ``1e-16``).
Z_MAX = 8.5

#: The expectation over the next step is integrated by Gauss–Legendre on pieces of at most
#: this many standard deviations.
PIECE_WIDTH = 2.0


@njit(cache=True, nogil=True)
def _continue(m, sd, v1, cost, lam, x, u, c_w, c_s, c_e, radius_next, b_next):
    """``(W, S, E)`` of one more step from posterior mean ``m``: the cost plus the expectations,
    over ``y = m + sd Z``, of the next time's value, samples and error. Where ``|y| < b_next``
    the next time continues (its continuation values ``c_*`` on ``[0, radius_next]``, smooth in
    ``y``), elsewhere it stops (closed form). The Gaussian integral is split where this changes
    and at ``y = 0``, and each piece integrated by the Gauss–Legendre rule ``(x, u)``."""
    cut = np.empty(5)
    cut[0], cut[1], cut[2], cut[3], cut[4] = -Z_MAX, (-b_next - m) / sd, -m / sd, \
        (b_next - m) / sd, Z_MAX
    cut.sort()
    cont_w = cost
    cont_s = cost
    cont_e = 0.0
    for p in range(4):
        lo, hi = max(cut[p], -Z_MAX), min(cut[p + 1], Z_MAX)
        if hi <= lo:
            continue
        inside = abs(m + sd * 0.5 * (lo + hi)) < b_next
        pieces = int(math.ceil((hi - lo) / PIECE_WIDTH))
        for r in range(pieces * x.size):
            a = lo + (hi - lo) * (r // x.size) / pieces
            half = 0.5 * (hi - lo) / pieces
            zq = a + half * (x[r % x.size] + 1.0)
            q = r % x.size
            wq = half * u[q] * math.exp(-0.5 * zq * zq) / _SQRT_2PI
            y = abs(m + sd * zq)
            if inside:
                cont_w += wq * _lookup(c_w, radius_next, y)
                cont_s += wq * _lookup(c_s, radius_next, y)
                cont_e += wq * _lookup(c_e, radius_next, y)
            else:
                err = _stop_error(y, v1)
                cont_w += wq * lam * err
                cont_e += wq * err
    return cont_w, cont_s, cont_e


@njit(cache=True, nogil=True)
def _radius(cost, lam, v):
    """``R = √v Φ⁻¹(1 − cost/λ)``: where ``λ Φ(−m/√v) ≤ cost`` stopping beats continuing;
    0 when ``cost ≥ λ/2``."""
    if cost / lam >= 0.5:
        return 0.0
    lo, hi = 0.0, 40.0
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > cost / lam:
            lo = mid
        else:
            hi = mid
    return hi * math.sqrt(v)


@njit(cache=True, nogil=True)
def _backward(grid, var, lam, m0, points, x, u, boundary):
    """Backward induction over ``grid``: fills ``boundary`` and returns ``(E[τ], P(error),
    continuation regions all intervals)`` of the optimal rule from ``(0, m0)``."""
    last = grid.size - 1
    # the next time's continuation value W, samples S and error E on [0, radius_next], used
    # below its boundary b_next (0: it stops everywhere)
    w_next, s_next, e_next = np.zeros(points), np.zeros(points), np.zeros(points)
    w_now, s_now, e_now = np.zeros(points), np.zeros(points), np.zeros(points)
    radius_next = 0.0
    intervals = True
    boundary[last] = 0.0
    start_s, start_e = 0.0, 0.0
    b_next = 0.0
    for t in range(last - 1, -1, -1):
        cost = 2.0 * (grid[t + 1] - grid[t])
        v, v1 = var[t], var[t + 1]
        sd = math.sqrt(max(v - v1, 0.0))
        if t == 0:  # the one state at the start, evaluated directly
            cw, cs, ce = _continue(m0, sd, v1, cost, lam, x, u, w_next, s_next, e_next,
                                   radius_next, b_next)
            if lam * _stop_error(m0, var[0]) <= cw:
                start_s, start_e = 0.0, _stop_error(m0, var[0])
            else:
                start_s, start_e = cs, ce
        radius = _radius(cost, lam, v)
        b = radius  # stopping is optimal from b on
        found = False
        prev_gap = 1.0
        for i in range(points):
            m = radius * i / (points - 1)
            cw, cs, ce = _continue(m, sd, v1, cost, lam, x, u, w_next, s_next, e_next,
                                   radius_next, b_next)
            w_now[i], s_now[i], e_now[i] = cw, cs, ce  # continuation values, smooth in m
            gap = lam * _stop_error(m, v) - cw
            if gap <= 0.0:
                if not found:
                    found = True
                    b = 0.0 if i == 0 else m - (radius / (points - 1)) * gap / (gap - prev_gap)
            elif found:
                intervals = False  # continuing again beyond a stopping point
            prev_gap = gap
        boundary[t] = b
        w_next, w_now = w_now, w_next
        s_next, s_now = s_now, s_next
        e_next, e_now = e_now, e_next
        radius_next, b_next = radius, b
    return start_s, start_e, intervals


# --------------------------------------------------------------------------------------------
# the rule run on simulated instances

#: Runs per compiled call of :func:`simulate_optimal` (Ctrl-C is honoured between calls).
CHUNK_RUNS = 4096


@dataclass(frozen=True)
class OptimalRuns:
    """Runs of a computed rule on instances drawn from the prior (:func:`simulate_optimal`).

    Attributes
    ----------
    means : ndarray, shape (n_runs, 2)
        The instances: those of :func:`~bai_lib.simulate` with the same seed.
    samples : ndarray of int64
        Stopping times in samples (two per pair).
    correct : ndarray of bool
        Whether the recommended arm (the larger posterior mean; arm 0 on a tie) is the best.
    posterior_error : ndarray of float
        ``Φ(−|M_τ| / √V(τ))``: the posterior probability of error at the stop, given what the
        run saw. Its mean estimates the Bayesian error without bias, with a smaller variance than
        the share of wrong recommendations.
    """

    means: np.ndarray
    samples: np.ndarray
    correct: np.ndarray
    posterior_error: np.ndarray


@njit(cache=True, nogil=True)
def _run_rule(means, states, pairs, boundary, start, m_prior, xi2, sig2, samples, rec, post):
    last = pairs.size - 1
    sig = np.sqrt(sig2)
    for r in range(means.shape[0]):
        st = states[r]
        s0, s1 = 0.0, 0.0
        t = 0
        m = m_prior[0] - m_prior[1]
        v = xi2[0] + xi2[1]
        go = start >= 1.0 or uniform(st) < start
        while go:
            if t > 0:
                d = float(pairs[t] - pairs[t - 1])
                s0 += d * means[r, 0] + math.sqrt(d) * sig[0] * std_normal(st)
                s1 += d * means[r, 1] + math.sqrt(d) * sig[1] * std_normal(st)
            n = float(pairs[t])
            v0 = 1.0 / (1.0 / xi2[0] + n / sig2[0])
            v1 = 1.0 / (1.0 / xi2[1] + n / sig2[1])
            m = v0 * (m_prior[0] / xi2[0] + s0 / sig2[0]) - v1 * (m_prior[1] / xi2[1]
                                                                   + s1 / sig2[1])
            v = v0 + v1
            if abs(m) >= boundary[t] or t == last:
                break
            t += 1
        samples[r] = 2 * pairs[t] if go else 0
        rec[r] = 0 if m >= 0.0 else 1
        post[r] = _stop_error(m, v)


def simulate_optimal(rule: OptimalStopping, prior: GaussianPrior, noise_stds: ArrayLike,
                     n_runs: int, seed: int) -> OptimalRuns:
    """Run ``rule`` on ``n_runs`` instances drawn from ``prior``: the check of a computed rule
    by simulation.

    Between two stopping times ``n < n'`` each arm's sum of rewards grows by one draw of
    ``N((n' − n) μ_i, (n' − n) σ_i²)`` (the sum of that many rewards, exactly), so a run costs
    one draw per arm and grid point it passes. The instances are those of
    :func:`~bai_lib.simulate` with the same seed, the rewards come from run ``r``'s own stream
    (:mod:`bai_lib._rng`), so the result does not depend on how the runs are chunked.

    Parameters
    ----------
    rule : OptimalStopping
        Computed for ``prior`` and ``noise_stds`` (not checked: another prior gives the runs of
        that rule under another law).
    prior : GaussianPrior
        Two arms.
    noise_stds : float or sequence of two floats
    n_runs : int
    seed : int

    Returns
    -------
    OptimalRuns
    """
    if not isinstance(rule, OptimalStopping):
        raise ValueError(f"rule must be an OptimalStopping, got {type(rule).__name__}")
    xi, sig = _two_arms(prior, noise_stds)
    n_runs = V.integer(n_runs, "n_runs", 1)
    seed = V.integer(seed, "seed", 0)
    means = prior_means(np.asarray(prior.means, float), xi, seed, n_runs)
    samples = np.empty(n_runs, dtype=np.int64)
    rec = np.empty(n_runs, dtype=np.int64)
    post = np.empty(n_runs)
    m_prior = np.asarray(prior.means, dtype=np.float64)
    for a in range(0, n_runs, CHUNK_RUNS):
        b = min(a + CHUNK_RUNS, n_runs)
        _run_rule(means[a:b], seed_states(seed, range(a, b), STREAM_ALGO), rule.pairs,
                  rule.boundary, float(rule.start_probability), m_prior, xi**2, sig**2,
                  samples[a:b], rec[a:b], post[a:b])
    best = np.argmax(means, axis=1)
    return OptimalRuns(means, samples, rec == best, post)
