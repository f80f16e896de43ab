"""Runs by blocks against runs sample by sample: one law, tested at 10⁵ runs each.

Usage::

    python benchmarks/same_law_blocks.py [n_runs] [part of a setting's name]

For each setting (Table 1; Table 2 for Algorithm 1 with both ``Δ0`` conventions and for NoElim
as released; a fixed near tie, gap ``Δ0``, at the edge of the indifference stop; two-arm TTTS
on Table 1's prior, censored at its default ``10⁹`` samples, and on a near tie, gap 0.02),
``n_runs`` runs (default 10⁵) sample by sample (seed 1) and by blocks (seed 2, so the two sets
are independent) are compared with :func:`bai_lib.stats.same_law`: the two-sample
Kolmogorov–Smirnov test on the stopping time, χ² tests on the stop reason, the recommended arm
and the error, and the error rates with their Clopper–Pearson intervals. Prints one row per
setting with the CPU seconds of each method, and writes ``results/blocks_same_law.csv``.
"""

from __future__ import annotations

import dataclasses
import sys
import time

import numpy as np

import bai_lib as B
from bai_lib.experiments import write_csv
from bai_lib.stats import clopper_pearson, same_law

H2 = B.GaussianPrior.standard(2)
H10 = B.GaussianPrior.standard(10)
NEAR_TIE = [0.0, B.delta0(H2, 0.1)]
SETTINGS = [  # (name, specification, prior, delta, fixed means)
    ("Table 1, Algorithm 1", B.Elimination(), H2, 0.1, None),
    ("Table 2, Algorithm 1, Δ0 = δ/(4L)", B.Elimination(), H10, 0.01, None),
    ("Table 2, Algorithm 1, Δ0 = δ/L", B.Elimination(delta0_factor=1), H10, 0.01, None),
    ("Table 2, NoElim as released", B.NoElim(delta0_factor=1, recommend="empirical_best"), H10,
     0.01, None),
    ("near tie (gap Δ0), Algorithm 1", B.Elimination(), H2, 0.1, NEAR_TIE),
    ("Table 1, TTTS", B.TTTS(), H2, 0.1, None),
    ("near tie (gap 0.02), TTTS", B.TTTS(), H2, 0.1, [0.0, 0.02]),
]


def blocks_of(spec):
    return dataclasses.replace(spec, method="blocks")


def compare(name, spec, prior, delta, means, n_runs):
    out = {}
    for method, s, seed in (("samples", spec, 1), ("blocks", blocks_of(spec), 2)):
        c = time.process_time()
        out[method] = B.simulate(s, prior, 1.0, delta, n_runs, seed, means=means, progress=False)
        out[method + "_cpu"] = time.process_time() - c
    a, b = out["samples"], out["blocks"]
    p = same_law(a.stopping_times, b.stopping_times, {
        "stop_reason": (a.stop_reasons, b.stop_reasons),
        "recommendation": (a.recommendations, b.recommendations),
        "error": (~a.correct, ~b.correct)})
    row = {"setting": name, "runs": n_runs}
    for method, r in (("samples", a), ("blocks", b)):
        lo, hi = clopper_pearson(int((~r.correct).sum()), n_runs)
        row.update({f"{method}_mean": r.stopping_times.mean(), f"{method}_error": r.error_rate,
                    f"{method}_error_lo": lo, f"{method}_error_hi": hi,
                    f"{method}_cpu_seconds": round(out[method + "_cpu"], 1)})
    row.update({f"p_{k}": v for k, v in p.items()})
    return row


def main(n_runs: int = 100_000, only: str = "") -> None:
    B.simulate(B.Elimination(method="blocks"), H2, 1.0, 0.1, 2, 0, progress=False)  # compile
    rows = []
    for setting in SETTINGS:
        if only not in setting[0]:
            continue
        row = compare(*setting, n_runs)
        rows.append(row)
        print(", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                        for k, v in row.items()), flush=True)
    name = "results/blocks_same_law.csv" if not only else "results/blocks_same_law_part.csv"
    print("written", write_csv(rows, name))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000,
         sys.argv[2] if len(sys.argv) > 2 else "")
