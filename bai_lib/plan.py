"""What a simulation runs, checked once: the :class:`RunPlan`.

Orchestration layer, below :mod:`bai_lib.simulation`. A plan carries one algorithm
specification, the instances (a prior to draw them from, or fixed means), the noise levels, the
confidence levels, the runs and the seed, and the censoring level. :meth:`RunPlan.build` checks
every argument and fills in the defaults; :func:`bai_lib.simulate`, :func:`bai_lib.simulate_deltas`
and, through them, the PoE estimators, the paper's runner and the sweep cells all go through it,
so the same bad input gets the same message everywhere.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from .algorithms import ALGORITHMS, Algorithm, resolve
from .beta_prior import BetaPrior
from .executor import check_memory
from .families import REWARD_MODELS as _FAMILIES
from .families import model_of_prior, reward_model
from .families.bernoulli import NOISE_STD as BERNOULLI_NOISE_STD
from .gamma_prior import GammaPrior
from .priors import GaussianPrior, check_prior

__all__ = ["RunPlan", "MAX_SAMPLES_LIMIT", "REWARD_MODELS", "GuaranteeWarning",
           "CensoringWarning", "top_tie_probability", "TIE_WARNING_RUNS", "look_counts"]

#: The reward distributions of the simulators, ``N(μ_i, σ_i²)``, ``Bernoulli(μ_i)`` and
#: ``Poisson(λ_i)``: the names of :data:`bai_lib.families.REWARD_MODELS`.
REWARD_MODELS = tuple(_FAMILIES)


class GuaranteeWarning(UserWarning):
    """A simulation runs under settings where its algorithm's guarantee does not hold, such as
    Bernoulli rewards with ``noise_stds`` below :data:`~bai_lib.families.bernoulli.NOISE_STD` (it
    runs all the same: the book measures what such a misreading costs)."""


class CensoringWarning(UserWarning):
    """Some runs of :func:`~bai_lib.simulate` reached ``max_samples`` and were censored, or,
    before the runs, a :class:`~bai_lib.BetaPrior` makes that likely
    (:func:`~bai_lib.plan.top_tie_probability`)."""


#: A plan warns before its runs when it expects at least this many runs with exactly tied best
#: arms (``n_runs`` times :func:`~bai_lib.plan.top_tie_probability`).
TIE_WARNING_RUNS = 0.01


def top_tie_probability(a: ArrayLike, b: ArrayLike) -> float:
    """The probability that the generator's draw from independent ``Beta(a_i, b_i)`` priors has
    two or more arms tied *exactly* at the best mean.

    The generator returns a Beta draw that would round to 1 as ``1 - 2**-53`` and one that would
    round to 0 as ``5e-324`` (:func:`bai_lib._variates.beta_variate`), so shapes below 1 put mass on
    these two doubles: arm ``i`` lands on the top one with probability
    ``p_i = P(1 - X_i < 2**-53) = I_{2**-53}(b_i, a_i)`` (the draw is ``1 / (1 + ε)`` with
    ``ε ≈ (1 - X) / X``, which is 1 when ``1 + ε`` rounds to 1, and ``1 - 2**-52`` or less
    otherwise) and on the bottom one with
    ``q_i = P(X_i < 1.5 * 2**-1074)``, the leading term ``x**a_i / (a_i B(a_i, b_i))`` of the
    incomplete Beta function (exact to a relative ``1e-300`` there). Arms with equal means pay
    the same Bernoulli rewards to all sampling rules, so such a run never stops and is censored
    at ``max_samples``. The result is ``P(two or more arms on the top double)`` plus
    ``prod q_i`` (all arms on the bottom one), the first by a recurrence over the arms on
    (no top arm, one, two or more), which sums nonnegative terms only (no cancellation even
    when it is ``1e-300``).

    Parameters
    ----------
    a, b : array_like of float
        The shapes of the arms' priors (checked by :class:`~bai_lib.BetaPrior`).

    Returns
    -------
    float
        In ``[0, 1]``; about ``4.5e-17`` for two Jeffreys ``Beta(1/2, 1/2)`` arms, ``0.058`` for
        two ``Beta(0.02, 0.02)`` arms.
    """
    from scipy.special import betainc, betaln

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    p = betainc(b, a, 2.0**-53)
    log_q = a * (np.log(1.5) - 1074.0 * np.log(2.0)) - np.log(a) - betaln(a, b)
    none, one, more = 1.0, 0.0, 0.0
    for pi in p:
        none, one, more = none * (1.0 - pi), one * (1.0 - pi) + none * pi, more + one * pi
    return float(min(1.0, more + np.exp(log_q.sum())))


#: Largest ``max_samples``: the simulators count samples in int64 and may add one round of
#: ``k`` samples before they compare with the cap.
MAX_SAMPLES_LIMIT = 2**62


def _check_scale(values, name, zero_ok=False):
    """Refuse magnitudes outside :data:`bai_lib._validate.SCALE_RANGE` (0 allowed for means)."""
    lo, hi = V.SCALE_RANGE
    a = np.abs(np.asarray(values, dtype=float))
    bad = (a > hi) | ((a < lo) & ~((a == 0) & zero_ok))
    if np.any(bad):
        raise ValueError(f"{name} must have magnitudes in the supported range [{lo:g}, {hi:g}]"
                         f"{' (or 0)' if zero_ok else ''}, got {a[bad].ravel()[0]:g}")


def _fixed_means(means, n_runs, n_levels):
    try:
        raw = np.asarray(means)
    except (TypeError, ValueError):
        raise ValueError(f"means must be an array of real numbers, got {means!r}") from None
    if raw.dtype.kind not in "iuf" or V.mixed_sequence(means):  # no strings, bools, None
        raise ValueError(f"means must be an array of real numbers, got {means!r}")
    if raw.ndim in (1, 2) and raw.shape[-1] >= 1:
        check_memory(n_runs, raw.shape[-1], n_levels)  # before one instance becomes n_runs rows
    m = np.array(raw, dtype=np.float64)  # a copy: the caller's array is never modified
    if m.ndim == 1:
        m = np.broadcast_to(m, (n_runs, m.size))
    if m.ndim != 2 or m.shape[0] != n_runs:
        raise ValueError(f"means must have shape (k,) or (n_runs, k) = ({n_runs}, k), "
                         f"got {np.shape(means)}")
    if not np.all(np.isfinite(m)):
        raise ValueError("means must be finite")
    _check_scale(m, "means", zero_ok=True)
    return np.ascontiguousarray(m)


def _levels(deltas) -> tuple[float, ...]:
    if isinstance(deltas, (str, bytes)) or not hasattr(deltas, "__len__"):
        raise ValueError(f"deltas must be a sequence of confidence levels, got {deltas!r}")
    levels = tuple(V.confidence_level(d, f"deltas[{i}]") for i, d in enumerate(deltas))
    if not levels:
        raise ValueError("deltas must hold at least one confidence level")
    if len(set(levels)) != len(levels):
        raise ValueError(f"deltas must be distinct, got {list(deltas)!r}")
    return levels


def look_counts(look_at: Optional[Sequence[int]], look_every: int = 1) -> Optional[tuple]:
    """``look_at`` checked: ``None``, or a tuple of strictly increasing whole numbers of
    samples in ``[1, MAX_SAMPLES_LIMIT]``; a ``ValueError`` naming it otherwise, or when
    ``look_every > 1`` is given too."""
    if look_at is None:
        return None
    if look_every != 1:
        raise ValueError(f"look_at: give either look_at or look_every > 1, got look_every = "
                         f"{look_every}")
    if isinstance(look_at, (str, bytes)) or np.ndim(look_at) != 1 or len(look_at) == 0:
        raise ValueError(f"look_at must be a non-empty sequence of sample counts, got "
                         f"{look_at!r}")
    counts = tuple(V.integer(n, "look_at", 1, MAX_SAMPLES_LIMIT) for n in look_at)
    if any(b <= a for a, b in zip(counts, counts[1:])):
        raise ValueError(f"look_at must be strictly increasing, got {list(counts)}")
    return counts


@dataclass(frozen=True, eq=False)
class RunPlan:
    """One algorithm on ``n_runs`` instances at one or several confidence levels, checked.

    Attributes
    ----------
    algorithm : Algorithm
        The specification (a name is resolved to its default specification).
    prior : GaussianPrior, BetaPrior, GammaPrior or None
        The prior the instances are drawn from, or the prior the algorithm is given with fixed
        ``means``.
    noise_stds : ndarray, shape (k,)
        Known reward standard deviations (for Bernoulli rewards, the sub-Gaussian parameters the
        algorithm is given).
    deltas : tuple of float
        Distinct confidence levels, in the caller's order.
    n_runs, seed, first_run : int
        Runs ``first_run, ..., first_run + n_runs - 1`` of the seed.
    max_samples : int
        Censoring level of one run.
    means : ndarray, shape (n_runs, k), or None
        Fixed arm means, one row per run; ``None`` when they are drawn from the prior.
    rewards : {"gaussian", "bernoulli", "poisson"}
        The reward distribution (:data:`REWARD_MODELS`).
    look_every : int
        The stop is checked when the number of samples is a multiple of this (1: at every
        sample; :meth:`bai_lib.algorithms.Binding.with_looks`).
    look_at : tuple of int or None
        Or the increasing numbers of samples at which the stop is checked (``look_every`` is
        then 1).
    """

    algorithm: Algorithm
    prior: Optional[GaussianPrior | BetaPrior]
    noise_stds: np.ndarray
    deltas: tuple
    n_runs: int
    seed: int
    first_run: int
    max_samples: int
    means: Optional[np.ndarray]
    rewards: str = "gaussian"
    look_every: int = 1
    look_at: Optional[tuple] = None

    @property
    def batched(self) -> bool:
        """Whether the stop is checked at fewer samples than every one."""
        return self.look_every > 1 or self.look_at is not None

    @property
    def k(self) -> int:
        """Number of arms."""
        return int(self.noise_stds.size)

    @property
    def runs(self) -> range:
        """The run indices of the seed."""
        return range(self.first_run, self.first_run + self.n_runs)

    @property
    def means_given(self) -> bool:
        """Whether the means are fixed rather than drawn from the prior."""
        return self.means is not None

    def instance_means(self) -> np.ndarray:
        """The arm means of every run, shape ``(n_runs, k)``: the fixed ones, or those the
        prior's stream of the seed draws for these runs, as
        :meth:`~bai_lib.GaussianPrior.sample_means` does."""
        if self.means is not None:
            return self.means
        return reward_model(self.rewards).prior_means(self.prior, self.seed, self.n_runs,
                                                      self.first_run)

    @classmethod
    def build(cls, algorithm: Algorithm | str,
              prior: Optional[GaussianPrior | BetaPrior | GammaPrior],
              noise_stds: ArrayLike, deltas: Sequence[float], n_runs: int, seed: int, *,
              means: Optional[ArrayLike] = None, first_run: int = 0,
              max_samples: Optional[int] = None, rewards: Optional[str] = None,
              look_every: int = 1, look_at: Optional[Sequence[int]] = None) -> "RunPlan":
        """Check every argument (a ``ValueError`` naming the first bad one) and fill in the
        defaults: the arguments are those of :func:`bai_lib.simulate_deltas`."""
        levels = _levels(deltas)
        spec = resolve(algorithm)
        n_runs = V.integer(n_runs, "n_runs", 1)
        beta = isinstance(prior, BetaPrior)
        if rewards is None:
            rewards = (model_of_prior(prior) or _FAMILIES["gaussian"]).name
        V.choice(rewards, REWARD_MODELS, "rewards")
        model = reward_model(rewards)
        prior_name = model.prior.__name__
        if rewards not in spec.reward_models:
            able = sorted(name for name, cls in ALGORITHMS.items() if rewards in cls.reward_models)
            raise ValueError(f"rewards={rewards!r}: {spec.label} simulates "
                             f"{', '.join(spec.reward_models)} rewards only; {model.describe} "
                             f"arms run with {', '.join(able)}")
        if rewards == "gaussian":
            other = model_of_prior(prior)
            if other is not None and other is not model:
                raise ValueError(f"rewards='gaussian' with a {type(prior).__name__}: a "
                                 f"{type(prior).__name__} draws the means of {other.describe} "
                                 f"arms (rewards={other.name!r})")
            check_prior(prior, allow_none=True)
        elif prior is not None and not isinstance(prior, model.prior):
            raise ValueError(f"prior must be a {prior_name} or None with rewards={rewards!r} "
                             f"({model.describe} means lie in {list(model.mean_range)}), got "
                             f"{type(prior).__name__}")
        if noise_stds is None and model.noise_std is not None:
            noise_stds = model.noise_std
        if means is None:
            if prior is None:
                raise ValueError(f"prior is None: give a {prior_name}, or fixed means=...")
            k = prior.k
        else:
            means = _fixed_means(means, n_runs, len(levels))
            k = means.shape[1]
            lo, hi = model.mean_range
            outside = (means < lo) | (means > hi)
            if np.any(outside):
                raise ValueError(f"means must lie in [{lo:g}, {hi:g}] with rewards={rewards!r}, "
                                 f"got {means[outside][0]:g}")
            if prior is not None and prior.k != k:
                raise ValueError(f"means have k = {k} arms but the prior has {prior.k}")
            if prior is None and spec.uses_prior():
                raise ValueError(f"prior is None but {spec.label} uses the prior; give a "
                                 f"{prior_name}")
        if k < 2:
            raise ValueError(f"prior: need k >= 2 arms, got k = {k}")
        sig = np.ascontiguousarray(V.noise_stds(noise_stds, k))
        if rewards == "bernoulli" and np.any(sig < BERNOULLI_NOISE_STD):
            warnings.warn(
                f"noise_stds = {sig.min():g} is below {BERNOULLI_NOISE_STD} with "
                f"rewards='bernoulli': a Bernoulli reward of mean 1/2 is {BERNOULLI_NOISE_STD}-"
                f"sub-Gaussian and no less, so the widths are too narrow and the guarantee at "
                f"delta no longer holds (noise_stds=None gives {BERNOULLI_NOISE_STD})",
                GuaranteeWarning, stacklevel=3)
        if isinstance(prior, GaussianPrior):
            _check_scale(prior.means, "prior: means", zero_ok=True)
            _check_scale(prior.stds, "prior: stds")
        seed = V.integer(seed, "seed", 0, _rng.SEED_MAX)
        first_run = V.integer(first_run, "first_run", 0, _rng.RUN_MAX + 1 - n_runs)
        if max_samples is None:
            max_samples = spec.default_max_samples(k)
        max_samples = V.integer(max_samples, "max_samples", k, MAX_SAMPLES_LIMIT)
        if beta and means is None:
            tie = top_tie_probability(prior.a, prior.b)
            if n_runs * tie >= TIE_WARNING_RUNS:
                warnings.warn(
                    f"prior: {prior!r} puts probability {tie:.3g} on exactly tied best arms "
                    f"(Beta draws within 2**-53 of 1, or next to 0, round to one double): such a "
                    f"run never stops and goes to max_samples = {max_samples:,}; about "
                    f"{n_runs * tie:.3g} of the {n_runs:,} runs are expected to be censored "
                    f"there", CensoringWarning, stacklevel=3)
        look_every = V.integer(look_every, "look_every", 1, MAX_SAMPLES_LIMIT)
        if spec.simulates_in_law() and (look_every > 1 or look_at is not None):
            raise ValueError(f"look_every/look_at: {spec.label} is simulated by blocks, which "
                             f"check the stop at every round; batched looks run sample by "
                             f"sample (method='samples')")
        return cls(spec, prior, sig, levels, n_runs, seed, first_run, max_samples, means, rewards,
                   look_every, look_counts(look_at, look_every))
