"""A per-run result store on disk: one Parquet file per shard of runs, partitioned by configuration.

Layout::

    STORE/
      config=<id>/                  one directory per configuration (a cell of a sweep)
        cell.json                   what the cell is: algorithm and options, prior, noise, δ, seed,
                                    runs, max_samples (see :class:`bai_lib.cell.Cell`)
        runs-<first>-<stop>.parquet one row per run for runs first, ..., stop - 1
        set-aside/                  shards that failed verification, moved here by a sweep,
                                    with reasons.txt saying why

Every file is written under a temporary name in the same directory and renamed into place
(``os.replace``, atomic on POSIX), after an ``fsync``; temporary files are never read. A shard
file therefore is either complete or absent, so a sweep killed at any moment (SIGINT or
SIGKILL) loses at most the shards it was computing, and the next start skips every shard
already on disk and deletes the temporary files a kill left (:meth:`ResultStore.remove_partial`).

Each shard proves what it holds: its Parquet metadata carries a manifest (the cell, the run
range, the row count and a SHA-256 of its values, :func:`content_hash`), and every read checks
the file against it. A shard that is short, another cell's, edited, renamed, unreadable or
undecodable (any error reading it, down to one flipped byte) is named (:class:`ShardProblem`)
and never read; ``summary`` leaves its cell out, and the next sweep moves it to ``set-aside/``
(never deletes it) and computes its runs again. A cell appears in a summary only when verified
shards cover all its runs; ``summary`` also names a cell directory without its ``cell.json``.
A symbolic link in place of a cell directory, ``set-aside/``, its ``reasons.txt`` or
``.writer.lock`` is refused, never followed.

Columns (:data:`COLUMNS`): ``config``, ``seed``, ``run``, ``algorithm`` (its label), ``prior``,
``k``, ``delta``, ``delta0``, ``max_samples``, then the run's ``tau``, ``recommendation``,
``best_arm``, ``correct``, ``censored``, ``stop_reason``, ``gap`` (best minus second-best
mean), and two wall-clock columns, ``seconds`` (the run's kernel call) and ``shard_seconds``
(its shard). Apart from the wall-clock columns (:data:`WALL_CLOCK_COLUMNS`) every value depends
only on the configuration and the run index.

Reading needs pandas and pyarrow (the ``scale`` extra, ``pip install bai_lib[scale]``).
"""

from __future__ import annotations

import base64
import contextlib
import errno
import hashlib
import importlib
import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Optional

import numpy as np

from .cell import Cell, ConfigError, noise_label, read_description
from .result import SimulationResult

if TYPE_CHECKING:  # pandas and pyarrow are imported when a table is read (the scale extra)
    import pandas as pd
    import pyarrow

__all__ = ["ResultStore", "ShardProblem", "Incomplete", "COLUMNS", "RUN_COLUMNS",
           "WALL_CLOCK_COLUMNS", "HASHED_COLUMNS", "MANIFEST_KEY", "content_hash",
           "missing_ranges"]

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

#: Columns that a shard's content hash covers (all but the wall-clock ones).
HASHED_COLUMNS = tuple(c for c in COLUMNS if c not in WALL_CLOCK_COLUMNS)
#: Key of a shard's manifest in the Parquet file's metadata.
MANIFEST_KEY = b"bai_lib.shard"

_MAGIC = b"PAR1"  # first and last bytes of a Parquet file
_ARROW_SCHEMA = b"ARROW:schema"  # footer key of the Arrow schema pyarrow serializes
_SHARD = re.compile(r"^runs-(\d+)-(\d+)\.parquet$")


@dataclass(frozen=True)
class ShardProblem:
    """A shard file that fails verification, or a cell's missing ``cell.json``: its path and
    why, in a few words."""

    path: Path
    reason: str

    def __str__(self) -> str:
        return f"{self.path.name}: {self.reason}"


class Incomplete(NamedTuple):
    """A cell of the store that is not summarised: its verified runs, the runs it plans, and
    the shards that failed verification (:class:`ShardProblem`). A cell directory without its
    ``cell.json`` is ``Incomplete(0, 0, (problem,))``, the problem naming the missing file
    (its run count is unknown without it)."""

    done: int
    runs: int
    problems: tuple = ()


