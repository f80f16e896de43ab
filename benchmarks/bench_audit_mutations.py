"""Can the run cache's audit fail? Five deliberate changes of the simulators, each audited under
20 audit seeds against the book's cache (``results/runs/``); prints the share of seeds that
caught it.

Usage::

    python benchmarks/bench_audit_mutations.py [--seeds 20] [--mutations NAME ...]
                                               [--chapters NN_name ...]

Each change runs in its own process (``--one NAME``), applied before any kernel is compiled
(with a fresh numba cache, so that a changed compiled helper is compiled in):

``threshold-ulp``
    Algorithm 1's and NoElim's confidence constant ``12K/(δ²π²)`` one ulp larger
    (:func:`bai_lib.confidence.conf_log_const`), audited on their plans.
``threshold-1e-9``
    The same constant ``1 + 1e-9`` times larger: how large a change of a threshold must be before
    it alters runs of the book at all.
``cap``
    Every binding given ``max_samples + k``: only runs that reach the cap can change; audited on
    the plans that have censored runs.
``long-runs``
    The stopping time of every run longer than ``10**6`` samples one larger (after the kernel
    returns): audited on the plans that have such runs.
``seed-derivation``
    The generator states of the runs derived from ``seed + 1``: every run changes; audited on
    the plans of chapter 05.
``tie-rule``
    The compiled ``argmax`` of :mod:`bai_lib.kernels` (the empirical best arm, first on ties)
    taking the last of tied entries instead: audited on the Bernoulli plans (Gaussian sums never
    tie).

Plans whose runs took more than ``--max-plan-seconds`` kernel-seconds when the cache was written
(default 20) are left out to bound the cost (each change recomputes its plans in full once, and 20 audits cost about twice
that again), and so are plans with fixed means (the cache keys them by a hash of the means, from which
the plan cannot be rebuilt here). A seed *catches* a change when the audit of at least one of
the plans raises :class:`bai_lib.runcache.AuditFailure`. Besides the seeds, each change is run
once on every run of its plans, which counts the runs it alters: a change that alters no run
cannot be caught by any comparison of results.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RUNS = ROOT / "results" / "runs"
MUTATIONS = ("threshold-ulp", "threshold-1e-9", "cap", "long-runs", "seed-derivation",
             "tie-rule")
LONG = 10**6


def apply(name: str) -> None:
    """Change the library in this process (before any kernel is compiled)."""
    if name in ("threshold-ulp", "threshold-1e-9"):
        from bai_lib.algorithms import elimination

        original = elimination.conf_log_const
        if name == "threshold-ulp":
            elimination.conf_log_const = lambda delta, k: float(np.nextafter(original(delta, k),
                                                                                np.inf))
        else:
            elimination.conf_log_const = lambda delta, k: original(delta, k) * (1 + 1e-9)
    elif name in ("cap", "long-runs"):
        import dataclasses

        from bai_lib.algorithms import base

        original = base.Algorithm.bind

        def bind(self, prior, noise_stds, deltas, max_samples, rewards="gaussian"):
            if name == "cap":
                return original(self, prior, noise_stds, deltas, max_samples + noise_stds.size,
                                rewards)
            bound = original(self, prior, noise_stds, deltas, max_samples, rewards)
            run = bound.run

            def longer(state, mu, out_tau, *args, **kwargs):
                run(state, mu, out_tau, *args, **kwargs)
                out_tau[out_tau > LONG] += 1

            return dataclasses.replace(bound, run=longer)

        base.Algorithm.bind = bind
    elif name == "seed-derivation":
        from bai_lib import _rng, simulation

        original = _rng.seed_states
        simulation._rng = type(sys)("mutated_rng")
        simulation._rng.__dict__.update(_rng.__dict__)
        simulation._rng.seed_states = lambda seed, runs, stream: original(seed + 1, runs, stream)
    elif name == "tie-rule":
        import numba

        from bai_lib import kernels

        @numba.njit(cache=True, nogil=True)
        def argmax_last(x):
            best = 0
            for i in range(1, x.size):
                if x[i] >= x[best]:
                    best = i
            return best

        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("bai_lib") and \
                    getattr(mod, "argmax", None) is kernels.argmax:
                mod.argmax = argmax_last
    else:
        raise ValueError(f"unknown mutation {name!r}; one of {', '.join(MUTATIONS)}")


def _rebuild(key: dict):
    """The RunPlan a cache file's key describes, or None (fixed means)."""
    import bai_lib
    from bai_lib.plan import RunPlan

    if key["means"] is not None:
        return None
    module, _, cls = key["algorithm"]["class"].rpartition(".")
    spec_cls = getattr(importlib.import_module(module), cls)

    def decode(v):
        if isinstance(v, dict) and "tuple" in v:
            return tuple(decode(x) for x in v["tuple"])
        return v

    spec = spec_cls(**{k: decode(v) for k, v in key["algorithm"]["fields"].items()})
    ((kind, args),) = key["prior"].items()
    prior = bai_lib.GaussianPrior(**args) if kind == "GaussianPrior" else bai_lib.BetaPrior(**args)
    return RunPlan.build(spec, prior, key["noise_stds"], key["deltas"], key["n_runs"],
                         key["seed"], first_run=key["first_run"],
                         max_samples=key["max_samples"], rewards=key["rewards"])


