"""The indifference stop of Algorithm 1, added to the GLR algorithms (``indifference=True``).

A specification with the option stops at the first time either its GLR test passes or the
``Conf`` intervals say that no other arm can beat the empirical best arm by more than ``Δ0``,
and recommends the empirical best arm. How ``δ`` is split between the two stops, and why the
Bayesian probability of error stays below ``δ``, is :func:`bai_lib.confidence.indifference_split`.
``Δ0`` comes from the prior as in Algorithm 1, ``δ / (4 L(H))`` by default.

The argument needs the GLR test at ``δ/4`` to err with probability at most ``δ/4`` on every
instance, whatever the sampling rule. By default (``indifference_glr="proven"``) the GLR share
therefore uses the threshold proven for the reward model
(:data:`bai_lib.stopping.PROVEN_GLR_THRESHOLDS`, :func:`bai_lib.stopping.glr_beta`), not
the algorithm's own: TTTS's ``log(t/δ)`` and TTUCB's ``c(t, δ)`` with ``C_G(x) ≈ x + log x`` have
no such proof. ``indifference_glr="own"`` keeps the algorithm's own threshold at ``δ/4``, a
heuristic for comparison that the guarantee does not cover.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike
from numba import njit

from .. import _validate as V
from ..beta_prior import BetaPrior
from ..families import reward_model
from ..priors import GaussianPrior
from ..priors import delta0 as _delta0_of
from ..confidence import (conf_factor, conf_log_const, first_indifference_round,
                          indifference_split)
from ..stopping import PROVEN_GLR_THRESHOLDS, glr_level, threshold
from .base import indifference_guarantee

__all__ = ["IndifferenceZone", "INDIFFERENCE_GLR", "conf_widths", "indifferent",
           "forcing_start", "forced_arm", "NEVER"]

#: A time no run reaches (the samples of every run are below ``2**62``).
NEVER = 2**62

#: Values of the ``indifference_glr`` option, the threshold of the GLR share of the
#: indifference stop. ``"proven"`` is the one proven for the reward model, ``"own"`` the
#: algorithm's own (a heuristic).
INDIFFERENCE_GLR = ("proven", "own")


class IndifferenceZone:
    """Mixin of the specifications with an ``indifference`` option.

    The specification declares the fields ``indifference: bool = False``,
    ``delta0: Optional[float] = None`` and ``delta0_factor: Optional[float] = None`` (the
    meanings of :class:`~bai_lib.algorithms.Elimination`'s, used only with ``indifference``),
    ``indifference_glr: str = "proven"`` (:data:`INDIFFERENCE_GLR`), and calls
    ``_check_indifference()`` from ``__post_init__``.
    """

    def _check_indifference(self) -> None:
        V.flag(self.indifference, "indifference")
        V.choice(self.indifference_glr, INDIFFERENCE_GLR, "indifference_glr")
        if not self.indifference and self.indifference_glr != "proven":
            raise ValueError("indifference_glr sets the GLR share of the indifference stop; give "
                             "indifference=True with it")
        if self.delta0 is not None and self.delta0_factor is not None:
            raise ValueError("give either delta0 or delta0_factor, not both")
        if not self.indifference and (self.delta0 is not None or self.delta0_factor is not None):
            raise ValueError("delta0 and delta0_factor set the indifference stop; give "
                             "indifference=True with them")
        if self.delta0 is not None:
            object.__setattr__(self, "delta0", V.positive(self.delta0, "delta0"))
        if self.delta0_factor is not None:
            object.__setattr__(self, "delta0_factor",
                               V.positive(self.delta0_factor, "delta0_factor"))

    def uses_prior(self) -> bool:
        return self.needs_prior or (self.indifference and self.delta0 is None)

    def glr_threshold(self, rewards: str) -> Optional[str]:
        """The proven threshold under the indifference stop (:meth:`glr_rule`), else ``None``
        (a specification whose own threshold is a GLR one says so)."""
        return self.glr_rule(rewards)

    def guarantee(self, prior: Optional[GaussianPrior | BetaPrior], rewards: str,
                  delta: float) -> str:
        """With the indifference stop, Bayesian when the proof covers ``Δ0`` and the GLR share
        (:func:`~bai_lib.algorithms.base.indifference_guarantee`); without it, that of the GLR
        threshold (:meth:`bai_lib.algorithms.Algorithm.guarantee`)."""
        if not self.indifference:
            return super().guarantee(prior, rewards, delta)
        return indifference_guarantee(
            self, prior, delta, self.glr_rule(rewards) is not None,
            "Theorem 6's argument with the proven GLR threshold at its share of δ, "
            "bai_lib.confidence.indifference_split")

    @property
    def one_trajectory(self) -> bool:
        """Without the indifference stop the sampling rule does not depend on ``δ``; with it, the
        forced exploration (:func:`~bai_lib.algorithms.indifference.forcing_start`) starts at a
        time set by the level."""
        return not self.indifference

    def resolve_delta0(self, prior: Optional[GaussianPrior | BetaPrior],
                       delta: float) -> Optional[float]:
        """``Δ0`` for ``prior`` and ``delta`` with ``indifference``: the fixed ``delta0``, else
        ``δ / (factor · L(H))`` (factor 4 unless ``delta0_factor``); ``None`` without it."""
        if not self.indifference:
            return None
        if self.delta0 is not None:
            return self.delta0
        factor = 4.0 if self.delta0_factor is None else self.delta0_factor
        return float(_delta0_of(prior, delta, factor=factor))

    def with_delta0_factor(self, factor: float) -> "IndifferenceZone":
        if not self.indifference or self.delta0 is not None:
            return self
        return dataclasses.replace(self, delta0_factor=factor)

    def glr_rule(self, rewards: str) -> Optional[str]:
        """The threshold of the GLR test (a name of :data:`bai_lib.stopping.GLR_THRESHOLDS`)
        that replaces the algorithm's own, or ``None`` when the own one is used: the proven
        one for ``rewards`` under the indifference stop with ``indifference_glr="proven"``."""
        model = reward_model(rewards)
        if self.indifference and not model.sub_gaussian:
            raise ValueError(f"indifference=True: the indifference stop's widths σ √(2L/N) need "
                             f"sub-Gaussian rewards, and {model.describe} rewards are not; "
                             f"run rewards={rewards!r} without it")
        if self.indifference and self.indifference_glr == "proven":
            return PROVEN_GLR_THRESHOLDS[rewards]
        return None

    def stopping_threshold(self, t: ArrayLike, delta: float, k: int = 2,
                           rewards: str = "gaussian") -> float | np.ndarray:
        """The level of the squared normalised gap (twice the GLR statistic) at which this
        specification's GLR test stops a run at ``delta``, ``2 β(t, δ')``
        (:func:`bai_lib.stopping.threshold`): ``δ' = δ/4`` and the proven threshold for
        ``rewards`` under the indifference stop, its own ``threshold`` (a name of
        :data:`~bai_lib.stopping.GLR_THRESHOLDS`) at ``δ`` otherwise. TTUCB and EB-TC, whose own
        threshold is ``c(t, δ)``, override it."""
        rule = self.glr_rule(V.choice(rewards, PROVEN_GLR_THRESHOLDS, "rewards"))
        return threshold(rule or self.threshold, t, self.glr_delta(delta), k)

    def glr_delta(self, delta: float) -> float:
        """The level of the GLR test for a run at ``delta``: ``δ/4`` (the GLR share of
        :func:`~bai_lib.confidence.indifference_split`) with the indifference stop, else ``δ``."""
        return indifference_split(delta)[0] if self.indifference else delta

    def stopping_time_bound(self, prior: Optional[GaussianPrior | BetaPrior],
                            noise_stds: ArrayLike, delta: float) -> Optional[int]:
        """The number of samples by which every run at ``delta`` stops, whatever the means:
        ``(3k - 1) n0`` with ``n0`` the samples per arm that bring every ``Conf`` width of the
        indifference stop to ``Δ0/2`` or below, which the kernels force from ``t = 2 k n0`` on
        (:func:`~bai_lib.algorithms.indifference.forcing_start`, where the bound is proven).
        ``None`` without the indifference stop, or when ``n0`` is beyond ``2**61``."""
        n0 = self.indifference_samples(prior, noise_stds, delta)
        k = V.noise_stds(noise_stds, None if prior is None else prior.k).size
        return None if n0 is None else (3 * k - 1) * n0

    def indifference_samples(self, prior: Optional[GaussianPrior | BetaPrior],
                             noise_stds: ArrayLike, delta: float) -> Optional[int]:
        """``n0``: the samples per arm that bring every ``Conf`` width of the indifference stop
        to ``Δ0/2`` or below at ``delta``, so that the stop fires once every arm has them
        (:func:`~bai_lib.algorithms.indifference.forcing_start`). ``None`` without the
        indifference stop, or when ``n0`` is beyond ``2**61``."""
        if not self.indifference:
            return None
        sig = V.noise_stds(noise_stds, None if prior is None else prior.k)
        _, d0s, logcs = self._indifference_levels(prior, [V.confidence_level(delta)],
                                                  sig.size)
        n0, _ = forcing_start(sig, logcs[0], d0s[0])  # sig: a new float64 array
        return None if n0 == NEVER else int(n0)

    def _indifference_levels(self, prior, deltas: Sequence[float], k: int,
                             rule: Optional[str] = None
                             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(levels, delta0s, log_consts)`` per level: the ``level`` arguments of
        :func:`~bai_lib.stopping.glr_beta` for the GLR test under the threshold ``rule`` (``δ``,
        or ``δ/4`` with the indifference stop), and ``Δ0`` and the ``Conf`` constant of the
        indifference stop (both empty without it)."""
        glr = [self.glr_delta(d) for d in deltas]
        levels = np.array([glr_level(rule, g, k) if rule else g for g in glr], dtype=np.float64)
        if not self.indifference:
            return levels, np.empty(0), np.empty(0)
        return (levels, np.array([self.resolve_delta0(prior, d) for d in deltas]),
                np.array([conf_log_const(indifference_split(d)[1], k) for d in deltas]))


