"""Debezium PostgreSQL records to change-log rows: value typing, placeholders, keys, ops, order
and errors."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from python_udfs.debezium import FIELDS, flatten_record
from python_udfs.debezium.transactions import TRANSACTION_COLUMNS
from python_udfs.decoding import DecodeSettings
from python_udfs.json_values import pos_uint

SERVER = "dbserver1"
TOPIC = "dbserver1.inventory.customers"
DEFAULT = ["__debezium_unavailable_value"]
TRANSACTION_FIELDS = tuple(name for name, _ in TRANSACTION_COLUMNS)
DEFAULT_B64 = base64.b64encode(b"__debezium_unavailable_value").decode()

# The source block of the Debezium TOAST blog post's event, plus the microsecond and nanosecond
# commit times that newer connector versions add.
SOURCE = {
    "version": "0.10.0.Final",
    "connector": "postgresql",
    "name": "dbserver1",
    "ts_ms": 1570448151151,
    "snapshot": "false",
    "db": "sourcedb",
    "schema": "inventory",
    "table": "customers",
    "txId": 627,
    "lsn": 34650016,
    "xmin": None,
}

# The blog post's update: default replica identity, unchanged TOASTed biography.
BLOG_UPDATE = {
    "before": None,
    "after": {
        "id": 1004,
        "first_name": "Dana",
        "last_name": "Kretchmar",
        "email": "annek@noanswer.org",
        "biography": "__debezium_unavailable_value",
    },
    "source": SOURCE,
    "op": "u",
    "ts_ms": 1570448151611,
}


def col(name: str, kind: str, semantic: str | None = None, **extra: Any) -> dict[str, Any]:
    """One Kafka Connect field schema as JsonConverter writes it."""
    schema: dict[str, Any] = {"type": kind, "optional": True, "field": name}
    if semantic is not None:
        schema["name"] = semantic
    schema.update(extra)
    return schema


ID = col("id", "int32", optional=False)


def value_schema(columns: list[dict[str, Any]]) -> dict[str, Any]:
    row = {"type": "struct", "fields": columns, "optional": True, "name": f"{TOPIC}.Value"}
    source_fields = [
        col("version", "string"),
        col("connector", "string"),
        col("name", "string"),
        col("ts_ms", "int64"),
        col("snapshot", "string", "io.debezium.data.Enum"),
        col("db", "string"),
        col("schema", "string"),
        col("table", "string"),
        col("txId", "int64"),
        col("lsn", "int64"),
        col("xmin", "int64"),
    ]
    return {
        "type": "struct",
        "name": f"{TOPIC}.Envelope",
        "optional": False,
        "fields": [
            {**row, "field": "before"},
            {**row, "field": "after"},
            {
                "type": "struct",
                "fields": source_fields,
                "optional": False,
                "name": "io.debezium.connector.postgresql.Source",
                "field": "source",
            },
            col("op", "string", optional=False),
            col("ts_ms", "int64"),
        ],
    }


def key_schema(columns: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "struct", "fields": columns, "optional": False, "name": f"{TOPIC}.Key"}


def payload(op: str = "c", before=None, after=None, **source: Any) -> dict[str, Any]:
    return {
        "before": before,
        "after": after,
        "source": {**SOURCE, **source},
        "op": op,
        "ts_ms": 1570448151611,
    }


def enveloped(body: Any, schema: dict[str, Any]) -> str:
    return json.dumps({"schema": schema, "payload": body})


def kcat(value: str | None, key: str | None = '{"id": 1}', topic: str = TOPIC, offset=7) -> str:
    """One line as `kcat -J` prints it: key and payload are JSON text or null."""
    return json.dumps(
        {
            "topic": topic,
            "partition": 0,
            "offset": offset,
            "tstype": "create",
            "ts": 1570448151700,
            "broker": 1,
            "key": key,
            "payload": value,
        }
    )


def flatten(line: str, placeholders=DEFAULT, declared=None) -> dict[str, Any]:
    row = flatten_record(
        line, SERVER, DecodeSettings(declared_keys=declared, placeholders=placeholders)
    )
    assert set(row) == set(FIELDS)
    return row


def typed_image(columns, after, before=None, op="c", placeholders=DEFAULT) -> dict[str, Any]:
    """row_image of an enveloped change of `columns` (the id column is added)."""
    body = payload(op, before=before, after=after)
    row = flatten(kcat(enveloped(body, value_schema([ID, *columns]))), placeholders)
    assert row["error"] is None, row["error"]
    return row["row_image"]


def error_of(line: str, **kwargs: Any) -> str:
    row = flatten(line, **kwargs)
    assert row["error"] is not None
    assert all(row[field] is None for field in FIELDS if field != "error")
    return row["error"]


def unscaled(n: int) -> str:
    """Java BigInteger.toByteArray: minimal big-endian two's complement, base64 by JsonConverter."""
    return base64.b64encode(n.to_bytes(n.bit_length() // 8 + 1, "big", signed=True)).decode()


# --- the documented example --------------------------------------------------------------


def test_blog_update_without_envelope():
    row = flatten(kcat(json.dumps(BLOG_UPDATE), key='{"id": 1004}'))
    assert row == {
        "error": None,
        "source_table": "inventory.customers",
        "key_json": '{"id":1004}',
        "op": "update",
        "row_image": {
            "id": "1004",
            "first_name": '"Dana"',
            "last_name": '"Kretchmar"',
            "email": '"annek@noanswer.org"',
            "biography": None,
        },
        "is_backfill": False,
        "order_ts": None,
        "sort_pos": "00000000000034650016",
        "committed_at": 1570448151151000,
        "txn_id": "tx:627",
        "event_id": "lsn:34650016:update",
        # Without the schema envelope a record names no types.
        "column_types": None,
        # Without a transaction block it applies as it lands (test_debezium_transactions.py).
        **dict.fromkeys(TRANSACTION_FIELDS),
    }


# --- value typing with the envelope ---------------------------------------------------------

DATE = "io.debezium.time.Date"
TIME = "io.debezium.time.Time"
MICRO_TIME = "io.debezium.time.MicroTime"
NANO_TIME = "io.debezium.time.NanoTime"
TIMESTAMP = "io.debezium.time.Timestamp"
MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
NANO_TIMESTAMP = "io.debezium.time.NanoTimestamp"
ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"
DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
JSON = "io.debezium.data.Json"
VARIABLE_DECIMAL_FIELDS = [col("scale", "int32", optional=False), col("value", "bytes")]


@pytest.mark.parametrize(
    ("schema", "raw", "expected"),
    [
        (col("v", "int32", DATE), 0, '"1970-01-01"'),
        (col("v", "int32", DATE), -1, '"1969-12-31"'),
        (col("v", "int32", DATE), 19723, '"2024-01-01"'),
        (col("v", "int32", "org.apache.kafka.connect.data.Date"), 19723, '"2024-01-01"'),
        (col("v", "int32", TIME), 45296789, '"12:34:56.789000"'),
        (col("v", "int32", "org.apache.kafka.connect.data.Time"), 1, '"00:00:00.001000"'),
        (col("v", "int64", MICRO_TIME), 45296789012, '"12:34:56.789012"'),
        (col("v", "int64", MICRO_TIME), 86_400_000_000, '"24:00:00.000000"'),
        (col("v", "int64", NANO_TIME), 45296789012345, '"12:34:56.789012"'),
        (col("v", "int64", TIMESTAMP), 1704067200123, '"2024-01-01T00:00:00.123000"'),
        (
            col("v", "int64", "org.apache.kafka.connect.data.Timestamp"),
            1704067200123,
            '"2024-01-01T00:00:00.123000"',
        ),
        (col("v", "int64", MICRO_TIMESTAMP), 1704067200123456, '"2024-01-01T00:00:00.123456"'),
        (col("v", "int64", MICRO_TIMESTAMP), -1, '"1969-12-31T23:59:59.999999"'),
        (col("v", "int64", NANO_TIMESTAMP), 1704067200123456789, '"2024-01-01T00:00:00.123456"'),
        (col("v", "int64", NANO_TIMESTAMP), -1, '"1969-12-31T23:59:59.999999"'),
        (col("v", "int64", MICRO_TIMESTAMP), 2**63 - 1, '"infinity"'),
        (col("v", "int64", MICRO_TIMESTAMP), -(2**63), '"-infinity"'),
        (
            col("v", "string", ZONED_TIMESTAMP),
            "2024-01-01T02:00:00.123456789+02:00",
            '"2024-01-01T00:00:00.123456Z"',
        ),
        (
            col("v", "string", ZONED_TIMESTAMP),
            "2024-01-01T00:00:00Z",
            '"2024-01-01T00:00:00.000000Z"',
        ),
        (col("v", "string", ZONED_TIMESTAMP), "infinity", '"infinity"'),
        (col("v", "string", "io.debezium.time.ZonedTime"), "12:34:56.789Z", '"12:34:56.789Z"'),
        (col("v", "bytes", DECIMAL, parameters={"scale": "2"}), "MDk=", "123.45"),
        (col("v", "bytes", DECIMAL, parameters={"scale": "2"}), "z8c=", "-123.45"),
        (
            col("v", "bytes", DECIMAL, parameters={"scale": "0"}),
            unscaled(-(2**60)),
            '"-1152921504606846976"',
        ),
        (
            col(
                "v", "bytes", DECIMAL, parameters={"scale": "3", "connect.decimal.precision": "30"}
            ),
            unscaled(12345678901234567890123),
            '"12345678901234567890.123"',
        ),
        (col("v", "bytes", DECIMAL, parameters={"scale": 2}), "AA==", "0"),
        (col("v", "bytes", DECIMAL, parameters={"scale": "2"}), 123.45, "123.45"),
        (
            col("v", "struct", VARIABLE_DECIMAL, fields=VARIABLE_DECIMAL_FIELDS),
            {"scale": 3, "value": "MDk="},
            "12.345",
        ),
        (
            col("v", "struct", VARIABLE_DECIMAL, fields=VARIABLE_DECIMAL_FIELDS),
            {"scale": 0, "value": unscaled(2**64)},
            '"18446744073709551616"',
        ),
        (
            col("v", "struct", VARIABLE_DECIMAL, fields=VARIABLE_DECIMAL_FIELDS),
            {"scale": 9, "value": unscaled(12345678901234567890123456789)},
            '"12345678901234567890.123456789"',
        ),
        (
            col("v", "bytes", DECIMAL, parameters={"scale": 30}),
            unscaled(-(10**40) - 7),
            '"-10000000000.000000000000000000000000000007"',
        ),
        (col("v", "bytes"), "AAEC/w==", '"AAEC/w=="'),
        (col("v", "bytes"), "AAF=", '"AAE="'),
        (col("v", "bytes", "io.debezium.data.Bits", parameters={"length": "3"}), "BQ==", '"BQ=="'),
        (col("v", "string", JSON), '{"b": [1, 2.5], "a": null}', '{"a":null,"b":[1,2.5]}'),
        (col("v", "string", JSON), '"text"', '"text"'),
        # A Json column is the JSON value itself: numbers inside are not re-typed.
        (col("v", "string", JSON), '{"n": 12345678901234567890}', '{"n":12345678901234567890}'),
        (
            col("v", "string", "io.debezium.data.Uuid"),
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            '"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"',
        ),
        (col("v", "string", "io.debezium.data.Enum", parameters={"allowed": "a,b"}), "b", '"b"'),
        (
            col("v", "array", items=col(None, "int32", DATE)),
            [0, 1, None],
            '["1970-01-01","1970-01-02",null]',
        ),
        (col("v", "array", items=col(None, "string")), ["x", "y"], '["x","y"]'),
        (col("v", "array", items=col(None, "bytes")), ["AAF="], '["AAE="]'),
        (col("v", "int64"), 2**53, "9007199254740992"),
        (col("v", "int64"), 2**53 + 1, '"9007199254740993"'),
        (col("v", "int64"), -(2**63), '"-9223372036854775808"'),
        (col("v", "int16"), -5, "-5"),
        (col("v", "float64"), 1.5, "1.5"),
        (col("v", "double"), 2.5, "2.5"),
        (col("v", "float"), 0.5, "0.5"),
        (col("v", "float64"), 0.1, "0.1"),
        # A double is a JSON number as it is, however large.
        (col("v", "float32"), 3, "3.0"),
        (col("v", "float64"), 1.7976931348623157e308, "1.7976931348623157e+308"),
        (col("v", "float64"), "NaN", '"NaN"'),
        (col("v", "float64"), "Infinity", '"Infinity"'),
        (col("v", "float64"), "-Infinity", '"-Infinity"'),
        (col("v", "boolean"), True, "true"),
        (col("v", "string"), "héllo", '"héllo"'),
        (
            col("v", "map", keys=col(None, "string"), values=col(None, "bytes")),
            {"k": "AAF="},
            '{"k":"AAE="}',
        ),
        (
            col("v", "map", keys=col(None, "string"), values=col(None, "string")),
            {"b": "2", "a": None},
            '{"a":null,"b":"2"}',
        ),
        (
            col(
                "v",
                "struct",
                "io.debezium.data.geometry.Point",
                fields=[
                    col("x", "float64"),
                    col("y", "float64"),
                    col("wkb", "bytes"),
                    col("srid", "int32"),
                ],
            ),
            {"x": 1.5, "y": 2, "wkb": "AAF=", "srid": None},
            '{"srid":null,"wkb":"AAE=","x":1.5,"y":2.0}',
        ),
        (col("v", "int32", DATE), None, "null"),
    ],
)
def test_values_typed_by_their_schema(schema, raw, expected):
    assert typed_image([schema], {"id": 1, "v": raw}) == {"id": "1", "v": expected}


def test_nan_bare_token_of_a_double_is_the_nan_string():
    schema = value_schema([ID, col("v", "float64")])
    text = enveloped(payload(after={"id": 1, "v": 0}), schema).replace('"v": 0', '"v": NaN')
    assert flatten(kcat(text))["row_image"]["v"] == '"NaN"'


def test_values_without_envelope_are_taken_as_json_holds_them():
    after = {
        "id": 1,
        "d": 19723,
        "ts": 1704067200123456,
        "j": '{"a": 1}',
        "big": 2**53 + 1,
        "x": 1.5,
        "nan": "NaN",
        "b": "AAEC/w==",
        "arr": [1, 2],
        "none": None,
    }
    row = flatten(kcat(json.dumps(payload(after=after))))
    assert row["error"] is None
    assert row["row_image"] == {
        "id": "1",
        "d": "19723",
        "ts": "1704067200123456",
        "j": '"{\\"a\\": 1}"',
        "big": '"9007199254740993"',
        "x": "1.5",
        "nan": '"NaN"',
        "b": '"AAEC/w=="',
        "arr": "[1,2]",
        "none": "null",
    }


def test_enveloped_key_is_typed_by_the_key_schema():
    columns = [col("day", "int32", DATE, optional=False), col("n", "int64", optional=False)]
    key = enveloped({"n": 2**60, "day": 19723}, key_schema(columns))
    body = payload(after={"day": 19723, "n": 2**60, "v": "x"})
    value = enveloped(body, value_schema([*columns, col("v", "string")]))
    row = flatten(kcat(value, key=key))
    assert row["error"] is None
    assert row["key_json"] == '{"day":"2024-01-01","n":"1152921504606846976"}'


def test_key_with_a_column_named_schema_is_not_an_envelope():
    # message.key.columns may name nullable columns; only exactly {schema, payload} is one.
    key = '{"schema": null, "payload": 3, "id": 1}'
    after = {"schema": None, "payload": 3, "id": 1}
    row = flatten(kcat(json.dumps(payload(after=after)), key=key))
    assert row["key_json"] == '{"id":1,"payload":3,"schema":null}'


def test_key_without_envelope_and_composite_key_is_canonical():
    row = flatten(kcat(json.dumps(payload(after={"b": 2, "a": "x"})), key='{"b": 2, "a": "x"}'))
    assert row["key_json"] == '{"a":"x","b":2}'


# --- placeholders ------------------------------------------------------------------------


def test_placeholder_text_with_envelope():
    image = typed_image([col("bio", "string")], {"id": 1, "bio": "__debezium_unavailable_value"})
    assert image == {"id": "1", "bio": None}


def test_placeholder_base64_in_a_bytes_column():
    image = typed_image([col("pic", "bytes")], {"id": 1, "pic": DEFAULT_B64})
    assert image["pic"] is None


def test_base64_of_the_placeholder_in_a_text_column_is_text():
    image = typed_image([col("note", "string")], {"id": 1, "note": DEFAULT_B64})
    assert image["note"] == json.dumps(DEFAULT_B64)


def test_base64_of_the_placeholder_without_schema_is_unknown():
    row = flatten(kcat(json.dumps(payload(after={"id": 1, "pic": DEFAULT_B64}))))
    assert row["row_image"] == {"id": "1", "pic": None}


@pytest.mark.parametrize(
    ("schema", "raw"),
    [
        (col("tags", "array", items=col(None, "string")), ["__debezium_unavailable_value"]),
        (col("tags", "array", items=col(None, "string")), ["a", "__debezium_unavailable_value"]),
        (col("blobs", "array", items=col(None, "bytes")), [DEFAULT_B64]),
        (col("ints", "array", items=col(None, "int32")), list(b"__debezium_unavailable_value")),
        (col("ints", "array", items=col(None, "int64")), list(b"__debezium_unavailable_value")),
        (
            col("h", "map", keys=col(None, "string"), values=col(None, "string")),
            {"__debezium_unavailable_value": "__debezium_unavailable_value"},
        ),
        (
            col("h", "string", JSON),
            '{"__debezium_unavailable_value":"__debezium_unavailable_value"}',
        ),
        (col("d", "int32", DATE), "__debezium_unavailable_value"),
        (col("j", "string", JSON), "__debezium_unavailable_value"),
        (col("n", "bytes", DECIMAL, parameters={"scale": "2"}), DEFAULT_B64),
    ],
)
def test_placeholder_forms_by_column_type(schema, raw):
    assert typed_image([schema], {"id": 1, schema["field"]: raw})[schema["field"]] is None


def test_text_array_placeholder_without_schema():
    row = flatten(
        kcat(json.dumps(payload(after={"id": 1, "tags": ["__debezium_unavailable_value"]})))
    )
    assert row["row_image"]["tags"] is None


def test_base64_placeholder_inside_a_text_array_is_text():
    image = typed_image(
        [col("tags", "array", items=col(None, "string"))], {"id": 1, "tags": [DEFAULT_B64]}
    )
    assert image["tags"] == json.dumps([DEFAULT_B64])


def test_custom_placeholders_replace_the_default():
    custom = ["<toast>", "<also>"]
    after = {
        "id": 1,
        "a": "<toast>",
        "b": "<also>",
        "c": "__debezium_unavailable_value",
        "d": base64.b64encode(b"<also>").decode(),
        "e": ["<toast>"],
    }
    columns = [
        col("a", "string"),
        col("b", "string"),
        col("c", "string"),
        col("d", "bytes"),
        col("e", "array", items=col(None, "string")),
    ]
    image = typed_image(columns, after, placeholders=custom)
    assert image == {
        "id": "1",
        "a": None,
        "b": None,
        "c": '"__debezium_unavailable_value"',
        "d": None,
        "e": None,
    }


def test_no_placeholders_means_every_value_is_known():
    image = typed_image(
        [col("a", "string")], {"id": 1, "a": "__debezium_unavailable_value"}, placeholders=[]
    )
    assert image["a"] == '"__debezium_unavailable_value"'


def test_placeholder_given_as_one_string():
    row = flatten(
        kcat(json.dumps(payload(after={"id": 1, "a": "<t>", "b": "<"}))), placeholders="<t>"
    )
    assert row["row_image"] == {"id": "1", "a": None, "b": '"<"'}


def test_hex_placeholder_setting_is_octets():
    setting = "hex:" + b"\x00\xffmark".hex()
    text_setting = "hex:" + b"<m>".hex()
    after = {
        "id": 1,
        "blob": base64.b64encode(b"\x00\xffmark").decode(),
        "ints": [0, -1, 109, 97, 114, 107],
        "text": "<m>",
        "literal": text_setting,
    }
    columns = [
        col("blob", "bytes"),
        col("ints", "array", items=col(None, "int32")),
        col("text", "string"),
        col("literal", "string"),
    ]
    assert typed_image(columns, after, placeholders=[setting, text_setting]) == {
        "id": "1",
        "blob": None,
        "ints": None,
        "text": None,
        "literal": json.dumps(text_setting),
    }


@pytest.mark.parametrize("setting", ["hex:zz", None])
def test_bad_placeholder_setting_is_reported(setting):
    reason = error_of(kcat(json.dumps(BLOG_UPDATE)), placeholders=[setting])
    assert reason == f"bad placeholder setting: {setting!r}"


# --- REPLICA IDENTITY FULL before images -------------------------------------------------------


def test_unavailable_value_taken_from_the_before_image():
    columns = [col("bio", "string"), col("pic", "bytes"), col("day", "int32", DATE)]
    before = {"id": 1, "bio": "old text", "pic": "AAF=", "day": 19723}
    after = {"id": 1, "bio": "__debezium_unavailable_value", "pic": DEFAULT_B64, "day": 19724}
    image = typed_image(columns, after, before=before, op="u")
    assert image == {"id": "1", "bio": '"old text"', "pic": '"AAE="', "day": '"2024-01-02"'}


def test_before_image_without_the_value_leaves_it_unknown():
    columns = [col("a", "string"), col("b", "string"), col("c", "string")]
    before = {"id": 1, "a": None, "b": "__debezium_unavailable_value"}
    after = {
        "id": 1,
        "a": "__debezium_unavailable_value",
        "b": "__debezium_unavailable_value",
        "c": "__debezium_unavailable_value",
    }
    image = typed_image(columns, after, before=before, op="u")
    assert image == {"id": "1", "a": None, "b": None, "c": None}


def test_delete_row_image_is_the_before_image():
    columns = [col("bio", "string"), col("n", "int32")]
    before = {"id": 1, "bio": "__debezium_unavailable_value", "n": None}
    image = typed_image(columns, None, before=before, op="d")
    assert image == {"id": "1", "bio": None, "n": "null"}


def test_delete_with_key_columns_only():
    row = flatten(kcat(json.dumps(payload("d", before={"id": 1}))))
    assert (row["op"], row["row_image"], row["key_json"]) == ("delete", {"id": "1"}, '{"id":1}')


def test_delete_without_before_image_keys_by_the_record_key():
    row = flatten(kcat(json.dumps(payload("d")), key='{"id": 9}'))
    assert (row["error"], row["row_image"], row["key_json"]) == (None, {}, '{"id":9}')


# --- keys ------------------------------------------------------------------------------------


def declared(columns):
    calls = []

    def lookup(source_system, source_name, source_table):
        calls.append((source_system, source_name, source_table))
        return columns

    return lookup, calls


def test_declared_key_overrides_the_record_key():
    lookup, calls = declared(["email", "tenant"])
    after = {"id": 1, "email": "a@b", "tenant": 2**60}
    row = flatten(kcat(json.dumps(payload(after=after))), declared=lookup)
    assert row["key_json"] == '{"email":"a@b","tenant":"1152921504606846976"}'
    assert calls == [("debezium", SERVER, "inventory.customers")]


def test_declared_key_uses_typed_values():
    lookup, _ = declared(["day"])
    columns = [col("day", "int32", DATE)]
    line = kcat(enveloped(payload(after={"id": 1, "day": 19723}), value_schema([ID, *columns])))
    assert flatten(line, declared=lookup)["key_json"] == '{"day":"2024-01-01"}'


def test_declared_key_of_a_delete_comes_from_the_before_image():
    lookup, _ = declared(["email"])
    row = flatten(
        kcat(json.dumps(payload("d", before={"id": 1, "email": "a@b"})), key=None), declared=lookup
    )
    assert row["key_json"] == '{"email":"a@b"}'


def test_declared_key_lookup_without_entry_falls_back_to_the_record_key():
    lookup, _ = declared(None)
    row = flatten(
        kcat(json.dumps(payload(after={"id": 1, "x": 2})), key='{"id": 1}'), declared=lookup
    )
    assert row["key_json"] == '{"id":1}'


def test_declared_key_errors():
    lookup, _ = declared(["email"])
    assert error_of(kcat(json.dumps(payload(after={"id": 1}))), declared=lookup) == (
        "key column 'email' missing from the after image"
    )
    assert error_of(kcat(json.dumps(payload("d", before={"id": 1}))), declared=lookup) == (
        "key column 'email' missing from the before image"
    )
    line = kcat(json.dumps(payload(after={"id": 1, "email": "__debezium_unavailable_value"})))
    assert error_of(line, declared=lookup) == "key column 'email' is unavailable in the after image"


def test_failing_declared_keys_lookup_is_reported():
    def lookup(*args):
        raise KeyError("boom")

    assert error_of(kcat(json.dumps(BLOG_UPDATE)), declared=lookup).startswith(
        "declared_keys failed: KeyError"
    )


@pytest.mark.parametrize(
    "key", [None, "{}", json.dumps({"schema": key_schema([]), "payload": None})]
)
def test_change_without_any_key_is_an_error(key):
    reason = error_of(kcat(json.dumps(BLOG_UPDATE), key=key))
    assert reason.startswith("no key: ")


@pytest.mark.parametrize(
    ("key", "reason"),
    [
        ("{id", "key is not JSON: "),
        ("[1]", "key is not an object"),
        (
            json.dumps({"schema": key_schema([ID]), "payload": {"id": 1, "x": 2}}),
            "key column 'x' is not in the key schema",
        ),
        (
            json.dumps({"schema": key_schema([col("id", "int32", DATE)]), "payload": {"id": "x"}}),
            "column 'id': Date expects an integer, got 'x'",
        ),
    ],
)
def test_key_errors(key, reason):
    assert error_of(kcat(json.dumps(BLOG_UPDATE), key=key)).startswith(reason)


# --- ops and records that are not changes ------------------------------------------------------


@pytest.mark.parametrize(
    ("letter", "op"),
    [("c", "insert"), ("u", "update"), ("r", "snapshot")],
)
def test_ops_with_an_after_image(letter, op):
    row = flatten(kcat(json.dumps(payload(letter, after={"id": 1}, snapshot="true"))))
    assert (row["error"], row["op"], row["event_id"]) == (None, op, f"lsn:34650016:{op}")


def test_truncate():
    body = {"source": {**SOURCE, "table": "orders"}, "op": "t", "ts_ms": 1}
    row = flatten(kcat(json.dumps(body), key=None, topic="dbserver1.inventory.orders"))
    assert row == {
        "error": None,
        "source_table": "inventory.orders",
        "key_json": None,
        "op": "truncate",
        "row_image": {},
        "is_backfill": False,
        "order_ts": None,
        "sort_pos": pos_uint(34650016, 20),
        "committed_at": 1570448151151000,
        "txn_id": "tx:627",
        "event_id": "lsn:34650016:truncate",
        "column_types": None,
        **dict.fromkeys(TRANSACTION_FIELDS),
    }


NOT_A_CHANGE = dict.fromkeys(FIELDS)


@pytest.mark.parametrize(
    "line",
    [
        kcat(None),
        kcat(None, key=None),
        kcat(json.dumps({"schema": None, "payload": None})),
        kcat(
            '{"ts_ms": 1589355606100}',
            key='{"serverName": "dbserver1"}',
            topic="__debezium-heartbeat.dbserver1",
        ),
        kcat("not even json", topic="__debezium-heartbeat.dbserver1"),
        kcat(
            json.dumps(
                {
                    "op": "m",
                    "ts_ms": 1,
                    "source": SOURCE,
                    "message": {"prefix": "p", "content": "AA=="},
                }
            ),
            key=None,
            topic="dbserver1.message",
        ),
    ],
    ids=[
        "tombstone",
        "tombstone-no-key",
        "enveloped-null",
        "heartbeat",
        "heartbeat-any",
        "message",
    ],
)
def test_records_that_are_not_changes(line):
    assert flatten(line) == NOT_A_CHANGE


def test_table_named_transaction_is_a_change():
    body = payload(after={"id": 1}, table="transaction")
    row = flatten(kcat(json.dumps(body), topic="dbserver1.inventory.transaction"))
    assert (row["op"], row["source_table"]) == ("insert", "inventory.transaction")


def test_primary_key_change_is_a_delete_and_an_insert_at_one_lsn():
    old = flatten(
        kcat(json.dumps(payload("d", before={"id": 1, "v": "a"})), key='{"id": 1}', offset=10)
    )
    new = flatten(
        kcat(json.dumps(payload("c", after={"id": 2, "v": "a"})), key='{"id": 2}', offset=12)
    )
    assert (old["op"], new["op"]) == ("delete", "insert")
    assert (old["key_json"], new["key_json"]) == ('{"id":1}', '{"id":2}')
    assert old["sort_pos"] == new["sort_pos"]
    assert old["txn_id"] == new["txn_id"] == "tx:627"
    assert old["event_id"] != new["event_id"]


def test_same_change_at_another_offset_has_the_same_event_id():
    first = flatten(kcat(json.dumps(BLOG_UPDATE), offset=1))
    again = flatten(kcat(json.dumps(BLOG_UPDATE), offset=900))
    assert first == again


# --- order, time, transaction --------------------------------------------------------------


def test_sort_pos_orders_lsns_as_numbers():
    lsns = [0x100000000, 0x0FFFFFFF, 0, 2**64 - 1, 34650016]
    positions = {
        lsn: flatten(kcat(json.dumps(payload(after={"id": 1}, lsn=lsn))))["sort_pos"]
        for lsn in lsns
    }
    assert positions[0x0FFFFFFF] < positions[0x100000000]
    assert sorted(lsns, key=positions.get) == sorted(lsns)
    assert positions[0x100000000] == "00000000004294967296"


@pytest.mark.parametrize(
    ("times", "micros"),
    [
        # Distinct values, so that the test shows which field wins.
        (
            {"ts_ms": 1704067200999, "ts_us": 1704067200123456, "ts_ns": 1704067200555555555},
            1704067200123456,
        ),
        ({"ts_ms": 1704067200999, "ts_ns": 1704067200555555555}, 1704067200555555),
        ({"ts_ms": 1704067200123, "ts_ns": 1704067200123456789}, 1704067200123456),
        ({"ts_ms": 1704067200123}, 1704067200123000),
        ({"ts_ms": 1704067200123, "ts_us": None}, 1704067200123000),
    ],
)
def test_committed_at_at_the_finest_precision_given(times, micros):
    body = payload(after={"id": 1})
    body["source"] = {**{k: v for k, v in SOURCE.items() if k != "ts_ms"}, **times}
    assert flatten(kcat(json.dumps(body)))["committed_at"] == micros


def test_txn_id_falls_back_to_the_lsn():
    row = flatten(kcat(json.dumps(payload(after={"id": 1}, txId=None))))
    assert row["txn_id"] == "lsn:34650016"


def test_source_table_falls_back_to_the_topic():
    body = payload(after={"id": 1})
    del body["source"]["schema"], body["source"]["table"]
    row = flatten(kcat(json.dumps(body), topic="my.server.sales.orders"))
    assert row["source_table"] == "sales.orders"


# --- errors ----------------------------------------------------------------------------------


def with_source(**changes):
    body = payload(after={"id": 1})
    for field, value in changes.items():
        if value is ...:
            del body["source"][field]
        else:
            body["source"][field] = value
    return kcat(json.dumps(body))


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "malformed line JSON: "),
        ("[1, 2]", "malformed line JSON: not an object"),
        (json.dumps({"partition": 0, "payload": None}), "missing field: topic"),
        (json.dumps({"topic": TOPIC, "key": None}), "missing field: payload"),
        (
            json.dumps({"topic": TOPIC, "key": None, "payload": {"op": "c"}}),
            "payload is not a JSON string",
        ),
        (kcat("{oops"), "payload is not JSON: "),
        (kcat("[1]"), "payload is not an object"),
        (kcat(json.dumps({"after": {"id": 1}, "source": SOURCE})), "payload without op"),
        (kcat(json.dumps({"id": "1:2"}), topic="dbserver1.transaction"), "payload without op"),
        (kcat(json.dumps(payload("x", after={"id": 1}))), "unknown op 'x'"),
        (kcat(json.dumps(payload(7, after={"id": 1}))), "unknown op 7"),
        (kcat(json.dumps({"op": "c", "after": {"id": 1}})), "missing field: payload.source"),
        (with_source(lsn=...), "missing field: source.lsn"),
        (with_source(lsn="0/2110F70"), "bad source.lsn: '0/2110F70'"),
        (with_source(lsn=-1), "bad source.lsn: -1"),
        (with_source(lsn=True), "bad source.lsn: True"),
        (with_source(ts_ms=...), "missing field: source.ts_ms"),
        (with_source(ts_ms="1570448151151"), "bad source.ts_ms: '1570448151151'"),
        (with_source(ts_us=1.5), "bad source.ts_us: Decimal('1.5')"),
        (kcat(json.dumps(payload("u"))), "op 'u' without an after image"),
        (kcat(json.dumps(payload("c", after=[1]))), "after is not an object"),
        (kcat(json.dumps(payload("d", before="x"))), "before is not an object"),
    ],
)
def test_record_errors(line, reason):
    assert error_of(line).startswith(reason)


