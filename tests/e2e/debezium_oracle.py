"""Independent expected-result oracle for Debezium landing files.

Written from the Debezium PostgreSQL connector documentation and the guarantees of
docs/guarantees.md only, in plain Python and independent of the production code (the rules every
family shares are in tests/e2e/oracle_core.py), so the end-to-end test can compare the
pipeline's marts with it. ``expected_marts(waves)`` gives ``cdc_current``, ``cdc_history`` and
``cdc_quarantine`` after landing all the given waves.

Conventions (agreed with the lead, implemented here from their description):

- input: ``debezium/<server>/**/*.jsonl``, one ``kcat -J`` record per line; ``key`` and
  ``payload`` are JSON strings, with or without the ``{"schema", "payload"}`` envelope (detected
  per record); ``payload`` null is a tombstone and is skipped (not quarantined);
- identity: source_name = the server directory, source_table = ``<schema>.<table>`` from the
  topic ``<server>.<schema>.<table>``, key = the record key's fields;
- values, with the envelope typed by the field schema: io.debezium.time.Date -> 'YYYY-MM-DD',
  MicroTimestamp -> 'YYYY-MM-DDTHH:MM:SS.ffffff' (no zone), ZonedTimestamp -> UTC
  'YYYY-MM-DDTHH:MM:SS.ffffffZ', Decimal (base64 unscaled + parameters.scale) and
  VariableScaleDecimal ({scale, value}) -> an int if integral within +-2**53, else a JSON number
  iff Decimal(repr(float(d))) == d, else the plain decimal string; ints beyond +-2**53 -> decimal
  string; bytes -> the base64 string as sent; io.debezium.data.Json -> the parsed JSON value;
  arrays element by element. Without the envelope values are plain JSON (numbers as above);
- op: c insert, u update, d delete, r snapshot, t truncate (no key: every key of the table);
- order per (server, table, key): source.lsn as an integer; at an equal lsn a delete (or
  truncate) before anything else; then landing order (wave, path, line);
- dedupe: a good record counts once per (server, topic, partition, offset); a change counts once
  per (key, lsn, op) (a truncate once per (table, lsn));
- placeholders: ``__debezium_unavailable_value``, its base64, or an array holding only it, mean
  "unknown". The column takes the key's latest earlier known value in the order above (an update's
  before image counts as the latest if it carries a real value); the create of a primary key change
  (a delete of another key of the table with the same lsn and txId) takes the old key's latest
  values instead; with no such value the column is unknown: absent from row_json, listed (sorted)
  in unavailable_columns. Delete before images are not used (under the default replica identity
  they hold the key columns only, the rest null);
- versions, by the rules every family shares: a transaction is a txId (a change without one is
  its own); delete and truncate close the open version; a change's time is source.ts_us, else
  source.ts_ms * 1000.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from .oracle_core import (
    MAX_EXACT_INT,
    BadInput,
    Step,
    canonical_int,
    canonical_json,
    instant_text,
    is_int,
    json_lines,
    land,
    marts,
)

SOURCE_SYSTEM = "debezium"
PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_BASE64 = base64.b64encode(PLACEHOLDER.encode("utf-8")).decode("ascii")
OP_NAMES = {"c": "insert", "u": "update", "d": "delete", "r": "snapshot", "t": "truncate"}

_LOCAL_EPOCH = datetime(1970, 1, 1)
_EPOCH_DATE = date(1970, 1, 1)

DECIMAL = "org.apache.kafka.connect.data.Decimal"
VARIABLE_SCALE_DECIMAL = "io.debezium.data.VariableScaleDecimal"
DATE = "io.debezium.time.Date"
MICRO_TIMESTAMP = "io.debezium.time.MicroTimestamp"
ZONED_TIMESTAMP = "io.debezium.time.ZonedTimestamp"
JSON_TYPE = "io.debezium.data.Json"


class _Unknown:
    """The value of a column that carried the unavailable-value placeholder."""

    def __repr__(self) -> str:
        return "UNKNOWN"


UNKNOWN = _Unknown()


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def canonical_decimal(value: Decimal) -> int | float | str:
    """An int if integral within +-2**53, a float if a double round-trips it, else plain text."""
    if not value.is_finite():
        raise BadInput(f"non-finite number {value}")
    if value == value.to_integral_value() and -MAX_EXACT_INT <= value <= MAX_EXACT_INT:
        return int(value)
    if Decimal(repr(float(value))) == value:
        return float(value)
    return format(value, "f")


def canonical_plain(value: Any) -> Any:
    """A plain JSON value (numbers parsed as int / Decimal) in the canonical typing."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return canonical_int(value)
    if isinstance(value, Decimal):
        return canonical_decimal(value)
    if isinstance(value, float):
        return canonical_decimal(Decimal(repr(value)))
    if isinstance(value, list):
        return [canonical_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): canonical_plain(v) for k, v in value.items()}
    raise BadInput(f"unsupported value {value!r}")


