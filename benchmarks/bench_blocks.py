"""Runs by blocks against runs sample by sample: speed, and certified errors down to δ = 10⁻⁶.

Usage::

    python benchmarks/bench_blocks.py [n_runs]

Part 1: for each setting (Algorithm 1 and NoElim on the paper's Table 1 and Table 2 priors,
two-arm TTTS on Table 1's, censored at its default ``10⁹`` samples), the same ``n_runs``
instances (seed 2024) are simulated sample by sample and by blocks
(:mod:`bai_lib.algorithms.skip_ahead`, :mod:`bai_lib.algorithms.ttts_blocks`) through
:func:`bai_lib.simulate` on all threads, one after the other. A row gives each method's wall and
CPU seconds, its CPU microseconds per run, and its *equivalent samples per second*: the samples
of the per-sample runs divided by the method's wall time (the work a second of the method
replaces), and the ratio of the two. The near tie at
``δ = 10⁻³`` (gap ``Δ0/2``, every run reaching the indifference round ``n*``) runs only by
blocks: its per-sample speed is taken from the per-sample Table 1 row.

Part 2: the importance-sampling estimate of the PoE of Algorithm 1 on two standard normal arms
(:func:`bai_lib.poe.importance_poe`, 1,000 runs by blocks) at ``δ = 10⁻³ … 10⁻⁶``: its wall and
CPU time, the time per run, the estimate, its interval, and whether it certifies PoE ≤ δ.
"""

from __future__ import annotations

import dataclasses
import sys
import time
import warnings

import numpy as np

import bai_lib as B
from bai_lib.plan import CensoringWarning
from bai_lib.poe import importance_poe

H2 = B.GaussianPrior.standard(2)
H10 = B.GaussianPrior.standard(10)
SETTINGS = [  # (name, specification, prior, delta)
    ("Table 1, Algorithm 1", B.Elimination(), H2, 0.1),
    ("Table 2, Algorithm 1, Δ0 = δ/(4L)", B.Elimination(), H10, 0.01),
    ("Table 2, Algorithm 1, Δ0 = δ/L", B.Elimination(delta0_factor=1), H10, 0.01),
    ("Table 2, NoElim as released", B.NoElim(delta0_factor=1, recommend="empirical_best"), H10,
     0.01),
    ("Table 1, TTTS", B.TTTS(), H2, 0.1),
]


def blocks_of(spec):
    return dataclasses.replace(spec, method="blocks")


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def speed(n_runs: int) -> None:
    print(f"{'setting':38s} {'runs':>7s} {'samples/run':>12s} {'samples: wall':>14s} {'cpu':>8s} "
          f"{'µs/run':>8s} {'blocks: wall':>13s} {'cpu':>7s} {'µs/run':>7s} "
          f"{'equiv. samples/s':>17s} {'blocks/samples':>15s}")
    for name, spec, prior, delta in SETTINGS:
        for s in (spec, blocks_of(spec)):  # compile first
            B.simulate(s, prior, 1.0, delta, 2, 0, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CensoringWarning)
            a, wa, ca = timed(lambda: B.simulate(spec, prior, 1.0, delta, n_runs, 2024,
                                                 progress=False))
            b, wb, cb = timed(lambda: B.simulate(blocks_of(spec), prior, 1.0, delta, n_runs,
                                                 2024, progress=False))
        samples = float(a.stopping_times.sum())
        print(f"{name:38s} {n_runs:7,d} {samples / n_runs:12,.0f} {wa:13.2f}s {ca:7.1f}s "
              f"{1e6 * ca / n_runs:8.1f} {wb:12.2f}s {cb:6.1f}s {1e6 * cb / n_runs:7.1f} "
              f"{samples / wa:8.3g} / {samples / wb:.3g} {wa / wb:14.0f}×", flush=True)
        if name == "Table 1, Algorithm 1":
            per_sample_rate = samples / wa
    d = 1e-3
    d0 = B.delta0(H2, d)
    b, wb, cb = timed(lambda: B.simulate(B.Elimination(method="blocks"), H2, 1.0, d, n_runs, 2024,
                                         means=[0.0, d0 / 2], max_samples=2**62, progress=False))
    samples = float(b.stopping_times.sum())
    print(f"{'near tie, δ = 0.001 (per-sample rate':38s} {n_runs:7,d} {samples / n_runs:12,.0f} "
          f"{samples / per_sample_rate:13.0f}s {'':>8s} {'':>8s} {wb:12.2f}s {cb:6.1f}s "
          f"{1e6 * cb / n_runs:7.1f} {per_sample_rate:8.3g} / {samples / wb:.3g} "
          f"{samples / per_sample_rate / wb:14.0f}×")


def certified(n_runs: int = 1000) -> None:
    print(f"\n{'δ':>8s} {'runs':>6s} {'wall':>8s} {'cpu':>8s} {'ms/run':>8s} {'PoE/δ':>8s} "
          f"{'95% interval / δ':>18s} {'certified':>10s}")
    spec = B.Elimination(method="blocks")
    importance_poe(spec, H2, 1.0, 1e-3, 4, 0, progress=False)  # compile first
    for d in (1e-3, 1e-4, 1e-5, 1e-6):
        est, w, c = timed(lambda: importance_poe(spec, H2, 1.0, d, n_runs, 2024, progress=False))
        print(f"{d:8.0e} {n_runs:6,d} {w:7.2f}s {c:7.2f}s {1e3 * w / n_runs:8.3f} "
              f"{est.estimate / d:8.3f} [{est.ci[0] / d:.3f}, {est.ci[1] / d:.3f}]{'':>4s} "
              f"{str(est.certified):>10s}", flush=True)


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    speed(n)
    certified()
