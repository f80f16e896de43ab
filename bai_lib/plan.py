"""What a simulation runs, checked once: the :class:`RunPlan`.

Orchestration layer, below :mod:`bai_lib.simulation`. A plan carries one algorithm
specification, the instances (a prior to draw them from, or fixed means), the noise levels, the
confidence levels, the runs and the seed, and the censoring level. :meth:`RunPlan.build` checks
every argument and fills in the defaults; :func:`bai_lib.simulate`, :func:`bai_lib.simulate_deltas`
and, through them, the PoE estimators, the paper's runner and the sweep cells all go through it,
so the same bad input gets the same message everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike

from . import _rng
from . import _validate as V
from .algorithms import Algorithm, resolve
from .executor import check_memory
from .priors import GaussianPrior, check_prior

__all__ = ["RunPlan", "MAX_SAMPLES_LIMIT"]

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


@dataclass(frozen=True, eq=False)
class RunPlan:
    """One algorithm on ``n_runs`` instances at one or several confidence levels, checked.

    Attributes
    ----------
    algorithm : Algorithm
        The specification (a name is resolved to its default specification).
    prior : GaussianPrior or None
        The prior the instances are drawn from, or the prior the algorithm is given with fixed
        ``means``.
    noise_stds : ndarray, shape (k,)
        Known reward standard deviations.
    deltas : tuple of float
        Distinct confidence levels, in the caller's order.
    n_runs, seed, first_run : int
        Runs ``first_run, ..., first_run + n_runs - 1`` of the seed.
    max_samples : int
        Censoring level of one run.
    means : ndarray, shape (n_runs, k), or None
        Fixed arm means, one row per run; ``None`` when they are drawn from the prior.
    """

    algorithm: Algorithm
    prior: Optional[GaussianPrior]
    noise_stds: np.ndarray
    deltas: tuple
    n_runs: int
    seed: int
    first_run: int
    max_samples: int
    means: Optional[np.ndarray]

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
        return _rng.prior_means(self.prior.means, self.prior.stds, self.seed, self.n_runs,
                                first_run=self.first_run)

    @classmethod
    def build(cls, algorithm: Algorithm | str, prior: Optional[GaussianPrior],
              noise_stds: ArrayLike, deltas: Sequence[float], n_runs: int, seed: int, *,
              means: Optional[ArrayLike] = None, first_run: int = 0,
              max_samples: Optional[int] = None) -> "RunPlan":
        """Check every argument (a ``ValueError`` naming the first bad one) and fill in the
        defaults: the arguments are those of :func:`bai_lib.simulate_deltas`."""
        levels = _levels(deltas)
        spec = resolve(algorithm)
        n_runs = V.integer(n_runs, "n_runs", 1)
        check_prior(prior, allow_none=True)
        if means is None:
            if prior is None:
                raise ValueError("prior is None: give a GaussianPrior, or fixed means=...")
            k = prior.k
        else:
            means = _fixed_means(means, n_runs, len(levels))
            k = means.shape[1]
            if prior is not None and prior.k != k:
                raise ValueError(f"means have k = {k} arms but the prior has {prior.k}")
            if prior is None and spec.uses_prior():
                raise ValueError(f"prior is None but {spec.label} uses the prior; give a "
                                 "GaussianPrior")
        if k < 2:
            raise ValueError(f"prior: need k >= 2 arms, got k = {k}")
        sig = np.ascontiguousarray(V.noise_stds(noise_stds, k))
        if prior is not None:
            _check_scale(prior.means, "prior: means", zero_ok=True)
            _check_scale(prior.stds, "prior: stds")
        seed = V.integer(seed, "seed", 0, _rng.SEED_MAX)
        first_run = V.integer(first_run, "first_run", 0, _rng.RUN_MAX + 1 - n_runs)
        if max_samples is None:
            max_samples = spec.default_max_samples(k)
        max_samples = V.integer(max_samples, "max_samples", k, MAX_SAMPLES_LIMIT)
        return cls(spec, prior, sig, levels, n_runs, seed, first_run, max_samples, means)
