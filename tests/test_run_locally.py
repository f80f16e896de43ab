"""Every chapter page of the built book says how to run it, with files the build ships."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import bai_lib

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("*.ipynb"))


def test_every_chapter_page_links_its_notebook_source_wheel_and_lock(built_book):
    html, _ = built_book
    wheel = f"bai_lib-{bai_lib.__version__}-py3-none-any.whl"
    for stem in CHAPTERS:
        page = (html / "notebooks" / f"{stem}.html").read_text(encoding="utf-8")
        box = re.search(r'<div class="[^"]*run-locally[^"]*">(.*?)</div>\s*</section>', page, re.S)
        assert box, f"{stem}.html has no 'Run this chapter yourself' box"
        links = re.findall(r'href="([^"]+)"', box.group(1))
        expected = {f"../_downloads/run/{name}" for name in
                    (f"{stem}.ipynb", f"{stem}.md", wheel, "requirements.lock")}
        assert expected <= set(links), f"{stem}.html: missing {sorted(expected - set(links))}"
        text = re.sub(r"<[^>]+>", "", box.group(1))
        assert f"jupyter lab {stem}.ipynb" in text and "pip install -c requirements.lock" in text, text
        for name in (f"{stem}.ipynb", f"{stem}.md"):
            shipped = html / "_downloads" / "run" / name
            assert shipped.read_bytes() == (ROOT / "notebooks" / name).read_bytes(), f"{name} differs"


def test_the_shipped_wheel_holds_the_whole_package(built_book):
    html, _ = built_book
    wheel = html / "_downloads" / "run" / f"bai_lib-{bai_lib.__version__}-py3-none-any.whl"
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bai_lib").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert sources <= names, f"the book's wheel leaves out {sorted(sources - names)}"
    assert (html / "_downloads" / "run" / "requirements.lock").read_text() == \
        (ROOT / "requirements.lock").read_text()
