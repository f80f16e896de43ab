"""Notebook hygiene: pairs exist, text and notebook agree, every code cell was executed.

nbval compares stored outputs cell by cell, but it silently skips a code cell whose
``execution_count`` is null, so an unexecuted notebook would "pass". These tests close
that hole and check the Jupytext pairing that `make reproduce` relies on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jupytext
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"
IPYNBS = sorted(NB_DIR.glob("*.ipynb"))
MDS = sorted(NB_DIR.glob("*.md"))


def test_there_are_notebooks():
    assert len(IPYNBS) >= 1, "no notebooks found: nbval would have nothing to check"


def test_every_notebook_is_paired():
    stems_ipynb = {p.stem for p in IPYNBS}
    stems_md = {p.stem for p in MDS}
    assert stems_ipynb == stems_md, f"unpaired: {sorted(stems_ipynb ^ stems_md)}"


def test_notebook_names_follow_convention():
    for p in IPYNBS:
        prefix = p.stem.split("_", 1)[0]
        assert len(prefix) == 2 and prefix.isdigit(), f"{p.name} should be named NN_name.ipynb"


def _cells(nb):
    return [(c.cell_type, c.source.strip()) for c in nb.cells if c.cell_type in ("code", "markdown")]


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_md_and_ipynb_have_the_same_cells(ipynb):
    md = ipynb.with_suffix(".md")
    assert md.exists()
    nb_md = jupytext.read(md)
    nb_ipynb = jupytext.read(ipynb)
    assert _cells(nb_md) == _cells(nb_ipynb), (
        f"{md.name} and {ipynb.name} differ; re-execute the chapter with "
        f"`.venv/bin/python scripts/execute_notebooks.py {md.stem}` (or `make reproduce NB={md.stem}`), "
        f"which rewrites {ipynb.name} with fresh outputs. (`jupytext --sync` copies only the source "
        "and leaves stale outputs that nbval then rejects.)"
    )


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_every_code_cell_executed_without_error(ipynb):
    nb = json.loads(ipynb.read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code, f"{ipynb.name} has no code cells"
    unexecuted = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    assert not unexecuted, f"{ipynb.name}: code cells {unexecuted} were never executed"
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), (
        f"{ipynb.name}: execution counts {counts} are not 1..n (executed out of order?)"
    )
    errors = [i for i, c in enumerate(code) for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors, f"{ipynb.name}: code cells {errors} stored an error"


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_no_stderr_or_warnings_stored(ipynb):
    nb = json.loads(ipynb.read_text())
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stderr":
                pytest.fail(f"{ipynb.name} cell {i} stored stderr: {''.join(o['text'])[:200]}")


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_only_timing_cells_ignore_output(ipynb):
    """`nbval-ignore-output` is reserved for wall-clock cells, which must say so."""
    nb = json.loads(ipynb.read_text())
    for i, c in enumerate(nb["cells"]):
        tags = c.get("metadata", {}).get("tags", [])
        if "nbval-skip" in tags:
            pytest.fail(f"{ipynb.name} cell {i}: nbval-skip is not allowed")
        if "nbval-ignore-output" in tags:
            src = "".join(c["source"]).lower()
            assert "time" in src or "seconds" in src, (
                f"{ipynb.name} cell {i} ignores its output but does not look like a timing cell"
            )


def test_toc_lists_every_notebook_as_ipynb():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = []

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                files.append(node["file"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    listed = {f for f in files if f.startswith("notebooks/")}
    expected = {f"notebooks/{p.name}" for p in IPYNBS}
    assert listed == expected, f"_toc.yml lists {sorted(listed)}, notebooks are {sorted(expected)}"


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_no_numpy_scalar_reprs_stored(ipynb):
    """A glued or displayed ``np.float64(0.01)`` is a repr, not a number: glue formats cannot read
    it (the book build then warns) and readers should never see it."""
    nb = json.loads(ipynb.read_text())
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []):
            texts = [o.get("text", "")] + list(o.get("data", {}).values())
            for t in texts:
                s = "".join(t) if isinstance(t, list) else str(t)
                if re.search(r"\bnp\.(float|int|bool_?)\w*\(", s):
                    pytest.fail(f"{ipynb.name} cell {i} stores a numpy scalar repr: {s[:120]}")
