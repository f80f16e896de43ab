"""Print the whole book to one PDF: ``_build/pdf/book.pdf``.

Usage: ``python scripts/make_pdf.py [--html DIR] [--out FILE]`` after a ``singlehtml`` build of
the book (``make pdf`` runs both). The single-page build holds every chapter in reading order;
headless Chromium (Debian packages ``chromium`` and ``chromium-driver``, driven through selenium)
opens it from a local server, waits until MathJax has typeset every formula, and prints it with
the book's print stylesheets on A4 pages numbered in the footer: ``_static/book.css`` (no
sidebars, buttons or folded code) and ``_static/pdf.css`` (each chapter from a new page, code
boxes kept whole, page numbers in the contents). Nothing is fetched from the network.

The PDF has bookmarks: Chromium's outline of the headings, where each chapter's title is a top
level entry (its heading is marked level 1, its sections below it). The contents give each
chapter's page: the book is printed once (without tags or outline, which halves the time),
each chapter's page is read from the PDF's named destinations (the contents link every
chapter's section, so Chromium records the page each section starts on), and the book is
printed again with the numbers filled in, until the numbers printed are those of the PDF (twice,
unless filling them in moved a chapter). The PDF is read with pypdf.
"""

from __future__ import annotations

import argparse
import base64
import io
import sys
import time
from pathlib import Path

from pypdf import PdfReader

from headless import MISSING, WAIT_MATHJAX, chrome, find_browser, serve

ROOT = Path(__file__).resolve().parents[1]
HTML = ROOT / "_build" / "singlehtml"
OUT = ROOT / "_build" / "pdf" / "book.pdf"

# Marks the page for _static/pdf.css and returns [[section id, title], ...] of the chapters in
# the order of the contents, and how many empty code boxes it hid. Each entry of the contents
# then links its chapter's section (not the empty anchor before it, which stays at the foot of
# the previous chapter's last page) and starts with a placeholder page number as wide as the
# real ones (floated to the right of the line by pdf.css).
PREPARE = r"""
document.documentElement.classList.add('pdf-print');
const chapters = [];
for (const link of document.querySelectorAll('#jb-print-toc a[href^="#document-"]')) {
  const anchor = document.getElementById(decodeURIComponent(link.getAttribute('href').slice(1)));
  const section = anchor && anchor.nextElementSibling;
  if (!section || section.tagName !== 'SECTION' || !section.id) continue;
  section.classList.add('pdf-chapter');
  link.setAttribute('href', '#' + section.id);
  const page = document.createElement('span');
  page.className = 'pdf-toc-page';
  page.dataset.target = section.id;
  page.textContent = '888';
  link.insertBefore(page, link.firstChild);
  chapters.push([section.id, link.textContent.slice(page.textContent.length).trim()]);
}
// bookmarks: a chapter's title (an h2 of the single page) at level 1, its sections below
for (const section of document.querySelectorAll('section.pdf-chapter')) {
  for (const h of section.querySelectorAll('h2, h3, h4, h5, h6')) {
    h.setAttribute('aria-level', String(Number(h.tagName[1]) - 1));
  }
}
// the part captions of the contents ("Chapters", "Beyond the paper") are not bookmarks
for (const caption of document.querySelectorAll('#jb-print-toc [role="heading"]')) {
  caption.removeAttribute('role');
  caption.removeAttribute('aria-level');
}
let empty = 0;
for (const box of document.querySelectorAll('div.cell_input, div.highlight, div.cell_output')) {
  if (!box.textContent.trim() && !box.querySelector('img, svg, mjx-container, table, iframe')) {
    box.classList.add('pdf-empty-box');
    empty += 1;
  }
}
return [chapters, empty];
"""

FILL_PAGES = r"""
const pages = arguments[0];
for (const span of document.querySelectorAll('#jb-print-toc .pdf-toc-page')) {
  span.textContent = String(pages[span.dataset.target]);
}
"""

FOOTER = ('<div style="font-size:8px; width:100%; text-align:center; color:#555;">'
          '<span class="pageNumber"></span> / <span class="totalPages"></span></div>')