def content_hash(table: "pyarrow.Table") -> str:
    """SHA-256 of a shard's values in the columns :data:`HASHED_COLUMNS` (names, types and
    bytes; the wall-clock columns excluded), as hex: the same runs give the same hash in
    any sweep, on any executor."""
    pa = _scale_import("pyarrow")
    h = hashlib.sha256()
    for name in HASHED_COLUMNS:
        column = table.column(name)
        h.update(f"{name}:{column.type}:{len(column)}\0".encode())
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            h.update("\0".join(str(v) for v in column.to_pylist()).encode())
        else:
            h.update(np.ascontiguousarray(column.to_numpy()).tobytes())
    return h.hexdigest()


def _verified(path: Path, config: str, first: int, stop: int, runs: int):
    """``(table, None)`` when the shard at ``path`` is runs ``first..stop-1`` of cell
    ``config`` exactly as its manifest records them, else ``(None, reason)``. Any exception
    reading or decoding the file raises (pyarrow's, ``UnicodeDecodeError``, JSON's, ...)
    becomes a reason naming its class."""
    if not first < stop <= runs:
        return None, f"runs {first}..{stop - 1} are not runs of this cell (it has {runs:,})"
    pq = _scale_import("pyarrow.parquet")
    try:
        with open(path, "rb") as fh:
            head = fh.read(len(_MAGIC))
        with pq.ParquetFile(path) as pf:
            table = pf.read()
            footer = pf.metadata.metadata or {}
    except Exception as err:  # noqa: BLE001 - every failure names the file
        return None, f"not readable as Parquet ({_what(err)}; damaged, or not Parquet)"
    if head != _MAGIC:  # pyarrow reads the footer's copy of the magic bytes only
        return None, "not readable as Parquet (its first bytes are not PAR1; damaged)"
    try:
        return _matches_manifest(table, footer, config, first, stop)
    except Exception as err:  # noqa: BLE001 - every failure names the file
        return None, f"not decodable ({_what(err)}; damaged)"


def _what(err: BaseException) -> str:
    """An exception as its class and the start of its message's first line."""
    text = str(err).split("\n")[0].strip()
    text = text if len(text) <= 80 else text[:77] + "..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _matches_manifest(table, footer: dict, config: str, first: int, stop: int):
    """:func:`_verified` for a table read by ``ParquetFile.read`` and its footer's key-value
    metadata; raises on a value it cannot decode. pyarrow writes the manifest twice, in the
    footer (``ParquetFile.read`` gives it) and in the serialized Arrow schema (``read_table``
    and pandas give it): the two must agree."""
    pa = _scale_import("pyarrow")
    raw = (table.schema.metadata or {}).get(MANIFEST_KEY)
    if raw is None:
        return None, "no manifest (not written by this store)"
    if _ARROW_SCHEMA in footer:
        serialized = base64.b64decode(footer[_ARROW_SCHEMA], validate=True)
        schema = pa.ipc.read_schema(pa.py_buffer(serialized))
        if (schema.metadata or {}).get(MANIFEST_KEY) != raw:
            return None, "its two copies of the manifest differ (damaged)"
    try:
        manifest = json.loads(raw)
        m_config, m_range = manifest["config"], (manifest["first"], manifest["stop"])
        m_rows, m_hash = manifest["rows"], manifest["sha256"]
    except (ValueError, TypeError, KeyError):  # UnicodeDecodeError is a ValueError
        return None, "its manifest is not readable"
    if m_config != config:
        return None, f"a shard of config {m_config}, not of this cell (copied here?)"
    if m_range != (first, stop):
        return None, (f"its manifest holds runs {m_range[0]}..{m_range[1] - 1}, its name "
                      f"{first}..{stop - 1} (renamed?)")
    if table.num_rows != stop - first or m_rows != stop - first:
        return None, f"{table.num_rows:,} rows, {stop - first:,} expected (truncated?)"
    missing = [c for c in COLUMNS if c not in table.column_names]
    if missing:
        return None, f"columns {missing} missing"
    for name in WALL_CLOCK_COLUMNS:  # not hashed: their type is checked instead
        if not pa.types.is_floating(table.column(name).type):
            return None, f"column {name!r} is {table.column(name).type}, not a float (damaged?)"
    if content_hash(table) != m_hash:
        return None, "its values differ from those its manifest records (edited?)"
    return table, None