def parse_json(text: str) -> Any:
    """JSON with exact numbers: ints as int, other numbers as Decimal."""
    return json.loads(text, parse_float=Decimal, parse_constant=Decimal)


def is_placeholder(value: Any) -> bool:
    """The default unavailable-value placeholder, its base64 form, or an array holding only it."""
    if isinstance(value, str):
        return value in (PLACEHOLDER, PLACEHOLDER_BASE64)
    if isinstance(value, list):
        return len(value) == 1 and isinstance(value[0], str) and is_placeholder(value[0])
    return False


def _base64(value: Any, what: str) -> bytes:
    if not isinstance(value, str):
        raise BadInput(f"{what}: expected a base64 string, got {value!r}")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise BadInput(f"{what}: not base64: {value!r}") from exc


def _unscaled_decimal(encoded: Any, scale: int, what: str) -> Decimal:
    raw = _base64(encoded, what)
    if raw == b"":
        raise BadInput(f"{what}: empty decimal bytes")
    unscaled = int.from_bytes(raw, "big", signed=True)
    return Decimal(f"{unscaled}E{-scale}")


_ZONED_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$"
)


def zoned_to_utc(value: Any) -> str:
    """An ISO-8601 timestamp with offset as UTC 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    if not isinstance(value, str):
        raise BadInput(f"bad ZonedTimestamp {value!r}")
    m = _ZONED_RE.match(value)
    if m is None:
        raise BadInput(f"bad ZonedTimestamp {value!r}")
    micros = int((m.group(7) or "")[:6].ljust(6, "0"))
    try:
        parsed = datetime(
            int(m.group(1)),
            int(m.group(2)),
            int(m.group(3)),
            int(m.group(4)),
            int(m.group(5)),
            int(m.group(6)),
            micros,
            tzinfo=UTC,
        )
    except ValueError as exc:
        raise BadInput(f"bad ZonedTimestamp {value!r}: {exc}") from exc
    zone = m.group(8)
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        parsed = parsed - sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return instant_text(parsed)


def typed_value(value: Any, schema: dict[str, Any] | None, what: str = "value") -> Any:
    """One value typed by its Kafka Connect field schema (plain JSON when there is none)."""
    if schema is None:
        return canonical_plain(value)
    if value is None:
        return None
    name = schema.get("name")
    kind = schema.get("type")
    try:
        if name == DECIMAL:
            scale = int((schema.get("parameters") or {}).get("scale", 0))
            return canonical_decimal(_unscaled_decimal(value, scale, what))
        if name == VARIABLE_SCALE_DECIMAL:
            if not isinstance(value, dict) or not is_int(value.get("scale")):
                raise BadInput(f"{what}: bad VariableScaleDecimal {value!r}")
            return canonical_decimal(_unscaled_decimal(value.get("value"), value["scale"], what))
        if name == DATE:
            if not is_int(value):
                raise BadInput(f"{what}: bad Date {value!r}")
            return (_EPOCH_DATE + timedelta(days=value)).isoformat()
        if name == MICRO_TIMESTAMP:
            if not is_int(value):
                raise BadInput(f"{what}: bad MicroTimestamp {value!r}")
            local = _LOCAL_EPOCH + timedelta(microseconds=value)
            return local.strftime("%Y-%m-%dT%H:%M:%S.%f")
        if name == ZONED_TIMESTAMP:
            return zoned_to_utc(value)
        if name == JSON_TYPE:
            if not isinstance(value, str):
                raise BadInput(f"{what}: bad Json {value!r}")
            try:
                return canonical_plain(parse_json(value))
            except ValueError as exc:
                raise BadInput(f"{what}: Json value is not JSON: {exc}") from exc
    except OverflowError as exc:
        raise BadInput(f"{what}: out of range: {value!r}") from exc
    if kind in ("int8", "int16", "int32", "int64"):
        if not is_int(value):
            raise BadInput(f"{what}: expected {kind}, got {value!r}")
        return canonical_int(value)
    if kind in ("float32", "float64", "double", "float"):
        if is_int(value):
            return canonical_int(value)
        if not isinstance(value, Decimal):
            raise BadInput(f"{what}: expected {kind}, got {value!r}")
        return canonical_decimal(value)
    if kind == "boolean":
        if not isinstance(value, bool):
            raise BadInput(f"{what}: expected boolean, got {value!r}")
        return value
    if kind == "string":
        if not isinstance(value, str):
            raise BadInput(f"{what}: expected string, got {value!r}")
        return value
    if kind == "bytes":
        _base64(value, what)
        return value
    if kind == "array":
        if not isinstance(value, list):
            raise BadInput(f"{what}: expected array, got {value!r}")
        return [typed_value(v, schema.get("items") or {}, what) for v in value]
    if kind == "map":
        if not isinstance(value, dict):
            raise BadInput(f"{what}: expected map, got {value!r}")
        return {str(k): typed_value(v, schema.get("values") or {}, what) for k, v in value.items()}
    if kind == "struct":
        if not isinstance(value, dict):
            raise BadInput(f"{what}: expected struct, got {value!r}")
        fields = {f.get("field"): f for f in schema.get("fields") or []}
        return {str(k): typed_value(v, fields.get(k), what) for k, v in value.items()}
    return canonical_plain(value)


def convert_image(image: Any, struct: dict[str, Any] | None, what: str) -> dict[str, Any]:
    """A row image (column -> raw value) as column -> canonical value or UNKNOWN."""
    if not isinstance(image, dict):
        raise BadInput(f"{what} is not an object")
    fields: dict[str, Any] | None = None
    if struct is not None:
        fields = {f.get("field"): f for f in struct.get("fields") or [] if isinstance(f, dict)}
    out: dict[str, Any] = {}
    for column, raw in image.items():
        if is_placeholder(raw):
            out[column] = UNKNOWN
            continue
        schema = None if fields is None else fields.get(column, {})
        out[column] = typed_value(raw, schema, f"{what}.{column}")
    return out


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass
class Change:
    """One good, interpreted Debezium change record."""

    source_name: str
    source_table: str
    op: str  # c u d r t
    lsn: int
    tx: int | None
    ts: int  # source time, epoch microseconds
    key_json: str | None  # None for a truncate
    after: dict[str, Any] | None
    before: dict[str, Any] | None
    offset_id: tuple[str, int, int]
    seq: int = 0  # landing order


def _unwrap(obj: Any) -> tuple[dict[str, Any] | None, Any]:
    """(schema, payload) of a JsonConverter value with the envelope; (None, obj) without."""
    if isinstance(obj, dict) and set(obj) == {"schema", "payload"}:
        schema = obj["schema"]
        if isinstance(schema, dict):
            return schema, obj["payload"]
    return None, obj


def _field(schema: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if schema is None:
        return None
    for f in schema.get("fields") or []:
        if isinstance(f, dict) and f.get("field") == name:
            return f
    return None


def interpret(source_name: str, record: Any) -> Change | None:
    """Check and interpret one kcat record; None for a tombstone; BadInput for bad input."""
    if not isinstance(record, dict):
        raise BadInput("record is not an object")
    topic = record.get("topic")
    partition = record.get("partition")
    offset = record.get("offset")
    if not isinstance(topic, str) or not is_int(partition) or not is_int(offset):
        raise BadInput("missing or bad topic / partition / offset")
    if "payload" not in record:
        raise BadInput("record has no payload field")
    payload_text = record["payload"]
    key_text = record.get("key")
    if payload_text is None:
        return None  # tombstone
    if not isinstance(payload_text, str):
        raise BadInput("payload is not a string")
    parts = topic.split(".")
    if len(parts) != 3 or not all(parts):
        raise BadInput(f"topic {topic!r} is not <server>.<schema>.<table>")
    source_table = f"{parts[1]}.{parts[2]}"
    try:
        value = parse_json(payload_text)
    except ValueError as exc:
        raise BadInput(f"payload is not JSON: {exc}") from exc
    value_schema, body = _unwrap(value)
    if not isinstance(body, dict):
        raise BadInput("payload is not an object")
    op = body.get("op")
    if op not in OP_NAMES:
        raise BadInput(f"unknown op {op!r}")
    source = body.get("source")
    if not isinstance(source, dict):
        raise BadInput("missing source")
    lsn = source.get("lsn")
    if not is_int(lsn):
        raise BadInput(f"missing or bad source.lsn {lsn!r}")
    tx = source.get("txId")
    if tx is not None and not is_int(tx):
        raise BadInput(f"bad source.txId {tx!r}")
    if is_int(source.get("ts_us")):
        ts = source["ts_us"]
    elif is_int(source.get("ts_ms")):
        ts = source["ts_ms"] * 1000
    else:
        raise BadInput("missing source.ts_us / ts_ms")
    offset_id = (topic, partition, offset)
    if op == "t":
        return Change(source_name, source_table, op, lsn, tx, ts, None, None, None, offset_id)
    if not isinstance(key_text, str):
        raise BadInput("missing record key")
    try:
        key_obj = parse_json(key_text)
    except ValueError as exc:
        raise BadInput(f"key is not JSON: {exc}") from exc
    key_schema, key_body = _unwrap(key_obj)
    if not isinstance(key_body, dict) or not key_body:
        raise BadInput("key is not a non-empty object")
    key = convert_image(key_body, key_schema, "key")
    if any(v is UNKNOWN for v in key.values()):
        raise BadInput("placeholder in the key")
    before_schema = _field(value_schema, "before")
    after_schema = _field(value_schema, "after")
    after = None
    if op in ("c", "u", "r"):
        after = convert_image(body.get("after"), after_schema, "after")
    elif body.get("after") is not None:
        raise BadInput("delete with an after image")
    before = None
    if body.get("before") is not None:
        before = convert_image(body.get("before"), before_schema, "before")
    return Change(
        source_name, source_table, op, lsn, tx, ts, canonical_json(key), after, before, offset_id
    )


# --------------------------------------------------------------------------------------------
# Each key's steps
# --------------------------------------------------------------------------------------------


def _rank(op: str) -> int:
    return 0 if op in ("d", "t") else 1


def apply_table(changes: list[Change]) -> dict[str, list[Step]]:
    """Walk one table's changes in source order; the steps of each key."""
    ordered = sorted(changes, key=lambda c: (c.lsn, _rank(c.op), c.seq))
    keys = sorted({c.key_json for c in changes if c.key_json is not None})
    steps: dict[str, list[Step]] = {k: [] for k in keys}
    memory: dict[str, dict[str, Any]] = {k: {} for k in keys}
    old_rows: dict[tuple[int, int | None], tuple[str, dict[str, Any]]] = {}
    for c in ordered:
        tx: tuple[Any, ...] = ("tx", c.tx) if c.tx is not None else ("own", c.seq)
        op = OP_NAMES[c.op]
        if c.op == "t":
            for k in keys:
                steps[k].append(Step(tx, op, c.ts, None))
            continue
        assert c.key_json is not None
        k = c.key_json
        known = memory[k]
        if c.op == "d":
            if c.tx is not None:
                old_rows[(c.lsn, c.tx)] = (k, dict(known))
            steps[k].append(Step(tx, op, c.ts, None))
            continue
        source = known
        paired = old_rows.get((c.lsn, c.tx)) if c.tx is not None else None
        if c.op == "c" and paired is not None and paired[0] != k:
            source = paired[1]  # primary key change: the old key's latest values
        elif c.op == "u" and c.before is not None:
            for column, value in c.before.items():
                if value is not UNKNOWN:
                    known[column] = value
        assert c.after is not None
        row: dict[str, Any] = {}
        unknown: list[str] = []
        for column, value in c.after.items():
            if value is not UNKNOWN:
                row[column] = value
            elif column in source:
                row[column] = source[column]
            else:
                unknown.append(column)
        known.update(row)
        steps[k].append(Step(tx, op, c.ts, (canonical_json(row), tuple(sorted(unknown)))))
    return steps


