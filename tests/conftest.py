"""Fixtures of the unit tests: the book, built once per session for the build and browser tests.

The nbval settings, the redirect of the notebooks' CSVs and the ``results-reproduce`` check
live in the project root's ``conftest.py``, so that ``pytest --nbval notebooks`` gets them too.
"""

from __future__ import annotations

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


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """``(html_dir, build_log)`` of a ``-W -n --keep-going`` build of the book into a temporary dir.

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
    out = tmp_path_factory.mktemp("book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going",
         "--path-output", str(out)],
        capture_output=True, text=True, timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"book build failed:\n{log[-6000:]}"
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
