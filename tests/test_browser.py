"""Every page of the built book, opened in headless Chromium as a reader would see it.

Served by ``http.server`` on 127.0.0.1 (``scripts/headless.py``) from the session's build (no network needed), each page
is checked at 1280 px: MathJax typeset everything without errors (no error box, and no undefined
control sequence such as ``\\bnu``, which MathJax shows as its name in red) and no raw TeX
delimiters are left in the visible text; no table, figure, output block or display equation is
wider than the content column, no word, number or date of a table cell (headings of pandas tables
included) is broken across lines, no visible code cell (one not folded into a toggle) scrolls
sideways, and no result is printed as a fixed-width text table; every internal link and
``#anchor`` resolves; the console shows no errors from the book's own scripts.

At a 400 px phone width: the sidebar buttons open the chapter list and the page contents as
drawers, and a tap on an entry of the page contents closes its drawer and scrolls to the entry's
section; formulas stay inside the column or scroll in their own box with a cue, images keep their
proportions, table cells break no word, and the results tables of the introduction and of the
certified-error chapter are read without scrolling sideways.
At 1280 px the sidebar button collapses and restores the sidebar. Under print media only the page
itself is shown; the search page's snippets show formulas as text, not TeX.

Needs Debian's ``chromium`` and ``chromium-driver`` (and ``selenium`` from the lock file). When
they are missing the test is skipped with a message naming them, unless
``BAI_LIB_REQUIRE_BROWSER=1`` (set by ``.ci/run``), in which case it fails.
"""

from __future__ import annotations

import os
import re
import sys
import urllib.parse
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from headless import MISSING, WAIT_MATHJAX, chrome, find_browser, serve  # noqa: E402

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
    // by code points: cutting a surrogate pair (MathJax's italic letters) would leave a string
    // the driver cannot return
    const text = Array.from(el.innerText || el.getAttribute('alt') || '').slice(0, 60).join('')
                 .replace(/\s+/g, ' ');
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

# No word, number or date of a table cell is broken across lines, headings of pandas tables
# included: not "Media / n", "cens / ored" (a heading squeezed letter by letter), "8,99 / 1" or
# "2026-11- / 27". Where each word lies is read from the layout itself: the boxes of its text (a
# Range over it) on more than one line. A line may end after the hyphen or slash of a compound
# word that has letters ("Track-and- / Stop", "half- / width"), as in the text. Returns each
# broken word with a "/" where its line ends, one per cell.
BROKEN_WORDS_JS = r"""
const range = document.createRange();
const boxes = (node, start, end) => {
  range.setStart(node, start);
  range.setEnd(node, end);
  return Array.from(range.getClientRects()).filter(r => r.width > 0);
};
const out = [];
for (const cell of document.querySelectorAll('article.bd-article table :is(td, th)')) {
  if (cell.closest('details:not([open])')) continue;
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  let broken = null;
  for (let node = walker.nextNode(); node && !broken; node = walker.nextNode()) {
    if (node.parentElement.closest('mjx-container, script, style')) continue;
    for (const m of node.data.matchAll(/\S+/g)) {
      const word = m[0];
      const rects = boxes(node, m.index, m.index + word.length);
      const firstLine = r => r.top < rects[0].bottom - 2;
      if (rects.every(firstLine)) continue;
      let i = 1;   // the first character on a later line
      while (i < word.length && boxes(node, m.index + i, m.index + i + 1).every(firstLine)) i++;
      if (/[-\/]$/.test(word.slice(0, i)) && /\p{L}/u.test(word)) continue;
      broken = word.slice(0, i) + '/' + word.slice(i);
      break;
    }
  }
  if (broken) out.push(broken);
}
return out;
"""

