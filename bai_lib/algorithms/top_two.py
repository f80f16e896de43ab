"""Top-two algorithms with a GLR stopping rule and deterministic leaders: TTUCB and EB-TC.

Both sample a *leader* with proportion ``β`` and otherwise a *challenger*, and stop with a
Gaussian GLR test checked by :func:`bai_lib.kernels.glr_passes`; they differ in how the leader
and the challenger are chosen and in the threshold. TTTS, whose leader and challenger are
posterior draws, is in :mod:`bai_lib.algorithms.ttts`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Optional

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from .. import _validate as V
from .._rng import fill_normal
from ..confidence import conf_factor
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_GLR, STOP_INDIFFERENCE,
                       STOP_INTERRUPTED, argmax, cancel_flag, glr_passes, glr_passes_bernoulli,
                       observe, record_level, record_rest, refill)
from ..kl import kl_glr
from ..stopping import (GLR_THRESHOLDS, PROVEN_GLR_THRESHOLDS, TTUCB_LOG_TERMS, TTUCB_THRESHOLDS,
                        glr_beta, glr_threshold, ttucb_glr_threshold, ttucb_threshold,
                        ttucb_two_cg)
from .base import Algorithm, Bound, gap_cost
from .indifference import (NEVER, IndifferenceZone, conf_widths, forced_arm, forcing_start,
                           indifferent)

__all__ = ["TTUCB", "EBTC", "ttucb_levels_run", "ttucb_levels_run_bernoulli",
           "TTUCB_ALPHA", "TTUCB_S", "TTUCB_UCB_COEF", "TTUCB_RELEASED_UCB_COEF"]

#: TTUCB exploration function ``g_u(t) = 2 * alpha * (1 + s) * log t``, the
#: form of the UCB leader in Jourdan & Degenne (2022), whose analysis needs
#: ``alpha > 1`` and ``s > 1``.  The values below satisfy these conditions;
#: the released code uses a different bonus (:data:`TTUCB_RELEASED_UCB_COEF`).
#: For ``k = 2`` the bonus barely matters: the challenger is the other arm
#: and the per-leader tracking with ``beta = 1/2`` samples both arms about
#: equally often whichever arm leads.
TTUCB_ALPHA = 1.2
#: The ``s`` of the exploration function ``g_u`` (see :data:`TTUCB_ALPHA`).
TTUCB_S = 1.2
#: Coefficient ``2 * alpha * (1 + s)`` of ``log t`` in the TTUCB bonus (Jourdan & Degenne).
TTUCB_UCB_COEF = 2.0 * TTUCB_ALPHA * (1.0 + TTUCB_S)
#: Coefficient of ``log(t + 1)`` in the squared bonus of the released TTUCB code.
TTUCB_RELEASED_UCB_COEF = 4.0

_NEG_INF = -np.inf


# ---------------------------------------------------------------------------
# Top-Two UCB
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _ucb_leader(mh, b, s):
    best = 0
    best_val = _NEG_INF
    for i in range(mh.size):
        val = mh[i] + s * b[i]
        if val > best_val:
            best_val = val
            best = i
    return best


@njit(cache=True, nogil=True)
def _c(t: int, level: float, c_scale: float, log_shift: float, rule: int) -> float:
    """The level of the squared normalised gap at time ``t``: ``c_scale c(t, δ)``
    (:func:`~bai_lib.stopping.ttucb_threshold`, ``level`` its constant term) for ``rule < 0``,
    else ``2 β(t)`` of the GLR threshold with that code (:func:`~bai_lib.stopping.glr_beta`,
    ``level`` its level argument)."""
    if rule < 0:
        return c_scale * ttucb_threshold(float(t), level, log_shift)
    return 2.0 * glr_beta(float(t), level, rule)


@njit(cache=True, nogil=True)
def ttucb_levels_run(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray, var: np.ndarray,
                     two_cgs: np.ndarray, delta0s: np.ndarray, log_consts: np.ndarray,
                     c_scale: float, log_shift: float, rule: int, ucb_coef: float,
                     ucb_shift: float, beta: float, released_sampling: bool, max_samples: int,
                     out_tau: np.ndarray, out_rec: np.ndarray, out_code: np.ndarray,
                     cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of TTUCB (Jourdan & Degenne, 2022, "Non-asymptotic analysis of
    a UCB-based top two algorithm"), scored at several confidence levels.

    ``var[i]`` is the variance the algorithm uses for arm ``i`` in its
    statistics (``sigma_i^2``, or 1 for the released code, which ignores the
    noise level); rewards always have standard deviation ``sigma[i]``.  With
    ``v_i = var_i / N_i``, after one sample of each arm, at time ``t`` (total
    number of samples so far):

    * leader ``B = argmax_i mu_hat_i + sqrt(ucb_coef * log(t + ucb_shift) * v_i)``
      (``ucb_coef = 4``, ``ucb_shift = 1`` in the released code;
      :data:`TTUCB_UCB_COEF` ``= 2 alpha (1 + s)`` and ``ucb_shift = 0`` for the
      exploration function ``g_u(t) = 2 alpha (1 + s) log t`` of Jourdan & Degenne);
    * challenger ``C = argmin_{j != B} (mu_hat_B - mu_hat_j) / sqrt(v_B + v_j)``,
      the transportation cost, with the positive part of the numerator
      (Jourdan & Degenne) or without it (``released_sampling``: the released
      code's ``np.max(x, 0)`` returns ``x``), ties to the lowest index;
    * tracking with ``beta``: ``L_B`` counts the steps at which ``B`` was the
      leader and ``N^B_B`` the samples of ``B`` taken while it was the
      leader; sample ``B`` if ``N^B_B <= beta * L_B``, else ``C``.  Jourdan &
      Degenne count the current step in ``L_B``; the released code does not,
      and it also books the ``k`` initial samples under the leader of the
      moment (``released_sampling``).

    The bonus is linear in ``s = sqrt(ucb_coef log(t + ucb_shift))``, so if the
    argmax is the same at the two ends ``s_lo, s_hi`` of a block of times it is
    the same for every ``t`` in the block and no logarithm is needed.

    Stopping rule: stop at the first ``t`` with
    ``min_{i != i_hat} (mu_hat_{i_hat} - mu_hat_i) / sqrt(v_{i_hat} + v_i)
    >= sqrt(c_scale * c(t, delta))`` (:func:`~bai_lib.stopping.ttucb_threshold`, ``c`` replaced by
    ``max(c, 0)``) and recommend the empirical best ``i_hat``.  ``c_scale = 2``
    is the Gaussian GLR test ``Z >= c`` of Jourdan & Degenne and of the
    released code (``Z`` is half the squared left-hand side); the paper's
    appendix prints ``c_scale = 1``.  ``c(t, delta)`` is increasing in ``t``; it
    is checked first against its value at the last refresh time.

    ``δ`` enters only the stopping threshold, through ``2 C_G(log((k-1)/δ)/2)``, so one
    trajectory serves every level, as in :func:`~bai_lib.algorithms.ttts.ttts_levels_run`.

    :func:`ttucb_levels_run_bernoulli` runs Bernoulli arms: a pull pays ``1`` when its standard
    normal is below ``mu[arm]`` (``mu`` holds the normal quantiles of the means, as in
    :func:`~bai_lib.algorithms.elimination.elimination_run`), the stopping rule compares the
    Bernoulli GLR statistic ``Z`` of :func:`~bai_lib.kl.kl_glr` with ``c_scale c(t, δ) / 2``
    (:func:`~bai_lib.kernels.glr_passes_bernoulli`; for Gaussian arms ``Z`` is half the squared
    normalised gap, so this is the same test) and the challenger minimises ``Z_{B,j}`` (with the
    sign of ``μ̂_B − μ̂_j`` for ``released_sampling``, whose Gaussian cost is
    ``sign · sqrt(2Z)``). The UCB bonus keeps its sub-Gaussian form with ``var`` (``1/4`` for
    rewards in ``[0, 1]``). Empirical means are then the correctly rounded ``S_i / N_i``, so
    that arms with equal proportions (frequent with counts) tie exactly and ties go to the lowest
    index.

    Parameters
    ----------
    state, mu, sigma, max_samples
        As for :func:`~bai_lib.algorithms.elimination.elimination_run`.
    var : float64[k]
        Variances used by the algorithm's statistics (see above).
    two_cgs : float64[m]
        ``2 * C_G(log((k-1)/delta) / 2)`` for each level, increasing (``δ`` decreasing); for
        ``rule >= 0``, the ``level`` arguments of :func:`~bai_lib.stopping.glr_beta` instead.
    delta0s, log_consts : float64[m] or empty
        The indifference stop of each level (empty arrays: none): stop also, recording
        :data:`~bai_lib.kernels.STOP_INDIFFERENCE`, when
        ``max_{j != i_hat} (mu_hat_j + w_j) - (mu_hat_{i_hat} - w_{i_hat}) <= delta0s[p]`` with
        ``w_j = sigma_j c(N_j)`` (:func:`~bai_lib.confidence.conf_factor` with
        ``log_consts[p]``), and recommend ``i_hat``. A level's stop (either test) implies the
        same at every earlier level, so the records are still those of each level alone.
    out_tau, out_rec, out_code : int64[m]
        Each level's record, as in :func:`~bai_lib.algorithms.ttts.ttts_levels_run`.
    c_scale : float
        Multiplier of ``c(t, delta)``: 2 (GLR form, released) or 1 (as printed).
    log_shift : float
        ``t - log_shift`` inside ``log(. / 2)``: 1 (released) or 0 (as printed).
    rule : int
        ``-1``: the threshold ``c_scale c(t, δ)`` above. A code of
        :data:`~bai_lib.stopping.GLR_THRESHOLDS`: ``2 β(t, δ)`` of that rule instead (the proven
        GLR share of the indifference stop, :func:`~bai_lib.stopping.proven_glr_beta`).
    ucb_coef, ucb_shift : float
        The UCB bonus ``sqrt(ucb_coef * log(t + ucb_shift) * v_i)``.
    beta : float
        Tracking proportion (1/2 in the paper's experiments).
    released_sampling : bool
        Tracking count, initial bookkeeping and challenger as in the released code.

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    if delta0s.size > 0:
        return _ttucb_levels(state, mu, sigma, var, two_cgs, delta0s, log_consts, c_scale,
                             log_shift, rule, ucb_coef, ucb_shift, beta, released_sampling, False,
                             True, max_samples, out_tau, out_rec, out_code, cancel)
    return _ttucb_levels(state, mu, sigma, var, two_cgs, delta0s, log_consts, c_scale, log_shift,
                         rule, ucb_coef, ucb_shift, beta, released_sampling, False, False,
                         max_samples, out_tau, out_rec, out_code, cancel)


@njit(cache=True, nogil=True)
def ttucb_levels_run_bernoulli(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray,
                               var: np.ndarray, two_cgs: np.ndarray, delta0s: np.ndarray,
                               log_consts: np.ndarray, c_scale: float,
                               log_shift: float, rule: int, ucb_coef: float, ucb_shift: float,
                               beta: float,
                               released_sampling: bool, max_samples: int, out_tau: np.ndarray,
                               out_rec: np.ndarray, out_code: np.ndarray,
                               cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """:func:`ttucb_levels_run` on Bernoulli arms (``mu`` the normal quantiles of the means):
    the same arguments and records, the Bernoulli steps described there."""
    if delta0s.size > 0:
        return _ttucb_levels(state, mu, sigma, var, two_cgs, delta0s, log_consts, c_scale,
                             log_shift, rule, ucb_coef, ucb_shift, beta, released_sampling, True,
                             True, max_samples, out_tau, out_rec, out_code, cancel)
    return _ttucb_levels(state, mu, sigma, var, two_cgs, delta0s, log_consts, c_scale, log_shift,
                         rule, ucb_coef, ucb_shift, beta, released_sampling, True, False,
                         max_samples, out_tau, out_rec, out_code, cancel)


# The body of both kernels. Each passes ``bernoulli`` and ``indifference`` as constants and the
# compiler specialises the body for them, so the plain Gaussian kernel runs at its former speed;
# as runtime flags, the Bernoulli code cost the Gaussian runs 60% of their speed and the
# indifference stop 9% (TTUCB, two arms) to 14% (EB-TC, ten arms).
@njit(cache=True, nogil=True)
def _ttucb_levels(state, mu, sigma, var, two_cgs, delta0s, log_consts, c_scale, log_shift, rule,
                  ucb_coef, ucb_shift, beta, released_sampling, bernoulli, indifference,
                  max_samples, out_tau, out_rec, out_code, cancel):
    k = mu.size
    w = np.empty(k)  # the Conf widths of the indifference stop, at the current level
    S = np.zeros(k)
    N = np.zeros(k, dtype=np.int64)
    mh = np.zeros(k)
    v = np.empty(k)
    b = np.empty(k)
    lead_count = np.zeros(k, dtype=np.int64)
    lead_pulls = np.zeros((k, k), dtype=np.int64)
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    pos = k
    for i in range(k):
        if released_sampling:
            # Leader of the moment before the i-th initial sample: arms not yet
            # sampled count with mean 0 and bonus scale sqrt(var).
            lead = 0
            if i > 0:
                s0 = math.sqrt(ucb_coef * math.log(i + ucb_shift))
                best_val = _NEG_INF
                for j in range(k):
                    val = mh[j] + s0 * (b[j] if j < i else math.sqrt(var[j]))
                    if val > best_val:
                        best_val = val
                        lead = j
            lead_count[lead] += 1
            lead_pulls[lead, i] += 1
        x = np.float64(buf[i] < mu[i]) if bernoulli else mu[i] + sigma[i] * buf[i]
        S[i] = x
        N[i] = 1
        mh[i] = x
        v[i] = var[i]
        b[i] = math.sqrt(var[i])
    # 1/(N_i + 1) and the matching bonus scale, prepared one pull ahead so
    # that the division and square root are off the critical path.
    inv_next = np.empty(k)
    b_next = np.empty(k)
    for i in range(k):
        inv_next[i] = 0.5
        b_next[i] = math.sqrt(var[i] * 0.5)
    t = np.int64(k)
    t_next = t
    c_lo = 0.0
    s_lo = 0.0
    s_hi = 0.0
    p = 0  # the next level to reach
    m = two_cgs.size
    n0, t_force = np.int64(NEVER), np.int64(NEVER)  # forced exploration (forcing_start)
    if indifference:
        conf_widths(w, sigma, N, log_consts[0])
        n0, t_force = forcing_start(sigma, log_consts[0], delta0s[0])
    while True:
        if t >= t_next:
            t_next = t + max(64, t >> 6)
            c_lo = _c(t, two_cgs[p], c_scale, log_shift, rule) - 1e-9
            if c_lo < 0.0:
                c_lo = 0.0
            s_lo = math.sqrt(ucb_coef * math.log(float(t) + ucb_shift))
            s_hi = math.sqrt(ucb_coef * math.log(float(t_next) + ucb_shift))
        best = argmax(mh)
        code = -1
        if _passes(mh, v, N, best, c_lo, bernoulli):
            c = _c(t, two_cgs[p], c_scale, log_shift, rule)
            if _passes(mh, v, N, best, max(c, 0.0), bernoulli):
                code = STOP_GLR
        if indifference and code < 0 and indifferent(mh, w, best, delta0s[p]):
            code = STOP_INDIFFERENCE
        if code >= 0:
            p, code = _record_stops(p, t, best, code, mh, v, N, w, sigma, two_cgs, delta0s,
                                    log_consts, c_scale, log_shift, rule, bernoulli, out_tau,
                                    out_rec, out_code)
            if p == m:
                return t, np.int64(best), False, code
            if indifference:
                n0, t_force = forcing_start(sigma, log_consts[p], delta0s[p])
            # a lower bound for the new level until the next refresh (c is increasing in t)
            c_lo = max(_c(t, two_cgs[p], c_scale, log_shift, rule) - 1e-9, 0.0)
        if t + 1 > max_samples:
            record_rest(p, t, best, STOP_CENSORED, out_tau, out_rec, out_code)
            return t, np.int64(best), True, STOP_CENSORED
        if k > 2 and cancel[0]:
            # a step scans every arm (twice with Bernoulli's divergences): with thousands of
            # arms, NORMAL_BUFFER steps between refills would take seconds
            record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
            return t, np.int64(-1), True, STOP_INTERRUPTED
        if k == 2:
            d = mh[1] - mh[0]
            e = b[0] - b[1]
            lead = 1 if d > s_lo * e else 0
            if (1 if d > s_hi * e else 0) != lead:
                s_t = math.sqrt(ucb_coef * math.log(float(t) + ucb_shift))
                lead = 1 if d > s_t * e else 0
            chal = 1 - lead
        else:
            lead = _ucb_leader(mh, b, s_lo)
            if _ucb_leader(mh, b, s_hi) != lead:
                lead = _ucb_leader(mh, b, math.sqrt(ucb_coef * math.log(float(t) + ucb_shift)))
            chal = -1
            best_cost = np.inf
            for j in range(k):
                if j != lead:
                    d = mh[lead] - mh[j]
                    if bernoulli:
                        z = kl_glr(mh[lead], float(N[lead]), mh[j], float(N[j]))
                        if released_sampling and d < 0.0:
                            z = -kl_glr(mh[j], float(N[j]), mh[lead], float(N[lead]))
                        cost = z
                    elif released_sampling:
                        cost = d / math.sqrt(v[lead] + v[j])
                    else:
                        if d < 0.0:
                            d = 0.0
                        cost = d * d / (v[lead] + v[j])
                    if cost < best_cost:
                        best_cost = cost
                        chal = j
        if released_sampling:
            take_leader = lead_pulls[lead, lead] <= beta * lead_count[lead]
            lead_count[lead] += 1
        else:
            lead_count[lead] += 1
            take_leader = lead_pulls[lead, lead] <= beta * lead_count[lead]
        arm = lead if take_leader else chal
        if indifference and t >= t_force:
            arm = forced_arm(N, n0, arm)
        lead_pulls[lead, arm] += 1
        if pos == buf.size:
            if not refill(state, buf, cancel):
                record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
                return t, np.int64(-1), True, STOP_INTERRUPTED
            pos = 0
        x = np.float64(buf[pos] < mu[arm]) if bernoulli else mu[arm] + sigma[arm] * buf[pos]
        pos += 1
        observe(arm, x, S, N, mh, v, inv_next, var)
        if bernoulli:  # the correctly rounded S/N, so that equal proportions tie exactly
            mh[arm] = S[arm] / N[arm]
        b[arm] = b_next[arm]
        b_next[arm] = math.sqrt(var[arm] * inv_next[arm])
        if indifference:
            w[arm] = sigma[arm] * conf_factor(float(N[arm]), log_consts[p])
        t += 1


@njit(cache=True, nogil=True)
def _record_stops(p, t, best, code, mh, v, N, w, sigma, two_cgs, delta0s, log_consts, c_scale,
                  log_shift, rule, bernoulli, out_tau, out_rec, out_code):
    """Record level ``p``, stopped at ``t`` with ``code``, and every later level whose GLR test
    or indifference stop passes at ``t`` too (each implies the same at the earlier levels, so
    the records are those of each level alone); return the next level and the last code. The
    widths ``w`` are left at the next level's constant."""
    indifference = delta0s.size > 0
    while True:
        p = record_level(p, t, best, code, out_tau, out_rec, out_code)
        if p == two_cgs.size:
            return p, code
        if indifference:
            conf_widths(w, sigma, N, log_consts[p])
        if _passes(mh, v, N, best, max(_c(t, two_cgs[p], c_scale, log_shift, rule), 0.0),
                   bernoulli):
            code = STOP_GLR
        elif indifference and indifferent(mh, w, best, delta0s[p]):
            code = STOP_INDIFFERENCE
        else:
            return p, code


