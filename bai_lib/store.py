"""A per-run result store on disk: one Parquet file per shard of runs, partitioned by configuration.

Layout::

    STORE/
      config=<id>/                  one directory per configuration (a cell of a sweep)
        cell.json                   what the cell is: algorithm and options, prior, noise, δ, seed,
                                    runs, max_samples (see :class:`bai_lib.cell.Cell`)
        runs-<first>-<stop>.parquet one row per run for runs first, ..., stop - 1

Every file is written under a temporary name in the same directory and renamed into place
(``os.replace``, atomic on POSIX), after an ``fsync``; temporary files are never read. A shard
file therefore is either complete or absent, so a sweep killed at any moment (SIGINT or
SIGKILL) loses at most the shards it was computing, and the next start skips every shard
already on disk and deletes the temporary files a kill left (:meth:`ResultStore.remove_partial`).

Columns (:data:`COLUMNS`): ``config``, ``seed``, ``run``, ``algorithm`` (its label), ``prior``,
``k``, ``delta``, ``delta0``, ``max_samples``, then the run's ``tau``, ``recommendation``,
``best_arm``, ``correct``, ``censored``, ``stop_reason``, ``gap`` (best minus second-best
mean), and two wall-clock columns, ``seconds`` (the run's kernel call) and ``shard_seconds``
(its shard). Apart from the wall-clock columns (:data:`WALL_CLOCK_COLUMNS`) every value depends
only on the configuration and the run index.

Reading needs pandas and pyarrow (the ``scale`` extra, ``pip install bai_lib[scale]``).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from .cell import Cell, ConfigError
from .result import SimulationResult

if TYPE_CHECKING:  # pandas and pyarrow are imported when a table is read (the scale extra)
    import pandas as pd

__all__ = ["ResultStore", "COLUMNS", "RUN_COLUMNS", "WALL_CLOCK_COLUMNS", "missing_ranges"]

#: Columns that describe the configuration of a row.
CONFIG_COLUMNS = ("config", "seed", "run", "algorithm", "prior", "k", "delta", "delta0",
                  "max_samples")
#: Columns of one run, as :meth:`bai_lib.SimulationResult.to_frame` gives them.
RUN_COLUMNS = ("run", "tau", "recommendation", "best_arm", "correct", "censored", "stop_reason",
               "gap", "seconds")
#: Columns measured with a clock, which differ between two runs of the same sweep.
WALL_CLOCK_COLUMNS = ("seconds", "shard_seconds")
#: All columns of the store, in order.
COLUMNS = CONFIG_COLUMNS + RUN_COLUMNS[1:] + ("shard_seconds",)

_SHARD = re.compile(r"^runs-(\d+)-(\d+)\.parquet$")


def _scale_import(name):
    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - the scale extra is installed by make test
        raise ImportError(f"the result store needs {name}: pip install 'bai_lib[scale]'") from None


def _atomic_write(path: Path, write) -> None:
    """Call ``write(fh)`` on a temporary file next to ``path``, fsync, and rename it to ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def _own_dir(d: Path) -> Path:
    """``d``, a cell directory of the store, unless it is a symbolic link: the store writes and
    deletes files only below its own directory."""
    if d.is_symlink():
        raise ConfigError(f"{d}: a symbolic link inside the result store; the store writes and "
                          "deletes files only in its own directories: replace the link by the "
                          "directory it points to, or remove it")
    return d


def _read_description(path: Path) -> dict:
    """A ``cell.json``, as a dict; an unreadable, truncated or non-object file is refused in
    one line naming it."""
    try:
        description = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ConfigError(f"{path}: not readable as JSON ({err}); restore the file or remove "
                          "its directory") from None
    if not isinstance(description, dict):
        raise ConfigError(f"{path}: a cell description is a JSON object, got "
                          f"{type(description).__name__}; restore the file or remove its "
                          "directory")
    return description


