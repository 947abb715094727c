"""The dbt-expectations checks in the models' yml parse once the package is installed, and stay
off without it: each is declared where the package's test takes it (a test of one column under
that column, any other on the model: dbt passes `column_name` to a test declared under a column,
and the package's other tests reject it), and each is enabled only by the var. Written for
metaplane/dbt_expectations 0.10.9 (docs/analysts.md, "Optional: dbt-expectations"); its column
tests are the `expect_column_*` ones other than those of a pair or of several columns."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import yaml

from cdc_warehouse.settings import PROJECT_DIR
from cdc_warehouse.spark import SQL_CONF

PACKAGE = "dbt_expectations."
ENABLED_BY_VAR = "{{ var('cdc_enable_dbt_expectations') }}"
# Tests named expect_column_* that take several columns, not one.
SEVERAL_COLUMNS = ("expect_column_pair_", "expect_compound_columns_", "expect_multicolumn_")


def project() -> dict:
    return yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())


def declared_tests(path: Path) -> Iterator[tuple[str, str, dict]]:
    """(where, test name, its arguments and config) for every test in one yml: where is
    'model' or 'column'."""
    document = yaml.safe_load(path.read_text()) or {}
    for model in document.get("models", []):
        for level, owner in [("model", model), *(("column", c) for c in model.get("columns", []))]:
            for test in owner.get("tests", []) + owner.get("data_tests", []):
                if isinstance(test, dict):
                    (name, spec), *_ = test.items()
                    yield level, name, spec or {}


def expectation_tests() -> list[tuple[str, str, dict]]:
    return [
        (level, name, spec)
        for path in sorted((PROJECT_DIR / "models").rglob("*.yml"))
        for level, name, spec in declared_tests(path)
        if name.startswith(PACKAGE)
    ]


def is_column_test(name: str) -> bool:
    test = name.removeprefix(PACKAGE)
    return test.startswith("expect_column_") and not test.startswith(SEVERAL_COLUMNS)


def test_the_checks_cover_both_levels():
    levels = {level for level, _, _ in expectation_tests()}
    assert levels == {"model", "column"}


def test_each_check_is_declared_where_its_test_takes_it():
    misplaced = [
        (level, name)
        for level, name, _ in expectation_tests()
        if (level == "column") != is_column_test(name)
    ]
    assert misplaced == []


def test_each_check_is_enabled_by_the_var_only():
    assert project()["vars"]["cdc_enable_dbt_expectations"] is False
    assert [
        name for _, name, spec in expectation_tests() if spec["config"]["enabled"] != ENABLED_BY_VAR
    ] == []


def test_dbt_date_reads_now_in_the_sessions_time_zone():
    """The recency and future-time checks compare source commit times (UTC, as the session
    reads them) with dbt_date's "now"."""
    assert project()["vars"]["dbt_date:time_zone"] == SQL_CONF["spark.sql.session.timeZone"]
