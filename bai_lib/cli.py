"""Command line: ``bai-lib run``, ``bai-lib sweep`` and ``bai-lib summary``, and ``bai-lib start``
and ``bai-lib decide`` for a live experiment (also ``python -m bai_lib``).

``run``, ``sweep`` and ``summary`` write or read a result store (:mod:`bai_lib.store`); ``start``
and ``decide`` write and update the state file of an experiment (:mod:`bai_lib.online`).
``--help`` describes each.
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


_EPILOG_DECIDE = """observations (CSV with a header), one row per observation or one per arm:
  arm,reward            arm,count,total
  0,1                   0,120,31
  2,0                   1,118,22
  ...                   2,121,40

example: three variants' conversions, a Beta(1, 1) prior each, a daily batch of 300
  bai-lib start exp.json --algorithm ttts --beta-prior 1 1 --arms 3 --delta 0.05
  bai-lib decide exp.json --next 300                         # day 1: what to show
  bai-lib decide exp.json --observations day1.csv --next 300  # record, look, plan day 2
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
                   "tas, lucb or posterior")
    r.add_argument("--option", action="append", type=_option, default=[], metavar="NAME=VALUE",
                   help="an option of the algorithm's specification, e.g. delta0_factor=1 "
                   "(repeatable)")
    _prior_options(r)
    r.add_argument("--delta", type=float, required=True, help="confidence level in (0, 1)")
    r.add_argument("--runs", type=int, required=True)
    r.add_argument("--seed", type=int, required=True)
    r.add_argument("--noise-std", type=float, help="reward noise (default: 1 for Gaussian and "
                   "Poisson arms, 1/2 for Bernoulli arms)")
    r.add_argument("--max-samples", type=float, help="censoring cap per run")
    r.add_argument("--look-every", type=int, metavar="H", help="check the stop only every H "
                   "samples, as platforms look hourly or daily (default 1)")
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

    st = sub.add_parser("start", help="create the state file of a live experiment",
                        description="Create STATE, the state file of an experiment that runs "
                        "ALGORITHM on observations recorded with 'bai-lib decide'. The prior "
                        "options are those of 'bai-lib run'.", epilog=_EPILOG_DECIDE,
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    st.add_argument("state", metavar="STATE")
    st.add_argument("--algorithm", required=True, help="elimination, noelim, ttts, ttucb, "
                    "ebtc, tas or posterior")
    st.add_argument("--option", action="append", type=_option, default=[],
                    metavar="NAME=VALUE", help="an option of the algorithm's specification "
                    "(repeatable)")
    _prior_options(st)
    st.add_argument("--delta", type=float, required=True, help="confidence level in (0, 1)")
    st.add_argument("--seed", type=int, default=0, help="seed of the algorithm's own draws")
    st.add_argument("--noise-std", type=float, help="reward noise of Gaussian arms (required "
                    "for them)")
    st.add_argument("--max-samples", type=float, help="maximum duration, in observations")
    st.add_argument("--force", action="store_true", help="overwrite an existing STATE")

    d = sub.add_parser("decide", help="record observations, check the stop, plan the next batch",
                       description="Record the observations of FILE.csv (if given) in STATE, "
                       "check the stop, save STATE, and print the status: stop or continue, the "
                       "arm to choose, what is guaranteed, and the next arms to sample.",
                       epilog=_EPILOG_DECIDE, formatter_class=argparse.RawDescriptionHelpFormatter)
    d.add_argument("state", metavar="STATE")
    d.add_argument("--observations", metavar="FILE.csv", help="arm,reward rows (in order) or "
                   "arm,count,total rows (one per arm)")
    d.add_argument("--next", type=int, default=0, metavar="N",
                   help="also plan the next N pulls and print how many each arm gets")
    d.add_argument("--format", choices=("text", "json"), default="text")

    m = sub.add_parser("summary", help="print the table of a result store",
                       description="One row per complete configuration of STORE: stopping-time "
                       "statistics, error rate with its 95% Clopper-Pearson interval, censored "
                       "runs. Incomplete configurations are listed on stderr.")
    m.add_argument("store", metavar="STORE")
    m.add_argument("--format", choices=("text", "csv", "markdown", "json"), default="text")
    return p


def _prior_options(p):
    p.add_argument("--arms", type=int, help="number of arms k (standard prior, or repeats one "
                   "--beta-prior/--gamma-prior pair)")
    p.add_argument("--prior-means", type=float, nargs="+", metavar="M",
                   help="Gaussian prior means (instead of the standard prior)")
    p.add_argument("--prior-stds", type=float, nargs="+", metavar="S",
                   help="Gaussian prior stds")
    p.add_argument("--beta-prior", type=float, nargs="+", metavar="A B",
                   help="Beta(a, b) prior of Bernoulli arms: a b (each arm, with --arms) or "
                   "a1 b1 a2 b2 ...")
    p.add_argument("--gamma-prior", type=float, nargs="+", metavar="A B",
                   help="Gamma(shape a, rate b) prior of Poisson arms, given as --beta-prior")


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


def _prior_config(args) -> tuple[Optional[dict], Optional[int]]:
    """The prior the options give (``{family, a, b}``, ``{means, stds}``, or ``None`` for the
    standard prior) and ``--arms`` where the prior does not set ``k``."""
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
    return prior, arms


def _run_config(args) -> dict:
    prior, arms = _prior_config(args)
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
    if args.look_every is not None:
        cfg["look_every"] = args.look_every
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
    if args.command == "start":
        return _start(args)
    if args.command == "decide":
        return _decide(args)
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


def _start(args) -> int:
    from .beta_prior import BetaPrior
    from .gamma_prior import GammaPrior
    from .online import Experiment
    from .priors import GaussianPrior

    prior, arms = _prior_config(args)
    if prior is None:
        prior = GaussianPrior.standard(arms)
    elif "family" in prior:
        prior = (BetaPrior if prior["family"] == "beta" else GammaPrior)(prior["a"], prior["b"])
    else:
        prior = GaussianPrior(prior["means"], prior["stds"])
    path = Path(args.state)
    if path.exists() and not args.force:
        raise ValueError(f"STATE {path}: exists; give --force to start it again")
    max_samples = None if args.max_samples is None else int(args.max_samples)
    if args.max_samples is not None and max_samples != args.max_samples:
        raise ValueError(f"--max-samples: a whole number, got {args.max_samples:g}")
    spec = _specification(args.algorithm, args.option)
    exp = Experiment(spec, prior, args.delta, noise_stds=args.noise_std, seed=args.seed,
                     max_samples=max_samples)
    exp.save(path)
    print(f"{path}: {exp.algorithm.label} on {exp.k} {exp.rewards} arms at delta = "
          f"{exp.delta:g}; record observations with 'bai-lib decide {path} --observations "
          f"FILE.csv'")
    return 0


def _specification(name: str, options: list):
    from .algorithms import ALGORITHMS

    if name not in ALGORITHMS:
        raise ValueError(f"--algorithm: one of {', '.join(ALGORITHMS)}, got {name!r}")
    try:
        return ALGORITHMS[name](**dict(options))
    except TypeError as e:
        raise ValueError(f"--option: {e}") from None


def _read_observations(path: Path) -> tuple[str, list]:
    """``("pulls", [(arm, reward), ...])`` or ``("counts", [(arm, count, total), ...])``."""
    import csv

    try:
        with path.open(newline="") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"--observations: cannot read {path} ({e})") from None
    header = [h.strip() for h in rows[0]] if rows else []
    kinds = {("arm", "reward"): "pulls", ("arm", "count", "total"): "counts"}
    if tuple(header) not in kinds:
        raise ValueError(f"--observations: {path} must start with the header arm,reward or "
                         f"arm,count,total, got {','.join(header) or 'an empty file'}")
    out = []
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"--observations: {path} line {line}: {len(header)} values "
                             f"expected, got {len(row)}")
        try:
            out.append((int(row[0]), *(float(c) for c in row[1:])))
        except ValueError:
            raise ValueError(f"--observations: {path} line {line}: not numbers: "
                             f"{','.join(row)}") from None
    if not out:
        raise ValueError(f"--observations: {path} has no rows")
    return kinds[tuple(header)], out


