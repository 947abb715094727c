"""Datastream's column types (an Avro payload record's field schemas; JSON events carry none) and
the Spark type a typed model reads each as (python_udfs/source_types.py says how the decoders
record them)."""

from __future__ import annotations

from typing import Any

from python_udfs.source_types import STRING, ColumnType, decimal_type

_AVRO_PRIMITIVES = {
    "boolean": "boolean",
    "int": "int",
    "long": "bigint",
    "float": "float",
    "double": "double",
    "string": STRING,
    "bytes": "binary",
}
_AVRO_LOGICAL = {
    "date": "date",
    "timestamp-millis": "timestamp",
    "timestamp-micros": "timestamp",
    "local-timestamp-millis": "timestamp_ntz",
    "local-timestamp-micros": "timestamp_ntz",
}
_DATETIME_FIELDS = {"date", "time"}


def avro_column_type(schema: Any) -> ColumnType:
    """A payload field's Avro schema, nullable unions unwrapped; Datastream's DATETIME record
    (date + time) is a wall clock without zone."""
    if isinstance(schema, list):
        branches = [branch for branch in schema if branch != "null"]
        if len(branches) == 1:
            return avro_column_type(branches[0])
        return "union", STRING
    if isinstance(schema, str):
        return schema, _AVRO_PRIMITIVES.get(schema, STRING)
    if not isinstance(schema, dict):
        return str(schema), STRING
    kind = str(schema.get("type"))
    logical = schema.get("logicalType")
    if logical == "decimal":
        precision, scale = schema.get("precision"), schema.get("scale", 0)
        return f"decimal({precision},{scale})", decimal_type(precision, scale)
    if logical:
        return f"{kind}:{logical}", _AVRO_LOGICAL.get(str(logical), STRING)
    if kind == "record":
        names = {field.get("name") for field in schema.get("fields", ())}
        if names == _DATETIME_FIELDS:
            return "datetime", "timestamp_ntz"
        return f"record {schema.get('name')}", STRING
    if kind in ("array", "map", "enum", "fixed"):
        return kind, STRING
    return kind, _AVRO_PRIMITIVES.get(kind, STRING)
