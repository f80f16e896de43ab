"""The A/B platforms' stopping rules under a prior: runs, their risks, and calibrated thresholds.

Orchestration layer. A platform's rule (:class:`~bai_lib.algorithms.PosteriorRule`) computes
its posterior from a prior of its own, the *belief*; the arm means of a test come from the
*law* of the rates the platform's variants actually have (for example a prior fitted to past
campaigns, :mod:`bai_lib.empirical_bayes`): Beta laws and beliefs for Bernoulli arms, Gaussian
ones for Gaussian arms. :func:`platform_runs` simulates the rule with the
belief on instances drawn from the law, so that rules, thresholds and beliefs compared on the
same seed see the same instances and the same reward streams.

When the belief is the law, each rule bounds its own Bayesian risk on the runs it stops.
For any stopping time ``τ`` and recommendation ``J`` decided by the data up to ``τ``,

.. math:: \\mathbb{P}(J \\ne i^*,\\ \\text{stopped}) =
          \\mathbb{E}\\big[\\big(1 - \\mathbb{P}(J = i^* \\mid \\mathcal{F}_\\tau)\\big)\\,
          \\mathbb{1}\\{\\text{stopped}\\}\\big] \\le \\delta\\,\\mathbb{P}(\\text{stopped})

for the probability-of-being-best rule (it stops only when ``P(J = i* | F_τ) ≥ 1 − δ``),
whatever the allocation and however often it looks; likewise the expected-loss rule bounds
``E[(μ* − μ_J) 1{stopped}]`` by ``δ P(stopped)`` and the value-remaining rule bounds
``P((μ* − μ_J)/μ_J > value, stopped)`` by ``δ P(stopped)``. Runs that reach the maximum
duration recommend the arm of largest posterior mean, with no such bound. :func:`risk_summary`
splits each risk into its stopped and censored parts, so the bound can be checked.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import _validate as V
from .algorithms.posterior_rules import PosteriorRule
from .beta_prior import BetaPrior
from .priors import GaussianPrior
from .result import SimulationResult
from .simulation import simulate
from .stats import clopper_pearson, mean_ci

__all__ = ["platform_runs", "risk_summary", "rule_label", "Calibration", "calibrate"]


_REWARDS = {BetaPrior: "bernoulli", GaussianPrior: "gaussian"}


def _check_prior(prior, name: str):
    if type(prior) not in _REWARDS:
        raise ValueError(f"{name} must be a BetaPrior (Bernoulli arms) or a GaussianPrior "
                         f"(Gaussian arms), got {type(prior).__name__}")
    return prior


def platform_runs(rule: PosteriorRule, threshold: float, law: BetaPrior | GaussianPrior,
                  n_runs: int, seed: int, *, belief: Optional[BetaPrior | GaussianPrior] = None,
                  noise_stds: Optional[ArrayLike] = None, look_every: int = 1,
                  max_samples: Optional[int] = None, n_threads: Optional[int] = None,
                  progress: Optional[bool] = None) -> SimulationResult:
    """``n_runs`` runs of ``rule`` at ``threshold`` on instances drawn from ``law``.

    Run ``r``'s means are ``law.sample_means(seed, n_runs)[r]`` (the instance
    :func:`bai_lib.simulate` would draw from ``law``), and the rule's posterior starts from
    ``belief`` (default ``law``: the platform knows the law of its rates).

    Parameters
    ----------
    rule : PosteriorRule
        The platform's rule.
    threshold : float
        Its threshold ``δ`` in ``(0, 1)`` (:class:`~bai_lib.algorithms.PosteriorRule`).
    law : BetaPrior or GaussianPrior
        The law the arm means are drawn from: Bernoulli arms under a Beta law, Gaussian arms
        under a Gaussian one.
    n_runs, seed : int
        As in :func:`bai_lib.simulate`.
    belief : BetaPrior or GaussianPrior, optional
        The prior of the rule's posterior, of the same kind as ``law`` and with as many arms.
    noise_stds : float or array_like, optional
        The noise levels of Gaussian arms (default 1); ``None`` for Bernoulli arms.
    look_every : int
        Check the rule every ``look_every`` samples (a daily look: a day's visitors).
    max_samples : int, optional
        The maximum duration; default the rule's (``10**6``).
    n_threads, progress
        As in :func:`bai_lib.simulate`.
    """
    if not isinstance(rule, PosteriorRule):
        raise ValueError(f"rule must be a PosteriorRule, got {type(rule).__name__}")
    law = _check_prior(law, "law")
    belief = law if belief is None else _check_prior(belief, "belief")
    if type(belief) is not type(law) or belief.k != law.k:
        raise ValueError(f"belief ({type(belief).__name__}, {belief.k} arms) must be of the kind "
                         f"of law ({type(law).__name__}, {law.k} arms)")
    n_runs = V.integer(n_runs, "n_runs", 1)
    means = law.sample_means(V.integer(seed, "seed", 0), n_runs)
    rewards = _REWARDS[type(law)]
    if rewards == "gaussian" and noise_stds is None:
        noise_stds = 1.0
    return simulate(rule, belief, noise_stds, threshold, n_runs, seed, means=means,
                    rewards=rewards, look_every=look_every, max_samples=max_samples,
                    n_threads=n_threads, progress=progress)


def risk_summary(result: SimulationResult, *, value: float = 0.01,
                 level: float = 0.95) -> dict:
    """The Bayesian risks of ``result``'s runs, each split into stopped and censored parts.

    Keys: the flat :meth:`~bai_lib.SimulationResult.summary` (``error``, ``error_lo``,
    ``error_hi``, ``avg``, ``median``, ``q99``, ``n_censored``, ...) and

    - ``censored_share``: the fraction of runs that reached ``max_samples``;
    - ``error_stopped`` with ``error_stopped_lo`` / ``_hi`` (Clopper–Pearson at ``level``):
      the fraction of runs that stopped on their own *and* recommended a worse arm, the
      quantity the probability-of-being-best rule bounds (module docstring);
      ``error_censored``, the rest of ``error``;
    - ``regret``, with ``regret_lo`` / ``_hi`` (``level`` interval of the mean): the mean of
      ``μ* − μ_J``; ``regret_stopped``, the mean of ``(μ* − μ_J) 1{stopped}``;
    - ``relative_stopped``: the fraction of runs that stopped with ``(μ* − μ_J)/μ_J > value``
      (meaningful for rates, whose means are positive).
    """
    level = V.open_unit(level, "level")
    value = V.positive(value, "value")
    n = result.n_runs
    rows = np.arange(n)
    best = result.means.max(axis=1)
    chosen = result.means[rows, result.recommendations]
    regret = best - chosen
    stopped = ~result.censored
    wrong = ~result.correct
    n_err_stopped = int(np.count_nonzero(wrong & stopped))
    out = result.summary(flat=True)
    lo, hi = clopper_pearson(n_err_stopped, n, level)
    r_lo, r_hi = mean_ci(regret, level) if n > 1 else (math.nan, math.nan)
    out.update({
        "censored_share": float(np.count_nonzero(result.censored)) / n,
        "error_stopped": n_err_stopped / n, "error_stopped_lo": lo, "error_stopped_hi": hi,
        "error_censored": int(np.count_nonzero(wrong & result.censored)) / n,
        "regret": float(regret.mean()), "regret_lo": r_lo, "regret_hi": r_hi,
        "regret_stopped": float((regret * stopped).mean()),
        "relative_stopped": float(np.count_nonzero(stopped & (regret > value * chosen))) / n,
    })
    return out


def rule_label(rule: PosteriorRule, threshold: float) -> str:
    """A short description of ``rule`` at ``threshold``: ``"P(best) ≥ 95%"``,
    ``"loss ≤ 0.1 pp"``, ``"value rem. 1% at 95%"``, with ``", top-two"`` and the floor when
    the allocation is not Thompson sampling."""
    threshold = V.open_unit(threshold, "threshold")
    if rule.stop == "probability_best":
        text = f"P(best) ≥ {100 * (1 - threshold):g}%"
    elif rule.stop == "expected_loss":
        text = f"loss ≤ {100 * threshold:g} pp"
    else:
        text = f"value rem. {100 * rule.value:g}% at {100 * (1 - threshold):g}%"
    if rule.allocation == "top_two":
        text += ", top-two"
    elif rule.allocation == "uniform":
        text += ", even split"
    if rule.floor > 0:
        text += f", floor {100 * rule.floor:g}%"
    return text


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`calibrate`.

    Attributes
    ----------
    rows : list of dict
        One :func:`risk_summary` per threshold, in the order given, each with its
        ``threshold``.
    threshold : float or None
        The largest (loosest) threshold whose probability of error has its upper
        Clopper–Pearson bound at or below ``target``; ``None`` when none has.
    target : float
        The probability of error the calibration aims at.
    """

    rows: list
    threshold: Optional[float]
    target: float


def calibrate(rule: PosteriorRule, thresholds: Sequence[float], law: BetaPrior | GaussianPrior,
              n_runs: int, seed: int, *, target: float,
              belief: Optional[BetaPrior | GaussianPrior] = None,
              noise_stds: Optional[ArrayLike] = None, look_every: int = 1,
              max_samples: Optional[int] = None,
              level: float = 0.95, n_threads: Optional[int] = None,
              progress: Optional[bool] = None) -> Calibration:
    """The loosest of ``thresholds`` at which ``rule`` has a probability of error ``≤ target``.

    Each threshold runs :func:`platform_runs` on the same seed, hence on the same instances
    and reward streams (the allocation does not depend on the threshold, so a run only stops
    at another look). A threshold is accepted when the whole ``level`` Clopper–Pearson
    interval of its probability of error, maximum duration included, lies at or below
    ``target``; the largest accepted threshold is returned.

    Parameters
    ----------
    rule, law, n_runs, seed, belief, noise_stds, look_every, max_samples, n_threads, progress
        As in :func:`platform_runs`.
    thresholds : sequence of float
        The thresholds ``δ`` to try, each in ``(0, 1)``.
    target : float
        The probability of error aimed at, in ``(0, 1)``.
    level : float
        Confidence level of the intervals.
    """
    target = V.open_unit(target, "target")
    level = V.open_unit(level, "level")
    levels = [V.open_unit(t, "thresholds") for t in np.atleast_1d(np.asarray(thresholds,
                                                                              dtype=float))]
    if not levels:
        raise ValueError("thresholds must hold at least one threshold")
    rows = []
    for t in levels:
        res = platform_runs(rule, t, law, n_runs, seed, belief=belief, noise_stds=noise_stds,
                            look_every=look_every, max_samples=max_samples,
                            n_threads=n_threads, progress=progress)
        s = risk_summary(res, value=rule.value, level=level)
        lo, hi = clopper_pearson(s["n_errors"], s["n_runs"], level)
        rows.append({"threshold": t, **s, "error_lo": lo, "error_hi": hi})
    ok = [r["threshold"] for r in rows if r["error_hi"] <= target]
    return Calibration(rows, max(ok) if ok else None, target)