@njit(cache=True, nogil=True)
def conf_widths(w: np.ndarray, sigma: np.ndarray, N: np.ndarray, log_const: float) -> None:
    """Set ``w_j = σ_j c(N_j)``, the ``Conf`` widths (:func:`~bai_lib.confidence.conf_factor`)
    with the constant ``log_const``, for every arm."""
    for j in range(w.size):
        w[j] = sigma[j] * conf_factor(float(N[j]), log_const)


@njit(cache=True, nogil=True)
def forcing_start(sigma: np.ndarray, log_const: float, delta0: float) -> tuple[int, int]:
    """``(n0, 2 k n0)``: the samples per arm after which every ``Conf`` width is at most ``Δ0/2``
    (:func:`~bai_lib.confidence.first_indifference_round` with the largest ``2σ_i``), and the
    time from which the GLR algorithms with the indifference stop force them.

    From ``t = 2 k n0`` on, a step that would leave some arm below ``n0`` samples samples the
    least-sampled arm instead (:func:`~bai_lib.algorithms.indifference.forced_arm`). At most
    ``(k - 1) n0`` such steps bring every arm to ``n0`` (at ``t = 2 k n0`` one arm at least has
    ``n0``); then every width is at most ``Δ0/2``, so
    ``max_{j != i_hat} (μ̂_j + w_j) - (μ̂_{i_hat} - w_{i_hat}) <= w_j + w_{i_hat} <= Δ0`` and the
    indifference stop fires: **every run stops by ``(3k - 1) n0`` samples**, whatever
    the means (tied ones included, where the GLR test never passes and a sampling rule without
    exploration, such as EB-TC's, can starve an arm forever). ``(NEVER, NEVER)`` when ``n0`` is
    beyond ``2**61``. The stop's guarantee does not depend on the sampling rule, so forcing
    leaves it intact. Forcing starts at twice the time a uniform allocation needs, so that a
    sampling rule that keeps every arm near ``t / k`` is never overridden: only runs with a
    starved arm change. It depends on the level through ``n0``, so with the indifference stop
    one trajectory no longer serves several levels (``one_trajectory`` is then false)."""
    n0 = first_indifference_round(2.0 * sigma.max(), log_const, delta0)
    if n0 < 0 or n0 > NEVER // (2 * sigma.size):
        return np.int64(NEVER), np.int64(NEVER)
    return np.int64(n0), np.int64(2 * sigma.size * n0)


@njit(cache=True, nogil=True)
def forced_arm(N: np.ndarray, n0: int, arm: int) -> int:
    """The least-sampled arm (the lowest index among equals) if it has fewer than ``n0`` samples,
    else ``arm`` (:func:`~bai_lib.algorithms.indifference.forcing_start`)."""
    j = 0
    for i in range(1, N.size):
        if N[i] < N[j]:
            j = i
    return j if N[j] < n0 else arm


@njit(cache=True, nogil=True)
def indifferent(mh: np.ndarray, w: np.ndarray, best: int, delta0: float) -> bool:
    """The indifference stop: ``max_{j != best} (μ̂_j + w_j) - (μ̂_best - w_best) <= Δ0``."""
    top = -np.inf
    for j in range(mh.size):
        if j != best and mh[j] + w[j] > top:
            top = mh[j] + w[j]
    return top - (mh[best] - w[best]) <= delta0
