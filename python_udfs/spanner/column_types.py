"""Spanner's column types (a data change record's `column_types[].type`, e.g.
{"code": "ARRAY", "array_element_type": {...}}) and the Spark type a typed model reads each as
(python_udfs/source_types.py says how the decoders record them)."""

from __future__ import annotations

from typing import Any

from python_udfs.source_types import STRING, ColumnType

_SPANNER_SCALARS = {
    "BOOL": "boolean",
    "INT64": "bigint",
    "INT": "bigint",  # as Google's own AccountBalance example spells it
    "FLOAT64": "double",
    "FLOAT32": "float",
    "STRING": STRING,
    "BYTES": "binary",
    "DATE": "date",
    "TIMESTAMP": "timestamp",
    # GoogleSQL NUMERIC: 29 digits before the point, 9 after.
    "NUMERIC": "decimal(38,9)",
}


def spanner_type_name(type_json: Any) -> str:
    """`INT64`, `ARRAY<STRING>`, `PG_NUMERIC`...: Spanner's code with its annotations."""
    if not isinstance(type_json, dict):
        return str(type_json)
    code = str(type_json.get("code", "?"))
    annotation = type_json.get("type_annotation")
    if annotation and annotation != "TYPE_ANNOTATION_CODE_UNSPECIFIED":
        code = str(annotation)  # PG_NUMERIC, PG_JSONB: the PostgreSQL dialect's own types
    element = type_json.get("array_element_type")
    if code == "ARRAY" and element is not None:
        return f"ARRAY<{spanner_type_name(element)}>"
    return code


def spanner_column_type(type_json: Any) -> ColumnType:
    name = spanner_type_name(type_json)
    return name, _SPANNER_SCALARS.get(name, STRING)
