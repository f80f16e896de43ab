"""Command line: ``bai-lib run``, ``bai-lib sweep`` and ``bai-lib summary`` (also ``python -m bai_lib``).

Every command writes or reads a result store (:mod:`bai_lib.store`); ``--help`` describes each.
Errors are one line on stderr naming the argument or configuration key, with exit status 2.
Ctrl-C stops a command within about a second (exit status 130); a stopped ``run`` or ``sweep``
resumes where it stopped when started again with the same arguments.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path
from collections.abc import Sequence
from typing import Optional

from ._version import VERSION

__all__ = ["main"]

_EPILOG_RUN = """examples:
  bai-lib run --algorithm elimination --arms 10 --delta 0.01 --runs 1000 --seed 2024 --out STORE
  bai-lib run --algorithm ttucb --beta-prior 3 7 --arms 3 --delta 0.05 --runs 100 --seed 1 \\
      --out STORE            # three variants' conversion rates, each Beta(3, 7): Bernoulli arms
  bai-lib run --algorithm ttucb --beta-prior 60 940 --arms 3 --delta 0.1 --runs 100 --seed 1 \\
      --max-samples 1e7 --estimate   # what it would cost, before running it
"""
_EPILOG_SWEEP = """example configuration (TOML):
  seed = 2024
  runs = 10000
  [grid]
  algorithm = ["elimination", "noelim", "ttts"]
  arms = [2, 10]
  delta = [0.1, 0.01]

