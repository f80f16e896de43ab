"""Throughput of the compiled simulators on the paper's two experiments.

Usage::

    python benchmarks/bench_simulators.py [--n-threads N] [--seed S]

Prints, for the settings of Table 1 (k = 2, standard normal prior,
sigma = 1, delta = 0.1, N = 1000 runs) and Table 2 (k = 10, delta = 0.01,
N = 1000 runs; Delta_0 with factor 4 as printed in Algorithm 1 and factor 1), and for
Bernoulli arms under two uniform priors (rows B1: Table 1's setting with ``BetaPrior.uniform(2)``
and sigma = 1/2) and at rates near 3% (rows B2: ``BetaPrior(3, 97)`` twice, sigma = 1/2 and
KL widths, a tenth of the runs),
the wall time of :func:`bai_lib.simulation.simulate`, the number of samples
drawn, the throughput in samples per second and its ratio to numpy's bulk
normal generator (single core, and times the number of threads).

A second table runs every algorithm, the baselines beyond the paper included, on one fixed
instance with k = 10 arms, means evenly spaced from 1 to 0, sigma = 1, delta = 0.01 (the
frequentist setting, ``simulate(..., means=...)``): no heavy tail, so the rates compare the
per-sample cost of the algorithms. A third runs TTTS on ten Bernoulli arms (rates evenly spaced
from 0.7 to 0.3, uniform priors), with its default challenger and the capped re-drawing one.

Throughput counts samples (arm pulls), i.e. the sum of the stopping times;
each sample is one normal variate plus the algorithm's bookkeeping.
Compilation is excluded (one warm-up call per algorithm).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bai_lib import _rng  # noqa: E402
from bai_lib.algorithms import (ALGORITHMS, EBTC, LUCB, TTTS, TTUCB,  # noqa: E402
                                SamplingRule, TrackAndStop)
from example_rules import least_sampled  # noqa: E402  (benchmarks/, next to this file)
from bai_lib.beta_prior import BetaPrior  # noqa: E402
from bai_lib.priors import GaussianPrior, delta0  # noqa: E402
from bai_lib import CensoringWarning, simulate  # noqa: E402
from bai_lib.families import Gaussian  # noqa: E402


def numpy_normal_rate(n=10**7, repeats=5):
    """Best-of-``repeats`` rate of ``Generator.standard_normal`` (samples/s)."""
    rng = np.random.default_rng(0)
    out = np.empty(n)
    rng.standard_normal(out=out)  # touch the memory
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        rng.standard_normal(out=out)
        best = min(best, time.perf_counter() - t0)
    return n / best


def own_normal_rate(n=10**7, repeats=5):
    """Same measurement for :func:`bai_lib._rng.fill_normal`."""
    state = _rng.seed_state(0, 0, 1)
    out = np.empty(n)
    _rng.fill_normal(state, out)
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        _rng.fill_normal(state, out)
        best = min(best, time.perf_counter() - t0)
    return n / best


def seeding_rates(n=100_000):
    """Per-state time of the compiled derivation and of ``numpy.random.SeedSequence``."""
    _rng.seed_states(0, range(10), 1)  # compile
    t0 = time.perf_counter()
    _rng.seed_states(2024, range(n), 1)
    ours = (time.perf_counter() - t0) / n
    m = n // 20
    t0 = time.perf_counter()
    for r in range(m):
        np.random.SeedSequence([2024, r, 1]).generate_state(4, np.uint64)
    theirs = (time.perf_counter() - t0) / m
    return ours, theirs


def table1_profile(n_runs, n_threads, seed, own_rate):
    """Algorithm 1 on Table 1's setting with many runs: where the wall time goes."""
    prior = GaussianPrior.standard(2)
    spec = ALGORITHMS["elimination"](delta0_factor=4.0)
    t0 = time.perf_counter()
    res = simulate(spec, prior, 1.0, 0.1, n_runs, seed, n_threads=n_threads, progress=False)
    wall = time.perf_counter() - t0
    samples = int(res.stopping_times.sum())
    kernel = float(res.seconds.sum())
    t0 = time.perf_counter()
    _rng.prior_means(prior.means, prior.stds, seed, n_runs)
    _rng.seed_states(seed, range(n_runs), 1)
    seeding = time.perf_counter() - t0
    print(f"Algorithm 1, Table 1 setting (k = 2, delta = 0.1, Delta0 = delta / (4 L)), "
          f"{n_runs:,} runs on {n_threads} threads:")
    print(f"  wall {wall:.2f} s, {samples:.4g} samples, {samples / wall:.3g} samples/s "
          f"({samples / wall / (own_rate * n_threads):.0%} of fill_normal x threads)")
    print(f"  seeding (both streams, compiled): {seeding * 1e3:.1f} ms; kernel calls: "
          f"{kernel:.2f} thread-s = {samples / kernel:.3g} samples/s per thread; the rest "
          f"(scheduling, Python call per run): {max(wall - seeding - kernel / n_threads, 0):.2f} s")
    print(f"  per sample a kernel thread spends {1e9 * kernel / samples:.2f} ns, of which "
          f"drawing the normal is {1e9 / own_rate:.2f} ns (fill_normal); the rest is the "
          "round's bookkeeping (means, bounds, elimination check)")


