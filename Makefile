# Two entry points for a fresh machine (README.md; the checks one by one: CONTRIBUTING.md):
#   make run    install everything, then land the bundled sample data and build the marts
#   make test   install everything, then run linters and every test
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Test worker processes, each with its own JVM (tests/conftest.py keeps a module on one worker).
TEST_WORKERS ?= 2

.PHONY: install run test lint unit clean

$(STAMP): pyproject.toml constraints.txt cdc_warehouse/table_format.py \
		cdc_warehouse/local_file_system.py $(wildcard cdc_warehouse/jvm/*/*/*.java)
	@$(PYTHON) -m cdc_warehouse.prereqs
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --constraint constraints.txt --editable '.[dev]'
	@# The Delta Lake jars, and the local file system's built from cdc_warehouse/jvm, into jars/
	@# (Spark's resolver is chatty: its output goes to a log).
	@$(BIN)/python -m cdc_warehouse.table_format > $(VENV)/jars.log 2>&1 \
		|| { cat $(VENV)/jars.log; exit 1; }
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/cdcw run

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/sqlfluff lint models macros tests/dbt
	$(BIN)/mypy

test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --no-loadscope-reorder

clean:
	rm -rf warehouse $(VENV)
