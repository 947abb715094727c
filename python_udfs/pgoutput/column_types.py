"""PostgreSQL's column types (the type OID and type modifier of a Relation message's column) and
the Spark type a typed model reads each as (python_udfs/source_types.py says how the decoders
record them)."""

from __future__ import annotations

from python_udfs.source_types import STRING, ColumnType, decimal_type

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
