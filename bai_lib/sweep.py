"""Sweeps: a grid of simulations declared in TOML, run shard by shard into a result store.

A sweep is a list of :class:`~bai_lib.cell.Cell` (one algorithm specification, prior, noise
level, ``δ``, seed and number of runs each). Each cell's runs are cut into shards of ``shard_runs`` runs;
a shard is one :func:`bai_lib.simulate` call with ``first_run`` set, and its rows go to the
:class:`~bai_lib.store.ResultStore` in one atomic file. Run ``r`` of a cell depends only on
``(seed, r)``, so the store's table does not depend on the shard size, the order in which
shards finish, the executor (this process, or the workers of a Dask cluster), or on how
often the sweep was interrupted and started again: shards already on disk are skipped.

Configuration (TOML)::

    seed = 2024            # required: one seed for every cell (common random numbers)
    runs = 10000           # required: runs per cell
    shard_runs = 1000      # optional: runs per shard (default 1000)
    max_samples = 1e7      # optional: censoring cap (default: each algorithm's own)
    look_every = 100       # optional: check the stop every 100 samples (default 1)
    noise_std = 1.0        # optional: reward noise, one level (default 1, and for Beta and
                           # Gamma priors their family's: 1/2 for Bernoulli, 1 for Poisson
                           # arms); a list is per arm

    [grid]                 # the cells are every combination of these lists
    algorithm = ["elimination", {name = "elimination", delta0_factor = 1}, "ttts"]
    arms = [2, 10]         # standard Gaussian prior N(0, 1) per arm unless a prior is given
    delta = [0.1, 0.01]
    # prior = [{means = [0, 0], stds = [1, 2]}]   # optional; replaces the standard prior
    # prior = [{family = "beta", a = 3, b = 97}]  # Bernoulli arms (conversions), Beta(a, b)
    # prior = [{family = "gamma", a = [4, 4], b = [8, 8]}]  # Poisson arms, Gamma(shape, rate)
    # noise_std = [1.0, [0.5, 2.0]]   # optional: levels, each a number or one value per arm
    # means = [[1.0, 0.0], [1.0, 0.9]]  # optional: fixed instances instead of prior draws

An algorithm is a name of :data:`bai_lib.algorithms.ALGORITHMS` or a table with ``name`` and
the options of its specification. A prior's family sets the rewards of its cells
(:func:`bai_lib.families.model_of_prior`): Gaussian, Bernoulli (``family = "beta"``) or Poisson
(``family = "gamma"``); scalar parameters are repeated over ``grid.arms``. A fixed instance
goes with the priors of its number of arms
(the standard prior of that k when the grid names no prior or arms); every ``arms`` value,
prior, instance and per-arm noise level must fit one another, or the grid is refused. Every
key is checked; an error names the key and the value. Before any cell is built the size is
checked: at most :data:`MAX_CELLS` cells and :data:`MAX_SHARDS` shards, a cell's rows must fit
in memory to be summarised, and a configuration file is at most :data:`MAX_CONFIG_BYTES`.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys
import time
import tomllib
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from . import _validate as V
from ._rng import RUN_MAX
from .algorithms import ALGORITHMS, Algorithm
from .cell import SHAPE_PRIORS, Cell, ConfigError
from .families import model_of_prior
from .priors import GaussianPrior
from .store import ResultStore, missing_ranges

__all__ = ["Sweep", "load_sweep", "parse_sweep", "run_shard", "shard_columns", "run_sweep",
           "ShardWarning", "DEFAULT_SHARD_RUNS", "MAX_CELLS", "MAX_SHARDS",
           "MAX_CONFIG_BYTES", "require_scale", "SCALE_MODULES"]

#: Runs per shard when a configuration does not say.
DEFAULT_SHARD_RUNS = 1000

_TOP_KEYS = {"seed", "runs", "shard_runs", "max_samples", "look_every", "noise_std", "grid"}
_GRID_KEYS = {"algorithm", "arms", "delta", "prior", "noise_std", "means"}
#: Most cells in one sweep (each a directory of the store).
MAX_CELLS = 100_000
#: Most shard files in one sweep.
MAX_SHARDS = 1_000_000
#: Largest configuration file read, in bytes.
MAX_CONFIG_BYTES = 1 << 20
_SUMMARY_BYTES_PER_RUN = 256  # a row of the store in pandas (about 170 bytes) and its summary


class ShardWarning(UserWarning):
    """A sweep found a shard that fails verification, set it aside and computes it again."""


@dataclass(frozen=True)
class Sweep:
    """The cells of a sweep and its shard size."""

    cells: tuple
    shard_runs: int = DEFAULT_SHARD_RUNS

    def shards(self, store: Optional[ResultStore] = None) -> list:
        """``(cell, first, stop)`` of every shard still to compute (all of them without a
        store), cell by cell in grid order."""
        out = []
        for cell in self.cells:
            done = [] if store is None else store.shards(cell.id)
            for a, b in missing_ranges(cell.runs, done):
                for first in range(a, b, self.shard_runs):
                    out.append((cell, first, min(first + self.shard_runs, b)))
        return out

    @property
    def total_runs(self) -> int:
        return sum(c.runs for c in self.cells)


# ---------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------


def _as_list(value):
    return list(value) if isinstance(value, list) else [value]


def _checked(fn, key, value, *args):
    try:
        return fn(value, *args)
    except ValueError as e:
        raise ConfigError(f"{key} = {value!r}: {e}") from None


def _number(value, key, integer=False, minimum=None, maximum=None):
    """TOML has no 1e7 integers: accept a float with an integral value where an int is due."""
    if integer and isinstance(value, float) and value.is_integer() and abs(value) < 2**63:
        value = int(value)
    if integer:
        return _checked(V.integer, key, value, key, minimum, maximum)
    return _checked(V.real, key, value, key)


def _algorithm(entry, key) -> Algorithm:
    if isinstance(entry, str):
        if entry not in ALGORITHMS:
            raise ConfigError(f"{key} = {entry!r}: unknown algorithm; one of {sorted(ALGORITHMS)}")
        return ALGORITHMS[entry]()
    if isinstance(entry, dict):
        opts = dict(entry)
        name = opts.pop("name", None)
        if name not in ALGORITHMS:
            raise ConfigError(f"{key}.name = {name!r}: unknown algorithm; one of "
                              f"{sorted(ALGORITHMS)}")
        cls = ALGORITHMS[name]
        fields = {f.name for f in dataclasses.fields(cls)}
        for opt in opts:
            if opt not in fields:
                raise ConfigError(f"{key}.{opt}: {name} has no option {opt!r}; its options are "
                                  f"{sorted(fields)}")
        try:
            return cls(**opts)
        except (ValueError, TypeError) as e:
            raise ConfigError(f"{key} = {entry!r}: {e}") from None
    raise ConfigError(f"{key} = {entry!r}: give an algorithm name or a table with 'name'")


def _prior(entry, key, arms):
    """The prior of the table ``entry``: ``{means, stds}`` (Gaussian) or ``{family, a, b}``
    (``family`` a key of :data:`bai_lib.cell.SHAPE_PRIORS`); a scalar is repeated over
    ``arms``."""
    family = entry.get("family", "gaussian") if isinstance(entry, dict) else None
    names = ("means", "stds") if family == "gaussian" else ("a", "b")
    if (not isinstance(entry, dict) or not entry or family not in ("gaussian", *SHAPE_PRIORS)
            or set(entry) - {"family", *names}
            or (family != "gaussian" and set(names) - set(entry))):
        raise ConfigError(f"{key} = {entry!r}: give a table {{means = [...], stds = [...]}}, "
                          f"{{family = \"beta\", a = [...], b = [...]}} or "
                          f"{{family = \"gamma\", a = [...], b = [...]}}")
    first = entry.get(names[0], 0.0)
    second = entry.get(names[1], 1.0)
    if not isinstance(first, list) and not isinstance(second, list) and arms is None:
        raise ConfigError(f"{key} = {entry!r}: scalar {names[0]} and {names[1]} need grid.arms")
    k = len(first) if isinstance(first, list) else len(second) if isinstance(second, list) else arms
    x = first if isinstance(first, list) else [first] * k
    y = second if isinstance(second, list) else [second] * k
    try:
        return (GaussianPrior if family == "gaussian" else SHAPE_PRIORS[family])(x, y)
    except ValueError as e:
        raise ConfigError(f"{key} = {entry!r}: {e}") from None


def _values(grid, key):
    """``grid[key]`` as a non-empty list."""
    values = _as_list(grid[key])
    if not values:
        raise ConfigError(f"grid.{key} = []: give at least one value")
    return values


def _noise_levels(config, grid) -> list:
    """The noise levels: each a float (every arm) or a tuple (one value per arm).

    ``grid.noise_std`` lists levels, each a number or a per-arm list (``[1.0, [0.5, 2.0]]``);
    the top-level ``noise_std`` is one level, so ``noise_std = [0.5, 2.0]`` is per arm."""
    if "noise_std" in grid:
        entries = [(f"grid.noise_std[{i}]", x) for i, x in enumerate(_values(grid, "noise_std"))]
    else:
        entries = [("noise_std", config.get("noise_std", 1.0))]
    levels = []
    for key, x in entries:
        if isinstance(x, list):
            if len(x) < 2:
                raise ConfigError(f"{key} = {x!r}: a per-arm level lists one value per arm "
                                  "(k >= 2); a single level is a number")
            levels.append((key, tuple(_checked(V.positive, f"{key}[{j}]", _number(v, key), key)
                                      for j, v in enumerate(x))))
        else:
            levels.append((key, _checked(V.positive, key, _number(x, key), key)))
    return levels


def _fixed_means(grid) -> list:
    """``grid.means``: fixed instances, each a list of k >= 2 finite means."""
    out = []
    for i, m in enumerate(_values(grid, "means")):
        key = f"grid.means[{i}]"
        if not isinstance(m, list) or len(m) < 2:
            raise ConfigError(f"{key} = {m!r}: an instance lists the mean of each arm (k >= 2)")
        out.append(tuple(_number(x, f"{key}[{j}]") for j, x in enumerate(m)))
    return out


def _check_size(n_cells: int, runs: int, shard_runs: int, k_max: int) -> None:
    """Refuse, before any cell is built, a sweep too large for this machine or this store."""
    from .executor import available_memory, check_memory

    if n_cells > MAX_CELLS:
        raise ConfigError(f"grid: {n_cells:,} cells, more than {MAX_CELLS:,}; split the grid "
                          "into several sweeps")
    shards = n_cells * -(-runs // shard_runs)
    if shards > MAX_SHARDS:
        raise ConfigError(f"runs = {runs:,} with shard_runs = {shard_runs:,} makes {shards:,} "
                          f"shard files, more than {MAX_SHARDS:,}; use fewer runs or larger "
                          "shards")
    avail = available_memory()
    need = runs * _SUMMARY_BYTES_PER_RUN
    if avail is not None and need > 0.8 * avail:
        raise ConfigError(f"runs = {runs:,}: summarising a cell holds its rows in memory, about "
                          f"{need / 2**30:,.1f} GiB, more than 80% of the "
                          f"{avail / 2**30:,.1f} GiB available; use fewer runs per cell")
    try:
        check_memory(min(shard_runs, runs), k_max)  # one shard of the largest cell
    except ValueError as e:
        raise ConfigError(f"shard_runs = {shard_runs:,}: {e}") from None


def parse_sweep(config: dict, source: str = "config") -> Sweep:
    """Build a :class:`Sweep` from a parsed TOML document (see the module docstring).

    Raises
    ------
    ConfigError
        A ``ValueError`` whose message names the file, the key and the value.
    """
    try:
        return _parse(config)
    except ConfigError as e:
        raise ConfigError(f"{source}: {e}") from None


def _parse(config: dict) -> Sweep:
    for key in config:
        if key not in _TOP_KEYS:
            raise ConfigError(f"{key}: unknown key; the keys are {sorted(_TOP_KEYS)}")
    for key in ("seed", "runs", "grid"):
        if key not in config:
            raise ConfigError(f"{key}: missing (required)")
    seed = _number(config["seed"], "seed", integer=True, minimum=0)
    if seed > 2**64 - 1:
        raise ConfigError(f"seed = {seed}: must be below 2**64")
    runs = _number(config["runs"], "runs", integer=True, minimum=1, maximum=RUN_MAX + 1)
    shard_runs = _number(config.get("shard_runs", DEFAULT_SHARD_RUNS), "shard_runs",
                         integer=True, minimum=1)
    cap = config.get("max_samples")
    cap = None if cap is None else _number(cap, "max_samples", integer=True, minimum=2)
    look_every = _number(config.get("look_every", 1), "look_every", integer=True, minimum=1)
    grid = config["grid"]
    if not isinstance(grid, dict):
        raise ConfigError(f"grid = {grid!r}: must be a table ([grid])")
    for key in grid:
        if key not in _GRID_KEYS:
            raise ConfigError(f"grid.{key}: unknown key; the keys are {sorted(_GRID_KEYS)}")
    for key in ("algorithm", "delta"):
        if key not in grid:
            raise ConfigError(f"grid.{key}: missing (required)")
    if not {"arms", "prior", "means"} & set(grid):
        raise ConfigError("grid.arms: missing (give grid.arms, grid.prior or grid.means)")

    algorithms = _values(grid, "algorithm")
    deltas = _values(grid, "delta")
    noises = _noise_levels(config, grid)
    instances = _fixed_means(grid) if "means" in grid else [None]
    arms_list = [None]
    if "arms" in grid:
        arms_list = [_number(a, f"grid.arms[{i}]", integer=True, minimum=2)
                     for i, a in enumerate(_values(grid, "arms"))]
    n_priors = len(arms_list) * len(_values(grid, "prior")) if "prior" in grid else len(arms_list)
    k_max = max([a for a in arms_list if a is not None]
                + [len(m) for m in instances if m is not None] + [2])
    if "prior" in grid:
        k_max = max([k_max] + [len(v) for p in _values(grid, "prior") if isinstance(p, dict)
                               for v in p.values() if isinstance(v, list)])
    _check_size(len(algorithms) * n_priors * len(noises) * len(deltas) * len(instances), runs,
                shard_runs, k_max)

    algos = [_algorithm(a, f"grid.algorithm[{i}]") for i, a in enumerate(algorithms)]
    levels = []
    for i, d in enumerate(deltas):
        key = f"grid.delta[{i}]"
        levels.append(_checked(V.confidence_level, key, _number(d, key)))
    priors = _priors(grid, arms_list, instances)

    cells = []
    for spec in algos:
        for prior in priors:
            for m in instances:
                if m is not None and len(m) != prior.k:
                    continue  # an instance goes with the priors of its k (checked in _priors)
                for key, sigma in noises:
                    if isinstance(sigma, tuple) and len(sigma) != prior.k:
                        raise ConfigError(f"{key} = {list(sigma)!r}: {len(sigma)} values, one "
                                          f"per arm, but the grid has a prior with k = "
                                          f"{prior.k}")
                    if key == "noise_std" and "noise_std" not in config:  # the family's
                        sigma = model_of_prior(prior).noise_std or sigma
                    stds = sigma if isinstance(sigma, tuple) else (sigma,) * prior.k
                    for delta in levels:
                        cells.append(Cell(spec, prior, stds, delta, seed, runs, cap, m,
                                          look_every))
    ids = [c.id for c in cells]
    if len(set(ids)) != len(ids):
        raise ConfigError("grid: two cells are identical (a value is listed twice)")
    return Sweep(tuple(cells), shard_runs)


def _priors(grid, arms_list, instances) -> list:
    """The priors of the grid; each ``grid.arms`` value, prior and fixed instance must find a
    partner of its k (nothing silently never runs)."""
    if "prior" in grid:
        entries = _values(grid, "prior")
        priors, used = [], set()
        for arms in arms_list:
            found = False
            for i, p in enumerate(entries):
                prior = _prior(p, f"grid.prior[{i}]", arms)
                if arms is None or prior.k == arms:  # a prior of explicit vectors has its k
                    priors.append(prior)
                    used.add(i)
                    found = True
            if not found:
                raise ConfigError(f"grid.arms = {grid['arms']!r}: no prior of grid.prior has "
                                  f"k = {arms}")
        for i, p in enumerate(entries):
            if i not in used:
                raise ConfigError(f"grid.prior[{i}] = {p!r}: its k is not in grid.arms = "
                                  f"{grid['arms']!r}")
    elif arms_list != [None]:
        priors = [GaussianPrior.standard(a) for a in arms_list]
    else:  # fixed instances only: the standard prior of each instance's k
        priors = [GaussianPrior.standard(k) for k in sorted({len(m) for m in instances})]
    ks = {p.k for p in priors}
    for i, m in enumerate(instances):
        if m is not None and len(m) not in ks:
            raise ConfigError(f"grid.means[{i}] = {list(m)!r}: {len(m)} arms, but the grid's "
                              f"priors have k in {sorted(ks)}")
    return priors


def load_sweep(path: str | Path) -> Sweep:
    """Read and check a sweep configuration file (TOML)."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)  # never more: a device or pipe may not end
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES // 2**20} MiB; a sweep "
                          "configuration is a few lines of TOML")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from None
    return parse_sweep(doc, str(path))


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _cell(description_json: str) -> Cell:
    # One Cell (and prior, whose L(H) it caches) per configuration and process: a sweep's
    # shards of one cell would otherwise recompute L(H), about 60 ms for ten arms, every time.
    return Cell.from_description(json.loads(description_json))