@njit(cache=True, nogil=True)
def _passes(mh, v, N, best, c, bernoulli):
    if bernoulli:
        return glr_passes_bernoulli(mh, N, best, c)
    return glr_passes(mh, v, best, c)


def _ttucb_bound(spec, prior, noise_stds, deltas, c_scale, log_shift, coef, shift, released,
                 var, max_samples, bernoulli) -> Bound:
    """The TTUCB kernel bound to its constants, scored at every level of ``deltas``, with the
    indifference stop of ``spec`` if it has one."""
    sig = noise_stds
    k = sig.size
    default = max_samples
    kernel = ttucb_levels_run_bernoulli if bernoulli else ttucb_levels_run
    proven = spec.glr_rule("bernoulli" if bernoulli else "gaussian")
    levels, delta0s, log_consts = spec._indifference_levels(prior, deltas, k, proven)
    if proven:  # the proven threshold replaces c(t, δ)
        two_cgs, rule = levels, GLR_THRESHOLDS[proven]
    else:
        two_cgs, rule = np.array([ttucb_two_cg(k, d, spec.cg) for d in levels]), -1
    beta = spec.beta

    def run(state, mu, out_tau, out_rec, out_code, cancel=None, max_samples=default):
        kernel(state, mu, sig, var, two_cgs, delta0s, log_consts, c_scale, log_shift, rule, coef,
               shift, beta, released, max_samples, out_tau, out_rec, out_code, cancel_flag(cancel))

    d0 = tuple(delta0s.tolist()) if delta0s.size else (None,) * two_cgs.size
    floor = delta0s.min() if delta0s.size else 1e-12
    return Bound(run, d0, lambda means: gap_cost(means, sig, floor))


