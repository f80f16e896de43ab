"""The book builds from the stored outputs with warnings as errors (`-W -n --keep-going`)."""

from __future__ import annotations

import pytest


def test_book_builds_without_warnings(built_book):
    html, log = built_book
    if log is None:
        pytest.skip("BAI_LIB_BOOK_HTML points at an existing build; nothing was built")
    assert "WARNING" not in log, f"book build warned:\n{log[-6000:]}"
    assert (html / "index.html").exists(), f"no {html / 'index.html'}"
    pages = sorted(p.name for p in (html / "notebooks").glob("*.html"))
    assert pages, "no notebook pages were rendered"
    # citations resolved and proof boxes rendered on the first chapter
    first = (html / "notebooks" / pages[0]).read_text()
    assert "proof" in first and "definition" in first.lower()
    # math is served locally: no page needs the network to typeset
    assert (html / "_static" / "mathjax" / "tex-chtml.js").exists()
    for page in [html / "index.html", *(html / "notebooks").glob("*.html")]:
        text = page.read_text()
        assert "cdn.jsdelivr.net/npm/mathjax" not in text, f"{page.name} loads MathJax from a CDN"


# label -> what the paper calls it (its lemmas, corollaries and theorems share one counter)
PAPER_STATEMENTS = {
    "def-bayes-correct": "Definition 1", "def-L": "Definition 2", "lem-volume": "Lemma 1",
    "def-freq-correct": "Definition 3", "thm-divergence": "Theorem 2", "cor-two-arm": "Corollary 3",
    "thm-lower-bound": "Theorem 4", "thm-upper-bound": "Theorem 6",
    "alg-elimination": "Algorithm 1", "alg-noelim": "Algorithm 2",
}


def test_statement_boxes_and_references_carry_the_papers_numbers(built_book):
    """Each box that restates the paper shows the paper's number, and so does every reference to
    it; the book's own statements are unnumbered and referred to by their title."""
    import re

    html, _ = built_book
    pages = {p: p.read_text() for p in [html / "index.html", *(html / "notebooks").glob("*.html")]}
    everything = "\n".join(pages.values())
    for label, name in PAPER_STATEMENTS.items():
        kind = name.split()[0]
        box = re.search(rf'<div class="[^"]*\b{kind.lower()}\b[^"]*" id="{label}">(.*?)</p>',
                        everything, re.S)
        assert box, f"no statement box {label!r} in the book"
        assert re.search(rf"{name}\s", re.sub(r"<[^>]+>", "", box.group(1))), (
            f"box {label!r} is not shown as the paper's {name}: {box.group(1)[:200]}")
        refs = re.findall(rf'href="[^"]*#{label}"[^>]*>(.*?)</a>', everything, re.S)
        texts = {re.sub(r"<[^>]+>", "", r).strip() for r in refs}
        assert all(t == name for t in texts if t.split()[0] == kind), (
            f"references to {label!r} do not all read {name!r}: {sorted(texts)}")
    # the references the chapters make to the book's own definitions show a title, never a
    # bare "Definition" without a number
    for page, text in pages.items():
        bare = re.findall(r'href="[^"]*#(def|rem|prop)-[\w-]+"[^>]*>\s*(?:<[^>]+>\s*)*'
                          r'(Definition|Remark|Proposition)\s*(?:<[^>]+>\s*)*</a>', text)
        assert not bare, f"{page.name} refers to an unnumbered box by its kind only: {bare}"


def test_no_e_notation_in_prose_or_tables(built_book):
    """Numbers are written for people: ``2,327`` or ``3.96 × 10⁻⁶``, never ``2.3e+03``
    (code, math and the library reference are exempt)."""
    import re

    html, _ = built_book
    pages = [html / "index.html", *(html / "notebooks").glob("*.html"), *(html / "book").glob("*.html")]
    for page in pages:
        text = page.read_text()
        text = re.sub(r"<(pre|script|style|code)\b[^>]*>.*?</\1>", " ", text, flags=re.S)
        text = re.sub(r'<span class="math[^"]*">.*?</span>', " ", text, flags=re.S)
        text = re.sub(r"<[^>]+>", " ", text)
        found = [text[max(0, m.start() - 40):m.end()].strip()
                 for m in re.finditer(r"\b\d+(?:\.\d+)?[eE][+-]?\d+\b", text)]
        assert not found, f"{page.name} shows e-notation: {found[:3]}"


def test_the_papers_tables_are_named_as_the_papers(built_book):
    """The book numbers its own tables and figures per chapter (``Table 10.2``, ``Fig. 13.1``), and
    a table of the paper is always "the paper's Table 1" (or "the paper's Tables 1 and 3"), so
    that no bare ``Table 1`` can be read as either."""
    import re

    html, _ = built_book
    pages = [*(html / "notebooks").glob("*.html"), *(html / "book").glob("*.html")]
    checked = 0
    for page in pages:
        text = page.read_text()
        text = re.sub(r"<(pre|script|style|code)\b[^>]*>.*?</\1>", " ", text, flags=re.S)
        text = re.sub(r"<[^>]+>", " ", text)
        text = re.sub(r"\s+", " ", text.replace("&#8217;", "'").replace("’", "'"))
        numbers = re.findall(r"\b(?:Table|Fig\.) (\d+(?:\.\d+)?)", text)
        checked += len(numbers)
        own = [n for n in re.findall(r"caption-number\W+(?:Table|Fig\.) ([\d.]+)", page.read_text())]
        assert all("." in n for n in own), f"{page.name}: a table or figure numbered {own}"
        bare = [text[max(0, m.start() - 40):m.end() + 10] for m in
                re.finditer(r"\bTables? \d+(?![.\d])", text)
                if "paper's" not in text[max(0, m.start() - 12):m.start()]]
        assert not bare, f"{page.name}: the paper's tables named without 'the paper's': {bare[:4]}"
    assert checked > 50, checked
