"""The small promises of the command line, the Makefile and the README: ``bai-lib --version``,
``summary --format json``, ``make help`` naming every target, the example sweep's size as the
README and ``make help`` state it, no placeholder address, one helper for the local server and
Chromium, ``make lab`` opening the chapters as notebooks, a downloaded chapter writing beside
itself, and the README's examples passing ``mypy --strict``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import bai_lib
from bai_lib.cli import main as cli_main
from bai_lib.formatting import summary_table
from bai_lib.sweep import load_sweep, parse_sweep, run_sweep

ROOT = Path(__file__).resolve().parents[1]


def test_version_is_the_package_version(capsys):
    with pytest.raises(SystemExit) as done:
        cli_main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"bai-lib {bai_lib.__version__}\n"


def test_summary_json_holds_the_numbers_of_the_csv(tmp_path, capsys):
    import pandas as pd
    sweep = parse_sweep({"seed": 1, "runs": 30, "grid": {"algorithm": ["elimination", "ttucb"],
                                                         "arms": [2], "delta": [0.1]}})
    store = run_sweep(sweep, tmp_path / "s", progress=False)
    assert cli_main(["summary", str(store.path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    csv = pd.read_csv(pd.io.common.StringIO(summary_table(store, "csv")), dtype=str)
    summary = store.summary()
    assert len(rows) == 2 and list(rows[0]) == list(csv.columns)
    for row, (_, want) in zip(rows, summary.iterrows()):
        for col, value in row.items():
            if isinstance(value, float):
                assert value == pytest.approx(float(want[col]), rel=1e-14), col
            else:
                assert value == want[col], col


def test_make_help_names_every_target():
    text = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", text, re.M).group(1).split()
    helped = set(re.findall(r'@echo "make ([\w-]+)', text))
    assert set(phony) - {"help", "venv", "clean"} <= helped, set(phony) - helped


def test_the_example_sweep_has_the_size_the_readme_and_make_help_give():
    cells = len(load_sweep(ROOT / "examples" / "sweep_grid.toml").cells)
    for name in ("README.md", "Makefile"):
        said = re.findall(r"(\d+)-cell sweep", (ROOT / name).read_text())
        assert said and all(int(n) == cells for n in said), (name, said, cells)


def test_the_readme_has_no_placeholder_address():
    text = (ROOT / "README.md").read_text()
    assert not re.findall(r"<[^<>\n]*(?:URL|url|address)[^<>\n]*>", text)


def test_one_helper_serves_the_book_and_starts_chromium():
    """scripts/headless.py is the only place that starts an HTTP server or a Chromium driver."""
    users = [ROOT / "scripts" / "make_pdf.py", ROOT / "scripts" / "screenshots.py",
             ROOT / "tests" / "test_browser.py"]
    for path in users:
        text = path.read_text()
        assert "from headless import" in text, path
        assert "http.server" not in text.replace("``http.server``", "") and "ChromeOptions" not in text, path
    assert "ThreadingHTTPServer" in (ROOT / "scripts" / "headless.py").read_text()


def test_make_lab_opens_the_chapters_as_notebooks_and_runs_as_root():
    """``make lab`` puts the Jupytext viewer as the default for Markdown and MyST into this
    environment's JupyterLab settings (``overrides.json`` of its application directory), and
    passes ``--allow-root`` when run as root, as in a container."""
    import os
    import subprocess
    import sys

    from jupyterlab.commands import get_app_dir

    overrides = json.loads((ROOT / "scripts" / "jupyterlab-overrides.json").read_text())
    viewers = overrides["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"markdown": "Jupytext Notebook", "myst": "Jupytext Notebook"}
    shipped = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"
    assert any("Jupytext Notebook" in p.read_text(errors="ignore")
               for p in shipped.rglob("*.js")), "the Jupytext lab extension names no such viewer"
    dry = subprocess.run(["make", "-n", "lab", "VENV=" + sys.prefix], cwd=ROOT, text=True,
                         capture_output=True, check=True).stdout
    target = Path(get_app_dir()) / "settings" / "overrides.json"
    copied = [line.split()[-1] for line in dry.splitlines()
              if line.startswith("cp scripts/jupyterlab-overrides.json ")]
    assert [Path(c).resolve() for c in copied] == [target.resolve()], dry
    lab = next(line for line in dry.splitlines() if "jupyter lab notebooks" in line)
    assert lab.rstrip().endswith("--allow-root") == (os.getuid() == 0), lab


def test_a_chapter_outside_a_checkout_writes_beside_itself(tmp_path, monkeypatch):
    """A downloaded chapter's ``../results/...`` CSVs go to ``results/...`` beside it, and its
    run cache (read-only in audit mode, the default) writes nothing; in a checkout, where
    ``../results`` exists, the path is the one written."""
    from bai_lib.experiments import RESULTS_DIR_ENV, results_path, write_csv
    from bai_lib.runcache import MODE_ENV, run_cache

    monkeypatch.delenv(RESULTS_DIR_ENV, raising=False)
    monkeypatch.delenv(MODE_ENV, raising=False)
    alone = tmp_path / "download"
    alone.mkdir()
    monkeypatch.chdir(alone)
    assert results_path("../results/05_table.csv") == Path("results/05_table.csv")
    write_csv([{"a": 1}], "../results/05_table.csv")
    with run_cache("../results/runs/05_experiment1"):
        bai_lib.simulate("elimination", bai_lib.GaussianPrior.standard(2), 1.0, 0.1, 3, 1)
    assert (alone / "results" / "05_table.csv").read_text() == "a\n1\n"
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == \
        ["download", "download/results", "download/results/05_table.csv"]
    checkout = tmp_path / "checkout"
    (checkout / "results").mkdir(parents=True)
    (checkout / "notebooks").mkdir()
    monkeypatch.chdir(checkout / "notebooks")
    assert results_path("../results/x.csv") == Path("../results/x.csv")
    assert results_path("/abs/results/x.csv") == Path("/abs/results/x.csv")
    assert results_path("figures/x.png") == Path("figures/x.png")


def test_the_readme_examples_type_check(tmp_path):
    """The README's Python examples pass ``mypy --strict`` against the package's annotations
    (it ships ``py.typed``); errors inside the package's own modules are not this test's."""
    import os
    import subprocess
    import sys

    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert len(blocks) >= 2
    (tmp_path / "readme_examples.py").write_text("\n".join(blocks))
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
                          "--cache-dir", str(tmp_path / "cache"), "readme_examples.py"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