def two_arm_walk(repeats=3):
    """Algorithm 1 on an exact tie of two arms (delta = 0.01): general kernel vs two-arm walk.

    A tie runs to the indifference round n*, so the time per round is the whole cost; this is
    the run importance sampling spends its budget on (``bai_lib.poe``).
    """
    from bai_lib.algorithms.elimination import elimination_run, two_arm_elimination_run
    from bai_lib.confidence import conf_log_const
    from bai_lib.kernels import cancel_flag

    prior = GaussianPrior.standard(2)
    d0 = delta0(prior, 0.01)
    mu, sig, cancel = np.zeros(2), np.ones(2), cancel_flag(None)
    best = {"general": np.inf, "walk": np.inf}
    rounds = 0
    for r in range(repeats):
        st = _rng.seed_state(2024, r, 1)
        t0 = time.perf_counter()
        tau = elimination_run(st.copy(), mu, sig, conf_log_const(0.01, 2), d0, 2**62, False, False, False,
                              Gaussian(), False, cancel)[0]
        best["general"] = min(best["general"], time.perf_counter() - t0)
        t0 = time.perf_counter()
        two_arm_elimination_run(st.copy(), mu, 1.0, conf_log_const(0.01, 2), d0, 2**62, cancel)
        best["walk"] = min(best["walk"], time.perf_counter() - t0)
        rounds = tau // 2
    g, w = (1e9 * best[key] / rounds for key in ("general", "walk"))
    print(f"Algorithm 1 on a tie (k = 2, delta = 0.01, {rounds:,} rounds, 1 thread): "
          f"general kernel {g:.2f} ns/round, two-arm walk {w:.2f} ns/round ({g / w:.1f}x)")


ROWS = [
    # label, k, delta, algorithm, delta0 factor, max_samples
    ("T1", 2, 0.1, "elimination", 4.0, 10**9),
    ("T1", 2, 0.1, "ttts", None, 10**9),
    ("T1", 2, 0.1, "ttucb", None, 10**9),
    ("T2", 10, 0.01, "elimination", 4.0, 2 * 10**9),
    ("T2", 10, 0.01, "elimination", 1.0, 2 * 10**9),
    ("T2", 10, 0.01, "noelim", 4.0, 2 * 10**9),
    ("T2", 10, 0.01, "noelim", 1.0, 2 * 10**9),
    # Bernoulli arms under two uniform priors (BetaPrior.uniform(2)), sigma = 1/2
    ("B1", 2, 0.1, "elimination", 4.0, 10**9),
    ("B1", 2, 0.1, "noelim", 4.0, 10**9),
    ("B1", 2, 0.1, "ttts", None, 10**9),
    ("B1", 2, 0.1, "ttucb", None, 10**9),
    ("B1", 2, 0.1, "ebtc", None, 10**9),
    ("B1", 2, 0.1, "tas", None, 10**9),
    # Bernoulli arms at rates near 3% (BetaPrior(3, 97) twice): sigma = 1/2 and KL widths,
    # a tenth of the runs
    ("B2", 2, 0.1, "elimination", 4.0, 10**9),
    ("B2", 2, 0.1, "elimination/kl", 4.0, 10**9),
]

