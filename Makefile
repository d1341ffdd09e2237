# The two commands of a fresh clone: `make run` and `make test`. Each bootstraps .venv from
# pyproject.toml with nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
PYTEST_ARGS ?=

.PHONY: run test lint format venv clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[dev]'
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP)

venv: $(STAMP)

run: $(STAMP)
	$(BIN)/salesplan serve

test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff format --check src tests
	$(BIN)/ruff check src tests
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format src tests
	$(BIN)/ruff check --fix src tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# Benchmarks (PostgreSQL + Redis + wrk; not part of the tests). See bench/README.md.
.PHONY: bench bench-quick
bench: $(STAMP)
	$(BIN)/python bench/run.py

bench-quick: $(STAMP)
	$(BIN)/python bench/run.py --quick

# A long schemathesis run against our own OpenAPI document (make test runs a bounded one).
.PHONY: fuzz
fuzz: $(STAMP)
	SALESPLAN_FUZZ_EXAMPLES=$${SALESPLAN_FUZZ_EXAMPLES:-200} $(BIN)/pytest -s tests/fuzz $(PYTEST_ARGS)
