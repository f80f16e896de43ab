"""Every page of the built book, opened in headless Chromium as a reader would see it.

Served by ``http.server`` on 127.0.0.1 from the session's build (no network needed), each page
is checked at 1280 px: MathJax typeset everything without errors and no raw TeX delimiters are
left in the visible text; no table, figure, output block or display equation is wider than the
content column, no visible code cell (one not folded into a toggle) scrolls sideways, and no
result is printed as a fixed-width text table; every internal link and ``#anchor`` resolves;
the console shows no errors from the book's own scripts.

Needs Debian's ``chromium`` and ``chromium-driver`` (and ``selenium`` from the lock file). When
they are missing the test is skipped with a message naming them, unless
``BAI_LIB_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shutil
import threading
import urllib.parse
from pathlib import Path

import pytest

WIDTH = 1280
TOLERANCE_PX = 2

# Elements that must fit the content column, and whether their own content may scroll inside.
WIDTH_JS = r"""
const article = document.querySelector('article.bd-article') || document.querySelector('main');
const col = article.getBoundingClientRect();
const out = [];
const sel = 'table, img, div.cell_output, div.output, div.cell_output pre, '
          + 'mjx-container[display="true"], figure';
for (const el of document.querySelectorAll(sel)) {
  if (el.closest('.cell_input') || el.closest('details:not([open])')) continue;
  const r = el.getBoundingClientRect();
  if (r.width === 0) continue;
  const overflow = el.scrollWidth - el.clientWidth;
  if (r.right > col.right + %(tol)d || r.left < col.left - %(tol)d || overflow > %(tol)d) {
    const text = (el.innerText || el.getAttribute('alt') || '').slice(0, 60).replace(/\s+/g, ' ');
    out.push(`<${el.tagName.toLowerCase()} class="${el.className}"> right=${Math.round(r.right)} `
             + `column=${Math.round(col.right)} overflow=${overflow}: ${text}`);
  }
}
return out;
""" % {"tol": TOLERANCE_PX}

# Code cells are wrapped to fit the column: the input <pre> of every code cell that is not folded
# into a closed toggle (hide-input, hide-cell) must not scroll sideways. Returns the longest line
# of each offending cell.
CODE_WIDTH_JS = r"""
const out = [];
for (const pre of document.querySelectorAll('div.cell_input pre')) {
  if (pre.closest('details:not([open])')) continue;
  if (pre.scrollWidth > pre.clientWidth + 1) {
    const lines = pre.innerText.split('\n');
    out.push(lines.reduce((a, b) => (b.length > a.length ? b : a), ''));
  }
}
return out;
"""

VISIBLE_TEXT_JS = r"""
const clone = document.querySelector('article.bd-article').cloneNode(true);
for (const el of clone.querySelectorAll('pre, code, script, style, .cell_input')) el.remove();
return clone.innerText;
"""

MATHJAX_DONE_JS = r"""
const done = arguments[arguments.length - 1];
if (!document.querySelector('.math')) { done('ok'); return; }   // a page without math
const start = Date.now();
(function wait() {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(() => done('ok')).catch(e => done('error: ' + e));
  } else if (Date.now() - start > 20000) {
    done('did not load within 20 s');
  } else {
    setTimeout(wait, 50);
  }
})();
"""

# A fixed-width text table: a separator line ("-----  ----  ---"), or three or more lines padded
# into columns (a run of three or more spaces between two words). Results belong in HTML tables.
TEXT_TABLE_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$", re.M)
PADDED_COLUMNS = re.compile(r"\S {3,}\S")


def looks_like_text_table(output: str) -> bool:
    if TEXT_TABLE_RULE.search(output):
        return True
    return sum(bool(PADDED_COLUMNS.search(line)) for line in output.splitlines()) >= 3


def _browser_or_skip():
    required = os.environ.get("BAI_LIB_REQUIRE_BROWSER") == "1"
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    try:
        import selenium  # noqa: F401
    except ImportError:  # pragma: no cover - selenium is in the lock file
        chrome = None
    if chrome and driver:
        return chrome, driver
    msg = ("the browser test needs the Debian packages 'chromium' and 'chromium-driver' "
           "(apt-get install chromium chromium-driver)")
    if required:
        pytest.fail(msg + "; BAI_LIB_REQUIRE_BROWSER=1 makes it mandatory")
    pytest.skip(msg)


@pytest.fixture(scope="module")
def served_book(built_book):
    html, _ = built_book

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(Quiet, directory=str(html)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield html, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="module")
def driver():
    chrome, chromedriver = _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={WIDTH},900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    drv = webdriver.Chrome(service=Service(chromedriver), options=opts)
    drv.set_script_timeout(30)
    yield drv
    drv.quit()


def _pages(html: Path) -> list[str]:
    """Every content page, the library reference under ``book/reference/`` included
    (``index.html`` only redirects to ``book/intro.html``)."""
    pages = [p.relative_to(html).as_posix() for p in sorted((html / "book").rglob("*.html"))]
    return pages + [f"notebooks/{p.name}" for p in sorted((html / "notebooks").glob("*.html"))]


def _ids(path: Path) -> set[str]:
    return set(re.findall(r'\bid="([^"]+)"', path.read_text(errors="replace")))


def test_every_page_reads_well_in_a_browser(served_book, driver):
    html, base = served_book
    pages = _pages(html)
    assert len(pages) >= 8, pages
    problems: list[str] = []
    n_checks = 0
    for page in pages:
        driver.get(f"{base}/{page}")
        state = driver.execute_async_script(MATHJAX_DONE_JS)
        n_checks += 1
        if state != "ok":
            problems.append(f"{page}: MathJax {state}")
        n_merror = driver.execute_script("return document.querySelectorAll('mjx-merror').length")
        n_checks += 1
        if n_merror:
            problems.append(f"{page}: {n_merror} MathJax errors")
        text = driver.execute_script(VISIBLE_TEXT_JS)
        n_checks += 1
        for delim in ("\\(", "\\)", "\\[", "\\]", "$$"):
            if delim in text:
                i = text.index(delim)
                problems.append(f"{page}: raw TeX {delim!r} in the text: ...{text[max(i - 40, 0):i + 40]!r}")
                break
        n_checks += 1
        outputs = driver.execute_script(
            "return Array.from(document.querySelectorAll('div.cell_output pre')).map(p => p.innerText)")
        if any(looks_like_text_table(o) for o in outputs):
            problems.append(f"{page}: a result printed as a fixed-width text table")
        n_checks += 1
        for item in driver.execute_script(WIDTH_JS):
            problems.append(f"{page}: wider than the column: {item}")
        n_checks += 1
        for line in driver.execute_script(CODE_WIDTH_JS):
            problems.append(f"{page}: code line wider than the column: {line[:80]}")
        # internal links and anchors
        hrefs = driver.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)")
        for href in set(hrefs):
            parsed = urllib.parse.urlparse(href)
            if not href.startswith(base):
                continue
            n_checks += 1
            target = html / urllib.parse.unquote(parsed.path.lstrip("/"))
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                problems.append(f"{page}: broken link {href}")
            elif parsed.fragment and target.suffix == ".html" \
                    and urllib.parse.unquote(parsed.fragment) not in _ids(target):
                problems.append(f"{page}: missing anchor {href}")
        n_checks += 1
        for entry in driver.get_log("browser"):
            msg = entry.get("message", "")
            # the browser's own request for /favicon.ico is not a script of the book
            if entry["level"] == "SEVERE" and base in msg and "favicon.ico" not in msg:
                problems.append(f"{page}: console error: {msg[:200]}")
    print(f"browser test: {len(pages)} pages, {n_checks} checks")
    assert not problems, "\n".join(problems)
