"""Test-session settings shared by unit tests and nbval, for every way pytest is started here.

``make test``, ``make nbval`` and the plain ``pytest --nbval notebooks`` (run from the project
root, no other flag) behave the same:

- notebook kernels started by nbval inherit this environment: progress bars stay off, so that
  nothing variable reaches the compared outputs;
- nbval runs the notebooks in the current environment and masks memory addresses with
  ``nbval_sanitize.cfg`` unless the command line chose otherwise;
- the notebooks' results CSVs are redirected into a temporary directory (``BAI_LIB_RESULTS_DIR``,
  inherited by the kernels), so a test run never rewrites the tracked ``results/``; after the
  last cell of each notebook a test item, ``results-reproduce``, compares what that notebook
  wrote with ``results/`` and names every file that no longer reproduces;
- the chapters that keep their runs in ``results/runs/`` (``bai_lib.runcache``) read them in mode
  ``audit``: each cached plan is read and a sample of its runs recomputed and compared bit for
  bit. The audit seed is new at every session and printed in the header (replay:
  ``BAI_LIB_AUDIT_SEED=...``). On top of that sample, a rotation recomputes slice ``r`` of 50
  of every cached plan (``bai_lib.runcache.rotation_runs``), ``r`` the commit hash modulo 50
  (``BAI_LIB_RUN_CACHE_ROTATION=r/50`` chooses), so that the 50 values recompute every run of
  the book; ``BAI_LIB_RUN_CACHE_FULL=NN_name`` recomputes whole chapters with their
  cache off. The ``results-reproduce`` item of a chapter also fails when the chapter asked for a
  plan its cache does not hold. ``BAI_LIB_RUN_CACHE=off`` recomputes everything;
  ``refresh`` is refused here (a test run never writes tracked files; ``make reproduce`` does).
- under pytest-xdist (``make test`` runs two workers, ``--dist loadfile``) every notebook stays
  on one worker, its cells in order, and these settings reach every worker.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest

os.environ["BAI_LIB_PROGRESS"] = "0"

ROOT = Path(__file__).resolve().parent
RESULTS_ENV = "BAI_LIB_RESULTS_DIR"  # = bai_lib.experiments.RESULTS_DIR_ENV (tested)
SANITIZE = ROOT / "nbval_sanitize.cfg"
RUNS_DIR = ROOT / "results" / "runs"
# = bai_lib.runcache.MODE_ENV, SEED_ENV, LOG_ENV, FULL_ENV, ROTATION_ENV, ROTATION_SLICES (tested)
CACHE_MODE_ENV, AUDIT_SEED_ENV = "BAI_LIB_RUN_CACHE", "BAI_LIB_AUDIT_SEED"
CACHE_LOG_ENV, CACHE_FULL_ENV = "BAI_LIB_RUN_CACHE_LOG", "BAI_LIB_RUN_CACHE_FULL"
CACHE_ROTATION_ENV, ROTATION_SLICES = "BAI_LIB_RUN_CACHE_ROTATION", 50
_RESULTS_TMP = pytest.StashKey[tuple]()  # (directory, created here, previous env value)
_CACHE_LOG = pytest.StashKey[tuple]()  # (log file, created here)


def load_execute_script():
    """``scripts/execute_notebooks.py`` as a module."""
    name = "bai_lib_execute_notebooks"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "execute_notebooks.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def execute_script():
    return load_execute_script()


def _nbval_on(config) -> bool:
    return bool(getattr(config.option, "nbval", False) or getattr(config.option, "nbval_lax", False))


def pytest_configure(config):
    if not _nbval_on(config):
        return
    # The project's nbval settings, unless given on the command line.
    if not config.option.nbval_kernel_name:
        config.option.nbval_current_env = True
    if config.option.nbval_sanitize_with is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
    _configure_run_cache(config)
    previous = os.environ.get(RESULTS_ENV)
    if previous:
        config.stash[_RESULTS_TMP] = (Path(previous), False, previous)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bai_lib_results_"))
    os.environ[RESULTS_ENV] = str(tmp)  # nbval kernels (and xdist workers) start later, inherit it
    config.stash[_RESULTS_TMP] = (tmp, True, previous)


def rotation(commit: str | None, slices: int = ROTATION_SLICES) -> str:
    """This session's rotation ``"r/S"``: ``r`` is the commit hash (hex) modulo ``S``."""
    return f"{int(commit, 16) % slices if commit else 0}/{slices}"


def _head_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    text = out.stdout.strip()
    return text if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", text) else None


def _configure_run_cache(config) -> None:
    """Audit mode, a fresh audit seed, the rotation and the cache log, set in the
    environment (which nbval's kernels and xdist's workers inherit) unless already set."""
    mode = os.environ.get(CACHE_MODE_ENV, "").strip() or "audit"
    if mode == "refresh":
        raise pytest.UsageError(f"{CACHE_MODE_ENV}=refresh: a test run never writes the tracked "
                                "run cache; refresh it with `make reproduce`")
    os.environ.setdefault(AUDIT_SEED_ENV, str(secrets.randbits(32)))
    if CACHE_ROTATION_ENV not in os.environ:
        os.environ[CACHE_ROTATION_ENV] = rotation(_head_commit())
    if CACHE_LOG_ENV in os.environ:
        config.stash[_CACHE_LOG] = (Path(os.environ[CACHE_LOG_ENV]), False)
    else:
        fd, log = tempfile.mkstemp(prefix="bai_lib_runcache_", suffix=".jsonl")
        os.close(fd)
        os.environ[CACHE_LOG_ENV] = log
        config.stash[_CACHE_LOG] = (Path(log), True)


