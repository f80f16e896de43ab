"""Re-execute notebooks from their MyST ``.md`` source and store the outputs in the paired ``.ipynb``.

Usage::

    python scripts/execute_notebooks.py [--refresh-timings] [NN_name ...]   # default: all notebooks
    python scripts/execute_notebooks.py --check-results DIR                 # see compare_results
    python scripts/execute_notebooks.py --text-only [NN_name ...]           # prose/metadata only
    python scripts/execute_notebooks.py --audit [NN_name ...]               # time the audited check

(``make reproduce [NB="NN_name ..."] [REFRESH_TIMINGS=1]`` runs the first form.)

Notebooks run in their own directory with :mod:`nbclient` and ``record_timing=False``, so no
timestamps enter the stored outputs; progress bars are disabled through ``BAI_LIB_PROGRESS=0``.
The written ``.ipynb`` is what ``pytest --nbval`` later compares.

Re-running with no source change leaves every file byte-identical. The only outputs that are not
deterministic are those of the wall-clock cells, tagged ``nbval-ignore-output``: for such a cell
whose source is unchanged since the stored ``.ipynb``, the previously stored outputs (its glued
numbers included) are kept, and so are the previous bytes of every results CSV named literally in
its source (e.g. ``write_csv(rows, "../results/05_table3_comp.csv")``), so the table in the book,
the glued prose and the CSV stay one consistent measurement. Those CSVs are not tracked
(``.gitignore``): in a fresh clone there is no previous file, and the stored outputs are kept all
the same (the tracked files stay byte-identical; the new CSV holds this machine's measurement).
``--refresh-timings`` (or ``BAI_LIB_REFRESH_TIMINGS=1``) stores the new measurement instead; a
timing cell whose source changed, or that has no stored outputs yet, is always refreshed.

Each notebook's wall and CPU time are stored in ``notebooks/execution_times.json`` (the book's
execution statistics) when the execution stores new outputs, when the notebook has no entry yet, or
with ``--refresh-timings``; otherwise the stored entry is kept.

Files are rewritten only when their content changes.

``--audit`` writes no notebook and no result: it executes the chapters as ``make test`` checks
them (run cache in mode ``audit``: cached runs read, a sample recomputed) and stores that wall and
CPU time beside the full one in ``notebooks/execution_times.json`` (``audit_seconds``,
``audit_cpu_seconds``), for the book's execution statistics.

The chapters that keep their runs in ``results/runs/<chapter>/`` (``bai_lib.runcache``) are
executed with the cache in mode ``refresh``: every run is computed again and a plan's file is
rewritten only when its values change (or with ``--refresh-timings``, which stores the new
wall-clock times), so an execution with no change leaves the cache byte-identical. Files of plans
the chapter no longer asks for are deleted.
"""

from __future__ import annotations

import argparse
import copy
import csv
import io
import json
import os
import resource
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
RESULTS_DIR = ROOT / "results"

#: Tag of the wall-clock cells (nbval does not compare their outputs).
TIMING_TAG = "nbval-ignore-output"
#: ``1`` refreshes the timing cells, as ``--refresh-timings`` does.
REFRESH_ENV = "BAI_LIB_REFRESH_TIMINGS"
#: Same name as ``bai_lib.experiments.RESULTS_DIR_ENV`` (a test checks it): when set, the
#: notebooks write their results files into this directory instead of ``results/``.
RESULTS_ENV = "BAI_LIB_RESULTS_DIR"
#: Same names as ``bai_lib.runcache.MODE_ENV`` and ``LOG_ENV`` (a test checks them).
RUN_CACHE_ENV = "BAI_LIB_RUN_CACHE"
# = bai_lib.runcache.ROTATION_ENV and ROTATION_SLICES (tested): the audit's rotation, as the test
# session sets it
ROTATION_ENV, ROTATION_SLICES = "BAI_LIB_RUN_CACHE_ROTATION", 50
RUN_CACHE_LOG_ENV = "BAI_LIB_RUN_CACHE_LOG"

#: Per notebook, the wall and CPU seconds of its latest execution that stored new outputs (or of
#: any execution with ``--refresh-timings``), shown in the book by ``book/_ext/execution_stats.py``.
TIMES_FILE = NB_DIR / "execution_times.json"

_CSV_LITERAL = re.compile(r"""["']([^"'{}\n]*\.csv)["']""")


def is_timing_cell(cell) -> bool:
    return cell.get("cell_type") == "code" and TIMING_TAG in cell.get("metadata", {}).get("tags", [])


