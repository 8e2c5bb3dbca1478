# Two commands for a fresh machine: `make serve` and `make test`.
# Each creates .venv when absent and (re)installs the package when pyproject.toml changed:
# `make serve` only what serving needs (the runtime dependencies, stamp .installed-run), `make test`,
# `make test-fast` and `make lint` also the test and lint extras (stamp .installed-dev), so the first
# `make serve` on a fresh clone does not wait for pytest, Playwright, statsmodels, ruff and mypy.

# bash with pipefail: pip's output goes through a filter, and a failing pip must still fail the step.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c

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

# pip's lines that say nothing about this install: a machine whose pip configuration names package folders that
# do not exist warns once per package and folder ("Location ... is ignored"), and a package already installed says
# so; pip's own progress (Collecting, Downloading, Installing collected packages) is shown.
PIP_NOISE := is ignored: it is neither a file nor a directory|^Requirement already satisfied
PIP_SHOW := { grep -v -E '$(PIP_NOISE)' || test $$? -eq 1; }
# The number of packages an extra (or the runtime, "") names in pyproject.toml.
COUNT = $$($(BIN)/python -c 'import tomllib; p = tomllib.load(open("pyproject.toml", "rb"))["project"]; \
	print(sum(len(p["optional-dependencies"][x]) for x in "$(1)".split(",") if x) or len(p["dependencies"]))')

$(STAMP): pyproject.toml
	@start=$$(date +%s); \
	if test -x $(BIN)/python; then echo "make: pyproject.toml changed: updating $(VENV)"; \
	else echo "make: first run: creating $(VENV) and installing the playground (about 3 minutes on a fresh machine)"; \
	  $(PYTHON) -m venv $(VENV) || exit 1; fi; \
	echo "make: upgrading pip"; \
	$(BIN)/python -m pip install --quiet --upgrade pip 2>&1 | $(PIP_SHOW) || exit 1; \
	echo "make: installing the playground and its $(call COUNT,) runtime dependencies (with theirs, about 125 packages)"; \
	$(BIN)/python -m pip install -e . 2>&1 | $(PIP_SHOW) || exit 1; \
	echo "make: $(VENV) ready in $$(( $$(date +%s) - start )) s"; \
	touch $(STAMP)

$(DEV_STAMP): $(STAMP)
	@start=$$(date +%s); \
	echo "make: installing the $(call COUNT,test,lint) test and lint tools (pytest, Playwright, ruff, mypy, ...)"; \
	$(BIN)/python -m pip install -e ".[test,lint]" 2>&1 | $(PIP_SHOW) || exit 1; \
	echo "make: test tools ready in $$(( $$(date +%s) - start )) s"; \
	touch $(DEV_STAMP)

# DB= is a path from the folder make runs in (the repository), or a postgresql:// URL; serve resolves it there.
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