def run_shard(description: dict, first: int, stop: int, n_threads: Optional[int] = None) -> dict:
    """:func:`shard_columns` of the cell described by ``description`` (the task a Dask worker
    runs: the cell travels as its JSON description)."""
    return shard_columns(_cell(json.dumps(description, sort_keys=True)), first, stop, n_threads)


def shard_columns(cell: Cell, first: int, stop: int, n_threads: Optional[int] = None) -> dict:
    """Simulate runs ``first, ..., stop - 1`` of ``cell`` and return the store's columns."""
    import warnings

    from .plan import CensoringWarning
    from .simulation import run_plan

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CensoringWarning)  # censoring is a column of the store
        (res,) = run_plan(cell.plan(first, stop), n_threads=n_threads, progress=False)
    shard_seconds = time.perf_counter() - t0
    frame = res.to_frame()
    n = stop - first
    cols = {c: frame[c].to_numpy() for c in frame.columns}
    cols.update(
        config=[cell.id] * n, seed=np.full(n, cell.seed, dtype=np.uint64),
        algorithm=[cell.algorithm.label] * n, prior=[cell.prior_label] * n,
        k=np.full(n, cell.prior.k, dtype=np.int64), delta=np.full(n, cell.delta),
        delta0=np.full(n, np.nan if res.delta0 is None else res.delta0),
        max_samples=np.full(n, res.max_samples, dtype=np.int64),
        shard_seconds=np.full(n, shard_seconds))
    return cols


