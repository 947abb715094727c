"""The change log's columns as the SQL names them (macros/change_log/change_log_columns.sql):
the row every family's flatten returns (python_udfs/change_log.py) and the columns the yml
documents."""

from __future__ import annotations

import yaml

from cdc_warehouse.settings import PROJECT_DIR
from python_udfs.change_log import CHANGE_COLUMNS
from tests.project_macros import render_macro

LINEAGE = ["source_system", "source_name"]
LANDING = ["file_path", "line_number", "landing_run"]
STORED = ["image_has_unknown_values", "key_cohort"]
# A row with an error is quarantined, never a change: the change log carries the rest.
CHANGE = [name for name, _ in CHANGE_COLUMNS if name != "error"]


def macro_columns(call: str) -> list[str]:
    return render_macro("change_log", call).split(",")


def documented_columns(model: str) -> list[str]:
    entries = yaml.safe_load((PROJECT_DIR / "models/intermediate/cdc/_cdc.yml").read_text())
    (entry,) = (entry for entry in entries["models"] if entry["name"] == model)
    return [column["name"] for column in entry["columns"]]


def test_change_fields_are_change_columns_without_error():
    assert macro_columns("change_fields()") == CHANGE


def test_a_change_log_row_is_its_source_the_change_and_its_landing():
    assert macro_columns("change_log_columns()") == LINEAGE + CHANGE + LANDING
    assert macro_columns("change_log_columns(stored=true)") == LINEAGE + CHANGE + LANDING + STORED


def test_the_yml_documents_the_macros_columns_in_order():
    assert documented_columns("int_cdc__source_changes") == macro_columns("change_log_columns()")
    assert documented_columns("int_cdc__change_log") == macro_columns(
        "change_log_columns(stored=true)"
    )


def test_a_select_list_names_every_column_in_order_with_the_values_given():
    call = "change_log_select('t', {'op': \"'delete'\"}, indent=4)"
    lines = render_macro("change_log", call).split(",\n    ")
    expected = [f"t.{column}" for column in macro_columns("change_log_columns()")]
    expected[expected.index("t.op")] = "'delete' as op"
    assert lines == expected
