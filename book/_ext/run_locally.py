"""Every chapter page says how to run it (a local Sphinx extension).

At the end of each page built from ``notebooks/NN_name.ipynb`` a box "Run this chapter
yourself" offers, as files of the built book (so that they work offline, from ``_build/html``):

- the notebook ``NN_name.ipynb`` with the outputs the page shows, and its MyST text
  ``NN_name.md``, which JupyterLab opens as a notebook through Jupytext;
- the ``bai_lib`` wheel, built from this checkout when the book is built, and the lock file that
  pins the stack the chapters were executed with;

and the commands: ``make lab`` in a clone, or a virtual environment with the wheel's ``book``
extra. The files go to ``_downloads/run/`` of the HTML output once the build has finished.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from docutils import nodes
from sphinx.util import logging

logger = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parents[2]
OUT_DIR = "_downloads/run"
LOCK = "requirements.lock"
#: Files a wheel is built from (copied to a temporary directory: the checkout stays clean).
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE")


def library_version(root: Path = ROOT) -> str:
    """``bai_lib.__version__``, read from the source without importing the package."""
    text = (root / "bai_lib" / "_version.py").read_text(encoding="utf-8")
    match = re.search(r'^VERSION\s*=\s*"([^"]+)"', text, re.MULTILINE)
    if not match:
        raise RuntimeError("bai_lib/_version.py defines no VERSION string")
    return match.group(1)


def wheel_name(root: Path = ROOT) -> str:
    return f"bai_lib-{library_version(root)}-py3-none-any.whl"


def build_wheel(dest: Path, root: Path = ROOT) -> Path:
    """Build the ``bai_lib`` wheel from a copy of the package files into ``dest``."""
    with tempfile.TemporaryDirectory(prefix="bai_lib_wheel_") as tmp:
        src = Path(tmp) / "src"
        src.mkdir()
        for name in PACKAGE_FILES:
            shutil.copy2(root / name, src / name)
        shutil.copytree(root / "bai_lib", src / "bai_lib",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check",
             "--no-deps", "--no-build-isolation", "--wheel-dir", str(dest), str(src)],
            capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"building the bai_lib wheel failed:\n{proc.stderr[-3000:]}")
    wheel = dest / wheel_name(root)
    if not wheel.exists():
        raise RuntimeError(f"the wheel build did not produce {wheel.name}: {sorted(p.name for p in dest.iterdir())}")
    return wheel


def _link(text: str, uri: str) -> nodes.reference:
    return nodes.reference("", "", nodes.literal(text=text), refuri=uri)


def run_box(docname: str) -> nodes.admonition:
    """The box for the page ``docname`` (``notebooks/NN_name``)."""
    stem = Path(docname).name
    up = "../" * docname.count("/")
    base = f"{up}{OUT_DIR}/"
    wheel = wheel_name()
    box = nodes.admonition(classes=["tip", "run-locally"])
    box += nodes.title(text="Run this chapter yourself")
    box += nodes.paragraph("", "", nodes.Text("Download the notebook "),
                           _link(f"{stem}.ipynb", base + f"{stem}.ipynb"),
                           nodes.Text(" (with the outputs shown here) or its MyST text "),
                           _link(f"{stem}.md", base + f"{stem}.md"),
                           nodes.Text(", which JupyterLab opens as a notebook through Jupytext. "
                                      "In a clone of the book's repository, "),
                           nodes.literal(text="make lab"),
                           nodes.Text(" installs the pinned environment and opens JupyterLab on "
                                      "the chapters. Without a clone, the chapter's "),
                           nodes.literal(text="bai_lib"),
                           nodes.Text(" comes from the wheel "),
                           _link(wheel, base + wheel),
                           nodes.Text(", installed with the stack pinned by "),
                           _link(LOCK, base + LOCK),
                           nodes.Text(" (all three files in one folder):"))
    commands = "\n".join([
        "python3 -m venv .venv",
        f".venv/bin/pip install -c {LOCK} \\",
        f'    "./{wheel}[book]"',
        f".venv/bin/jupyter lab {stem}.ipynb",
    ])
    box += nodes.literal_block(commands, commands, language="bash")
    box += nodes.paragraph("", "", nodes.Text("A chapter that saves tables writes them to "),
                           nodes.literal(text="../results/"),
                           nodes.Text(" beside the notebook's folder, or to the directory named by "
                                      "the environment variable "),
                           nodes.literal(text="BAI_LIB_RESULTS_DIR"), nodes.Text("."))
    return box


def _is_chapter(docname: str) -> bool:
    return docname.startswith("notebooks/")


def _add_box(app, doctree):
    docname = app.env.docname
    if not _is_chapter(docname):
        return
    sections = list(doctree.findall(nodes.section))
    (sections[0] if sections else doctree).append(run_box(docname))


def _copy_downloads(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    out = Path(app.outdir) / OUT_DIR
    out.mkdir(parents=True, exist_ok=True)
    for docname in sorted(d for d in app.env.found_docs if _is_chapter(d)):
        for suffix in (".ipynb", ".md"):
            shutil.copy2(ROOT / (docname + suffix), out / (Path(docname).name + suffix))
    shutil.copy2(ROOT / LOCK, out / LOCK)
    build_wheel(out)


def setup(app):
    app.connect("doctree-read", _add_box)
    app.connect("build-finished", _copy_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
