"""Fixtures of the test suite: the book, built once per session for the build and browser tests.

Also the guard of nbval runs over the notebooks (``make test``, ``.ci/run``): when ``--nbval`` is
on, the notebooks' results CSVs are redirected into a temporary directory
(``BAI_LIB_RESULTS_DIR``, inherited by the nbval kernels), so the run never rewrites the tracked
``results/``; a last test item, ``results-reproduce``, then compares what the notebooks wrote
with ``results/`` and names every file that no longer reproduces.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RESULTS_ENV = "BAI_LIB_RESULTS_DIR"  # = bai_lib.experiments.RESULTS_DIR_ENV (tested)
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


@pytest.fixture(autouse=True)
def _no_results_redirect_in_unit_tests(monkeypatch):
    """The redirect is for the notebook kernels; unit tests write where they say (or set it)."""
    monkeypatch.delenv(RESULTS_ENV, raising=False)


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


@pytest.fixture(scope="session")
def built_book(tmp_path_factory):
    """``(html_dir, build_log)`` of a ``-W -n --keep-going`` build of the book into a temporary dir.

    With ``BAI_LIB_BOOK_HTML=DIR`` the browser test checks an existing build in ``DIR`` instead
    (e.g. an older version of the book); the build-log tests then skip.
    """
    given = os.environ.get("BAI_LIB_BOOK_HTML")
    if given:
        html = Path(given)
        assert (html / "book" / "intro.html").exists(), f"BAI_LIB_BOOK_HTML={given}: no built book there"
        return html, None
    jb = Path(sys.executable).with_name("jupyter-book")
    assert jb.exists(), "jupyter-book is not installed in this environment"
    out = tmp_path_factory.mktemp("book")
    proc = subprocess.run(
        [str(jb), "build", str(ROOT), "--builder", "html", "-W", "-n", "--keep-going",
         "--path-output", str(out)],
        capture_output=True, text=True, timeout=1200,
    )
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"book build failed:\n{log[-6000:]}"
    return out / "_build" / "html", log


@pytest.fixture(autouse=True)
def _keep_working_directory():
    """A test that changes the working directory must restore it (nbval and the results check
    open files relative to it): fail the test that does not."""
    before = os.getcwd()
    yield
    after = os.getcwd()
    if after != before:
        os.chdir(before)
        pytest.fail(f"the test changed the working directory to {after} and did not restore it")
