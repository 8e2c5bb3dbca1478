# Two commands for a fresh machine: `make serve` and `make test`.
# Each creates .venv when absent and (re)installs the package when pyproject.toml changed:
# `make serve` only what serving needs (the runtime dependencies, stamp .installed-run), `make test`,
# `make test-fast` and `make lint` also the test and lint extras (stamp .installed-dev), so the first
# `make serve` on a fresh clone does not wait for pytest, Playwright, statsmodels, ruff and mypy.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
PORT ?= 8866
HOST ?= 127.0.0.1
DB ?=
DATASET ?=
PYTEST_ARGS ?=

.PHONY: serve test test-fast test-hostile bench check lint where clean-notebooks help

help:
	@echo "make serve   start the labelling playground (Voila) on http://$(HOST):$(PORT)"
	@echo "             HOST=0.0.0.0 for a class (prints a join link with its access token), PORT=8866,"
	@echo "             DB=labels.db or DB=postgresql://... (the label store), DATASET=NAME (an imported dataset)"
	@echo "make test    run the whole test suite, as CI does (browser tests need /usr/bin/chromium)"
	@echo "make test-fast  all but the slow and browser tests (the everyday loop)"
	@echo "make test-hostile  the hostile suite: every test tests/hostile_index.py names (CI runs it in make test)"
	@echo "make bench   run the benchmarks in bench/ and print their tables"
	@echo "make check   validate the shipped corpus and golden set"
	@echo "make lint    ruff and mypy as configured in pyproject.toml (CI runs it before the tests)"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[test,lint]"
	@touch $(DEV_STAMP)

serve: $(STAMP)
	$(BIN)/playground serve --host $(HOST) --port $(PORT) $(if $(DB),--db $(DB),) $(if $(DATASET),--dataset $(DATASET),)

test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

test-fast: $(DEV_STAMP)
	$(BIN)/python -m pytest -n 2 -m "not slow and not browser" $(PYTEST_ARGS)

test-hostile: $(DEV_STAMP)
	$(BIN)/python -m pytest -m hostile $(PYTEST_ARGS)

bench: $(DEV_STAMP)
	@for b in bench/bench_*.py; do echo "== $$b"; $(BIN)/python $$b || exit 1; echo; done

lint: $(DEV_STAMP)
	$(BIN)/ruff check playground tests bench scripts
	$(BIN)/mypy

# Where the `playground` command is after `make serve`/`make test` created .venv (it is not on PATH).
where:
	@test -x $(BIN)/playground || echo "(not there yet: make serve or make test creates $(BIN) first)"
	@echo "$(abspath $(BIN))/playground"
	@echo "run it as $(BIN)/playground --help, or: export PATH=\"$(abspath $(BIN)):\$$PATH\""

check: $(STAMP)
	$(BIN)/playground data check

clean-notebooks: $(DEV_STAMP)
	$(BIN)/python -m nbconvert --clear-output --inplace notebooks/*.ipynb
