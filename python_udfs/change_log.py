"""The change-log row every family's flatten function returns (docs/decisions/001), named once
so the pure functions and the Spark UDF schemas cannot drift apart."""

from __future__ import annotations

CHANGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("error", "string"),
    ("source_table", "string"),
    ("key_json", "string"),
    ("op", "string"),
    ("row_image", "map<string,string>"),
    ("is_backfill", "boolean"),
    ("order_ts", "bigint"),
    ("sort_pos", "string"),
    ("committed_at", "bigint"),
    ("txn_id", "string"),
    ("event_id", "string"),
)

FIELDS: tuple[str, ...] = tuple(name for name, _ in CHANGE_COLUMNS)


def spark_schema(columns: tuple[tuple[str, str], ...]) -> str:
    """A DDL struct schema, as a UDF's result type is declared."""
    return ", ".join(f"{name} {data_type}" for name, data_type in columns)
