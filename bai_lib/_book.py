"""What the book's chapters compute that is not the library's: kept here, private, under tests.

The chapters import these from ``bai_lib._book``; they are not part of the API and may change
with the chapters. :func:`heterogeneous_setting` draws chapter 07's settings of Experiment 3 as
the released notebook did; :func:`convention_matches` and :func:`describe_matches` decide in
chapter 06 which reading of ``Δ0`` produced the paper's Table 2, and say so in words.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from . import published
from . import _validate as V
from .priors import GaussianPrior

__all__ = ["heterogeneous_setting", "convention_matches", "describe_matches"]


def heterogeneous_setting(seed: int, k: int = 10) -> tuple[GaussianPrior, np.ndarray]:
    """A fresh Experiment 3 setting: prior and noise levels drawn as in the released notebook.

    Arm ``i`` gets prior mean ``m_i ~ N(0, 1)``, prior standard deviation ``ξ_i ~ U(0.5, 1.5)``
    and noise standard deviation ``σ_i ~ U(0.5, 1.5)`` (arXiv appendix F.4; the ranges are in
    ``bai_lib.published.EXPERIMENT3["hyper_draws"]``), from ``numpy.random.default_rng(seed)``.

    Returns
    -------
    prior : GaussianPrior
    noise_stds : ndarray, shape (k,)
    """
    seed = V.integer(seed, "seed", 0)
    k = V.integer(k, "k", 2)
    ranges = published.EXPERIMENT3["hyper_draws"]
    rng = np.random.default_rng(int(seed))
    m = rng.normal(*ranges["prior_mean"], size=k)
    xi = rng.uniform(*ranges["prior_std"], size=k)
    sigma = rng.uniform(*ranges["noise_std"], size=k)
    return GaussianPrior(m, xi), sigma


# --- which reading of Δ0 produced a published table ----------------------------------------------

# Column of Table 1 or 2 for each metric :func:`convention_matches` tests (the paper's headers).
_MATCH_METRICS = {"avg": "Avg", "max": "Max", "error": "Error"}
_MATCH_WORDS = ("both", "neither")


def _match_range(row: Mapping, metric: str, max_tolerance: float) -> tuple[float, float]:
    """The range of ``metric`` in one :func:`~bai_lib.experiments.comparison_rows` row that a
    published value must hit."""
    if metric == "avg":
        return float(row["avg_ci_low"]), float(row["avg_ci_high"])
    if metric == "error":
        return float(row["error_ci_low"]), float(row["error_ci_high"])
    return row["max"] / (1 + max_tolerance), row["max"] / (1 - max_tolerance)


def convention_matches(rows_by_convention: Mapping[str, Sequence[Mapping]],
                       algorithms: Sequence[str],
                       metrics: Sequence[str] = ("avg", "max", "error"),
                       max_tolerance: float = 0.05) -> list[dict]:
    """Test each published number against our runs under two conventions (readings of ``Δ0``).

    A published value matches a convention when it lies in the range our runs under that
    convention give it, ends included:

    - ``avg``: the normal 95% interval of our mean stopping time (``avg_ci_low``,
      ``avg_ci_high``);
    - ``error``: the Clopper–Pearson 95% interval of our error rate (``error_ci_low``,
      ``error_ci_high``);
    - ``max``: within ``± max_tolerance`` of our maximum, i.e. in ``[max / (1 + max_tolerance),
      max / (1 - max_tolerance)]`` (the maximum of a bounded stopping time is set by the
      analytic caps of the indifference stop, not by sampling noise, so it has no interval).

    A range that is undefined (``nan``, e.g. the Avg interval of TTTS, whose mean is infinite)
    matches nothing.

    Parameters
    ----------
    rows_by_convention : mapping of str to sequence of dict
        Exactly two conventions, ``name -> rows`` of
        :func:`~bai_lib.experiments.comparison_rows` for the same table (the published values
        ``paper_<metric>`` must agree between them). The names (e.g. ``"delta/(4L)"``,
        ``"delta/L"``) must not be ``"both"`` or ``"neither"``.
    algorithms : sequence of str
        The ``algorithm`` keys to test, in the order of the output; each must occur exactly once
        in the rows of every convention.
    metrics : sequence of str
        Some of ``"avg"``, ``"max"``, ``"error"``, each at most once, in the order of the output.
    max_tolerance : float
        Relative tolerance of the ``max`` rule, in ``[0, 1)``.

    Returns
    -------
    list of dict
        One row per algorithm and metric (algorithm-major): ``algorithm``, ``metric`` (as given),
        ``paper`` (the published value), then for each convention ``c`` in the mapping's order
        ``ours_<c>`` (our value), ``low_<c>`` and ``high_<c>`` (the range) and ``fits_<c>``
        (``bool``: the published value lies in the range), and ``matches``: ``"both"``,
        ``"neither"`` or the name of the one convention that matches.

    Raises
    ------
    ValueError
        When a parameter is malformed: not two conventions or a reserved name
        (``rows_by_convention``), an algorithm missing or repeated in some convention's rows,
        or a row without the needed keys, or published values that differ between the
        conventions; an unknown or repeated metric (``metrics``); a tolerance outside ``[0, 1)``
        (``max_tolerance``).

    Examples
    --------
    Chapter 06 tests Table 2 against ``Δ0 = δ/(4L)`` and ``Δ0 = δ/L``::

        matches = convention_matches({"delta/(4L)": comparison_rows(results_4, 2),
                                      "delta/L": comparison_rows(results_1, 2)},
                                     ["elimination", "noelim"])
    """
    if not isinstance(rows_by_convention, Mapping) or len(rows_by_convention) != 2:
        raise ValueError("rows_by_convention must map exactly two convention names to their "
                         f"comparison rows, got {rows_by_convention!r:.200}")
    for name in rows_by_convention:
        if not isinstance(name, str) or not name or name in _MATCH_WORDS:
            raise ValueError("rows_by_convention: convention names must be non-empty strings "
                             f"other than {_MATCH_WORDS}, got {name!r}")
    if isinstance(algorithms, str) or not isinstance(algorithms, Sequence) or not algorithms:
        raise ValueError(f"algorithms must be a non-empty sequence of algorithm keys, got {algorithms!r}")
    if isinstance(metrics, str) or not isinstance(metrics, Sequence) or not metrics:
        raise ValueError(f"metrics must be a non-empty sequence of {list(_MATCH_METRICS)}, got {metrics!r}")
    for m in metrics:
        if m not in _MATCH_METRICS:
            raise ValueError(f"metrics must be some of {list(_MATCH_METRICS)}, got {m!r}")
    if len(set(metrics)) != len(metrics):
        raise ValueError(f"metrics must not repeat a metric, got {list(metrics)!r}")
    tol = V.real(max_tolerance, "max_tolerance")
    if not 0 <= tol < 1:
        raise ValueError(f"max_tolerance must lie in [0, 1), got {max_tolerance!r}")

    by_alg = {}
    for conv, rows in rows_by_convention.items():
        keys = [r.get("algorithm") if isinstance(r, Mapping) else None for r in rows]
        for alg in algorithms:
            if keys.count(alg) != 1:
                raise ValueError(f"algorithms: {alg!r} occurs {keys.count(alg)} times in the rows "
                                 f"of convention {conv!r} (need exactly once)")
        by_alg[conv] = {alg: rows[keys.index(alg)] for alg in algorithms}

    needed = {"avg": ("avg", "avg_ci_low", "avg_ci_high"), "max": ("max",),
              "error": ("error", "error_ci_low", "error_ci_high")}
    out = []
    for alg in algorithms:
        for metric in metrics:
            paper = None
            row = {"algorithm": alg, "metric": metric, "paper": None}
            fits = {}
            for conv, rows in by_alg.items():
                r = rows[alg]
                missing = [c for c in (*needed[metric], f"paper_{metric}") if c not in r]
                if missing:
                    raise ValueError(f"rows_by_convention: the row of {alg!r} under {conv!r} lacks "
                                     f"{missing} (use the rows of comparison_rows)")
                value = V.real(r[f"paper_{metric}"],
                               f"rows_by_convention[{conv!r}] paper_{metric} of {alg!r}")
                if paper is None:
                    paper = value
                elif value != paper:
                    raise ValueError(f"rows_by_convention: the published {metric} of {alg!r} "
                                     f"differs between the conventions ({paper!r}, {value!r})")
                lo, hi = _match_range(r, metric, tol)
                fits[conv] = bool(lo <= paper <= hi)       # False when the range is nan
                row.update({f"ours_{conv}": r[metric], f"low_{conv}": lo, f"high_{conv}": hi,
                            f"fits_{conv}": fits[conv]})
            row["paper"] = paper
            hits = [c for c, ok in fits.items() if ok]
            row["matches"] = {2: "both", 0: "neither"}.get(len(hits)) or hits[0]
            out.append(row)
    return out


def _listing(items: Sequence[str], singular: str, plural: str) -> str:
    return f"{', '.join(items)} {singular if len(items) == 1 else plural}"


def describe_matches(match_rows: Sequence[Mapping], algorithm: str, convention: str,
                     labels: Mapping[str, str] | None = None) -> str:
    """One algorithm's verdict from :func:`convention_matches`, in words, for ``convention``.

    Lists the metrics that match ``convention`` (alone or together with the other one), then
    those that fit only the other convention, then those that fit neither, e.g.
    ``"Δ0 = δ/L (Avg, Max match); Error fits neither"`` or
    ``"not Δ0 = δ/L; Max fits δ/(4L) only"`` when no metric matches ``convention``. Metrics are
    named by the paper's column headers (Avg, Max, Error), in the order of ``match_rows``.

    Parameters
    ----------
    match_rows : sequence of dict
        The rows of :func:`convention_matches`.
    algorithm : str
        An ``algorithm`` of ``match_rows``.
    convention : str
        The convention the verdict is about: one of the two names of ``match_rows``.
    labels : mapping of str to str, optional
        How to print each convention name (e.g. ``{"delta/L": "δ/L"}``); names without a label
        print as they are.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        When ``match_rows`` is empty or not made by :func:`convention_matches`, ``algorithm``
        has no row in it, or ``convention`` is not one of its conventions.
    """
    if isinstance(match_rows, (str, Mapping)) or not isinstance(match_rows, Sequence) \
            or not match_rows:
        raise ValueError("match_rows must be the non-empty list of rows of convention_matches")
    for r in match_rows:
        if not isinstance(r, Mapping) or not {"algorithm", "metric", "matches"} <= set(r) \
                or r["metric"] not in _MATCH_METRICS:
            raise ValueError(f"match_rows must be rows of convention_matches, got {r!r:.200}")
    rows = [r for r in match_rows if r["algorithm"] == algorithm]
    if not rows:
        known = sorted({str(r["algorithm"]) for r in match_rows})
        raise ValueError(f"algorithm must be one of {known}, got {algorithm!r}")
    conventions = [k[len("fits_"):] for k in rows[0] if k.startswith("fits_")]
    if convention not in conventions:
        raise ValueError(f"convention must be one of {conventions}, got {convention!r}")
    if labels is not None and not isinstance(labels, Mapping):
        raise ValueError(f"labels must map convention names to text, got {labels!r}")
    label = {c: (labels or {}).get(c, c) for c in conventions}

    this, other, none = [], {}, []
    for r in rows:
        name = _MATCH_METRICS[r["metric"]]
        if r["matches"] in (convention, "both"):
            this.append(name)
        elif r["matches"] == "neither":
            none.append(name)
        else:
            other.setdefault(r["matches"], []).append(name)
    text = (f"Δ0 = {label[convention]} ({_listing(this, 'matches', 'match')})" if this
            else f"not Δ0 = {label[convention]}")
    for conv, names in other.items():
        text += f"; {_listing(names, 'fits', 'fit')} {label.get(conv, conv)} only"
    if none:
        text += f"; {_listing(none, 'fits', 'fit')} neither"
    return text
