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

Every threshold has one name here: a compiled scalar function the simulators call
(:func:`glr_beta` for the GLR rules of :data:`GLR_THRESHOLDS`, :func:`ttucb_c` for TTUCB's
``c(t, δ)``), and :func:`threshold`, which evaluates the same functions over arrays for a rule
or a specification.

Two of the thresholds carry a proof of :math:`\\delta`-correctness for *any* sampling rule, and
they are the ones the indifference stop of the GLR algorithms uses for its GLR share
(:data:`PROVEN_GLR_THRESHOLDS`): ``"kk2021"`` for Gaussian arms and ``"union"`` for Bernoulli
and Poisson arms (any one-parameter exponential family); :func:`glr_beta` gives their
proofs.
The others are heuristics: ``"chernoff"`` (the paper's TTTS) and ``"gk2016"`` are below what a
proof covers, and TTUCB's ``c(t, δ)`` with ``C_G(x) ≈ x + log x`` (the paper's experiments) is
below the proven ``"kk2021"``, whose ``C_G`` is the exact minimum.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from . import _validate as V

__all__ = ["GLR_THRESHOLDS", "PROVEN_GLR_THRESHOLDS", "TTUCB_THRESHOLDS", "TTUCB_LOG_TERMS",
           "glr_beta", "glr_level", "ttucb_c", "ttucb_cg", "ttucb_two_cg", "threshold",
           "predicted_stopping_time", "gap_for_stopping_time"]

#: Codes of the GLR (Chernoff) stopping thresholds ``β(t, δ)`` understood by :func:`glr_beta`:
#: ``"chernoff"`` is ``log(t/δ)`` (Chernoff's rule with ``C = α = 1``, the paper's TTTS);
#: ``"gk2016"`` is ``log((log t + 1)/δ)``, the threshold Garivier & Kaufmann (2016) use in their
#: experiments (smaller than the one their theorem covers); ``"kk2021"`` and ``"union"`` are
#: the proven thresholds, whose proofs :func:`glr_beta` gives.
GLR_THRESHOLDS = {"chernoff": 0, "gk2016": 1, "kk2021": 2, "union": 3}
#: The GLR threshold proven ``δ``-correct for each reward model whatever the sampling rule
#: (proofs in :func:`glr_beta`).
PROVEN_GLR_THRESHOLDS = {"gaussian": "kk2021", "bernoulli": "union", "poisson": "union"}

#: The TTUCB threshold conventions, each the multiplier ``s`` of ``c(t, δ)`` on the squared
#: normalised gap.
#: ``"released"``: 2 (gap against ``sqrt(2c)``, the released code and Jourdan & Degenne's GLR
#: test); ``"printed"``: 1 (gap against ``sqrt(c)``, as printed in the paper's appendix).
TTUCB_THRESHOLDS = {"released": 2.0, "printed": 1.0}
#: TTUCB ``log`` term conventions: the shift ``a`` in ``log((t - a)/2)``; ``"released"``: 1
#: (the released code evaluates ``log((T-1)/2)`` with ``T`` samples taken), ``"printed"``: 0.
TTUCB_LOG_TERMS = {"released": 1.0, "printed": 0.0}