def pytest_report_header(config):
    if _CACHE_LOG not in config.stash:
        return None
    mode = os.environ.get(CACHE_MODE_ENV, "").strip() or "audit"
    seed = os.environ.get(AUDIT_SEED_ENV)
    turn = os.environ.get(CACHE_ROTATION_ENV)
    full = os.environ.get(CACHE_FULL_ENV) or "none"
    return [f"run cache: {mode}; audit seed {seed} (replay: {AUDIT_SEED_ENV}={seed}); "
            f"rotation {turn} ({CACHE_ROTATION_ENV}); chapters recomputed in full: {full} "
            f"({CACHE_FULL_ENV})"]


def read_cache_log(path: Path) -> list[dict]:
    """The entries the run caches of the notebook kernels appended to ``path``."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def audit_summary(entries: list[dict]) -> list[str]:
    """One line per chapter: plans audited, runs recomputed and their share of the samples."""
    by = defaultdict(lambda: [0, 0, 0, 0, 0.0, 0.0, 0])
    for e in entries:
        if e.get("event") != "audit":
            continue
        row = by[e["cache"]]
        row[0] += 1
        row[1] += e["audited"]
        row[2] += e["samples_audited"]
        row[3] += e["samples"]
        row[4] += e["seconds_audited"]
        row[5] += e["seconds"]
        row[6] += e.get("rotated", 0)
    memo = defaultdict(lambda: [0, 0, 0.0])  # cached computations (bai_lib.memo)
    for e in entries:
        if e.get("event") == "memo-audit":
            row = memo[e["cache"]]
            row[0] += 1
            row[1] += bool(e["verified"])
            row[2] += e["cpu_seconds"]
    lines = []
    for name in sorted(memo):
        n, verified, cpu = memo[name]
        lines.append(f"{name}: {n} cached computations read, {verified} recomputed "
                     f"({cpu:.1f} CPU-s)")
    for name in sorted(by):
        plans, runs, s_a, s, t_a, t, rot = by[name]
        lines.append(f"{name}: {plans} plans audited, {runs:,} runs recomputed ({rot:,} by the "
                     f"rotation), "
                     f"{s_a / max(s, 1):.1%} of the samples ({t_a:.1f} of {t:.1f} stored "
                     f"kernel-seconds)")
    return lines


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    entry = config.stash.get(_CACHE_LOG, None)
    if entry is None or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    lines = audit_summary(read_cache_log(entry[0]))
    if lines:
        terminalreporter.section("run cache audit")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_unconfigure(config):
    entry = config.stash.get(_RESULTS_TMP, None)
    if entry and entry[1]:
        shutil.rmtree(entry[0], ignore_errors=True)
        os.environ.pop(RESULTS_ENV, None)
    log = config.stash.get(_CACHE_LOG, None)
    if log and log[1]:
        log[0].unlink(missing_ok=True)
        for name in (CACHE_LOG_ENV, AUDIT_SEED_ENV, CACHE_ROTATION_ENV):
            os.environ.pop(name, None)


class ResultsDiffer(Exception):
    pass


def notebook_prefix(stem: str) -> str:
    """The file-name prefix of a notebook's results: ``NN_`` for chapter ``NN_name``, else its
    name."""
    return stem[:3] if re.match(r"\d\d_", stem) else stem


class ResultsReproduceCheck(pytest.Item):
    """Runs after a notebook's last cell: the CSVs it wrote must match the tracked ``results/``,
    and every plan it simulated with a run cache in audit mode must have been in the cache."""

    def __init__(self, *, notebook: Path, **kwargs):
        super().__init__(**kwargs)
        self.notebook = Path(notebook)

    def runtest(self):
        directory = self.config.stash[_RESULTS_TMP][0]
        problems = load_execute_script().compare_results(
            directory, ROOT / "results", ROOT / "notebooks",
            prefix=notebook_prefix(self.notebook.stem))
        log = self.config.stash.get(_CACHE_LOG, None)
        if log is not None:
            for e in read_cache_log(log[0]):
                if e.get("cache") == self.notebook.stem and e.get("event") == "miss":
                    problems.append(f"results/runs/{e['cache']}: plan not in the run cache, "
                                    f"computed in full: {e['plan']}; refresh the cache with "
                                    f"`make reproduce NB={e['cache']}`")
        if problems:
            raise ResultsDiffer("\n".join(problems))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ResultsDiffer):
            return ("The notebook re-executed by nbval wrote results that differ from the tracked "
                    "results/, or asked for runs its cache does not hold (the working tree was "
                    "not modified):\n" + str(excinfo.value)
                    + "\nIf the change is intended, regenerate with `make reproduce` and commit "
                    "results/ together with the notebooks.")
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return self.notebook, None, f"{self.notebook.name}: results/ reproduce check"


def pytest_collection_modifyitems(session, config, items):
    if _RESULTS_TMP not in config.stash:
        return
    out, last = [], None
    for item in items + [None]:
        parent = getattr(item, "parent", None)
        is_cell = item is not None and type(item).__module__.startswith("nbval")
        if last is not None and (not is_cell or parent is not last):
            out.append(ResultsReproduceCheck.from_parent(
                last, name="results-reproduce", notebook=Path(str(last.path))))
            last = None
        if item is not None:
            out.append(item)
            if is_cell:
                last = parent
    items[:] = out
