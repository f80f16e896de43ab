# Two commands matter: `make book` and `make test` (see README.md).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
JB_FLAGS := --builder html -W -n --keep-going
# Notebook runs must never write progress bars into stored outputs.
export BAI_LIB_PROGRESS := 0

.PHONY: help venv book test unit nbval reproduce bench lock screenshots clean

help:
	@echo "make book       build the HTML book from the stored notebook outputs -> _build/html"
	@echo "make test       unit tests + nbval over every notebook + hygiene + warning-free book build"
	@echo "make reproduce  re-execute every notebook from its .md source, then rebuild the book"
	@echo "make bench      print simulator throughput figures (benchmarks/)"
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

test: $(STAMP)
	$(BIN)/python -m pytest tests notebooks --nbval --nbval-current-env \
		--nbval-sanitize-with nbval_sanitize.cfg

unit: $(STAMP)
	$(BIN)/python -m pytest tests

nbval: $(STAMP)
	$(BIN)/python -m pytest notebooks --nbval --nbval-current-env --nbval-sanitize-with nbval_sanitize.cfg

reproduce: $(STAMP)
	$(BIN)/python scripts/execute_notebooks.py
	$(BIN)/jupyter-book build . $(JB_FLAGS)
	@echo "Book built: $(CURDIR)/_build/html/index.html"

bench: $(STAMP)
	BAI_LIB_PROGRESS=1 $(BIN)/python benchmarks/bench_simulators.py

screenshots: book
	$(BIN)/python scripts/screenshots.py 1280
	$(BIN)/python scripts/screenshots.py 400

lock: $(STAMP)
	(echo "# Exact pins of the whole stack (Python 3.11). Regenerate with: make lock"; \
	 $(BIN)/python -m pip freeze --all --exclude-editable | grep -v -i -E "^(bai.lib|pip)==") > requirements.lock

clean:
	rm -rf _build .pytest_cache
