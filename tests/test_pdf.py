"""``make pdf``: the whole book printed to one PDF by headless Chromium (scripts/make_pdf.py).

Builds the single-page version of the book into a temporary directory, prints it and checks the
file: a PDF of A4 pages, one page per about a screen of the book (the twelve chapters, the
reference and the front matter come to well over a hundred), with the book's title. The script
itself fails when MathJax reports an error or does not finish. Needs ``chromium`` and
``chromium-driver`` like the browser test (skipped without them unless
``BAI_LIB_REQUIRE_BROWSER=1``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from test_browser import _browser_or_skip

ROOT = Path(__file__).resolve().parents[1]


def test_make_pdf_prints_the_whole_book(tmp_path):
    _browser_or_skip()
    jb = Path(sys.executable).with_name("jupyter-book")
    build = subprocess.run([str(jb), "build", str(ROOT), "--builder", "singlehtml",
                            "--path-output", str(tmp_path)],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    html = tmp_path / "_build" / "singlehtml"
    out = tmp_path / "book.pdf"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_pdf.py"),
                          "--html", str(html), "--out", str(out)],
                         capture_output=True, text=True, timeout=1200)
    assert run.returncode == 0, run.stdout + run.stderr
    assert not (html / "_print.html").exists(), "the script leaves its copy of the page behind"
    data = out.read_bytes()
    assert data.startswith(b"%PDF-")
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", data))
    sizes = set(re.findall(rb"/MediaBox\s*\[0 0 ([\d.]+) ([\d.]+)\]", data))
    print(f"book.pdf: {pages} pages, {len(data) / 1e6:.1f} MB; {run.stdout.strip()}")
    assert pages >= 150, pages
    assert sizes and all(abs(float(w) - 595.9) < 1 and abs(float(h) - 841.9) < 1
                         for w, h in sizes), f"not A4: {sizes}"
    assert b"Bayesian fixed-confidence best-arm identification" in data