# --------------------------------------------------------------------------------------------
# Marts
# --------------------------------------------------------------------------------------------


def collect(
    waves: list[dict[str, bytes]],
) -> tuple[dict[tuple[str, str], list[Change]], list[dict[str, Any]]]:
    """Deduplicated changes per (server, table), and the quarantine rows."""
    changes, quarantine = land(
        waves, SOURCE_SYSTEM, (".jsonl",), lambda _, data: json_lines(data), interpret
    )
    seen_offsets: set[tuple[str, str, int, int]] = set()
    seen_changes: set[tuple[str, str, str | None, int, str]] = set()
    tables: dict[tuple[str, str], list[Change]] = {}
    seq = 0
    for server, change in changes:
        offset_key = (server, *change.offset_id)
        if offset_key in seen_offsets:
            continue
        seen_offsets.add(offset_key)
        change_key = (server, change.source_table, change.key_json, change.lsn, change.op)
        if change_key in seen_changes:
            continue
        seen_changes.add(change_key)
        seq += 1
        change.seq = seq
        tables.setdefault((server, change.source_table), []).append(change)
    return tables, quarantine


def expected_marts(waves: list[dict[str, bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Expected cdc_current, cdc_history and cdc_quarantine after landing all ``waves``."""
    tables, quarantine = collect(waves)
    steps_by_key = {
        (source_name, source_table, key_json): steps
        for (source_name, source_table), changes in tables.items()
        for key_json, steps in apply_table(changes).items()
    }
    return marts(SOURCE_SYSTEM, steps_by_key, quarantine)
