"""The book's local Sphinx extensions (book/_ext/) on small inputs: the HTML fixes and the
caption-to-alt-text conversion. Their effect on the built book is checked by test_browser.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "book" / "_ext"))

import book_fixes  # noqa: E402
import captions  # noqa: E402

TABLE = """<table class="table"><thead><tr><th>Algorithm</th><th>Paper</th><th>Ours</th></tr></thead>
<tbody><tr><td>Alg. 1</td><td>10,600</td><td>8,991</td></tr>
<tr><td></td><td>235,000</td><td>235,030</td></tr></tbody></table>"""


def test_table_cells_carry_their_column_heading():
    fixed = book_fixes.label_table_cells(TABLE)
    assert 'class="table stack-on-phone"' in fixed
    assert '<td data-label="Paper">10,600</td>' in fixed
    assert '<td data-label="Ours">235,030</td>' in fixed
    assert 'class="empty-cell" data-label="Algorithm"' in fixed
    # a second build pass leaves a fixed table alone
    assert book_fixes.label_table_cells(fixed) == fixed


def test_header_rows_and_spans_make_the_labels_and_narrow_tables_stay_tables():
    two_rows = ("<table><thead><tr><th></th><th colspan='2'>k = 2</th></tr>"
                "<tr><th>delta</th><th>mean</th><th>max</th></tr></thead>"
                "<tbody><tr><th>0.1</th><td>5</td><td>9</td></tr></tbody></table>")
    fixed = book_fixes.label_table_cells(two_rows)
    assert 'data-label="k = 2 · mean"' in fixed and 'data-label="k = 2 · max"' in fixed
    assert '<th data-label="delta">0.1</th>' in fixed
    narrow = "<table><thead><tr><th>a</th><th>b</th></tr></thead><tbody><tr><td>1</td><td>2</td></tr></tbody></table>"
    assert book_fixes.label_table_cells(narrow) == narrow


def test_formulas_in_headings_become_plain_text_labels():
    """A data-label is shown by CSS, where MathJax never runs: a heading "avg $\\tau$" gave
    the label "avg \\(\\tau\\)" on a phone."""
    table = ('<table><thead><tr><th>algorithm</th>'
             '<th><span class="math notranslate nohighlight">\\(\\Delta_0\\)</span> factor</th>'
             '<th>avg <span class="math notranslate nohighlight">\\(\\tau\\)</span></th>'
             '</tr></thead><tbody><tr><td>Alg. 1</td><td>4</td><td>8,991</td></tr></tbody></table>')
    fixed = book_fixes.label_table_cells(table)
    assert '<td data-label="Δ_0 factor">4</td>' in fixed
    assert '<td data-label="avg τ">8,991</td>' in fixed
    assert fixed.count('<span class="math notranslate nohighlight">') == 2  # the heading keeps them
    assert book_fixes.tex_to_text("\\(\\frac{\\delta}{4L(\\bH)}\\)") == "δ/4L(H)"


def test_only_the_hidden_top_bar_loses_its_sidebar_buttons():
    page = ('<header id="pst-header" class="bd-header">'
            '<button class="pst-navbar-icon sidebar-toggle primary-toggle" aria-label="Site navigation">'
            '<span class="fa-solid fa-bars"></span></button><div>search</div>'
            '<button class="pst-navbar-icon sidebar-toggle secondary-toggle" aria-label="On this page">'
            '<span></span></button></header>'
            '<div class="header-article-item"><button class="sidebar-toggle primary-toggle btn">'
            '<span></span></button></div>')
    fixed = book_fixes.fix_page(page)
    assert fixed.count("primary-toggle") == 1 and "secondary-toggle" not in fixed
    assert '<div class="header-article-item"><button class="sidebar-toggle primary-toggle btn">' in fixed
    assert "<div>search</div>" in fixed
    assert book_fixes.fix_page(fixed) == fixed


@pytest.mark.parametrize("tex, text", [
    (r"\mathbb{P}[g \le \Delta_0]", "P[g ≤ Δ0]"),
    (r"L(\bH)\log\frac{1}{2.4\delta}", "L(H)log 1/(2.4δ)"),
    (r"c\,\frac{\delta}{4}\,L(H)/L(H')", "c δ/4 L(H)/L(H')"),
    (r"\frac{\frac{1}{2}}{k-1}", "(1/2)/(k-1)"),
])
def test_formulas_in_captions_become_plain_alt_text(tex, text):
    assert captions._speakable(tex) == text
