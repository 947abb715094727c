"""Debezium's column types (the Kafka Connect schema of a column: type, name, parameters) and the
Spark type a typed model reads each as (python_udfs/source_types.py says how the decoders record
them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from python_udfs.source_types import MAX_DECIMAL_PRECISION, STRING, ColumnType, decimal_type

_CONNECT_PHYSICAL = {
    "int8": "tinyint",
    "int16": "smallint",
    "int32": "int",
    "int64": "bigint",
    "float": "float",
    "float32": "float",
    "double": "double",
    "float64": "double",
    "boolean": "boolean",
    "string": STRING,
    "bytes": "binary",
}
# The decoder renders these as: dates YYYY-MM-DD, wall clocks without zone, zoned instants in
# UTC (json_values); times of day stay text.
_CONNECT_SEMANTIC = {
    "io.debezium.time.Date": "date",
    "org.apache.kafka.connect.data.Date": "date",
    "io.debezium.time.Timestamp": "timestamp_ntz",
    "org.apache.kafka.connect.data.Timestamp": "timestamp_ntz",
    "io.debezium.time.MicroTimestamp": "timestamp_ntz",
    "io.debezium.time.NanoTimestamp": "timestamp_ntz",
    "io.debezium.time.ZonedTimestamp": "timestamp",
}
_CONNECT_DECIMAL = "org.apache.kafka.connect.data.Decimal"


def connect_column_type(schema: Mapping[str, Any]) -> ColumnType:
    """Source type: the semantic name when there is one (with a decimal's precision and
    scale), else the physical type; arrays, maps and structs read as JSON text."""
    physical = str(schema.get("type"))
    name = schema.get("name")
    if name == _CONNECT_DECIMAL:
        parameters = schema.get("parameters") or {}
        precision = parameters.get("connect.decimal.precision")
        scale = parameters.get("scale")
        spark = decimal_type(precision if precision is not None else MAX_DECIMAL_PRECISION, scale)
        return f"{name}({precision if precision is not None else '?'},{scale})", spark
    if name:
        return str(name), _CONNECT_SEMANTIC.get(str(name), STRING)
    return physical, _CONNECT_PHYSICAL.get(physical, STRING)
