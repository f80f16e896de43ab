"""What ``pip install`` gives a user who did not clone the repository.

The wheel and the sdist are built from a copy of the tracked package files (never in the
checkout, which would leave ``build/`` and ``*.egg-info`` behind). The wheel must hold every
module under ``bai_lib/``, the typing marker and the license; installed **non-editable** into a
fresh virtual environment, with the core dependencies pinned by ``requirements.lock``, it must
import from that environment (not from the checkout), answer ``bai-lib --help`` and
``python -m bai_lib --help``, and run a small simulation.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from pathlib import Path

import pytest

import bai_lib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_FILES = ("pyproject.toml", "README.md", "LICENSE")


def package_sources() -> list[str]:
    """Every ``bai_lib/**/*.py`` of the checkout, as archive paths (``bai_lib/x/y.py``)."""
    return sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "bai_lib").rglob("*.py")
                  if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> dict[str, Path]:
    """``{"wheel": path, "sdist": path}`` built with ``python -m build`` from a copy of the tree."""
    src = tmp_path_factory.mktemp("src")
    for name in PACKAGE_FILES:
        shutil.copy2(ROOT / name, src / name)
    shutil.copytree(ROOT / "bai_lib", src / "bai_lib",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc"))
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(src)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    wheels, sdists = list(out.glob("*.whl")), list(out.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, f"expected one wheel and one sdist in {sorted(out.iterdir())}"
    return {"wheel": wheels[0], "sdist": sdists[0]}


def test_wheel_holds_every_module_the_marker_and_the_license(dist):
    names = set(zipfile.ZipFile(dist["wheel"]).namelist())
    missing = [p for p in package_sources() if p not in names]
    assert not missing, f"the wheel leaves out {missing}: package discovery in pyproject.toml misses them"
    assert "bai_lib/py.typed" in names, "the wheel has no bai_lib/py.typed"
    licenses = [n for n in names if n.endswith(".dist-info/licenses/LICENSE")]
    assert licenses, f"the wheel carries no LICENSE file: {sorted(n for n in names if 'dist-info' in n)}"
    meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = zipfile.ZipFile(dist["wheel"]).read(meta).decode()
    assert f"Version: {bai_lib.__version__}\n" in metadata, "wheel version is not bai_lib.__version__"
    assert "License-Expression: MIT" in metadata, "the declared license is not MIT in the metadata"
    assert dist["wheel"].name.startswith(f"bai_lib-{bai_lib.__version__}-")
    assert "MIT License" in (ROOT / "LICENSE").read_text()


def test_sdist_holds_every_module_and_the_license(dist):
    with tarfile.open(dist["sdist"]) as tar:
        top = f"bai_lib-{bai_lib.__version__}/"
        names = {n.removeprefix(top) for n in tar.getnames()}
    missing = [p for p in [*package_sources(), "bai_lib/py.typed", "LICENSE", "pyproject.toml"] if p not in names]
    assert not missing, f"the sdist leaves out {missing}"


SMOKE = """
import sys, pathlib, numpy as np
import bai_lib
from bai_lib import GaussianPrior, simulate
assert pathlib.Path(bai_lib.__file__).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve()), bai_lib.__file__
res = simulate("elimination", GaussianPrior.standard(2), 1.0, 0.1, 50, seed=1, progress=False)
s = res.summary()
assert s["n_runs"] == 50 and 0 < s["avg"] < np.inf, s
print("ok", bai_lib.__version__, s["n_runs"])
"""


def test_wheel_installs_outside_the_checkout_and_runs(dist, tmp_path):
    venv = tmp_path / "venv"
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    # Core dependencies at the lock file's pins (from the pip cache the project install filled).
    proc = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                           "--no-compile",  # no .pyc of the dependencies: seconds of CPU, unused
                           "-c", str(ROOT / "requirements.lock"), str(dist["wheel"])],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, f"pip install of the wheel failed:\n{proc.stderr[-4000:]}"
    installed = time.perf_counter() - t0
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["BAI_LIB_PROGRESS"] = "0"
    run = dict(cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)  # not the checkout
    show = subprocess.run([str(py), "-m", "pip", "show", "-f", "bai_lib"], **run)
    assert "Editable project location" not in show.stdout, "the wheel was installed editable"
    for cmd in ([str(venv / "bin" / "bai-lib"), "--help"], [str(py), "-m", "bai_lib", "--help"]):
        out = subprocess.run(cmd, **run)
        assert out.returncode == 0, f"{cmd[-2:]} failed in the fresh venv:\n{out.stderr[-3000:]}"
        assert "usage:" in out.stdout and "run" in out.stdout and "sweep" in out.stdout, out.stdout
    # a live experiment from the command line needs the core dependencies only
    cli = str(venv / "bin" / "bai-lib")
    state, obs = tmp_path / "exp.json", tmp_path / "day1.csv"
    obs.write_text("arm,count,total\n0,5,2.5\n1,5,0\n2,5,-1\n")
    out = subprocess.run([cli, "start", str(state), "--algorithm", "elimination", "--arms", "3",
                          "--delta", "0.1", "--noise-std", "1"], **run)
    assert out.returncode == 0, f"bai-lib start failed in the fresh venv:\n{out.stderr[-3000:]}"
    out = subprocess.run([cli, "decide", str(state), "--observations", str(obs), "--next", "6"],
                         **run)
    assert out.returncode == 0, f"bai-lib decide failed in the fresh venv:\n{out.stderr[-3000:]}"
    assert "CONTINUE after 15 observations" in out.stdout, out.stdout
    assert "next 6: arm 0 x 2, arm 1 x 2, arm 2 x 2" in out.stdout, out.stdout
    t1 = time.perf_counter()
    out = subprocess.run([str(py), "-c", SMOKE], **run)
    assert out.returncode == 0, f"a simulation from the installed wheel failed:\n{out.stderr[-3000:]}"
    assert out.stdout.startswith(f"ok {bai_lib.__version__} 50"), out.stdout
    print(f"\nfresh venv + wheel install {installed:.1f} s; first simulate (compiling) "
          f"{time.perf_counter() - t1:.1f} s")
