"""The quantities behind the book's tables of Experiment 2 (the paper's Tables 2 and 4).

Each function reads simulation results and returns plain numbers: a ``dict`` row ready for
:func:`bai_lib.experiments.write_csv` and for :func:`bai_lib.formatting.table`, which writes them
for people. The rows describe how runs of an elimination algorithm ended (stop reasons and their
errors), how its largest stopping times sit on the analytic caps of the indifference stop, how
NoElim and Algorithm 1 compare run by run, and where a published number falls among instance
sets or against a published error count.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from . import _validate as V
from .kernels import STOP_REASON_NAMES
from .stats import error_counts_fisher_p

__all__ = [
    "STOP_REASONS",
    "stop_reason_counts",
    "indifference_share",
    "indifference_stops_with_two_arms",
    "maxima_against_caps",
    "cap_ratios",
    "same_round_check",
    "published_error_test",
    "instance_set_row",
]

#: The ways a run of Algorithm 1 or NoElim can end, in the order the tables list them.
STOP_REASONS = ("single_arm", "indifference", "censored")



def _result(result, name: str):
    """``result`` if it looks like a :class:`bai_lib.SimulationResult`."""
    needed = ("stopping_times", "stop_reasons", "correct", "n_runs")
    if not all(hasattr(result, a) for a in needed):
        raise ValueError(f"{name} must be a SimulationResult, got {type(result).__name__}")
    return result


def _pair(results, name: str) -> tuple:
    """The results of Algorithm 1 and NoElim from a mapping with the keys of both."""
    if not isinstance(results, Mapping) or not {"elimination", "noelim"} <= set(results):
        keys = sorted(results) if isinstance(results, Mapping) else type(results).__name__
        raise ValueError(f"{name} must map 'elimination' and 'noelim' to their results, got {keys}")
    elim = _result(results["elimination"], f"{name}['elimination']")
    noelim = _result(results["noelim"], f"{name}['noelim']")
    if elim.n_runs != noelim.n_runs:
        raise ValueError(f"{name}: the two results must have the same number of runs (paired)")
    return elim, noelim


def stop_reason_counts(result: object, reasons: Sequence[str] = STOP_REASONS
                       ) -> dict[str, tuple[int, int]]:
    """How the runs ended: ``reason -> (runs, wrong)`` for each stop reason in ``reasons``.

    ``runs`` counts the runs that ended for that reason and ``wrong`` those of them that
    recommended a wrong arm.

    Raises
    ------
    ValueError
        When ``result`` is not a simulation result or ``reasons`` names an unknown stop reason.
    """
    result = _result(result, "result")
    if isinstance(reasons, str) or not isinstance(reasons, Sequence) or not reasons:
        raise ValueError(f"reasons must be a non-empty sequence of stop reasons, got {reasons!r}")
    for r in reasons:
        if r not in STOP_REASON_NAMES:
            raise ValueError(f"reasons must be some of {STOP_REASON_NAMES}, got {r!r}")
    wrong = ~np.asarray(result.correct, dtype=bool)
    out = {}
    for r in reasons:
        ended = np.asarray(result.stop_reasons) == r
        out[r] = (int(ended.sum()), int(np.sum(ended & wrong)))
    return out


def indifference_share(result: object) -> tuple[int, float]:
    """The runs that ended at the indifference stop: ``(how many, their share of all samples)``.

    The share is the sum of their stopping times over the sum of all stopping times: how much of
    the average stopping time these runs carry.

    Raises
    ------
    ValueError
        When ``result`` is not a simulation result.
    """
    result = _result(result, "result")
    tau = np.asarray(result.stopping_times)
    ind = np.asarray(result.stop_reasons) == "indifference"
    return int(ind.sum()), float(tau[ind].sum() / tau.sum())


def indifference_stops_with_two_arms(result: object, n_star: int) -> tuple[int, int]:
    """Algorithm 1's indifference stops, and how many of them came with exactly two arms left.

    An indifference stop fires in round ``n*``; with two arms left the run has used
    ``2 n* + (samples of the arms eliminated earlier) < 3 n*`` samples, so the second count is
    that of the indifference stops with ``τ < 3 n*``.

    Raises
    ------
    ValueError
        When ``result`` is not a simulation result or ``n_star`` is not a positive integer.
    """
    result = _result(result, "result")
    n_star = V.integer(n_star, "n_star", 1)
    ind = np.asarray(result.stop_reasons) == "indifference"
    tau = np.asarray(result.stopping_times)[ind]
    return int(ind.sum()), int(np.sum(tau < 3 * n_star))


def maxima_against_caps(results: Mapping, convention: str, n_star: int, k: int,
                        paper: Mapping) -> dict:
    """The largest stopping times of Algorithm 1 and NoElim next to the caps of the indifference
    stop, ours and the published ones, for one reading (``convention``) of ``Δ0``.

    NoElim's stopping time is at most ``k n*``; an Algorithm 1 run that reaches round ``n*`` with
    the two closest arms left uses at least ``2 n*``.

    Parameters
    ----------
    results : mapping
        ``"elimination"`` and ``"noelim"`` to their simulation results (other keys are ignored).
    convention : str
        The name of the reading of ``Δ0`` (the row's first column).
    n_star : int
        The indifference round ``n*`` under that reading
        (:func:`bai_lib.confidence.indifference_round`).
    k : int
        The number of arms.
    paper : mapping
        ``"elimination"`` and ``"noelim"`` to their published rows
        (:func:`bai_lib.published.row`).

    Returns
    -------
    dict
        ``convention``, ``n_star``, ``noelim_cap`` (``k n*``), ``two_n_star``, ``noelim_max``,
        ``elimination_max`` (ours), ``paper_noelim_max``, ``paper_elimination_max``.

    Raises
    ------
    ValueError
        When a parameter is malformed (the message names it).
    """
    elim, noelim = _pair(results, "results")
    if not isinstance(convention, str) or not convention:
        raise ValueError(f"convention must be a non-empty string, got {convention!r}")
    n_star = V.integer(n_star, "n_star", 1)
    k = V.integer(k, "k", 2)
    if not isinstance(paper, Mapping) or not all(hasattr(paper.get(a), "max")
                                                 for a in ("elimination", "noelim")):
        raise ValueError("paper must map 'elimination' and 'noelim' to their published rows")
    return dict(convention=convention, n_star=n_star, noelim_cap=k * n_star,
                two_n_star=2 * n_star,
                noelim_max=int(np.max(noelim.stopping_times)),
                elimination_max=int(np.max(elim.stopping_times)),
                paper_noelim_max=paper["noelim"].max,
                paper_elimination_max=paper["elimination"].max)


def cap_ratios(row: Mapping) -> dict:
    """Each maximum of a :func:`maxima_against_caps` row divided by its cap.

    Returns
    -------
    dict
        ``noelim_over_cap`` and ``paper_noelim_over_cap``: NoElim's maximum over ``k n*``, ours
        and the published one; ``elimination_over_cap`` and ``paper_elimination_over_cap``:
        Algorithm 1's maximum over ``2 n*``.

    Raises
    ------
    ValueError
        When ``row`` lacks a key of :func:`maxima_against_caps`.
    """
    needed = ("noelim_cap", "two_n_star", "noelim_max", "elimination_max", "paper_noelim_max",
              "paper_elimination_max")
    if not isinstance(row, Mapping) or not all(key in row for key in needed):
        raise ValueError(f"row must be a row of maxima_against_caps (keys {needed}), got {row!r:.200}")
    return {"noelim_over_cap": row["noelim_max"] / row["noelim_cap"],
            "paper_noelim_over_cap": row["paper_noelim_max"] / row["noelim_cap"],
            "elimination_over_cap": row["elimination_max"] / row["two_n_star"],
            "paper_elimination_over_cap": row["paper_elimination_max"] / row["two_n_star"]}


def same_round_check(results: Mapping, n_star: int, k: int) -> dict:
    """Does NoElim stop in the same round as Algorithm 1? Paired runs (same instances and seed).

    NoElim pulls all ``k`` arms in every round, so it stops in round ``R = τ_NoElim / k``. If
    Algorithm 1 stopped in that same round, its own ``τ`` would lie between ``R + k - 1`` (all
    other arms dropped after one round) and ``k R``.

    Parameters
    ----------
    results : mapping
        ``"elimination"`` and ``"noelim"`` to their simulation results, run on the same
        instances.
    n_star : int
        The indifference round ``n*``.
    k : int
        The number of arms.

    Returns
    -------
    dict
        ``noelim_multiple_of_k`` (every NoElim ``τ`` is a multiple of ``k``),
        ``noelim_indiff_at_nstar`` (every NoElim indifference stop is in round ``n*``),
        ``same_stop_reason`` (share of runs in which both stop for the same reason),
        ``alg1_tau_in_bracket`` (share of runs with ``R + k - 1 <= τ <= k R``),
        ``alg1_indiff_tau_over_nstar_max`` (the largest ``τ / n*`` among Algorithm 1's
        indifference stops, ``nan`` without one), ``noelim_errors``, ``alg1_errors``.

    Raises
    ------
    ValueError
        When a parameter is malformed (the message names it).
    """
    e, ne = _pair(results, "results")
    n_star = V.integer(n_star, "n_star", 1)
    k = V.integer(k, "k", 2)
    tau_e, tau_ne = np.asarray(e.stopping_times), np.asarray(ne.stopping_times)
    reasons_e, reasons_ne = np.asarray(e.stop_reasons), np.asarray(ne.stop_reasons)
    rounds = tau_ne // k
    ind = reasons_ne == "indifference"
    ind_e = reasons_e == "indifference"
    return dict(
        noelim_multiple_of_k=bool(np.all(tau_ne % k == 0)),
        noelim_indiff_at_nstar=bool(np.all(rounds[ind] == n_star)),
        same_stop_reason=float(np.mean(reasons_e == reasons_ne)),
        alg1_tau_in_bracket=float(np.mean((tau_e >= rounds + k - 1) & (tau_e <= k * rounds))),
        alg1_indiff_tau_over_nstar_max=(float(np.max(tau_e[ind_e]) / n_star) if ind_e.any()
                                        else math.nan),
        noelim_errors=int(np.sum(~np.asarray(ne.correct, dtype=bool))),
        alg1_errors=int(np.sum(~np.asarray(e.correct, dtype=bool))))


def published_error_test(result: object, published_error: float,
                         published_runs: int = 1000) -> dict:
    """Our error count against a published error rate, itself a count out of ``published_runs``.

    Returns
    -------
    dict
        ``errors`` (our wrong recommendations), ``error_lo``, ``error_hi`` (the Clopper–Pearson
        95% interval of our error rate), ``paper_errors`` (the published rate times
        ``published_runs``, rounded) and ``p``: the two-sided p-value of Fisher's exact test that
        both counts share one error rate (:func:`bai_lib.stats.error_counts_fisher_p`).

    Raises
    ------
    ValueError
        When ``result`` is not a simulation result, ``published_error`` is not in ``[0, 1]``
        or ``published_runs`` is not a positive integer.
    """
    result = _result(result, "result")
    rate = V.real(published_error, "published_error")
    if not 0 <= rate <= 1:
        raise ValueError(f"published_error must lie in [0, 1], got {published_error!r}")
    n_pub = V.integer(published_runs, "published_runs", 1)
    s = result.summary()
    paper_errors = round(rate * n_pub)
    p = error_counts_fisher_p(paper_errors, s["n_errors"], n_pub, result.n_runs)
    lo, hi = s["error_ci"]
    return {"errors": int(s["n_errors"]), "error_lo": float(lo), "error_hi": float(hi),
            "paper_errors": int(paper_errors), "p": float(p)}


def instance_set_row(sets: object, paper: object) -> dict:
    """A published row among independent instance sets (:func:`bai_lib.experiments.instance_sets`).

    Returns
    -------
    dict
        For Avg and Error: the published value (``avg``, ``err``), its mid-rank percentile among
        the sets' values (``pct_avg``, ``pct_err``, 0 to 100) and the range of the sets' values
        (``avg_lo``, ``avg_hi``, ``err_lo``, ``err_hi``); for Max: the published value ``max``
        and the range of the sets' maxima (``max_lo``, ``max_hi``).

    Raises
    ------
    ValueError
        When ``sets`` is not an instance-set summary or ``paper`` not a published row.
    """
    if not all(hasattr(sets, a) for a in ("avg", "max", "error", "percentile")):
        raise ValueError(f"sets must be the InstanceSets of instance_sets, got {type(sets).__name__}")
    if not all(hasattr(paper, a) for a in ("avg", "max", "error")):
        raise ValueError(f"paper must be a published row (published.row), got {paper!r}")
    return {"avg": paper.avg, "pct_avg": sets.percentile("avg", paper.avg),
            "avg_lo": float(np.min(sets.avg)), "avg_hi": float(np.max(sets.avg)),
            "max": paper.max, "max_lo": float(np.min(sets.max)), "max_hi": float(np.max(sets.max)),
            "err": paper.error, "pct_err": sets.percentile("error", paper.error),
            "err_lo": float(np.min(sets.error)), "err_hi": float(np.max(sets.error))}
