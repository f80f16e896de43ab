"""``make pdf``: the whole book printed to one PDF by headless Chromium (scripts/make_pdf.py).

Builds the single-page version of the book into a temporary directory, prints it once for the
module and checks the file: a PDF of A4 pages, one page per about a screen of the book (the
chapters, the reference and the front matter come to well over a hundred), with the book's
title; every chapter starts at the top of a new page; no page ends with an empty code box (the
top of a code cell's box left behind when its code moved to the next page); the bookmarks
(outline) have one top-level entry per chapter after the book's title; and the contents give
each chapter's page, checked against the text of that page. The script itself fails when
MathJax reports an error or does not finish. Needs ``chromium`` and ``chromium-driver`` like
the browser test (skipped without them unless ``BAI_LIB_REQUIRE_BROWSER=1``).

The PDF is read with pypdf: each page's text runs with their positions and font sizes (its text
visitor) and its filled areas with their colour (its operator visitor, in the same pass), the
pages' size, the document's title and the outline's top level.
"""

from __future__ import annotations

import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from pypdf import PdfReader

from test_browser import _browser_or_skip

ROOT = Path(__file__).resolve().parents[1]

# `make test` leaves this module out (-m "not pdf"); `make test-pdf` and `.ci/run` run it.
pytestmark = pytest.mark.pdf

# page geometry of scripts/make_pdf.py, in points: A4, bottom margin 0.6 in (the footer's band)
PAGE_HEIGHT = 841.92
BOTTOM = 0.6 * 72
# background of a code cell's input box (div.cell_input, #f7f7f7)
CODE_BOX = (247 / 255, 247 / 255, 247 / 255)


# --- the PDF read with pypdf ------------------------------------------------------------------

IDENTITY = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
_FILLS = {b"f", b"F", b"f*", b"B", b"B*", b"b", b"b*"}


def _mul(m, n):
    """The product m x n of two PDF matrices (a, b, c, d, e, f)."""
    a, b, c, d, e, f = m
    A, B, C, D, E, F = n
    return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D,
            e * A + f * C + E, e * B + f * D + F)


def _apply(m, x, y):
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


@dataclass
class Page:
    number: int
    texts: list = field(default_factory=list)   # (x, y, text, size): baseline, y upwards
    fills: list = field(default_factory=list)   # (x0, y0, x1, y1, (r, g, b)): filled areas

    def lines(self) -> list[str]:
        """The text lines above the footer, from the top down (the runs on one baseline, left
        to right)."""
        return [text for text, _ in self.sized_lines()]

    def sized_lines(self) -> list[tuple[str, float]]:
        """(text, largest font size in points) of each line, from the top down."""
        rows: list[list] = []
        for x, y, text, size in sorted(self.texts, key=lambda t: -t[1]):
            if y < BOTTOM:
                continue
            if rows and abs(rows[-1][0] - y) < 2.5:
                rows[-1][1].append((x, text, size))
            else:
                rows.append([y, [(x, text, size)]])
        return [("".join(t for _, t, _ in sorted(runs, key=lambda r: r[0])),
                 max(size for _, _, size in runs)) for _, runs in rows]


