"""docs/guarantees.md names, for each promise, the tests that prove it: every test, dbt test and
test file it names exists (a renamed or removed test must take its promise's line with it)."""

from __future__ import annotations

import re

from cdc_warehouse.settings import PROJECT_DIR

DOC = PROJECT_DIR / "docs" / "guarantees.md"
TESTS = PROJECT_DIR / "tests"
DBT_TESTS = TESTS / "dbt"
MODELS = PROJECT_DIR / "models"


def named_in_doc() -> set[str]:
    return set(re.findall(r"`([^`\s]+)`", DOC.read_text()))


def test_every_pytest_test_named_exists():
    names = {name for name in named_in_doc() if name.startswith("test_") and "." not in name}
    assert names
    defined = {
        match
        for path in TESTS.rglob("*.py")
        for match in re.findall(r"^def (test_\w+)", path.read_text(), re.MULTILINE)
    }
    assert names - defined == set()


def test_every_file_named_exists():
    paths = {name.split("::")[0] for name in named_in_doc() if name.startswith("tests/")}
    assert paths
    assert {
        path for path in paths if "*" not in path and not (PROJECT_DIR / path).exists()
    } == set()


def test_every_dbt_test_named_is_declared():
    """Generic tests by file name, named ones where a model's yml names them."""
    generic = {path.stem for path in (DBT_TESTS / "generic").glob("*.sql")}
    singular = {path.stem for path in DBT_TESTS.glob("*.sql")}
    named_in_yml = {
        match
        for path in MODELS.rglob("*.yml")
        for match in re.findall(r"name: (\w+)", path.read_text())
    }
    dbt_like = {
        name
        for name in named_in_doc()
        if re.fullmatch(r"[a-z_]+", name)
        and not name.startswith("test_")
        and (name in generic | singular or "_is_" in name)
    }
    assert {"one_current_row_per_key", "as_of_before_every_change_is_empty"} <= dbt_like
    assert dbt_like - (generic | singular | named_in_yml) == set()
