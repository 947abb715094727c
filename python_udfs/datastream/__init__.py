"""Datastream events (JSON lines, or Avro container files) to rows of the unified change log.

The output shape is docs/decisions/001-unified-change-log.md; the rules are
docs/sources/datastream.md and docs/architecture.md, each promise with its tests in
docs/guarantees.md. Field names
follow Datastream's documented generic and source-specific metadata for MySQL, Oracle,
PostgreSQL, SQL Server, Spanner, Salesforce and MongoDB.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

import fastavro

from python_udfs.change_log import FIELDS as CHANGE_FIELDS
from python_udfs.datastream.column_types import avro_column_type
from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import (
    canonical_json,
    line_object,
    loads_exact,
    normalize,
    parse_instant_ns,
    pos_instant,
    pos_int64,
    pos_join,
    pos_text,
    pos_uint,
)
from python_udfs.source_types import STRING, column_types_json
from python_udfs.table_settings import KeyLookup

EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source_type", "string"),
    ("read_method", "string"),
    ("key_basis", "string"),
    # column_types.py: column -> [Avro type, Spark type]; NULL for JSON events,
    # which carry no types.
    ("column_types", "string"),
)

# The version of the encoding of `sort_pos` and `txn_id` this decoder gives (the
# `_<source>_position` functions): raise it with any change to either, then pin the new
# digest in tests/unit/test_sort_key_pins.py. The warehouse records the version it was built
# with and `cdcw run` refuses to mix encodings until a full refresh (docs/decisions/013).
SORT_KEY_VERSION = 1

# Where an Avro file's line keeps its payload's column types (from the file's schema), beside
# the event's own fields; the leading underscore keeps it apart from any field Datastream adds.
PAYLOAD_TYPES = "_payload_types"
# What a row's identity came from (`key_basis`). The last two are no real key: a row keeps its
# ROWID only until it moves, and a whole-row identity changes with every update.
DECLARED_KEY = "declared"
ROW_ID_KEY = "row_id"
WHOLE_ROW_KEY = "whole_row"
KEYLESS_BASES = (ROW_ID_KEY, WHOLE_ROW_KEY)
FIELDS = CHANGE_FIELDS + tuple(name for name, _ in EXTRA_COLUMNS)

_READ_METHOD_PREFIXES = (
    ("mysql-", "mysql"),
    ("oracle-", "oracle"),
    ("postgres-", "postgresql"),
    ("postgresql-", "postgresql"),
    ("sqlserver-", "sqlserver"),
    ("spanner-", "spanner"),
    ("salesforce-", "salesforce"),
    ("mongodb-", "mongodb"),
)

# Checked in this order: log_file, lsn and primary_keys are shared by several sources, so the
# fields unique to one source decide first.
_TELLTALE_FIELDS = (
    (("change_stream_name", "mod_index", "record_sequence"), "spanner"),
    (("physical_location", "replication_index"), "sqlserver"),
    (("rs_id", "ssn", "scn"), "oracle"),
    (("log_position",), "mysql"),
    (("collection",), "mongodb"),
    (("object_name", "domain"), "salesforce"),
    (("lsn",), "postgresql"),
)

_TABLE_FIELDS = {
    "mysql": ("database", "table"),
    "oracle": ("schema", "table"),
    "postgresql": ("schema", "table"),
    "sqlserver": ("schema", "table"),
    "mongodb": ("database", "collection"),
    "salesforce": ("object_name",),
    "spanner": ("table",),
}

_OPS = {
    "INSERT": "insert",
    "CREATE": "insert",
    "UPDATE": "update",
    "UPDATE-INSERT": "update",
    "DELETE": "delete",
    "UPDATE-DELETE": "delete",
}

_HEX = re.compile(r"(?:0[xX])?([0-9a-fA-F]+)")
_DIGITS = re.compile(r"[0-9]+")
_PG_LSN = re.compile(r"([0-9a-fA-F]{1,8})/([0-9a-fA-F]{1,8})")
_BINLOG_FILE = re.compile(r"(.*?)([0-9]+)", re.DOTALL)


class _BadEvent(Exception):
    """An event that cannot enter the change log; the message is the quarantine reason."""


def flatten_event(
    line: str, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """Turn one Datastream JSON event into one change-log row, or into {'error': reason}
    (python_udfs/decoding.py's `Decoder`).

    Never raises: bad input must reach the quarantine with a reason instead of stopping a run.
    The key is, in order of precedence: the key declared in the table settings
    (`declared_keys('datastream', source_name, source_table)`), the event's `primary_keys`,
    SQL Server's `replication_index`, and otherwise every payload column. That last case is a
    keyless table, whose whole row is its identity: Datastream carries no before image, so an
    UPDATE of such a row shows up as a new identity and the old one stays live; declare a key
    for such tables. `key_basis` names which of these (or an Oracle row_id) the key came from,
    so that a run can list the tables without a real key.
    """
    try:
        return _flatten(line, source_name, settings.declared_keys)
    except _BadEvent as exc:
        return _error(str(exc))
    except Exception as exc:  # a UDF must not fail the run on input it did not foresee
        return _error(f"unexpected error: {type(exc).__name__}: {exc}")


def avro_events(fileobj: IO[bytes]) -> Iterator[tuple[int, str | None, str | None]]:
    """Yield (record number from 1, JSON event line, None) for each record of an Avro file.

    Each record becomes the JSON shape that `flatten_event` reads, so both formats share one
    path: payload values are normalised, the DATETIME record becomes naive ISO text, a JSON
    column its JSON value, timestamp-millis metadata instant text. What cannot be read yields
    (number, None, reason): an unreadable header as record 0, a corrupt block stops the file,
    a record whose values cannot be converted is reported and the next one is read.
    """
    try:
        reader = fastavro.reader(fileobj)
        schema = reader.writer_schema
        names = _avro_named_types(schema)
    except Exception as exc:  # any damage to the header makes the whole file unreadable
        yield 0, None, f"unreadable Avro header: {type(exc).__name__}: {exc}"
        return
    number = 0
    records = iter(reader)
    while True:
        number += 1
        try:
            record = next(records)
        except StopIteration:
            return
        except Exception as exc:  # a damaged block: nothing after it can be located
            yield number, None, f"unreadable Avro record: {type(exc).__name__}: {exc}"
            return
        try:
            yield number, _avro_record_to_line(schema, record, names), None
        except Exception as exc:  # one bad value spoils its record only
            yield number, None, f"unconvertible Avro record: {type(exc).__name__}: {exc}"


def avro_file_events(path: str) -> Iterator[tuple[int, str | None, str | None]]:
    """`avro_events` of the file at `path`; a file that cannot be opened is one record-0 error,
    so landing quarantines it instead of failing the run."""
    try:
        with open(path, "rb") as handle:
            yield from avro_events(handle)
    except OSError as exc:
        yield 0, None, f"unreadable file: {exc}"


def _error(reason: str) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row["error"] = reason
    return row


def _flatten(line: Any, source_name: str, declared_keys: KeyLookup | None) -> dict[str, Any]:
    try:
        event = line_object(line, loads_exact)
    except ValueError as exc:
        raise _BadEvent(str(exc)) from None

    event_id = event.get("uuid")
    if not isinstance(event_id, str) or not event_id:
        raise _BadEvent("missing field: uuid")
    read_method = event.get("read_method")
    if read_method is not None and not isinstance(read_method, str):
        raise _BadEvent(f"bad read_method: {read_method!r}")
    meta = event.get("source_metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise _BadEvent("source_metadata is not an object")
    source_type = _source_type(read_method, meta)

    if event.get("source_timestamp") is None:
        raise _BadEvent("missing field: source_timestamp")
    try:
        ts_ns = parse_instant_ns(event["source_timestamp"])
    except ValueError as exc:
        raise _BadEvent(f"bad source_timestamp: {exc}") from None
    payload = event.get("payload")
    if payload is None:
        raise _BadEvent("missing field: payload")
    if not isinstance(payload, dict):
        raise _BadEvent("payload is not an object")

    source_table = _source_table(source_type, meta, event)
    is_backfill = _is_backfill(read_method, meta)
    op = _op(source_type, meta, is_backfill)
    if is_backfill:
        sort_pos, txn_id = pos_instant(ts_ns), f"uuid:{event_id}"
    else:
        try:
            sort_pos, txn_id = _POSITIONS[source_type](event, meta, ts_ns, event_id)
        except ValueError as exc:
            raise _BadEvent(f"bad position: {exc}") from None

    key, key_basis = _key(payload, meta, source_type, declared_keys, source_name, source_table)
    return {
        "error": None,
        "source_table": source_table,
        "key_json": canonical_json(key),
        "op": op,
        "row_image": {column: canonical_json(value) for column, value in payload.items()},
        "is_backfill": is_backfill,
        "order_ts": ts_ns // 1000,
        "sort_pos": sort_pos,
        "committed_at": ts_ns // 1000,
        "txn_id": txn_id,
        "event_id": event_id,
        "source_type": source_type,
        "read_method": read_method,
        "key_basis": key_basis,
        "column_types": _column_types(event.get(PAYLOAD_TYPES)),
    }


def _column_types(payload_types: Any) -> str | None:
    if not isinstance(payload_types, dict):
        return None
    return column_types_json(
        {
            str(name): (pair[0], pair[1])
            if isinstance(pair, list) and len(pair) == 2
            else (None, STRING)
            for name, pair in payload_types.items()
        }
    )


def _source_type(read_method: str | None, meta: dict[str, Any]) -> str:
    """The read_method names the source; older or odd events still show it in their metadata."""
    method = (read_method or "").lower()
    for prefix, source_type in _READ_METHOD_PREFIXES:
        if method.startswith(prefix):
            return source_type
    for fields, source_type in _TELLTALE_FIELDS:
        if any(field in meta for field in fields):
            return source_type
    raise _BadEvent(f"unknown source type for read_method {read_method!r}")


def _flag(meta: dict[str, Any], field: str) -> bool:
    """A JSON boolean (absent or null: false). Any other type is refused, not read as false: the
    string "true" in is_deleted would otherwise turn a delete into an upsert."""
    value = meta.get(field)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _BadEvent(f"bad source_metadata.{field}: {value!r} is not a JSON boolean")
    return value


def _text_field(meta: dict[str, Any], field: str) -> str | None:
    """A JSON string (absent or null: None)."""
    value = meta.get(field)
    if value is not None and not isinstance(value, str):
        raise _BadEvent(f"bad source_metadata.{field}: {value!r} is not a string")
    return value


def _is_backfill(read_method: str | None, meta: dict[str, Any]) -> bool:
    """A read of the table rather than of its log: placed by source time, not by log position.

    Methods named `*-backfill*` are reads. Oracle supplementation events (after a rolled-back
    transaction) are CDC when they carry their log position, and reads when they do not.
    """
    method = (read_method or "").lower()
    if "-supplementation" in method:
        return not _text_field(meta, "rs_id")
    return "-backfill" in method or _flag(meta, "snapshot")


def _source_table(source_type: str, meta: dict[str, Any], event: dict[str, Any]) -> str:
    parts = []
    for field in _TABLE_FIELDS[source_type]:
        value = meta.get(field)
        if isinstance(value, list):  # SQL Server documents `schema` as an array of strings
            value = value[0] if value else None
        if value is not None and not isinstance(value, str):
            raise _BadEvent(f"bad source_metadata.{field}: {meta.get(field)!r} is not a string")
        if not value:
            break
        parts.append(value)
    else:
        return ".".join(parts)
    fallback = event.get("object")
    if isinstance(fallback, str) and fallback:
        return fallback
    missing = "/".join(f"source_metadata.{field}" for field in _TABLE_FIELDS[source_type])
    raise _BadEvent(f"missing field: {missing} (and no object)")


def _op(source_type: str, meta: dict[str, Any], is_backfill: bool) -> str:
    if _flag(meta, "is_deleted"):
        return "delete"
    if is_backfill:
        return "snapshot"
    field = "mod_type" if source_type == "spanner" and "mod_type" in meta else "change_type"
    change = _text_field(meta, field)
    if change is None:
        raise _BadEvent(f"missing field: source_metadata.{field}")
    op = _OPS.get(change.upper())
    if op is None:
        raise _BadEvent(f"unknown {field} {change!r}")
    return op


# The key of an Oracle row without a declared one: Oracle's own name for the row address, which
# no column can have (ROWID is reserved).
ORACLE_ROW_KEY = "ROWID"


def _key(
    payload: dict[str, Any],
    meta: dict[str, Any],
    source_type: str,
    declared_keys: KeyLookup | None,
    source_name: str,
    source_table: str,
) -> tuple[dict[str, Any], str]:
    """The row's identity and what it came from. Oracle events carry no primary_keys, but every
    one names its row's row_id: without a declared key that is the identity (a row keeps its
    row_id until it moves: ALTER TABLE ... MOVE, an update across partitions with row movement
    enabled, SHRINK SPACE). Other tables without any key are identified by their whole row."""
    found = _key_columns(payload, meta, declared_keys, source_name, source_table)
    if found is None and source_type == "oracle":
        row_id = _text_field(meta, "row_id")
        if not row_id:
            raise _BadEvent("missing field: source_metadata.row_id (the key of an Oracle row)")
        return {ORACLE_ROW_KEY: row_id}, ROW_ID_KEY
    columns, basis = found if found is not None else (sorted(payload), WHOLE_ROW_KEY)
    missing = [column for column in columns if column not in payload]
    if missing:
        raise _BadEvent(f"key column {missing[0]!r} missing from payload")
    return {column: payload[column] for column in columns}, basis


def _key_columns(
    payload: dict[str, Any],
    meta: dict[str, Any],
    declared_keys: KeyLookup | None,
    source_name: str,
    source_table: str,
) -> tuple[list[str], str] | None:
    """The declared or reported key columns and where they were found; None when neither names
    any."""
    if declared_keys is not None:
        try:
            declared = declared_keys("datastream", source_name, source_table)
        except Exception as exc:  # a settings lookup failure is reported with the event
            raise _BadEvent(f"declared_keys failed: {type(exc).__name__}: {exc}") from None
        if declared:
            return list(declared), DECLARED_KEY
    for field in ("primary_keys", "replication_index"):
        columns = meta.get(field)
        if not columns:
            continue
        if not isinstance(columns, list) or not all(isinstance(c, str) for c in columns):
            raise _BadEvent(f"bad source_metadata.{field}: {columns!r}")
        return columns, field
    return None


def _required(meta: dict[str, Any], *fields: str) -> list[Any]:
    """The position fields of a CDC event; without them its place in history is unknown."""
    values = [meta.get(field) for field in fields]
    if any(value is None or value == "" for value in values):
        raise _BadEvent(f"missing position: {'/'.join(fields)}")
    return values


def _uint(value: Any, field: str) -> int:
    """A non-negative integer position written as a JSON number or as decimal text."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return int(value)
    raise ValueError(f"{field} {value!r} is not a non-negative integer")


