"""A sweep at scale, three ways: straight, killed twice and resumed, and on a Dask LocalCluster.

Usage::

    python benchmarks/bench_sweep.py [CONFIG.toml] [--runs N] [--workdir DIR]

Runs ``bai-lib sweep`` on CONFIG (default ``examples/sweep_grid.toml``; ``--runs`` overrides its
runs per cell) in three fresh stores and prints the wall time of each:

1. straight, with the local executor;
2. killed with SIGKILL after a third and again after two thirds of its shards, then resumed;
3. with ``--executor dask`` on a two-worker LocalCluster.

It then checks that the three tables are equal row for row (apart from the wall-clock columns)
and prints the summary of the first store.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bai_lib.store import WALL_CLOCK_COLUMNS, ResultStore  # noqa: E402
from bai_lib.formatting import summary_table  # noqa: E402
from bai_lib.sweep import load_sweep  # noqa: E402


def sweep_cmd(config, store, *extra):
    return [sys.executable, "-m", "bai_lib", "sweep", str(config), "--out", str(store), *extra]


def shards_on_disk(store):
    return sum(1 for _ in Path(store).glob("config=*/runs-*.parquet"))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("config", nargs="?", default=str(ROOT / "examples" / "sweep_grid.toml"))
    p.add_argument("--runs", type=int, help="runs per cell (overrides the configuration)")
    p.add_argument("--workdir", help="directory for the three stores (default: a temporary one)")
    args = p.parse_args(argv)

    work = Path(args.workdir or tempfile.mkdtemp(prefix="bai-sweep-"))
    work.mkdir(parents=True, exist_ok=True)
    config = Path(args.config)
    if args.runs is not None:
        text = config.read_text()
        doc = tomllib.loads(text)
        lines = [f"runs = {args.runs}" if ln.startswith("runs =") else ln
                 for ln in text.splitlines()]
        config = work / "config.toml"
        config.write_text("\n".join(lines) + "\n")
        assert tomllib.loads(config.read_text())["runs"] == args.runs, doc
    sweep = load_sweep(config)
    n_shards = len(sweep.shards())
    print(f"{config}: {len(sweep.cells)} cells, {sweep.total_runs:,} runs, {n_shards} shards; "
          f"stores in {work}", flush=True)

    t0 = time.perf_counter()
    subprocess.run(sweep_cmd(config, work / "straight", "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    straight = time.perf_counter() - t0
    print(f"straight (local executor): {straight:,.0f} s", flush=True)

    t0 = time.perf_counter()
    kills = []
    for fraction in (1 / 3, 2 / 3):
        proc = subprocess.Popen(sweep_cmd(config, work / "resumed", "--quiet"),
                                stdout=subprocess.DEVNULL)
        while shards_on_disk(work / "resumed") < fraction * n_shards and proc.poll() is None:
            time.sleep(0.2)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills.append(shards_on_disk(work / "resumed"))
    subprocess.run(sweep_cmd(config, work / "resumed", "--quiet"), check=True,
                   stdout=subprocess.DEVNULL)
    resumed = time.perf_counter() - t0
    print(f"killed with SIGKILL at {kills[0]} and {kills[1]} of {n_shards} shards, resumed: "
          f"{resumed:,.0f} s in all", flush=True)

    t0 = time.perf_counter()
    subprocess.run(sweep_cmd(config, work / "dask", "--quiet", "--executor", "dask"),
                   check=True, stdout=subprocess.DEVNULL)
    dask = time.perf_counter() - t0
    print(f"Dask LocalCluster, 2 single-threaded workers: {dask:,.0f} s", flush=True)

    tables = {name: ResultStore(work / name).table().drop(columns=list(WALL_CLOCK_COLUMNS))
              for name in ("straight", "resumed", "dask")}
    ref = tables["straight"]
    assert len(ref) == sweep.total_runs, (len(ref), sweep.total_runs)
    for name in ("resumed", "dask"):
        same = tables[name].equals(ref)
        print(f"{name} table equals the straight one, row for row: {same}")
        if not same:
            raise SystemExit(1)
    print()
    print(summary_table(work / "straight", "text"))


if __name__ == "__main__":
    main()
