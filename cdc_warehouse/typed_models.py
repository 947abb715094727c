"""`cdcw generate-typed-models`: the typed models of every source table that has none, written
from `cdc_source_columns` as dbt-codegen's generate_base_model would write a base model: one
`.sql` line per model and their yml, each column with the Spark type of its source's type.
Tables that already have a typed model (any yml under models/ naming them in
`meta.cdc_source`) are left alone, so hand-written types keep winning; run it again after new
tables appear. The pure part (what to write) is apart from the query, for unit tests."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cdc_warehouse.files import replace_text

# The columns a typed model takes from cdc_current or cdc_history, in the order
# macros/marts/typed_system_columns.sql gives them; tests/unit/test_typed_models.py
# ties the two.
SYSTEM_COLUMNS = {
    "current": (
        "source_name",
        "key_json",
        "row_json",
        "unavailable_columns",
        "last_op",
        "last_committed_at",
        "last_landing_run",
    ),
    "history": (
        "source_name",
        "key_json",
        "row_json",
        "unavailable_columns",
        "op",
        "valid_from",
        "valid_to",
        "is_current",
        "last_landing_run",
    ),
}
MODEL_SQL = {"current": "{{ typed_current_state() }}\n", "history": "{{ typed_history() }}\n"}
GENERATED_DIR = Path("models") / "marts" / "typed" / "generated"
GENERATED_YML = "_generated.yml"
YML_HEADER = """\
# Written by `cdcw generate-typed-models` from cdc_source_columns (README, "Typed models"):
# edit freely; a column's data_type here wins over the type its source names, and a table
# named here is never written again.
"""


@dataclass(frozen=True)
class SourceTable:
    source_system: str
    source_name: str
    source_table: str

    def as_meta(self) -> dict[str, str]:
        return {
            "source_system": self.source_system,
            "source_name": self.source_name,
            "source_table": self.source_table,
        }


@dataclass(frozen=True)
class SourceColumn:
    name: str
    source_type: str | None
    spark_type: str


def typed_sources(models_dir: Path) -> set[SourceTable]:
    """The source tables the yml files under `models_dir` already give a typed model."""
    found = set()
    for path in sorted(models_dir.rglob("*.yml")):
        document = yaml.safe_load(path.read_text()) or {}
        for model in document.get("models") or []:
            meta = (model.get("config") or {}).get("meta") or model.get("meta") or {}
            source = meta.get("cdc_source")
            if isinstance(source, dict):
                found.add(
                    SourceTable(
                        str(source.get("source_system")),
                        str(source.get("source_name")),
                        str(source.get("source_table")),
                    )
                )
    return found


def _identifier(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_") or "table"


def model_names(tables: Iterable[SourceTable]) -> dict[SourceTable, str]:
    """`<source_name>__<table>`, e.g. `mysql_shop__shop_orders`; tables of two families that
    would share a name are prefixed with their family."""
    tables = sorted(set(tables), key=lambda t: (t.source_system, t.source_name, t.source_table))
    base = {t: f"{_identifier(t.source_name)}__{_identifier(t.source_table)}" for t in tables}
    counts: dict[str, int] = {}
    for name in base.values():
        counts[name] = counts.get(name, 0) + 1
    return {
        table: f"{table.source_system}__{name}" if counts[name] > 1 else name
        for table, name in base.items()
    }


def column_description(table: SourceTable, column: SourceColumn) -> str:
    if column.source_type is None:
        return f"{column.name} (the {table.source_system} source names no type: read as text)."
    return f"{column.name} ({column.source_type} at the source)."


def model_entries(
    table: SourceTable, name: str, columns: list[SourceColumn]
) -> list[dict[str, Any]]:
    """The yml entries of the table's two models."""
    what = f"{table.source_system} {table.source_name}, {table.source_table}"
    descriptions = {
        "current": f"Current rows of {what}, typed from the source's column types.",
        "history": f"Every version of the rows of {what}, typed from the source's column types.",
    }
    entries = []
    for state, system_columns in SYSTEM_COLUMNS.items():
        documented: list[dict[str, Any]] = [
            {
                "name": column.name,
                "description": column_description(table, column),
                "data_type": column.spark_type,
            }
            for column in sorted(columns, key=lambda c: c.name)
            if column.name not in system_columns
        ]
        documented += [
            {"name": column, "description": f"{{{{ doc('typed_{column}') }}}}"}
            for column in system_columns
        ]
        entries.append(
            {
                "name": f"{name}_{state}",
                "description": descriptions[state],
                "config": {"materialized": "view", "meta": {"cdc_source": table.as_meta()}},
                "data_tests": ["typed_values_fit"],
                "columns": documented,
            }
        )
    return entries


def plan(
    columns: Mapping[SourceTable, list[SourceColumn]], typed: set[SourceTable]
) -> dict[str, list[dict[str, Any]]]:
    """Model name -> yml entries, for the tables without a typed model."""
    untyped = {table: cols for table, cols in columns.items() if table not in typed}
    names = model_names(untyped)
    return {
        names[table]: model_entries(table, names[table], cols) for table, cols in untyped.items()
    }


def write(out_dir: Path, planned: Mapping[str, list[dict[str, Any]]]) -> list[Path]:
    """The models' `.sql` files and their entries appended to the folder's yml; returns what was
    written. The yml comes last: a process killed before it leaves models without entries,
    which the next run writes again, never a yml cut short."""
    out_dir.mkdir(parents=True, exist_ok=True)
    yml_path = out_dir / GENERATED_YML
    document = yaml.safe_load(yml_path.read_text()) if yml_path.exists() else None
    document = document or {"version": 2, "models": []}
    written = []
    for name in sorted(planned):
        for entry in planned[name]:
            state = entry["name"].removeprefix(f"{name}_")
            sql_path = out_dir / f"{entry['name']}.sql"
            replace_text(sql_path, MODEL_SQL[state])
            written.append(sql_path)
            document["models"].append(entry)
    if written:
        replace_text(yml_path, YML_HEADER + yaml.safe_dump(document, sort_keys=False, width=100))
        written.append(yml_path)
    return written


def source_columns(spark: Any, internal_schema: str) -> dict[SourceTable, list[SourceColumn]]:
    """Each source table's columns with the type the typed models read them as
    (int_cdc__column_types)."""
    rows = spark.table(f"{internal_schema}.int_cdc__column_types").collect()
    tables: dict[SourceTable, list[SourceColumn]] = {}
    for row in rows:
        table = SourceTable(row.source_system, row.source_name, row.source_table)
        tables.setdefault(table, []).append(
            SourceColumn(row.column_name, row.source_type, row.spark_type)
        )
    return tables


def generate(spark: Any, internal_schema: str, project_dir: Path) -> list[Path]:
    """Write the typed models of the tables in cdc_source_columns that have none under
    `project_dir`'s models; returns the files written."""
    columns = source_columns(spark, internal_schema)
    planned = plan(columns, typed_sources(project_dir / "models"))
    return write(project_dir / GENERATED_DIR, planned)
