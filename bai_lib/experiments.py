"""Orchestration of the paper's experiments: run the tables, compare with the published rows.

Section 6 of the paper: Experiment 1 (Tables 1 and 3; ``k = 2``, ``δ = 0.1``; Algorithm 1,
TTTS, TTUCB) and Experiment 2 (Tables 2 and 4; ``k = 10``, ``δ = 0.01``; Algorithm 1 and
NoElim), each with ``N = 1000`` runs, standard normal priors and unit noise. The settings
and published numbers live in :mod:`bai_lib.published`.
"""

from __future__ import annotations

import csv
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
from numpy.typing import ArrayLike

from . import published
from . import _validate as V
from .algorithms import Algorithm, resolve
from .families import reward_model
from .priors import GaussianPrior
from .stats import empirical_percentile, mean_ci

__all__ = [
    "DEFAULT_SEED",
    "run_experiment",
    "comparison_rows",
    "InstanceSets",
    "instance_sets",
    "delta_rows",
    "write_csv",
    "results_path",
    "RESULTS_DIR_ENV",
]

#: Seed used by every chapter unless stated otherwise.
DEFAULT_SEED = 2024


def run_experiment(
    experiment: int,
    *,
    seed: int = DEFAULT_SEED,
    n_runs: int | None = None,
    algorithms: Sequence[Algorithm | str] | Mapping[str, Algorithm | str] | None = None,
    delta0_factor: float | None = None,
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
    algorithms : sequence or mapping, optional
        Names or specifications (:mod:`bai_lib.algorithms`), or a mapping ``key -> name or
        specification``. Defaults to the experiment's algorithms with default options.
    delta0_factor : float, optional
        ``Δ0 = δ / (factor · L(H))`` for every elimination algorithm that does not fix its own
        ``Δ0`` (4 as printed in Algorithm 1, 1 as in the authors' released code of Experiment 2).
    max_samples : int
        Censoring level of a single run.
    progress : bool, optional
        Passed to :func:`bai_lib.simulate`.

    Returns
    -------
    dict
        ``key -> SimulationResult``; the key is the name, the specification's name, or the
        mapping's key.
    """
    from .simulation import simulate

    if experiment not in (1, 2):
        raise ValueError(f"experiment must be 1 or 2, got {experiment!r}")
    setting = published.EXPERIMENTS[experiment]
    prior = GaussianPrior.standard(setting["k"])
    algs = algorithms if algorithms is not None else setting["algorithms"]
    if isinstance(algs, Mapping):
        items = [(key, resolve(a)) for key, a in algs.items()]
    else:
        items = [(a if isinstance(a, str) else resolve(a).name, resolve(a)) for a in algs]
    n = setting["n_runs"] if n_runs is None else n_runs
    out = {}
    for key, spec in items:
        if delta0_factor is not None:
            spec = spec.with_delta0_factor(delta0_factor)
        out[key] = simulate(spec, prior, setting["noise_std"], setting["delta"], n, seed,
                            max_samples=max_samples, progress=progress)
    return out


def comparison_rows(results: Mapping, table: int, reading: str = "as_printed") -> list[dict]:
    """One row per algorithm: our summary next to the published row of ``table``.

    Columns: ``algorithm`` (the key in ``results``), ``avg``, ``avg_ci_low``, ``avg_ci_high``
    (normal approximation, given only for algorithms with a bounded stopping time, Algorithm 1
    and NoElim; ``nan`` for TTTS and TTUCB, whose expected stopping time is infinite by
    Theorem 2), ``max``, ``median``, ``q90``, ``q99``, ``error``, ``error_ci_low``,
    ``error_ci_high``, ``n_censored``, and the published ``paper_avg``, ``paper_max``,
    ``paper_error`` (and ``paper_comp`` for Tables 3-4) of the algorithm's row under
    ``reading`` (see :data:`bai_lib.published.READINGS`).
    """
    rows = []
    for key, res in results.items():
        s = res.summary()
        pub = published.row(table, res.algorithm.name, reading)
        bounded = res.algorithm.bounded and reward_model(res.rewards).sub_gaussian
        lo, hi = mean_ci(res.stopping_times) if bounded else (math.nan, math.nan)
        elo, ehi = s["error_ci"]
        row = {
            "algorithm": key,
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


@dataclass(frozen=True)
class InstanceSets:
    """Summaries of ``n_sets`` independent instance sets of ``set_size`` runs each.

    A published Avg or Max of a heavy-tailed stopping time is one draw from the distribution of
    that statistic over instance sets; these arrays are a sample of that distribution, to place a
    published number in it (:meth:`percentile`).

    Attributes
    ----------
    result : SimulationResult
        All ``n_sets * set_size`` runs; set ``s`` is runs ``s*set_size .. (s+1)*set_size - 1``.
    avg, max, median, error : ndarray, shape (n_sets,)
        Per-set mean, maximum and median stopping time, and error rate.
    n_censored : ndarray of int, shape (n_sets,)
        Censored runs per set (their truncated ``τ`` enters ``avg`` and ``max``).
    """

    result: object
    set_size: int
    avg: np.ndarray
    max: np.ndarray
    median: np.ndarray
    error: np.ndarray
    n_censored: np.ndarray

    @property
    def n_sets(self) -> int:
        return int(self.avg.size)

    def percentile(self, statistic: str, value: float) -> float:
        """Mid-rank percentile of ``value`` among the sets' ``statistic`` (0 to 100)."""
        return empirical_percentile(value, self._stat(statistic))

    def _stat(self, statistic):
        if statistic not in ("avg", "max", "median", "error"):
            raise ValueError(f"statistic must be 'avg', 'max', 'median' or 'error', got {statistic!r}")
        return getattr(self, statistic)


def instance_sets(algorithm: Algorithm | str, prior: GaussianPrior, noise_stds: ArrayLike,
                  delta: float, n_sets: int, set_size: int, seed: int,
                  **simulate_options: Any) -> InstanceSets:
    """Run ``n_sets`` independent sets of ``set_size`` instances and summarise each set.

    The sets are consecutive blocks of one :func:`bai_lib.simulate` call with ``n_sets *
    set_size`` runs, so set 0 is exactly the ``set_size``-run table of the same seed and every
    set is an independent draw of the instances and the rewards. ``simulate_options`` (e.g.
    ``max_samples``, ``progress``) are passed on.
    """
    from .simulation import simulate

    n_sets = V.integer(n_sets, "n_sets", 1)
    set_size = V.integer(set_size, "set_size", 1)
    res = simulate(algorithm, prior, noise_stds, delta, int(n_sets) * int(set_size), seed,
                   **simulate_options)
    tau = res.stopping_times.reshape(n_sets, set_size)
    return InstanceSets(
        result=res,
        set_size=int(set_size),
        avg=tau.mean(axis=1),
        max=tau.max(axis=1),
        median=np.median(tau, axis=1),
        error=1.0 - res.correct.reshape(n_sets, set_size).mean(axis=1),
        n_censored=res.censored.reshape(n_sets, set_size).sum(axis=1),
    )


def delta_rows(results: Mapping, truncations: Sequence[int] = (10**4, 10**6),
               min_errors_budget: float = 20.0) -> list[dict]:
    """One row per confidence level of ``{δ: SimulationResult}`` (:func:`bai_lib.simulate_deltas`).

    Keys: ``delta``; ``n_runs``; ``n_censored``; ``median``, ``q90``, ``q99`` (order
    statistics, exact while fewer runs are censored than lie above them); ``trunc_<T>``, the
    truncated mean ``E[min(τ, T)]`` for each ``T`` of ``truncations`` (finite for every
    algorithm, and exact when ``T <= max_samples``); ``mean``, ``mean_lo``, ``mean_hi``: the
    sample mean with its normal 95% interval, given (else ``nan``) only when no run is censored
    and ``n_runs · δ >= min_errors_budget``: below that, runs on the near-ties of prior mass of
    order ``δ``, which dominate the mean of an algorithm like Algorithm 1, are too rare to be
    sampled; ``error`` with its Clopper–Pearson 95% interval ``error_lo``, ``error_hi``.
    """
    rows = []
    for delta, res in results.items():
        tau = res.stopping_times
        n = res.n_runs
        s = res.summary()
        for T in truncations:
            if T > res.max_samples:
                raise ValueError(f"truncations: {T:,} exceeds max_samples = {res.max_samples:,}, "
                                 "so E[min(tau, T)] is not observed")
        row = {"delta": float(delta), "n_runs": n, "n_censored": s["n_censored"],
               "median": s["median"], "q90": s["q90"], "q99": s["q99"],
               **{f"trunc_{T}": float(np.minimum(tau, T).mean()) for T in truncations},
               "mean": math.nan, "mean_lo": math.nan, "mean_hi": math.nan,
               "error": s["error"], "error_lo": s["error_ci"][0], "error_hi": s["error_ci"][1]}
        if s["n_censored"] == 0 and n * delta >= min_errors_budget:
            row["mean"] = float(tau.mean())
            row["mean_lo"], row["mean_hi"] = mean_ci(tau)
        rows.append(row)
    return rows


def _fmt(v) -> str:
    if isinstance(v, (float, np.floating)):
        return f"{float(v):.6g}"
    return str(v)


#: Environment variable that redirects the notebooks' results files (see :func:`results_path`).
RESULTS_DIR_ENV = "BAI_LIB_RESULTS_DIR"


def results_path(path: str | Path) -> Path:
    """Where a results file named ``path`` is actually written.

    ``path`` itself, unless the environment variable ``BAI_LIB_RESULTS_DIR`` names a directory:
    then the file goes into that directory under its own file name. Test runs (nbval) set it to a
    temporary directory so that re-executing the notebooks never rewrites the tracked
    ``results/`` and the written tables can be compared with the tracked ones.

    A chapter's ``../results/...`` outside a checkout (no folder ``../results`` beside the
    notebook, as for a chapter downloaded from the book) is ``results/...`` in the working
    directory: a downloaded chapter keeps what it writes beside itself.
    """
    path = Path(path)
    redirect = os.environ.get(RESULTS_DIR_ENV)
    if redirect:
        return Path(redirect) / path.name
    detached = (not path.is_absolute() and path.parts[:2] == ("..", "results")
                and not Path("..", "results").is_dir())
    return Path("results", *path.parts[2:]) if detached else path


def write_csv(rows: Iterable[Mapping], path: str | Path) -> Path:
    """Write dict rows to CSV with deterministic number formatting (6 significant digits).

    Returns the path written, which is ``path`` unless ``BAI_LIB_RESULTS_DIR`` redirects it
    (:func:`results_path`).
    """
    rows = list(rows)
    if not rows:
        raise ValueError("rows must not be empty")
    path = results_path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fields = list(rows[0])
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({k: _fmt(r.get(k, "")) for k in fields})
    return path