@njit(cache=True, nogil=True)
def glr_beta(t: float, level: float, rule: int) -> float:
    """GLR threshold ``β(t, δ)`` for rule code ``rule`` (:data:`GLR_THRESHOLDS`); increasing in ``t``.

    ``level`` is what the rule needs of ``δ`` and ``k``, computed once by :func:`glr_level`:
    ``δ`` itself for ``"chernoff"`` and ``"gk2016"``. The GLR test stops once
    ``min_j Z_{best,j} >= β(t, δ)``, i.e. once the squared normalised gap of :func:`threshold`
    reaches ``2β``. Over arrays, :func:`threshold` with the rule's name gives ``2β``.

    The rules ``"kk2021"`` and ``"union"`` are proven ``δ``-correct whatever the sampling rule
    (:data:`PROVEN_GLR_THRESHOLDS`): the GLR test ``min_{j≠ı̂} Z_{ı̂,j}(t) >= β(t, δ)`` then
    recommends a wrong arm with probability at most ``δ`` on every instance.

    ``"kk2021"``, for Gaussian arms with known variances:

    .. math:: \\beta(t, \\delta) = 2 C_G\\Big(\\tfrac12 \\log\\tfrac{k-1}{\\delta}\\Big)
        + 4 \\log\\big(4 + \\log(t/2)\\big),

    with the exact ``C_G`` (:func:`ttucb_cg`). Proof: if ``ı̂ ≠ i*`` when the test passes, the
    true means lie in the alternative ``{λ_ı̂ <= λ_{i*}}`` over which ``Z_{ı̂,i*}`` is an
    infimum, so ``N_ı̂ d(μ̂_ı̂, μ_ı̂) + N_{i*} d(μ̂_{i*}, μ_{i*}) >= β(t, δ)``. Kaufmann & Koolen
    (2021, *Mixture martingales revisited*, Theorem 9, with ``|S| = 2``) bound the probability
    that this sum ever exceeds ``2 log(4 + log N_ı̂) + 2 log(4 + log N_{i*}) + 2 C_G(x/2)`` by
    ``e^{-x}``; ``log(4 + log n)`` is concave and ``N_ı̂ + N_{i*} <= t``, so the two logarithms
    are at most ``4 log(4 + log(t/2))``, and ``x = log((k-1)/δ)`` with a union bound over the
    ``k - 1`` arms ``ı̂ ≠ i*`` gives ``δ``. This is TTUCB's ``c(t, δ)`` as Jourdan & Degenne
    (2022) prove it: multiplier 2, ``log(t/2)``, exact ``C_G``.

    ``"union"``, for Bernoulli and Poisson arms: ``β`` solves

    .. math:: (1 + \\beta)\\, e^{-\\beta} = \\frac{16\\,\\delta}{(k-1)\\, t^2 (t+2)^2}.

    Proof: with ``ı̂ ≠ i*``, taking ``λ_ı̂ = min(μ̂_ı̂, μ_ı̂)`` and
    ``λ_{i*} = max(μ̂_{i*}, μ_{i*})`` in the infimum gives
    ``Z_{ı̂,i*} <= X + Y`` with ``X = N_ı̂ kl⁺(μ̂_ı̂, μ_ı̂)`` (the upper deviation) and
    ``Y = N_{i*} kl⁻(μ̂_{i*}, μ_{i*})``. For fixed counts ``(n, n')`` the two means are those of
    the first ``n`` and ``n'`` rewards of independent arms, and Chernoff's bound gives
    ``P(X >= x) <= e^{-x}`` and ``P(Y >= y) <= e^{-y}``, so ``X + Y`` is stochastically below a
    Gamma(2, 1) variable: ``P(X + Y >= b) <= (1 + b) e^{-b}``. A union bound over the ``k - 1``
    arms ``ı̂`` and over all counts, with ``b(n, n')`` solving
    ``(1 + b) e^{-b} = δ / ((k-1) n(n+1) n'(n'+1))`` (``Σ 1/(n(n+1)) = 1``), gives ``δ``; and
    ``n + n' <= t`` implies ``n(n+1) n'(n'+1) <= t²(t+2)²/16``, so ``β(t, δ) >= b(N_ı̂, N_{i*})``.
    The proof uses only Chernoff's bound, so it holds for any one-parameter exponential family
    with its own divergence (Gaussian arms included, where ``"kk2021"`` is smaller).
    """
    if rule == 0:
        return math.log(t / level)
    if rule == 1:
        return math.log((math.log(t) + 1.0) / level)
    if rule == 2:  # level = 2 C_G(log((k-1)/δ)/2), exact
        return level + 4.0 * math.log(4.0 + math.log(t / 2.0))
    # rule 3: the solution of β - log(1 + β) = level + 2 log(t (t + 2)), from below; the
    # map is a contraction (slope 1/(1 + β)), and the margin covers its last step
    a = level + 2.0 * math.log(t * (t + 2.0))
    beta = max(a, 1.0)
    for _ in range(60):
        nxt = a + math.log1p(beta)
        if abs(nxt - beta) <= 1e-13 * nxt:
            beta = nxt
            break
        beta = nxt
    return beta + 1e-10 * beta


def glr_level(threshold: str, delta: float, k: int = 2) -> float:
    """The ``level`` argument of :func:`glr_beta` for the rule ``threshold`` at ``δ`` on ``k``
    arms: ``δ`` for ``"chernoff"`` and ``"gk2016"``, ``2 C_G(log((k-1)/δ)/2)`` with the exact
    ``C_G`` (:func:`ttucb_cg`) for ``"kk2021"``, ``log((k-1)/(16 δ))`` for ``"union"``."""
    V.choice(threshold, GLR_THRESHOLDS, "threshold")
    delta = V.open_unit(delta, "delta")
    k = V.integer(k, "k", 2)
    if threshold in ("chernoff", "gk2016"):
        return delta
    if threshold == "kk2021":
        return 2.0 * ttucb_cg(0.5 * math.log((k - 1) / delta), "exact")
    return math.log((k - 1) / (16.0 * delta))


