"""The cost estimate against the runs it predicts.

Usage::

    python benchmarks/bench_cost_estimate.py [--quick] [--only NAME ...]

For each setting, :func:`bai_lib.estimate_cost` predicts the mean samples per run and the wall
time, then :func:`bai_lib.simulate` runs the same plan (same seed, same instances) on two
threads. Prints, per setting: the predicted and measured mean samples and their ratio, the
predicted and measured wall time (and the CPU seconds of the runs), and the estimate's own wall
and CPU seconds. The settings include a tight conversion prior, heavy-tailed GLR algorithms and
the slow Bernoulli settings that used to run for minutes without a word (TTTS re-drawing its
challenger with the indifference stop, KL-LUCB). ``--quick`` runs the cheaper half.
"""

from __future__ import annotations

import argparse
import time
import warnings

import bai_lib
from bai_lib.algorithms import LUCB, TTTS, Elimination

STANDARD3 = bai_lib.GaussianPrior([0, 0, 0], [1, 1, 1])
TIGHT = bai_lib.BetaPrior([60, 55, 50], [940, 945, 950])   # 6%, 5.5%, 5%, each a + b = 1000
RATES = bai_lib.BetaPrior([3, 4, 5], [7, 6, 5])

# name: (algorithm, prior, delta, runs, max_samples, quick)
SETTINGS = {
    "Algorithm 1, N(0, 1)^3, delta 0.1": ("elimination", STANDARD3, 0.1, 1000, None, True),
    "TTUCB, N(0, 1)^3, delta 0.01 (heavy tail)": ("ttucb", STANDARD3, 0.01, 400, 10**7, True),
    "Track-and-Stop, N(0, 1)^3, delta 0.01 (heavy tail)": ("tas", STANDARD3, 0.01, 200, 10**7,
                                                           True),
    "TTUCB, tight conversion prior, delta 0.1": ("ttucb", TIGHT, 0.1, 100, 10**7, True),
    "Algorithm 1 (KL widths), tight conversion prior": (Elimination(widths="kl"), TIGHT, 0.1,
                                                        100, None, False),
    "KL-LUCB, Beta(3,7), Beta(4,6), Beta(5,5)": (LUCB(widths="kl"), RATES, 0.1, 100, None, False),
    "TTTS (resample, beta 0.3, indifference), same prior": (
        TTTS(indifference=True, beta=0.3, challenger="resample"), RATES, 0.1, 40, None, False),
}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the cheaper settings only")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="settings whose name "
                        "contains one of these")
    args = parser.parse_args(argv)
    print(f"{'setting':52} {'predicted':>12} {'measured':>12} {'ratio':>6} {'pred. s':>8} "
          f"{'wall s':>8} {'CPU s':>8} {'est. s':>7} {'est. CPU':>8}")
    for name, (alg, prior, delta, runs, cap, quick) in SETTINGS.items():
        if args.quick and not quick:
            continue
        if args.only and not any(o in name for o in args.only):
            continue
        noise = None if isinstance(prior, bai_lib.BetaPrior) else 1.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", bai_lib.CensoringWarning)
            bai_lib.simulate(alg, prior, noise, delta, 1, 99, max_samples=cap)  # compiled
            w0, c0 = time.perf_counter(), time.process_time()
            est = bai_lib.estimate_cost(alg, prior, noise, delta, runs, 1, max_samples=cap,
                                        n_threads=2)
            w1, c1 = time.perf_counter(), time.process_time()
            res = bai_lib.simulate(alg, prior, noise, delta, runs, 1, max_samples=cap,
                                   n_threads=2, progress=False)
            w2, c2 = time.perf_counter(), time.process_time()
        measured = float(res.stopping_times.mean())
        print(f"{name:52} {est.samples_per_run:12,.0f} {measured:12,.0f} "
              f"{est.samples_per_run / measured:6.2f} {est.seconds:8.2f} {w2 - w1:8.2f} "
              f"{c2 - c1:8.2f} {w1 - w0:7.2f} {c1 - c0:8.2f}", flush=True)


if __name__ == "__main__":
    main()
