"""The library reference (``book/reference/``) as a reader meets it in the built HTML book.

- Each entry ends with a folded block "Expand for references to NAME" (sphinx-codeautolink's
  backreferences: the chapter sections whose code uses the name). Section titles with formulas
  are typeset there by MathJax like everywhere else, not quoted as TeX source, and each link
  goes to the section it names.
- Search results on the reference pages quote the text around the match with formulas as plain
  text, not TeX.
- The general index and the Python module index that Sphinx builds are linked from the
  reference's overview page, and the overview says how to get the whole book as a PDF.

The browser checks need Debian's ``chromium`` and ``chromium-driver`` like ``test_browser.py``
(whose fixtures they use), and skip without them unless ``BAI_LIB_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

from bs4 import BeautifulSoup

from test_browser import _open, _wait_for, driver, served_book  # noqa: F401  (fixtures)

# a TeX command or a dollar sign in text that is not inside a MathJax element
TEX = re.compile(r"\\[A-Za-z]+|\$")


def _reference_pages(html: Path) -> list[Path]:
    pages = sorted((html / "book" / "reference").glob("*.html"))
    assert pages, f"no reference pages under {html / 'book' / 'reference'}"
    return pages


def _soup(path: Path) -> BeautifulSoup:
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def _text_outside_math(element) -> str:
    """The element's text without its formulas (the ``span.math`` MathJax typesets)."""
    element = BeautifulSoup(str(element), "html.parser")
    for math in element.select("span.math, div.math"):
        math.decompose()
    return element.get_text(" ")


def test_backreference_blocks_hold_formulas_not_tex(built_book):
    """Every "Expand for references" block quotes section titles with their formulas as
    ``span.math`` elements (on a page that loads MathJax), never as bare TeX; each link goes to
    an element of its target page whose title it shows."""
    html, _ = built_book
    blocks = with_math = 0
    raw = []
    wrong_anchor = []
    for page in _reference_pages(html):
        soup = _soup(page)
        details = [d for d in soup.find_all("details")
                   if d.summary and d.summary.get_text().startswith("Expand for references")]
        blocks += len(details)
        page_math = 0
        for block in details:
            for link in block.select("table a.reference"):
                text = _text_outside_math(link)
                if TEX.search(text):
                    raw.append(f"{page.name}: {link.get_text()!r}")
                page_math += bool(link.select("span.math"))
                href = link["href"]
                target_path, _, anchor = href.partition("#")
                if anchor.startswith("proof-content"):
                    wrong_anchor.append(f"{page.name}: {href} ({link.get_text()!r})")
        with_math += page_math
        if page_math:
            assert "tex-chtml.js" in page.read_text(encoding="utf-8"), \
                f"{page.name} shows formulas in its backreferences but does not load MathJax"
    assert blocks >= 20, f"only {blocks} backreference blocks on the reference pages"
    assert not raw, f"{len(raw)} backreference links show TeX, e.g. {raw[:3]}"
    assert with_math >= 5, f"only {with_math} backreference links carry a formula"
    assert not wrong_anchor, ("backreference links to a statement box's content instead of "
                              f"their section: {wrong_anchor[:3]}")


MATH_IN_DETAILS_JS = r"""
const out = [];
for (const d of document.querySelectorAll('details')) {
  if (!d.querySelector('summary') ||
      !d.querySelector('summary').textContent.startsWith('Expand for references')) continue;
  d.open = true;
  for (const a of d.querySelectorAll('table a')) {
    const clone = a.cloneNode(true);
    clone.querySelectorAll('mjx-container').forEach(m => m.remove());
    out.push([a.querySelectorAll('mjx-container').length, clone.textContent]);
  }
}
return out;
"""


def test_backreference_formulas_are_typeset_in_the_browser(served_book, driver):  # noqa: F811
    """Opened in Chromium, the titles in the backreference blocks of a reference page show their
    formulas typeset by MathJax (``mjx-container``), and no TeX is left in their text."""
    html, base = served_book
    typeset = 0
    for page in ("priors_and_bounds", "experiments", "presentation"):
        _open(driver, f"{base}/book/reference/{page}.html")
        links = driver.execute_script(MATH_IN_DETAILS_JS)
        assert links, f"{page}: no backreference blocks"
        raw = [text for _, text in links if TEX.search(text)]
        assert not raw, f"{page}: {len(raw)} backreference links show TeX, e.g. {raw[:2]}"
        typeset += sum(n > 0 for n, _ in links)
    assert typeset >= 5, f"only {typeset} backreference links show a typeset formula"


def test_reference_search_snippets_show_no_tex(served_book, driver):  # noqa: F811
    """A search whose matches on the reference pages fall in the backreference blocks (section
    titles with formulas) quotes them with plain-text formulas."""
    html, base = served_book
    driver.get(f"{base}/search.html?q=correctness")
    script = r"""
    const items = Array.from(document.querySelectorAll('#search-results li'))
      .filter(li => li.querySelector('p.context'))
      .map(li => [li.querySelector('a').getAttribute('href'),
                  li.querySelector('p.context').textContent]);
    const done = (document.querySelector('#search-results p.search-summary') || {}).textContent;
    return done && done.trim() && items.length >= 10 ? items : null;
    """
    items = _wait_for(driver, script, "search results with snippets", timeout=30)
    reference = [(href, text) for href, text in items if "book/reference/" in href]
    assert len(reference) >= 2, f"the search found only {len(reference)} reference pages"
    tex = [(href, text) for href, text in reference if TEX.search(text)]
    assert not tex, (f"{len(tex)} of {len(reference)} reference snippets show TeX, e.g. "
                     f"{tex[0][0]}: {tex[0][1][:200]!r}")


def _resolve(page: Path, href: str) -> Path:
    return (page.parent / urllib.parse.unquote(href.partition("#")[0])).resolve()


def test_indices_are_linked_from_the_reference(built_book):
    """The reference's overview links the general index and the Python module index, and both
    links lead to the built index pages, which list the library's names and modules."""
    html, _ = built_book
    overview = html / "book" / "reference" / "index.html"
    article = _soup(overview).select_one("article")
    hrefs = [a["href"] for a in article.select("a[href]")]
    targets = {_resolve(overview, h).name: _resolve(overview, h) for h in hrefs
               if not h.startswith(("http:", "https:", "#"))}
    for name, content in (("genindex.html", "bai_lib.simulate"),
                          ("py-modindex.html", "bai_lib.priors")):
        assert name in targets, f"book/reference/index.html does not link {name}"
        target = targets[name]
        assert target == (html / name).resolve(), f"the link to {name} leads to {target}"
        assert target.exists(), f"{name} is linked but was not built"
        assert content in target.read_text(encoding="utf-8"), f"{name} does not list {content}"


def test_the_book_says_how_to_get_the_pdf(built_book):
    """The reference's overview tells the reader how to get the whole book as one PDF: the
    command and where the file lands."""
    html, _ = built_book
    text = " ".join(_soup(html / "book" / "reference" / "index.html")
                    .select_one("article").get_text(" ").split())
    assert "make pdf" in text, "the reference overview does not mention `make pdf`"
    assert "_build/pdf/book.pdf" in text, "the reference overview does not say where the PDF lands"
