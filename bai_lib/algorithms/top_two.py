"""Top-two algorithms with a GLR stopping rule: TTTS, TTUCB and EB-TC, for any ``β``.

All three sample a *leader* with proportion ``β`` and otherwise a *challenger*, and stop with a
Gaussian GLR test checked by :func:`bai_lib.kernels.glr_passes`; they differ in how the leader
and the challenger are chosen and in the threshold.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .. import _validate as V
from ..kernels import (GLR_THRESHOLDS, TTUCB_RELEASED_UCB_COEF, TTUCB_UCB_COEF, ttts_run,
                       ttucb_run)
from ..stopping import TTUCB_LOG_TERMS, TTUCB_THRESHOLDS, ttucb_two_cg
from .base import Algorithm, BoundAlgorithm, gap_cost

__all__ = ["TTTS", "TTUCB", "EBTC"]


@dataclass(frozen=True)
class TTTS(Algorithm):
    """Top-Two Thompson Sampling (Russo, 2016) with Chernoff's stopping rule.

    Parameters
    ----------
    challenger : {"resample", "released"}
        For ``k > 2``: re-draw the posterior until its argmax differs from the leader (Russo's
        rule, default; see :func:`bai_lib.kernels.ttts_run` for the fallback), or take the argmax
        over the other arms of one fresh draw (the released code). Equal in law for ``k = 2``.
        With many arms the released rule almost always picks the runner-up, so arms far below
        it are starved and the GLR test, which needs every arm, waits for them: on ten arms
        with means evenly spaced from 1 to 0 (``δ = 0.01``) no run stopped within ``10^6``
        samples, against about ``10^4`` with ``"resample"``.
    beta : float
        Probability of sampling the leader, in ``(0, 1)``; 1/2 in the paper.
    threshold : {"chernoff", "gk2016"}
        GLR threshold ``β(t, δ)``: ``log(t/δ)`` as in the paper's appendix (default) or
        ``log((log t + 1)/δ)`` (:data:`bai_lib.kernels.GLR_THRESHOLDS`).
    """

    challenger: str = "resample"
    beta: float = 0.5
    threshold: str = "chernoff"

    name: ClassVar[str] = "ttts"
    short_label: ClassVar[str] = "TTTS"
    color: ClassVar[str] = "#d1495b"
    needs_prior: ClassVar[bool] = True

    def __post_init__(self):
        V.choice(self.challenger, ("resample", "released"), "challenger")
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        V.choice(self.threshold, GLR_THRESHOLDS, "threshold")

    def bind(self, prior, noise_stds, delta, max_samples):
        pm = np.ascontiguousarray(prior.means, dtype=np.float64)
        ps = np.ascontiguousarray(prior.stds, dtype=np.float64)
        released = self.challenger == "released"
        rule = GLR_THRESHOLDS[self.threshold]
        beta = self.beta
        sig = noise_stds

        def run(state, mu, max_samples=max_samples):
            return ttts_run(state, mu, sig, pm, ps, delta, rule, beta, max_samples, released)

        return BoundAlgorithm(run, None, lambda means: gap_cost(means, sig))


def _ttucb_bound(noise_stds, two_cg, c_scale, log_shift, coef, shift, beta, released, var,
                 max_samples):
    sig = noise_stds

    def run(state, mu, max_samples=max_samples):
        return ttucb_run(state, mu, sig, var, two_cg, c_scale, log_shift, coef, shift, beta,
                         released, max_samples)

    return BoundAlgorithm(run, None, lambda means: gap_cost(means, sig))


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
    short_label: ClassVar[str] = "TTUCB"
    color: ClassVar[str] = "#edae49"

    def __post_init__(self):
        V.choice(self.threshold, TTUCB_THRESHOLDS, "threshold")
        V.choice(self.log_term, TTUCB_LOG_TERMS, "log_term")
        V.choice(self.sampling, ("released", "jourdan"), "sampling")
        V.choice(self.cg, ("approx", "exact"), "cg")
        V.flag(self.noise_aware, "noise_aware")
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))

    @classmethod
    def as_printed(cls, **overrides) -> "TTUCB":
        """The stopping rule as printed in the appendix, with Jourdan & Degenne's sampling rule."""
        opts = dict(threshold="printed", log_term="printed", sampling="jourdan")
        opts.update(overrides)
        return cls(**opts)

    def bind(self, prior, noise_stds, delta, max_samples):
        released = self.sampling == "released"
        var = np.ascontiguousarray(noise_stds**2 if self.noise_aware else np.ones_like(noise_stds))
        return _ttucb_bound(
            noise_stds, ttucb_two_cg(noise_stds.size, delta, self.cg),
            TTUCB_THRESHOLDS[self.threshold], TTUCB_LOG_TERMS[self.log_term],
            TTUCB_RELEASED_UCB_COEF if released else TTUCB_UCB_COEF, 1.0 if released else 0.0,
            self.beta, released, var, max_samples)


@dataclass(frozen=True)
class EBTC(Algorithm):
    """EB-TC (Jourdan, Degenne & Kaufmann, 2023): empirical-best leader, transportation-cost challenger.

    The leader is the empirical best arm ``argmax_i μ̂_i`` (no exploration bonus), the challenger
    ``argmin_{j≠B} (μ̂_B − μ̂_j)_+² / (σ_B²/N_B + σ_j²/N_j)``, and the leader is sampled with
    proportion ``β`` by per-leader tracking, the current step counted. It stops with the GLR test
    ``Z ≥ c(t, δ)``, ``c(t, δ) = 2 C_G(log((k−1)/δ)/2) + 4 log(4 + log(t/2))``. It is the
    kernel :func:`bai_lib.kernels.ttucb_run` with a zero bonus and Jourdan & Degenne's
    conventions.

    Parameters
    ----------
    beta : float
        Tracking proportion in ``(0, 1)``; 1/2 by default.
    cg : {"approx", "exact"}
        ``C_G`` as for :class:`TTUCB`.
    """

    beta: float = 0.5
    cg: str = "approx"

    name: ClassVar[str] = "ebtc"
    short_label: ClassVar[str] = "EB-TC"
    color: ClassVar[str] = "#66a182"

    def __post_init__(self):
        object.__setattr__(self, "beta", V.open_unit(self.beta, "beta"))
        V.choice(self.cg, ("approx", "exact"), "cg")

    def bind(self, prior, noise_stds, delta, max_samples):
        var = np.ascontiguousarray(noise_stds**2)
        return _ttucb_bound(
            noise_stds, ttucb_two_cg(noise_stds.size, delta, self.cg),
            TTUCB_THRESHOLDS["released"], TTUCB_LOG_TERMS["printed"], 0.0, 0.0,
            self.beta, False, var, max_samples)