# Every error MathJax shows in a formula: a TeX error box (mjx-merror, with its message in
# data-mjx-error; the copy in the formula's hidden MathML for screen readers is not counted again),
# and an undefined control sequence, which the noundefined extension of MathJax 3 typesets as its
# own name in red (an mjx-mtext coloured red whose characters, mjx-c elements, spell "\bnu"),
# with no error element.
MATHJAX_ERRORS_JS = r"""
const out = [];
for (const el of document.querySelectorAll('mjx-merror, [data-mjx-error]')) {
  if (el.closest('mjx-assistive-mml')) continue;
  out.push('error: ' + (el.getAttribute('data-mjx-error') || el.textContent).slice(0, 80));
}
for (const t of document.querySelectorAll('mjx-container mjx-mtext')) {
  if (t.closest('mjx-merror') || getComputedStyle(t).color !== 'rgb(255, 0, 0)') continue;
  const name = Array.from(t.querySelectorAll('mjx-c'), c => {
    const hex = /\bmjx-c([0-9A-F]+)\b/.exec(c.className);
    return hex ? String.fromCodePoint(parseInt(hex[1], 16)) : '?';
  }).join('');
  out.push('undefined control sequence ' + (name || t.textContent));
}
return out;
"""

VISIBLE_TEXT_JS = r"""
const clone = document.querySelector('article.bd-article').cloneNode(true);
for (const el of clone.querySelectorAll('pre, code, script, style, .cell_input')) el.remove();
return clone.innerText;
"""

# A fixed-width text table: a separator line ("-----  ----  ---"), or three or more lines padded
# into columns (a run of three or more spaces between two words). Results belong in HTML tables.
TEXT_TABLE_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$", re.M)
PADDED_COLUMNS = re.compile(r"\S {3,}\S")


def looks_like_text_table(output: str) -> bool:
    if TEXT_TABLE_RULE.search(output):
        return True
    return sum(bool(PADDED_COLUMNS.search(line)) for line in output.splitlines()) >= 3


def _browser_or_skip() -> tuple[str, str]:
    found = find_browser()
    if found:
        return found
    msg = f"the browser test {MISSING}"
    if os.environ.get("BAI_LIB_REQUIRE_BROWSER") == "1":
        pytest.fail(msg + "; BAI_LIB_REQUIRE_BROWSER=1 makes it mandatory")
    pytest.skip(msg)


@pytest.fixture(scope="module")
def served_book(built_book):
    html, _ = built_book
    with serve(html) as base:
        yield html, base


@pytest.fixture(scope="module")
def driver():
    drv = chrome(WIDTH, browser=_browser_or_skip(), browser_log=True)
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
        state = driver.execute_async_script(WAIT_MATHJAX)
        n_checks += 1
        if state != "ok":
            problems.append(f"{page}: MathJax {state}")
        errors = driver.execute_script(MATHJAX_ERRORS_JS)
        n_checks += 1
        if errors:
            problems.append(f"{page}: {len(errors)} MathJax errors, e.g. {errors[:3]}")
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
        broken = driver.execute_script(BROKEN_WORDS_JS)
        if broken:
            problems.append(f"{page}: {len(broken)} table cells break a word across lines, "
                            f"e.g. {broken[:3]}")
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


# ---------------------------------------------------------------------------------------------
# Every screen and paper: a 400 px phone (emulated: headless Chromium keeps windows at least
# 500 px wide), 1280 px, and print media.

PHONE = 400


def _emulate(driver, width: int | None) -> None:
    if width is None:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    else:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": 900, "deviceScaleFactor": 1,
                                "mobile": False})


def _open(driver, url: str) -> None:
    driver.get(url)
    assert driver.execute_async_script(WAIT_MATHJAX) == "ok", url


def _visible(driver, selector: str):
    found = [e for e in driver.find_elements("css selector", selector) if e.is_displayed()]
    assert found, f"no visible {selector!r}"
    return found[0]


def _wait_for(driver, script: str, what: str, timeout: float = 5.0):
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = driver.execute_script(script)
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout} s")