def _plans(chapters):
    import pyarrow.parquet as pq

    from bai_lib import runcache
    from bai_lib._parquet import MANIFEST_KEY
    from bai_lib.kernels import STOP_CENSORED

    for chapter in chapters:
        for path in sorted((RUNS / chapter).glob("*.parquet")):
            if "-" in path.stem:  # a cached computation (bai_lib.memo), not a plan's runs
                continue
            manifest = json.loads(pq.read_schema(path).metadata[MANIFEST_KEY])
            plan = _rebuild(manifest["key"])
            if plan is None:
                continue
            rec, _ = runcache._read(path, manifest["key"])
            yield chapter, path, plan, rec, {
                "censored": bool(np.any(rec.codes == STOP_CENSORED)),
                "long": bool(np.any(rec.taus > LONG)),
                "bernoulli": plan.rewards == "bernoulli",
                "elimination": type(plan.algorithm).__name__ in ("Elimination", "NoElim"),
            }


def _selected(name, chapters, max_seconds):
    want = {"threshold-ulp": "elimination", "threshold-1e-9": "elimination", "cap": "censored", "long-runs": "long",
            "tie-rule": "bernoulli"}.get(name)
    if name == "seed-derivation":
        chapters = [c for c in chapters if c.startswith("05_")]
    for item in _plans(chapters):
        if item[3].seconds.max(axis=0).sum() > max_seconds:
            continue
        if want is None or item[4][want]:
            yield item


def one(name: str, seeds: int, chapters, max_seconds: float) -> dict:
    apply(name)
    import warnings

    import bai_lib
    from bai_lib import runcache
    from bai_lib.simulation import run_plan

    warnings.simplefilter("ignore", bai_lib.CensoringWarning)
    plans = list(_selected(name, chapters, max_seconds))
    caught = np.zeros((len(plans), seeds), dtype=bool)
    altered, total_runs = [], 0
    cpu = time.process_time()
    for p, (chapter, path, plan, stored, _) in enumerate(plans):
        with runcache.run_cache(path.parent, name=chapter, mode="off"):
            fresh = run_plan(plan)
        diff = np.zeros(plan.n_runs, dtype=bool)
        for j, res in enumerate(fresh):
            codes = np.array([bai_lib.kernels.STOP_REASON_NAMES.index(s) for s in res.stop_reasons])
            diff |= (res.stopping_times != stored.taus[j]) | (res.recommendations != stored.recs[j])
            diff |= codes != stored.codes[j]
        altered.append(int(diff.sum()))
        total_runs += plan.n_runs
        for s in range(seeds):
            os.environ[runcache.SEED_ENV] = str(1000 + s)
            with runcache.run_cache(path.parent, name=chapter, mode="audit"):
                try:
                    run_plan(plan)
                except runcache.AuditFailure:
                    caught[p, s] = True
    return {"mutation": name, "plans": len(plans), "runs": total_runs,
            "altered_runs": int(sum(altered)), "plans_altered": int(sum(a > 0 for a in altered)),
            "seeds": seeds, "seeds_caught": int(caught.any(axis=0).sum()) if plans else 0,
            "per_plan_catch": [float(c.mean()) for c, a in zip(caught, altered) if a],
            "cpu_seconds": time.process_time() - cpu}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--mutations", nargs="*", default=list(MUTATIONS))
    parser.add_argument("--chapters", nargs="*",
                        default=sorted(p.name for p in RUNS.iterdir() if p.is_dir()))
    parser.add_argument("--max-plan-seconds", type=float, default=20.0,
                        help="leave out plans whose runs took more kernel-seconds than this "
                             "when the cache was written (cost)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.seeds, args.chapters, args.max_plan_seconds)))
        return 0
    print(f"{'mutation':<16} {'plans':>5} {'runs':>9} {'altered runs':>12} "
          f"{'seeds caught':>12} {'per altered plan':>22} {'CPU s':>7}")
    for name in args.mutations:
        with tempfile.TemporaryDirectory(prefix="bai_lib_mutant_numba_") as cache_dir:
            env = {**os.environ, "NUMBA_CACHE_DIR": cache_dir, "BAI_LIB_PROGRESS": "0"}
            env.pop("BAI_LIB_RUN_CACHE_LOG", None)
            proc = subprocess.run([sys.executable, __file__, "--one", name, "--seeds",
                                   str(args.seeds), "--max-plan-seconds",
                                   str(args.max_plan_seconds), "--chapters", *args.chapters],
                                  env=env, capture_output=True, text=True)
        if proc.returncode:
            print(f"{name}: failed\n{proc.stderr[-3000:]}")
            return 1
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        per = r["per_plan_catch"]
        span = f"{min(per):.0%}..{max(per):.0%}" if per else "-"
        print(f"{name:<16} {r['plans']:>5} {r['runs']:>9,} {r['altered_runs']:>12,} "
              f"{r['seeds_caught']:>5} of {r['seeds']:<4} {span:>22} {r['cpu_seconds']:>7.0f}",
              flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
