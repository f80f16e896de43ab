"""Fixtures of the test suite: the book, built once per session for the build and browser tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