def test_source_table_error_names_the_topic():
    body = payload(after={"id": 1})
    del body["source"]["table"]
    assert "'inventory.customers'" in error_of(kcat(json.dumps(body), topic="inventory.customers"))


def test_line_that_is_not_text():
    assert error_of(None) == "malformed line JSON: no text"


@pytest.mark.parametrize(
    ("schema", "raw", "reason"),
    [
        (
            col("v", "int32", DATE),
            "2024-01-01",
            "column 'v': Date expects an integer, got '2024-01-01'",
        ),
        (col("v", "int32", DATE), 10**9, "column 'v': "),
        (col("v", "int64", MICRO_TIME), -1, "column 'v': MicroTime -1 is not a time of day"),
        (col("v", "int32", TIME), 86_400_001, "column 'v': Time 86400001 is not a time of day"),
        (col("v", "int64", MICRO_TIMESTAMP), 10**18 * 9, "column 'v': "),
        (col("v", "int64", TIMESTAMP), 1.5, "column 'v': Timestamp expects an integer"),
        (col("v", "string", ZONED_TIMESTAMP), "yesterday", "column 'v': not an ISO-8601 instant"),
        (col("v", "string", ZONED_TIMESTAMP), 5, "column 'v': ZonedTimestamp expects a string"),
        (
            col("v", "string", "io.debezium.time.ZonedTime"),
            5,
            "column 'v': ZonedTime expects a string",
        ),
        (
            col("v", "bytes", DECIMAL, parameters={"scale": "2"}),
            "not base64!",
            "column 'v': Decimal expects base64",
        ),
        (col("v", "bytes", DECIMAL), "MDk=", "column 'v': Decimal schema without parameters.scale"),
        (
            col("v", "bytes", DECIMAL, parameters={"scale": "two"}),
            "MDk=",
            "column 'v': Decimal schema with a bad scale 'two'",
        ),
        (
            col("v", "bytes", DECIMAL, parameters={"scale": "2"}),
            True,
            "column 'v': Decimal expects a string",
        ),
        (
            col("v", "struct", VARIABLE_DECIMAL, fields=VARIABLE_DECIMAL_FIELDS),
            {"value": "MDk="},
            "column 'v': VariableScaleDecimal without scale",
        ),
        (
            col("v", "struct", VARIABLE_DECIMAL, fields=VARIABLE_DECIMAL_FIELDS),
            {"scale": 1, "value": "%%"},
            "column 'v': VariableScaleDecimal value expects base64",
        ),
        (
            col("v", "struct", VARIABLE_DECIMAL, fields=VARIABLE_DECIMAL_FIELDS),
            "MDk=",
            "column 'v': VariableScaleDecimal expects a struct",
        ),
        (col("v", "string", JSON), "{broken", "column 'v': Json holds no JSON"),
        (col("v", "int32"), "5", "column 'v': int32 expects an integer, got '5'"),
        (col("v", "int64"), True, "column 'v': int64 expects an integer, got True"),
        (col("v", "float64"), "abc", "column 'v': float64 expects a number, got 'abc'"),
        (col("v", "float64"), [1], "column 'v': float64 expects a number, got [1]"),
        (col("v", "boolean"), 1, "column 'v': boolean expects true or false, got 1"),
        (col("v", "string"), 1, "column 'v': string expects a string, got 1"),
        (col("v", "bytes"), "@@@", "column 'v': bytes expects base64"),
        (
            col("v", "array", items=col(None, "int32")),
            {"a": 1},
            "column 'v': array expects an array",
        ),
        (
            col("v", "array", items=col(None, "int32")),
            ["x"],
            "column 'v': int32 expects an integer",
        ),
        (col("v", "map", values=col(None, "string")), [1], "column 'v': map expects an object"),
        (
            col("v", "struct", fields=[col("x", "int32")]),
            {"y": 1},
            "column 'v': struct field 'y' is not in its schema",
        ),
        (col("v", "struct", fields=[col("x", "int32")]), 3, "column 'v': struct expects an object"),
        (col("v", "decimal128"), 1, "column 'v': unknown schema type 'decimal128'"),
        (col("v", "array", items="int32"), [1], "column 'v': bad schema 'int32'"),
    ],
)
def test_values_that_do_not_fit_their_schema(schema, raw, reason):
    line = kcat(enveloped(payload(after={"id": 1, "v": raw}), value_schema([ID, schema])))
    assert error_of(line).startswith(reason)


