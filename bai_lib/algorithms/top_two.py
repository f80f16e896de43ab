"""Top-two algorithms with a GLR stopping rule and deterministic leaders: TTUCB and EB-TC.

Both sample a *leader* with proportion ``β`` and otherwise a *challenger*
(:class:`~bai_lib.algorithms.top_two.TopTwoSteps`), and stop with the GLR test of the reward
family in the loop :func:`bai_lib.algorithms.glr.glr_run`; they differ in how the leader is
chosen and in the threshold. TTTS, whose leader and challenger are posterior draws, is in
:mod:`bai_lib.algorithms.ttts`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, Optional

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from .. import _validate as V
from ..families import family as F
from ..stopping import (GLR_THRESHOLDS, PROVEN_GLR_THRESHOLDS, TTUCB_LOG_TERMS, TTUCB_THRESHOLDS,
                        threshold, ttucb_two_cg)
from .base import Algorithm, Binding
from .glr import GLRThreshold, bind_glr, register
from .indifference import IndifferenceZone

__all__ = ["TTUCB", "EBTC", "TopTwoSteps",
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
_NONE = np.empty(0)  # an unused state slot


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


class TopTwoSteps(NamedTuple):
    """The sampling rule of TTUCB (Jourdan & Degenne, 2022, "Non-asymptotic analysis of a
    UCB-based top two algorithm") and EB-TC, for :func:`bai_lib.algorithms.glr.glr_run`.

    With ``v_i = var_i / N_i`` (``var`` the statistic variances: ``σ_i²``, or 1 for the released
    code, which ignores the noise level), at time ``t``:

    * leader ``B = argmax_i μ̂_i + sqrt(ucb_coef · log(t + ucb_shift) · v_i)`` (``ucb_coef = 4``,
      ``ucb_shift = 1`` in the released code; :data:`TTUCB_UCB_COEF` ``= 2α(1 + s)`` and
      ``ucb_shift = 0`` for the exploration function ``g_u(t) = 2α(1 + s) log t`` of Jourdan &
      Degenne; ``ucb_coef = 0`` for EB-TC's empirical-best leader);
    * challenger ``C = argmin_{j≠B}`` of the family's transportation cost
      (:func:`bai_lib.families.family.challenger_cost`: for Gaussian arms
      ``(μ̂_B − μ̂_j)_+² / (v_B + v_j)``, for Bernoulli arms the GLR statistic ``Z_{B,j}``), or its
      signed form for ``released`` (the released code's ``np.max(x, 0)`` returns ``x``), ties to the
      lowest index;
    * tracking with ``beta``: ``L_B`` counts the steps at which ``B`` was the leader and ``N^B_B``
      the samples of ``B`` taken while it was the leader; sample ``B`` if ``N^B_B <= β L_B``, else
      ``C``. Jourdan & Degenne count the current step in ``L_B``; the released code does not, and it
      also books the ``k`` initial samples under the leader of the moment (``released``).

    The bonus is linear in ``s = sqrt(ucb_coef log(t + ucb_shift))``, so if the argmax is the same
    at the two ends ``s_lo, s_hi`` of a block of times it is the same for every ``t`` in the block
    and no logarithm is needed. On Bernoulli arms the bonus keeps its sub-Gaussian form with ``var``
    (``σ_i² = 1/4`` for rewards in ``[0, 1]``).

    Attributes
    ----------
    beta : float
        Tracking proportion (1/2 in the paper's experiments).
    ucb_coef, ucb_shift : float
        The UCB bonus ``sqrt(ucb_coef · log(t + ucb_shift) · v_i)``.
    released : bool
        Tracking count, initial bookkeeping and challenger as in the released code.
    """

    beta: float
    ucb_coef: float
    ucb_shift: float
    released: bool


@njit(cache=True, nogil=True)
def _bonus_scale(steps, t):
    return math.sqrt(steps.ucb_coef * math.log(float(t) + steps.ucb_shift))


@njit(cache=True, nogil=True)
def _start(steps, data, mh, var):
    k = mh.size
    lead_count = np.zeros(k, dtype=np.int64)
    lead_pulls = np.zeros((k, k), dtype=np.int64)
    b = np.empty(k)
    b_next = np.empty(k)  # the bonus scale one pull ahead, off the critical path
    for i in range(k):
        if steps.released:
            # Leader of the moment before the i-th initial sample: arms not yet sampled count
            # with mean 0 and bonus scale sqrt(var).
            lead = 0
            if i > 0:
                s0 = math.sqrt(steps.ucb_coef * math.log(i + steps.ucb_shift))
                best_val = _NEG_INF
                for j in range(k):
                    val = (mh[j] if j < i else 0.0) + s0 * math.sqrt(var[j])
                    if val > best_val:
                        best_val = val
                        lead = j
            lead_count[lead] += 1
            lead_pulls[lead, i] += 1
        b[i] = math.sqrt(var[i])
        b_next[i] = math.sqrt(var[i] * 0.5)
    # carried: the bonus scales at the two ends of the block of times, the leader of the step
    return (lead_count, lead_pulls, b, b_next, _NONE, _NONE), (0.0, 0.0, np.int64(0))


@njit(cache=True, nogil=True)
def _refresh(steps, lead_count, lead_pulls, b, b_next, _4, _5, carry, t, t_next):
    return _bonus_scale(steps, t), _bonus_scale(steps, t_next), carry[2]


@njit(cache=True, nogil=True)
def _choose(steps, lead_count, lead_pulls, b, b_next, _4, _5, carry, fam, t, best, mh, v, N, S,
            sigma, var, state):
    s_lo, s_hi, _ = carry
    k = mh.size
    if k == 2:
        d = mh[1] - mh[0]
        e = b[0] - b[1]
        lead = 1 if d > s_lo * e else 0
        if (1 if d > s_hi * e else 0) != lead:
            lead = 1 if d > _bonus_scale(steps, t) * e else 0
        chal = 1 - lead
    else:
        lead = _ucb_leader(mh, b, s_lo)
        if _ucb_leader(mh, b, s_hi) != lead:
            lead = _ucb_leader(mh, b, _bonus_scale(steps, t))
        chal = -1
        best_cost = np.inf
        for j in range(k):
            if j != lead:
                cost = F.challenger_cost(fam, mh, v, N, lead, j, steps.released)
                if cost < best_cost:
                    best_cost = cost
                    chal = j
    if steps.released:
        take_leader = lead_pulls[lead, lead] <= steps.beta * lead_count[lead]
        lead_count[lead] += 1
    else:
        lead_count[lead] += 1
        take_leader = lead_pulls[lead, lead] <= steps.beta * lead_count[lead]
    arm = lead if take_leader else chal
    return arm, (s_lo, s_hi, np.int64(lead))


@njit(cache=True, nogil=True)
def _update(steps, lead_count, lead_pulls, b, b_next, _4, _5, carry, arm, x, N, S, var):
    lead_pulls[carry[2], arm] += 1
    b[arm] = b_next[arm]
    b_next[arm] = math.sqrt(var[arm] * (1.0 / (N[arm] + 1)))
    return carry


register(TopTwoSteps, _start, _choose, _update, _refresh)


def _ttucb_bound(spec, prior, noise_stds, deltas, c_scale, log_shift, coef, shift, released,
                 var, max_samples, rewards) -> Binding:
    """The TTUCB loop bound to its constants, scored at every level of ``deltas``, with the
    indifference stop of ``spec`` if it has one."""
    k = noise_stds.size
    proven = spec.glr_rule(rewards)
    levels, delta0s, log_consts = spec._indifference_levels(prior, deltas, k, proven)
    if proven:  # the proven threshold replaces c(t, δ)
        th = GLRThreshold(GLR_THRESHOLDS[proven], 1.0, 0.0)
    else:
        th = GLRThreshold(-1, float(c_scale), float(log_shift))
        levels = np.array([ttucb_two_cg(k, d, spec.cg) for d in levels])
    steps = TopTwoSteps(float(spec.beta), float(coef), float(shift), bool(released))
    return bind_glr(steps, (), rewards, noise_stds, th, levels, delta0s, log_consts, max_samples,
                    var)


@dataclass(frozen=True)
class TTUCB(IndifferenceZone, Algorithm):
    """TTUCB (Jourdan & Degenne, 2022) with its GLR stopping rule; the sampling rule is
    :class:`~bai_lib.algorithms.top_two.TopTwoSteps`.

    It stops at the first ``t`` with ``min_{i≠î} (μ̂_î − μ̂_i)² / (v_î + v_i) >= s · c(t, δ)``
    (:func:`bai_lib.stopping.ttucb_c`, ``c`` replaced by ``max(c, 0)``) and recommends
    the empirical best arm ``î``; ``s = 2`` is the Gaussian GLR test ``Z >= c`` of Jourdan &
    Degenne and of the released code, the paper's appendix prints ``s = 1``. ``δ`` enters only
    the threshold, so one trajectory serves every level. On Bernoulli arms the test compares
    the Bernoulli GLR statistic ``Z`` (:func:`bai_lib.kl.kl_glr`) with ``s · c(t, δ) / 2``, the
    same test (for Gaussian arms ``Z`` is half the squared normalised gap).

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
        (:func:`bai_lib.stopping.glr_beta`; for Gaussian arms ``c(t, δ/4)`` with the exact
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
        conventions (:func:`bai_lib.stopping.threshold` of ``"ttucb"``), or under the indifference
        stop ``2 β(t, δ/4)`` of the proven threshold for ``rewards``
        (:func:`bai_lib.stopping.glr_beta`; ``indifference_glr="own"``: its own at
        ``δ/4``)."""
        rule = self.glr_rule(V.choice(rewards, PROVEN_GLR_THRESHOLDS, "rewards"))
        if rule:
            return threshold(rule, t, self.glr_delta(delta), k)
        return threshold("ttucb", t, self.glr_delta(delta), k, cg=self.cg, rule=self.threshold,
                         log_term=self.log_term)

    def working_memory(self, k: int) -> int:
        """The ``k × k`` int64 table of per-leader pulls that the tracking keeps."""
        return 8 * k * k

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        """For Bernoulli and Poisson rewards, the family's GLR statistic in the stopping rule and
        the challenger (:mod:`bai_lib.families.expfam`); the threshold ``c(t, δ)`` is the one
        Jourdan & Degenne prove for Gaussian arms, used as is, and the bonus keeps its
        sub-Gaussian form with ``noise_stds``."""
        released = self.sampling == "released"
        var = np.ascontiguousarray(noise_stds**2 if self.noise_aware else np.ones_like(noise_stds))
        return _ttucb_bound(
            self, prior, noise_stds, deltas, TTUCB_THRESHOLDS[self.threshold],
            TTUCB_LOG_TERMS[self.log_term],
            TTUCB_RELEASED_UCB_COEF if released else TTUCB_UCB_COEF, 1.0 if released else 0.0,
            released, var, max_samples, rewards)


@dataclass(frozen=True)
class EBTC(IndifferenceZone, Algorithm):
    """EB-TC (Jourdan, Degenne & Kaufmann, 2023): empirical-best leader, transportation-cost challenger.

    The leader is the empirical best arm ``argmax_i μ̂_i`` (no exploration bonus), the challenger
    ``argmin_{j≠B} (μ̂_B − μ̂_j)_+² / (σ_B²/N_B + σ_j²/N_j)``, and the leader is sampled with
    proportion ``β`` by per-leader tracking, the current step counted. It stops with the GLR test
    ``Z ≥ c(t, δ)``, ``c(t, δ) = 2 C_G(log((k−1)/δ)/2) + 4 log(4 + log(t/2))``. Its sampling
    rule is :class:`~bai_lib.algorithms.top_two.TopTwoSteps` with a zero bonus and Jourdan &
    Degenne's conventions.

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

    def __post_init__(self):
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        V.choice(self.cg, ("approx", "exact"), "cg")
        self._check_indifference()

    def stopping_threshold(self, t: ArrayLike, delta: float, k: int = 2,
                           rewards: str = "gaussian") -> float | np.ndarray:
        """The level of the squared normalised gap at which EB-TC's GLR test stops a run at
        ``delta``: ``2 c(t, δ)`` with ``log(t/2)`` (:func:`bai_lib.stopping.threshold`),
        or under the indifference stop as for :meth:`TTUCB.stopping_threshold`."""
        rule = self.glr_rule(V.choice(rewards, PROVEN_GLR_THRESHOLDS, "rewards"))
        if rule:
            return threshold(rule, t, self.glr_delta(delta), k)
        return threshold("ttucb", t, self.glr_delta(delta), k, cg=self.cg, rule="released",
                                   log_term="printed")

    def working_memory(self, k: int) -> int:
        """The ``k × k`` int64 table of per-leader pulls that the tracking keeps."""
        return 8 * k * k

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        """Bernoulli and Poisson rewards as for TTUCB."""
        var = np.ascontiguousarray(noise_stds**2)
        return _ttucb_bound(
            self, prior, noise_stds, deltas, TTUCB_THRESHOLDS["released"],
            TTUCB_LOG_TERMS["printed"], 0.0, 0.0, False, var, max_samples, rewards)