def csv_names_in(source: str) -> list[str]:
    """File names of the ``.csv`` paths written as string literals in a cell's source."""
    return sorted({Path(m).name for m in _CSV_LITERAL.findall(source)})


def timing_csv_names(md_or_ipynb: Path) -> set[str]:
    """Names of the results CSVs written by the timing cells of one notebook (from its source)."""
    nb = jupytext.read(md_or_ipynb)
    return {name for c in nb.cells if is_timing_cell(c) for name in csv_names_in(c.source)}


@dataclass
class Execution:
    """What :func:`execute` did to one notebook."""

    seconds: float
    cpu_seconds: float = 0.0  # the kernel's user + system time
    kept: list[int] = field(default_factory=list)  # timing cells whose stored outputs were kept
    refreshed: list[int] = field(default_factory=list)  # timing cells with new outputs
    written: list[str] = field(default_factory=list)  # files whose content changed


def _notebook_text(nb, fmt: str) -> str:
    text = jupytext.writes(nb, fmt=fmt)
    return text if text.endswith("\n") else text + "\n"


def _write_if_changed(path: Path, data: str | bytes) -> bool:
    data_b = data.encode("utf-8") if isinstance(data, str) else data
    if path.exists() and path.read_bytes() == data_b:
        return False
    path.write_bytes(data_b)
    return True


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in directory.glob("*") if p.is_file()} if directory.is_dir() else {}


def _scrub(nb) -> None:
    """Make the stored notebook depend on the outputs only, not on how and when they arrived.

    Drops per-execution metadata, and joins consecutive stream outputs of the same name: the
    kernel flushes stdout every 0.2 s, so a slow cell's prints arrive split at places that vary
    between runs (nbval joins them before comparing too).
    """
    for key in ("papermill", "widgets"):
        nb.metadata.pop(key, None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        outputs = []
        for out in cell.outputs:
            out.get("metadata", {}).pop("execution", None)
            prev = outputs[-1] if outputs else None
            if (prev is not None and out.output_type == "stream" == prev.output_type
                    and out.name == prev.name):
                prev.text = "".join(prev.text) + "".join(out.text)
            else:
                outputs.append(out)
        cell.outputs = outputs


def _keep_timing_outputs(nb, previous, results_dir: Path, before: dict[str, bytes | None], result: Execution):
    """Give unchanged timing cells their previously stored outputs and CSV files back."""
    old = [c for c in (previous.cells if previous is not None else []) if is_timing_cell(c)]
    for i, cell in enumerate(nb.cells):
        if not is_timing_cell(cell):
            continue
        match = next((c for c in old if c.source == cell.source), None)
        names = csv_names_in(cell.source)
        if match is None or match.get("execution_count") is None:
            result.refreshed.append(i)
            continue
        old.remove(match)
        outputs = copy.deepcopy(match.outputs)
        for out in outputs:
            if out.get("output_type") == "execute_result":
                out["execution_count"] = cell.execution_count
        cell.outputs = outputs
        for n in names:
            if before.get(n) is not None:  # untracked: absent in a fresh clone
                _write_if_changed(results_dir / n, before[n])
        result.kept.append(i)


def execute(md_path: Path, timeout: int = 1800, *, refresh_timings: bool = False,
            results_dir: Path | None = None, kernel_name: str = "python3") -> Execution:
    """Execute one notebook from its ``.md``, write the paired ``.ipynb`` (and re-sync the ``.md``).

    ``results_dir`` is where the notebook's CSVs land: by default ``$BAI_LIB_RESULTS_DIR`` if set,
    else the ``results/`` directory next to the notebook's directory.
    """
    md_path = Path(md_path).resolve()
    ipynb_path = md_path.with_suffix(".ipynb")
    if results_dir is None:
        results_dir = Path(os.environ.get(RESULTS_ENV) or md_path.parent.parent / "results")
    nb = jupytext.read(md_path)
    # deterministic cell ids keep re-executions diff-free where nothing changed
    for i, cell in enumerate(nb.cells):
        cell.id = f"{md_path.stem[:2]}-{i:03d}"
    # in the key order of the stored .ipynb (sorted), so that the .md written here and the one
    # written by --text-only from the .ipynb agree
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    previous = nbformat.read(ipynb_path, as_version=4) if ipynb_path.exists() else None
    timing_names = {n for c in nb.cells if is_timing_cell(c) for n in csv_names_in(c.source)}
    before = {n: (results_dir / n).read_bytes() if (results_dir / n).exists() else None
              for n in timing_names}
    before_all = _snapshot(results_dir)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name=kernel_name,
        record_timing=False,
        resources={"metadata": {"path": str(md_path.parent)}},
    )
    log = Path(tempfile.mkstemp(prefix="bai_lib_runcache_", suffix=".jsonl")[1])
    previous_log = os.environ.get(RUN_CACHE_LOG_ENV)
    os.environ[RUN_CACHE_LOG_ENV] = str(log)  # the kernel inherits it
    try:
        start, cpu_start = time.perf_counter(), _children_cpu()
        client.execute()  # returns once the kernel process has exited and been waited for
        result = Execution(seconds=time.perf_counter() - start,
                           cpu_seconds=_children_cpu() - cpu_start)
        result.written += _prune_run_cache(md_path, log)
    finally:
        log.unlink(missing_ok=True)
        if previous_log is None:
            os.environ.pop(RUN_CACHE_LOG_ENV, None)
        else:
            os.environ[RUN_CACHE_LOG_ENV] = previous_log
    if refresh_timings:
        result.refreshed = [i for i, c in enumerate(nb.cells) if is_timing_cell(c)]
    else:
        _keep_timing_outputs(nb, previous, results_dir, before, result)
    _scrub(nb)
    after_all = _snapshot(results_dir)
    result.written += [f"{results_dir.name}/{n}" for n in sorted(after_all)
                       if after_all[n] != before_all.get(n)]
    if _write_if_changed(ipynb_path, _notebook_text(nb, "ipynb")):
        result.written.append(ipynb_path.name)
    # keep the text side in sync with the executed notebook (same cells, no outputs)
    if _write_if_changed(md_path, _notebook_text(nb, "md:myst")):
        result.written.append(md_path.name)
    nbformat.validate(nbformat.read(ipynb_path, as_version=4))
    return result


