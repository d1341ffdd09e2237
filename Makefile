# The two commands of a fresh clone: `make run` and `make test`. Each bootstraps .venv from
# pyproject.toml with nothing but python3.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The server's and the Python client's (clients/python) project files: a change reinstalls.
SUM := $(shell cat pyproject.toml clients/python/pyproject.toml 2>/dev/null | cksum | cut -d' ' -f1)
# `make run` installs the runtime only; `make test`, `lint` and `format` add the dev extras
# (pytest, ruff, mypy, Playwright) and the Python client (clients/python, editable: its tests
# are in tests/client) to the same .venv.
RUNTIME := $(VENV)/.installed-runtime-$(SUM)
STAMP := $(VENV)/.installed-dev-$(SUM)
PYTEST_ARGS ?=
# openapi-python-client (tests/openapi/test_generated_client.py) pins typer below the version
# our CLI needs, so it lives in a venv of its own: only its command is used, from the tests.
CODEGEN := .venv-codegen
CODEGEN_SPEC := openapi-python-client>=0.29,<0.30
CODEGEN_STAMP := $(CODEGEN)/.installed-$(shell echo '$(CODEGEN_SPEC)' | cksum | cut -d' ' -f1)
# `make run PORT=8200 HOST=0.0.0.0`: links and discovery documents follow (SALESPLAN_PUBLIC_URL
# overrides them behind a proxy).
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test lint format venv clean client

$(RUNTIME): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e .
	@rm -f $(VENV)/.installed-runtime-* $(VENV)/.installed-[0-9]*
	@touch $(RUNTIME)

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[dev]'
	@$(BIN)/python -m pip install --quiet -e ./clients/python
	@rm -f $(VENV)/.installed-*
	@touch $(STAMP) $(RUNTIME)

$(CODEGEN_STAMP):
	@test -x $(CODEGEN)/bin/python || $(PYTHON) -m venv $(CODEGEN)
	@$(CODEGEN)/bin/python -m pip install --quiet '$(CODEGEN_SPEC)'
	@rm -f $(CODEGEN)/.installed-*
	@touch $(CODEGEN_STAMP)

venv: $(STAMP) $(CODEGEN_STAMP)

run: $(RUNTIME)
	$(BIN)/salesplan serve --host $(HOST) --port $(PORT)

# Two worker processes (pytest-xdist), a test file's tests on one worker: each worker has its own
# data folder, SQLite files and PostgreSQL databases, and the Redis tests their own key prefixes.
# `make test PYTEST_WORKERS=0` runs in this process alone.
PYTEST_WORKERS ?= 2
test: $(STAMP) $(CODEGEN_STAMP)
	$(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadfile $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff format --check src tests clients/python
	$(BIN)/ruff check src tests clients/python
	$(BIN)/mypy
	cd clients/python && ../../$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff format src tests clients/python
	$(BIN)/ruff check --fix src tests clients/python

# The Python client's models and method table, from this server's OpenAPI document (a test in
# tests/client fails until they are regenerated after a change of the API).
client: $(STAMP)
	$(BIN)/python clients/python/generate.py

clean:
	rm -rf $(VENV) $(CODEGEN) .pytest_cache .mypy_cache .ruff_cache

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
