"""The functions every reward family provides, resolved by the compiler from the family's bundle,
and :class:`RewardModel`, what the layers above ask of a family.

A family is a bundle class (a named tuple of its scalar constants,
:class:`~bai_lib.families.gaussian.Gaussian`, :class:`~bai_lib.families.bernoulli.Bernoulli` or
:class:`~bai_lib.families.poisson.Poisson`) and one module of compiled functions, registered here
under that class. Per-arm arrays (noise levels, variances) are passed beside the bundle, not in
it: a compiled function that reads an array out of a tuple argument pays two atomic reference
counts, which at every sample cost the loops nine tenths of their speed. A compiled loop calls the
generic functions of this module with the bundle as first argument; numba resolves each call at
compile time, from the bundle's type, to the family's own function, so no branch on the family
runs inside a loop, the call is inlined like any other, and the loop is cached on disk once per
family (:func:`~bai_lib.kernels.bundle_generic`). The family is chosen once, when a specification
binds (:meth:`bai_lib.algorithms.Algorithm.bind`).

Every function takes the bundle ``fam`` first; ``S``, ``N``, ``mh``, ``v`` are the per-arm
sums, counts, empirical means and statistic variances ``var_i / N_i`` of a run, ``var`` the
variances the statistics use.

Three groups: :data:`FUNCTIONS`, which every family provides (the GLR loop's); :data:`KL_WIDTHS`,
the ends of the KL confidence intervals (Algorithm 1, NoElim and LUCB with ``widths="kl"``); and
:data:`CONJUGATE`, the conjugate posterior of Top-Two Thompson Sampling for a prior with two
shape parameters (Beta, Gamma). A family provides a group whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np
from numba import njit

from ..kernels import bundle_generic

__all__ = ["draw", "observe", "glr_passes", "challenger_cost", "solve_oracle", "kl_lower",
           "kl_upper", "kl_inner", "upper_exceeds", "glr_stat", "mean_variance", "reward_max",
           "posterior_draw", "posterior_update", "posterior_moments", "posterior_normal",
           "FUNCTIONS", "KL_WIDTHS",
           "CONJUGATE", "register", "RewardModel"]

#: ``draw(fam, z, mu_arm, sigma_arm) -> x``: a reward of an arm (mean parameter ``mu_arm``, as
#: the simulators receive it, noise level ``sigma_arm``) from the standard normal ``z`` of the
#: run's stream.
draw = bundle_generic("draw", "fam, z, mu_arm, sigma_arm")
#: ``observe(fam, arm, x, S, N, mh, v, inv_next, var)``: book the reward ``x`` of ``arm`` in the
#: sums, counts, means and statistic variances (``inv_next`` holds ``1/(N_i + 1)``, prepared one
#: pull ahead).
observe = bundle_generic("observe", "fam, arm, x, S, N, mh, v, inv_next, var")
#: ``glr_passes(fam, mh, v, N, best, c) -> bool``: whether the GLR statistic ``Z_{best,j}``
#: reaches ``c / 2`` for every ``j != best``.
glr_passes = bundle_generic("glr_passes", "fam, mh, v, N, best, c")
#: ``challenger_cost(fam, mh, v, N, lead, j, signed) -> float``: the transportation cost of
#: ``j`` against the leader ``lead`` that the top-two challengers minimise; ``signed`` keeps the
#: sign of ``μ̂_lead − μ̂_j`` (the released TTUCB code) instead of its positive part.
challenger_cost = bundle_generic("challenger_cost", "fam, mh, v, N, lead, j, signed")
#: ``solve_oracle(fam, mh, var, best, w, u_guess) -> (T_star, u)``: the optimal weights
#: ``w*(μ̂)`` of the family's divergence, written into ``w`` (Track-and-Stop).
solve_oracle = bundle_generic("solve_oracle", "fam, mh, var, best, w, u_guess")



# A family without KL intervals compiles the kernels' KL branches, which its specifications never
# take (they refuse widths="kl" before any run), to these.
@njit(cache=True, nogil=True)
def _none1(fam, p, level):
    return np.nan


@njit(cache=True, nogil=True)
def _none2(fam, p, level):
    return np.nan, np.nan


@njit(cache=True, nogil=True)
def _never(fam, p, level, x):
    return False


@njit(cache=True, nogil=True)
def _none_stat(fam, mean_a, n_a, mean_b, n_b):
    return np.nan


@njit(cache=True, nogil=True)
def _none_of(fam, t):
    return np.nan


#: ``kl_lower(fam, p, level) -> q``: the smallest mean ``q <= p`` with ``d(p, q) <= level``.
kl_lower = bundle_generic("kl_lower", "fam, p, level", _none1)
#: ``kl_upper(fam, p, level) -> q``: the largest mean ``q >= p`` with ``d(p, q) <= level``.
kl_upper = bundle_generic("kl_upper", "fam, p, level", _none1)
#: ``kl_inner(fam, p, level) -> (lo, hi)``: closed-form points inside ``[kl_lower, kl_upper]``.
kl_inner = bundle_generic("kl_inner", "fam, p, level", _none2)
#: ``upper_exceeds(fam, p, level, x) -> bool``: whether ``kl_upper(fam, p, level) > x``.
upper_exceeds = bundle_generic("upper_exceeds", "fam, p, level, x", _never)
#: ``glr_stat(fam, mean_a, n_a, mean_b, n_b) -> Z_ab``: the GLR statistic of "``a`` beats ``b``",
#: ``N_a d(μ̂_a, m) + N_b d(μ̂_b, m)`` at the pooled mean ``m`` (0 unless ``μ̂_a > μ̂_b``).
glr_stat = bundle_generic("glr_stat", "fam, mean_a, n_a, mean_b, n_b", _none_stat)
#: ``mean_variance(fam, t) -> V(t)``: the variance of a reward of mean ``t`` (the family's
#: variance function, ``d(p, q) = ∫_p^q (s - p) / V(s) ds``).
mean_variance = bundle_generic("mean_variance", "fam, t", _none_of)
#: ``reward_max(fam, t) -> float``: the largest reward of an arm of mean ``t`` (1 for Bernoulli
#: arms, ``inf`` for Poisson arms): the KL block check of Algorithm 1 skips rounds only for
#: rewards in ``[0, 1]``.
reward_max = bundle_generic("reward_max", "fam, t", _none_of)

#: ``posterior_draw(fam, state, A_i, B_i) -> mean``: one draw of an arm's mean from its posterior
#: with shape parameters ``(A_i, B_i)``, from the run's generator ``state``.
posterior_draw = bundle_generic("posterior_draw", "fam, state, A_i, B_i")
#: ``posterior_update(fam, A, B, arm, x)``: the shape parameters after the reward ``x`` of ``arm``
#: (from the prior's, the first reward of each arm included).
posterior_update = bundle_generic("posterior_update", "fam, A, B, arm, x")
#: ``posterior_moments(fam, A_i, B_i) -> (mean, variance)`` of the posterior of an arm's mean.
posterior_moments = bundle_generic("posterior_moments", "fam, A_i, B_i")
#: ``posterior_normal(fam, A_i, B_i) -> (center, scale)``: a normal approximation
#: ``N(center, scale²)`` of the posterior of ``g(mean)``, for an increasing ``g`` the same for
#: every arm (so that it keeps the order of the arms' draws), chosen by the family to make the
#: approximation close; the approximate challenger of TTTS samples it.
posterior_normal = bundle_generic("posterior_normal", "fam, A_i, B_i")

#: The generic functions every family implements, by name.
FUNCTIONS = {f.__name__: f for f in (draw, observe, glr_passes, challenger_cost, solve_oracle)}
#: The divergence of a one-parameter exponential family and its KL confidence intervals, for
#: the families that have them.
KL_WIDTHS = {f.__name__: f for f in (kl_lower, kl_upper, kl_inner, upper_exceeds, glr_stat,
                                     mean_variance, reward_max)}
#: The conjugate posterior of the top-two Thompson sampler, for the families that have one.
CONJUGATE = {f.__name__: f for f in (posterior_draw, posterior_update, posterior_moments,
                                     posterior_normal)}


def register(bundle: type, module: object) -> type:
    """Register ``module``'s compiled functions named as in :data:`FUNCTIONS` (all of them) and,
    where it has them, in :data:`KL_WIDTHS` and :data:`CONJUGATE` (each group whole), as the
    family of the bundle class ``bundle`` (a named tuple)."""
    for group, required in ((FUNCTIONS, True), (KL_WIDTHS, False), (CONJUGATE, False)):
        missing = [name for name in group if not hasattr(module, name)]
        if missing and (required or len(missing) < len(group)):
            raise ValueError(f"module {module.__name__} lacks {missing} for the family {bundle}")
        if not missing:
            for name, generic in group.items():
                generic.register(bundle, getattr(module, name))
    return bundle


@dataclass(frozen=True)
class RewardModel:
    """A reward family as the layers above the kernels see it: one per module of
    :mod:`bai_lib.families`, in :data:`bai_lib.families.REWARD_MODELS`.

    Attributes
    ----------
    name : str
        The ``rewards`` argument of the simulators (``"gaussian"``, ``"bernoulli"``,
        ``"poisson"``).
    bundle : type
        The bundle class the compiled loops dispatch on.
    prior : type
        The prior class of the arm means (:class:`~bai_lib.GaussianPrior`,
        :class:`~bai_lib.BetaPrior`, :class:`~bai_lib.GammaPrior`).
    describe : str
        The reward distribution of arm ``i``, for messages (``"Bernoulli(μ_i)"``).
    mean_range : (float, float)
        The closed range of the arm means.
    noise_std : float or None
        The ``noise_stds`` the runs get when none is given (``None``: they must be given).
    sub_gaussian : bool
        Whether ``noise_std`` is a sub-Gaussian constant of every reward of the family, so that
        the widths ``σ √(2L/N)`` (Algorithm 1's, the indifference stop's) keep their guarantee.
    kernel_means : callable
        ``means -> float64 array``: the mean parameters the compiled loops receive (``draw``).
    prior_means : callable
        ``(prior, seed, n_runs, first_run) -> (n_runs, k) array``: run ``r``'s arm means from
        its prior stream, as the prior's ``sample_means(seed, ...)`` draws them.
    """

    name: str
    bundle: type
    prior: type
    describe: str
    mean_range: tuple
    noise_std: Optional[float]
    sub_gaussian: bool
    kernel_means: Callable[[np.ndarray], np.ndarray]
    prior_means: Callable[..., np.ndarray]

    @property
    def has_kl_widths(self) -> bool:
        """Whether the family's module provides the group :data:`KL_WIDTHS`."""
        return self.bundle in kl_upper.implementations

    @property
    def has_conjugate(self) -> bool:
        """Whether the family's module provides the group :data:`CONJUGATE`."""
        return self.bundle in posterior_draw.implementations