def _prune_run_cache(md_path: Path, log: Path) -> list[str]:
    """After a refresh of ``md_path``'s chapter: the files of ``results/runs/<chapter>/`` written
    (or kept) by this execution, from the run cache's log; delete the others (plans the chapter
    no longer asks for). Returns the names of the files rewritten or deleted."""
    entries = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    mine = [e for e in entries if e.get("cache") == md_path.stem and e.get("event") == "refresh"]
    folder = md_path.parent.parent / "results" / "runs" / md_path.stem
    if not mine or not folder.is_dir():
        return []
    keep = {e["file"] for e in mine}
    changed = sorted({f"runs/{md_path.stem}/{e['file']}" for e in mine if e.get("rewritten")})
    for path in sorted(folder.glob("*.parquet")):
        if path.name not in keep:
            path.unlink()
            changed.append(f"runs/{md_path.stem}/{path.name} (deleted)")
    return changed


def _children_cpu() -> float:
    """User + system seconds of the child processes that have ended (the notebook kernels)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def record_time(name: str, result: Execution, refresh: bool, path: Path = TIMES_FILE) -> bool:
    """Store ``result``'s times for notebook ``name`` in ``path`` when ``refresh`` is set, the
    notebook has no entry yet, or the execution changed a stored file (a new measurement then
    goes with new outputs); otherwise keep the stored entry, so that a re-execution without
    changes leaves every tracked file as it was. Returns whether the file changed."""
    times = json.loads(path.read_text()) if path.exists() else {}
    if not (refresh or name not in times or result.written):
        return False
    audit = {k: v for k, v in times.get(name, {}).items() if k.startswith("audit_")}
    times[name] = {"seconds": round(result.seconds, 1), "cpu_seconds": round(result.cpu_seconds, 1),
                   "cores": os.cpu_count(),
                   "measured": time.strftime("%Y-%m-%d", time.gmtime()), **audit}
    return _write_times(times, path)


def _write_times(times: dict, path: Path) -> bool:
    lines = [f"  {json.dumps(n)}: {json.dumps(times[n])}" for n in sorted(times)]
    return _write_if_changed(path, "{\n" + ",\n".join(lines) + "\n}\n")


def record_audit_time(name: str, result: Execution, path: Path = TIMES_FILE) -> bool:
    """Store the time of an audited execution of notebook ``name`` beside its full one."""
    times = json.loads(path.read_text()) if path.exists() else {}
    if name not in times:
        raise ValueError(f"{name}: no full execution recorded yet; run make reproduce first")
    times[name].update(audit_seconds=round(result.seconds, 1),
                       audit_cpu_seconds=round(result.cpu_seconds, 1),
                       audit_measured=time.strftime("%Y-%m-%d", time.gmtime()))
    return _write_times(times, path)


def time_audit(md_path: Path, timeout: int = 1800, kernel_name: str = "python3") -> Execution:
    """Execute one notebook as the test session checks it (run cache in mode ``audit`` with a
    rotation, slice 0 unless the environment chooses; results into a temporary directory),
    writing nothing; its wall and CPU time."""
    md_path = Path(md_path).resolve()
    nb = jupytext.read(md_path)
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    saved = {k: os.environ.get(k) for k in (RUN_CACHE_ENV, RESULTS_ENV, ROTATION_ENV)}
    with tempfile.TemporaryDirectory(prefix="bai_lib_audit_") as tmp:
        os.environ[RUN_CACHE_ENV], os.environ[RESULTS_ENV] = "audit", tmp
        os.environ.setdefault(ROTATION_ENV, f"0/{ROTATION_SLICES}")
        try:
            client = NotebookClient(nb, timeout=timeout, kernel_name=kernel_name,
                                    record_timing=False,
                                    resources={"metadata": {"path": str(md_path.parent)}})
            start, cpu_start = time.perf_counter(), _children_cpu()
            client.execute()
            return Execution(seconds=time.perf_counter() - start,
                             cpu_seconds=_children_cpu() - cpu_start)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v


class CodeChanged(ValueError):
    """The ``.md`` changes code, so its outputs need a real execution."""


def sync_text(md_path: Path) -> list[str]:
    """Copy the prose and the cell metadata of the ``.md`` into its ``.ipynb``, without executing.

    For edits that cannot change an output: markdown cells, captions and tags in the cells'
    metadata. Raises :class:`CodeChanged` (naming the cell) when the two files do not have the
    same code cells with the same sources, since then the stored outputs would be stale.
    Returns the names of the files written.
    """
    md_path = Path(md_path).resolve()
    ipynb_path = md_path.with_suffix(".ipynb")
    nb_md = jupytext.read(md_path)
    nb = nbformat.read(ipynb_path, as_version=4)
    code_md = [c for c in nb_md.cells if c.cell_type == "code"]
    code_nb = [c for c in nb.cells if c.cell_type == "code"]
    if len(code_md) != len(code_nb):
        raise CodeChanged(f"{md_path.name} has {len(code_md)} code cells, {ipynb_path.name} "
                          f"{len(code_nb)}: execute it")
    for n, (a, b) in enumerate(zip(code_md, code_nb)):
        if a.source != b.source:
            raise CodeChanged(f"code cell {n} of {md_path.name} differs from the stored one: "
                              "execute it")
    outputs = iter(code_nb)
    cells = []
    for i, cell in enumerate(nb_md.cells):
        if cell.cell_type == "code":
            stored = next(outputs)
            stored.metadata = cell.metadata
            cell = stored
        cell.id = f"{md_path.stem[:2]}-{i:03d}"
        cells.append(cell)
    nb.cells = cells
    written = []
    if _write_if_changed(ipynb_path, _notebook_text(nb, "ipynb")):
        written.append(ipynb_path.name)
    if _write_if_changed(md_path, _notebook_text(nb, "md:myst")):
        written.append(md_path.name)
    nbformat.validate(nbformat.read(ipynb_path, as_version=4))
    return written


# --------------------------------------------------------------------------------------------
# nbval writes the notebooks' CSVs into a temporary directory (tests/conftest.py, make nbval);
# this comparison is how a test run still catches results that no longer reproduce.


def _read_table(data: bytes) -> list[list[str]]:
    return list(csv.reader(io.StringIO(data.decode("utf-8"))))


def _first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.decode("utf-8").splitlines(), b.decode("utf-8").splitlines()
    for n, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return f"line {n}: tracked {x!r}, re-executed {y!r}"
    return f"{len(la)} lines tracked, {len(lb)} re-executed"


def compare_results(written_dir: Path, tracked_dir: Path = RESULTS_DIR,
                    notebooks_dir: Path = NB_DIR, prefix: str = "") -> list[str]:
    """Compare the CSVs a re-execution wrote into ``written_dir`` with the tracked ones (only
    those whose names start with ``prefix``: one notebook's, e.g. ``"05_"``).

    Returns one message per problem (empty: everything reproduces). A file must have the same
    bytes as its tracked counterpart, except the CSVs of wall-clock cells (see the module
    docstring), which must only keep the same header, number of rows and first column, and
    need not be tracked at all (``results/*_comp.csv`` is ignored by git).
    """
    written_dir, tracked_dir = Path(written_dir), Path(tracked_dir)
    timing = set()
    for md in sorted(Path(notebooks_dir).glob("*.md")):
        timing |= timing_csv_names(md)
    problems = []
    for new in sorted(p for p in written_dir.iterdir()
                      if p.is_file() and p.name.startswith(prefix)):
        old = tracked_dir / new.name
        rel = f"{tracked_dir.name}/{new.name}"
        if not old.exists():
            if new.name in timing:
                continue  # wall-clock tables are machine-specific and not tracked (.gitignore)
            problems.append(f"{rel}: written by the notebooks but not in {tracked_dir}; "
                            "run `make reproduce` and commit it")
            continue
        a, b = old.read_bytes(), new.read_bytes()
        if a == b:
            continue
        if new.name in timing:
            ta, tb = _read_table(a), _read_table(b)
            if (len(ta) == len(tb) and ta[:1] == tb[:1]
                    and [r[:1] for r in ta] == [r[:1] for r in tb]):
                continue
            problems.append(f"{rel} (timing table): header, row count or first column changed")
            continue
        problems.append(f"{rel} no longer reproduces: {_first_difference(a, b)}")
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks to execute (NN_name; default: all)")
    parser.add_argument("--refresh-timings", action="store_true",
                        help="store new outputs for the wall-clock cells (default: keep them)")
    parser.add_argument("--check-results", metavar="DIR", type=Path,
                        help="only compare the CSVs in DIR with results/ and exit")
    parser.add_argument("--text-only", action="store_true",
                        help="copy prose and cell metadata into the stored notebooks without "
                             "executing (refused when a code cell changed)")
    parser.add_argument("--audit", action="store_true",
                        help="time the chapters as `make test` checks them (cached runs audited) "
                             "and record it in execution_times.json; writes nothing else")
    args = parser.parse_args(argv)
    if args.audit:
        os.environ["BAI_LIB_PROGRESS"] = "0"
        names = args.names or sorted(p.stem for p in NB_DIR.glob("[0-9][0-9]_*.md"))
        for name in names:
            res = time_audit(NB_DIR / f"{Path(name).stem}.md")
            record_audit_time(Path(name).stem, res)
            print(f"{name}: audited {res.seconds:6.1f} s ({res.cpu_seconds:.0f} s CPU)", flush=True)
        return 0
    if args.check_results:
        problems = compare_results(args.check_results, RESULTS_DIR, NB_DIR)
        for p in problems:
            print(p, file=sys.stderr)
        print(f"results check: {len(problems)} problem(s)" if problems
              else "results check: every CSV written by the notebooks matches results/")
        return 1 if problems else 0

    os.environ["BAI_LIB_PROGRESS"] = "0"
    os.environ[RUN_CACHE_ENV] = "refresh"  # every run computed; the cache rewritten where it changed
    if os.environ.pop(RESULTS_ENV, None):
        print(f"note: {RESULTS_ENV} ignored; re-execution writes results/", file=sys.stderr)
    refresh = args.refresh_timings or os.environ.get(REFRESH_ENV, "") not in ("", "0")
    if refresh:
        os.environ[REFRESH_ENV] = "1"  # the run cache stores new wall-clock times too
    names = args.names or sorted(p.stem for p in NB_DIR.glob("[0-9][0-9]_*.md"))
    if not names:
        print("no notebooks found", file=sys.stderr)
        return 1
    total = 0.0
    for name in names:
        md = NB_DIR / f"{Path(name).stem}.md"
        if not md.exists():
            print(f"missing {md}", file=sys.stderr)
            return 1
        if args.text_only:
            try:
                written = sync_text(md)
            except CodeChanged as exc:
                print(exc, file=sys.stderr)
                return 1
            print(f"{name}: " + ("changed: " + ", ".join(written) if written else "unchanged"))
            continue
        res = execute(md, refresh_timings=refresh, results_dir=RESULTS_DIR)
        total += res.seconds
        if record_time(md.stem, res, refresh):
            res.written.append(TIMES_FILE.name)
        notes = []
        if res.kept:
            notes.append(f"kept stored timing outputs of cells {res.kept} (--refresh-timings to renew)")
        if res.refreshed:
            notes.append(f"new timing outputs in cells {res.refreshed}")
        notes.append("changed: " + ", ".join(res.written) if res.written else "notebook unchanged")
        print(f"{name}: {res.seconds:6.1f} s ({res.cpu_seconds:.0f} s CPU); " + "; ".join(notes),
              flush=True)
    print(f"total: {total:6.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
