"""The book's execution statistics: how long each chapter's stored outputs took to compute.

The book is built from stored outputs (``execute_notebooks: "off"``), so Jupyter Book has no
execution data of its own. ``make reproduce`` (``scripts/execute_notebooks.py``) records each
notebook's wall and CPU seconds in ``notebooks/execution_times.json``, and
``scripts/execute_notebooks.py --audit`` those of the check ``make test`` runs (cached runs read,
a sample of them recomputed); the directive
``{execution-times}`` of this extension turns them into a numbered, captioned table (one row per
chapter, linked, and a total), its argument being the caption; with the flag ``:audit:`` the
table compares the full CPU time with the audited check's. It is meant for MyST pages (the table
is written as a MyST ``list-table``). The role ``{run-cache-size}`results/runs``` writes the
number of cached plans under that folder and their size (:func:`run_cache_size`).
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

ROOT = Path(__file__).resolve().parents[2]
TIMES_FILE = ROOT / "notebooks" / "execution_times.json"


def run_cache_size(directory: Path) -> tuple[int, int]:
    """``(files, bytes)`` of the run cache's plan files (``<chapter>/<digest>.parquet``)."""
    files = sorted(Path(directory).glob("*/*.parquet"))
    return len(files), sum(f.stat().st_size for f in files)


def size_text(files: int, size: int) -> str:
    """``"102 files, 6.0 MB in all"``."""
    return f"{files:,} files, {size / 1e6:.1f} MB in all"


def run_cache_size_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    """``{run-cache-size}`results/runs```: the size of that folder's run cache, as text."""
    folder = ROOT / text.strip()
    if not folder.is_dir():
        msg = inliner.reporter.error(f"run-cache-size: no folder {text!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    return [nodes.Text(size_text(*run_cache_size(folder)))], []


def table_rows(times: dict) -> list[list[str]]:
    """Rows of the table (MyST cells): chapter, measured on, wall s, CPU s, CPUs in use."""
    rows = []
    for name in sorted(times):
        t = times[name]
        rows.append([f"{{doc}}`/notebooks/{name}`", t["measured"], f"{t['seconds']:,.1f}",
                     f"{t['cpu_seconds']:,.0f}", f"{t['cpu_seconds'] / t['seconds']:.2f}"])
    wall = sum(t["seconds"] for t in times.values())
    cpu = sum(t["cpu_seconds"] for t in times.values())
    cores = sorted({t["cores"] for t in times.values()})
    rows.append([f"all {len(times)} chapters", f"on {'/'.join(map(str, cores))} cores",
                 f"{wall:,.1f}", f"{cpu:,.0f}", f"{cpu / wall:.2f}"])
    return rows


def audit_rows(times: dict) -> list[list[str]]:
    """Rows of the audit table (MyST cells): chapter, full CPU s, and the audited check's wall s,
    CPU s and share of the full CPU; ``—`` where the check was not measured."""
    def cells(t):
        if "audit_cpu_seconds" not in t:
            return ["—", "—", "—"]
        return [f"{t['audit_seconds']:,.1f}", f"{t['audit_cpu_seconds']:,.0f}",
                f"{t['audit_cpu_seconds'] / t['cpu_seconds']:.0%}"]

    rows = [[f"{{doc}}`/notebooks/{name}`", f"{times[name]['cpu_seconds']:,.0f}"]
            + cells(times[name]) for name in sorted(times)]
    cpu = sum(t["cpu_seconds"] for t in times.values())
    total = {}
    if all("audit_cpu_seconds" in t for t in times.values()):
        total = {"audit_seconds": sum(t["audit_seconds"] for t in times.values()),
                 "audit_cpu_seconds": sum(t["audit_cpu_seconds"] for t in times.values()),
                 "cpu_seconds": cpu}
    rows.append([f"all {len(times)} chapters", f"{cpu:,.0f}"] + cells(total))
    return rows


class ExecutionTimes(SphinxDirective):
    """``{execution-times} caption`` with an optional ``:name:`` (the table's label)."""

    required_arguments = 1
    final_argument_whitespace = True
    option_spec = {"name": directives.unchanged, "audit": directives.flag}

    def run(self):
        self.env.note_dependency(str(TIMES_FILE))
        times = json.loads(TIMES_FILE.read_text())
        if "audit" in self.options:
            header = ["chapter", "full CPU (s)", "audited wall (s)", "audited CPU (s)",
                      "audited / full"]
            body = audit_rows(times)
        else:
            header = ["chapter", "measured", "wall (s)", "CPU (s)", "CPUs in use"]
            body = table_rows(times)
        lines = ["```{list-table} " + self.arguments[0], ":header-rows: 1"]
        if "name" in self.options:
            lines.append(f":name: {self.options['name']}")
        lines.append("")
        for row in [header] + body:
            lines += [f"* - {row[0]}"] + [f"  - {cell}" for cell in row[1:]]
        lines.append("```")
        container = StringList(lines, source=str(TIMES_FILE))
        holder = nodes.section()
        self.state.nested_parse(container, self.content_offset, holder)
        return holder.children


def setup(app):
    app.add_directive("execution-times", ExecutionTimes)
    app.add_role("run-cache-size", run_cache_size_role)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