class _PageReader:
    """Page ``number`` (from 1) with its text runs and filled areas, in one pass of pypdf's
    ``extract_text``: its text visitor gives each run with the text and transformation matrices
    and the font size; its operator visitor gives each operator with the current
    transformation matrix, to which this adds the fill colour and the path being built.
    pypdf reads a form XObject's content from the identity matrix: the matrix from the form's
    space to the page's (its /Matrix times the matrix at its ``Do``) is kept here."""

    def __init__(self, pdf_page, number: int):
        self.page = Page(number)
        # per content being read (the page's, a form's inside it): (matrix to the page's
        # space, resources)
        self.levels = [(IDENTITY, pdf_page["/Resources"].get_object())]
        self.entering = None        # the form of the ``Do`` being run, until its first operator
        self.forms: list[bool] = []  # per ``Do`` being run: whether it runs a form
        self.fill, self.saved, self.path = (0.0, 0.0, 0.0), [], []
        pdf_page.extract_text(visitor_operand_before=self.operator,
                              visitor_operand_after=self.after, visitor_text=self.text)

    def operator(self, op: bytes, operands: list, cm, tm) -> None:
        if self.entering is not None:      # the first operator of a form's content
            self.levels.append(self.entering)
            self.entering = None
        ctm = _mul(tuple(cm), self.levels[-1][0])
        numbers = [float(v) for v in operands if isinstance(v, (int, float))]
        if op == b"q":
            self.saved.append(self.fill)
        elif op == b"Q" and self.saved:
            self.fill = self.saved.pop()
        elif op in (b"rg", b"sc", b"scn") and len(numbers) == 3:
            self.fill = tuple(numbers)
        elif op in (b"g", b"sc", b"scn") and len(numbers) == 1:
            self.fill = (numbers[0],) * 3
        elif op == b"re" and len(numbers) == 4:
            x, y, w, h = numbers
            self.path += [_apply(ctm, x, y), _apply(ctm, x + w, y + h)]
        elif op in (b"m", b"l", b"c", b"v", b"y"):
            self.path += [_apply(ctm, *numbers[i:i + 2]) for i in range(0, len(numbers) - 1, 2)]
        elif op in _FILLS or op in (b"n", b"S", b"s"):
            if op in _FILLS and self.path:
                xs, ys = [p[0] for p in self.path], [p[1] for p in self.path]
                self.page.fills.append((min(xs), min(ys), max(xs), max(ys), self.fill))
            self.path = []
        elif op == b"Do" and operands:
            resources = self.levels[-1][1]
            xobject = resources["/XObject"][operands[0]].get_object()
            self.forms.append(xobject.get("/Subtype") == "/Form")
            if self.forms[-1]:
                inner = tuple(float(v) for v in xobject.get("/Matrix", IDENTITY))
                own = xobject.get("/Resources")
                self.entering = (_mul(inner, ctm),
                                 own.get_object() if own is not None else resources)
                self.saved.append(self.fill)

    def after(self, op: bytes, operands: list, cm, tm) -> None:
        if op == b"Do" and operands and self.forms.pop():
            if self.entering is None:
                self.levels.pop()
            self.entering = None
            self.fill = self.saved.pop()

    def text(self, text: str, cm, tm, font, size: float) -> None:
        text = text.rstrip("\n")
        if text.strip():
            matrix = _mul(_mul(tuple(tm), tuple(cm)), self.levels[-1][0])
            height = size * (matrix[2] ** 2 + matrix[3] ** 2) ** 0.5
            self.page.texts.append((*_apply(matrix, 0, 0), text, height))


def read_pages(reader: PdfReader) -> list[Page]:
    return [_PageReader(page, number).page for number, page in enumerate(reader.pages, 1)]


def _outline(reader: PdfReader) -> list[tuple[str, int]]:
    """(title, page from 1) of the outline's (bookmarks') top-level entries (pypdf gives an
    entry's children as the list after it)."""
    return [(entry.title or "", reader.get_destination_page_number(entry) + 1)
            for entry in reader.outline if not isinstance(entry, list)]


# --- the printed book -------------------------------------------------------------------------

def _plain(text: str) -> str:
    """A title compared without spacing, ligatures or a leading section number ("3.", "3.1")."""
    text = unicodedata.normalize("NFKC", text)
    return re.sub(r"^(\d+\.)+\d*", "", "".join(text.split()))


@dataclass
class Printed:
    html: Path
    pdf: Path
    log: str
    chapters: list[str]          # the chapters' titles, from the contents of the HTML page
    reader: PdfReader
    pages: list[Page]


@pytest.fixture(scope="module")
def printed(tmp_path_factory) -> Printed:
    _browser_or_skip()
    tmp_path = tmp_path_factory.mktemp("pdf")
    jb = Path(sys.executable).with_name("jupyter-book")
    build = subprocess.run([str(jb), "build", str(ROOT), "--builder", "singlehtml",
                            "--path-output", str(tmp_path)],
                           capture_output=True, text=True, timeout=900)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    html = tmp_path / "_build" / "singlehtml"
    out = tmp_path / "book.pdf"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "make_pdf.py"),
                          "--html", str(html), "--out", str(out)],
                         capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stdout + run.stderr
    soup = BeautifulSoup((html / "book" / "intro.html").read_text(encoding="utf-8"),
                         "html.parser")
    chapters = [" ".join(a.get_text(" ").split())
                for a in soup.select("#jb-print-toc li.toctree-l1 > a")]
    reader = PdfReader(out)
    pages = read_pages(reader)
    return Printed(html, out, run.stdout + run.stderr, chapters, reader, pages)


def test_make_pdf_prints_the_whole_book(printed):
    assert not (printed.html / "_print.html").exists(), \
        "the script leaves its copy of the page behind"
    reader = printed.reader
    assert reader.pdf_header.startswith("%PDF-"), reader.pdf_header
    pages = len(reader.pages)
    sizes = {tuple(float(v) for v in page.mediabox) for page in reader.pages}
    print(f"book.pdf: {pages} pages, {printed.pdf.stat().st_size / 1e6:.1f} MB; "
          f"{printed.log.strip()}")
    assert pages >= 150, pages
    assert sizes and all(x0 == y0 == 0 and abs(w - 595.9) < 1 and abs(h - 841.9) < 1
                         for x0, y0, w, h in sizes), f"not A4: {sizes}"
    title = reader.metadata.title if reader.metadata else None
    assert "Bayesian fixed-confidence best-arm identification" in (title or ""), title
    assert len(printed.chapters) >= 20, f"the contents list {len(printed.chapters)} chapters"


