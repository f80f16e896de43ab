"""The stopping rules of the Bayesian A/B platforms, as a specification: :class:`PosteriorRule`.

The platforms stop a test when a posterior summary crosses a threshold, checked on a schedule
(hourly, daily) and with a maximum duration; they allocate traffic by Thompson sampling or
top-two Thompson sampling, some with a floor per variant. None of these rules states a
guarantee on the probability of error of the whole sequential procedure; this specification
lets the library measure it under a prior.

=====================  =========================================================  ==============
``stop``               stop at a look when                                        used by
=====================  =========================================================  ==============
``probability_best``   an arm's posterior probability of being best ``≥ 1 − δ``   Statsig, LaunchDarkly
``expected_loss``      the smallest expected loss ``E[max_j θ_j − θ_i] ≤ δ``      VWO, GrowthBook, bayesAB
``value_remaining``    ``P((max_j θ_j − θ_l)/θ_l ≤ value) ≥ 1 − δ``               Google (Scott 2010)
=====================  =========================================================  ==============

(the platforms' rules as their public documentation describes them; the posterior summaries
are computed by :mod:`bai_lib.posterior`). Bernoulli arms with Beta priors (conversions), and
Gaussian arms with known noise and a Gaussian prior for the first two rules (the value
remaining is a ratio to the leader's mean, defined for rates).

When the prior is the law of the arm means, each rule bounds its own Bayesian risk on the runs
it stops, however often it looks (:mod:`bai_lib.platforms`): the probability of error for
``probability_best``, the expected regret for ``expected_loss``, the probability of a relative
regret above ``value`` for ``value_remaining``. A run stopped by the maximum duration has no
such bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, NamedTuple, Optional

import numpy as np
from numba import njit

from .. import _validate as V
from .._rng import fill_normal, std_normal, uniform
from .._variates import beta_variate
from ..beta_prior import BetaPrior
from ..families import family_bundle
from ..kernels import NORMAL_BUFFER, STOP_CENSORED, STOP_INTERRUPTED, STOP_POSTERIOR, argmax
from ..posterior import (GL_NODES, GL_WEIGHTS, PANEL_Z, expected_max, normal_expected_max,
                         normal_probability_best_into, probability_best_into,
                         value_remaining_cdf)
from .ask_tell import RUNNING, SIMULATE, buffer_position, scheduled_look, take_pull
from .base import Algorithm, Binding, gap_cost

__all__ = ["PosteriorRule", "posterior_ask_tell", "allocate", "posterior_update", "STOP_RULES",
           "ALLOCATIONS", "RESAMPLE_LIMIT"]

#: The posterior stopping rules (:class:`PosteriorRule` ``stop``), by code.
STOP_RULES = {"probability_best": 0, "expected_loss": 1, "value_remaining": 2}
#: The allocations (:class:`PosteriorRule` ``allocation``), by code.
ALLOCATIONS = {"thompson": 0, "top_two": 1, "uniform": 2}
#: The posterior draws the top-two allocation makes for a challenger before it takes the
#: runner-up of the last one.
RESAMPLE_LIMIT = 100


@njit(cache=True, nogil=True)
def _posterior_mean(normal, A_i, B_i):
    """The posterior mean of an arm: ``A_i`` for a normal posterior, ``A_i/(A_i + B_i)`` for a
    Beta one."""
    return A_i if normal else A_i / (A_i + B_i)


@njit(cache=True, nogil=True)
def _draw_leader(normal, state, A, B, draws):
    for j in range(A.size):
        if normal:
            draws[j] = A[j] + math.sqrt(B[j]) * std_normal(state)
        else:
            draws[j] = beta_variate(state, A[j], B[j])
    return argmax(draws)


@njit(cache=True, nogil=True)
def posterior_update(normal: bool, A: np.ndarray, B: np.ndarray, arm: int, x: float,
                     var: float) -> None:
    """The posterior after the reward ``x`` of ``arm``: ``Beta(A + x, B + 1 − x)``, or for a
    normal posterior ``N(A, B)`` and noise variance ``var`` the precision-weighted
    ``N((A/B + x/var)/(1/B + 1/var), 1/(1/B + 1/var))``."""
    if normal:
        precision = 1.0 / B[arm] + 1.0 / var
        A[arm] = (A[arm] / B[arm] + x / var) / precision
        B[arm] = 1.0 / precision
    else:
        A[arm] += x
        B[arm] += 1.0 - x


@njit(cache=True, nogil=True)
def allocate(normal: bool, state: np.ndarray, A: np.ndarray, B: np.ndarray,
             allocation: int, beta: float, floor: float, draws: np.ndarray) -> int:
    """The next arm: with probability ``k · floor`` a uniform arm (so every arm gets at least
    ``floor`` of the pulls), else Thompson sampling (the argmax of one posterior draw), top-two
    Thompson sampling (that leader with probability ``beta``, else the argmax of re-draws that
    differ from it, up to :data:`RESAMPLE_LIMIT`, then the runner-up of the last) or a uniform
    arm. The posteriors are ``Beta(A_i, B_i)``, or ``N(A_i, B_i)`` when ``normal``."""
    k = A.size
    if floor > 0.0 and uniform(state) < k * floor:
        return min(int(uniform(state) * k), k - 1)
    if allocation == 2:
        return min(int(uniform(state) * k), k - 1)
    leader = _draw_leader(normal, state, A, B, draws)
    if allocation == 0 or uniform(state) < beta:
        return leader
    for _ in range(RESAMPLE_LIMIT):
        other = _draw_leader(normal, state, A, B, draws)
        if other != leader:
            return other
    draws[leader] = -np.inf
    return argmax(draws)


@njit(cache=True, nogil=True)
def _posterior_stop(normal, A, B, rule, level, value, pbest):
    """``(code, arm)`` at a look: :data:`~bai_lib.kernels.STOP_POSTERIOR` when the rule's
    summary crosses its threshold (``level`` is ``δ``), with the arm it recommends."""
    if rule == 1:
        lead = _mean_leader(normal, A, B)
        if normal:
            sd = np.sqrt(B)
            top = normal_expected_max(A, sd, PANEL_Z, GL_NODES, GL_WEIGHTS)
        else:
            top = expected_max(A, B, PANEL_Z, GL_NODES, GL_WEIGHTS)
        loss = top - _posterior_mean(normal, A[lead], B[lead])
        return (STOP_POSTERIOR if loss <= level else RUNNING), lead
    if normal:
        normal_probability_best_into(A, np.sqrt(B), PANEL_Z, GL_NODES, GL_WEIGHTS, pbest)
    else:
        probability_best_into(A, B, PANEL_Z, GL_NODES, GL_WEIGHTS, pbest)
    lead = argmax(pbest)
    if rule == 0:
        return (STOP_POSTERIOR if pbest[lead] >= 1.0 - level else RUNNING), lead
    p = value_remaining_cdf(A, B, lead, value, PANEL_Z, GL_NODES, GL_WEIGHTS)
    return (STOP_POSTERIOR if p >= 1.0 - level else RUNNING), lead


@njit(cache=True, nogil=True)
def _mean_leader(normal, A, B):
    lead = 0
    for j in range(1, A.size):
        if _posterior_mean(normal, A[j], B[j]) > _posterior_mean(normal, A[lead], B[lead]):
            lead = j
    return lead


@njit(cache=True, nogil=True)
def posterior_ask_tell(fam: NamedTuple, normal: bool, state: np.ndarray, prior_a: np.ndarray,
                       prior_b: np.ndarray, rule: int, allocation: int, beta: float,
                       floor: float, value: float, level: float, max_samples: int,
                       arms: np.ndarray, xs: np.ndarray, looks: np.ndarray, mode: int,
                       n_more: int, schedule: np.ndarray, mu: np.ndarray, sigma: np.ndarray,
                       out_arms: np.ndarray, out_xs: np.ndarray, S: np.ndarray, N: np.ndarray,
                       cancel: np.ndarray) -> tuple[int, int, int, int, int]:
    """The engine of :class:`PosteriorRule` (:mod:`bai_lib.algorithms.ask_tell` describes the
    engines): every pull is allocated from the current posterior (:func:`allocate`) and updates
    it (:func:`posterior_update`: ``Beta(A_i, B_i)``, or with ``normal`` ``N(A_i, B_i)``, mean
    and variance, with the noise variances ``sigma²``); at a look (after a log entry whose
    ``looks`` flag is set, and in the simulate mode when ``t ≥ 1`` is a look of ``schedule``,
    :func:`~bai_lib.algorithms.ask_tell.look_schedule`) the rule's summary is checked;
    ``max_samples`` censors at any step, recommending the arm of largest posterior mean. A plan draws the next
    ``n_more`` arms from the current posterior without updating it: the fixed weights a
    platform serves a batch with. Rewards come from the run's normal stream as in the
    simulators (:func:`bai_lib.families.family.draw`)."""
    k = prior_a.size
    A = prior_a.copy()
    B = prior_b.copy()
    draws = np.empty(k)
    pbest = np.empty(k)
    buf = np.empty(max(NORMAL_BUFFER, k))
    fill_normal(state, buf)
    pos = 0
    t = np.int64(0)
    n_log = arms.size
    total = n_log + (n_more if mode == SIMULATE else 0)
    n_out = 0
    look = False
    for j in range(total + 1):
        if look or (j > n_log and scheduled_look(t, schedule)):
            code, lead = _posterior_stop(normal, A, B, rule, level, value, pbest)
            if code != RUNNING:
                return code, lead, t, n_out, -1
        if t >= max_samples:
            return STOP_CENSORED, _mean_leader(normal, A, B), t, n_out, -1
        if j == total:
            break
        logged = j < n_log
        if not logged and cancel[0]:
            return STOP_INTERRUPTED, -1, t, n_out, -1
        arm = allocate(normal, state, A, B, allocation, beta, floor, draws)
        pos = buffer_position(state, buf, pos, cancel)
        if pos < 0:
            return STOP_INTERRUPTED, -1, t, n_out, -1
        arm, x, n_out = take_pull(fam, j, arm, arms, xs, buf[pos], mu, sigma, out_arms, out_xs,
                                  n_out)
        pos += 1
        S[arm] += x
        N[arm] += 1
        posterior_update(normal, A, B, arm, x, sigma[arm] * sigma[arm])
        t += 1
        look = logged and looks[j] == 1
    if mode == SIMULATE:
        return RUNNING, _mean_leader(normal, A, B), t, n_out, -1
    for q in range(n_more):
        out_arms[q] = allocate(normal, state, A, B, allocation, beta, floor, draws)
    return RUNNING, _mean_leader(normal, A, B), t, n_more, -1


@dataclass(frozen=True)
class PosteriorRule(Algorithm):
    """An A/B platform's rule: allocate by a posterior, stop when a posterior summary crosses a
    threshold at a look (the module docstring lists the rules and who uses them).

    ``δ`` is the rule's threshold: ``P(best) ≥ 1 − δ`` (``δ = 0.05`` is the platforms' "95%"),
    expected loss ``≤ δ`` (in the units of the means: conversion rates for Bernoulli arms),
    value remaining below ``value`` with probability ``≥ 1 − δ`` (Bernoulli arms only). Looks:
    every sample unless ``simulate(..., look_every=h)`` or ``look_at=[...]``, as the platforms
    check hourly or daily (each look costs a quadrature, about 0.3 ms); the maximum duration is
    ``max_samples``.

    Parameters
    ----------
    stop : {"probability_best", "expected_loss", "value_remaining"}
        The stopping rule (:data:`~bai_lib.algorithms.posterior_rules.STOP_RULES`).
    allocation : {"thompson", "top_two", "uniform"}
        How pulls are allocated (:data:`~bai_lib.algorithms.posterior_rules.ALLOCATIONS`,
        :func:`~bai_lib.algorithms.posterior_rules.allocate`).
    beta : float
        The leader's share under ``"top_two"``, in ``(0, 1)``.
    floor : float
        The least share of the pulls of every arm, in ``[0, 1/k]`` (a uniform pull with
        probability ``k · floor``).
    value : float
        The relative value remaining ``c`` of ``"value_remaining"`` (0.01 in Scott 2010).
    """

    stop: str = "probability_best"
    allocation: str = "thompson"
    beta: float = 0.5
    floor: float = 0.0
    value: float = 0.01

    name: ClassVar[str] = "posterior"
    short_label: ClassVar[str] = "Posterior rule"
    color: ClassVar[str] = "#c2185b"
    needs_prior: ClassVar[bool] = True
    reward_models: ClassVar[tuple] = ("bernoulli", "gaussian")

    def __post_init__(self):
        V.choice(self.stop, tuple(STOP_RULES), "stop")
        V.choice(self.allocation, tuple(ALLOCATIONS), "allocation")
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        floor = V.nonnegative(self.floor, "floor")
        if floor >= 1.0:
            raise ValueError(f"floor must lie in [0, 1/k], got {floor!r}")
        object.__setattr__(self, "floor", floor)
        object.__setattr__(self, "value", V.positive(self.value, "value"))

    def default_max_samples(self, k: int) -> int:
        """``10**6``: the platforms run tests of bounded duration, and a look costs about
        0.3 ms, so a run to ``10**9`` with frequent looks would take hours."""
        return 10**6

    def guarantee(self, prior: Optional[BetaPrior], rewards: str, delta: float) -> str:
        """Bayesian, only if the prior is the law of the arm means, and only for the runs that
        stop on the rule (the module docstring): what each rule bounds by ``δ``."""
        bound = {"probability_best": "the probability of stopping on the rule with a worse arm",
                 "expected_loss": "the expected regret of the runs that stop on the rule",
                 "value_remaining": f"the probability of stopping on the rule with a relative "
                                    f"regret above {self.value:g}"}[self.stop]
        return (f"Bayesian, if the prior is the law of the arm means: {bound} is at most "
                f"δ = {delta:g}, however often the rule looks. A run stopped by the maximum "
                f"duration has no guarantee; with another prior, none is stated.")

    def _bind(self, prior, noise_stds, deltas, max_samples, rewards) -> Binding:
        delta = self._single_level(deltas)
        k = noise_stds.size
        if self.floor * k > 1.0:
            raise ValueError(f"floor must lie in [0, 1/k] = [0, {1 / k:g}], got {self.floor!r}")
        fam = family_bundle(rewards)
        normal = rewards == "gaussian"
        if normal:
            if self.stop == "value_remaining":
                raise ValueError("stop: 'value_remaining' is a ratio to the leader's mean, "
                                 "defined for Bernoulli arms (rates) only")
            a = np.array(prior.means, dtype=np.float64)          # N(a_i, b_i): mean, variance
            b = np.array(prior.stds, dtype=np.float64) ** 2
        else:
            a = np.array(prior.a, dtype=np.float64)
            b = np.array(prior.b, dtype=np.float64)
        rule, alloc = STOP_RULES[self.stop], ALLOCATIONS[self.allocation]
        beta, floor, value, sig = float(self.beta), float(self.floor), float(self.value), noise_stds
        default = max_samples

        def ask_tell(state, arms, xs, looks, mode, n_more, schedule, mu, *out,
                     max_samples=default):
            return posterior_ask_tell(fam, normal, state, a, b, rule, alloc, beta, floor, value, delta,
                                      max_samples, arms, xs, looks, mode, n_more, schedule,
                                      mu, sig, *out)

        return Binding.of_engine(ask_tell, lambda means: gap_cost(means, sig), k)
