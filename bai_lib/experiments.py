"""Orchestration of the paper's experiments: run the tables, compare with the published rows.

Section 6 of the paper: Experiment 1 (Tables 1 and 3; ``k = 2``, ``δ = 0.1``; Algorithm 1,
TTTS, TTUCB) and Experiment 2 (Tables 2 and 4; ``k = 10``, ``δ = 0.01``; Algorithm 1 and
NoElim), each with ``N = 1000`` runs, standard normal priors and unit noise. The settings
and published numbers live in :mod:`bai_lib.published`.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
from scipy import stats

from . import published
from .priors import GaussianPrior

__all__ = [
    "DEFAULT_SEED",
    "run_experiment",
    "comparison_rows",
    "mean_ci",
    "ccdf",
    "running_mean",
    "loglog_slope",
    "write_csv",
    "format_table",
]

#: Seed used by every chapter unless stated otherwise.
DEFAULT_SEED = 2024


def run_experiment(
    experiment: int,
    *,
    seed: int = DEFAULT_SEED,
    n_runs: int | None = None,
    algorithms: Sequence[str] | None = None,
    delta0_factor: float = 4.0,
    max_samples: int = 10**9,
    progress: bool | None = None,
) -> dict:
    """Run the algorithms of one of the paper's experiments on common random numbers.

    Parameters
    ----------
    experiment : {1, 2}
        Experiment of Section 6.
    seed : int
        Seed of every simulator (the same ``μ`` in run ``r`` for all algorithms).
    n_runs : int, optional
        Defaults to the paper's ``N = 1000``.
    algorithms : sequence of str, optional
        Defaults to the experiment's algorithms.
    delta0_factor : float
        ``Δ0 = δ / (factor · L(H))`` for elimination and NoElim (4 as printed in Algorithm 1,
        1 as in the authors' released code).
    max_samples : int
        Censoring level of a single run.
    progress : bool, optional
        Passed to :func:`bai_lib.simulate`.

    Returns
    -------
    dict
        ``algorithm -> SimulationResult``.
    """
    from .simulation import simulate

    if experiment not in published.EXPERIMENTS:
        raise ValueError(f"experiment must be one of {sorted(published.EXPERIMENTS)}, got {experiment!r}")
    setting = published.EXPERIMENTS[experiment]
    prior = GaussianPrior.standard(setting["k"])
    algs = tuple(algorithms) if algorithms is not None else setting["algorithms"]
    n = setting["n_runs"] if n_runs is None else n_runs
    out = {}
    for alg in algs:
        opts = {"delta0_factor": delta0_factor} if alg in ("elimination", "noelim") else {}
        out[alg] = simulate(alg, prior, setting["noise_std"], setting["delta"], n, seed,
                            max_samples=max_samples, progress=progress, **opts)
    return out


def mean_ci(x: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Normal-approximation confidence interval of a mean (for bounded stopping times)."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        raise ValueError("x must hold at least two values")
    half = stats.norm.ppf(0.5 + level / 2) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def comparison_rows(results: Mapping, table: int) -> list[dict]:
    """One row per algorithm: our summary next to the published row of ``table``.

    Columns: ``algorithm``, ``avg``, ``avg_ci_low``, ``avg_ci_high`` (normal approximation, given
    only for Algorithm 1 and NoElim, whose stopping times are bounded; ``nan`` for TTTS and
    TTUCB, whose expected stopping time is infinite by Theorem 1), ``max``, ``median``,
    ``q90``, ``q99``, ``error``, ``error_ci_low``, ``error_ci_high``, ``n_censored``, and the
    published ``paper_avg``, ``paper_max``, ``paper_error`` (and ``paper_comp`` for Tables 3-4).
    """
    rows = []
    for alg, res in results.items():
        s = res.summary()
        s = s.as_dict() if hasattr(s, "as_dict") else dict(s)
        pub = published.row(table, alg)
        bounded = alg in ("elimination", "noelim")
        lo, hi = mean_ci(res.stopping_times) if bounded else (math.nan, math.nan)
        elo, ehi = s["error_ci"]
        row = {
            "algorithm": alg,
            "avg": float(s["avg"]),
            "avg_ci_low": lo,
            "avg_ci_high": hi,
            "max": int(s["max"]),
            "median": float(s["median"]),
            "q90": float(s["q90"]),
            "q99": float(s["q99"]),
            "error": float(s["error"]),
            "error_ci_low": float(elo),
            "error_ci_high": float(ehi),
            "n_censored": int(s["n_censored"]),
            "paper_avg": pub.avg,
            "paper_max": pub.max,
            "paper_error": pub.error,
        }
        if pub.comp is not None:
            row["paper_comp"] = pub.comp
        rows.append(row)
    return rows


def ccdf(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Empirical complementary distribution ``P(X >= v)`` at the sorted distinct values ``v``."""
    x = np.sort(np.asarray(x))
    if x.size == 0:
        raise ValueError("x must not be empty")
    values, first = np.unique(x, return_index=True)
    return values, 1.0 - first / x.size


def running_mean(x: np.ndarray) -> np.ndarray:
    """Mean of the first ``r`` values, for ``r = 1 .. len(x)`` (run order)."""
    x = np.asarray(x, dtype=float)
    return np.cumsum(x) / np.arange(1, x.size + 1)


def loglog_slope(x, y) -> tuple[float, float, float]:
    """Least-squares line through ``(log x, log y)``: ``(slope, intercept, slope standard error)``.

    Used for every power-law check of the book (``τ ∝ gap^-2``, CCDF tails ``∝ x^-1/2``,
    frontiers ``∝ N^-1``).
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError("x and y must be 1-D arrays of the same length >= 3")
    if not (np.all(np.isfinite(x) & (x > 0)) and np.all(np.isfinite(y) & (y > 0))):
        raise ValueError("x and y must be finite and positive")
    lx, ly = np.log(x), np.log(y)
    (slope, intercept), cov = np.polyfit(lx, ly, 1, cov=True)
    return float(slope), float(intercept), float(np.sqrt(cov[0, 0]))


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


def write_csv(rows: Iterable[Mapping], path: str | Path) -> Path:
    """Write dict rows to CSV with deterministic number formatting (6 significant digits)."""
    rows = list(rows)
    if not rows:
        raise ValueError("rows must not be empty")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = list(rows[0])
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt(r.get(k, "")) for k in fields})
    return path


def format_table(rows: Sequence[Mapping], columns: Sequence[str], headers: Sequence[str] | None = None) -> str:
    """A fixed-width text table of selected columns (3 significant digits for floats)."""
    headers = list(headers) if headers is not None else list(columns)
    if len(headers) != len(columns):
        raise ValueError("headers and columns must have the same length")

    def cell(v):
        if isinstance(v, (float, np.floating)):
            v = float(v)
            return f"{v:.3g}" if abs(v) < 1e4 else f"{v:.3e}"
        if isinstance(v, (int, np.integer)) and abs(int(v)) >= 10**5:
            return f"{float(v):.3e}"
        return str(v)

    body = [[cell(r[c]) for c in columns] for r in rows]
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(headers)]
    line = lambda items: "  ".join(s.rjust(w) for s, w in zip(items, widths))
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(b) for b in body])
