"""Algorithm specifications: which algorithm to simulate, under which conventions.

Each algorithm of the paper's Section 6 is a small frozen object that checks its options once,
computes its constants once (``Δ0``, the TTUCB constant ``2 C_G``, ...) and binds them to its
compiled kernel in :mod:`bai_lib.kernels`. :func:`bai_lib.simulate` accepts a specification or
one of the names in :data:`ALGORITHMS` (each name stands for the specification with default
options), and every :class:`~bai_lib.simulation.SimulationResult` carries the specification it
was produced with.

Conventions
-----------
Where the paper's text and the code the authors released differ, both are available, and each
option says which source it follows:

========================  ===========================  ==========================================
specification, option     as printed in the paper       as in the released code
========================  ===========================  ==========================================
``Elimination.recommend`` ``"uniform"`` (default)       ``"uniform"``
``NoElim.recommend``      ``"uniform"`` (default)       ``"empirical_best"``
``Elimination/NoElim``    ``delta0_factor=4`` (default) 4 (Experiment 1, 3), 1 (Experiment 2)
``TTTS.challenger``       (not specified)               ``"released"``; default ``"resample"``
``TTUCB.threshold``       ``"printed"``: ``√c``         ``"released"``: ``√(2c)`` (default)
``TTUCB.log_term``        ``"printed"``: ``log(t/2)``   ``"released"``: ``log((t-1)/2)`` (default)
``TTUCB.sampling``        (not specified)               ``"released"`` (default)
========================  ===========================  ==========================================

The paper's own algorithms default to the printed text. TTUCB defaults to the released code:
its printed threshold drops the factor 2 of the Gaussian GLR test it cites.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Callable, ClassVar, Optional

import numpy as np

from . import kernels as _k
from .priors import GaussianPrior
from .priors import delta0 as _delta0_of
from .stopping import TTUCB_LOG_TERMS, TTUCB_THRESHOLDS, ttucb_two_cg

__all__ = ["Algorithm", "BoundAlgorithm", "Elimination", "NoElim", "TTTS", "TTUCB", "ALGORITHMS",
           "resolve"]


def _choice(value, options, name):
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"{name} must be one of {sorted(options)}, got {value!r}")


def _positive(value, name):
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}") from None
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite positive number, got {value!r}")
    return v


@dataclass(frozen=True)
class BoundAlgorithm:
    """A specification bound to a prior, noise levels and ``δ``: what :func:`simulate` runs.

    Attributes
    ----------
    run : callable
        ``run(state, mu, max_samples=...) -> (tau, recommendation, censored, stop_reason)``.
    delta0 : float or None
        Indifference level in force (elimination algorithms only).
    cost_keys : callable
        ``cost_keys(means) -> ndarray``: a rough relative cost per run, used only to hand out the
        long runs first.
    """

    run: Callable
    delta0: Optional[float]
    cost_keys: Callable


def _gap_cost(means, noise_stds, floor, pull_all):
    """``sum_j (σ_best² + σ_j²) / max(gap_j, floor)²`` (times ``k·max`` for NoElim)."""
    k = means.shape[1]
    rows = np.arange(means.shape[0])
    best = np.argmax(means, axis=1)
    gaps = means[rows, best][:, None] - means
    var = noise_stds[best][:, None] ** 2 + (noise_stds**2)[None, :]
    per_arm = var / np.maximum(gaps, floor) ** 2
    per_arm[rows, best] = 0.0
    return k * per_arm.max(axis=1) if pull_all else per_arm.sum(axis=1)


class Algorithm:
    """Base of the algorithm specifications (frozen dataclasses).

    Subclasses set :attr:`name` (the string alias accepted by :func:`bai_lib.simulate`),
    :attr:`bounded` (whether the stopping time is bounded, so that a normal interval for its
    mean is meaningful) and implement :meth:`bind`.
    """

    name: ClassVar[str] = ""
    bounded: ClassVar[bool] = False

    def bind(self, prior: GaussianPrior, noise_stds: np.ndarray, delta: float,
             max_samples: int) -> BoundAlgorithm:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def label(self) -> str:
        """Short display name: the algorithm's name plus every option that differs from its default."""
        base = _LABELS.get(self.name, self.name)
        changed = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)
                   if getattr(self, f.name) != f.default]
        return f"{base} ({', '.join(changed)})" if changed else base


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
    bounded: ClassVar[bool] = True
    _pull_all: ClassVar[bool] = False

    def __post_init__(self):
        if self.delta0 is not None and self.delta0_factor is not None:
            raise ValueError("give either delta0 or delta0_factor, not both")
        if self.delta0 is not None:
            object.__setattr__(self, "delta0", _positive(self.delta0, "delta0"))
        if self.delta0_factor is not None:
            object.__setattr__(self, "delta0_factor", _positive(self.delta0_factor, "delta0_factor"))
        _choice(self.recommend, ("uniform", "empirical_best"), "recommend")

    def resolve_delta0(self, prior: GaussianPrior, delta: float) -> float:
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
            return _k.elimination_run(state, mu, sig, delta, d0, max_samples, pull_all, best, False)

        return BoundAlgorithm(run, d0, lambda means: _gap_cost(means, sig, d0, pull_all))