def _hex(value: str, field: str) -> int:
    match = _HEX.fullmatch(value.strip())
    if match is None:
        raise ValueError(f"{field} {value!r} is not hexadecimal")
    return int(match.group(1), 16)


def _transaction(meta: dict[str, Any], event_id: str, field: str = "tx_id") -> str:
    """The source's transaction id; without one, each event is its own transaction."""
    tx_id = meta.get(field)
    if tx_id in (None, ""):
        return f"uuid:{event_id}"
    if isinstance(tx_id, bool) or not isinstance(tx_id, (str, int)):
        raise ValueError(f"{field} {tx_id!r} is neither a string nor an integer")
    return f"tx:{tx_id}"


def _mysql_position(event: dict, meta: dict, ts_ns: int, event_id: str) -> tuple[str, str]:
    """(log_file, log_position); the file name is its prefix plus a growing sequence number."""
    log_file, log_position = _required(meta, "log_file", "log_position")
    match = _BINLOG_FILE.fullmatch(log_file) if isinstance(log_file, str) else None
    if match is None:
        raise ValueError(f"log_file {log_file!r} has no sequence number")
    position = _uint(log_position, "log_position")
    sort_pos = pos_join(
        pos_text(match.group(1)), pos_uint(int(match.group(2)), 12), pos_uint(position, 20)
    )
    # One binlog row event: the UPDATE-DELETE / UPDATE-INSERT pair it yields is one version.
    return sort_pos, f"binlog:{log_file}:{position}"