def missing_ranges(runs: int, done: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges ``[first, stop)`` of ``range(runs)`` not covered by the ranges ``done``."""
    out = []
    at = 0
    for first, stop in sorted(done):
        if first > at:
            out.append((at, min(first, runs)))
        at = max(at, stop)
    if at < runs:
        out.append((at, runs))
    return [(a, b) for a, b in out if a < b]


class ResultStore:
    """A directory of per-run results (see the module docstring for the layout).

    Parameters
    ----------
    path : str or Path
        The store's directory; created by the first write.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"ResultStore({str(self.path)!r})"

    # -- writing -----------------------------------------------------------------------------

    def _cell_dir(self, config: str) -> Path:
        return _own_dir(self.path / f"config={config}")

    def add_cell(self, config: str, description: dict) -> None:
        """Record the description of cell ``config`` (once; the same id must describe the same
        cell)."""
        d = self._cell_dir(config)
        d.mkdir(parents=True, exist_ok=True)
        path = d / "cell.json"
        text = json.dumps(description, sort_keys=True, indent=1)
        if path.exists():
            if _read_description(path) != json.loads(text):
                raise ValueError(f"store {self.path}: {path.name} of config {config} describes "
                                 "another cell; use a new store directory")
            return
        _atomic_write(path, lambda fh: fh.write(text.encode()))

    def write_shard(self, config: str, columns: dict, first: int, stop: int) -> Path:
        """Write the rows of runs ``first, ..., stop - 1`` of cell ``config`` atomically.

        ``columns`` maps every name of :data:`COLUMNS` to a sequence of ``stop - first`` values.
        """
        pa = _scale_import("pyarrow")
        pq = _scale_import("pyarrow.parquet")
        missing = [c for c in COLUMNS if c not in columns]
        if missing:
            raise ValueError(f"columns: missing {missing}")
        n = stop - first
        for c in COLUMNS:
            if len(columns[c]) != n:
                raise ValueError(f"columns: {c!r} has {len(columns[c])} values, expected {n}")
        table = pa.table({c: columns[c] for c in COLUMNS})
        path = self._cell_dir(config) / f"runs-{first:09d}-{stop:09d}.parquet"
        _atomic_write(path, lambda fh: pq.write_table(table, fh))
        return path

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """Hold the store's writer lock (an advisory ``flock`` on ``.writer.lock`` in the store
        directory) for the duration of the ``with`` block: a second writer, in this or another
        process, is refused at once with a ``ValueError`` instead of deleting the first one's
        temporary files. The lock goes with the process (also on SIGKILL)."""
        import fcntl

        self.path.mkdir(parents=True, exist_ok=True)
        fh = open(self.path / ".writer.lock", "a+")
        try:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(f"store {self.path}: another sweep is writing to it; wait for "
                                 "it to finish, or write to another directory") from None
            try:
                yield
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
        finally:
            fh.close()

    def remove_partial(self) -> int:
        """Delete the temporary files a killed writer left behind; return how many.

        Call it only while holding :meth:`writer` (a sweep does, at its start).
        """
        n = 0
        if self.path.is_dir():
            for d in self.path.glob("config=*"):
                for f in _own_dir(d).glob(".*.tmp"):
                    f.unlink(missing_ok=True)
                n += 1
        return n

    # -- reading -----------------------------------------------------------------------------

    def cells(self) -> dict:
        """``{config id: description}`` of every cell in the store, each checked: a
        ``cell.json`` that is unreadable, not a description, or describes another cell than its
        directory's id raises :class:`~bai_lib.cell.ConfigError` naming the file."""
        out = {}
        if not self.path.is_dir():
            return out
        for d in sorted(self.path.glob("config=*")):
            f = _own_dir(d) / "cell.json"
            if f.is_file():
                config = d.name.split("=", 1)[1]
                description = _read_description(f)
                self._cell(config, description)  # refuses one that is not this cell's
                out[config] = description
        return out

    def shards(self, config: str) -> list[tuple[int, int]]:
        """The complete shards ``(first, stop)`` of cell ``config``, in run order."""
        d = self._cell_dir(config)
        if not d.is_dir():
            return []
        out = []
        for f in d.iterdir():
            m = _SHARD.match(f.name)
            if m:
                out.append((int(m.group(1)), int(m.group(2))))
        return sorted(out)

    def runs_done(self, config: str) -> int:
        """Number of runs of cell ``config`` on disk."""
        return sum(b - a for a, b in self.shards(config))

    def table(self, config: Optional[str] = None, complete_only: bool = True) -> pd.DataFrame:
        """The rows of the store (or of cell ``config``) as a pandas DataFrame, sorted by
        configuration and run.

        With ``complete_only`` (default) cells with runs missing are left out; the rows of an
        incomplete cell are never mixed with those of complete ones unless asked.
        """
        pd = _scale_import("pandas")
        pq = _scale_import("pyarrow.parquet")
        cells = self.cells()
        if config is not None:
            if config not in cells:
                raise ValueError(f"config {config!r} is not in store {self.path}")
            cells = {config: cells[config]}
        frames = []
        for cid, desc in cells.items():
            if complete_only and missing_ranges(desc["runs"], self.shards(cid)):
                continue
            for a, b in self.shards(cid):
                path = self._cell_dir(cid) / f"runs-{a:09d}-{b:09d}.parquet"
                frames.append(pq.read_table(path).to_pandas())
        if not frames:
            return pd.DataFrame({c: [] for c in COLUMNS})
        out = pd.concat(frames, ignore_index=True)
        out = out.drop_duplicates(subset=["config", "run"], keep="first")
        return out.sort_values(["config", "run"], kind="stable").reset_index(drop=True)

    def result(self, config: str) -> SimulationResult:
        """Cell ``config`` as a :class:`~bai_lib.SimulationResult`, the object the chapters
        summarise (the arm means are drawn again from the seed, exactly as :func:`~bai_lib.simulate`
        drew them)."""
        cells = self.cells()
        if config not in cells:
            raise ValueError(f"config {config!r} is not in store {self.path}")
        return self._result(config, cells[config])

    def _cell(self, config: str, description: dict) -> Cell:
        """The cell that ``config``'s ``cell.json`` describes, which must be the cell of that id
        (a hand-edited description is refused, never summarised under the old id)."""
        path = self._cell_dir(config) / "cell.json"
        try:
            cell = Cell.from_description(description)
            cell_id = cell.id  # formats every field: a value of the wrong type fails here
        except (KeyError, TypeError, ValueError) as err:
            what = f"missing key {err}" if isinstance(err, KeyError) else str(err).split("\n")[0]
            raise ConfigError(f"{path}: not a cell description ({what}); restore the file or "
                              "remove its directory") from None
        if cell_id != config:
            raise ConfigError(f"{path}: describes cell {cell_id}, not {config} (edited?); "
                              "restore the file or remove its directory")
        return cell

    def _result(self, config: str, description: dict):
        """:meth:`result` for a cell whose description has been read already."""
        cell = self._cell(config, description)
        gaps = missing_ranges(cell.runs, self.shards(config))
        if gaps:
            raise ValueError(f"config {config}: runs {gaps[0][0]}..{gaps[0][1] - 1} are missing "
                             "(the sweep was interrupted); run it again to complete the store")
        t = self.table(config)
        means = cell.prior.sample_means(cell.seed, cell.runs)
        d0 = t["delta0"].iloc[0]
        return SimulationResult.from_runs(
            algorithm=cell.algorithm, prior=cell.prior, noise_stds=np.asarray(cell.noise_stds),
            delta=cell.delta, delta0=None if np.isnan(d0) else float(d0), seed=cell.seed,
            max_samples=int(t["max_samples"].iloc[0]), means=means, means_given=False,
            first_run=0, stopping_times=t["tau"].to_numpy(np.int64),
            recommendations=t["recommendation"].to_numpy(np.int64),
            stop_reasons=t["stop_reason"].to_numpy(str), seconds=t["seconds"].to_numpy(np.float64))

    def summary(self, left_out: Optional[dict] = None) -> pd.DataFrame:
        """One row per complete cell: its configuration and ``SimulationResult.summary(flat=True)``.

        ``left_out``, a dict, receives ``{config id: (runs done, runs planned)}`` for the cells
        this same pass found incomplete (a sweep may complete them meanwhile: a separate
        :meth:`incomplete` call could disagree with the rows).

        Returns
        -------
        pandas.DataFrame
            Columns ``config``, ``algorithm``, ``k``, ``delta``, ``prior``, ``seed``, then the
            summary's ``n_runs``, ``avg``, ``max``, ``median``, ``q90``, ``q99``, ``error``,
            ``n_errors``, ``error_lo``, ``error_hi``, ``n_censored``, ``stops_*`` and
            ``mean_seconds``; in the order of the cells' descriptions.
        """
        pd = _scale_import("pandas")
        rows = []
        for cid, desc in self.cells().items():
            shards = self.shards(cid)
            if missing_ranges(desc["runs"], shards):
                if left_out is not None:
                    left_out[cid] = (sum(b - a for a, b in shards), desc["runs"])
                continue
            res = self._result(cid, desc)
            rows.append({"config": cid, "algorithm": res.algorithm.label, "k": res.k,
                         "delta": res.delta, "prior": desc["prior_label"], "seed": res.seed,
                         **res.summary(flat=True)})
        rows.sort(key=lambda r: (r["algorithm"], r["k"], -r["delta"], r["prior"], r["config"]))
        return pd.DataFrame(rows)

    def incomplete(self) -> dict:
        """``{config id: (runs done, runs planned)}`` for the cells with runs missing."""
        out = {}
        for cid, desc in self.cells().items():
            done = self.runs_done(cid)
            if missing_ranges(desc["runs"], self.shards(cid)):
                out[cid] = (done, desc["runs"])
        return out
