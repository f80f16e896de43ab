"""Small fixes to the generated HTML of the book (a local Sphinx extension).

- Every ``<script>`` tag appears once per page. sphinx-thebe registers its configuration
  script each time the environment reads documents, and Jupyter Book reads twice, so every page
  declared ``const THEBE_JS_URL`` twice and logged a SyntaxError in the console. Identical
  script lines are dropped after the first, once the build has finished.
"""

from __future__ import annotations

import re
from pathlib import Path

_SCRIPT_LINE = re.compile(r"^\s*<script\b.*</script>\s*$")


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


def _fix_pages(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        fixed = dedupe_script_lines(text)
        if fixed != text:
            page.write_text(fixed, encoding="utf-8")


def setup(app):
    app.connect("build-finished", _fix_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
