"""Re-execute every notebook from its MyST ``.md`` source and store the outputs in the paired ``.ipynb``.

Usage: ``python scripts/execute_notebooks.py [NN_name ...]`` (default: all notebooks).

Notebooks run in ``notebooks/`` with :mod:`nbclient` and ``record_timing=False`` so that
no timestamps enter the stored outputs; progress bars are disabled through
``BAI_LIB_PROGRESS=0``. The written ``.ipynb`` is what ``pytest --nbval`` later compares.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import jupytext
import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NB_DIR = ROOT / "notebooks"


def execute(md_path: Path, timeout: int = 1800) -> float:
    """Execute one notebook; return its wall time in seconds."""
    nb = jupytext.read(md_path)
    # deterministic cell ids keep re-executions diff-free where nothing changed
    for i, cell in enumerate(nb.cells):
        cell.id = f"{md_path.stem[:2]}-{i:03d}"
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=False,
        resources={"metadata": {"path": str(NB_DIR)}},
    )
    start = time.perf_counter()
    client.execute()
    elapsed = time.perf_counter() - start
    ipynb_path = md_path.with_suffix(".ipynb")
    jupytext.write(nb, ipynb_path, fmt="ipynb")
    # keep the text side in sync with the executed notebook (same cells, no outputs)
    jupytext.write(nb, md_path, fmt="md:myst")
    nbformat.validate(nbformat.read(ipynb_path, as_version=4))
    return elapsed


def main(argv: list[str]) -> int:
    os.environ["BAI_LIB_PROGRESS"] = "0"
    names = argv or sorted(p.stem for p in NB_DIR.glob("[0-9][0-9]_*.md"))
    if not names:
        print("no notebooks found", file=sys.stderr)
        return 1
    total = 0.0
    for name in names:
        md = NB_DIR / f"{name}.md"
        if not md.exists():
            print(f"missing {md}", file=sys.stderr)
            return 1
        seconds = execute(md)
        total += seconds
        print(f"{name}: {seconds:6.1f} s", flush=True)
    print(f"total: {total:6.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
