"""Statistics helpers shared by the whole library: intervals, tests and estimators.

Every confidence interval, test and estimator the chapters report is computed here, once:

- intervals: :func:`clopper_pearson` for error rates (exact binomial), :func:`wilson_interval`
  for many proportions at once (Monte Carlo bands), :func:`mean_ci` for means of bounded
  stopping times and :func:`normal_interval` for an estimate with its standard error (normal
  approximation);
- tests and ranks: :func:`error_counts_fisher_p` (Fisher's exact test of two error counts),
  :func:`same_law` (two sets of runs from one law: Kolmogorov–Smirnov and χ² tests),
  :func:`empirical_percentile` (mid-rank percentile of a published value among our sets);
- estimators on runs: :func:`top_two_gap`, :func:`ccdf`, :func:`running_mean`,
  :func:`hill_tail_index` (Hill's tail index), :func:`loglog_slope` (power laws).

It depends on numpy, scipy and the input checks only, so every other module may use it.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats
from scipy.stats import beta

from . import _validate as V

__all__ = [
    "clopper_pearson",
    "wilson_interval",
    "normal_interval",
    "mean_ci",
    "error_counts_fisher_p",
    "paired_errors",
    "same_law",
    "share_by",
    "empirical_percentile",
    "top_two_gap",
    "ccdf",
    "running_mean",
    "hill_tail_index",
    "loglog_slope",
]


def clopper_pearson(n_success: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Clopper–Pearson (exact binomial) interval of a proportion ``n_success / n`` at ``level``.

    Used for every error rate of the book: it never leaves [0, 1] and is conservative, also at
    zero or all successes (where the lower or upper limit is 0 or 1).
    """
    n = V.integer(n, "n", 1)
    n_success = V.integer(n_success, "n_success", 0, n)
    alpha = 1.0 - V.open_unit(level, "level")
    lo = 0.0 if n_success == 0 else float(beta.ppf(alpha / 2, n_success, n - n_success + 1))
    hi = 1.0 if n_success == n else float(beta.ppf(1 - alpha / 2, n_success + 1, n - n_success))
    return lo, hi


def wilson_interval(counts: ArrayLike, n: int, z: float = 1.96) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of the proportions ``counts / n``, elementwise (``z = 1.96``: 95%).

    Returns ``(lower, upper)`` arrays; the lower limit is clipped at 0.
    """
    p = np.asarray(counts) / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return np.maximum(centre - half, 0.0), centre + half


def normal_interval(estimate: float, std_error: float, level: float = 0.95) -> tuple[float, float]:
    """Two-sided normal interval ``estimate ± z·std_error`` at ``level``."""
    estimate = V.real(estimate, "estimate")
    std_error = V.nonnegative(std_error, "std_error")
    z = float(stats.norm.ppf(0.5 + V.open_unit(level, "level") / 2))
    return estimate - z * std_error, estimate + z * std_error


def mean_ci(x: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """Normal-approximation confidence interval of a mean (for bounded stopping times)."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        raise ValueError("x must hold at least two values")
    half = stats.norm.ppf(0.5 + level / 2) * x.std(ddof=1) / math.sqrt(x.size)
    return float(x.mean() - half), float(x.mean() + half)


def error_counts_fisher_p(errors_a: int, errors_b: int, n_a: int, n_b: int | None = None) -> float:
    """Two-sided p-value of Fisher's exact test that two error counts share one error rate.

    Compares ``errors_a`` wrong recommendations out of ``n_a`` runs with ``errors_b`` out of
    ``n_b`` (default ``n_a``): the check used for every published error rate, which is itself a
    count out of the paper's 1000 runs and may be 0, where a confidence interval around our rate
    cannot contain it.
    """
    n_b = n_a if n_b is None else n_b
    for name, v in (("errors_a", errors_a), ("errors_b", errors_b), ("n_a", n_a), ("n_b", n_b)):
        V.integer(v, name, 0)
    if errors_a > n_a or errors_b > n_b or n_a == 0 or n_b == 0:
        raise ValueError(f"need 0 <= errors <= runs and runs >= 1, got {errors_a}/{n_a} and {errors_b}/{n_b}")
    table = [[int(errors_a), int(n_a - errors_a)], [int(errors_b), int(n_b - errors_b)]]
    return float(stats.fisher_exact(table)[1])