@njit(cache=True, nogil=True)
def ttucb_c(t: float, two_cg: float, log_shift: float) -> float:
    """``c(t, δ) = 2 C_G(log((k-1)/δ) / 2) + 4 log(4 + log((t - log_shift)/2))``.

    ``two_cg`` is the first term, computed once by :func:`ttucb_two_cg`; ``log_shift`` is the
    ``a`` of :data:`TTUCB_LOG_TERMS` (0 as printed in the paper's appendix, 1 in the released
    code).
    """
    return two_cg + 4.0 * math.log(4.0 + math.log((t - log_shift) / 2.0))


_glr_beta_array = np.vectorize(glr_beta, otypes=[float])
_ttucb_c_array = np.vectorize(ttucb_c, otypes=[float])


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


def threshold(algorithm: Any, t: ArrayLike, delta: float, k: int = 2, cg: str = "approx",
              rule: str = "released", log_term: str = "released",
              rewards: str = "gaussian") -> float | np.ndarray:
    """Threshold :math:`\\beta(t)` on :math:`(\\hat\\mu_1-\\hat\\mu_2)^2 / (\\sigma^2(1/N_1+1/N_2))`.

    Parameters
    ----------
    algorithm : str or specification
        A GLR rule of :data:`GLR_THRESHOLDS` by name (``2 β(t, δ)`` of :func:`glr_beta` on ``k``
        arms; the proven ones are those of :data:`PROVEN_GLR_THRESHOLDS`), one of the paper's
        two rules (``"ttts"``: ``"chernoff"``, ``2 log(t/δ)``; ``"ttucb"``: ``s c(t, δ)`` of
        :func:`ttucb_c` with ``cg``, ``rule`` and ``log_term``), or a GLR specification
        (:class:`~bai_lib.algorithms.TTTS`, :class:`~bai_lib.algorithms.TTUCB`,
        :class:`~bai_lib.algorithms.EBTC`, :class:`~bai_lib.algorithms.TrackAndStop`, a
        :class:`~bai_lib.algorithms.SamplingRule`), whose own options then decide
        (its ``stopping_threshold`` method; ``cg``, ``rule`` and ``log_term`` are not used): the
        threshold its kernel uses for a run at ``delta``, the indifference stop's split (the GLR
        test at ``δ/4``) and its proven threshold included.
    t : float or array
        Total number of samples, ``t >= 2``.
    delta : float
        Confidence level in (0, 1).
    k : int, default 2
        Number of arms (enters TTUCB's :math:`C_G` term and the proven thresholds).
    cg : {"approx", "exact"}
        Variant of :func:`ttucb_cg` for TTUCB.
    rule : {"released", "printed"}
        TTUCB threshold convention (:data:`TTUCB_THRESHOLDS`): ``2c`` (released) or ``c``.
    log_term : {"released", "printed"}
        TTUCB ``log((t-1)/2)`` (released) or ``log(t/2)`` (:data:`TTUCB_LOG_TERMS`).
    rewards : {"gaussian", "bernoulli", "poisson"}
        The reward model, which decides the proven threshold of a specification with the
        indifference stop (for Bernoulli arms the level is that of twice the Bernoulli GLR
        statistic; Poisson arms refuse the indifference stop).
    """
    if callable(getattr(algorithm, "stopping_threshold", None)):
        if getattr(algorithm, "indifference", False):
            return algorithm.stopping_threshold(t, delta, k, rewards=rewards)
        return algorithm.stopping_threshold(t, delta, k)
    name = V.choice(algorithm, ("ttts", "ttucb", *GLR_THRESHOLDS), "algorithm")
    if name == "ttucb":
        delta = V.open_unit(delta, "delta")
        k = V.integer(k, "k", 2)
        V.choice(rule, TTUCB_THRESHOLDS, "rule")
        V.choice(log_term, TTUCB_LOG_TERMS, "log_term")
        out = TTUCB_THRESHOLDS[rule] * _ttucb_c_array(_times(t), ttucb_two_cg(k, delta, cg),
                                                      TTUCB_LOG_TERMS[log_term])
    else:
        name = "chernoff" if name == "ttts" else name
        level = glr_level(name, delta, k)
        out = 2.0 * _glr_beta_array(_times(t), level, GLR_THRESHOLDS[name])
    return float(out) if out.ndim == 0 else out


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
