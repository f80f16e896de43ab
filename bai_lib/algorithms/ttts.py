"""Top-Two Thompson Sampling (Russo, 2016) with a GLR stopping rule, for any ``β``.

The leader is the argmax of a posterior draw; with probability ``1 - β`` a challenger is sampled
instead, and the run stops with the Gaussian GLR test of :func:`bai_lib.kernels.glr_passes` at the
threshold :func:`bai_lib.stopping.glr_beta` (the paper's appendix: Chernoff's rule). Bernoulli
arms run with the conjugate Beta posterior
(:func:`~bai_lib.algorithms.ttts_bernoulli.ttts_levels_run_bernoulli`). The
deterministic top-two rules, TTUCB and EB-TC, are in :mod:`bai_lib.algorithms.top_two`.

Russo's challenger, the argmax of a posterior draw given that it differs from the leader, is
sampled exactly by :func:`~bai_lib.algorithms.challenger.exact_challenger` (a union sampler
over the events "arm j beats the leader") at a cost that does not grow as the posterior
concentrates; re-drawing the posterior
until its argmax changes needs about ``1/P(argmax ≠ leader)`` draws, hundreds near the end of a
run. On ten arms the exact rule simulates about 65 times as many samples per second as the
capped re-drawing one (``benchmarks/bench_simulators.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Optional

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import next_u64, std_normal, uniform
from ..confidence import conf_factor
from ..kernels import (NORMAL_BUFFER, STOP_CENSORED, STOP_GLR, STOP_INDIFFERENCE,
                       STOP_INTERRUPTED, cancel_flag, first_round, glr_check, glr_refresh,
                       observe, record_glr_levels, record_rest, refill)
from ..stopping import GLR_THRESHOLDS, glr_beta
from .base import Algorithm, Bound, gap_cost
from .indifference import (NEVER, IndifferenceZone, conf_widths, forced_arm, forcing_start,
                           indifferent, record_glr_stops)
from .challenger import (TTTS_MAX_RESAMPLE, Z_POS, exact_challenger, new_workspace, note_sampled,
                         refill_normals)

__all__ = ["TTTS", "ttts_levels_run", "CHALLENGERS"]

#: Codes of the challenger rules in the kernels.
CHALLENGERS = {"exact": 0, "resample": 1, "released": 2}

_NEG_INF = -np.inf


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
def ttts_levels_run(state: np.ndarray, mu: np.ndarray, sigma: np.ndarray,
                    prior_mean: np.ndarray, prior_std: np.ndarray, deltas: np.ndarray,
                    delta0s: np.ndarray, log_consts: np.ndarray, rule: int,
                    beta: float, max_samples: int, challenger: int,
                    out_tau: np.ndarray, out_rec: np.ndarray, out_code: np.ndarray,
                    cancel: np.ndarray) -> tuple[int, int, bool, int]:
    """One run of Top-Two Thompson Sampling (Russo, 2016) with leader probability ``beta``,
    scored at every confidence level of ``deltas``.

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
    * ``k > 2``, ``challenger = 0`` (``"exact"``): Russo's challenger, the argmax
      of a posterior draw given that it differs from the leader, sampled exactly
      at bounded cost: one plain posterior draw is tried while the last computed
      bound ``Σ_j p_j`` on the probability that a draw's argmax differs from the
      leader is above 1/4, then
      :func:`~bai_lib.algorithms.challenger.exact_challenger`. Trying a plain draw
      first keeps the law exact (an accepted draw has the target law, and the
      choice to try depends only on past steps).
    * ``k > 2``, ``challenger = 2`` (``"released"``): the challenger is the argmax,
      over the arms other than the leader, of one fresh posterior draw (the
      rule of the authors' released code, which masks the leader out of the
      new draw).  It differs in law from re-drawing until the argmax
      changes: it never needs more than one draw, but it favours arms that
      are merely second in the posterior over arms likely to beat the leader.
    * ``k > 2``, ``challenger = 1`` (``"resample"``, Russo's rule capped): at most
      :data:`~bai_lib.algorithms.challenger.TTTS_MAX_RESAMPLE` re-draws are tried; if
      none gives a different argmax (the leader's posterior probability of
      being best is then above ``1 - 1/100`` or so) the challenger is the arm
      most likely to beat the leader under the posterior,
      ``argmin_{j != B} (m_B - m_j) / sqrt(s_B^2 + s_j^2)`` (posterior means
      ``m``, standard deviations ``s``).  Plain re-drawing would need on the
      order of ``t / delta`` draws per step near the stopping time.

    Stopping rule (paper, Appendix "Experimental details"): Chernoff's GLR
    rule with threshold ``β(t, δ) = log(C t^α / δ)`` with
    ``C = 1`` and ``α = 1`` (``rule = 0``; see :func:`~bai_lib.stopping.glr_beta` for the
    others): stop at the first ``t`` (total number of
    samples, ``t >= k``) with
    ``max_a min_{b != a} Z_ab(t) >= β(t, δ)`` (:func:`~bai_lib.kernels.glr_passes`), where for
    Gaussians
    ``Z_ab = (mu_hat_a - mu_hat_b)^2 / (2 (sigma_a^2/N_a + sigma_b^2/N_b))``
    if ``mu_hat_a > mu_hat_b`` and 0 otherwise; the maximum over ``a`` is
    attained at the empirical best arm, which is recommended.
    ``β(t, δ)`` is increasing in ``t``, so the kernel compares with
    ``β(t_0, δ)`` for the last refresh time ``t_0 <= t`` and computes
    the exact threshold only when that lower bound is reached.

    The posterior is the exact conjugate one above; the authors' released
    code weights prior and data with swapped variances (correct only when
    ``sigma_i = xi_i``), which is not reproduced.

    The sampling rule does not depend on ``δ``, so one trajectory serves every level: the run
    goes on until the test passes at the smallest ``δ`` (or ``max_samples``), and records at
    each level the first time its test passed, with the empirical best arm then
    (:func:`bai_lib.kernels.record_level`). Each level's record is exactly the run at that
    ``δ`` alone.

    Parameters
    ----------
    state, mu, sigma, max_samples
        As for :func:`~bai_lib.algorithms.elimination.elimination_run`.
    deltas : float64[m]
        Confidence levels, decreasing.
    out_tau, out_rec, out_code : int64[m]
        Filled with each level's stopping time, recommendation and stop code
        (:data:`~bai_lib.kernels.STOP_GLR`, or :data:`~bai_lib.kernels.STOP_CENSORED` /
        :data:`~bai_lib.kernels.STOP_INTERRUPTED` for levels not
        reached).
    prior_mean, prior_std : float64[k]
        Prior ``N(m_i, xi_i^2)`` of each arm (posterior of the sampling rule).
    delta0s, log_consts : float64[m] or empty
        The indifference stop of each level (empty: none), as in
        :func:`~bai_lib.algorithms.top_two.ttucb_levels_run`.
    rule : int
        GLR threshold code (:data:`~bai_lib.stopping.GLR_THRESHOLDS`).
    beta : float
        Probability of sampling the leader, in ``(0, 1)``.
    challenger : int
        Challenger rule for ``k > 2``, a code of :data:`CHALLENGERS` (see above).

    Returns
    -------
    tau, recommendation, censored, stop_reason
        Of the last level.
    """
    if delta0s.size > 0:
        return _ttts_levels(state, mu, sigma, prior_mean, prior_std, deltas, delta0s, log_consts,
                            rule, beta, max_samples, challenger, True, out_tau, out_rec, out_code,
                            cancel)
    return _ttts_levels(state, mu, sigma, prior_mean, prior_std, deltas, delta0s, log_consts, rule,
                        beta, max_samples, challenger, False, out_tau, out_rec, out_code, cancel)


# The body of ttts_levels_run, compiled for the indifference stop on and off (constants).
@njit(cache=True, nogil=True)
def _ttts_levels(state, mu, sigma, prior_mean, prior_std, deltas, delta0s, log_consts, rule, beta,
                 max_samples, challenger, indifference, out_tau, out_rec, out_code, cancel):
    k = mu.size
    S = np.zeros(k)
    N = np.zeros(k, dtype=np.int64)
    mh = np.empty(k)
    v = np.empty(k)
    sig2 = sigma * sigma
    p = 0  # the next level to reach
    m = deltas.size
    prior_prec = 1.0 / (prior_std * prior_std)
    prior_num = prior_mean * prior_prec
    pmean = np.empty(k)
    psd = np.empty(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    exact = k > 2 and challenger == 0
    zb, meta, pw, zs, cum, dirty = new_workspace(k, exact)
    try_plain = True
    pos = first_round(state, mu, sigma, sig2, buf, S, N, mh, v)
    for i in range(k):
        prec = prior_prec[i] + 1.0 / sig2[i]
        pmean[i] = (prior_num[i] + S[i] / sig2[i]) / prec
        psd[i] = 1.0 / math.sqrt(prec)
    wd = np.empty(k)  # the Conf widths of the indifference stop, at the current level
    n0, t_force = np.int64(NEVER), np.int64(NEVER)  # forced exploration (forcing_start)
    if indifference:
        conf_widths(wd, sigma, N, log_consts[0])
        n0, t_force = forcing_start(sigma, log_consts[0], delta0s[0])
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
            thr_lo, t_next = glr_refresh(t, deltas[p], rule)
        if k == 2:
            # glr_check written out: with two arms and a fair coin a step costs a few
            # nanoseconds, and the call would cost more than the rest of the step.
            best = 0 if mh[0] >= mh[1] else 1
            d = mh[0] - mh[1]
            stop = (d * d >= 2.0 * thr_lo * (v[0] + v[1])
                    and d * d >= 2.0 * glr_beta(t, deltas[p], rule) * (v[0] + v[1]))
        else:
            best, stop = glr_check(mh, v, t, deltas[p], rule, thr_lo)
        if indifference and (stop or indifferent(mh, wd, best, delta0s[p])):
            p, code = record_glr_stops(p, t, best, STOP_GLR if stop else STOP_INDIFFERENCE, mh, v,
                                       N, wd, sigma, deltas, delta0s, log_consts, rule, False,
                                       out_tau, out_rec, out_code)
            if p == m:
                return t, np.int64(best), False, code
            thr_lo, t_next = glr_refresh(t, deltas[p], rule)
            n0, t_force = forcing_start(sigma, log_consts[p], delta0s[p])
        elif stop:
            p = record_glr_levels(p, t, best, mh, v, deltas, rule, out_tau, out_rec, out_code)
            if p == m:
                return t, np.int64(best), False, STOP_GLR
            thr_lo, t_next = glr_refresh(t, deltas[p], rule)
        if t + 1 > max_samples:
            record_rest(p, t, best, STOP_CENSORED, out_tau, out_rec, out_code)
            return t, np.int64(best), True, STOP_CENSORED
        if k > 2 and cancel[0]:
            # a step draws the posterior several times (k normals each; the "resample" rule up
            # to TTTS_MAX_RESAMPLE + 1): with many arms, NORMAL_BUFFER steps between refills
            # would take seconds to minutes
            record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
            return t, np.int64(-1), True, STOP_INTERRUPTED
        # the coin written out: as a function returning (coin, bits, nbits) it halved the
        # throughput of the fair two-arm case
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
        elif exact:
            if meta[Z_POS] + 2 * k > zb.size:
                refill_normals(state, zb, meta, 2 * k)
            zp = meta[Z_POS]
            leader = 0
            top = _NEG_INF
            for i in range(k):  # the leader: argmax of a posterior draw
                x = pmean[i] + psd[i] * zb[zp + i]
                if x > top:
                    top = x
                    leader = i
            zp += k
            arm = leader
            if not coin and try_plain:  # one plain draw: its argmax, if it is not the leader
                top = _NEG_INF
                for i in range(k):
                    x = pmean[i] + psd[i] * zb[zp + i]
                    if x > top:
                        top = x
                        arm = i
                zp += k
            meta[Z_POS] = zp
            if not coin:
                if arm == leader:
                    arm, weight = exact_challenger(state, pmean, psd, leader, zb, meta, pw, zs,
                                                   cum, dirty)
                    try_plain = weight > 0.25
        else:
            leader = _posterior_draw_argmax(state, pmean, psd)
            if coin:
                arm = leader
            elif challenger == 2:
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
        if indifference and t >= t_force:
            arm = forced_arm(N, n0, arm)
        if pos == buf.size:
            if not refill(state, buf, cancel):
                record_rest(p, t, -1, STOP_INTERRUPTED, out_tau, out_rec, out_code)
                return t, np.int64(-1), True, STOP_INTERRUPTED
            pos = 0
        x = mu[arm] + sigma[arm] * buf[pos]
        pos += 1
        observe(arm, x, S, N, mh, v, inv_next, sig2)
        if indifference:
            wd[arm] = sigma[arm] * conf_factor(float(N[arm]), log_consts[p])
        if k > 2 or not fair:
            prec = prior_prec[arm] + N[arm] / sig2[arm]
            pmean[arm] = (prior_num[arm] + S[arm] / sig2[arm]) / prec
            psd[arm] = 1.0 / math.sqrt(prec)
            note_sampled(arm, dirty, meta)  # the exact challenger's cached weights
        t += 1


@dataclass(frozen=True)
class TTTS(IndifferenceZone, Algorithm):
    """Top-Two Thompson Sampling (Russo, 2016) with Chernoff's stopping rule.

    On Bernoulli arms (a :class:`~bai_lib.BetaPrior`, or ``rewards="bernoulli"``) the posterior
    is the conjugate Beta one and the stop uses the Bernoulli GLR statistic
    (:func:`~bai_lib.algorithms.ttts_bernoulli.ttts_levels_run_bernoulli`); on more than two arms
    the
    challenger is then ``"resample"`` or ``"released"``.

    Parameters
    ----------
    challenger : {"exact", "resample", "released"}
        For ``k > 2``. ``"exact"`` (default): Russo's rule, the argmax of a posterior draw given
        that it differs from the leader, sampled exactly at a cost that does not grow as the
        posterior concentrates (:func:`~bai_lib.algorithms.challenger.exact_challenger`).
        ``"resample"``: the same rule by re-drawing the posterior, at most
        :data:`~bai_lib.algorithms.challenger.TTTS_MAX_RESAMPLE` times, then the arm most likely to
        beat the leader (:func:`~bai_lib.algorithms.ttts.ttts_levels_run`); it differs from
        ``"exact"`` only at steps where a hundred draws all fail, and costs up to a hundred
        draws a step. ``"released"``: the argmax over the other arms of one fresh draw (the
        authors' released code). All three are equal in law for ``k = 2``. With many arms the
        released rule almost always picks the runner-up, so arms far below it are starved and
        the GLR test, which needs every arm, waits for them: on ten arms with means evenly
        spaced from 1 to 0 (``δ = 0.01``) no run stopped within ``10^6`` samples, against about
        ``10^4`` with Russo's rule.
    beta : float
        Probability of sampling the leader, in ``(0, 1)``; 1/2 in the paper.
    threshold : {"chernoff", "gk2016", "kk2021", "union"}
        GLR threshold ``β(t, δ)``: ``log(t/δ)`` as in the paper's appendix (default),
        ``log((log t + 1)/δ)``, or one of the two proven ``δ``-correct
        (:data:`bai_lib.stopping.GLR_THRESHOLDS`, :func:`bai_lib.stopping.proven_glr_beta`).
    indifference, delta0, delta0_factor, indifference_glr
        Algorithm 1's indifference stop, as for :class:`~bai_lib.algorithms.TTUCB`.
    """

    challenger: str = "exact"
    beta: float = 0.5
    threshold: str = "chernoff"
    indifference: bool = False
    delta0: Optional[float] = None
    delta0_factor: Optional[float] = None
    indifference_glr: str = "proven"

    name: ClassVar[str] = "ttts"
    short_label: ClassVar[str] = "TTTS"
    color: ClassVar[str] = "#d1495b"
    needs_prior: ClassVar[bool] = True
    reward_models: ClassVar[tuple] = ("gaussian", "bernoulli")

    def __post_init__(self):
        V.choice(self.challenger, tuple(CHALLENGERS), "challenger")
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        V.choice(self.threshold, GLR_THRESHOLDS, "threshold")
        self._check_indifference()

    def default_max_samples(self, k: int) -> int:
        """``10**9``, and ``10**7`` for ``k > 2`` with the ``"resample"`` or ``"released"``
        challenger: these draw the posterior up to a hundred times a step, about ``10^5`` to
        ``10^6`` samples a second, so a run censored at ``10**9`` would take 16 to 70 minutes."""
        return 10**7 if k > 2 and self.challenger != "exact" else 10**9

    def _bind(self, prior, noise_stds, deltas, max_samples, bernoulli) -> Bound:
        """For Bernoulli rewards (``prior`` a :class:`~bai_lib.BetaPrior`), the conjugate Beta
        posterior and the Bernoulli GLR statistic
        (:func:`~bai_lib.algorithms.ttts_bernoulli.ttts_levels_run_bernoulli`); the exact
        challenger samples
        Gaussian posteriors, so with ``k > 2`` arms the challenger is ``"resample"`` or
        ``"released"``."""
        sig = noise_stds
        name = self.glr_rule("bernoulli" if bernoulli else "gaussian") or self.threshold
        levels, d0s, logcs = self._indifference_levels(prior, deltas, sig.size, name)
        rule, challenger, beta = GLR_THRESHOLDS[name], CHALLENGERS[self.challenger], self.beta
        default = max_samples
        d0 = tuple(d0s.tolist()) if d0s.size else (None,) * levels.size
        floor = d0s.min() if d0s.size else 1e-12
        if bernoulli:
            from .ttts_bernoulli import ttts_levels_run_bernoulli  # imports this module

            if self.challenger == "exact" and sig.size > 2:
                raise ValueError("challenger='exact' samples Gaussian posteriors; with Bernoulli "
                                 "rewards on k > 2 arms use challenger='resample' or 'released'")
            a = np.array(prior.a, dtype=np.float64)
            b = np.array(prior.b, dtype=np.float64)

            def run_bernoulli(state, mu, out_tau, out_rec, out_code, cancel=None,
                              max_samples=default):
                ttts_levels_run_bernoulli(state, mu, sig, a, b, levels, d0s, logcs, rule, beta,
                                          max_samples, challenger, out_tau, out_rec, out_code,
                                          cancel_flag(cancel))

            return Bound(run_bernoulli, d0, lambda means: gap_cost(means, sig, floor))
        pm = np.array(prior.means, dtype=np.float64)
        ps = np.array(prior.stds, dtype=np.float64)

        def run(state, mu, out_tau, out_rec, out_code, cancel=None, max_samples=default):
            ttts_levels_run(state, mu, sig, pm, ps, levels, d0s, logcs, rule, beta, max_samples,
                            challenger, out_tau, out_rec, out_code, cancel_flag(cancel))

        return Bound(run, d0, lambda means: gap_cost(means, sig, floor))
