"""The first ``simulate`` of each algorithm in a new process, with the on-disk cache warm.

Usage::

    python benchmarks/bench_first_call.py [--k K]

For every registered algorithm and for a user's :class:`~bai_lib.SamplingRule` defined in an
importable module (``benchmarks/example_rules.py``), starts a new Python process twice: the first
fills numba's on-disk cache if it is empty, the second is measured. Prints the time to
``import bai_lib`` and the time of the first :func:`bai_lib.simulate` call: 20 runs at
``δ = 0.1`` on the fixed means ``linspace(1, 0, K)``, under the standard normal prior (which
Algorithm 1 uses for ``Δ0``). That is loading the compiled kernels plus a few milliseconds of
runs; for the user's rule it also counts importing its module and ``SamplingRule(...)``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys, time
t0 = time.perf_counter()
import bai_lib
t1 = time.perf_counter()
import numpy as np
from bai_lib import GaussianPrior, SamplingRule, simulate
name, k = sys.argv[1], int(sys.argv[2])
t2 = time.perf_counter()
if name == "user rule":
    sys.path.insert(0, {benchmarks!r})
    from example_rules import least_sampled
    spec = SamplingRule(least_sampled, label_text="least sampled")
else:
    spec = name
simulate(spec, GaussianPrior.standard(k), 1.0, 0.1, 20, 1, means=np.linspace(1.0, 0.0, k),
         progress=False)
t3 = time.perf_counter()
print(json.dumps({{"import": t1 - t0, "first": t3 - t2}}))
"""


def probe(name: str, k: int) -> dict:
    """One new process: seconds to import the library and for the first ``simulate``."""
    env = dict(os.environ, BAI_LIB_PROGRESS="0")
    code = PROBE.format(benchmarks=str(ROOT / "benchmarks"))
    out = subprocess.run([sys.executable, "-c", code, name, str(k)], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from bai_lib.algorithms import ALGORITHMS

    names = list(ALGORITHMS) + ["user rule"]
    print(f"first simulate in a new process, warm on-disk cache, k = {args.k}, 20 runs on "
          f"fixed means")
    header = f"{'algorithm':<14}{'import s':>10}{'first simulate s':>18}"
    print(header)
    print("-" * len(header))
    for name in names:
        probe(name, args.k)  # fills the cache if it is cold
        times = probe(name, args.k)
        print(f"{name:<14}{times['import']:>10.2f}{times['first']:>18.2f}", flush=True)
    print("-" * len(header))


if __name__ == "__main__":
    main()