An algorithm may also be a table of options, e.g. {name = "elimination", delta0_factor = 1}.
Optional keys: shard_runs (default 1000), max_samples, noise_std (a number, or a list per
arm), grid.prior = [{means = [...], stds = [...]}], grid.noise_std (levels, each a number or a
list per arm) and grid.means (fixed instances). See the docstring of bai_lib.sweep.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit status 2 (argparse's own convention)
        self.exit(2, f"{self.prog}: error: {message}\n")


def _option(text: str):
    """``name=value`` with a TOML value (``delta0_factor=1``, ``recommend="empirical_best"``)."""
    import tomllib

    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    name, value = text.split("=", 1)
    try:
        parsed = tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value  # a bare word is a string
    return name.strip(), parsed


#: Seconds: ``bai-lib run`` warns before runs predicted to take longer (``--budget``).
DEFAULT_BUDGET = 600.0


def _budget(text: str) -> Optional[float]:
    if text == "off":
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number of seconds or off, got {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"a positive number of seconds or off, got {text!r}")
    return value


def _store_path(text: str) -> str:
    """A store directory: not empty (which would mean the current directory)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a directory for the result store, got ''")
    return text


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="bai-lib", description="Simulate Bayesian fixed-confidence best-arm "
                "identification at scale: one configuration (run), a grid (sweep), and the "
                "table of a result store (summary).")
    p.add_argument("--version", action="version", version=f"bai-lib {VERSION}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    r = sub.add_parser("run", help="simulate one configuration into a result store",
                       description="Simulate one algorithm on a standard Gaussian prior N(0, 1) "
                       "per arm (or --prior-means/--prior-stds; Bernoulli arms under "
                       "--beta-prior, Poisson arms under --gamma-prior), write every run to "
                       "STORE and print the summary.", epilog=_EPILOG_RUN,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("--algorithm", required=True, help="elimination, noelim, ttts, ttucb, ebtc, "
                   "tas or lucb")
    r.add_argument("--option", action="append", type=_option, default=[], metavar="NAME=VALUE",
                   help="an option of the algorithm's specification, e.g. delta0_factor=1 "
                   "(repeatable)")
    r.add_argument("--arms", type=int, help="number of arms k (standard prior, or repeats one "
                   "--beta-prior/--gamma-prior pair)")
    r.add_argument("--prior-means", type=float, nargs="+", metavar="M",
                   help="Gaussian prior means (instead of the standard prior)")
    r.add_argument("--prior-stds", type=float, nargs="+", metavar="S",
                   help="Gaussian prior stds")
    r.add_argument("--beta-prior", type=float, nargs="+", metavar="A B",
                   help="Beta(a, b) prior of Bernoulli arms: a b (each arm, with --arms) or "
                   "a1 b1 a2 b2 ...")
    r.add_argument("--gamma-prior", type=float, nargs="+", metavar="A B",
                   help="Gamma(shape a, rate b) prior of Poisson arms, given as --beta-prior")
    r.add_argument("--delta", type=float, required=True, help="confidence level in (0, 1)")
    r.add_argument("--runs", type=int, required=True)
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--noise-std", type=float, help="reward noise (default: 1 for Gaussian and "
                   "Poisson arms, 1/2 for Bernoulli arms)")
    r.add_argument("--max-samples", type=float, help="censoring cap per run")
    r.add_argument("--shard-runs", type=int, help="runs per stored shard (default 1000)")
    r.add_argument("--out", metavar="STORE", type=_store_path,
                   help="result store directory (required unless --estimate)")
    r.add_argument("--estimate", action="store_true",
                   help="print the predicted samples and wall time (a pilot of about a second) "
                   "and exit without running")
    r.add_argument("--budget", type=_budget, default=DEFAULT_BUDGET, metavar="SECONDS|off",
                   help="estimate first (a pilot of about a second) and warn when the predicted "
                   f"wall time exceeds SECONDS; the runs go ahead (default {DEFAULT_BUDGET:g}; "
                   "off: no estimate)")
    _common(r)

    s = sub.add_parser("sweep", help="run a grid declared in TOML into a result store",
                       description="Run every cell of the grid in CONFIG.toml, shard by shard, "
                       "into STORE; shards already in STORE are skipped, so an interrupted "
                       "sweep resumes.", epilog=_EPILOG_SWEEP,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    s.add_argument("config", metavar="CONFIG.toml")
    s.add_argument("--out", required=True, metavar="STORE", type=_store_path,
                   help="result store directory")
    s.add_argument("--executor", choices=("local", "dask"), default="local",
                   help="local (this process, default) or dask")
    s.add_argument("--scheduler", metavar="ADDRESS", help="Dask scheduler address, e.g. "
                   "tcp://10.0.0.5:8786 (default with --executor dask: a LocalCluster)")
    s.add_argument("--workers", type=int, help="worker processes of the LocalCluster "
                   "(default 2)")
    _common(s)

    m = sub.add_parser("summary", help="print the table of a result store",
                       description="One row per complete configuration of STORE: stopping-time "
                       "statistics, error rate with its 95% Clopper-Pearson interval, censored "
                       "runs. Incomplete configurations are listed on stderr.")
    m.add_argument("store", metavar="STORE")
    m.add_argument("--format", choices=("text", "csv", "markdown", "json"), default="text")
    return p


def _common(p):
    p.add_argument("--threads", type=int, help="threads per shard (local executor; default: "
                   "all cores)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--progress", dest="progress", action="store_true", default=None,
                   help="show the progress bar even when stderr is not a terminal")
    g.add_argument("--quiet", dest="progress", action="store_false",
                   help="no progress bar")


def _shape_prior(family: str, values: list, arms: Optional[int]) -> dict:
    """``{family, a, b}`` of ``--beta-prior`` or ``--gamma-prior``: pairs ``a b`` per arm, or
    one pair repeated over ``--arms``."""
    flag = f"--{family}-prior"
    if len(values) % 2:
        raise ValueError(f"{flag}: give pairs a b (one per arm, or one pair with --arms), "
                         f"got {len(values)} numbers")
    a, b = values[0::2], values[1::2]
    if len(a) == 1:
        if arms is None:
            raise ValueError(f"{flag}: one pair a b needs --arms (or give a pair per arm)")
        a, b = a * arms, b * arms
    elif arms is not None and arms != len(a):
        raise ValueError(f"--arms: {arms}, but {flag} gives {len(a)} pairs")
    return {"family": family, "a": a, "b": b}


def _run_config(args) -> dict:
    given = [name for name, v in (("--prior-means/--prior-stds", args.prior_means
                                   if args.prior_means is not None else args.prior_stds),
                                  ("--beta-prior", args.beta_prior),
                                  ("--gamma-prior", args.gamma_prior)) if v is not None]
    if len(given) > 1:
        raise ValueError(f"{given[1]}: one prior only, and {given[0]} is given")
    arms = args.arms
    if args.beta_prior is not None or args.gamma_prior is not None:
        family = "beta" if args.beta_prior is not None else "gamma"
        prior = _shape_prior(family, args.beta_prior or args.gamma_prior, arms)
        arms = None  # the prior sets k
    elif args.prior_means is None and args.prior_stds is None:
        if arms is None:
            raise ValueError("--arms: required unless a prior is given (--prior-means and "
                             "--prior-stds, --beta-prior or --gamma-prior)")
        prior = None
    else:
        if args.prior_means is None or args.prior_stds is None:
            raise ValueError("--prior-means and --prior-stds go together")
        prior = {"means": args.prior_means, "stds": args.prior_stds}
    for name, _ in args.option:
        if name == "name":
            raise ValueError(f"--option name=...: the algorithm is --algorithm "
                             f"{args.algorithm}; options set its specification's fields")
    algo = {"name": args.algorithm, **dict(args.option)} if args.option else args.algorithm
    cfg: dict = {"seed": args.seed, "runs": args.runs,
                 "grid": {"algorithm": [algo], "delta": [args.delta]}}
    if args.noise_std is not None:
        cfg["noise_std"] = args.noise_std
    if arms is not None:
        cfg["grid"]["arms"] = [arms]
    if prior is not None:
        cfg["grid"]["prior"] = [prior]
    if args.max_samples is not None:
        cfg["max_samples"] = args.max_samples
    if args.shard_runs is not None:
        cfg["shard_runs"] = args.shard_runs
    return cfg


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``bai-lib`` and ``python -m bai_lib``; returns the exit status."""
    args = _parser().parse_args(argv)

    def one_line(message, category, *rest, **kw):  # warnings as one line naming the command
        print(f"bai-lib {args.command}: warning: {message}", file=sys.stderr)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")  # shown once each, whatever the caller's filters
            warnings.showwarning = one_line
            return _dispatch(args)
    except KeyboardInterrupt as e:
        print(f"bai-lib: {e or 'interrupted'}", file=sys.stderr)
        return 130
    except (ValueError, ImportError, OSError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"bai-lib {args.command}: error: {msg}", file=sys.stderr)
        return 2


def _dispatch(args) -> int:
    from .store import ResultStore
    from .formatting import summary_table
    from .sweep import load_sweep, parse_sweep, require_scale, run_sweep

    require_scale(getattr(args, "executor", "local"))  # before any work, every missing module

    if args.command == "summary":
        store = ResultStore(args.store)
        if not any(Path(args.store).glob("config=*")):
            raise ValueError(f"STORE {args.store}: no result store here")
        left_out: dict = {}
        table = summary_table(store, args.format, left_out)  # one pass: rows and notes agree
        for cid, status in left_out.items():
            for problem in status.problems:
                if problem.path.name == "cell.json" or problem.path.name == f"config={cid}":
                    # the cell's description is missing: nothing to set aside
                    print(f"bai-lib summary: config {cid}: {problem}; left out", file=sys.stderr)
                    continue
                print(f"bai-lib summary: config {cid}: shard {problem}; left out; run its "
                      "sweep again to set the shard aside and recompute it", file=sys.stderr)
            if not status.problems:
                print(f"bai-lib summary: config {cid} is incomplete ({status.done:,} of "
                      f"{status.runs:,} runs); left out; run its sweep again to complete it",
                      file=sys.stderr)
        sys.stdout.write(table)
        return 0
    if args.command == "run":
        sweep = parse_sweep(_run_config(args), "arguments")
        executor, scheduler, workers = "local", None, None
        if args.estimate or args.budget is not None:
            from .cost import estimate_plan_cost

            (cell,) = sweep.cells
            est = estimate_plan_cost(cell.plan(0, cell.runs), n_threads=args.threads,
                                     budget=args.budget)
            if args.estimate:
                print(f"{cell.algorithm.label}: {est}")
                return 0
        if args.out is None:
            raise ValueError("--out: required (the result store), unless --estimate")
    else:
        if args.scheduler is not None and args.executor != "dask":
            raise ValueError("--scheduler: needs --executor dask")
        if args.workers is not None and (args.executor != "dask" or args.scheduler is not None):
            raise ValueError("--workers: sets the LocalCluster of --executor dask (no --scheduler)")
        sweep = load_sweep(args.config)
        executor, scheduler, workers = args.executor, args.scheduler, args.workers
    store = run_sweep(sweep, args.out, executor=executor, scheduler=scheduler,
                      n_workers=workers, progress=args.progress, n_threads=args.threads)
    sys.stdout.write(summary_table(store, "text"))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