def _rows(pd, shards):
    """The verified shards ``{(first, stop): pyarrow.Table}`` of a cell as one sorted table."""
    return _concat(pd, [shards[key].to_pandas() for key in sorted(shards)])


def _concat(pd, frames):
    """Frames of verified shards as one table sorted by configuration and run."""
    out = pd.concat(frames, ignore_index=True)
    out = out.drop_duplicates(subset=["config", "run"], keep="first")
    return out.sort_values(["config", "run"], kind="stable").reset_index(drop=True)


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


def _link_error(path: Path) -> ConfigError:
    return ConfigError(f"{path}: a symbolic link inside the result store; the store writes and "
                       "deletes files only in its own directories: replace the link by the "
                       "file or directory it points to, or remove it")


def _own_dir(d: Path) -> Path:
    """``d``, a cell directory of the store, unless it is a symbolic link: the store writes and
    deletes files only below its own directory."""
    if d.is_symlink():
        raise _link_error(d)
    return d


def _open_own(path: Path, flags: int, mode: str):
    """``path`` opened, created if missing, without following a symbolic link (refused)."""
    try:
        fd = os.open(path, flags | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    except OSError as err:
        if err.errno == errno.ELOOP or path.is_symlink():
            raise _link_error(path) from None
        raise
    return os.fdopen(fd, mode)


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
            if read_description(path) != json.loads(text):
                raise ValueError(f"store {self.path}: {path.name} of config {config} describes "
                                 "another cell; use a new store directory")
            return
        _atomic_write(path, lambda fh: fh.write(text.encode()))

    def write_shard(self, config: str, columns: dict, first: int, stop: int) -> Path:
        """Write the rows of runs ``first, ..., stop - 1`` of cell ``config`` atomically.

        ``columns`` maps every name of :data:`COLUMNS` to a sequence of ``stop - first`` values.
        The file's Parquet metadata carries its manifest (key :data:`MANIFEST_KEY`): the cell,
        the run range, the row count and the :func:`content_hash`, which every read verifies.
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
        manifest = {"config": config, "first": first, "stop": stop, "rows": n,
                    "sha256": content_hash(table)}
        table = table.replace_schema_metadata({MANIFEST_KEY: json.dumps(manifest).encode()})
        path = self._shard_path(config, first, stop)
        _atomic_write(path, lambda fh: pq.write_table(table, fh))
        return path

    @contextlib.contextmanager
    def writer(self) -> Iterator[None]:
        """Hold the store's writer lock (an advisory ``flock`` on ``.writer.lock`` in the store
        directory) for the duration of the ``with`` block: a second writer, in this or another
        process, is refused at once with a ``ValueError`` instead of deleting the first one's
        temporary files. The lock goes with the process (also on SIGKILL). A symbolic link in
        place of the lock file is refused (:class:`~bai_lib.cell.ConfigError`), never
        followed."""
        import fcntl

        self.path.mkdir(parents=True, exist_ok=True)
        fh = _open_own(self.path / ".writer.lock", os.O_RDWR, "r+")
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
        directory's id raises :class:`~bai_lib.cell.ConfigError` naming the file. (A directory
        without a ``cell.json`` is not listed: :meth:`summary` names it.)"""
        return self._scan()[0]

    def _scan(self) -> tuple[dict, dict]:
        """:meth:`cells`, and ``{config id: ShardProblem}`` for each ``config=...`` entry without
        a ``cell.json`` (its shards cannot be verified without the cell's run count)."""
        described, undescribed = {}, {}
        if not self.path.is_dir():
            return described, undescribed
        for d in sorted(self.path.glob("config=*")):
            config = d.name.split("=", 1)[1]
            f = _own_dir(d) / "cell.json"
            if f.is_file():
                description = read_description(f)
                self._cell(config, description)  # refuses one that is not this cell's
                described[config] = description
            elif not d.is_dir():
                undescribed[config] = ShardProblem(d, "a file, not a cell directory")
            else:
                undescribed[config] = ShardProblem(f, (
                    f"{'not a file' if os.path.lexists(f) else 'missing'} (the cell's "
                    f"description: without it its {len(self.shards(config)):,} shard file(s) "
                    "cannot be verified; a sweep of this cell writes it again)"))
        return described, undescribed

    def _description(self, config: str) -> dict:
        """The checked description of cell ``config``, from its ``cell.json`` alone."""
        d = self.path / f"config={config}"
        f = _own_dir(d) / "cell.json"
        if d.name == f"config={config}" and d.is_dir() and not f.is_file():
            raise ValueError(f"config {config!r}: {f} is missing; a sweep of this cell writes it")
        if not f.is_file() or d.name != f"config={config}":
            raise ValueError(f"config {config!r} is not in store {self.path}")
        description = read_description(f)
        self._cell(config, description)  # refuses one that is not this cell's
        return description

    def shards(self, config: str) -> list[tuple[int, int]]:
        """The shard files ``(first, stop)`` of cell ``config`` by their names, in run order
        (not verified: :meth:`check` reads and verifies them)."""
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
        """Number of runs of cell ``config`` on disk (by the shards' names)."""
        return sum(b - a for a, b in self.shards(config))

    def _shard_path(self, config: str, first: int, stop: int) -> Path:
        return self._cell_dir(config) / f"runs-{first:09d}-{stop:09d}.parquet"

    def _read_cell(self, config: str, runs: int) -> tuple[dict, list]:
        """Read and verify every shard of cell ``config`` (one look at its directory):
        ``({(first, stop): pyarrow.Table}, [ShardProblem, ...])``."""
        good, problems = {}, []
        for first, stop in self.shards(config):
            path = self._shard_path(config, first, stop)
            table, reason = _verified(path, config, first, stop, runs)
            if reason is None:
                good[(first, stop)] = table
            else:
                problems.append(ShardProblem(path, reason))
        return good, problems

    def check(self, config: str) -> list:
        """The shards of cell ``config`` that fail verification, as :class:`ShardProblem`
        (empty when every shard is what its manifest says). Reads this cell's ``cell.json`` and
        shards only."""
        return self._read_cell(config, self._description(config)["runs"])[1]

    def set_aside(self, problem: "ShardProblem") -> Path:
        """Move a shard that failed verification into its cell's ``set-aside/`` directory
        (never deleted: it stays there for inspection), record why in ``set-aside/reasons.txt``,
        and return its new path. Its runs are then missing, and the next sweep computes them.

        Call it only while holding :meth:`writer` (a sweep does).
        """
        aside = _own_dir(problem.path.parent / "set-aside")
        aside.mkdir(exist_ok=True)
        n = 1
        while os.path.lexists(aside / f"{problem.path.name}.{n}"):
            n += 1
        target = aside / f"{problem.path.name}.{n}"
        with _open_own(aside / "reasons.txt", os.O_WRONLY | os.O_APPEND, "a") as fh:
            os.replace(problem.path, target)
            fh.write(f"{target.name}: {problem.reason}\n")
        return target

    def table(self, config: Optional[str] = None, complete_only: bool = True) -> pd.DataFrame:
        """The rows of the store (or of cell ``config``) as a pandas DataFrame, sorted by
        configuration and run.

        Every shard is verified against its manifest (:meth:`check`); one that fails is never
        read. With ``complete_only`` (default) a cell with runs missing or a shard that fails is
        left out whole; the rows of an incomplete cell are never mixed with those of complete
        ones unless asked, and then only its verified shards are given.
        """
        pd = _scale_import("pandas")
        cells = self.cells() if config is None else {config: self._description(config)}
        frames = []
        for cid, desc in cells.items():
            good, problems = self._read_cell(cid, desc["runs"])
            if complete_only and (problems or missing_ranges(desc["runs"], good)):
                continue
            frames.extend(good[key].to_pandas() for key in sorted(good))
        if not frames:
            return pd.DataFrame({c: [] for c in COLUMNS})
        return _concat(pd, frames)

    def result(self, config: str) -> SimulationResult:
        """Cell ``config`` as a :class:`~bai_lib.SimulationResult`, the object the chapters
        summarise (the arm means are the cell's fixed ones, or drawn again from the seed exactly as
        :func:`~bai_lib.simulate` drew them)."""
        return self._result(config, self._description(config))

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

    def _result(self, config: str, description: dict, cell_rows=None, cell=None):
        """:meth:`result` for a cell whose description has been read already (and, from
        :meth:`summary`, whose verified rows and :class:`~bai_lib.cell.Cell` too)."""
        cell = self._cell(config, description) if cell is None else cell
        if cell_rows is None:
            pd = _scale_import("pandas")
            good, problems = self._read_cell(config, cell.runs)
            if problems:
                raise ValueError(f"config {config}: {problems[0]}; run its sweep again to "
                                 "set the shard aside and recompute it")
            gaps = missing_ranges(cell.runs, good)
            if gaps:
                raise ValueError(f"config {config}: runs {gaps[0][0]}..{gaps[0][1] - 1} are "
                                 "missing (the sweep was interrupted); run it again to "
                                 "complete the store")
            cell_rows = _rows(pd, good)
        t = cell_rows
        d0 = t["delta0"].iloc[0]
        return SimulationResult.from_runs(
            algorithm=cell.algorithm, prior=cell.prior, noise_stds=np.asarray(cell.noise_stds),
            delta=cell.delta, delta0=None if np.isnan(d0) else float(d0), seed=cell.seed,
            max_samples=int(t["max_samples"].iloc[0]),
            means=cell.plan(0, cell.runs).instance_means(), means_given=cell.means is not None,
            first_run=0, stopping_times=t["tau"].to_numpy(np.int64),
            recommendations=t["recommendation"].to_numpy(np.int64),
            stop_reasons=t["stop_reason"].to_numpy(str), seconds=t["seconds"].to_numpy(np.float64))

    def _status(self, config: str, description: dict):
        """``(rows, None)`` for a complete cell whose shards all verify, else
        ``(None, Incomplete)``."""
        pd = _scale_import("pandas")
        runs = description["runs"]
        good, problems = self._read_cell(config, runs)
        if problems or missing_ranges(runs, good):
            done = sum(b - a for a, b in good)
            return None, Incomplete(done, runs, tuple(problems))
        return _rows(pd, good), None

    def summary(self, left_out: Optional[dict] = None) -> pd.DataFrame:
        """One row per complete cell: its configuration and ``SimulationResult.summary(flat=True)``.

        A cell is complete when its shards cover all its runs and each one verifies against
        its manifest. ``left_out``, a dict, receives ``{config id: Incomplete}`` (verified runs,
        runs planned, the shards that failed) for the other cells, and for each cell directory
        without a ``cell.json`` (its problem names the missing file), found by this same pass (a
        sweep may complete them meanwhile: a separate :meth:`incomplete` call could disagree
        with the rows).

        Returns
        -------
        pandas.DataFrame
            Columns ``config``, ``algorithm``, ``k``, ``delta``, ``prior``, ``means``
            (``prior`` or the fixed means), ``noise``, ``seed``, then the summary's
            ``n_runs``, ``avg``, ``max``, ``median``, ``q90``, ``q99``, ``error``, ``n_errors``, ``error_lo``, ``error_hi``, ``n_censored``,
            ``stops_*`` and ``mean_seconds``; in the order of the cells' descriptions.
        """
        pd = _scale_import("pandas")
        rows = []
        described, undescribed = self._scan()
        if left_out is not None:
            left_out.update((cid, Incomplete(0, 0, (problem,)))
                            for cid, problem in undescribed.items())
        for cid, desc in described.items():
            cell_rows, status = self._status(cid, desc)
            if status is not None:
                if left_out is not None:
                    left_out[cid] = status
                continue
            cell = self._cell(cid, desc)
            res = self._result(cid, desc, cell_rows, cell)
            rows.append({"config": cid, "algorithm": res.algorithm.label, "k": res.k,
                         "delta": res.delta, "prior": desc["prior_label"],
                         "means": cell.means_label, "noise": noise_label(cell.noise_stds),
                         "seed": res.seed,
                         **res.summary(flat=True)})
        rows.sort(key=lambda r: (r["algorithm"], r["k"], -r["delta"], r["prior"], r["means"],
                                 r["noise"], r["config"]))
        return pd.DataFrame(rows)

    def incomplete(self) -> dict:
        """``{config id: Incomplete}`` for the cells with runs missing or a shard that fails
        verification, and for the cell directories without a ``cell.json`` (see
        :meth:`summary`)."""
        described, undescribed = self._scan()
        out = {cid: Incomplete(0, 0, (problem,)) for cid, problem in undescribed.items()}
        for cid, desc in described.items():
            _, status = self._status(cid, desc)
            if status is not None:
                out[cid] = status
        return out