PRINT_OPTIONS = {
    "paperWidth": 8.27, "paperHeight": 11.69,          # A4, inches
    "marginTop": 0.5, "marginBottom": 0.6, "marginLeft": 0.5, "marginRight": 0.5,
    # 80%: the column is then about 870 CSS px wide, as on a laptop screen
    "scale": 0.8,
    "printBackground": True, "preferCSSPageSize": False,
    "displayHeaderFooter": True, "headerTemplate": "<div></div>",
    "footerTemplate": FOOTER,
    # bookmarks from the headings (they need the tagged PDF)
    "generateTaggedPDF": True, "generateDocumentOutline": True,
}
MAX_PRINTS = 4


def destination_pages(reader: PdfReader) -> dict[str, int]:
    """``{name: page number from 1}`` of the PDF's named destinations."""
    pages = {str(name).removeprefix("/"): reader.get_destination_page_number(dest)
             for name, dest in reader.named_destinations.items()}
    return {name: page + 1 for name, page in pages.items() if page >= 0}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=HTML, help="the singlehtml build's directory")
    parser.add_argument("--out", type=Path, default=OUT, help="the PDF to write")
    args = parser.parse_args(argv)
    page = args.html / "book" / "intro.html"
    browser = find_browser()
    if browser is None:
        print(MISSING, file=sys.stderr)
        return 1
    if not page.exists():
        print(f"no single-page book at {page}; run `make pdf` (it builds one first)",
              file=sys.stderr)
        return 1
    # typesetting every formula of the book in one page takes minutes on two busy cores: the
    # script and the HTTP requests of the driver may take that long
    with serve(args.html) as base:
        drv = chrome(1280, browser=browser, script_timeout=1200)
        drv.command_executor.client_config.timeout = 1200
        return _print(drv, base, args, page)


def _print(drv, base: str, args, page: Path) -> int:
    """Print the single page ``page`` of the build served at ``base`` to ``args.out``."""
    # The single page is written to book/intro.html but links its styles, scripts and images
    # relative to the build's root: it is served from there under another name.
    printed = args.html / "_print.html"
    printed.write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    start = time.monotonic()
    try:
        drv.get(f"{base}/{printed.name}")
        state = drv.execute_async_script(WAIT_MATHJAX)
        if state != "ok":
            print(f"MathJax: {state}", file=sys.stderr)
            return 1
        errors = drv.execute_script("return document.querySelectorAll('mjx-merror').length")
        if errors:
            print(f"MathJax could not typeset {errors} formulas", file=sys.stderr)
            return 1
        chapters, empty = drv.execute_script(PREPARE)
        if not chapters:
            print("no chapters found in the contents (#jb-print-toc)", file=sys.stderr)
            return 1
        ids = [section for section, _ in chapters]
        printed_pages: dict[str, int] | None = None
        for prints in range(1, MAX_PRINTS + 1):
            # the first print only measures the pages: without the tags and the outline it
            # takes half the time, and the layout is the same
            options = PRINT_OPTIONS if prints > 1 else {
                **PRINT_OPTIONS, "generateTaggedPDF": False, "generateDocumentOutline": False}
            data = base64.b64decode(drv.execute_cdp_cmd("Page.printToPDF", options)["data"])
            reader = PdfReader(io.BytesIO(data))
            found = destination_pages(reader)
            missing = [i for i in ids if i not in found]
            if missing:
                print(f"no page found for the chapters {missing}", file=sys.stderr)
                return 1
            pages = {i: found[i] for i in ids}
            if pages == printed_pages:
                break
            drv.execute_script(FILL_PAGES, pages)
            printed_pages = pages
        else:
            print(f"the contents' page numbers still moved after {MAX_PRINTS} prints",
                  file=sys.stderr)
            return 1
    finally:
        drv.quit()
        printed.unlink()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(data)
    print(f"{args.out}: {len(reader.pages)} pages, {len(chapters)} chapters, "
          f"{empty} empty code boxes left out, {len(data) / 1e6:.1f} MB, printed {prints} times "
          f"in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
