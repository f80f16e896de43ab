"""Top-Two Thompson Sampling (Russo, 2016) with a GLR stopping rule, for any ``β``.

The leader is the argmax of a posterior draw; with probability ``1 - β`` a challenger is sampled
instead (:class:`~bai_lib.algorithms.ttts.TTTSSteps`), and the run stops with the GLR test of
the loop :func:`bai_lib.algorithms.glr.glr_run` at the threshold
:func:`bai_lib.stopping.glr_beta` (the paper's appendix: Chernoff's rule, ``β(t, δ) = log(t/δ)``).
Bernoulli and Poisson arms run with the conjugate Beta or Gamma posterior
(:class:`~bai_lib.algorithms.ttts_conjugate.TTTSConjugateSteps`). The deterministic top-two rules,
TTUCB and EB-TC, are in :mod:`bai_lib.algorithms.top_two`.

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
from typing import ClassVar, NamedTuple, Optional

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import std_normal
from ..stopping import GLR_THRESHOLDS
from .base import Algorithm, Binding, one_level
from .challenger import (PLAIN_DRAW_WEIGHT, TTTS_MAX_RESAMPLE, Z_POS, exact_challenger,
                         leader_coin, new_workspace, note_sampled, refill_normals)
from .glr import GLRThreshold, bind_glr, register
from .indifference import IndifferenceZone
from ..families import reward_model
from .skip_ahead import DEFAULT_TOLERANCE, checked_tolerance
from .ttts_blocks import ttts_blocks_run
from .ttts_conjugate import TTTSConjugateSteps

__all__ = ["TTTS", "TTTSSteps", "CHALLENGERS"]

#: Codes of the challenger rules in the kernels. On Gaussian arms ``"normal"`` is ``"exact"`` (the
#: posterior is normal); on Bernoulli and Poisson arms code 0 is the normal approximation
#: (:class:`~bai_lib.algorithms.ttts_conjugate.TTTSConjugateSteps`) and ``"exact"`` is refused.
CHALLENGERS = {"exact": 0, "normal": 0, "resample": 1, "released": 2}

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


class TTTSSteps(NamedTuple):
    """The sampling rule of Top-Two Thompson Sampling (Russo, 2016) on Gaussian arms,
    for :func:`bai_lib.algorithms.glr.glr_run` (Section 6 of the paper).

    The posterior of arm ``i`` under the prior ``N(m_i, ξ_i²)`` and known noise ``σ_i`` is Gaussian
    with precision ``1/ξ_i² + N_i/σ_i²`` and mean ``(m_i/ξ_i² + S_i/σ_i²) / precision`` (the exact
    conjugate one; the authors' released code weights prior and data with swapped variances,
    correct only when ``σ_i = ξ_i``, which is not reproduced). At every step ``θ`` is drawn from
    the posterior and the leader is ``argmax θ``; with probability ``β`` the leader is sampled,
    otherwise a challenger (:func:`~bai_lib.algorithms.challenger.leader_coin`: one bit of a 64-bit
    draw for ``β = 1/2``, else ``uniform < β``).

    * ``k = 2`` and ``β = 1/2``: the challenger is the other arm, so the sampled arm is
      ``leader XOR coin`` with an independent fair coin; whatever the law of the leader, this arm is
      uniform on ``{0, 1}`` and independent of the past. The rule therefore samples a uniformly
      random arm, the same algorithm in distribution without drawing ``θ``. For other ``β`` the
      leader is drawn.
    * ``k > 2``, ``challenger = 0`` (``"exact"``): Russo's challenger, the argmax of a posterior
      draw given that it differs from the leader, sampled exactly at bounded cost: one plain
      posterior draw is tried while the last computed bound ``Σ_j p_j`` on the probability that a
      draw's argmax differs from the leader is above
      :data:`~bai_lib.algorithms.challenger.PLAIN_DRAW_WEIGHT`, then
      :func:`~bai_lib.algorithms.challenger.exact_challenger`. Trying a plain draw first keeps the
      law exact (an accepted draw has the target law, and the choice to try depends only on past
      steps).
    * ``k > 2``, ``challenger = 2`` (``"released"``): the argmax, over the arms other than the
      leader, of one fresh posterior draw (the rule of the authors' released code). It differs in
      law from re-drawing until the argmax changes: it never needs more than one draw, but it
      favours arms that are merely second in the posterior over arms likely to beat the leader.
    * ``k > 2``, ``challenger = 1`` (``"resample"``, Russo's rule capped): at most
      :data:`~bai_lib.algorithms.challenger.TTTS_MAX_RESAMPLE` re-draws are tried; if none gives a
      different argmax (the leader's posterior probability of being best is then above
      ``1 - 1/100`` or so) the challenger is the arm most likely to beat the leader under the
      posterior, ``argmin_{j≠B} (m_B − m_j) / sqrt(s_B² + s_j²)`` (posterior means ``m``,
      standard deviations ``s``). Plain re-drawing would need on the order of ``t / δ`` draws per
      step near the stopping time.

    Attributes
    ----------
    beta : float
        Probability of sampling the leader, in ``(0, 1)``.
    challenger : int
        Challenger rule for ``k > 2``, a code of :data:`CHALLENGERS`.

    Its arrays (the ``data`` of :func:`~bai_lib.algorithms.glr.glr_run`) are ``(prior_mean,
    prior_std)``, the prior ``N(m_i, ξ_i²)`` of each arm.
    """

    beta: float
    challenger: int


@njit(cache=True, nogil=True)
def _start(steps, data, mh, var):
    k = mh.size
    sig2 = var
    prior_mean, prior_std = data
    prior = np.empty((2, k))  # the prior's precisions and precision-weighted means
    prior[0] = 1.0 / (prior_std * prior_std)
    prior[1] = prior_mean * prior[0]
    post = np.empty((2, k))  # the posterior means and standard deviations
    for i in range(k):
        prec = prior[0, i] + 1.0 / sig2[i]
        post[0, i] = (prior[1, i] + mh[i] / sig2[i]) / prec
        post[1, i] = 1.0 / math.sqrt(prec)
    zb, meta, work, dirty = new_workspace(k, k > 2 and steps.challenger == 0)
    # carried: the leader coin's unused bits and their number (leader_coin), and whether to try
    # one plain draw before exact_challenger
    return (post, prior, zb, meta, work, dirty), (np.uint64(0), np.int64(0), True)


@njit(cache=True, nogil=True)
def _choose(steps, post, prior, zb, meta, work, dirty, carry, fam, t, best, mh, v, N, S, sigma,
            var, state):
    bits, nbits, try_plain = carry
    k = mh.size
    coin, bits, nbits = leader_coin(state, steps.beta, bits, nbits)
    if k == 2 and steps.beta == 0.5:  # a uniformly random arm: the posterior is not read
        return (1 if coin else 0), (bits, nbits, try_plain)
    pmean, psd = post[0], post[1]
    if k == 2:
        leader = _posterior_draw_argmax(state, pmean, psd)
        arm = leader if coin else 1 - leader
    elif steps.challenger == 0:
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
        if not coin and arm == leader:
            arm, weight = exact_challenger(state, pmean, psd, leader, zb, meta, work[0], work[1],
                                           work[2], dirty)
            try_plain = weight > PLAIN_DRAW_WEIGHT
    else:
        leader = _posterior_draw_argmax(state, pmean, psd)
        if coin:
            arm = leader
        elif steps.challenger == 2:
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
    return arm, (bits, nbits, try_plain)


@njit(cache=True, nogil=True)
def _update(steps, post, prior, zb, meta, work, dirty, carry, arm, x, N, S, var):
    if N.size > 2 or steps.beta != 0.5:  # the fair two-arm rule never reads the posterior
        prec = prior[0, arm] + N[arm] / var[arm]
        post[0, arm] = (prior[1, arm] + S[arm] / var[arm]) / prec
        post[1, arm] = 1.0 / math.sqrt(prec)
        note_sampled(arm, dirty, meta)  # the exact challenger's cached weights
    return carry


register(TTTSSteps, _start, _choose, _update)


@dataclass(frozen=True)
class TTTS(IndifferenceZone, Algorithm):
    """Top-Two Thompson Sampling (Russo, 2016) with Chernoff's stopping rule.

    On Bernoulli arms (a :class:`~bai_lib.BetaPrior`) and Poisson arms (a
    :class:`~bai_lib.GammaPrior`) the posterior is the conjugate Beta or Gamma one and the stop
    uses the family's GLR statistic
    (:class:`~bai_lib.algorithms.ttts_conjugate.TTTSConjugateSteps`); on more than two arms their
    challenger is by default Russo's under the normal approximation of the posterior.

    Parameters
    ----------
    challenger : {None, "exact", "normal", "resample", "released"}
        For ``k > 2``. ``None`` (default): ``"exact"`` on Gaussian arms, ``"normal"`` on
        Bernoulli and Poisson arms. ``"exact"``: Russo's rule, the argmax of a posterior draw
        given that it differs from the leader, sampled exactly at a cost that does not grow as
        the posterior concentrates (:func:`~bai_lib.algorithms.challenger.exact_challenger`);
        Gaussian posteriors only. ``"normal"``: on Gaussian arms the same as ``"exact"``; on
        Bernoulli and Poisson arms one plain draw of the Beta or Gamma posterior, then, if its
        argmax is the leader, Russo's challenger under a normal approximation of the posterior
        (:func:`~bai_lib.families.family.posterior_normal`: the Beta posterior's mean and
        variance, the Gamma posterior's cube root), at the exact rule's cost: an approximation
        of Russo's rule that does not touch the stopping rule or its guarantee
        (:class:`~bai_lib.algorithms.ttts_conjugate.TTTSConjugateSteps`).
        ``"resample"``: the same rule by re-drawing the posterior, at most
        :data:`~bai_lib.algorithms.challenger.TTTS_MAX_RESAMPLE` times, then the arm most likely to
        beat the leader (:class:`~bai_lib.algorithms.ttts.TTTSSteps`); it differs from
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
        (:data:`bai_lib.stopping.GLR_THRESHOLDS`, :func:`bai_lib.stopping.glr_beta`).
    indifference, delta0, delta0_factor, indifference_glr
        Algorithm 1's indifference stop, as for :class:`~bai_lib.algorithms.TTUCB`.
    method : {"samples", "blocks"}
        How runs are simulated: one reward at a time (:func:`~bai_lib.algorithms.glr.glr_run`,
        the default and the reference), or in law by blocks of samples
        (:func:`~bai_lib.algorithms.ttts_blocks.ttts_blocks_run`: two Gaussian arms,
        ``beta = 1/2`` and no indifference stop only, where the sampled arm is a fair coin; the
        cost of a run grows like the logarithm of its length, plus one word per 64 samples for
        its coins). It pays on long runs, the heavy tail of a prior's runs and runs censored at
        ``10⁹`` samples; a run of a few thousand samples costs about as much as sample by
        sample. Runs by blocks check the stop at every time, so they take no batched looks, and
        several levels are simulated one by one.
    tolerance : float
        With ``method="blocks"``, the bound on the total variation distance between the law of
        a run's result and the per-sample law (default ``1e-12``).
    """

    challenger: Optional[str] = None
    beta: float = 0.5
    threshold: str = "chernoff"
    indifference: bool = False
    delta0: Optional[float] = None
    delta0_factor: Optional[float] = None
    indifference_glr: str = "proven"
    method: str = "samples"
    tolerance: float = DEFAULT_TOLERANCE

    name: ClassVar[str] = "ttts"
    short_label: ClassVar[str] = "TTTS"
    color: ClassVar[str] = "#d1495b"
    needs_prior: ClassVar[bool] = True

    def __post_init__(self):
        if self.challenger is not None:
            V.choice(self.challenger, tuple(CHALLENGERS), "challenger")
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        V.choice(self.threshold, GLR_THRESHOLDS, "threshold")
        self._check_indifference()
        object.__setattr__(self, "tolerance", checked_tolerance(self.method, self.tolerance))
        if self.method == "blocks" and (self.beta != 0.5 or self.indifference):
            raise ValueError(f"method='blocks' simulates TTTS with beta = 0.5 and no "
                             f"indifference stop, got beta={self.beta!r}, "
                             f"indifference={self.indifference!r}")

    @property
    def one_trajectory(self) -> bool:
        """As for the other GLR algorithms, and false by blocks, which simulate one level."""
        return IndifferenceZone.one_trajectory.fget(self) and self.method == "samples"

    def simulates_in_law(self) -> bool:
        return self.method == "blocks"

    def default_max_samples(self, k: int) -> int:
        """``10**9``, and ``10**7`` for ``k > 2`` with the ``"resample"`` or ``"released"``
        challenger: these draw the posterior up to a hundred times a step, about ``10^5`` to
        ``10^6`` samples a second, so a run censored at ``10**9`` would take 16 to 70 minutes."""
        return 10**7 if k > 2 and self.challenger in ("resample", "released") else 10**9

    def glr_threshold(self, rewards: str) -> Optional[str]:
        """The proven threshold under the indifference stop, else its own ``threshold``."""
        return self.glr_rule(rewards) or self.threshold

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        """For Bernoulli and Poisson rewards (``prior`` a :class:`~bai_lib.BetaPrior` or a
        :class:`~bai_lib.GammaPrior`), the conjugate posterior and the family's GLR statistic
        (:class:`~bai_lib.algorithms.ttts_conjugate.TTTSConjugateSteps`); the exact
        challenger samples Gaussian posteriors, so with ``k > 2`` arms the challenger is
        ``"normal"`` (the default), ``"resample"`` or ``"released"``."""
        sig = noise_stds
        name = self.glr_rule(rewards) or self.threshold
        levels, d0s, logcs = self._indifference_levels(prior, deltas, sig.size, name)
        th = GLRThreshold(GLR_THRESHOLDS[name], 1.0, 0.0)
        beta = float(self.beta)
        challenger = CHALLENGERS[self.challenger or "exact"]
        if rewards != "gaussian":
            if not reward_model(rewards).has_conjugate:
                raise ValueError(f"rewards={rewards!r}: TTTS samples a conjugate posterior, "
                                 f"and that family has none")
            if self.challenger == "exact" and sig.size > 2:
                raise ValueError(f"challenger='exact' samples Gaussian posteriors; with "
                                 f"rewards={rewards!r} on k > 2 arms use challenger='normal' "
                                 f"(the default), 'resample' or 'released'")
            steps = TTTSConjugateSteps(beta, challenger, reward_model(rewards).bundle())
            data = (np.array(prior.a, dtype=np.float64), np.array(prior.b, dtype=np.float64))
        else:
            steps = TTTSSteps(beta, challenger)
            data = (np.array(prior.means, dtype=np.float64),
                    np.array(prior.stds, dtype=np.float64))
        bound = bind_glr(steps, data, rewards, sig, th, levels, d0s, logcs, max_samples)
        if self.method == "samples":
            return bound
        if rewards != "gaussian":
            raise ValueError(f"rewards={rewards!r}: method='blocks' simulates Gaussian rewards "
                             f"only")
        if sig.size != 2:
            raise ValueError(f"noise_stds: method='blocks' simulates two arms, got {sig.size}")
        sigma = np.ascontiguousarray(sig, dtype=np.float64)
        var, level, tol = sigma**2, float(levels[0]), self.tolerance

        def call(state, mu, max_samples, cancel):
            return ttts_blocks_run(state, mu, sigma, var, th, level, max_samples, tol, cancel)

        return one_level(call, None, bound.cost_keys, max_samples, bound.ask_tell)
