"""Each family's column types, as the source names them and as the typed models read them."""

from __future__ import annotations

import json

import pytest

from python_udfs import source_types
from python_udfs.datastream.column_types import avro_column_type
from python_udfs.debezium.column_types import connect_column_type
from python_udfs.pgoutput.column_types import pg_column_type
from python_udfs.source_types import column_types_json, decimal_type
from python_udfs.spanner.column_types import spanner_column_type


def numeric_modifier(precision: int, scale: int) -> int:
    """PostgreSQL's atttypmod of numeric(precision, scale)."""
    return ((precision << 16) | scale) + 4


@pytest.mark.parametrize(
    ("oid", "modifier", "expected"),
    [
        (23, -1, ("int4", "int")),
        (20, -1, ("int8", "bigint")),
        (1700, numeric_modifier(10, 2), ("numeric(10,2)", "decimal(10,2)")),
        # wider than Spark's decimals, or unconstrained: the decimal text is kept
        (1700, numeric_modifier(60, 4), ("numeric(60,4)", "string")),
        (1700, -1, ("numeric", "string")),
        (1043, 44, ("varchar(40)", "string")),
        (1114, -1, ("timestamp", "timestamp_ntz")),
        (1184, 6 + 0, ("timestamptz", "timestamp")),
        (17, -1, ("bytea", "binary")),
        (3802, -1, ("jsonb", "string")),
        # an enum or a domain: only its OID is known here
        (16385, -1, ("oid 16385", "string")),
        (23, None, ("int4", "int")),
    ],
)
def test_pgoutput_types(oid, modifier, expected):
    assert pg_column_type(oid, modifier) == expected


@pytest.mark.parametrize(
    ("type_json", "expected"),
    [
        ({"code": "INT64"}, ("INT64", "bigint")),
        ({"code": "NUMERIC"}, ("NUMERIC", "decimal(38,9)")),
        ({"code": "NUMERIC", "type_annotation": "PG_NUMERIC"}, ("PG_NUMERIC", "string")),
        ({"code": "JSON", "type_annotation": "PG_JSONB"}, ("PG_JSONB", "string")),
        (
            {"code": "ARRAY", "array_element_type": {"code": "STRING"}},
            ("ARRAY<STRING>", "string"),
        ),
        ({"code": "TIMESTAMP"}, ("TIMESTAMP", "timestamp")),
        ({"code": "BYTES"}, ("BYTES", "binary")),
        ({"code": "PROTO"}, ("PROTO", "string")),
    ],
)
def test_spanner_types(type_json, expected):
    assert spanner_column_type(type_json) == expected


def test_connect_decimal_without_precision_takes_sparks_widest():
    schema = {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal"}
    schema["parameters"] = {"scale": "3"}
    assert connect_column_type(schema) == (
        "org.apache.kafka.connect.data.Decimal(?,3)",
        "decimal(38,3)",
    )
    assert connect_column_type({"type": "int16"}) == ("int16", "smallint")
    assert connect_column_type({"type": "struct", "name": "io.debezium.data.geometry.Point"}) == (
        "io.debezium.data.geometry.Point",
        "string",
    )


def test_avro_unions_with_two_types_stay_text():
    assert avro_column_type(["null", "long", "string"]) == ("union", "string")
    assert avro_column_type({"type": "enum", "name": "e", "symbols": ["a"]}) == ("enum", "string")
    assert avro_column_type({"type": "long", "logicalType": "local-timestamp-micros"}) == (
        "long:local-timestamp-micros",
        "timestamp_ntz",
    )


@pytest.mark.parametrize(
    ("precision", "scale", "expected"),
    [(10, 2, "decimal(10,2)"), (38, 38, "decimal(38,38)"), (39, 0, "string"), (5, 6, "string")],
)
def test_decimal_bounds(precision, scale, expected):
    assert decimal_type(precision, scale) == expected
    assert decimal_type(None, 2) == source_types.STRING


def test_column_types_text_is_the_same_for_the_same_schema_in_any_order():
    one = column_types_json({"b": ("int4", "int"), "a": (None, "string")})
    other = column_types_json({"a": (None, "string"), "b": ("int4", "int")})
    assert one == other
    assert json.loads(one) == {"a": [None, "string"], "b": ["int4", "int"]}
