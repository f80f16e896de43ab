"""Algorithm 1 of the paper (successive elimination with the indifference stop) and NoElim."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Optional

from .. import _validate as V
from ..kernels import elimination_run
from ..priors import delta0 as _delta0_of
from .base import Algorithm, BoundAlgorithm, gap_cost

__all__ = ["Elimination", "NoElim"]


@dataclass(frozen=True)
class Elimination(Algorithm):
    """Algorithm 1 of the paper: successive elimination with the indifference stop (Section 5).

    Parameters
    ----------
    delta0 : float, optional
        Indifference level ``Δ0 > 0``. Default: ``δ / (delta0_factor · L(H))``.
    delta0_factor : float, optional
        Divisor in ``Δ0 = δ / (factor · L(H))``; 4 as printed in Algorithm 1 (default), 1 in the
        released code of Experiment 2. Not together with ``delta0``.
    recommend : {"uniform", "empirical_best"}
        Recommendation at the indifference stop: a uniformly drawn active arm (as printed, and as
        released for Algorithm 1), or the arm with the largest empirical mean among the arms
        sampled in the last round (as released for NoElim). See
        :func:`bai_lib.kernels.elimination_run`.
    """

    delta0: Optional[float] = None
    delta0_factor: Optional[float] = None
    recommend: str = "uniform"

    name: ClassVar[str] = "elimination"
    short_label: ClassVar[str] = "Alg. 1 (elimination)"
    color: ClassVar[str] = "#1b6ca8"
    bounded: ClassVar[bool] = True
    needs_prior: ClassVar[bool] = True
    _pull_all: ClassVar[bool] = False

    def __post_init__(self):
        if self.delta0 is not None and self.delta0_factor is not None:
            raise ValueError("give either delta0 or delta0_factor, not both")
        if self.delta0 is not None:
            object.__setattr__(self, "delta0", V.positive(self.delta0, "delta0"))
        if self.delta0_factor is not None:
            object.__setattr__(self, "delta0_factor", V.positive(self.delta0_factor, "delta0_factor"))
        V.choice(self.recommend, ("uniform", "empirical_best"), "recommend")

    def uses_prior(self) -> bool:
        return self.delta0 is None

    def resolve_delta0(self, prior, delta: float) -> float:
        """The ``Δ0`` this specification uses for ``prior`` and ``delta``."""
        if self.delta0 is not None:
            return self.delta0
        factor = 4.0 if self.delta0_factor is None else self.delta0_factor
        return float(_delta0_of(prior, delta, factor=factor))

    def bind(self, prior, noise_stds, delta, max_samples):
        d0 = self.resolve_delta0(prior, delta)
        pull_all = self._pull_all
        best = self.recommend == "empirical_best"
        sig = noise_stds

        def run(state, mu, max_samples=max_samples):
            return elimination_run(state, mu, sig, delta, d0, max_samples, pull_all, best, False)

        return BoundAlgorithm(run, d0, lambda means: gap_cost(means, sig, d0, pull_all))


@dataclass(frozen=True)
class NoElim(Elimination):
    """NoElim (paper, appendix): Algorithm 1 that keeps sampling every arm in every round.

    Same options as :class:`Elimination`. The released code recommends the empirical best arm
    (``recommend="empirical_best"``); the printed algorithm, and the default here, a uniformly
    drawn active arm.
    """

    name: ClassVar[str] = "noelim"
    short_label: ClassVar[str] = "NoElim"
    color: ClassVar[str] = "#7a5195"
    _pull_all: ClassVar[bool] = True