#: The prior of each row label with Bernoulli arms, and the fraction of ``--n-runs`` it runs.
BERNOULLI_PRIORS = {"B1": (BetaPrior.uniform(2), 1.0),
                    "B2": (BetaPrior([3.0, 3.0], [97.0, 97.0]), 0.1)}

#: The fixed-instance table: label, specification, fraction of ``--n-runs`` (the capped
#: re-drawing challenger needs up to a hundred posterior draws per step once the leader is
#: nearly certain, so it gets 5% of the runs; the exact challenger, the default, all of them).
FIXED_ROWS = [
    ("F10", TTTS(), 1.0),
    ("F10", TTTS(beta=0.3), 1.0),
    ("F10", TTTS(challenger="resample"), 0.05),
    ("F10", TTUCB(), 1.0),
    ("F10", EBTC(), 1.0),
    ("F10", TrackAndStop(tracking="D"), 1.0),
    ("F10", TrackAndStop(tracking="D", update="every"), 1.0),
    ("F10", TrackAndStop(tracking="C"), 1.0),
    ("F10", LUCB(), 1.0),
    ("F10", SamplingRule(least_sampled, label_text="user rule: least sampled"), 1.0),
]
FIXED_MEANS = np.linspace(1.0, 0.0, 10)

#: The same on Bernoulli arms (``BetaPrior.uniform(10)``, rates evenly spaced from 0.7 to 0.3):
#: TTTS with the normal challenger (the default) and the capped re-drawing one (the released
#: rule starves arms at k = 10 and stops no run, as on Gaussian arms).
BERNOULLI_FIXED_ROWS = [
    ("B10", TTTS(), 1.0),
    ("B10", TTTS(challenger="resample"), 0.05),
]
BERNOULLI_FIXED_MEANS = np.linspace(0.7, 0.3, 10)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-threads", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--n-runs", type=int, default=1000)
    args = parser.parse_args(argv)

    import numba

    n_threads = args.n_threads or numba.get_num_threads()
    print(f"machine: {platform.machine()} {platform.processor() or ''}".rstrip()
          + f", {os.cpu_count()} logical CPUs; numpy {np.__version__}, numba {numba.__version__}")
    print(f"threads: {n_threads}; seed: {args.seed}; runs per row: {args.n_runs}")
    np_rate = numpy_normal_rate()
    own_rate = own_normal_rate()
    print(f"numpy Generator.standard_normal (1 core): {np_rate:.3g} samples/s")
    print(f"bai_lib._rng.fill_normal         (1 core): {own_rate:.3g} samples/s "
          f"({own_rate / np_rate:.2f}x numpy)")
    ours, theirs = seeding_rates()
    print(f"per-run seeding, one stream: {ours * 1e9:.0f} ns compiled SplitMix64 derivation, "
          f"{theirs * 1e6:.1f} us with numpy.random.SeedSequence ({theirs / ours:,.0f}x)")
    print()

    # Warm-up: load or compile every kernel outside the timed region.
    for alg in ALGORITHMS:
        simulate(alg, GaussianPrior.standard(2), 1.0, 0.1, 1, 0, progress=False)

    table1_profile(100_000, n_threads, args.seed, own_rate)
    print()
    two_arm_walk()
    print()

    header = (f"{'row':<4}{'algorithm':<15}{'D0 fac':>7}{'wall s':>9}{'samples':>12}"
              f"{'samples/s':>11}{'/numpy':>8}{'/(np*thr)':>10}{'cens':>6}"
              f"{'avg tau':>11}{'max tau':>11}{'error':>7}")
    print(header)
    print("-" * len(header))
    total = 0.0
    for label, k, delta, alg, factor, max_samples in ROWS:
        bernoulli = label in BERNOULLI_PRIORS
        prior, share = BERNOULLI_PRIORS[label] if bernoulli else (GaussianPrior.standard(k), 1.0)
        name, _, widths = alg.partition("/")
        options = {"widths": widths} if widths else {}
        spec = ALGORITHMS[name](delta0_factor=factor, **options) if factor is not None else alg
        if bernoulli:  # load the kernel outside the timing
            simulate(spec, prior, None, delta, 1, args.seed, progress=False)
        t0 = time.perf_counter()
        res = simulate(spec, prior, None if bernoulli else 1.0, delta,
                       max(1, int(args.n_runs * share)), args.seed, n_threads=n_threads,
                       max_samples=max_samples)
        wall = time.perf_counter() - t0
        total += wall
        samples = int(res.stopping_times.sum())
        rate = samples / wall
        s = res.summary()
        fac = "-" if factor is None else f"{factor:g}"
        print(f"{label:<4}{alg:<15}{fac:>7}{wall:>9.2f}{samples:>12.4g}{rate:>11.3g}"
              f"{rate / np_rate:>8.2f}{rate / (np_rate * n_threads):>10.2f}"
              f"{s['n_censored']:>6d}{s['avg']:>11.4g}{s['max']:>11.4g}{s['error']:>7.3f}",
              flush=True)
    print("-" * len(header))
    print()
    total += fixed_table("fixed instance: k = 10, means linspace(1, 0), sigma = 1, delta = 0.01",
                         GaussianPrior.standard(10), 1.0, FIXED_MEANS, FIXED_ROWS, args, n_threads,
                         np_rate)
    total += fixed_table("Bernoulli arms: k = 10, rates linspace(0.7, 0.3), BetaPrior.uniform(10), "
                         "delta = 0.01", BetaPrior.uniform(10), None, BERNOULLI_FIXED_MEANS,
                         BERNOULLI_FIXED_ROWS, args, n_threads, np_rate)
    print(f"total wall time: {total:.1f} s")


