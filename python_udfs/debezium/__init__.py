"""Debezium PostgreSQL connector records (`kcat -J` lines) to rows of the unified change log.

The output shape is docs/decisions/001-unified-change-log.md; the rules are
docs/sources/debezium.md and docs/architecture.md, each promise with its tests in
docs/guarantees.md.
Field names and value encodings follow the Debezium PostgreSQL connector's documented change
event envelope, source block and data type mappings, as Kafka Connect's JsonConverter writes
them (with `schemas.enable` on or off).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from python_udfs.change_log import CHANGE_COLUMNS
from python_udfs.debezium.column_types import connect_column_type
from python_udfs.debezium.transactions import (
    TRANSACTION_COLUMNS,
    change_transaction_fields,
    is_transaction_record,
    transaction_record_fields,
)
from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import (
    NON_FINITE_FLOAT_TEXTS,
    JsonDocument,
    canonical_json,
    format_instant_micros,
    line_object,
    loads_exact,
    normalize,
    parse_instant_ns,
    parse_json_document,
    pos_uint,
)
from python_udfs.source_types import column_types_json
from python_udfs.table_settings import KeyLookup

EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    # column_types.py: column -> [Kafka Connect type, Spark type]; NULL without
    # the schema envelope.
    ("column_types", "string"),
    # python_udfs/debezium/transactions.py: a change event's transaction and place in it, or a
    # BEGIN / END record's transaction and counts.
    *TRANSACTION_COLUMNS,
)

# The version of the encoding of `sort_pos`, `txn_id`, `event_id` and the transaction fields
# the models count that this decoder gives: raise it with any change to them, then pin the
# new digest in tests/unit/test_sort_key_pins.py. The warehouse records the version it was
# built with and `cdcw run` refuses to mix encodings until a full refresh (docs/decisions/013).
# 2: transaction metadata decoded (docs/decisions/014); events stored before have none.
SORT_KEY_VERSION = 2

COLUMNS = CHANGE_COLUMNS + EXTRA_COLUMNS
FIELDS: tuple[str, ...] = tuple(name for name, _ in COLUMNS)

_OPS = {"c": "insert", "u": "update", "d": "delete", "r": "snapshot", "t": "truncate"}
# Logical decoding messages (pg_logical_emit_message) carry no row: not a change, not an error.
_MESSAGE_OP = "m"
_HEARTBEAT_TOPIC_PREFIX = "__debezium-heartbeat"

_INTEGER_TYPES = frozenset({"int8", "int16", "int32", "int64"})
# PostgreSQL's +/-infinity timestamps arrive as the extreme int64 values (as the JDBC driver
# maps them); no calendar date holds them, so they keep PostgreSQL's own spelling.
_INFINITE_TIMESTAMPS = {2**63 - 1: "infinity", -(2**63): "-infinity"}
_INFINITE_TEXTS = frozenset({"infinity", "-infinity"})
_EPOCH = dt.datetime(1970, 1, 1)
_SECONDS_PER_DAY = 86_400
# Kafka Connect schema parameters are strings.
_SCALE = re.compile(r"-?[0-9]+")

# An unavailable (unchanged TOASTed) column value, kept apart from NULL until the row image.
_UNKNOWN: Any = object()


class _BadRecord(Exception):
    """A record that cannot enter the change log; the message is the quarantine reason."""


@dataclass(frozen=True)
class _Placeholders:
    """Every form the connector gives its unavailable-value placeholder, by column type."""

    texts: frozenset[str]
    base64s: frozenset[str]
    byte_lists: tuple[list[int], ...]
    maps: tuple[dict[str, str], ...]


def flatten_record(
    line: str, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """Turn one `kcat -J` line into one change-log row, or into {'error': reason}
    (python_udfs/decoding.py's `Decoder`).

    Never raises: bad input must reach the quarantine with a reason instead of stopping a run.
    Tombstones, heartbeats and logical decoding messages are not changes: they return a row
    whose op and error are both None, which the SQL drops. A BEGIN or END record of the
    transaction topic is no change either: its row has no op and carries the transaction's key,
    status and (END) event counts, and a change event's row its transaction key and place
    (python_udfs/debezium/transactions.py), which the SQL counts against the END.

    With the `{"schema", "payload"}` envelope, values are typed by their Kafka Connect schema
    (dates, times, timestamps, decimals, JSON, bytes, arrays). Without it, nothing tells a date
    from an integer or a JSON column from text, so values are taken as the JSON holds them.

    `settings.placeholders` are the connector's `unavailable.value.placeholder` settings as
    written in its configuration (a 'hex:' prefix means hexadecimal octets, as the connector
    reads it). A column holding one is unknown (None in `row_image`) unless the before image of
    a REPLICA IDENTITY FULL table holds its value.
    """
    try:
        placeholders = settings.placeholders
        marks = _placeholders(
            (placeholders,) if isinstance(placeholders, str) else tuple(placeholders)
        )
        return _flatten(line, source_name, marks, settings.declared_keys)
    except _BadRecord as exc:
        return _row(error=str(exc))
    except Exception as exc:  # a UDF must not fail the run on input it did not foresee
        return _row(error=f"unexpected error: {type(exc).__name__}: {exc}")


def _row(**fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(fields)
    return row


@functools.lru_cache(maxsize=16)
def _placeholders(settings: tuple[str, ...]) -> _Placeholders:
    """The connector turns its setting into octets, then gives text columns those octets as a
    (Java, hence lenient UTF-8) string, bytes columns the octets, int and bigint arrays the
    octets as signed numbers, text arrays a one-element list and hstore maps {text: text}."""
    octets = []
    for setting in settings:
        if not isinstance(setting, str):
            raise _BadRecord(f"bad placeholder setting: {setting!r}")
        if setting.startswith("hex:"):
            try:
                octets.append(bytes.fromhex(setting[4:]))
            except ValueError:
                raise _BadRecord(f"bad placeholder setting: {setting!r}") from None
        else:
            octets.append(setting.encode("utf-8"))
    texts = [raw.decode("utf-8", errors="replace") for raw in octets]
    return _Placeholders(
        texts=frozenset(texts),
        base64s=frozenset(base64.b64encode(raw).decode("ascii") for raw in octets),
        byte_lists=tuple([b - 256 if b > 127 else b for b in raw] for raw in octets),
        maps=tuple({text: text} for text in texts),
    )


def _flatten(
    line: Any, source_name: str, marks: _Placeholders, declared_keys: KeyLookup | None
) -> dict[str, Any]:
    try:
        record = line_object(line)
    except ValueError as exc:
        raise _BadRecord(str(exc)) from None
    topic = record.get("topic")
    if not isinstance(topic, str) or not topic:
        raise _BadRecord("missing field: topic")
    if topic.startswith(_HEARTBEAT_TOPIC_PREFIX):
        return _row()

    value_schema, payload = _embedded(record, "payload")
    if payload is None:  # a tombstone: lets Kafka compact the deleted key away
        return _row()
    if not isinstance(payload, dict):
        raise _BadRecord("payload is not an object")
    letter = payload.get("op")
    if letter is None:
        if is_transaction_record(topic, payload):
            return _row(**_transaction(transaction_record_fields, payload))
        raise _BadRecord("payload without op")
    if letter == _MESSAGE_OP:
        return _row()
    op = _OPS.get(letter) if isinstance(letter, str) else None
    if op is None:
        raise _BadRecord(f"unknown op {letter!r}")

    source = payload.get("source")
    if not isinstance(source, dict):
        raise _BadRecord("missing field: payload.source")
    source_table = _source_table(source, topic)
    lsn = source.get("lsn")
    if lsn is None:
        raise _BadRecord("missing field: source.lsn")
    if not _is_int(lsn) or lsn < 0:
        raise _BadRecord(f"bad source.lsn: {lsn!r}")
    tx_id = source.get("txId")
    if tx_id is not None and not (_is_int(tx_id) or isinstance(tx_id, str)):
        raise _BadRecord(f"bad source.txId: {tx_id!r}")
    position = {
        "source_table": source_table,
        "op": op,
        "is_backfill": False,
        "sort_pos": pos_uint(lsn, 20),
        "committed_at": _committed_micros(source),
        # Without a transaction id each change is its own version; the lsn names it uniquely.
        "txn_id": f"tx:{tx_id}" if tx_id is not None else f"lsn:{lsn}",
        # One change, sent again at another offset, has the same lsn; the delete and the create
        # of a primary key change share their lsn and differ by op.
        "event_id": f"lsn:{lsn}:{op}",
        **_transaction(change_transaction_fields, payload),
    }
    if op == "truncate":
        return _row(key_json=None, row_image={}, **position)

    images = _image_schemas(value_schema)
    before = _image(payload, "before", images, marks)
    after = _image(payload, "after", images, marks)
    if op == "delete":
        image = before or {}
    else:
        if after is None:
            raise _BadRecord(f"op {letter!r} without an after image")
        image = _completed(after, before)
    key = _key(record, topic, op, image, source_name, source_table, declared_keys)
    row_image = {
        column: None if value is _UNKNOWN else canonical_json(value)
        for column, value in image.items()
    }
    return _row(
        key_json=canonical_json(key),
        row_image=row_image,
        column_types=_column_types(images, "before" if op == "delete" else "after"),
        **position,
    )


def _transaction(
    fields: Callable[[dict[str, Any]], dict[str, Any]], payload: dict[str, Any]
) -> dict[str, Any]:
    """The transaction fields `fields` reads from the payload; what does not fit is the
    record's quarantine reason."""
    try:
        return fields(payload)
    except ValueError as exc:
        raise _BadRecord(str(exc)) from None


def _column_types(images: dict[str, dict[str, Any]] | None, image: str) -> str | None:
    """The image's column types as `cdc_source_columns` collects them."""
    columns = (images or {}).get(image)
    if columns is None:
        return None
    # A topic's records repeat one schema: its types are rendered once per shape.
    return _column_types_of_shape(
        tuple(
            (name, schema.get("type"), schema.get("name"), *_decimal_parameters(schema))
            for name, schema in columns.items()
        )
    )


def _decimal_parameters(schema: dict[str, Any]) -> tuple[Any, Any]:
    parameters = schema.get("parameters")
    if not isinstance(parameters, dict):
        return None, None
    return parameters.get("connect.decimal.precision"), parameters.get("scale")


@functools.lru_cache(maxsize=256)
def _column_types_of_shape(shape: tuple[tuple[str, Any, Any, Any, Any], ...]) -> str:
    return column_types_json(
        {
            name: connect_column_type(
                {
                    "type": kind,
                    "name": semantic,
                    "parameters": {"connect.decimal.precision": precision, "scale": scale},
                }
            )
            for name, kind, semantic, precision, scale in shape
        }
    )


def _embedded(record: dict[str, Any], field: str) -> tuple[dict[str, Any] | None, Any]:
    """(schema, payload) of the key or value JSON text, with or without the envelope."""
    if field not in record:
        raise _BadRecord(f"missing field: {field}")
    text = record[field]
    if text is None:
        return None, None
    if not isinstance(text, str):
        raise _BadRecord(f"{field} is not a JSON string")
    try:
        document = loads_exact(text)
    except (ValueError, RecursionError) as exc:  # json recurses once per level of nesting
        raise _BadRecord(f"{field} is not JSON: {exc}") from None
    if (
        isinstance(document, dict)
        and set(document) == {"schema", "payload"}
        and (document["schema"] is None or isinstance(document["schema"], dict))
    ):
        return document["schema"], document["payload"]
    return None, document


def _source_table(source: dict[str, Any], topic: str) -> str:
    schema, table = source.get("schema"), source.get("table")
    for field, value in (("schema", schema), ("table", table)):
        if value is not None and not isinstance(value, str):
            raise _BadRecord(f"bad source.{field}: {value!r}")
    if schema and table:
        return f"{schema}.{table}"
    parts = topic.split(".")
    if len(parts) < 3 or not all(parts[-2:]):
        raise _BadRecord(
            f"no source table: source.schema/table missing and topic {topic!r} "
            "is not <server>.<schema>.<table>"
        )
    return ".".join(parts[-2:])


def _committed_micros(source: dict[str, Any]) -> int:
    """The commit time at the finest precision the connector version gives."""
    for field, to_micros in (
        ("ts_us", lambda v: v),
        ("ts_ns", lambda v: v // 1000),
        ("ts_ms", lambda v: v * 1000),
    ):
        value = source.get(field)
        if value is None:
            continue
        if not _is_int(value):
            raise _BadRecord(f"bad source.{field}: {value!r}")
        return to_micros(value)
    raise _BadRecord("missing field: source.ts_ms")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _image_schemas(value_schema: dict[str, Any] | None) -> dict[str, dict[str, Any]] | None:
    """Column schemas of the before and after images, by image; None without an envelope."""
    if value_schema is None:
        return None
    fields = value_schema.get("fields")
    if not isinstance(fields, list):
        raise _BadRecord("bad value schema: no fields")
    images: dict[str, dict[str, Any]] = {}
    for field in fields:
        if isinstance(field, dict) and field.get("field") in ("before", "after"):
            images[field["field"]] = _struct_fields(field, f"value schema {field['field']}")
    return images


def _struct_fields(schema: dict[str, Any], what: str) -> dict[str, Any]:
    fields = schema.get("fields")
    if schema.get("type") != "struct" or not isinstance(fields, list):
        raise _BadRecord(f"bad {what}: not a struct")
    if not all(isinstance(f, dict) and isinstance(f.get("field"), str) for f in fields):
        raise _BadRecord(f"bad {what}: a field without a name")
    return {f["field"]: f for f in fields}


def _image(
    payload: dict[str, Any],
    name: str,
    images: dict[str, dict[str, Any]] | None,
    marks: _Placeholders,
) -> dict[str, Any] | None:
    """The typed before or after image, unavailable columns as _UNKNOWN."""
    raw = payload.get(name)
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _BadRecord(f"{name} is not an object")
    columns = None
    if images is not None:
        columns = images.get(name)
        if columns is None:
            raise _BadRecord(f"value schema has no {name} struct")
    image = {}
    for column, value in raw.items():
        schema = None
        if columns is not None:
            schema = columns.get(column)
            if schema is None:
                raise _BadRecord(f"column {column!r} is not in the value schema")
        if _unavailable(value, schema, marks):
            image[column] = _UNKNOWN
            continue
        typed = _typed_column(column, schema, value)
        image[column] = _UNKNOWN if _is_unavailable_json(schema, typed, marks) else typed
    return image


def _completed(after: dict[str, Any], before: dict[str, Any] | None) -> dict[str, Any]:
    """Fill unavailable columns from the before image (REPLICA IDENTITY FULL): the value just
    before this change. A NULL there is no value: an unchanged TOASTed value is never NULL,
    so such a NULL only means the identity did not include the column."""
    image = dict(after)
    for column, value in after.items():
        earlier = (before or {}).get(column)
        if value is _UNKNOWN and earlier is not None and earlier is not _UNKNOWN:
            image[column] = earlier
    return image


def _key(
    record: dict[str, Any],
    topic: str,
    op: str,
    image: dict[str, Any],
    source_name: str,
    source_table: str,
    declared_keys: KeyLookup | None,
) -> dict[str, Any]:
    declared = None
    if declared_keys is not None:
        try:
            declared = declared_keys("debezium", source_name, source_table)
        except Exception as exc:  # a settings lookup failure is reported with the record
            raise _BadRecord(f"declared_keys failed: {type(exc).__name__}: {exc}") from None
    if declared:
        which = "before" if op == "delete" else "after"
        key = {}
        for column in declared:
            if column not in image:
                raise _BadRecord(f"key column {column!r} missing from the {which} image")
            if image[column] is _UNKNOWN:
                raise _BadRecord(f"key column {column!r} is unavailable in the {which} image")
            key[column] = image[column]
        return key

    key_schema, raw = _embedded(record, "key")
    if raw is None or raw == {}:
        raise _BadRecord(f"no key: {topic} record has no key and {source_table} no declared key")
    if not isinstance(raw, dict):
        raise _BadRecord("key is not an object")
    columns = _struct_fields(key_schema, "key schema") if key_schema is not None else None
    key = {}
    for column, value in raw.items():
        schema = None
        if columns is not None:
            schema = columns.get(column)
            if schema is None:
                raise _BadRecord(f"key column {column!r} is not in the key schema")
        key[column] = _typed_column(column, schema, value)
    return key


def _unavailable(value: Any, schema: dict[str, Any] | None, marks: _Placeholders) -> bool:
    """Whether a raw column value is the placeholder in the form the connector gives it.

    The base64 form counts for bytes columns, and for any string when no schema says the
    column is text; an array is unavailable if it holds the placeholder.
    """
    if isinstance(value, str):
        if value in marks.texts:
            return True
        return value in marks.base64s and (schema is None or schema.get("type") == "bytes")
    if isinstance(value, list):
        if value in marks.byte_lists:
            return True
        items = schema.get("items") if schema is not None else None
        return any(isinstance(item, str) and _unavailable(item, items, marks) for item in value)
    if isinstance(value, dict):
        return value in marks.maps
    return False


def _is_unavailable_json(schema: dict[str, Any] | None, typed: Any, marks: _Placeholders) -> bool:
    """An hstore column in the default JSON mode gives the placeholder map as JSON text."""
    return (
        schema is not None
        and schema.get("name") == "io.debezium.data.Json"
        and isinstance(typed, JsonDocument)
        and isinstance(typed.value, dict)
        and typed.value in marks.maps
    )


def _typed_column(column: str, schema: dict[str, Any] | None, value: Any) -> Any:
    try:
        return _typed(schema, value)
    except (ValueError, TypeError, OverflowError) as exc:
        raise _BadRecord(f"column {column!r}: {exc}") from None


def _typed(schema: dict[str, Any] | None, value: Any) -> Any:
    """The canonical JSON value of one Kafka Connect value, by its semantic name first."""
    if value is None:
        return None
    if schema is None:
        return normalize(value)
    if not isinstance(schema, dict):
        raise ValueError(f"bad schema {schema!r}")
    convert = _SEMANTIC.get(schema.get("name"))
    if convert is None:
        convert = _PHYSICAL.get(schema.get("type"))
    if convert is None:
        raise ValueError(f"unknown schema type {schema.get('type')!r}")
    return convert(schema, value)


def _integer(value: Any, what: str) -> int:
    if not _is_int(value):
        raise ValueError(f"{what} expects an integer, got {value!r}")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} expects a string, got {value!r}")
    return value


def _base64(value: Any, what: str) -> bytes:
    try:
        return base64.b64decode(_text(value, what), validate=True)
    except binascii.Error:
        raise ValueError(f"{what} expects base64, got {value!r}") from None


def _date(schema: dict[str, Any], value: Any) -> Any:
    days = _integer(value, "Date")
    return normalize(_EPOCH.date() + dt.timedelta(days=days))


def _time_of_day(per_second: int, what: str) -> Callable[[dict[str, Any], Any], str]:
    """'HH:MM:SS.ffffff' from a count since midnight; PostgreSQL allows 24:00:00, which no
    datetime.time holds, so the text is built from the count itself."""

    def convert(schema: dict[str, Any], value: Any) -> str:
        count = _integer(value, what)
        if not 0 <= count <= _SECONDS_PER_DAY * per_second:
            raise ValueError(f"{what} {count} is not a time of day")
        micros = count * 1_000_000 // per_second
        seconds, micro = divmod(micros, 1_000_000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return f"{hour:02d}:{minute:02d}:{second:02d}.{micro:06d}"

    return convert


def _wall_clock(per_second: int, what: str) -> Callable[[dict[str, Any], Any], str]:
    """A timestamp without zone: epoch units of its wall clock, floored to microseconds so that
    times before 1970 keep their order."""

    def convert(schema: dict[str, Any], value: Any) -> str:
        count = _integer(value, what)
        if count in _INFINITE_TIMESTAMPS:
            return _INFINITE_TIMESTAMPS[count]
        return normalize(_EPOCH + dt.timedelta(microseconds=count * 1_000_000 // per_second))

    return convert


def _zoned_timestamp(schema: dict[str, Any], value: Any) -> str:
    text = _text(value, "ZonedTimestamp")
    if text in _INFINITE_TEXTS:
        return text
    return format_instant_micros(parse_instant_ns(text) // 1000)


def _zoned_time(schema: dict[str, Any], value: Any) -> str:
    return _text(value, "ZonedTime")


def _fixed_decimal(schema: dict[str, Any], value: Any) -> Any:
    """Kafka Connect Decimal: the unscaled value as big-endian two's complement bytes, with
    the scale in the schema; JsonConverter's decimal.format=NUMERIC writes a plain number."""
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return normalize(Decimal(value))
    scale = (schema.get("parameters") or {}).get("scale")
    if scale is None:
        raise ValueError("Decimal schema without parameters.scale")
    if not (_is_int(scale) or (isinstance(scale, str) and _SCALE.fullmatch(scale))):
        raise ValueError(f"Decimal schema with a bad scale {scale!r}")
    return _scaled(_base64(value, "Decimal"), int(scale))


def _variable_decimal(schema: dict[str, Any], value: Any) -> Any:
    """NUMERIC without a declared scale: a struct holding its own scale and unscaled bytes."""
    if not isinstance(value, dict):
        raise ValueError(f"VariableScaleDecimal expects a struct, got {value!r}")
    if value.get("scale") is None:
        raise ValueError("VariableScaleDecimal without scale")
    scale = _integer(value["scale"], "VariableScaleDecimal scale")
    return _scaled(_base64(value.get("value"), "VariableScaleDecimal value"), scale)


def _scaled(unscaled: bytes, scale: int) -> Any:
    """Built from exact text: Decimal arithmetic would round to the context's 28 digits."""
    return normalize(Decimal(f"{int.from_bytes(unscaled, 'big', signed=True)}E{-scale}"))


def _json_column(schema: dict[str, Any], value: Any) -> Any:
    try:
        return parse_json_document(_text(value, "Json"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"Json holds no JSON: {exc}") from None


def _integer_value(schema: dict[str, Any], value: Any) -> Any:
    return normalize(_integer(value, schema["type"]))


def _float_value(schema: dict[str, Any], value: Any) -> Any:
    """Jackson quotes NaN and the infinities; other doubles are JSON numbers."""
    if isinstance(value, str) and value in NON_FINITE_FLOAT_TEXTS:
        return value
    if isinstance(value, (int, float, Decimal)) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"{schema['type']} expects a number, got {value!r}")


def _boolean_value(schema: dict[str, Any], value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"boolean expects true or false, got {value!r}")
    return value


def _string_value(schema: dict[str, Any], value: Any) -> str:
    return _text(value, "string")


def _bytes_value(schema: dict[str, Any], value: Any) -> str:
    """Re-encoded, so that one byte string has one spelling."""
    return normalize(_base64(value, "bytes"))


def _array_value(schema: dict[str, Any], value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"array expects an array, got {value!r}")
    return [_typed(schema.get("items"), item) for item in value]


def _map_value(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"map expects an object, got {value!r}")
    return {key: _typed(schema.get("values"), item) for key, item in value.items()}


def _struct_value(schema: dict[str, Any], value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ValueError(f"struct expects an object, got {value!r}")
    fields = {f.get("field"): f for f in schema.get("fields") or () if isinstance(f, dict)}
    unknown = sorted(set(value) - set(fields))
    if unknown:
        raise ValueError(f"struct field {unknown[0]!r} is not in its schema")
    return {name: _typed(fields[name], item) for name, item in value.items()}


_Converter = Callable[[dict[str, Any], Any], Any]

_SEMANTIC: dict[Any, _Converter] = {
    "io.debezium.time.Date": _date,
    "org.apache.kafka.connect.data.Date": _date,
    "io.debezium.time.Time": _time_of_day(1_000, "Time"),
    "org.apache.kafka.connect.data.Time": _time_of_day(1_000, "Time"),
    "io.debezium.time.MicroTime": _time_of_day(1_000_000, "MicroTime"),
    "io.debezium.time.NanoTime": _time_of_day(1_000_000_000, "NanoTime"),
    "io.debezium.time.Timestamp": _wall_clock(1_000, "Timestamp"),
    "org.apache.kafka.connect.data.Timestamp": _wall_clock(1_000, "Timestamp"),
    "io.debezium.time.MicroTimestamp": _wall_clock(1_000_000, "MicroTimestamp"),
    "io.debezium.time.NanoTimestamp": _wall_clock(1_000_000_000, "NanoTimestamp"),
    "io.debezium.time.ZonedTimestamp": _zoned_timestamp,
    "io.debezium.time.ZonedTime": _zoned_time,
    "org.apache.kafka.connect.data.Decimal": _fixed_decimal,
    "io.debezium.data.VariableScaleDecimal": _variable_decimal,
    "io.debezium.data.Json": _json_column,
}

_PHYSICAL: dict[Any, _Converter] = {
    **dict.fromkeys(_INTEGER_TYPES, _integer_value),
    # Kafka Connect's JsonConverter spells FLOAT32/FLOAT64 as "float"/"double" in schemas.
    "float": _float_value,
    "double": _float_value,
    "float32": _float_value,
    "float64": _float_value,
    "boolean": _boolean_value,
    "string": _string_value,
    "bytes": _bytes_value,
    "array": _array_value,
    "map": _map_value,
    "struct": _struct_value,
}
