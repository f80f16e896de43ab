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
- The backreference blocks of the library reference ("Expand for references to NAME", written
  by sphinx-codeautolink under every entry) show section titles with their formulas.
  sphinx-codeautolink keeps each title as plain text, so "Bayesian $\\delta$-correctness" read
  "Bayesian \\delta-correctness", which MathJax never typesets (it processes ``span.math``
  only) and the search snippets quoted as it stood. Each link's text is rebuilt from the titles of
  the page it points to, formulas included (the page then loads MathJax), and the link goes to
  the section whose title it shows: code inside a statement box was filed under the box's
  content (``#proof-content``, the first box of the page) instead of its section.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

from docutils import nodes

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


# inline nodes a title's copy keeps as they are; any other (a pending cross-reference, a link)
# becomes its text, since the copy is placed inside a link
_KEPT_INLINE = (nodes.Text, nodes.math, nodes.literal, nodes.emphasis, nodes.strong)
_TITLE_SEPARATOR = " / "


def _titles(env, docname: str, cache: dict) -> dict:
    """``{plain text: (title node, id of its section or None)}`` for the titles of a document;
    for a text that titles several elements, the first section's."""
    if docname not in cache:
        found: dict = {}
        for title in env.get_doctree(docname).findall(nodes.title):
            section = title.parent if isinstance(title.parent, nodes.section) else None
            section_id = section["ids"][0] if section is not None and section["ids"] else None
            text = title.astext()
            if text not in found or (found[text][1] is None and section_id):
                found[text] = (title.deepcopy(), section_id)   # a copy: the tree is let go
        cache[docname] = found
    return cache[docname]


def _inline_copy(title) -> list:
    """The contents of a title as nodes that can sit inside a link."""
    return [child.deepcopy() if isinstance(child, _KEPT_INLINE) else nodes.Text(child.astext())
            for child in title.children]


def typeset_backreferences(app, doctree, docname) -> None:
    """Rebuild the links of sphinx-codeautolink's backreference tables (its ``DetailsNode``)
    from the target pages' titles: formulas as math nodes, the anchor of the section named last."""
    try:
        from sphinx_codeautolink.extension.backref import DetailsNode
    except ImportError:  # pragma: no cover - sphinx-codeautolink is in the lock file
        return
    blocks = list(doctree.findall(DetailsNode))
    if not blocks:
        return
    cache = app.__dict__.setdefault("_book_fixes_titles", {})
    docs = {app.builder.get_relative_uri(docname, doc): doc for doc in app.env.found_docs}
    with_math = False
    for block in blocks:
        seen = set()
        for row in list(block.findall(nodes.row)):
            ref = next(iter(row.findall(nodes.reference)), None)
            if ref is None or "refuri" not in ref:
                continue
            uri, _, anchor = ref["refuri"].partition("#")
            target = docs.get(uri)
            if target is None:
                continue
            titles = _titles(app.env, target, cache)
            parts = ref.astext().split(_TITLE_SEPARATOR)
            children: list = []
            for i, part in enumerate(parts):
                if i:
                    children.append(nodes.Text(_TITLE_SEPARATOR))
                found = titles.get(part)
                children.extend(_inline_copy(found[0]) if found else [nodes.Text(part)])
            last = titles.get(parts[-1])
            if last and last[1]:
                anchor = last[1]
            key = (uri, anchor, ref.astext())
            if key in seen:   # two code cells of one section filed under different anchors
                row.parent.remove(row)
                continue
            seen.add(key)
            ref["refuri"] = f"{uri}#{anchor}" if anchor else uri
            ref.children = []
            ref.extend(children)
            with_math = with_math or next(iter(ref.findall(nodes.math)), None) is not None
    if with_math:
        # MathJax is loaded on the pages whose doctree held math when it was read
        app.env.get_domain("math").data["has_equations"][docname] = True


def _reset_title_cache(app, *args):
    app.__dict__.pop("_book_fixes_titles", None)


def setup(app):
    app.connect("build-finished", _fix_pages)
    # after sphinx-codeautolink has written its tables (default priority 500)
    app.connect("doctree-resolved", typeset_backreferences, priority=600)
    app.connect("env-updated", _reset_title_cache)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
