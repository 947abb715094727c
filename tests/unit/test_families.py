"""The family registry (python_udfs/families.py) and the SQL that reads it: the macro
`source_families` renders the registry's lists, the models it names exist, and each decoding
stage's UDF is called as its stage declares."""

from __future__ import annotations

import re

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from python_udfs.change_log import CHANGE_COLUMNS
from python_udfs.families import FAMILIES, Family
from tests.project_macros import render_macro

MODELS = PROJECT_DIR / "models"


def macro_list(role: str | None = None) -> list[str]:
    call = f"source_families('{role}')" if role else "source_families()"
    return render_macro("change_log/source_families.sql", call).split(",")


def model_sql(name: str) -> str:
    (path,) = MODELS.rglob(f"{name}.sql")
    return path.read_text()


# What each role of the macro renders, from the registry.
ROLES = {
    None: [family.name for family in FAMILIES],
    "keyed_changes": [f"{f.name}:{f.models.changes}" for f in FAMILIES if f.models.changes_keyed],
    "change_rows": [f"{f.name}:{f.models.changes}" for f in FAMILIES if not f.models.changes_keyed],
    "decoded": [f"{f.name}:{model}" for f in FAMILIES for model in f.models.decoded],
    "truncates": [f"{f.name}:{f.truncates}" for f in FAMILIES if f.truncates],
    "typed_changes": [
        f"{f.name}:{f.models.decoded[0]}" for f in FAMILIES if f.column_types == "changes"
    ],
    "own_column_types": [f.name for f in FAMILIES if f.column_types == "own"],
    "pending": [f.name for f in FAMILIES if f.pending],
    "snapshots": [f.name for f in FAMILIES if f.snapshots],
}


@pytest.mark.parametrize("role", ROLES)
def test_the_macro_renders_the_registry(role):
    assert macro_list(role) == ROLES[role]


def test_an_unknown_role_is_a_compiler_error():
    with pytest.raises(Exception, match="no role nothing"):
        render_macro(
            "change_log/source_families.sql",
            "source_families('nothing')",
            exceptions={"raise_compiler_error": _raise},
        )


def _raise(message: str) -> None:
    raise ValueError(message)


def test_names_udfs_and_models_are_unique():
    names = [family.name for family in FAMILIES]
    udfs = [stage.udf for family in FAMILIES for stage in family.all_stages]
    assert len(set(names)) == len(names)
    assert len(set(udfs)) == len(udfs)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_every_model_the_registry_names_exists(family: Family):
    named = {
        family.models.staging,
        *family.models.decoded,
        family.models.changes,
        *([family.truncates] if family.truncates else []),
        *([family.snapshots.headers, family.snapshots.rows] if family.snapshots else []),
    }
    for model in named:
        assert model_sql(model), model
    assert family.models.staging == f"stg_{family.name}__lines"
    assert f"'{family.name}_lines'" in model_sql(family.models.staging)


@pytest.mark.parametrize("family", FAMILIES, ids=lambda family: family.name)
def test_the_first_stage_reads_a_line_and_the_last_makes_changes(family: Family):
    assert family.stages[0].unit[0] == "line"
    assert [stage.makes_changes for stage in family.stages][-1]
    assert not any(stage.makes_changes for stage in family.stages[:-1])
    change_types, columns = dict(CHANGE_COLUMNS), dict(family.stages[-1].columns)
    assert "error" in columns
    assert all(columns[name] == change_types[name] for name in columns.keys() & change_types)


@pytest.mark.parametrize(
    "family", [f for f in FAMILIES if f.snapshots], ids=lambda family: family.name
)
def test_snapshot_stages_read_a_line_then_a_line_with_its_header_and_are_quarantined(
    family: Family,
):
    assert family.snapshots is not None
    header, row = family.snapshots.header, family.snapshots.row
    assert header.unit == ("line",) and not header.makes_changes
    assert row.unit == ("line", "header_json") and row.makes_changes
    assert dict(row.columns) == dict(CHANGE_COLUMNS)
    assert {family.snapshots.headers, family.snapshots.rows} <= set(family.models.decoded)


@pytest.mark.parametrize(
    "stage",
    [stage for family in FAMILIES for stage in family.all_stages],
    ids=lambda stage: stage.udf,
)
def test_each_udf_is_called_with_its_unit_the_source_name_and_its_sql_settings(stage):
    """Some model calls the UDF with as many arguments as the stage reads: its unit's columns,
    the source name, then the settings the SQL passes."""
    calls = [
        arguments
        for path in MODELS.rglob("*.sql")
        for arguments in _calls(path.read_text(), stage.udf)
    ]
    assert calls, f"no model calls {stage.udf}"
    for arguments in calls:
        assert len(arguments) == len(stage.unit) + 1 + len(stage.sql_settings), arguments
        assert arguments[len(stage.unit)].endswith("source_name"), arguments


def _calls(sql: str, udf: str) -> list[list[str]]:
    """The top-level arguments of each call of `udf` in `sql` (a call inside a quoted Jinja
    argument included)."""
    found = []
    for match in re.finditer(rf"\b{udf}\(", sql):
        depth, start, arguments = 1, match.end(), []
        index = start
        while depth:
            char = sql[index]
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
            elif char == "," and depth == 1:
                arguments.append(sql[start:index])
                start = index + 1
            index += 1
        arguments.append(sql[start : index - 1])
        found.append([re.sub(r"[\s'~]+", " ", argument).strip() for argument in arguments])
    return found


@pytest.mark.parametrize("family", [f for f in FAMILIES if f.pending], ids=lambda f: f.name)
def test_a_family_with_pending_state_counts_it_in_source_freshness(family: Family):
    assert f"{family.name}_pending as (" in model_sql("cdc_source_freshness")


@pytest.mark.parametrize(
    "family", [f for f in FAMILIES if f.column_types == "own"], ids=lambda f: f.name
)
def test_a_family_with_its_own_column_types_reads_them_in_source_columns(family: Family):
    assert f"{family.name}_schemas as (" in model_sql("cdc_source_columns")
