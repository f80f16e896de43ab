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


def _code_sources(ipynb):
    nb = json.loads(ipynb.read_text())
    return ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_every_chapter_guards_its_sentences(ipynb):
    """Each chapter checks its qualitative sentences with ``bai_lib.claims.claim`` (see that
    module): nbval then fails the day a sentence stops being true."""
    calls = sum(len(re.findall(r"(?<![\w.])claim\(", src)) for src in _code_sources(ipynb))
    assert calls >= 1, (f"{ipynb.name} guards none of its sentences: add "
                        "`claim(<verdict>, \"<the sentence>\")` in a removed cell beside each "
                        "qualitative statement of its prose")


_REPR_RESULT = re.compile(r"^(True|False|\{['\"].*\}|[A-Z]\w+\(\w+=.*\))$", re.S)


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_no_bare_booleans_or_reprs_as_results(ipynb):
    """A result is shown as a sentence, a number or a table: never a bare ``True``, a dict repr or
    a dataclass repr such as ``Elimination(delta0=None, ...)``."""
    nb = json.loads(ipynb.read_text())
    for i, c in enumerate(nb["cells"]):
        for o in c.get("outputs", []):
            if o.get("output_type") not in ("execute_result", "display_data", "stream"):
                continue
            plain = o.get("text") if o.get("output_type") == "stream" else \
                o.get("data", {}).get("text/plain")
            if plain is None or "text/html" in o.get("data", {}):
                continue
            for line in "".join(plain).strip().splitlines() or [""]:
                if _REPR_RESULT.match(line.strip()):
                    pytest.fail(f"{ipynb.name} cell {i} shows a repr or a bare boolean as a "
                                f"result: {line.strip()[:100]}")


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_every_figure_and_table_is_numbered_and_captioned(ipynb):
    """A plot or a results table is shown as a numbered figure or table with a caption (the cell's
    ``mystnb.figure`` metadata; ``fig-...`` / ``tab-...`` names, see book/_ext/captions.py), and
    each captioned cell shows exactly one output, so one caption belongs to one thing."""
    nb = json.loads(ipynb.read_text())
    names = []
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] != "code":
            continue
        shown = [o for o in c.get("outputs", []) if o.get("output_type") in ("display_data", "execute_result")]
        kinds = ["figure" if "image/png" in o["data"] else "table" for o in shown
                 if "image/png" in o["data"] or "<table" in "".join(o["data"].get("text/html", ""))]
        fig = c["metadata"].get("mystnb", {}).get("figure")
        if not kinds:
            assert fig is None, f"{ipynb.name} cell {i} has a caption but shows no figure or table"
            continue
        assert fig and fig.get("caption", "").strip(), (
            f"{ipynb.name} cell {i} shows a {kinds[0]} without a caption: add\n"
            "---\nmystnb:\n  figure:\n    name: fig-... (or tab-...)\n    caption: ...\n---")
        assert len(shown) == 1, f"{ipynb.name} cell {i}: one captioned cell, one output ({len(shown)} shown)"
        prefix = "fig-" if kinds[0] == "figure" else "tab-"
        assert str(fig.get("name", "")).startswith(prefix), (
            f"{ipynb.name} cell {i}: a {kinds[0]}'s name starts with {prefix!r}, got {fig.get('name')!r}")
        names.append(fig["name"])
    assert len(names) == len(set(names)), f"{ipynb.name}: duplicate figure/table names {names}"


import matplotlib  # noqa: E402

from bai_lib.plotting import MIN_TEXT_PX, PHONE_COLUMN_PX, use_style  # noqa: E402

use_style()
_STYLE_DPI = matplotlib.rcParams["figure.dpi"]
_FONTSIZE = re.compile(r"fontsize\s*=\s*([0-9.]+)")
# matplotlib's relative sizes below "medium" scale the style's 10 pt down (to 8.33 pt and less)
_NAMED_SMALL = re.compile(r"(?:fontsize|size)\s*=\s*[\"'](?:xx-small|x-small|small|smaller)[\"']")
_FRAC_IN_LABEL = re.compile(r"label\s*=\s*r?[\"'][^\"']*\\frac")


@pytest.mark.parametrize("ipynb", IPYNBS, ids=lambda p: p.stem)
def test_figures_are_sharp_and_legible_on_a_phone(ipynb):
    """Every stored figure is a 2x PNG (IPython's retina format, set by ``use_style``: the
    image is twice as many pixels wide as the width it is shown at). Its code sets no font
    smaller than the style's 10 pt (at the style's 6 in width, 8 CSS px on a 400 px phone; see
    tests/test_plotting.py) and puts no ``\\frac`` in a legend label, which mathtext draws at
    half size."""
    import base64
    import struct

    nb = json.loads(ipynb.read_text())
    for i, c in enumerate(nb["cells"]):
        if c["cell_type"] != "code":
            continue
        src = "".join(c["source"])
        for size in _FONTSIZE.findall(src):
            assert float(size) >= 10, f"{ipynb.name} cell {i}: fontsize={size} is below 10 pt"
        small = _NAMED_SMALL.search(src)
        assert not small, f"{ipynb.name} cell {i}: {small.group(0)} is below the style's 10 pt"
        assert not _FRAC_IN_LABEL.search(src), f"{ipynb.name} cell {i}: \\frac in a legend label"
        for o in c.get("outputs", []):
            png = o.get("data", {}).get("image/png")
            if png is None:
                continue
            raw = base64.b64decode("".join(png))
            px_width = struct.unpack(">I", raw[16:20])[0]   # the IHDR chunk
            shown = o.get("metadata", {}).get("image/png", {}).get("width")
            assert shown, f"{ipynb.name} cell {i}: a 1x PNG ({px_width} px) with no display width"
            assert px_width >= 2 * int(shown) - 2, (
                f"{ipynb.name} cell {i}: {px_width} px shown {shown} px wide is not a 2x image")
            # the style's smallest text, 10 pt at 110 dpi, is 15.3 CSS px at the natural size;
            # shrunk to a phone's column it stays >= MIN_TEXT_PX only if the image is not wider
            natural_text_px = 10 / 72 * _STYLE_DPI
            assert int(shown) * MIN_TEXT_PX / natural_text_px <= PHONE_COLUMN_PX + 0.5, (
                f"{ipynb.name} cell {i}: an image {shown} px wide shrinks its 10 pt text below "
                f"{MIN_TEXT_PX} px at {PHONE_COLUMN_PX} px")
