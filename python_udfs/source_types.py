"""Column types as each source names them, and the Spark type a typed model reads the column's
row_json value as. The decoders record a row's column types as `column_types` text (one JSON
object, column -> [source type, Spark type]); `cdc_source_columns` collects them per table, so
a column added, dropped or retyped upstream shows there, and the typed models take their types
from it. A type no rule here knows reads as `string`: its JSON text is kept whole, never lost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from python_udfs.json_values import canonical_json

STRING = "string"
# Spark's widest decimal; a wider source decimal stays text.
MAX_DECIMAL_PRECISION = 38

ColumnType = tuple[str | None, str]


def column_types_json(types: Mapping[str, ColumnType]) -> str:
    """The `column_types` text of a row: keys sorted, so equal schemas give equal text (the
    model groups rows by it before it looks inside)."""
    return canonical_json({name: list(pair) for name, pair in types.items()})


def decimal_type(precision: Any, scale: Any) -> str:
    """decimal(p,s) when Spark holds it; text otherwise (unknown or wider precision)."""
    try:
        p, s = int(precision), int(scale)
    except (TypeError, ValueError):
        return STRING
    if not 0 < p <= MAX_DECIMAL_PRECISION or not 0 <= s <= p:
        return STRING
    return f"decimal({p},{s})"


# --- Spanner: column_types[].type, e.g. {"code": "ARRAY", "array_element_type": {...}} ---

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


# --- Debezium: the Kafka Connect schema of a column (type, name, parameters) ---

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


# --- pgoutput: the type OID and type modifier of a Relation message's column ---

_PG_BUILTINS: dict[int, tuple[str, str]] = {
    16: ("bool", "boolean"),
    17: ("bytea", "binary"),
    18: ("char", STRING),
    19: ("name", STRING),
    20: ("int8", "bigint"),
    21: ("int2", "smallint"),
    23: ("int4", "int"),
    25: ("text", STRING),
    26: ("oid", "bigint"),
    114: ("json", STRING),
    700: ("float4", "float"),
    701: ("float8", "double"),
    1042: ("bpchar", STRING),
    1043: ("varchar", STRING),
    1082: ("date", "date"),
    1083: ("time", STRING),
    1114: ("timestamp", "timestamp_ntz"),
    1184: ("timestamptz", "timestamp"),
    1266: ("timetz", STRING),
    1186: ("interval", STRING),
    1700: ("numeric", STRING),
    2950: ("uuid", STRING),
    3802: ("jsonb", STRING),
    1000: ("bool[]", STRING),
    1005: ("int2[]", STRING),
    1007: ("int4[]", STRING),
    1016: ("int8[]", STRING),
    1009: ("text[]", STRING),
    1015: ("varchar[]", STRING),
    1021: ("float4[]", STRING),
    1022: ("float8[]", STRING),
    1231: ("numeric[]", STRING),
}
# A type modifier carries a 4-byte header; -1 means none.
_VARHDRSZ = 4


def pg_column_type(type_oid: int, type_modifier: int | None) -> ColumnType:
    """`numeric(10,2)`, `varchar(40)`, `int4`...; a type this table does not know (an enum, a
    domain) is named by its OID and read as text."""
    name, spark = _PG_BUILTINS.get(type_oid, (f"oid {type_oid}", STRING))
    modifier = -1 if type_modifier is None else type_modifier
    if type_oid == 1700 and modifier >= _VARHDRSZ:
        precision, scale = ((modifier - _VARHDRSZ) >> 16) & 0xFFFF, (modifier - _VARHDRSZ) & 0xFFFF
        return f"numeric({precision},{scale})", decimal_type(precision, scale)
    if type_oid in (1042, 1043) and modifier >= _VARHDRSZ:
        return f"{name}({modifier - _VARHDRSZ})", spark
    return name, spark


# --- Datastream Avro: the payload record's field schemas ---

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