VISIBLE_LINKS_JS = r"""
return Array.from(document.querySelectorAll(arguments[0] + ' a[href]')).filter(a => {
  const r = a.getBoundingClientRect();
  return a.checkVisibility({checkOpacity: true, checkVisibilityCSS: true})
         && r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.left < innerWidth;
}).map(a => a.getAttribute('href'));
"""


# true when the primary sidebar is on screen, false when slid out of view or hidden
SIDEBAR_SHOWN_JS = r"""
const s = document.querySelector('#pst-primary-sidebar');
const r = s.getBoundingClientRect();
const shown = getComputedStyle(s).visibility !== 'hidden' && r.right > 100 && r.left >= 0;
return shown === SHOWN;
"""


def test_navigation_opens_at_every_width(served_book, driver):
    """The sidebar buttons of the article header work: on a phone the chapter list and the page
    contents open as drawers; on a wide screen the button collapses and restores the sidebar."""
    html, base = served_book
    url = f"{base}/notebooks/04_algorithm1.html"
    try:
        _emulate(driver, PHONE)
        _open(driver, url)
        assert not driver.execute_script(VISIBLE_LINKS_JS, "#pst-primary-sidebar"), \
            "at 400 px the chapter list should start closed"
        _visible(driver, ".bd-header-article .primary-toggle").click()
        _wait_for(driver, "return document.querySelector('#pst-primary-sidebar-modal').open",
                  "the chapter drawer opens at 400 px")
        links = driver.execute_script(VISIBLE_LINKS_JS, "#pst-primary-sidebar-modal")
        chapters = {h for h in links if re.search(r"\d\d_\w+\.html", h)}
        assert len(chapters) >= 11, f"the drawer shows {len(chapters)} chapter links: {links}"
        driver.execute_script("document.querySelector('#pst-primary-sidebar-modal').close()")
        _visible(driver, ".bd-header-article .secondary-toggle").click()
        _wait_for(driver, "return document.querySelector('#pst-secondary-sidebar-modal').open",
                  "the page contents drawer opens at 400 px")
        toc = driver.execute_script(VISIBLE_LINKS_JS, "#pst-secondary-sidebar-modal")
        assert sum(h.startswith("#") for h in toc) >= 3, f"page contents drawer: {toc}"
        driver.execute_script("document.querySelector('#pst-secondary-sidebar-modal').close()")

        _emulate(driver, WIDTH)
        _open(driver, url)
        assert driver.execute_script(VISIBLE_LINKS_JS, "#pst-primary-sidebar"), \
            "at 1280 px the chapter list is shown"
        toggle = _visible(driver, ".bd-header-article .primary-toggle")
        toggle.click()
        _wait_for(driver, "return (function () {" + VISIBLE_LINKS_JS + "})"
                          ".apply(null, ['#pst-primary-sidebar']).length === 0",
                  "the sidebar button collapses the sidebar at 1280 px: no chapter link shown")
        assert driver.execute_script(SIDEBAR_SHOWN_JS.replace("SHOWN", "false"))
        toggle.click()
        _wait_for(driver, SIDEBAR_SHOWN_JS.replace("SHOWN", "true"),
                  "a second click brings the sidebar back")
    finally:
        _emulate(driver, None)


# The href of every in-page entry (#anchor) that the page contents drawer shows
DRAWER_ENTRIES_JS = r"""
return Array.from(document.querySelectorAll('#pst-secondary-sidebar-modal a[href^="#"]'))
  .filter(a => a.getBoundingClientRect().height > 0)
  .map(a => a.getAttribute('href'));
"""

# Where the section named by the address's #anchor lies: [scrollY, top of the section heading in
# the viewport, bottom of the article header that stays at the top of the screen]
ANCHOR_PLACE_JS = r"""
const target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
if (!target) return null;
const header = document.querySelector('.bd-header-article');
return [scrollY, target.getBoundingClientRect().top,
        header ? header.getBoundingClientRect().bottom : 0];
"""