def paired_errors(wrong_a: ArrayLike, wrong_b: ArrayLike) -> tuple[int, int, float]:
    """Two rules' errors on the same runs, compared by McNemar's exact test.

    Returns ``(only_a, only_b, p)``: the runs where only ``a`` errs, those where only ``b``
    errs, and the two-sided p-value of the exact binomial test that a discordant run is as
    likely to be either (1 when no run is discordant). Runs on common random numbers share
    their instances and reward streams, so the discordant runs carry the whole difference.
    """
    a = np.asarray(wrong_a)
    b = np.asarray(wrong_b)
    if a.dtype != bool or b.dtype != bool or a.shape != b.shape or a.ndim != 1:
        raise ValueError("wrong_a and wrong_b must be boolean vectors of one length")
    only_a = int(np.count_nonzero(a & ~b))
    only_b = int(np.count_nonzero(b & ~a))
    n = only_a + only_b
    p = 1.0 if n == 0 else float(stats.binomtest(only_a, n, 0.5).pvalue)
    return only_a, only_b, p


def same_law(times_a: ArrayLike, times_b: ArrayLike,
             categories: Optional[dict[str, tuple]] = None) -> dict[str, float]:
    """p-values of the tests that two sets of independent runs come from one law.

    ``"stopping_time"``: the two-sample Kolmogorov–Smirnov test on ``times_a`` and ``times_b``
    (for integer times with ties the test is conservative: its p-values are too large, never too
    small). For each ``name: (labels_a, labels_b)`` of ``categories`` (stop reasons, recommended
    arms, errors): Pearson's χ² test of homogeneity of the two samples' label frequencies, over
    the labels either sample shows (1 when both show one label only).
    """
    a = V.reals(times_a, "times_a")
    b = V.reals(times_b, "times_b")
    if a.ndim != 1 or b.ndim != 1 or a.size < 2 or b.size < 2:
        raise ValueError("times_a and times_b must be vectors of at least two runs")
    out = {"stopping_time": float(stats.ks_2samp(a, b).pvalue)}
    for name, (la, lb) in (categories or {}).items():
        la, lb = np.asarray(la), np.asarray(lb)
        if la.shape != a.shape or lb.shape != b.shape:
            raise ValueError(f"categories[{name!r}]: one label per run, got {la.shape[0]} and "
                             f"{lb.shape[0]} labels for {a.size} and {b.size} runs")
        labels = np.union1d(la, lb)
        if labels.size < 2:
            out[name] = 1.0
            continue
        table = np.array([[np.count_nonzero(la == v) for v in labels],
                          [np.count_nonzero(lb == v) for v in labels]])
        out[name] = float(stats.chi2_contingency(table, correction=False)[1])
    return out


