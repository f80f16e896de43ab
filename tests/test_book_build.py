"""The book builds from the stored outputs with warnings as errors (`-W -n --keep-going`)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_book_builds_without_warnings(tmp_path):
    jb = Path(sys.executable).with_name("jupyter-book")
    assert jb.exists(), "jupyter-book is not installed in this environment"
    out = tmp_path / "book"
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going",
         "--path-output", str(out)],
        capture_output=True, text=True, timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"book build failed:\n{log[-6000:]}"
    assert "WARNING" not in log, f"book build warned:\n{log[-6000:]}"
    index = out / "_build" / "html" / "index.html"
    assert index.exists(), f"no {index}"
    html = (out / "_build" / "html" / "notebooks")
    pages = sorted(p.name for p in html.glob("*.html"))
    assert pages, "no notebook pages were rendered"
    # citations resolved and proof boxes rendered on the first chapter
    first = (html / pages[0]).read_text()
    assert "proof" in first and "definition" in first.lower()
    shutil.rmtree(out, ignore_errors=True)