def _progress_bar(total, done, progress):
    from .executor import progress_enabled

    if not progress_enabled(progress):
        return None
    from tqdm import tqdm

    return tqdm(total=total, initial=done, desc="sweep", unit="run", file=sys.stderr,
                smoothing=0.05)


#: The modules of the ``scale`` extra a sweep needs: the result store's, and Dask's executor's.
SCALE_MODULES = {"local": ("pandas", "pyarrow"), "dask": ("pandas", "pyarrow", "dask.distributed")}


def require_scale(executor: str = "local") -> None:
    """Refuse, before any work, a sweep whose result store (or executor) cannot be imported: an
    ``ImportError`` naming every missing module of :data:`~bai_lib.sweep.SCALE_MODULES` and the
    extra to install, where the store would otherwise fail only when it writes the first
    shard."""
    import importlib.util

    def missing(name):
        try:
            return importlib.util.find_spec(name) is None
        except ImportError:  # the parent package of a dotted name is missing
            return True

    absent = [name for name in SCALE_MODULES[executor] if missing(name)]
    if absent:
        raise ImportError(f"sweeps and bai-lib run/sweep/summary need {', '.join(absent)}, not "
                          f"installed: pip install 'bai_lib[scale]'")


def run_sweep(sweep: Sweep, store: ResultStore | str | Path, *, executor: str = "local",
              scheduler: Optional[str] = None, n_workers: Optional[int] = None,
              progress: Optional[bool] = None, n_threads: Optional[int] = None) -> ResultStore:
    """Compute every shard of ``sweep`` that ``store`` does not hold yet.

    Parameters
    ----------
    sweep : Sweep
    store : ResultStore or path
    executor : {"local", "dask"}
        ``"local"``: shards one after the other in this process, each on ``n_threads`` threads.
        ``"dask"``: shards as tasks of a Dask cluster (``scheduler`` address, or a
        ``LocalCluster`` of ``n_workers`` single-threaded worker processes on 127.0.0.1), the
        rows sent back and written here as each shard completes.
    progress : bool, optional
        A tqdm bar over runs on stderr (default as in :func:`bai_lib.simulate`).

    Returns
    -------
    ResultStore

    Notes
    -----
    Ctrl-C stops the sweep within about a second; the shards already written stay, and running
    the same sweep again computes only the rest (also after SIGKILL: at most the shards in
    flight are lost). Every shard already in the store is verified against its manifest first;
    one that fails (short, another cell's, edited, unreadable or undecodable) is moved to its
    cell's ``set-aside/`` directory with a :class:`ShardWarning` naming it, and its runs are
    computed again. Starting takes time linear in the number of cells: each cell's
    ``cell.json`` is read twice at most (written or compared, then checked), its shards once.
    """
    V.choice(executor, ("local", "dask"), "executor")
    if scheduler is not None and executor != "dask":
        raise ValueError("scheduler is only used with executor='dask'")
    require_scale(executor)
    store = store if isinstance(store, ResultStore) else ResultStore(store)
    with store.writer():  # one writer at a time: a second sweep is refused, not interleaved
        store.remove_partial()  # shards a killed sweep was writing: never complete, never read
        for cell in sweep.cells:
            store.add_cell(cell.id, cell.description())
            for problem in store.check(cell.id):  # this cell's cell.json and shards only
                moved = store.set_aside(problem)
                warnings.warn(f"config {cell.id}: shard {problem}; moved to {moved} and its "
                              "runs computed again", ShardWarning, stacklevel=2)
        todo = sweep.shards(store)
        done_runs = sweep.total_runs - sum(b - a for _, a, b in todo)
        bar = _progress_bar(sweep.total_runs, done_runs, progress)
        try:
            if executor == "local":
                for cell, first, stop in todo:
                    cols = shard_columns(cell, first, stop, n_threads)
                    store.write_shard(cell.id, cols, first, stop)
                    if bar is not None:
                        bar.update(stop - first)
            else:
                _run_dask(todo, store, scheduler, n_workers, bar)
        except KeyboardInterrupt:
            left = len(sweep.shards(store))
            raise KeyboardInterrupt(
                f"sweep interrupted: {left} shard(s) left; the completed ones are in {store.path}; "
                "run the same sweep again to compute only the rest") from None
        finally:
            if bar is not None:
                bar.close()
    return store


def _run_dask(todo, store, scheduler, n_workers, bar):
    try:
        from dask.distributed import Client, LocalCluster, as_completed
    except ImportError:  # pragma: no cover - the scale extra is installed by make test
        raise ImportError("executor 'dask' needs dask[distributed]: "
                          "pip install 'bai_lib[scale]'") from None
    cluster = None
    if scheduler is None:
        workers = 2 if n_workers is None else V.integer(n_workers, "n_workers", 1)
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    else:
        client = Client(scheduler)
    futures = {}
    try:
        for cell, first, stop in todo:
            f = client.submit(run_shard, cell.description(), first, stop, 1, pure=False)
            futures[f] = (cell, first, stop)
        for f in as_completed(futures):
            cell, first, stop = futures[f]
            store.write_shard(cell.id, f.result(), first, stop)
            if bar is not None:
                bar.update(stop - first)
    finally:
        for f in futures:
            f.cancel()
        client.close()
        if cluster is not None:
            cluster.close()