@dataclass(frozen=True)
class TTUCB(IndifferenceZone, Algorithm):
    """TTUCB (Jourdan & Degenne, 2022) with its GLR stopping rule; semantics in
    :func:`~bai_lib.algorithms.top_two.ttucb_levels_run`.

    Parameters
    ----------
    threshold : {"released", "printed"}
        Normalised gap against ``√(2c(t, δ))`` (released code; the Gaussian GLR test of Jourdan &
        Degenne; default) or against ``√c(t, δ)`` (as printed in the paper's appendix).
    log_term : {"released", "printed"}
        ``log((t-1)/2)`` (released, default) or ``log(t/2)`` (printed) inside ``c(t, δ)``.
    sampling : {"released", "jourdan"}
        ``"released"`` (default): UCB bonus ``√(4 log(t+1) v_i)``, tracking that counts the
        leader's turns before the current step and books the initial samples, challenger without
        the positive part. ``"jourdan"``: bonus ``√(2α(1+s) log(t) v_i)`` with ``α = s = 1.2``,
        the current step counted, positive part.
    cg : {"approx", "exact"}
        ``C_G(x) ≈ x + log x`` as in the paper's experiments (default) or the exact minimisation
        (:func:`bai_lib.stopping.ttucb_cg`).
    noise_aware : bool
        Use ``v_i = σ_i²/N_i`` in the statistic, the challenger and the bonus (default). The
        released code uses ``1/N_i`` whatever ``σ_i``; the two agree when every ``σ_i = 1``.
    beta : float
        Tracking proportion in ``(0, 1)`` (1/2 in the paper).
    indifference : bool
        Add Algorithm 1's indifference stop (default off): stop also once the ``Conf``
        intervals put every other arm's upper end within ``Δ0`` of the empirical best arm's
        lower end, and recommend that arm. ``δ`` is then split between the two stops as
        :func:`bai_lib.confidence.indifference_split` derives (the GLR test runs at ``δ/4``), so
        that the Bayesian probability of error stays below ``δ``.
    delta0, delta0_factor : float, optional
        With ``indifference``: a fixed ``Δ0``, or the divisor in ``Δ0 = δ / (factor · L(H))``
        (4 by default, as in Algorithm 1), as for :class:`~bai_lib.algorithms.Elimination`.
    indifference_glr : {"proven", "own"}
        With ``indifference``: the threshold of the GLR test at ``δ/4``. ``"proven"`` (default):
        the one proven ``δ/4``-correct for the reward model whatever the sampling rule
        (:func:`bai_lib.stopping.proven_glr_beta`; for Gaussian arms ``c(t, δ/4)`` with the exact
        ``C_G``, multiplier 2 and ``log(t/2)``), which the guarantee needs. ``"own"``: this
        specification's own threshold at ``δ/4`` (with its ``cg``, ``threshold`` and
        ``log_term``), a heuristic the guarantee does not cover.
    """

    threshold: str = "released"
    log_term: str = "released"
    sampling: str = "released"
    cg: str = "approx"
    noise_aware: bool = True
    beta: float = 0.5
    indifference: bool = False
    delta0: Optional[float] = None
    delta0_factor: Optional[float] = None
    indifference_glr: str = "proven"

    name: ClassVar[str] = "ttucb"
    short_label: ClassVar[str] = "TTUCB"
    color: ClassVar[str] = "#edae49"
    reward_models: ClassVar[tuple] = ("gaussian", "bernoulli")

    def __post_init__(self):
        V.choice(self.threshold, TTUCB_THRESHOLDS, "threshold")
        V.choice(self.log_term, TTUCB_LOG_TERMS, "log_term")
        V.choice(self.sampling, ("released", "jourdan"), "sampling")
        V.choice(self.cg, ("approx", "exact"), "cg")
        V.flag(self.noise_aware, "noise_aware")
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        self._check_indifference()

    @classmethod
    def as_printed(cls, **overrides: Any) -> TTUCB:
        """The stopping rule as printed in the appendix, with Jourdan & Degenne's sampling rule."""
        opts = dict(threshold="printed", log_term="printed", sampling="jourdan")
        opts.update(overrides)
        return cls(**opts)

    def stopping_threshold(self, t: ArrayLike, delta: float, k: int = 2,
                           rewards: str = "gaussian") -> float | np.ndarray:
        """The level of the squared normalised gap (twice the GLR statistic) at which this
        specification's GLR test stops a run at ``delta``: ``s c(t, δ)`` with its own
        conventions (:func:`bai_lib.stopping.ttucb_glr_threshold`), or under the indifference
        stop ``2 β(t, δ/4)`` of the proven threshold for ``rewards``
        (:func:`bai_lib.stopping.proven_glr_beta`; ``indifference_glr="own"``: its own at
        ``δ/4``)."""
        rule = self.glr_rule(V.choice(rewards, PROVEN_GLR_THRESHOLDS, "rewards"))
        if rule:
            return glr_threshold(t, self.glr_delta(delta), threshold=rule, k=k)
        return ttucb_glr_threshold(t, self.glr_delta(delta), k, cg=self.cg, rule=self.threshold,
                                   log_term=self.log_term)

    def working_memory(self, k: int) -> int:
        """The ``k × k`` int64 table of per-leader pulls that the tracking keeps."""
        return 8 * k * k

    def _bind(self, prior, noise_stds, deltas, max_samples, bernoulli) -> Bound:
        """For Bernoulli rewards, the Bernoulli GLR statistic in the stopping rule and the
        challenger (:func:`~bai_lib.algorithms.top_two.ttucb_levels_run_bernoulli`); the
        threshold ``c(t, δ)`` is the one Jourdan & Degenne prove for Gaussian arms, used as is."""
        released = self.sampling == "released"
        var = np.ascontiguousarray(noise_stds**2 if self.noise_aware else np.ones_like(noise_stds))
        return _ttucb_bound(
            self, prior, noise_stds, deltas, TTUCB_THRESHOLDS[self.threshold],
            TTUCB_LOG_TERMS[self.log_term],
            TTUCB_RELEASED_UCB_COEF if released else TTUCB_UCB_COEF, 1.0 if released else 0.0,
            released, var, max_samples, bernoulli)


