"""What a live experiment's call costs, and what a look of a platform's rule costs.

Usage::

    python benchmarks/bench_online.py

An :class:`bai_lib.online.Experiment` keeps no compiled state: every call replays its log. For
each setting the benchmark records 200,000 observations (simulated, one look at the end), then
times :meth:`~bai_lib.online.Experiment.next_arms` (one replay of the whole log and a one-arm
plan), five times, and prints the wall and CPU time of a call and per 10⁵ observations. Then it
times a look of :class:`~bai_lib.algorithms.PosteriorRule` (the quadrature of the posterior
summaries) at growing counts, as the difference between runs that look every sample and runs
that look once.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import bai_lib as B
from bai_lib.algorithms import PosteriorRule
from bai_lib.online import Experiment

GAUSS = B.GaussianPrior.standard(3)
UNIFORM = B.BetaPrior.uniform(3)
SETTINGS = [  # (algorithm, prior, noise, means of the simulated arms)
    ("elimination", GAUSS, 1.0, [0.1, 0.05, 0.0]),
    ("ttts", GAUSS, 1.0, [0.1, 0.05, 0.0]),
    ("ttts", UNIFORM, None, [0.3, 0.29, 0.28]),
    ("ebtc", UNIFORM, None, [0.3, 0.29, 0.28]),
    (PosteriorRule(), UNIFORM, None, [0.3, 0.295, 0.29]),
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


def look_costs() -> None:
    print("\nA look of PosteriorRule (probability of being best, three arms):")
    print(f"{'samples':>9s} {'ms per look':>12s}")
    means = [0.3, 0.29, 0.28]
    for n in (1_000, 10_000, 100_000):
        times = []
        for look_every in (1, 10**9):
            e = Experiment(PosteriorRule(), UNIFORM, 1e-9, max_samples=10**7)
            e.simulate(means, n=5, look_every=look_every)
            e = Experiment(PosteriorRule(), UNIFORM, 1e-9, max_samples=10**7)
            e.simulate(means, n=n - 200, look_every=10**9)
            t0 = time.process_time()
            e.simulate(means, n=200, look_every=look_every)
            times.append(time.process_time() - t0)
        print(f"{n:9,d} {(times[0] - times[1]) / 200 * 1e3:12.3f}")


if __name__ == "__main__":
    warnings.simplefilter("ignore", B.CensoringWarning)
    np.set_printoptions(precision=3)
    replay_costs()
    look_costs()
