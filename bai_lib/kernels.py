"""Compiled single-run simulators (numba).

Each function in this module simulates **one** run of a best arm
identification algorithm on a fixed Gaussian bandit instance
``mu`` (arm means) with known noise standard deviations ``sigma``: arm ``i``
returns ``mu[i] + sigma[i] * Z`` with ``Z ~ N(0, 1)`` (paper, Section 2).
All randomness (rewards and the algorithm's own coin flips) comes from the
xoshiro256++ state ``state`` (see :mod:`bai_lib._rng`), which is advanced in
place.  Every kernel returns a tuple

``(tau, recommendation, censored, stop_reason)``

with ``tau`` the total number of samples (int64), ``recommendation`` the
0-based index of the recommended arm, ``censored`` a bool, and
``stop_reason`` one of :data:`STOP_SINGLE_ARM`, :data:`STOP_INDIFFERENCE`,
:data:`STOP_GLR`, :data:`STOP_CENSORED`, :data:`STOP_SEPARATION`.

``max_samples`` bounds the work of a run: when the next sampling step would
make the number of samples exceed ``max_samples`` the run stops with
``censored=True`` and ``stop_reason=STOP_CENSORED``, ``tau <= max_samples``,
and recommends the empirical best arm (among the active arms for the
elimination algorithms).  No kernel can loop forever.

The kernels avoid the transcendental functions of the stopping and
confidence thresholds at most steps by checking first against a cheap bound
that can only err on the side of "maybe"; the exact threshold is evaluated
whenever the bound does not settle the question, so the decisions are those
of the direct implementation.  See each docstring for the bound used.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._rng import fill_normal, next_u64, std_normal, uniform

__all__ = [
    "STOP_SINGLE_ARM",
    "STOP_INDIFFERENCE",
    "STOP_GLR",
    "STOP_CENSORED",
    "STOP_SEPARATION",
    "STOP_REASON_NAMES",
    "TTUCB_ALPHA",
    "TTUCB_S",
    "TTUCB_UCB_COEF",
    "TTUCB_RELEASED_UCB_COEF",
    "TTTS_MAX_RESAMPLE",
    "GLR_THRESHOLDS",
    "NORMAL_BUFFER",
    "argmax",
    "conf_factor",
    "first_round",
    "glr_beta",
    "glr_check",
    "glr_passes",
    "glr_refresh",
    "observe",
    "elimination_run",
    "ttts_run",
    "ttucb_run",
    "ttucb_threshold",
]

#: Stopped because a single active arm remained (Algorithm 1, first return).
STOP_SINGLE_ARM = 0
#: Stopped by the indifference rule ``Delta_safe <= Delta_0`` (second return).
STOP_INDIFFERENCE = 1
#: Stopped by a GLR / Chernoff-type test (TTTS, TTUCB).
STOP_GLR = 2
#: Stopped because ``max_samples`` would have been exceeded.
STOP_CENSORED = 3
#: Stopped because the confidence intervals of the leader and the rest separated (LUCB).
STOP_SEPARATION = 4
#: Names of the stop reason codes, indexed by code.
STOP_REASON_NAMES = ("single_arm", "indifference", "glr", "censored", "separation")

#: TTUCB exploration function ``g_u(t) = 2 * alpha * (1 + s) * log t``, the
#: form of the UCB leader in Jourdan & Degenne (2022), whose analysis needs
#: ``alpha > 1`` and ``s > 1``.  The values below satisfy these conditions;
#: the released code uses a different bonus (:data:`TTUCB_RELEASED_UCB_COEF`).
#: For ``k = 2`` the bonus barely matters: the challenger is the other arm
#: and the per-leader tracking with ``beta = 1/2`` samples both arms about
#: equally often whichever arm leads.
TTUCB_ALPHA = 1.2
TTUCB_S = 1.2
#: Coefficient ``2 * alpha * (1 + s)`` of ``log t`` in the TTUCB bonus (Jourdan & Degenne).
TTUCB_UCB_COEF = 2.0 * TTUCB_ALPHA * (1.0 + TTUCB_S)
#: Coefficient of ``log(t + 1)`` in the squared bonus of the released TTUCB code.
TTUCB_RELEASED_UCB_COEF = 4.0
#: Number of posterior re-draws TTTS tries for a challenger (``k > 2``).
TTTS_MAX_RESAMPLE = 100

_NEG_INF = -np.inf
#: Rewards use standard normals taken from a buffer of this length, refilled with
#: :func:`bai_lib._rng.fill_normal` (which keeps the generator state in
#: registers); unused entries are dropped when a step needs more than remain.
NORMAL_BUFFER = 512
_NBUF = NORMAL_BUFFER

#: Codes of the GLR (Chernoff) stopping thresholds ``β(t, δ)`` understood by :func:`glr_beta`:
#: ``"chernoff"`` is ``log(t/δ)`` (Chernoff's rule with ``C = α = 1``, the paper's TTTS);
#: ``"gk2016"`` is ``log((log t + 1)/δ)``, the threshold Garivier & Kaufmann (2016) use in their
#: experiments (smaller than the one their theorem covers).
GLR_THRESHOLDS = {"chernoff": 0, "gk2016": 1}


# ---------------------------------------------------------------------------
# Steps shared by the GLR-stopped kernels (TTTS, TTUCB, EB-TC, Track-and-Stop, plug-ins)
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def glr_beta(t, delta, rule):
    """GLR threshold ``β(t, δ)`` for rule code ``rule`` (:data:`GLR_THRESHOLDS`); increasing in ``t``."""
    if rule == 0:
        return math.log(t / delta)
    return math.log((math.log(t) + 1.0) / delta)


@njit(cache=True, nogil=True)
def glr_passes(mh, v, best, c):
    """Whether ``(mh[best] - mh[j])² >= c (v[best] + v[j])`` for every ``j != best``.

    With ``v_i = σ_i²/N_i`` and ``c = 2β`` this is the Gaussian GLR (Chernoff) test
    ``min_j Z_{best,j} >= β``, ``Z_{ab} = (μ̂_a − μ̂_b)² / (2(σ_a²/N_a + σ_b²/N_b))``; the caller
    passes the empirical best arm, at which ``max_a min_b Z_ab`` is attained. Two arms take a
    branch-free path (the same comparison), which the compiler keeps in registers.
    """
    if mh.size == 2:
        d = mh[0] - mh[1]
        return d * d >= c * (v[0] + v[1])
    for j in range(mh.size):
        if j != best:
            d = mh[best] - mh[j]
            if d * d < c * (v[best] + v[j]):
                return False
    return True


@njit(cache=True, nogil=True)
def glr_check(mh, v, t, delta, rule, thr_lo):
    """``(best, stop)``: the empirical best arm and whether the GLR test passes at time ``t``.

    ``thr_lo <= β(t, δ)`` is a cheap lower bound of the threshold (its value at an earlier time,
    :func:`glr_beta` being increasing in ``t``); the exact threshold is computed only when the
    test passes against it, so the decision is that of the exact test.
    """
    best = argmax(mh)
    if glr_passes(mh, v, best, 2.0 * thr_lo):
        if glr_passes(mh, v, best, 2.0 * glr_beta(t, delta, rule)):
            return best, True
    return best, False


@njit(cache=True, nogil=True)
def glr_refresh(t, delta, rule):
    """``(thr_lo, t_next)``: a lower bound of ``β(t', δ)`` valid until ``t' = t_next``.

    ``β`` is increasing in ``t``, so its value at ``t`` (less a rounding margin) bounds it from
    below for every later time; it is refreshed every ``max(64, t/64)`` samples.
    """
    return glr_beta(t, delta, rule) - 1e-9, t + max(64, t >> 6)


@njit(cache=True, nogil=True)
def first_round(state, mu, sigma, var, buf, S, N, mh, v):
    """Sample every arm once from a freshly filled buffer; return the buffer position (``k``).

    Sets ``S_i = N_i μ̂_i`` to the reward, ``N_i = 1``, ``mh_i`` to the reward and
    ``v_i = var_i``.
    """
    fill_normal(state, buf)
    for i in range(mu.size):
        x = mu[i] + sigma[i] * buf[i]
        S[i] = x
        N[i] = 1
        mh[i] = x
        v[i] = var[i]
    return mu.size


@njit(cache=True, nogil=True)
def observe(arm, x, S, N, mh, v, inv_next, var):
    """Book reward ``x`` of ``arm``: sums, counts, mean ``S/N`` and ``v = var/N``.

    ``inv_next[arm]`` holds ``1/(N_arm + 1)``, prepared one pull ahead so that the division is off
    the critical path; it is refreshed here.
    """
    S[arm] += x
    N[arm] += 1
    inv = inv_next[arm]
    mh[arm] = S[arm] * inv
    v[arm] = var[arm] * inv
    inv_next[arm] = 1.0 / (N[arm] + 1)


# ---------------------------------------------------------------------------
# Algorithm 1 and NoElim
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def argmax(x):
    """Index of the largest entry of ``x`` (the first one on ties)."""
    best = 0
    for i in range(1, x.size):
        if x[i] > x[best]:
            best = i
    return best


@njit(cache=True, nogil=True)
def conf_factor(n, log_const):
    """Width factor ``c(n)`` with ``Conf(i, t) = sigma_i * c(N_i(t))``.

    ``c(n) = sqrt(2 * log(log_const * n**2) / n)`` where
    ``log_const = 12 K / (delta**2 * pi**2)``, i.e. the confidence width of
    Section 5, ``Conf = sqrt(2 sigma^2 log(6 N^2 / ((delta^2 / (2K)) pi^2)) / N)``.
    ``n`` is a float.
    """
    return math.sqrt(2.0 * math.log(log_const * n * n) / n)


@njit(cache=True, nogil=True)
def elimination_run(state, mu, sigma, delta, delta0, max_samples, pull_all, recommend_best,
                    check_every_round):
    """One run of Algorithm 1 (Successive Elimination with Early-Stopping).

    Section 5 of the paper.  Rounds ``n = 1, 2, ...``; in each round every
    active arm (every arm if ``pull_all``) is sampled once, so all active
    arms have ``N_i = n``.  Then, with the empirical **mean**
    ``mu_hat_i = S_i / n`` (the paper prints a sum; the mean is meant) and
    ``Conf(i) = sigma_i * c(n)`` (:func:`conf_factor`),

    * ``UCB(i) = mu_hat_i + Conf(i)``, ``LCB(i) = mu_hat_i - Conf(i)``
      (equation (UCB LCB bound));
    * every active ``i`` with ``UCB(i) <= max_{j active} LCB(j)`` is
      eliminated (the arm attaining the max LCB is never eliminated, so the
      order of the loop is immaterial);
    * if one arm is left the run stops and recommends it
      (:data:`STOP_SINGLE_ARM`);
    * otherwise ``Delta_safe = max_A UCB - max_A LCB`` and the run stops if
      ``Delta_safe <= delta0`` (:data:`STOP_INDIFFERENCE`), recommending an
      active arm chosen uniformly at random (as printed in Algorithm 1 and
      NoElim, and as released for Algorithm 1), or, with ``recommend_best``,
      the arm with the largest empirical mean among the arms sampled in the
      last round (the active arms for Algorithm 1, every arm for NoElim: the
      rule of the released NoElim code).  The uniform draw comes after the
      last reward, so the stopping times do not depend on this choice.

    With ``pull_all=True`` this is NoElim (Appendix, Algorithm NoElim): every
    arm is sampled in every round (``tau`` grows by ``k`` per round) while
    the active set is still shrunk by the same rule and used for stopping and
    for the recommendation.

    Parameters
    ----------
    state : uint64[4]
        Generator state, advanced in place.
    mu, sigma : float64[k]
        Arm means and noise standard deviations.
    delta : float
        Confidence level ``delta`` (enters ``Conf``).
    delta0 : float
        Indifference level ``Delta_0``.
    max_samples : int
        Censoring bound on the number of samples.
    pull_all : bool
        ``False`` for Algorithm 1, ``True`` for NoElim.
    recommend_best : bool
        Recommendation at the indifference stop: ``False`` uniform survivor,
        ``True`` empirical best (see above).
    check_every_round : bool
        Evaluate ``c(n)`` exactly in every round (reference mode, used in
        tests).  With ``False`` the kernel first checks with
        ``c_lo = c(n_end)`` where ``n_end`` is the last round of the current
        block of rounds: ``c`` is decreasing in ``n`` (for ``n >= 2`` and any
        ``delta < 1``), and both the elimination condition and the stopping
        condition are monotone in ``c`` (``UCB - max LCB`` and
        ``Delta_safe`` increase with ``c``), so if neither can trigger with
        ``c_lo <= c(n)`` neither triggers with ``c(n)``.  Otherwise ``c(n)``
        is computed and the round is evaluated exactly.  Both modes make the
        same decisions and consume the same random numbers.

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    k = mu.size
    log_const = 12.0 * k / (delta * delta * math.pi * math.pi)
    S = np.zeros(k)
    means = np.zeros(k)
    act = np.arange(k)
    n_act = k
    buf = np.empty(max(_NBUF, k))
    pos = buf.size
    t = np.int64(0)
    n = 0
    block_end = 0
    c_lo = 0.0
    while True:
        pulls = k if pull_all else n_act
        if t + pulls > max_samples:
            best = act[0]
            if n > 0:
                for j in range(1, n_act):
                    if S[act[j]] > S[best]:
                        best = act[j]
            return t, np.int64(best), True, STOP_CENSORED
        if pos + pulls > buf.size:
            fill_normal(state, buf)
            pos = 0
        if pull_all:
            for i in range(k):
                S[i] += mu[i] + sigma[i] * buf[pos + i]
        else:
            for j in range(n_act):
                i = act[j]
                S[i] += mu[i] + sigma[i] * buf[pos + j]
        pos += pulls
        t += pulls
        n += 1
        inv_n = 1.0 / n
        if not check_every_round and n >= 4:
            if n > block_end:
                block_end = n + max(8, n >> 5)
                c_lo = conf_factor(float(block_end), log_const) * (1.0 - 1e-12)
            max_l = _NEG_INF
            max_u = _NEG_INF
            for j in range(n_act):
                i = act[j]
                m = S[i] * inv_n
                means[i] = m
                w = sigma[i] * c_lo
                max_l = max(max_l, m - w)
                max_u = max(max_u, m + w)
            if max_u - max_l > delta0:
                maybe = False
                for j in range(n_act):
                    i = act[j]
                    if means[i] + sigma[i] * c_lo <= max_l:
                        maybe = True
                        break
                if not maybe:
                    continue
        # Exact evaluation of the round.
        c = conf_factor(float(n), log_const)
        max_l = _NEG_INF
        for j in range(n_act):
            i = act[j]
            m = S[i] * inv_n
            means[i] = m
            lcb = m - sigma[i] * c
            if lcb > max_l:
                max_l = lcb
        kept = 0
        for j in range(n_act):
            i = act[j]
            if means[i] + sigma[i] * c > max_l:
                act[kept] = i
                kept += 1
        n_act = kept
        if n_act == 1:
            return t, np.int64(act[0]), False, STOP_SINGLE_ARM
        max_u = _NEG_INF
        for j in range(n_act):
            i = act[j]
            ucb = means[i] + sigma[i] * c
            if ucb > max_u:
                max_u = ucb
        if max_u - max_l <= delta0:
            if recommend_best:
                if pull_all:
                    best = argmax(S)
                else:
                    best = act[0]
                    for j in range(1, n_act):
                        if means[act[j]] > means[best]:
                            best = act[j]
                return t, np.int64(best), False, STOP_INDIFFERENCE
            pick = np.intp(uniform(state) * n_act)
            if pick >= n_act:
                pick = n_act - 1
            return t, np.int64(act[pick]), False, STOP_INDIFFERENCE


# ---------------------------------------------------------------------------
# Top-Two Thompson Sampling
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _posterior_draw_argmax(state, pmean, psd):
    best = 0
    best_val = _NEG_INF
    for i in range(pmean.size):
        v = pmean[i] + psd[i] * std_normal(state)
        if v > best_val:
            best_val = v
            best = i
    return best


@njit(cache=True, nogil=True)
def _posterior_draw_argmax_except(state, pmean, psd, leader):
    best = -1
    best_val = _NEG_INF
    for i in range(pmean.size):
        if i != leader:
            v = pmean[i] + psd[i] * std_normal(state)
            if best < 0 or v > best_val:
                best_val = v
                best = i
    return best


@njit(cache=True, nogil=True)
def ttts_run(state, mu, sigma, prior_mean, prior_std, delta, rule, beta, max_samples,
             released_challenger):
    """One run of Top-Two Thompson Sampling (Russo, 2016) with leader probability ``beta``.

    Sampling rule (Section 6 of the paper; Russo 2016).  The posterior of arm
    ``i`` under the prior ``N(m_i, xi_i^2)`` and known noise ``sigma_i`` is
    Gaussian with precision ``1/xi_i^2 + N_i/sigma_i^2`` and mean
    ``(m_i/xi_i^2 + S_i/sigma_i^2) / precision``.  Each arm is sampled once
    first.  Then at every step ``theta`` is drawn from the posterior, the
    leader is ``argmax theta``; with probability ``beta`` the leader is sampled,
    otherwise a challenger: ``theta`` is re-drawn until its argmax differs
    from the leader.  With ``beta = 1/2`` the coin is one bit of a 64-bit
    draw; otherwise it is ``uniform < beta``.

    * ``k = 2`` and ``beta = 1/2``: the challenger is the other arm, so the
      sampled arm is ``leader XOR coin`` with an independent fair coin;
      whatever the law of the leader, this arm is uniform on ``{0, 1}`` and
      independent of the past.  The kernel therefore samples a uniformly
      random arm, which is the same algorithm in distribution without
      drawing ``theta``.  For other ``beta`` the leader is drawn.
    * ``k > 2`` with ``released_challenger``: the challenger is the argmax,
      over the arms other than the leader, of one fresh posterior draw (the
      rule of the authors' released code, which masks the leader out of the
      new draw).  It differs in law from re-drawing until the argmax
      changes: it never needs more than one draw, but it favours arms that
      are merely second in the posterior over arms likely to beat the leader.
    * ``k > 2`` otherwise (Russo's rule): at most :data:`TTTS_MAX_RESAMPLE`
      re-draws are tried; if
      none gives a different argmax (the leader's posterior probability of
      being best is then above ``1 - 1/100`` or so) the challenger is the arm
      most likely to beat the leader under the posterior,
      ``argmin_{j != B} (m_B - m_j) / sqrt(s_B^2 + s_j^2)`` (posterior means
      ``m``, standard deviations ``s``).  Plain re-drawing would need on the
      order of ``t / delta`` draws per step near the stopping time.

    Stopping rule (paper, Appendix "Experimental details"): Chernoff's GLR
    rule with threshold ``β(t, δ) = log(C t^α / δ)`` with
    ``C = 1`` and ``α = 1`` (``rule = 0``; see :func:`glr_beta` for the
    others): stop at the first ``t`` (total number of
    samples, ``t >= k``) with
    ``max_a min_{b != a} Z_ab(t) >= β(t, δ)`` (:func:`glr_passes`), where for Gaussians
    ``Z_ab = (mu_hat_a - mu_hat_b)^2 / (2 (sigma_a^2/N_a + sigma_b^2/N_b))``
    if ``mu_hat_a > mu_hat_b`` and 0 otherwise; the maximum over ``a`` is
    attained at the empirical best arm, which is recommended.
    ``β(t, δ)`` is increasing in ``t``, so the kernel compares with
    ``β(t_0, δ)`` for the last refresh time ``t_0 <= t`` and computes
    the exact threshold only when that lower bound is reached.

    The posterior is the exact conjugate one above; the authors' released
    code weights prior and data with swapped variances (correct only when
    ``sigma_i = xi_i``), which is not reproduced.

    Parameters
    ----------
    state, mu, sigma, delta, max_samples
        As for :func:`elimination_run`.
    prior_mean, prior_std : float64[k]
        Prior ``N(m_i, xi_i^2)`` of each arm (posterior of the sampling rule).
    rule : int
        GLR threshold code (:data:`GLR_THRESHOLDS`).
    beta : float
        Probability of sampling the leader, in ``(0, 1)``.
    released_challenger : bool
        Challenger rule for ``k > 2`` (see above).

    Returns
    -------
    tau, recommendation, censored, stop_reason
    """
    k = mu.size
    S = np.zeros(k)
    N = np.zeros(k, dtype=np.int64)
    mh = np.empty(k)
    v = np.empty(k)
    sig2 = sigma * sigma
    prior_prec = 1.0 / (prior_std * prior_std)
    prior_num = prior_mean * prior_prec
    pmean = np.empty(k)
    psd = np.empty(k)
    buf = np.empty(max(_NBUF, k))
    pos = first_round(state, mu, sigma, sig2, buf, S, N, mh, v)
    for i in range(k):
        prec = prior_prec[i] + 1.0 / sig2[i]
        pmean[i] = (prior_num[i] + S[i] / sig2[i]) / prec
        psd[i] = 1.0 / math.sqrt(prec)
    inv_next = np.full(k, 0.5)  # 1 / (N_i + 1), prepared one pull ahead
    t = np.int64(k)
    t_next = t
    thr_lo = 0.0
    bits = np.uint64(0)
    nbits = 0
    one = np.uint64(1)
    fair = beta == 0.5
    while True:
        if t >= t_next:
            thr_lo, t_next = glr_refresh(t, delta, rule)
        if k == 2:
            # glr_check written out: with two arms and a fair coin a step costs a few
            # nanoseconds, and the call would cost more than the rest of the step.
            best = 0 if mh[0] >= mh[1] else 1
            d = mh[0] - mh[1]
            stop = (d * d >= 2.0 * thr_lo * (v[0] + v[1])
                    and d * d >= 2.0 * glr_beta(t, delta, rule) * (v[0] + v[1]))
        else:
            best, stop = glr_check(mh, v, t, delta, rule, thr_lo)
        if stop:
            return t, np.int64(best), False, STOP_GLR
        if t + 1 > max_samples:
            return t, np.int64(best), True, STOP_CENSORED
        if fair:
            if nbits == 0:
                bits = next_u64(state)
                nbits = 64
            coin = (bits & one) != 0
            bits >>= one
            nbits -= 1
        else:
            coin = uniform(state) < beta
        if k == 2 and fair:
            arm = 1 if coin else 0
        elif k == 2:
            leader = _posterior_draw_argmax(state, pmean, psd)
            arm = leader if coin else 1 - leader
        else:
            leader = _posterior_draw_argmax(state, pmean, psd)
            if coin:
                arm = leader
            elif released_challenger:
                arm = _posterior_draw_argmax_except(state, pmean, psd, leader)
            else:
                arm = leader
                for _ in range(TTTS_MAX_RESAMPLE):
                    c = _posterior_draw_argmax(state, pmean, psd)
                    if c != leader:
                        arm = c
                        break
                if arm == leader:
                    best_score = np.inf
                    for j in range(k):
                        if j != leader:
                            score = (pmean[leader] - pmean[j]) / math.sqrt(
                                psd[leader] * psd[leader] + psd[j] * psd[j]
                            )
                            if score < best_score:
                                best_score = score
                                arm = j
        if pos == buf.size:
            fill_normal(state, buf)
            pos = 0
        x = mu[arm] + sigma[arm] * buf[pos]
        pos += 1
        observe(arm, x, S, N, mh, v, inv_next, sig2)
        if k > 2 or not fair:
            prec = prior_prec[arm] + N[arm] / sig2[arm]
            pmean[arm] = (prior_num[arm] + S[arm] / sig2[arm]) / prec
            psd[arm] = 1.0 / math.sqrt(prec)
        t += 1


# ---------------------------------------------------------------------------
# Top-Two UCB
# ---------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def ttucb_threshold(t, two_cg, log_shift):
    """``c(t, delta) = 2 C_G(log((k-1)/delta) / 2) + 4 log(4 + log((t - log_shift)/2))``.

    ``two_cg`` is the first term, computed once by :func:`bai_lib.stopping.ttucb_two_cg`;
    ``log_shift`` is 0 as printed in the paper's appendix and 1 in the released code.
    """
    return two_cg + 4.0 * math.log(4.0 + math.log((t - log_shift) / 2.0))


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
def ttucb_run(state, mu, sigma, var, two_cg, c_scale, log_shift, ucb_coef, ucb_shift, beta,
              released_sampling, max_samples):
    """One run of TTUCB (Jourdan & Degenne, 2022, "Non-asymptotic analysis of
    a UCB-based top two algorithm").

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
    >= sqrt(c_scale * c(t, delta))`` (:func:`ttucb_threshold`, ``c`` replaced by
    ``max(c, 0)``) and recommend the empirical best ``i_hat``.  ``c_scale = 2``
    is the Gaussian GLR test ``Z >= c`` of Jourdan & Degenne and of the
    released code (``Z`` is half the squared left-hand side); the paper's
    appendix prints ``c_scale = 1``.  ``c(t, delta)`` is increasing in ``t``; it
    is checked first against its value at the last refresh time.

    Parameters
    ----------
    state, mu, sigma, max_samples
        As for :func:`elimination_run`.
    var : float64[k]
        Variances used by the algorithm's statistics (see above).
    two_cg : float
        ``2 * C_G(log((k-1)/delta) / 2)``.
    c_scale : float
        Multiplier of ``c(t, delta)``: 2 (GLR form, released) or 1 (as printed).
    log_shift : float
        ``t - log_shift`` inside ``log(. / 2)``: 1 (released) or 0 (as printed).
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
    k = mu.size
    S = np.zeros(k)
    N = np.zeros(k, dtype=np.int64)
    mh = np.zeros(k)
    v = np.empty(k)
    b = np.empty(k)
    lead_count = np.zeros(k, dtype=np.int64)
    lead_pulls = np.zeros((k, k), dtype=np.int64)
    buf = np.empty(max(_NBUF, k))
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
        x = mu[i] + sigma[i] * buf[i]
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
    while True:
        if t >= t_next:
            t_next = t + max(64, t >> 6)
            c_lo = c_scale * ttucb_threshold(float(t), two_cg, log_shift) - 1e-9
            if c_lo < 0.0:
                c_lo = 0.0
            s_lo = math.sqrt(ucb_coef * math.log(float(t) + ucb_shift))
            s_hi = math.sqrt(ucb_coef * math.log(float(t_next) + ucb_shift))
        best = argmax(mh)
        if glr_passes(mh, v, best, c_lo):
            c = c_scale * ttucb_threshold(float(t), two_cg, log_shift)
            if glr_passes(mh, v, best, max(c, 0.0)):
                return t, np.int64(best), False, STOP_GLR
        if t + 1 > max_samples:
            return t, np.int64(best), True, STOP_CENSORED
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
                    if released_sampling:
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
        lead_pulls[lead, arm] += 1
        if pos == buf.size:
            fill_normal(state, buf)
            pos = 0
        x = mu[arm] + sigma[arm] * buf[pos]
        pos += 1
        observe(arm, x, S, N, mh, v, inv_next, var)
        b[arm] = b_next[arm]
        b_next[arm] = math.sqrt(var[arm] * inv_next[arm])
        t += 1
