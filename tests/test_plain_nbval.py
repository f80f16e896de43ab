"""The plain ``pytest --nbval notebooks``, run from the project root with no other flag, gives the
guarantees of ``make test``: the notebooks' CSVs go to a temporary directory, never into the
tracked ``results/``, and the run ends with the ``results-reproduce`` check against them.

Checked on a copy of the project's test set-up (root ``conftest.py``, ``nbval_sanitize.cfg``,
``scripts/execute_notebooks.py``) with one small notebook that writes a table, so that the test
runs in seconds and never touches this checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]

SOURCE = """from bai_lib.experiments import write_csv
path = write_csv([{"delta": 0.1, "runs": 1000}], "../results/plain.csv")
print(path.parent.name == "results")"""


@pytest.fixture
def project(tmp_path):
    for name in ("conftest.py", "nbval_sanitize.cfg", "pyproject.toml"):
        shutil.copy2(ROOT / name, tmp_path / name)
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "execute_notebooks.py", tmp_path / "scripts")
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "results").mkdir()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(SOURCE, execution_count=1)
    # stored output: the table went elsewhere than results/
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="False\n")]
    nb.cells = [cell]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, tmp_path / "notebooks" / "plain.ipynb")
    (tmp_path / "results" / "plain.csv").write_text("delta,runs\n0.1,1000\n")
    return tmp_path


def _plain_pytest(cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BAI_LIB_", "PYTEST_"))}
    return subprocess.run([sys.executable, "-m", "pytest", "--nbval", "notebooks", "-v",
                           "-p", "no:cacheprovider"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_plain_command_redirects_the_tables_and_checks_them(project):
    tracked = (project / "results" / "plain.csv").read_bytes()
    proc = _plain_pytest(project)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    assert "results-reproduce PASSED" in out, out[-4000:]
    assert (project / "results" / "plain.csv").read_bytes() == tracked
    assert sorted(p.name for p in (project / "results").iterdir()) == ["plain.csv"]


def test_plain_command_fails_when_a_table_no_longer_reproduces(project):
    (project / "results" / "plain.csv").write_text("delta,runs\n0.1,999\n")
    proc = _plain_pytest(project)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "results-reproduce FAILED" in out and "results/plain.csv no longer reproduces" in out, out[-4000:]
    assert (project / "results" / "plain.csv").read_text() == "delta,runs\n0.1,999\n"