def test_page_contents_drawer_closes_after_a_tap(served_book, driver):
    """On a phone, tapping an entry of the page contents drawer ("On this page") closes the
    drawer and shows the section of that entry (_static/toc_drawer.js)."""
    html, base = served_book
    url = f"{base}/notebooks/04_algorithm1.html"
    try:
        _emulate(driver, PHONE)
        _open(driver, url)
        _visible(driver, ".bd-header-article .secondary-toggle").click()
        _wait_for(driver, "return document.querySelector('#pst-secondary-sidebar-modal').open",
                  "the page contents drawer opens at 400 px")
        entries = driver.execute_script(DRAWER_ENTRIES_JS)
        assert len(entries) >= 3, f"page contents drawer: {entries}"
        # an entry far down the page, so that following it has to scroll
        href = entries[-1]
        link = driver.find_element(
            "css selector", f'#pst-secondary-sidebar-modal a[href="{href}"]')
        link.click()
        _wait_for(driver, "return !document.querySelector('#pst-secondary-sidebar-modal').open",
                  f"the page contents drawer closes after a tap on {href}")
        assert not driver.execute_script(VISIBLE_LINKS_JS, "#pst-secondary-sidebar-modal"), \
            "the closed drawer still shows links"
        assert driver.execute_script("return location.hash") == href
        # the section's heading ends up just below the article header (the browser scrolls to
        # it, smoothly or at once)
        place = _wait_for(
            driver, "const p = (function () {" + ANCHOR_PLACE_JS + "})();"
                    "return p && p[0] > 0 && Math.abs(p[1] - p[2]) < 60 ? p : null;",
            f"the page scrolls until the section {href} starts below the article header")
        assert place[0] > 500, f"the page is scrolled by {place[0]} px only: {place}"
    finally:
        _emulate(driver, None)


# Every formula at phone width: an inline formula ends inside the column; a display either fits or
# scrolls inside its own box with the shadow cue of book.css (marked by _static/math_scroll.js).
# Every image fits the column with its proportions kept.
PHONE_MATH_JS = r"""
const art = document.querySelector('article.bd-article');
const col = art.getBoundingClientRect();
const bad = [];
let scrolling = 0;
for (const m of art.querySelectorAll('mjx-container')) {
  if (m.closest('details:not([open])')) continue;
  const r = m.getBoundingClientRect();
  if (!r.width) continue;
  const text = m.textContent.slice(0, 50);
  if (m.getAttribute('display') !== 'true') {
    if (r.right > col.right + 2 || r.left < col.left - 2) bad.push(`inline, ends at ${Math.round(r.right)} of ${Math.round(col.right)}: ${text}`);
    continue;
  }
  if (r.right > col.right + 2 || r.left < col.left - 2) { bad.push(`display outside the column: ${text}`); continue; }
  if (m.scrollWidth > m.clientWidth + 2) {
    const s = getComputedStyle(m);
    if (s.overflowX !== 'auto' || !m.classList.contains('bai-scrolls') || s.boxShadow === 'none') bad.push(`display cut without a scroll cue: ${text}`);
    else scrolling += 1;
  }
}
for (const img of art.querySelectorAll('img')) {
  const r = img.getBoundingClientRect();
  if (!r.width || !img.naturalWidth) continue;
  const shown = r.width / r.height, natural = img.naturalWidth / img.naturalHeight;
  if (Math.abs(shown / natural - 1) > 0.02 || r.right > col.right + 2)
    bad.push(`image shown ${Math.round(r.width)}x${Math.round(r.height)} px, drawn ${img.naturalWidth}x${img.naturalHeight}: ${(img.alt || '').slice(0, 40)}`);
}
return [bad, scrolling];
"""