@dataclass(frozen=True)
class EBTC(IndifferenceZone, Algorithm):
    """EB-TC (Jourdan, Degenne & Kaufmann, 2023): empirical-best leader, transportation-cost challenger.

    The leader is the empirical best arm ``argmax_i μ̂_i`` (no exploration bonus), the challenger
    ``argmin_{j≠B} (μ̂_B − μ̂_j)_+² / (σ_B²/N_B + σ_j²/N_j)``, and the leader is sampled with
    proportion ``β`` by per-leader tracking, the current step counted. It stops with the GLR test
    ``Z ≥ c(t, δ)``, ``c(t, δ) = 2 C_G(log((k−1)/δ)/2) + 4 log(4 + log(t/2))``. It is the
    kernel :func:`~bai_lib.algorithms.top_two.ttucb_levels_run` with a zero bonus and Jourdan & Degenne's
    conventions.

    Parameters
    ----------
    beta : float
        Tracking proportion in ``(0, 1)``; 1/2 by default.
    cg : {"approx", "exact"}
        ``C_G`` as for :class:`TTUCB`.
    indifference, delta0, delta0_factor, indifference_glr
        Algorithm 1's indifference stop, as for :class:`TTUCB`.
    """

    beta: float = 0.5
    cg: str = "approx"
    indifference: bool = False
    delta0: Optional[float] = None
    delta0_factor: Optional[float] = None
    indifference_glr: str = "proven"

    name: ClassVar[str] = "ebtc"
    short_label: ClassVar[str] = "EB-TC"
    color: ClassVar[str] = "#66a182"
    reward_models: ClassVar[tuple] = ("gaussian", "bernoulli")

    def __post_init__(self):
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        V.choice(self.cg, ("approx", "exact"), "cg")
        self._check_indifference()

    def stopping_threshold(self, t: ArrayLike, delta: float, k: int = 2,
                           rewards: str = "gaussian") -> float | np.ndarray:
        """The level of the squared normalised gap at which EB-TC's GLR test stops a run at
        ``delta``: ``2 c(t, δ)`` with ``log(t/2)`` (:func:`bai_lib.stopping.ttucb_glr_threshold`),
        or under the indifference stop as for :meth:`TTUCB.stopping_threshold`."""
        rule = self.glr_rule(V.choice(rewards, PROVEN_GLR_THRESHOLDS, "rewards"))
        if rule:
            return glr_threshold(t, self.glr_delta(delta), threshold=rule, k=k)
        return ttucb_glr_threshold(t, self.glr_delta(delta), k, cg=self.cg, rule="released",
                                   log_term="printed")

    def working_memory(self, k: int) -> int:
        """The ``k × k`` int64 table of per-leader pulls that the tracking keeps."""
        return 8 * k * k

    def _bind(self, prior, noise_stds, deltas, max_samples, bernoulli) -> Bound:
        """Bernoulli rewards as for TTUCB."""
        var = np.ascontiguousarray(noise_stds**2)
        return _ttucb_bound(
            self, prior, noise_stds, deltas, TTUCB_THRESHOLDS["released"],
            TTUCB_LOG_TERMS["printed"], 0.0, 0.0, False, var, max_samples, bernoulli)