def _oracle_position(event: dict, meta: dict, ts_ns: int, event_id: str) -> tuple[str, str]:
    """(rs_id, ssn); rs_id is dot-separated hex (log sequence, block, offset)."""
    rs_id, ssn = _required(meta, "rs_id", "ssn")
    if not isinstance(rs_id, str):
        raise ValueError(f"rs_id {rs_id!r} is not a string")
    parts = [pos_uint(_hex(part, "rs_id"), 20) for part in rs_id.split(".")]
    return pos_join(*parts, pos_uint(_uint(ssn, "ssn"), 20)), _transaction(meta, event_id)


def _postgresql_position(event: dict, meta: dict, ts_ns: int, event_id: str) -> tuple[str, str]:
    """(source_timestamp, lsn); lsn as 'X/Y' hex halves or as its 64-bit decimal value."""
    (lsn,) = _required(meta, "lsn")
    match = _PG_LSN.fullmatch(lsn.strip()) if isinstance(lsn, str) else None
    value = (
        (int(match.group(1), 16) << 32) + int(match.group(2), 16) if match else _uint(lsn, "lsn")
    )
    return pos_join(pos_instant(ts_ns), pos_uint(value, 20)), _transaction(meta, event_id)


def _sqlserver_position(event: dict, meta: dict, ts_ns: int, event_id: str) -> tuple[str, str]:
    """(source_timestamp, lsn); lsn as 'vlf:block:slot' hex, or as one binary or decimal number.

    A single number is split into the same (VLF, block, slot) parts, so that both spellings of
    one LSN encode alike: binary(10) hex is 4 + 4 + 2 bytes, the numeric(25,0) decimal form is
    VLF * 10**15 + block * 10**5 + slot.
    """
    (lsn,) = _required(meta, "lsn")
    text = lsn.strip() if isinstance(lsn, str) else ""
    if ":" in text:
        parts = [_hex(part, "lsn") for part in text.split(":")]
    elif text.lower().startswith("0x") or len(text) == 20:
        number = _hex(text, "lsn")
        parts = [number >> 48, (number >> 16) & 0xFFFFFFFF, number & 0xFFFF]
    else:
        number = _uint(lsn, "lsn")
        parts = [number // 10**15, number // 10**5 % 10**10, number % 10**5]
    sort_pos = pos_join(pos_instant(ts_ns), *(pos_uint(part, 20) for part in parts))
    return sort_pos, _transaction(meta, event_id)


def _spanner_position(event: dict, meta: dict, ts_ns: int, event_id: str) -> tuple[str, str]:
    """(commit_timestamp, record_sequence, mod_index), commit time at nanosecond precision."""
    record_sequence, mod_index = _required(meta, "record_sequence", "mod_index")
    commit = meta.get("commit_timestamp")
    try:
        commit_ns = ts_ns if commit in (None, "") else parse_instant_ns(commit)
    except ValueError as exc:
        raise ValueError(f"commit_timestamp: {exc}") from None
    sort_pos = pos_join(
        pos_instant(commit_ns),
        pos_uint(_uint(record_sequence, "record_sequence"), 20),
        pos_uint(_uint(mod_index, "mod_index"), 20),
    )
    return sort_pos, _transaction(meta, event_id, "server_transaction_id")


def _sort_keys_position(event: dict, meta: dict, ts_ns: int, event_id: str) -> tuple[str, str]:
    """(source_timestamp, sort_keys...): Salesforce and MongoDB have no log position.

    sort_keys may be absent: Salesforce documents source_timestamp alone as the order.
    """
    sort_keys = event.get("sort_keys")
    if sort_keys is None:
        sort_keys = []
    if not isinstance(sort_keys, list):
        raise ValueError(f"sort_keys {sort_keys!r} is not an array")
    parts = [pos_instant(ts_ns)]
    for key in sort_keys:
        if isinstance(key, int) and not isinstance(key, bool):
            parts.append("1" + pos_int64(key))
        elif isinstance(key, str):
            parts.append("2" + pos_text(key))
        else:
            raise ValueError(f"sort_keys element {key!r} is neither string nor long")
    return pos_join(*parts), f"uuid:{event_id}"


_POSITIONS: dict[str, Callable[[dict, dict, int, str], tuple[str, str]]] = {
    "mysql": _mysql_position,
    "oracle": _oracle_position,
    "postgresql": _postgresql_position,
    "sqlserver": _sqlserver_position,
    "spanner": _spanner_position,
    "salesforce": _sort_keys_position,
    "mongodb": _sort_keys_position,
}


def _avro_named_types(schema: Any, names: dict[str, Any] | None = None) -> dict[str, Any]:
    """Records by name: a later field may refer to one by name only (fastavro's writer_schema
    spells every name and reference in full)."""
    names = {} if names is None else names
    if isinstance(schema, list):
        for branch in schema:
            _avro_named_types(branch, names)
    elif isinstance(schema, dict):
        if schema.get("type") == "record":
            names[schema["name"]] = schema
        for field in schema.get("fields", ()):
            _avro_named_types(field["type"], names)
        _avro_named_types(schema.get("items"), names)
    return names


def _from_avro(schema: Any, value: Any, names: dict[str, Any]) -> Any:
    """Apply the Datastream unified types that fastavro does not know to a decoded value."""
    if value is None:
        return None
    if isinstance(schema, str):
        schema = names.get(schema)
        return value if schema is None else _from_avro(schema, value, names)
    if isinstance(schema, list):
        branches = [branch for branch in schema if branch != "null"]
        return _from_avro(branches[0], value, names) if len(branches) == 1 else value
    kind = schema.get("type")
    if kind == "record":
        fields = schema["fields"]
        if {field["name"] for field in fields} == {"date", "time"}:
            return _datetime_value(value)
        return {
            field["name"]: _from_avro(field["type"], value.get(field["name"]), names)
            for field in fields
        }
    if kind == "array":
        return [_from_avro(schema["items"], item, names) for item in value]
    if schema.get("logicalType") == "json" and isinstance(value, str):
        return loads_exact(value)
    return value


def _datetime_value(value: dict[str, Any]) -> dt.datetime:
    """Datastream's DATETIME record: days since the epoch plus microseconds since midnight.

    Its documented schema puts the logical types on the fields, where Avro readers ignore them,
    so both the raw integers and already converted date/time values are accepted.
    """
    date, time = value["date"], value["time"]
    if isinstance(date, int):
        date = dt.date(1970, 1, 1) + dt.timedelta(days=date)
    if isinstance(time, int):
        return dt.datetime.combine(date, dt.time()) + dt.timedelta(microseconds=time)
    return dt.datetime.combine(date, time)


def _avro_record_to_line(schema: Any, record: Any, names: dict[str, Any]) -> str:
    event = _from_avro(schema, record, names)
    if isinstance(event.get("payload"), dict):
        event["payload"] = normalize(event["payload"])
        payload_types = _payload_types(schema, names)
        if payload_types is not None:
            event[PAYLOAD_TYPES] = payload_types
    return json.dumps(event, default=normalize, ensure_ascii=False)


def _resolved(schema: Any, names: dict[str, Any]) -> Any:
    """A schema with a named reference, alone or in a nullable union, replaced by its record."""
    if isinstance(schema, str):
        return names.get(schema, schema)
    if isinstance(schema, list):
        return [_resolved(branch, names) for branch in schema]
    return schema


def _payload_types(schema: Any, names: dict[str, Any]) -> dict[str, list[str | None]] | None:
    """Column -> [Avro type, Spark type] of the payload record in the file's schema."""
    fields = {field["name"]: field["type"] for field in _resolved(schema, names).get("fields", ())}
    payload = _resolved(fields.get("payload"), names)
    if isinstance(payload, list):
        records = [branch for branch in payload if isinstance(branch, dict)]
        payload = records[0] if len(records) == 1 else None
    if not isinstance(payload, dict) or payload.get("type") != "record":
        return None
    return {
        field["name"]: list(avro_column_type(_resolved(field["type"], names)))
        for field in payload["fields"]
    }