def _decide(args) -> int:
    import json

    import numpy as np

    from .online import Experiment

    path = Path(args.state)
    exp = Experiment.load(path)
    if args.next < 0:
        raise ValueError(f"--next: a number of pulls >= 0, got {args.next}")
    if args.observations is not None:
        kind, rows = _read_observations(Path(args.observations))
        if kind == "pulls":
            arms = np.array([r[0] for r in rows])
            exp.record(arms, np.array([r[1] for r in rows]))
        else:
            counts = np.zeros(exp.k, dtype=np.int64)
            totals = np.zeros(exp.k)
            for arm, count, total in rows:
                if not (0 <= arm < exp.k) or count != int(count):
                    raise ValueError(f"--observations: arm {arm} with count {count:g}: arms "
                                     f"are 0..{exp.k - 1}, counts whole numbers")
                counts[arm] += int(count)
                totals[arm] += total
            exp.record_counts(counts, totals)
        exp.save(path)
    status = exp.status()
    plan = exp.next_arms(args.next) if args.next and not status.stopped else np.zeros(0, int)
    allocation = np.bincount(plan, minlength=exp.k)
    if args.format == "json":
        print(json.dumps({**status.as_dict(), "next": [int(c) for c in allocation]}, indent=1))
        return 0
    word = f"STOP ({status.reason})" if status.stopped else "CONTINUE"
    print(f"{word} after {status.samples:,} observations")
    if status.samples:
        print(f"{'recommendation' if status.stopped else 'leader'}: arm "
              f"{status.recommendation}")
    for i in range(exp.k):
        mean = status.means[i]
        shown = "-" if np.isnan(mean) else f"{mean:.4g}"
        print(f"  arm {i}: {int(status.counts[i]):,} observations, mean {shown}")
    print(f"guarantee: {status.guarantee}")
    if status.unused:
        print(f"note: {status.unused:,} observations came after the stop and do not count")
    if plan.size:
        print(f"next {plan.size:,}: " + ", ".join(f"arm {i} x {c:,}"
                                                  for i, c in enumerate(allocation) if c))
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
