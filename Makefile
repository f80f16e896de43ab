# Two commands matter: `make book` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
JB_FLAGS := --builder html -W -n --keep-going
# Notebook runs must never write progress bars into stored outputs.
export BAI_LIB_PROGRESS := 0
# make reproduce NB="05_experiment1 06_experiment2" re-executes only those chapters;
# REFRESH_TIMINGS=1 also stores new outputs for the wall-clock cells (nbval-ignore-output).
NB ?=
REFRESH_TIMINGS ?=

.PHONY: help venv book serve pdf test test-pdf unit nbval lab reproduce bench bench-sweep lock screenshots clean

help:
	@echo "make book       build the HTML book from the stored notebook outputs -> _build/html"
	@echo "make serve      build the book and serve it on http://127.0.0.1:8000 (full-text search"
	@echo "                needs a server: opened from disk, the search shows titles only)"
	@echo "make pdf        the whole book as one PDF with typeset math -> _build/pdf/book.pdf"
	@echo "make test       unit tests + nbval over every notebook (long chapters: cached runs, audited)"
	@echo "                + hygiene + warning-free book build; BAI_LIB_RUN_CACHE=off recomputes all"
	@echo "make test-pdf   print the book to PDF and check the file (CI runs it after make test)"
	@echo "make unit       the unit tests alone (tests/, two workers)"
	@echo "make nbval      the notebooks alone (pytest --nbval notebooks)"
	@echo "make lab        JupyterLab on the chapters (notebooks/*.md open as notebooks through Jupytext)"
	@echo "make reproduce  re-execute every notebook from its .md source, every run computed (writes"
	@echo "                notebooks/, results/ and the run cache results/runs/),"
	@echo "                then rebuild the book; NB=NN_name for some chapters only, REFRESH_TIMINGS=1"
	@echo "                to store new wall-clock measurements (kept by default when unchanged)"
	@echo "make bench      print simulator throughput figures (benchmarks/)"
	@echo "make bench-sweep  the 48-cell sweep of examples/ straight, resumed and on Dask (RUNS=N)"
	@echo "make lock       re-pin requirements.lock from the current .venv"
	@echo "make screenshots  full-page PNGs of every page at 1280 and 400 px -> _build/screenshots"

$(STAMP): requirements.lock pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	@touch $(STAMP)

venv: $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . $(JB_FLAGS)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

PORT ?= 8000
serve: book
	@echo "Serving the book on http://127.0.0.1:$(PORT)/ (Ctrl-C stops)"
	$(BIN)/python -m http.server --directory _build/html --bind 127.0.0.1 $(PORT)

# One page holding every chapter (Sphinx's singlehtml builder), printed by headless Chromium.
pdf: $(STAMP)
	$(BIN)/jupyter-book build . --builder singlehtml
	$(BIN)/python scripts/make_pdf.py

# conftest.py adds the nbval settings (current environment, nbval_sanitize.cfg), sends the
# notebooks' CSVs to a temporary directory and ends each notebook with the check against
# results/; the long chapters read their runs from results/runs/ and audit a sample of them
# (BAI_LIB_RUN_CACHE=off recomputes everything). Two workers; a notebook stays on one.
PYTEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile notebooks tests --nbval -m "not pdf"

# The PDF of `make pdf`, printed from a single-page build and read back (tests/test_pdf.py).
test-pdf: $(STAMP)
	$(BIN)/python -m pytest tests/test_pdf.py

unit: $(STAMP)
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadfile tests -m "not pdf"

# The notebooks alone: the same guarantees as `make test` (see conftest.py), also for the plain
# `pytest --nbval notebooks` in an activated environment.
nbval: $(STAMP)
	$(BIN)/python -m pytest notebooks --nbval

# Progress bars back to their default (on in a kernel); every other target turns them off.
# The chapters' .md files open as notebooks (Jupytext's viewer made the default in this
# environment's JupyterLab settings); as root (a container), with --allow-root.
LAB_SETTINGS := $(VENV)/share/jupyter/lab/settings
lab: $(STAMP)
	mkdir -p $(LAB_SETTINGS)
	cp scripts/jupyterlab-overrides.json $(LAB_SETTINGS)/overrides.json
	env -u BAI_LIB_PROGRESS $(BIN)/jupyter lab notebooks $(if $(filter 0,$(shell id -u)),--allow-root)

reproduce: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py $(if $(filter 1 yes true,$(REFRESH_TIMINGS)),--refresh-timings) $(NB)
	$(BIN)/jupyter-book build . $(JB_FLAGS)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

bench: $(STAMP)
	BAI_LIB_PROGRESS=1 $(BIN)/python benchmarks/bench_simulators.py
	$(BIN)/python benchmarks/bench_first_call.py

RUNS ?=
bench-sweep: $(STAMP)
	$(BIN)/python benchmarks/bench_sweep.py $(if $(RUNS),--runs $(RUNS))

screenshots: book
	$(BIN)/python scripts/screenshots.py --width 1280
	$(BIN)/python scripts/screenshots.py --width 400

lock: $(STAMP)
	(echo "# Exact pins of the whole stack (Python 3.11). Regenerate with: make lock"; \
	 $(BIN)/python -m pip freeze --all --exclude-editable | grep -v -i -E "^(bai.lib|pip)==") > requirements.lock

clean:
	rm -rf _build .pytest_cache