def share_by(times: ArrayLike, events: ArrayLike, grid: ArrayLike,
             level: float = 0.95) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The share of runs whose event happened by each time of ``grid``, with pointwise exact
    (Clopper–Pearson) intervals at ``level``: ``(share, lower, upper)``.

    ``times`` holds each run's time (a stopping time) and ``events`` whether its event happened
    then (it stopped, rather than being censored); a run counts at ``n`` when its event
    happened at a time ``<= n``.
    """
    t = np.asarray(times)
    e = np.asarray(events)
    if t.ndim != 1 or t.size == 0 or e.shape != t.shape or e.dtype != bool:
        raise ValueError("times and events must be a non-empty vector and a boolean vector of "
                         "the same length")
    g = np.atleast_1d(np.asarray(grid, dtype=float))
    hits = np.array([np.count_nonzero(e & (t <= n)) for n in g], dtype=np.int64)
    bounds = np.array([clopper_pearson(int(h), t.size, level) for h in hits]).reshape(-1, 2)
    return hits / t.size, bounds[:, 0], bounds[:, 1]


def empirical_percentile(value: float, sample: ArrayLike) -> float:
    """Mid-rank percentile of ``value`` in ``sample``: ``100 (#{x < v} + #{x = v}/2) / n``."""
    x = np.asarray(sample, dtype=float)
    if x.ndim != 1 or x.size == 0:
        raise ValueError("sample must be a non-empty 1-D array")
    v = float(value)
    return float(100.0 * (np.count_nonzero(x < v) + 0.5 * np.count_nonzero(x == v)) / x.size)


def top_two_gap(means: ArrayLike) -> np.ndarray:
    """Gap ``μ_(1) − μ_(2)`` between the best and the second-best arm of each run (rows of ``means``)."""
    m = np.asarray(means, dtype=float)
    if m.ndim != 2 or m.shape[1] < 2:
        raise ValueError(f"means must have shape (n_runs, k) with k >= 2, got {m.shape}")
    top2 = np.sort(m, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


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


def hill_tail_index(x: ArrayLike, m: int) -> tuple[float, float]:
    """Hill's estimate of the tail index ``α`` of ``P(X > x) ∝ x^-α`` from the ``m`` largest values.

    ``α̂ = 1 / mean(log(X_(i) / X_(m+1)))`` over the ``m`` largest order statistics ``X_(i)``
    above ``X_(m+1)``, the maximum-likelihood estimate for a Pareto tail beyond ``X_(m+1)``, with
    the asymptotic standard error ``α̂ / sqrt(m)``. For the stopping time of a frequentist
    algorithm under a prior Theorem 2's mechanism gives ``α = 1/2`` (an infinite mean).

    Returns
    -------
    (alpha, standard_error)
    """
    x = np.sort(np.asarray(x, dtype=float))[::-1]
    m = V.integer(m, "m", 2)
    if x.ndim != 1 or x.size <= m:
        raise ValueError(f"m must be below the number of values, got m = {m} for {x.size}")
    if not (np.all(np.isfinite(x)) and x[m] > 0):
        raise ValueError("x must be finite and its m + 1 largest values positive")
    logs = np.log(x[:m] / x[m])
    if logs.mean() <= 0:
        raise ValueError("the m + 1 largest values are all equal: no tail to estimate")
    alpha = 1.0 / logs.mean()
    return float(alpha), float(alpha / math.sqrt(m))


def loglog_slope(x: ArrayLike, y: ArrayLike) -> tuple[float, float, float]:
    """Least-squares line through ``(log x, log y)``: ``(slope, intercept, slope standard error)``.

    Used for every power-law check of the book (``τ ∝ gap^-2``, CCDF tails ``∝ x^-1/2``,
    frontiers ``∝ N^-1``). The standard error is the usual ``sqrt(RSS / (n - 2) / Sxx)``
    (``numpy.polyfit(..., cov=True)``'s).

    The fit is computed in closed form about the means, with ``math.log`` and exactly rounded
    sums (``math.fsum``), not by a LAPACK least-squares solver: the result is the same to the last
    bit on every machine, whichever BLAS kernels or SIMD paths it selects, so the numbers the
    chapters glue from it reproduce exactly.
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.shape != y.shape or x.ndim != 1 or x.size < 3:
        raise ValueError("x and y must be 1-D arrays of the same length >= 3")
    if not (np.all(np.isfinite(x) & (x > 0)) and np.all(np.isfinite(y) & (y > 0))):
        raise ValueError("x and y must be finite and positive")
    lx = [math.log(v) for v in x.tolist()]
    ly = [math.log(v) for v in y.tolist()]
    n = len(lx)
    mx, my = math.fsum(lx) / n, math.fsum(ly) / n
    dx = [v - mx for v in lx]
    dy = [v - my for v in ly]
    sxx = math.fsum(a * a for a in dx)
    if sxx == 0.0:
        raise ValueError("x must not be constant: the slope is undefined")
    slope = math.fsum(a * b for a, b in zip(dx, dy)) / sxx
    rss = math.fsum((b - slope * a) ** 2 for a, b in zip(dx, dy))
    return slope, my - slope * mx, math.sqrt(rss / (n - 2) / sxx)
