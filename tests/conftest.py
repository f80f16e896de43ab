"""Fixtures of the unit tests: the book, built once per session for the build and browser tests
(once for all pytest-xdist workers).

The nbval settings, the redirect of the notebooks' CSVs, the run cache's audit and the
``results-reproduce`` checks live in the project root's ``conftest.py``, so that ``pytest --nbval notebooks`` gets them too.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS_ENV = "BAI_LIB_RESULTS_DIR"  # = bai_lib.experiments.RESULTS_DIR_ENV (tested)


@pytest.fixture(autouse=True)
def _no_results_redirect_in_unit_tests(monkeypatch):
    """The redirect is for the notebook kernels; unit tests write where they say (or set it)."""
    monkeypatch.delenv(RESULTS_ENV, raising=False)


@pytest.fixture
def cache_log(monkeypatch, tmp_path):
    """A run-cache environment of its own (no mode, seed, rotation or full chapters from the
    session) logging to a file of ``tmp_path``; returns the function reading that log. No cache
    is in use afterwards."""
    from bai_lib import runcache

    for name in (runcache.MODE_ENV, runcache.SEED_ENV, runcache.FULL_ENV, runcache.TIMINGS_ENV,
                 runcache.ROTATION_ENV):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "log.jsonl"
    monkeypatch.setenv(runcache.LOG_ENV, str(path))

    def read() -> list[dict]:
        return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []

    yield read
    runcache.stop_using_run_cache()


def _session_dir(tmp_path_factory) -> Path:
    """A directory of this test session shared by its pytest-xdist workers (each worker's own
    temporary root is a subdirectory of the session's)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """``(html_dir, build_log)`` of a ``-W -n --keep-going`` build of the book into a temporary dir,
    built once per test session: the first xdist worker that needs it builds it under a file lock,
    the others wait and reuse it (a failed build fails every test that needs it, with its log).

    With ``BAI_LIB_BOOK_HTML=DIR`` the browser test checks an existing build in ``DIR`` instead
    (e.g. an older version of the book); the build-log tests then skip.
    """
    given = os.environ.get("BAI_LIB_BOOK_HTML")
    if given:
        html = Path(given)
        assert (html / "book" / "intro.html").exists(), f"BAI_LIB_BOOK_HTML={given}: no built book there"
        return html, None
    jb = Path(sys.executable).with_name("jupyter-book")
    assert jb.exists(), "jupyter-book is not installed in this environment"
    out = _session_dir(tmp_path_factory) / "book"
    status, log_file = out / "returncode", out / "build.log"
    out.mkdir(exist_ok=True)
    with open(out / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not status.exists():
            proc = subprocess.run(
                [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going",
                 "--path-output", str(out)],
                capture_output=True, text=True, timeout=1200,
            )
            log_file.write_text(proc.stdout + proc.stderr)
            status.write_text(str(proc.returncode))
    log = log_file.read_text()
    assert status.read_text() == "0", f"book build failed:\n{log[-6000:]}"
    return out / "_build" / "html", log


@pytest.fixture(autouse=True)
def _keep_working_directory():
    """A test that changes the working directory must restore it (nbval and the results check
    open files relative to it): fail the test that does not."""
    before = os.getcwd()
    yield
    after = os.getcwd()
    if after != before:
        os.chdir(before)
        pytest.fail(f"the test changed the working directory to {after} and did not restore it")
