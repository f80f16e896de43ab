"""Test-session settings shared by unit tests and nbval, for every way pytest is started here.

``make test``, ``make nbval`` and the plain ``pytest --nbval notebooks`` (run from the project
root, no other flag) behave the same:

- notebook kernels started by nbval inherit this environment: progress bars stay off, so that
  nothing variable reaches the compared outputs;
- nbval runs the notebooks in the current environment and masks memory addresses with
  ``nbval_sanitize.cfg`` unless the command line chose otherwise;
- the notebooks' results CSVs are redirected into a temporary directory (``BAI_LIB_RESULTS_DIR``,
  inherited by the kernels), so a test run never rewrites the tracked ``results/``; a last test
  item, ``results-reproduce``, then compares what the notebooks wrote with ``results/`` and names
  every file that no longer reproduces.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

os.environ["BAI_LIB_PROGRESS"] = "0"

ROOT = Path(__file__).resolve().parent
RESULTS_ENV = "BAI_LIB_RESULTS_DIR"  # = bai_lib.experiments.RESULTS_DIR_ENV (tested)
SANITIZE = ROOT / "nbval_sanitize.cfg"
_RESULTS_TMP = pytest.StashKey[tuple]()  # (directory, created here, previous env value)


def load_execute_script():
    """``scripts/execute_notebooks.py`` as a module."""
    name = "bai_lib_execute_notebooks"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "execute_notebooks.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture(scope="session")
def execute_script():
    return load_execute_script()


def _nbval_on(config) -> bool:
    return bool(getattr(config.option, "nbval", False) or getattr(config.option, "nbval_lax", False))


def pytest_configure(config):
    if not _nbval_on(config):
        return
    # The project's nbval settings, unless given on the command line.
    if not config.option.nbval_kernel_name:
        config.option.nbval_current_env = True
    if config.option.nbval_sanitize_with is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
    previous = os.environ.get(RESULTS_ENV)
    if previous:
        config.stash[_RESULTS_TMP] = (Path(previous), False, previous)
        return
    tmp = Path(tempfile.mkdtemp(prefix="bai_lib_results_"))
    os.environ[RESULTS_ENV] = str(tmp)  # nbval kernels start later and inherit it
    config.stash[_RESULTS_TMP] = (tmp, True, previous)


def pytest_unconfigure(config):
    entry = config.stash.get(_RESULTS_TMP, None)
    if entry and entry[1]:
        shutil.rmtree(entry[0], ignore_errors=True)
        os.environ.pop(RESULTS_ENV, None)


class ResultsDiffer(Exception):
    pass


class ResultsReproduceCheck(pytest.Item):
    """Runs after the notebooks: the CSVs they wrote must match the tracked ``results/``."""

    def runtest(self):
        directory = self.config.stash[_RESULTS_TMP][0]
        problems = load_execute_script().compare_results(directory, ROOT / "results", ROOT / "notebooks")
        if problems:
            raise ResultsDiffer("\n".join(problems))

    def repr_failure(self, excinfo):
        if isinstance(excinfo.value, ResultsDiffer):
            return ("The notebooks re-executed by nbval wrote results that differ from the tracked "
                    "results/ (the working tree was not modified):\n" + str(excinfo.value)
                    + "\nIf the change is intended, regenerate with `make reproduce` and commit "
                    "results/ together with the notebooks.")
        return super().repr_failure(excinfo)

    def reportinfo(self):
        return ROOT / "results", None, "results/ reproduce check"


def pytest_collection_modifyitems(session, config, items):
    if _RESULTS_TMP in config.stash and any(type(i).__module__.startswith("nbval") for i in items):
        items.append(ResultsReproduceCheck.from_parent(session, name="results-reproduce"))
