"""What a live experiment's call costs, and what a look of a platform's rule costs.

Usage::

    python benchmarks/bench_online.py

An :class:`bai_lib.online.Experiment` keeps no compiled state: every call replays its log. For
each setting the benchmark records 200,000 observations (simulated, one look at the end), then
times :meth:`~bai_lib.online.Experiment.next_arms` (one replay of the whole log and a one-arm
plan), five times, and prints the wall and CPU time of a call and per 10⁵ observations. Then it
times a look of :class:`~bai_lib.algorithms.PosteriorRule`: the quadrature of each posterior
summary (:mod:`bai_lib.posterior`) at growing counts, 200 times in a compiled loop.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from numba import njit

import bai_lib as B
from bai_lib import posterior as P
from bai_lib.algorithms import PosteriorRule
from bai_lib.online import Experiment

GAUSS = B.GaussianPrior.standard(3)
UNIFORM = B.BetaPrior.uniform(3)
SETTINGS = [  # (algorithm, prior, noise, means of the simulated arms)
    ("elimination", GAUSS, 1.0, [0.1, 0.05, 0.0]),
    ("ttts", GAUSS, 1.0, [0.1, 0.05, 0.0]),
    ("ttts", UNIFORM, None, [0.3, 0.29, 0.28]),
    ("ebtc", UNIFORM, None, [0.3, 0.29, 0.28]),
    ("lucb", GAUSS, 1.0, [0.1, 0.05, 0.0]),
    (PosteriorRule(), UNIFORM, None, [0.3, 0.295, 0.29]),
    (PosteriorRule(), GAUSS, 1.0, [0.1, 0.05, 0.0]),
]
LOG = 200_000


def replay_costs() -> None:
    print(f"One call (replay of a log of {LOG:,} observations and a one-arm plan):")
    print(f"{'algorithm':22s} {'rewards':9s} {'wall ms':>8s} {'CPU ms':>8s} {'ms per 1e5':>11s}")
    for spec, prior, noise, means in SETTINGS:
        e = Experiment(spec, prior, 1e-6, noise_stds=noise, max_samples=10**7)
        e.simulate(means, n=10)  # compile or load the engine
        e = Experiment(spec, prior, 1e-6, noise_stds=noise, max_samples=10**7)
        n = e.simulate(means, n=LOG, look_every=10**9).samples
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(5):
            e.next_arms(1)
        wall, cpu = (time.perf_counter() - t0) / 5, (time.process_time() - c0) / 5
        print(f"{e.algorithm.label:22s} {e.rewards:9s} {wall * 1e3:8.1f} {cpu * 1e3:8.1f} "
              f"{wall / n * 1e5 * 1e3:11.2f}")


@njit
def _timed(rule, A, B, repeats, out):
    total = 0.0
    for _ in range(repeats):
        if rule == 0:
            P.probability_best_into(A, B, P.PANEL_Z, P.GL_NODES, P.GL_WEIGHTS, out)
            total += out[0]
        elif rule == 1:
            total += P.expected_max(A, B, P.PANEL_Z, P.GL_NODES, P.GL_WEIGHTS)
        else:
            total += P.value_remaining_cdf(A, B, 0, 0.01, P.PANEL_Z, P.GL_NODES, P.GL_WEIGHTS)
    return total


def look_costs() -> None:
    print("\nA look of PosteriorRule (its posterior summary, three arms at 30%, 29%, 28%):")
    print(f"{'observations':>13s} {'P(best) ms':>11s} {'loss ms':>8s} {'value ms':>9s}")
    out = np.empty(3)
    for n in (1_000, 10_000, 100_000, 1_000_000):
        A = np.array([0.30, 0.29, 0.28]) * n / 3 + 1.0
        B = n / 3 + 2.0 - A
        row = []
        for rule in range(3):
            _timed(rule, A, B, 1, out)  # compile
            t0 = time.perf_counter()
            _timed(rule, A, B, 200, out)
            row.append((time.perf_counter() - t0) / 200 * 1e3)
        print(f"{n:13,d} {row[0]:11.3f} {row[1]:8.3f} {row[2]:9.3f}")


if __name__ == "__main__":
    warnings.simplefilter("ignore", B.CensoringWarning)
    np.set_printoptions(precision=3)
    replay_costs()
    look_costs()
