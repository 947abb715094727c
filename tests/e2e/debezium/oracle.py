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
  source.ts_ms * 1000;
- transaction metadata (``provide.transaction.metadata``): the topic ``<server>.transaction``
  carries a BEGIN and an END record per transaction (a status, no op); END holds event_count and
  data_collections [{data_collection, event_count}] (numbers or decimal strings), which must add
  up; a change event then carries ``transaction`` {id, total_order, data_collection_order}. A
  transaction is its id, or the txid of a ``<txid>:<lsn>`` id. Its END is the first good END
  landed for it (wave, path, line); a later one with the same counts is a redelivery, one with
  other counts is quarantined. A change of a transaction applies once, after all given waves,
  its END has landed and, per data collection of the END (``<schema>.<table>``, the topic's),
  every event numbered 1 to its count there has (a redelivered event counts once); until then
  none of the transaction applies. A change without a block applies as it lands. A transaction
  with a landed line (an event, BEGIN or END) that is not complete is pending; it is overdue
  when a complete transaction of its server has a later time (the latest source time or ts_ms
  among each one's lines).
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

from tests.e2e.oracle_core import (
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
    # (transaction, data collection, data_collection_order) of a change with a transaction
    # block, else None
    txn: tuple[str, str, int] | None = None
    seq: int = 0  # landing order


@dataclass
class TxRecord:
    """One good BEGIN or END record of a server's transaction topic."""

    status: str
    key: str
    counts: dict[str, int] | None  # END only: data collection -> its events
    ts: int | None  # ts_ms, in epoch microseconds
    offset_id: tuple[str, int, int]
    file_path: str
    line_number: int


_POSTGRES_TX = re.compile(r"^([0-9]+):[0-9]+$")


def transaction_of(tx_id: Any, what: str) -> str:
    """A transaction's key: the txid of a PostgreSQL ``<txid>:<lsn>`` id, else the id."""
    if not isinstance(tx_id, str) or tx_id == "":
        raise BadInput(f"bad {what} {tx_id!r}")
    m = _POSTGRES_TX.match(tx_id)
    return m.group(1) if m else tx_id


def _count(value: Any, what: str, least: int) -> int:
    if isinstance(value, str) and value.isdigit() and value.isascii():
        value = int(value)
    if not is_int(value) or value < least or value >= 2**63:
        raise BadInput(f"bad {what} {value!r}")
    return value


def interpret_transaction_record(
    body: dict[str, Any], offset_id: tuple[str, int, int], where: tuple[str, int]
) -> TxRecord:
    status = body.get("status")
    if status not in ("BEGIN", "END"):
        raise BadInput(f"bad transaction status {status!r}")
    key = transaction_of(body.get("id"), "transaction id")
    ts = body.get("ts_ms")
    if ts is not None and not is_int(ts):
        raise BadInput(f"bad ts_ms {ts!r}")
    total, collections = body.get("event_count"), body.get("data_collections")
    if status == "END" and (total is None or collections is None):
        raise BadInput("END without its counts")
    counts: dict[str, int] | None = None
    if collections is not None:
        if not isinstance(collections, list):
            raise BadInput("data_collections is not a list")
        counts = {}
        for entry in collections:
            if not isinstance(entry, dict):
                raise BadInput("bad data_collections entry")
            name = entry.get("data_collection")
            if not isinstance(name, str) or name == "" or name in counts:
                raise BadInput(f"bad data_collection {name!r}")
            counts[name] = _count(entry.get("event_count"), "event_count", 0)
    if total is not None:
        total = _count(total, "event_count", 0)
        if counts is not None and sum(counts.values()) != total:
            raise BadInput("data_collections do not add up to event_count")
    return TxRecord(
        status,
        key,
        counts if status == "END" else None,
        None if ts is None else ts * 1000,
        offset_id,
        *where,
    )


def interpret_block(block: Any, source_table: str) -> tuple[str, str, int] | None:
    """A change event's transaction block as (transaction, data collection, its order there)."""
    if block is None:
        return None
    if not isinstance(block, dict):
        raise BadInput("transaction block is not an object")
    key = transaction_of(block.get("id"), "transaction.id")
    _count(block.get("total_order"), "total_order", 1)
    return key, source_table, _count(block.get("data_collection_order"), "order", 1)


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


def interpret(source_name: str, located: Any) -> Change | TxRecord | None:
    """Check and interpret one kcat record (with its file and line); None for a tombstone;
    BadInput for bad input."""
    path, line, record = located
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
    try:
        value = parse_json(payload_text)
    except ValueError as exc:
        raise BadInput(f"payload is not JSON: {exc}") from exc
    value_schema, body = _unwrap(value)
    if not isinstance(body, dict):
        raise BadInput("payload is not an object")
    offset_id = (topic, partition, offset)
    if topic == f"{source_name}.transaction" and "status" in body and body.get("op") is None:
        return interpret_transaction_record(body, offset_id, (path, line))
    parts = topic.split(".")
    if len(parts) != 3 or not all(parts):
        raise BadInput(f"topic {topic!r} is not <server>.<schema>.<table>")
    source_table = f"{parts[1]}.{parts[2]}"
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
    txn = interpret_block(body.get("transaction"), source_table)
    if op == "t":
        return Change(source_name, source_table, op, lsn, tx, ts, None, None, None, offset_id, txn)
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
        source_name,
        source_table,
        op,
        lsn,
        tx,
        ts,
        canonical_json(key),
        after,
        before,
        offset_id,
        txn,
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


def _located(path: str, data: bytes) -> list[tuple[int, Any, str | None]]:
    """The file's records, each with its file and line (the quarantine of an END names them)."""
    return [
        (number, None if raw is None else (path, number, raw), error)
        for number, raw, error in json_lines(data)
    ]


@dataclass
class Landed:
    """What all given waves landed, each record once (by topic, partition and offset)."""

    changes: list[tuple[str, Change]]  # (server, change), in landing order
    transaction_records: list[tuple[str, TxRecord]]
    quarantine: list[dict[str, Any]]


def landed(waves: list[dict[str, bytes]]) -> Landed:
    items, quarantine = land(waves, SOURCE_SYSTEM, (".jsonl",), _located, interpret)
    seen_offsets: set[tuple[str, str, int, int]] = set()
    result = Landed([], [], quarantine)
    for server, item in items:
        offset_key = (server, *item.offset_id)
        if offset_key in seen_offsets:
            continue
        seen_offsets.add(offset_key)
        if isinstance(item, TxRecord):
            result.transaction_records.append((server, item))
        else:
            result.changes.append((server, item))
    return result


def transaction_states(
    found: Landed,
) -> tuple[set[tuple[str, str]], dict[tuple[str, str], int | None], list[dict[str, Any]]]:
    """(the complete transactions, every transaction seen with its latest time, the quarantine
    rows of ENDs that contradict their transaction's first END)."""
    ends: dict[tuple[str, str], TxRecord] = {}
    conflicts = []
    times: dict[tuple[str, str], int | None] = {}

    def saw(transaction: tuple[str, str], at: int | None) -> None:
        known = times.get(transaction)
        times[transaction] = at if known is None else known if at is None else max(known, at)

    for server, record in found.transaction_records:
        transaction = (server, record.key)
        saw(transaction, record.ts)
        if record.status != "END":
            continue
        first = ends.setdefault(transaction, record)
        if first is not record and first.counts != record.counts:
            conflicts.append(
                {
                    "source_system": SOURCE_SYSTEM,
                    "source_name": server,
                    "file_path": record.file_path,
                    "line_number": record.line_number,
                    "reason": "an END that counts otherwise than the transaction's first",
                }
            )
    events: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for server, change in found.changes:
        if change.txn is not None:
            key, collection, order = change.txn
            saw((server, key), change.ts)
            events.setdefault((server, key), set()).add((collection, order))
    complete = {
        transaction
        for transaction, end in ends.items()
        if all(
            {(name, n) for n in range(1, count + 1)} <= events.get(transaction, set())
            for name, count in (end.counts or {}).items()
        )
    }
    return complete, times, conflicts


def collect(
    waves: list[dict[str, bytes]],
) -> tuple[dict[tuple[str, str], list[Change]], list[dict[str, Any]]]:
    """Deduplicated changes per (server, table) that apply, and the quarantine rows."""
    found = landed(waves)
    complete, _, conflicts = transaction_states(found)
    quarantine = sorted(
        found.quarantine + conflicts, key=lambda row: (row["file_path"], row["line_number"])
    )
    seen_changes: set[tuple[str, str, str | None, int, str]] = set()
    tables: dict[tuple[str, str], list[Change]] = {}
    seq = 0
    for server, change in found.changes:
        if change.txn is not None and (server, change.txn[0]) not in complete:
            continue  # its transaction waits
        change_key = (server, change.source_table, change.key_json, change.lsn, change.op)
        if change_key in seen_changes:
            continue
        seen_changes.add(change_key)
        seq += 1
        change.seq = seq
        tables.setdefault((server, change.source_table), []).append(change)
    return tables, quarantine


def expected_pending(waves: list[dict[str, bytes]]) -> dict[str, dict[str, int]]:
    """Per server that has sent transaction metadata: its transactions not complete after all
    ``waves`` (pending), and those of them older than a complete one (overdue)."""
    complete, times, _ = transaction_states(landed(waves))
    newest: dict[str, int] = {}
    for server, key in complete:
        at = times[(server, key)]
        if at is not None:
            newest[server] = max(newest.get(server, at), at)
    counts: dict[str, dict[str, int]] = {
        server: {"pending": 0, "overdue": 0} for server, _ in times
    }
    for (server, key), at in times.items():
        if (server, key) in complete:
            continue
        counts[server]["pending"] += 1
        late = at is not None and server in newest and at < newest[server]
        counts[server]["overdue"] += int(late)
    return counts


def expected_marts(waves: list[dict[str, bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Expected cdc_current, cdc_history and cdc_quarantine after landing all ``waves``."""
    tables, quarantine = collect(waves)
    steps_by_key = {
        (source_name, source_table, key_json): steps
        for (source_name, source_table), changes in tables.items()
        for key_json, steps in apply_table(changes).items()
    }
    return marts(SOURCE_SYSTEM, steps_by_key, quarantine)