# Every non-empty cell of a results table: inside the column, at least a third of it wide (not a
# column squeezed until its words break letter by letter), and no table scrolls sideways.
PHONE_TABLE_JS = r"""
const art = document.querySelector('article.bd-article');
const col = art.getBoundingClientRect();
const bad = [];
let cells = 0;
for (const t of art.querySelectorAll('table')) {
  if (t.closest('details:not([open])')) continue;
  for (let el = t; el && el !== art; el = el.parentElement) {
    if (el.scrollWidth > el.clientWidth + 2 && ['auto', 'scroll'].includes(getComputedStyle(el).overflowX)) {
      bad.push(`a table scrolls sideways (${el.scrollWidth} > ${el.clientWidth})`); break;
    }
  }
  for (const c of t.querySelectorAll('td, th')) {
    const r = c.getBoundingClientRect();
    if (!r.width || !c.textContent.trim()) continue;
    cells += 1;
    if (r.right > col.right + 2 || r.width < col.width / 3)
      bad.push(`cell ${Math.round(r.width)} px wide ending at ${Math.round(r.right)} (column ${Math.round(col.width)}): ${c.textContent.trim().slice(0, 30)}`);
  }
}
return [bad, cells];
"""


def test_phone_width_keeps_math_and_tables_readable(served_book, driver):
    html, base = served_book
    problems, n_scrolling, n_cells = [], 0, 0
    try:
        _emulate(driver, PHONE)
        for page in _pages(html):
            _open(driver, f"{base}/{page}")
            bad, scrolling = driver.execute_script(PHONE_MATH_JS)
            problems += [f"{page}: {b}" for b in bad]
            n_scrolling += scrolling
            broken = driver.execute_script(BROKEN_WORDS_JS)
            if broken:
                problems.append(f"{page}: {len(broken)} table cells break a word across "
                                f"lines, e.g. {broken[:3]}")
            if page in ("book/intro.html", "notebooks/12_certified_error.html"):
                bad, cells = driver.execute_script(PHONE_TABLE_JS)
                problems += [f"{page}: {b}" for b in bad[:8]]
                n_cells += cells
    finally:
        _emulate(driver, None)
    print(f"phone width: {n_scrolling} displays scroll with a cue; {n_cells} table cells checked")
    assert n_cells > 100
    assert not problems, "\n".join(problems)


PRINT_JS = r"""
const hidden = el => !el || getComputedStyle(el).display === 'none' || el.closest('[style*="display: none"]') || el.getBoundingClientRect().height === 0;
const shown = [];
for (const sel of ['.bd-sidebar-primary', '.bd-sidebar-secondary', '.bd-header-article',
                   '.prev-next-area', 'details.hide summary', 'button', '.bd-footer']) {
  for (const el of document.querySelectorAll(sel)) if (!hidden(el)) shown.push(sel);
}
const art = document.querySelector('article.bd-article').getBoundingClientRect();
return [Array.from(new Set(shown)), Math.round(art.width), document.querySelectorAll('article img').length];
"""


def test_print_media_shows_the_page_only(served_book, driver):
    """Under print media: no sidebars, article header, buttons, folded code cells or prev/next
    links; the article uses the page width and keeps its figures."""
    html, base = served_book
    try:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
        for page in ("book/intro.html", "notebooks/05_experiment1.html"):
            _open(driver, f"{base}/{page}")
            shown, width, images = driver.execute_script(PRINT_JS)
            assert not shown, f"{page} prints {shown}"
            assert width > 0.9 * WIDTH * 0.75, f"{page}: the article is {width} px wide in print"
            if page.startswith("notebooks"):
                assert images >= 1
    finally:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})


def test_search_snippets_show_no_tex(served_book, driver):
    """The search page's snippets quote the text with formulas as plain text, not TeX."""
    html, base = served_book
    driver.get(f"{base}/search.html?q=prior")
    snippets = _wait_for(
        driver, "const s = Array.from(document.querySelectorAll('#search-results p.context'))"
                ".map(p => p.textContent); return s.length >= 5 ? s : null;",
        "search results with snippets", timeout=20)
    tex = [s for s in snippets if re.search(r"\\[A-Za-z(\[]|\$", s)]
    assert not tex, f"{len(tex)} of {len(snippets)} snippets show TeX, e.g. {tex[0][:160]!r}"
