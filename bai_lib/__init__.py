"""bai_lib: computations for *Fixed Confidence Best Arm Identification in the Bayesian Setting*.

Layers
------
- statistics: :mod:`bai_lib.stats` (intervals, tests and estimators, used by every layer)
- math: :mod:`bai_lib.priors` (prior, ``L(H)``, volume lemma, ``Δ0``; the single integral in
  :mod:`bai_lib.quadrature`), :mod:`bai_lib.beta_prior` (the same for Beta priors over
  Bernoulli arms), :mod:`bai_lib.gamma_prior` (Gamma priors over Poisson arms),
  :mod:`bai_lib.bounds`,
  :mod:`bai_lib.opt2` (the relaxed problem of Section 4), :mod:`bai_lib.optimal` (the
  Bayes-optimal stopping rule for two arms), :mod:`bai_lib.oracle` (``T*(μ)``),
  :mod:`bai_lib.stopping` (the GLR thresholds),
  :mod:`bai_lib.confidence` (``Conf(i,t)``, indifference caps)
- kernels: :mod:`bai_lib.kernels` (numba simulators) on :mod:`bai_lib._rng`
- algorithm specifications: :mod:`bai_lib.algorithms` (options, conventions, kernel binding)
- orchestration: :mod:`bai_lib.simulation` (:func:`simulate`), :mod:`bai_lib.cost`
  (:func:`estimate_cost`, before the runs), :mod:`bai_lib.result`
  (:class:`SimulationResult`), :mod:`bai_lib.executor` (threads, progress, Ctrl-C, memory),
  :mod:`bai_lib.experiments`,
  :mod:`bai_lib.trace`, :mod:`bai_lib.poe` (the PoE by importance sampling near ties); at scale
  :mod:`bai_lib.cell` (one configuration), :mod:`bai_lib.sweep` (TOML grids, local or Dask
  executor) and :mod:`bai_lib.store` (the per-run Parquet store; these two need the ``scale``
  extra)
- presentation: :mod:`bai_lib.plotting`; published numbers: :mod:`bai_lib.published`
- command line: :mod:`bai_lib.cli` (``bai-lib run | sweep | summary``, ``python -m bai_lib``)
"""

from . import bounds, opt2, published
from .algorithms import (EBTC, LUCB, TTTS, TTUCB, Elimination, NoElim, SamplingRule,
                         TrackAndStop)
from .beta_prior import BetaPrior
from .cost import CostWarning, estimate_cost
from .gamma_prior import GammaPrior
from .oracle import characteristic_time
from .plan import CensoringWarning, GuaranteeWarning
from .priors import GaussianPrior, delta0
from .result import SimulationResult
from .simulation import simulate, simulate_deltas

__all__ = ["GaussianPrior", "BetaPrior", "GammaPrior", "delta0", "simulate", "simulate_deltas",
           "estimate_cost", "SimulationResult", "CensoringWarning", "CostWarning",
           "GuaranteeWarning",
           "Elimination", "NoElim", "TTTS", "TTUCB", "EBTC", "TrackAndStop", "LUCB", "SamplingRule", "characteristic_time",
           "bounds", "opt2", "published"]

from ._version import VERSION as __version__  # noqa: E402