@dataclass(frozen=True)
class NoElim(Elimination):
    """NoElim (paper, appendix): Algorithm 1 that keeps sampling every arm in every round.

    Same options as :class:`Elimination`. The released code recommends the empirical best arm
    (``recommend="empirical_best"``); the printed algorithm, and the default here, a uniformly
    drawn active arm.
    """

    name: ClassVar[str] = "noelim"
    _pull_all: ClassVar[bool] = True


@dataclass(frozen=True)
class TTTS(Algorithm):
    """Top-Two Thompson Sampling (Russo, 2016) with ``β = 1/2`` and Chernoff's stopping rule.

    Parameters
    ----------
    challenger : {"resample", "released"}
        For ``k > 2``: re-draw the posterior until its argmax differs from the leader (Russo's
        rule, default; see :func:`bai_lib.kernels.ttts_run` for the fallback), or take the argmax
        over the other arms of one fresh draw (the released code). Equal in law for ``k = 2``.
    """

    challenger: str = "resample"

    name: ClassVar[str] = "ttts"

    def __post_init__(self):
        _choice(self.challenger, ("resample", "released"), "challenger")

    def bind(self, prior, noise_stds, delta, max_samples):
        pm = np.ascontiguousarray(prior.means, dtype=np.float64)
        ps = np.ascontiguousarray(prior.stds, dtype=np.float64)
        released = self.challenger == "released"
        sig = noise_stds

        def run(state, mu, max_samples=max_samples):
            return _k.ttts_run(state, mu, sig, pm, ps, delta, max_samples, released)

        return BoundAlgorithm(run, None, lambda means: _gap_cost(means, sig, 1e-12, False))


@dataclass(frozen=True)
class TTUCB(Algorithm):
    """TTUCB (Jourdan & Degenne, 2022) with its GLR stopping rule; semantics in
    :func:`bai_lib.kernels.ttucb_run`.

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
    """

    threshold: str = "released"
    log_term: str = "released"
    sampling: str = "released"
    cg: str = "approx"
    noise_aware: bool = True
    beta: float = 0.5

    name: ClassVar[str] = "ttucb"

    def __post_init__(self):
        _choice(self.threshold, TTUCB_THRESHOLDS, "threshold")
        _choice(self.log_term, TTUCB_LOG_TERMS, "log_term")
        _choice(self.sampling, ("released", "jourdan"), "sampling")
        _choice(self.cg, ("approx", "exact"), "cg")
        if not isinstance(self.noise_aware, (bool, np.bool_)):
            raise ValueError(f"noise_aware must be True or False, got {self.noise_aware!r}")
        b = _positive(self.beta, "beta")
        if not b < 1.0:
            raise ValueError(f"beta must lie in (0, 1), got {self.beta!r}")
        object.__setattr__(self, "beta", b)

    @classmethod
    def as_printed(cls, **overrides) -> "TTUCB":
        """The stopping rule as printed in the appendix, with Jourdan & Degenne's sampling rule."""
        opts = dict(threshold="printed", log_term="printed", sampling="jourdan")
        opts.update(overrides)
        return cls(**opts)

    def bind(self, prior, noise_stds, delta, max_samples):
        two_cg = ttucb_two_cg(prior.k, delta, self.cg)
        c_scale = TTUCB_THRESHOLDS[self.threshold]
        log_shift = TTUCB_LOG_TERMS[self.log_term]
        released = self.sampling == "released"
        coef = _k.TTUCB_RELEASED_UCB_COEF if released else _k.TTUCB_UCB_COEF
        shift = 1.0 if released else 0.0
        sig = noise_stds
        var = np.ascontiguousarray(sig**2 if self.noise_aware else np.ones_like(sig))
        beta = self.beta

        def run(state, mu, max_samples=max_samples):
            return _k.ttucb_run(state, mu, sig, var, two_cg, c_scale, log_shift, coef, shift, beta,
                                released, max_samples)

        return BoundAlgorithm(run, None, lambda means: _gap_cost(means, sig, 1e-12, False))


#: The string aliases accepted by :func:`bai_lib.simulate`, each for its default specification.
ALGORITHMS = {cls.name: cls for cls in (Elimination, NoElim, TTTS, TTUCB)}

_LABELS = {"elimination": "Alg. 1", "noelim": "NoElim", "ttts": "TTTS", "ttucb": "TTUCB"}


def resolve(algorithm) -> Algorithm:
    """Return the specification for a specification or a name in :data:`ALGORITHMS`."""
    if isinstance(algorithm, Algorithm):
        return algorithm
    if isinstance(algorithm, str) and algorithm in ALGORITHMS:
        return ALGORITHMS[algorithm]()
    raise ValueError(f"algorithm must be one of {tuple(ALGORITHMS)} or a specification such as "
                     f"Elimination(...), got {algorithm!r}")