def _chapter_headings(printed) -> dict[str, tuple[int, int]]:
    """``{title: (page, line on the page from 0)}`` of each chapter's heading: the title in
    large type (half as large again as the body text) on a line of its own, or two or three
    when it wraps, found in reading order after the contents (whose last entry is the last
    chapter's title, followed by its page number or not)."""
    lines = [(page.number, i, _plain(text), size)
             for page in printed.pages for i, (text, size) in enumerate(page.sized_lines())]
    body = sorted(size for *_, size in lines)[len(lines) // 2]
    last = _plain(printed.chapters[-1])
    cursor = next(k for k, (_, _, line, _) in enumerate(lines)
                  if line.startswith(last) and line[len(last):].isdigit() or line == last) + 1
    found = {}
    for title in printed.chapters:
        want = _plain(title)
        for k in range(cursor, len(lines)):
            page, i, _, _ = lines[k]
            run = []
            for number, _, line, size in lines[k:k + 3]:
                if number != page or size < 1.5 * body:
                    break
                run.append(line)
                if "".join(run) == want:
                    break
            if run and "".join(run) == want:
                found[title] = (page, i)
                cursor = k + 1
                break
        else:
            raise AssertionError(f"chapter {title!r} has no heading in the PDF after "
                                 f"page {lines[cursor - 1][0]}")
    return found


def test_every_chapter_starts_on_a_new_page(printed):
    """Each chapter's heading is the first text of its page."""
    headings = _chapter_headings(printed)
    mid_page = [f"{title!r} on page {page} below {printed.pages[page - 1].lines()[0][:50]!r}"
                for title, (page, line) in headings.items() if line != 0]
    assert not mid_page, (f"{len(mid_page)} of {len(headings)} chapters start mid-page: "
                          f"{mid_page[:4]}")


def test_no_page_ends_with_an_empty_code_box(printed):
    """No page's content ends with a code cell's box that holds no text: the box of a cell
    split at the page break (its code moved on) or the box of a cell without code."""
    empty = []
    for page in printed.pages:
        for x0, y0, x1, y1, colour in page.fills:
            if (all(abs(a - b) < 0.006 for a, b in zip(colour, CODE_BOX))
                    and x1 - x0 > 100 and y1 - y0 > 10 and y0 < BOTTOM + 3
                    and not any(x0 <= x <= x1 and y0 <= y <= y1 for x, y, _, _ in page.texts)):
                empty.append(f"page {page.number}: {y1 - y0:.0f} pt")
    assert not empty, f"{len(empty)} pages end with an empty code box: {empty[:12]}"


def test_the_outline_has_one_entry_per_chapter(printed):
    """The bookmarks: the book's title, then one top-level entry per chapter, in order, each
    leading to the page of its chapter's heading."""
    outline = _outline(printed.reader)
    assert outline, "the PDF has no outline (bookmarks)"
    titles = [_plain(t) for t, _ in outline]
    assert titles[0].startswith(_plain("Bayesian fixed-confidence")), outline[0]
    assert titles[1:] == [_plain(t) for t in printed.chapters], \
        f"top-level bookmarks {[t for t, _ in outline]} are not the chapters {printed.chapters}"
    headings = _chapter_headings(printed)
    wrong = [f"{title!r}: page {page}, heading on page {headings[title][0]}"
             for title, (_, page) in zip(printed.chapters, outline[1:])
             if page != headings[title][0]]
    assert not wrong, f"bookmarks that miss their chapter's heading: {wrong[:4]}"


def test_the_contents_give_each_chapters_page(printed):
    """Each chapter's entry in the contents (on the first pages) ends with the number of the
    page that holds the chapter's heading."""
    front = [_plain(line) for page in printed.pages[:6] for line in page.lines()]
    listed = {}
    for title in printed.chapters:
        want = _plain(title)
        numbers = [line[len(want):] for line in front
                   if line.startswith(want) and line[len(want):].isdigit()]
        assert numbers, f"the contents give no page number for {title!r}"
        listed[title] = int(numbers[0])
    headings = _chapter_headings(printed)
    wrong = [f"{title!r}: listed {number}, heading on page {headings[title][0]}"
             for title, number in listed.items() if number != headings[title][0]]
    assert not wrong, f"{len(wrong)} page numbers in the contents are wrong: {wrong[:4]}"
