"""Stopping thresholds of the top-two algorithms and what they imply for a given gap.

Math layer. The paper's Appendix "Experimental details" fixes the stopping rules of the two
frequentist baselines. Written for two arms with equal noise :math:`\\sigma`, both stop when

.. math:: \\frac{(\\hat\\mu_1 - \\hat\\mu_2)^2}{\\sigma^2(1/N_1 + 1/N_2)} \\ge \\beta(t),

with :math:`\\beta(t) = 2\\log(t/\\delta)` for TTTS (Chernoff's GLR with :math:`C = 1`,
:math:`\\alpha = 1`) and :math:`\\beta(t) = s\\,c(t, \\delta)` for TTUCB, where

.. math:: c(t,\\delta) = 2C_G\\Big(\\frac12\\log\\frac{k-1}{\\delta}\\Big)
    + 4\\log\\Big(4 + \\log\\frac{t - a}{2}\\Big).

The appendix prints :math:`s = 1` (normalised gap against :math:`\\sqrt c`) and
:math:`a = 0`; the authors' released code uses :math:`s = 2` (normalised gap against
:math:`\\sqrt{2c}`, the Gaussian GLR test of Jourdan & Degenne) and :math:`a = 1`. Both
conventions are in :data:`TTUCB_THRESHOLDS` and :data:`TTUCB_LOG_TERMS`; the released ones are
the defaults. With the two arms sampled equally, :math:`1/N_1 + 1/N_2 = 4/t`, so a run
on an instance with gap :math:`g` ends near the fixed point :math:`t = 4\\sigma^2\\beta(t)/g^2`,
which is what :func:`predicted_stopping_time` computes: the :math:`1/g^2` law behind Theorem 2.

Every GLR threshold is defined here once, as a compiled scalar function the simulators call
(:func:`glr_beta`, :func:`ttucb_threshold`); :func:`threshold` evaluates the same functions
over arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V

__all__ = ["GLR_THRESHOLDS", "glr_beta", "TTUCB_THRESHOLDS", "TTUCB_LOG_TERMS", "ttucb_cg",
           "ttucb_two_cg", "ttucb_threshold", "glr_threshold", "ttucb_glr_threshold",
           "threshold", "predicted_stopping_time", "gap_for_stopping_time"]

#: Codes of the GLR (Chernoff) stopping thresholds ``β(t, δ)`` understood by :func:`glr_beta`:
#: ``"chernoff"`` is ``log(t/δ)`` (Chernoff's rule with ``C = α = 1``, the paper's TTTS);
#: ``"gk2016"`` is ``log((log t + 1)/δ)``, the threshold Garivier & Kaufmann (2016) use in their
#: experiments (smaller than the one their theorem covers).
GLR_THRESHOLDS = {"chernoff": 0, "gk2016": 1}

#: The TTUCB threshold conventions, each the multiplier ``s`` of ``c(t, δ)`` on the squared
#: normalised gap.
#: ``"released"``: 2 (gap against ``sqrt(2c)``, the released code and Jourdan & Degenne's GLR
#: test); ``"printed"``: 1 (gap against ``sqrt(c)``, as printed in the paper's appendix).
TTUCB_THRESHOLDS = {"released": 2.0, "printed": 1.0}
#: TTUCB ``log`` term conventions: the shift ``a`` in ``log((t - a)/2)``; ``"released"``: 1
#: (the released code evaluates ``log((T-1)/2)`` with ``T`` samples taken), ``"printed"``: 0.
TTUCB_LOG_TERMS = {"released": 1.0, "printed": 0.0}


@njit(cache=True, nogil=True)
def glr_beta(t: float, delta: float, rule: int) -> float:
    """GLR threshold ``β(t, δ)`` for rule code ``rule`` (:data:`GLR_THRESHOLDS`); increasing in ``t``.

    The Gaussian GLR test stops once ``min_j Z_{best,j} >= β(t, δ)``, i.e. once the squared
    normalised gap of :func:`threshold` reaches ``2β``.
    """
    if rule == 0:
        return math.log(t / delta)
    return math.log((math.log(t) + 1.0) / delta)


@njit(cache=True, nogil=True)
def ttucb_threshold(t: float, two_cg: float, log_shift: float) -> float:
    """``c(t, δ) = 2 C_G(log((k-1)/δ) / 2) + 4 log(4 + log((t - log_shift)/2))``.

    ``two_cg`` is the first term, computed once by :func:`ttucb_two_cg`; ``log_shift`` is the
    ``a`` of :data:`TTUCB_LOG_TERMS` (0 as printed in the paper's appendix, 1 in the released
    code).
    """
    return two_cg + 4.0 * math.log(4.0 + math.log((t - log_shift) / 2.0))


_glr_beta_array = np.vectorize(glr_beta, otypes=[float])
_ttucb_threshold_array = np.vectorize(ttucb_threshold, otypes=[float])


def ttucb_cg(x: float, method: str = "approx") -> float:
    """The function ``C_G(x)`` of the TTUCB stopping threshold.

    Paper, Appendix "Experimental details" (after Jourdan & Degenne, 2022):

    .. math:: C_G(x) = \\min_{\\lambda \\in (1/2, 1]}
        \\frac{2\\lambda - 2\\lambda\\log(4\\lambda) + \\log\\zeta(2\\lambda)
        - \\frac12 \\log(1-\\lambda) + x}{\\lambda}

    Parameters
    ----------
    x : float
        Argument, ``x > 0`` (the threshold uses ``x = log((k-1)/delta) / 2``).
    method : {"approx", "exact"}
        ``"approx"``: ``x + log x``, the approximation used in the paper's
        experiments.  ``"exact"``: numerical minimisation over ``lambda``
        (the objective is infinite at both ends of ``(1/2, 1)``): a grid
        search followed by bounded Brent refinement.
    """
    x = V.positive(x, "x")
    if method == "approx":
        return x + math.log(x)
    if method != "exact":
        raise ValueError(f"cg must be 'approx' or 'exact', got {method!r}")
    from scipy.optimize import minimize_scalar
    from scipy.special import zeta

    def objective(lam):
        lam = np.asarray(lam, dtype=float)
        return (
            2 * lam - 2 * lam * np.log(4 * lam) + np.log(zeta(2 * lam)) - 0.5 * np.log1p(-lam) + x
        ) / lam

    grid = np.linspace(0.5, 1.0, 2001)[1:-1]
    vals = objective(grid)
    j = int(np.argmin(vals))
    lo = grid[max(j - 1, 0)]
    hi = grid[min(j + 1, grid.size - 1)]
    res = minimize_scalar(
        lambda lam: float(objective(lam)), bounds=(lo, hi), method="bounded",
        options={"xatol": 1e-13},
    )
    return float(min(res.fun, vals[j]))


def ttucb_two_cg(k: int, delta: float, cg: str = "approx") -> float:
    """The constant term ``2 C_G(log((k-1)/δ) / 2)`` of TTUCB's ``c(t, δ)``, computed once per
    run set."""
    k = V.integer(k, "k", 2)
    delta = V.open_unit(delta, "delta")
    return 2.0 * ttucb_cg(0.5 * math.log((k - 1) / delta), cg)


def _times(t) -> np.ndarray:
    t = V.reals(t, "t")
    if np.any(t < 2):
        raise ValueError(f"t must be >= 2, got {t.tolist()}")
    return t


def glr_threshold(t: ArrayLike, delta: float, *,
                  threshold: str = "chernoff") -> float | np.ndarray:
    """``2 β(t, δ)`` (:func:`glr_beta`, rule ``threshold`` of :data:`GLR_THRESHOLDS`): the level
    of the squared normalised gap at which TTTS, Track-and-Stop and a
    :class:`~bai_lib.algorithms.SamplingRule` stop on two arms."""
    rule = GLR_THRESHOLDS[V.choice(threshold, GLR_THRESHOLDS, "threshold")]
    delta = V.open_unit(delta, "delta")
    out = 2.0 * _glr_beta_array(_times(t), delta, rule)
    return float(out) if out.ndim == 0 else out


def ttucb_glr_threshold(t: ArrayLike, delta: float, k: int = 2, *, cg: str = "approx",
                        rule: str = "released", log_term: str = "released") -> float | np.ndarray:
    """``s c(t, δ)`` (:func:`ttucb_threshold`, ``s`` of :data:`TTUCB_THRESHOLDS`, the shift of
    :data:`TTUCB_LOG_TERMS`): the level of the squared normalised gap at which TTUCB and EB-TC
    stop on two arms."""
    delta = V.open_unit(delta, "delta")
    k = V.integer(k, "k", 2)
    V.choice(rule, TTUCB_THRESHOLDS, "rule")
    V.choice(log_term, TTUCB_LOG_TERMS, "log_term")
    out = TTUCB_THRESHOLDS[rule] * _ttucb_threshold_array(_times(t), ttucb_two_cg(k, delta, cg),
                                                          TTUCB_LOG_TERMS[log_term])
    return float(out) if out.ndim == 0 else out


def threshold(algorithm: Any, t: ArrayLike, delta: float, k: int = 2, cg: str = "approx",
              rule: str = "released", log_term: str = "released") -> float | np.ndarray:
    """Threshold :math:`\\beta(t)` on :math:`(\\hat\\mu_1-\\hat\\mu_2)^2 / (\\sigma^2(1/N_1+1/N_2))`.

    Parameters
    ----------
    algorithm : {"ttts", "ttucb"} or specification
        The paper's two rules by name (TTTS: :func:`glr_threshold`; TTUCB:
        :func:`ttucb_glr_threshold` with ``cg``, ``rule`` and ``log_term``), or a GLR
        specification (:class:`~bai_lib.algorithms.TTTS`, :class:`~bai_lib.algorithms.TTUCB`,
        :class:`~bai_lib.algorithms.EBTC`, :class:`~bai_lib.algorithms.TrackAndStop`, a
        :class:`~bai_lib.algorithms.SamplingRule`), whose own options then decide
        (its ``stopping_threshold`` method; ``cg``, ``rule`` and ``log_term`` are not used).
    t : float or array
        Total number of samples, ``t >= 2``.
    delta : float
        Confidence level in (0, 1).
    k : int, default 2
        Number of arms (enters TTUCB's :math:`C_G` term).
    cg : {"approx", "exact"}
        Variant of :func:`ttucb_cg` for TTUCB.
    rule : {"released", "printed"}
        TTUCB threshold convention (:data:`TTUCB_THRESHOLDS`): ``2c`` (released) or ``c``.
    log_term : {"released", "printed"}
        TTUCB ``log((t-1)/2)`` (released) or ``log(t/2)`` (:data:`TTUCB_LOG_TERMS`).
    """
    if callable(getattr(algorithm, "stopping_threshold", None)):
        return algorithm.stopping_threshold(t, delta, k)
    if V.choice(algorithm, ("ttts", "ttucb"), "algorithm") == "ttts":
        return glr_threshold(t, delta)
    return ttucb_glr_threshold(t, delta, k, cg=cg, rule=rule, log_term=log_term)


def predicted_stopping_time(algorithm: Any, gap: ArrayLike, delta: float,
                            noise_stds: ArrayLike = 1.0, cg: str = "approx",
                            rule: str = "released") -> float | np.ndarray:
    """Fixed point of :math:`t = 4\\sigma^2\\beta(t)/g^2` for two equally sampled arms.

    A noise-free caricature of a run on an instance with gap ``g``: it ignores the random
    fluctuation of the empirical gap, but captures the :math:`\\log(1/\\delta)/g^2` scaling.
    Solved by fixed-point iteration (the map is a contraction for :math:`t \\ge 2`). ``cg`` and
    ``rule`` select the TTUCB convention as in :func:`threshold`; ``noise_stds`` is the common
    noise level σ of the two arms.
    """
    g = V.reals(gap, "gap", positive=True)
    delta = V.open_unit(delta, "delta")
    sigma = V.common_noise_std(noise_stds)
    t = np.full(g.shape, 1e3)
    for _ in range(200):
        t_new = np.maximum(4.0 * sigma**2 * threshold(algorithm, np.maximum(t, 2.0), delta, 2, cg, rule) / g**2, 2.0)
        if np.allclose(t_new, t, rtol=1e-13, atol=0):
            t = t_new
            break
        t = t_new
    return float(t) if t.ndim == 0 else t


def gap_for_stopping_time(algorithm: Any, t: ArrayLike, delta: float,
                          noise_stds: ArrayLike = 1.0, cg: str = "approx",
                          rule: str = "released") -> float | np.ndarray:
    """Inverse of :func:`predicted_stopping_time`: the gap whose run is predicted to take ``t`` samples."""
    sigma = V.common_noise_std(noise_stds)
    delta = V.open_unit(delta, "delta")
    tt = V.reals(t, "t")
    out = np.sqrt(4.0 * sigma**2 * threshold(algorithm, tt, delta, 2, cg, rule) / tt)
    return float(out) if out.ndim == 0 else out