def test_value_errors_in_the_before_image_are_reported_too():
    schema = value_schema([ID, col("v", "int32", DATE)])
    line = kcat(
        enveloped(payload("u", before={"id": 1, "v": "x"}, after={"id": 1, "v": 1}), schema)
    )
    assert error_of(line).startswith("column 'v': Date expects an integer")


def test_column_missing_from_the_schema():
    line = kcat(enveloped(payload(after={"id": 1, "w": 2}), value_schema([ID])))
    assert error_of(line) == "column 'w' is not in the value schema"


@pytest.mark.parametrize(
    ("schema", "reason"),
    [
        ({"type": "struct", "name": "x.Envelope"}, "bad value schema: no fields"),
        ({"type": "struct", "fields": [col("op", "string")]}, "value schema has no after struct"),
        (
            {"type": "struct", "fields": [col("after", "string")]},
            "bad value schema after: not a struct",
        ),
        (
            {
                "type": "struct",
                "fields": [{"type": "struct", "fields": [{"type": "int32"}], "field": "after"}],
            },
            "bad value schema after: a field without a name",
        ),
    ],
)
def test_bad_value_schemas(schema, reason):
    assert error_of(kcat(enveloped(payload(after={"id": 1}), schema))) == reason


def test_column_types_come_from_the_envelope_schema_of_the_image():
    decimal = col("price", "bytes", "org.apache.kafka.connect.data.Decimal")
    decimal["parameters"] = {"scale": "2", "connect.decimal.precision": "10"}
    columns = [
        ID,
        decimal,
        col("seen_at", "int64", "io.debezium.time.MicroTimestamp"),
        col("changed_at", "string", "io.debezium.time.ZonedTimestamp"),
        col("born", "int32", "io.debezium.time.Date"),
        col("doc", "string", "io.debezium.data.Json"),
        col("tags", "array"),
        col("ratio", "double"),
    ]
    after = {"id": 1, "price": unscaled(1234), "seen_at": 0, "changed_at": "2024-01-01T00:00:00Z"}
    after |= {"born": 0, "doc": "{}", "tags": [], "ratio": 0.5}
    for op, body in (("c", payload("c", after=after)), ("d", payload("d", before=after))):
        row = flatten(kcat(enveloped(body, value_schema(columns))))
        assert row["error"] is None, op
        assert json.loads(row["column_types"]) == {
            "id": ["int32", "int"],
            "price": ["org.apache.kafka.connect.data.Decimal(10,2)", "decimal(10,2)"],
            "seen_at": ["io.debezium.time.MicroTimestamp", "timestamp_ntz"],
            "changed_at": ["io.debezium.time.ZonedTimestamp", "timestamp"],
            "born": ["io.debezium.time.Date", "date"],
            "doc": ["io.debezium.data.Json", "string"],
            "tags": ["array", "string"],
            "ratio": ["double", "double"],
        }, op
