"""What the audit's rotation costs a test session, slice by slice, on the book's run cache.

Usage::

    python benchmarks/bench_rotation.py [--slices S]

Reads every plan of ``results/runs/`` and prints, per chapter and for the whole book, the
stored kernel-seconds that slice ``r`` of ``S`` recomputes (:func:`bai_lib.runcache.rotation_runs`):
the mean over the ``S`` slices (the full cost divided by ``S``), the largest and the smallest.
For comparison it prints the same for slices taken by run index modulo ``S``, which gathers
several of the longest runs in some slices by chance. Nothing is simulated.
"""

from __future__ import annotations

import argparse
import functools
import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pyarrow.parquet as pq

from bai_lib import runcache
from bai_lib._parquet import MANIFEST_KEY
from bai_lib.algorithms.base import Algorithm

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def _classes() -> dict:
    """Every specification class of the library by its qualified name."""
    out, todo = {}, [Algorithm]
    while todo:
        cls = todo.pop()
        out[cls.__qualname__] = cls
        todo.extend(cls.__subclasses__())
    return out


def plan_runs(path: Path) -> tuple[np.ndarray, np.ndarray, str, int]:
    """(costs in samples, stored seconds per run, key digest, first run) of one cache file,
    read and checked against its manifest by the run cache's own reader."""
    key = json.loads(pq.read_schema(path).metadata[MANIFEST_KEY])["key"]
    rec, _ = runcache._read(path, key)
    spec = _classes()[key["algorithm"]["class"]](**key["algorithm"]["options"])
    plan = SimpleNamespace(deltas=key["deltas"], algorithm=spec)  # what run_costs reads
    # seconds per run by the same rule as samples (summed over levels unless one trajectory)
    return (runcache.run_costs(plan, rec.taus), runcache.run_costs(plan, rec.seconds),
            runcache._key_digest(key), int(key["first_run"]))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--slices", type=int, default=runcache.ROTATION_SLICES)
    args = parser.parse_args(argv)
    S = args.slices
    rows, book, book_index = [], np.zeros(S), np.zeros(S)
    for chapter in sorted((ROOT / "results" / "runs").iterdir()):
        by_cost, by_index = np.zeros(S), np.zeros(S)
        for path in sorted(chapter.glob("*.parquet")):
            if "-" in path.stem:  # a cached computation (bai_lib.memo), not a plan's runs
                continue
            costs, secs, digest, first = plan_runs(path)
            for r in range(S):
                by_cost[r] += secs[runcache.rotation_runs(costs, digest, (r, S))].sum()
            np.add.at(by_index, (np.arange(secs.size) + first) % S, secs)
        rows.append((chapter.name, by_cost, by_index))
        book += by_cost
        book_index += by_index
    rows.append(("the book", book, book_index))
    print(f"stored kernel-seconds one rotation slice of {S} recomputes "
          "(mean / largest / smallest over the slices)")
    print(f"{'chapter':28s} {'by cost (rotation_runs)':>26s} {'by run index':>24s}")
    for name, a, b in rows:
        print(f"{name:28s} {a.mean():8.1f} {a.max():8.1f} {a.min():8.1f} "
              f"{b.mean():7.1f} {b.max():7.1f} {b.min():7.1f}")


if __name__ == "__main__":
    main()