def fixed_table(title, prior, noise, means, rows, args, n_threads, np_rate):
    """Print one fixed-instance table; return its wall time."""
    print()
    print(title)
    total = 0.0
    header2 = (f"{'row':<4}{'algorithm':<44}{'runs':>6}{'wall s':>9}{'samples':>12}{'samples/s':>11}"
               f"{'/numpy':>8}{'cens':>6}{'avg tau':>11}{'error':>7}")
    print(header2)
    print("-" * len(header2))
    for label, spec, share in rows:
        n_runs = max(1, int(share * args.n_runs))
        with warnings.catch_warnings():  # loads (or compiles) the kernel outside the timing
            warnings.simplefilter("ignore", CensoringWarning)
            simulate(spec, prior, noise, 0.01, 1, args.seed, means=means, progress=False,
                     max_samples=1000)
        t0 = time.perf_counter()
        res = simulate(spec, prior, noise, 0.01, n_runs, args.seed, means=means,
                       n_threads=n_threads, max_samples=10**8)
        wall = time.perf_counter() - t0
        total += wall
        samples = int(res.stopping_times.sum())
        rate = samples / wall
        s = res.summary()
        print(f"{label:<4}{spec.label:<44}{n_runs:>6d}{wall:>9.2f}{samples:>12.4g}{rate:>11.3g}"
              f"{rate / np_rate:>8.2f}{s['n_censored']:>6d}{s['avg']:>11.4g}{s['error']:>7.3f}",
              flush=True)
    print("-" * len(header2))
    return total


if __name__ == "__main__":
    main()
