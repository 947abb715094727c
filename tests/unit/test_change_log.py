"""The flatten functions' fields and the Spark UDF schemas are the same list."""

from __future__ import annotations

from python_udfs import datastream, debezium
from python_udfs.change_log import CHANGE_COLUMNS, FIELDS, spark_schema
from python_udfs.families import BY_NAME


def schema_names(schema: str) -> tuple[str, ...]:
    return tuple(field.split()[0] for field in schema.split(", "))


def test_spark_schema_is_ddl_of_the_columns():
    assert spark_schema((("a", "string"), ("m", "map<string,string>"))) == (
        "a string, m map<string,string>"
    )


def test_udf_schemas_name_exactly_the_fields_the_functions_return():
    assert schema_names(BY_NAME["debezium"].stages[0].schema) == debezium.FIELDS
    assert schema_names(BY_NAME["datastream"].stages[0].schema) == datastream.FIELDS
    assert datastream.FIELDS[: len(CHANGE_COLUMNS)] == FIELDS
    assert debezium.FIELDS[: len(CHANGE_COLUMNS)] == FIELDS


def test_every_family_returns_every_field_even_for_bad_input():
    assert set(datastream.flatten_event("not json", "s")) == set(datastream.FIELDS)
    assert set(debezium.flatten_record("not json", "s")) == set(debezium.FIELDS)
