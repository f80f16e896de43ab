"""Small fixes to the generated HTML of the book (a local Sphinx extension).

- Every ``<script>`` tag appears once per page. sphinx-thebe registers its configuration
  script each time the environment reads documents, and Jupyter Book reads twice, so every page
  declared ``const THEBE_JS_URL`` twice and logged a SyntaxError in the console. Identical
  script lines are dropped after the first, once the build has finished.
- The sidebar buttons work. pydata-sphinx-theme 0.17 (the phone drawers) and sphinx-book-theme
  1.3 (collapsing the sidebar on a wide screen) both bind their handlers to the *first*
  ``.primary-toggle`` / ``.secondary-toggle`` of the page: the buttons of the theme's top bar,
  which the book hides (``_static/book.css``). Those two hidden buttons are removed, so the
  handlers bind to the visible buttons of the article header.
- Tables can be read on a phone. Every cell of a table with three or more columns carries its
  column's heading in a ``data-label`` attribute and the table the class ``stack-on-phone``;
  below 600 px ``book.css`` shows each row as a card of "heading: value" lines (empty cells
  left out) instead of squeezing the columns until words break letter by letter.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

_SCRIPT_LINE = re.compile(r"^\s*<script\b.*</script>\s*$")
_HEADER = re.compile(r'<header id="pst-header".*?</header>', re.S)
_HEADER_TOGGLE = re.compile(
    r'<button class="[^"]*\b(?:primary|secondary)-toggle\b[^"]*"[^>]*>.*?</button>\s*', re.S)
_TABLE = re.compile(r"<table\b.*?</table>", re.S)

STACK_MIN_COLUMNS = 3


def dedupe_script_lines(html: str) -> str:
    """Drop every ``<script>...</script>`` line identical to an earlier one."""
    seen: set[str] = set()
    out = []
    for line in html.splitlines(keepends=True):
        if _SCRIPT_LINE.match(line):
            key = line.strip()
            if key in seen:
                continue
            seen.add(key)
        out.append(line)
    return "".join(out)


def drop_hidden_header_toggles(html: str) -> str:
    """Remove the sidebar toggle buttons of the (hidden) top bar ``#pst-header``."""
    return _HEADER.sub(lambda m: _HEADER_TOGGLE.sub("", m.group(0)), html)


_TEX_SYMBOLS = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ", "varepsilon": "ε",
    "epsilon": "ε", "theta": "θ", "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π",
    "sigma": "σ", "tau": "τ", "phi": "φ", "omega": "ω", "bH": "H", "le": "≤", "leq": "≤",
    "ge": "≥", "geq": "≥", "ne": "≠", "approx": "≈", "infty": "∞", "times": "×", "pm": "±",
    "cdot": "·", "log": "log", "max": "max", "min": "min",
}


def tex_to_text(tex: str) -> str:
    """A formula of a heading as plain text for a ``data-label`` (which CSS shows as text,
    where MathJax never renders): delimiters dropped, Greek letters and common symbols as
    characters, ``\\frac{a}{b}`` as ``a/b``, other commands and braces removed."""
    s = re.sub(r"^\s*(\\\(|\\\[|\$\$?)|(\\\)|\\\]|\$\$?)\s*$", "", tex)
    s = re.sub(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}", r"\1/\2", s)
    s = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX_SYMBOLS.get(m.group(1), ""), s)
    s = re.sub(r"\\[,;:! ]", " ", s).replace("{", "").replace("}", "")
    return " ".join(s.split())


def _column_labels(table) -> list[str]:
    """Heading of each column: the texts of the header rows above it, joined by " · "
    (a cell spanning several columns heads each of them); formulas as plain text."""
    labels: list[list[str]] = []
    head = table.find("thead")
    head = copy.copy(head) if head else None  # the table's own heading keeps its formulas
    for math in head.select("span.math") if head else []:
        math.replace_with(tex_to_text(math.get_text()))
    for row in head.find_all("tr") if head else []:
        col = 0
        for cell in row.find_all(["th", "td"]):
            text = " ".join(cell.get_text(" ", strip=True).split())
            for _ in range(int(cell.get("colspan", 1) or 1)):
                while len(labels) <= col:
                    labels.append([])
                if text and text not in labels[col]:
                    labels[col].append(text)
                col += 1
    return [" · ".join(parts) for parts in labels]


def label_table_cells(table_html: str) -> str:
    """``table_html`` with a ``data-label`` on every body cell and ``stack-on-phone`` on the
    table when it has at least :data:`STACK_MIN_COLUMNS` columns; unchanged otherwise."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(table_html, "html.parser")
    table = soup.find("table")
    if "stack-on-phone" in table.get("class", []):   # a page fixed by an earlier build
        return table_html
    labels = _column_labels(table)
    if len(labels) < STACK_MIN_COLUMNS:
        return table_html
    body_rows = [r for r in table.find_all("tr") if r.find_parent("thead") is None]
    for row in body_rows:
        col = 0
        for cell in row.find_all(["th", "td"], recursive=False):
            cell["data-label"] = labels[col] if col < len(labels) else ""
            if not cell.get_text(strip=True) and cell.find(["img", "mjx-container"]) is None:
                cell["class"] = cell.get("class", []) + ["empty-cell"]
            col += int(cell.get("colspan", 1) or 1)
    table["class"] = table.get("class", []) + ["stack-on-phone"]
    return str(table)


def fix_page(html: str) -> str:
    """All the fixes above, applied to one page."""
    html = drop_hidden_header_toggles(dedupe_script_lines(html))
    return _TABLE.sub(lambda m: label_table_cells(m.group(0)), html)


def _fix_pages(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = fix_page(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _fix_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
