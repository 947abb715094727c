"""Independent expected-result oracle for Datastream landing files.

Written from the Datastream event documentation and the guarantees of docs/guarantees.md only,
in plain Python and independent of the production code (the rules every family shares are in
tests/e2e/oracle_core.py), so the end-to-end test can compare the
pipeline's marts with it. ``expected_marts(waves, declared_keys)`` gives ``cdc_current``,
``cdc_history`` and ``cdc_quarantine`` after landing all the given waves.

Conventions (agreed with the lead, implemented here from their description):

- values: ints beyond +-2**53 and decimals that a double cannot round-trip become decimal strings;
  Avro decimal the same, bytes base64, date 'YYYY-MM-DD', timestamp-micros
  'YYYY-MM-DDTHH:MM:SS.ffffffZ', the DATETIME record 'YYYY-MM-DDTHH:MM:SS.ffffff';
- key: declared key, else source_metadata.primary_keys, else SQL Server replication_index, else
  for Oracle {"ROWID": source_metadata.row_id}, else the whole row;
- op: backfill -> snapshot, INSERT/CREATE -> insert, UPDATE/UPDATE-INSERT -> update,
  DELETE/UPDATE-DELETE/is_deleted -> delete;
- per key: CDC events in the source's position order (delete first at an equal position), each
  backfill read just before the first CDC event whose source_timestamp is >= its own;
- versions, by the rules every family shares: a transaction is the source's transaction identity
  (MySQL's log position, else tx_id or Spanner's server_transaction_id; a backfill read, a
  Salesforce or MongoDB event, or an event without one is its own); a change's time is its
  source_timestamp.
"""

from __future__ import annotations

import base64
import functools
import io
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import fastavro

from tests.e2e.oracle_core import (
    EPOCH,
    BadInput,
    Line,
    Step,
    canonical_int,
    canonical_json,
    instant_text,
    json_lines,
    land,
    marts,
)

SOURCE_SYSTEM = "datastream"

# read_method prefix -> source kind
_KINDS: list[tuple[str, str]] = [
    ("mysql-", "mysql"),
    ("oracle-", "oracle"),
    ("postgresql-", "postgresql"),
    ("postgres-", "postgresql"),
    ("sqlserver-", "sqlserver"),
    ("spanner-", "spanner"),
    ("salesforce-", "salesforce"),
    ("mongodb-", "mongodb"),
]


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def canonical_value(value: Any) -> Any:
    """A value in the canonical JSON typing (see module docstring)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return canonical_int(value)
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise BadInput(f"non-finite decimal {value}")
        if Decimal(repr(float(value))) == value:
            return float(value)
        return str(value)
    if isinstance(value, float):
        return value
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return instant_text(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, list):
        return [canonical_value(v) for v in value]
    if isinstance(value, dict):
        if (
            set(value) == {"date", "time"}
            and isinstance(value["date"], date)
            and isinstance(value["time"], time)
        ):
            # the Datastream DATETIME record (Avro): a local date-time without a zone
            return value["date"].isoformat() + "T" + value["time"].strftime("%H:%M:%S.%f")
        return {str(k): canonical_value(v) for k, v in value.items()}
    raise BadInput(f"unsupported value {value!r}")


# --------------------------------------------------------------------------------------------
# Timestamps and positions
# --------------------------------------------------------------------------------------------

_TS_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?(Z|[+-]\d{2}:\d{2})?$"
)


def parse_instant(value: Any) -> int:
    """Epoch microseconds of a source timestamp (RFC 3339 text, no zone = UTC; Avro datetime)."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        delta = value.astimezone(UTC) - EPOCH
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, int) and not isinstance(value, bool):
        return value * 1000  # epoch milliseconds
    if not isinstance(value, str):
        raise BadInput(f"bad timestamp {value!r}")
    m = _TS_RE.match(value)
    if m is None:
        raise BadInput(f"bad timestamp {value!r}")
    fraction = (m.group(7) or "").ljust(6, "0")
    try:
        parsed = datetime(
            int(m.group(1)),
            int(m.group(2)),
            int(m.group(3)),
            int(m.group(4)),
            int(m.group(5)),
            int(m.group(6)),
            int(fraction),
            tzinfo=UTC,
        )
    except ValueError as exc:
        raise BadInput(f"bad timestamp {value!r}: {exc}") from exc
    zone = m.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        parsed = parsed - sign * offset
    return parse_instant(parsed)


def _require_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        raise BadInput(f"missing or bad {what}: {value!r}")
    return value


def _require_str(value: Any, what: str) -> str:
    if not isinstance(value, str) or value == "":
        raise BadInput(f"missing or bad {what}: {value!r}")
    return value


def mysql_position(md: dict[str, Any]) -> tuple[int, int]:
    """(log file number, log_position); 'mysql-bin.000010' -> 10."""
    log_file = _require_str(md.get("log_file"), "log_file")
    m = re.match(r"^.*\.(\d+)$", log_file)
    if m is None:
        raise BadInput(f"bad log_file {log_file!r}")
    return (int(m.group(1)), _require_int(md.get("log_position"), "log_position"))


def oracle_db_position(md: dict[str, Any]) -> tuple[tuple[int, ...], int]:
    """(rs_id parts as hex ints, ssn); rs_id looks like ' 0x0073c9.000a4e4c.01d0'."""
    rs_id = _require_str(md.get("rs_id"), "rs_id").strip()
    if rs_id.lower().startswith("0x"):
        rs_id = rs_id[2:]
    try:
        parts = tuple(int(p, 16) for p in rs_id.split("."))
    except ValueError as exc:
        raise BadInput(f"bad rs_id {md.get('rs_id')!r}") from exc
    return (parts, _require_int(md.get("ssn"), "ssn"))


def postgres_lsn(value: Any) -> int:
    """'X/Y' (hex halves) as one integer."""
    text = _require_str(value, "lsn")
    m = re.match(r"^([0-9A-Fa-f]+)/([0-9A-Fa-f]+)$", text)
    if m is None:
        raise BadInput(f"bad lsn {text!r}")
    return int(m.group(1), 16) * 2**32 + int(m.group(2), 16)


def sqlserver_lsn(value: Any) -> tuple[int, int, int]:
    """'0000002A:00000598:0003' as (VLF sequence, log block, slot)."""
    text = _require_str(value, "lsn")
    m = re.match(r"^([0-9A-Fa-f]+):([0-9A-Fa-f]+):([0-9A-Fa-f]+)$", text)
    if m is None:
        raise BadInput(f"bad lsn {text!r}")
    return (int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16))


def compare_values(a: Any, b: Any) -> int:
    """Three-way comparison of positions: ints numerically, strings by text, sequences
    element by element (shorter first on a tie); an int sorts before a string."""
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        for x, y in zip(a, b, strict=False):
            c = compare_values(x, y)
            if c != 0:
                return c
        return (len(a) > len(b)) - (len(a) < len(b))
    a_num = isinstance(a, int | float) and not isinstance(a, bool)
    b_num = isinstance(b, int | float) and not isinstance(b, bool)
    if a_num and b_num:
        return (a > b) - (a < b)
    if a_num:
        return -1
    if b_num:
        return 1
    sa, sb = str(a), str(b)
    return (sa > sb) - (sa < sb)


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


@dataclass
class Event:
    """One good, interpreted Datastream event."""

    source_name: str
    source_table: str
    kind: str
    uuid: str
    op: str
    is_backfill: bool
    ts: int  # source_timestamp, epoch microseconds
    position: Any  # source position (CDC only)
    tx: tuple[str, ...]  # transaction identity
    key_json: str
    row_json: str


def _kind(read_method: str) -> str | None:
    for prefix, kind in _KINDS:
        if read_method.startswith(prefix):
            return kind
    return None


def _source_table(kind: str, md: dict[str, Any]) -> str:
    if kind == "mysql":
        return (
            _require_str(md.get("database"), "database")
            + "."
            + _require_str(md.get("table"), "table")
        )
    if kind in ("oracle", "postgresql", "sqlserver"):
        return (
            _require_str(md.get("schema"), "schema") + "." + _require_str(md.get("table"), "table")
        )
    if kind == "mongodb":
        return (
            _require_str(md.get("database"), "database")
            + "."
            + _require_str(md.get("collection"), "collection")
        )
    if kind == "salesforce":
        return _require_str(md.get("object_name"), "object_name")
    return _require_str(md.get("table"), "table")  # spanner


def _op(kind: str, read_method: str, md: dict[str, Any]) -> str:
    if "-backfill" in read_method:
        return "snapshot"
    change = md.get("mod_type") if kind == "spanner" else md.get("change_type")
    if isinstance(change, str):
        change = change.upper()
    if change in ("DELETE", "UPDATE-DELETE") or md.get("is_deleted") is True:
        return "delete"
    if change in ("INSERT", "CREATE"):
        return "insert"
    if change in ("UPDATE", "UPDATE-INSERT"):
        return "update"
    raise BadInput(f"unknown change type {change!r}")


def _key_columns(
    kind: str,
    table: str,
    md: dict[str, Any],
    payload: dict[str, Any],
    declared: dict[tuple[str, str], list[str]],
) -> list[str] | None:
    if (SOURCE_SYSTEM, table) in declared:
        return list(declared[(SOURCE_SYSTEM, table)])
    pks = md.get("primary_keys")
    if isinstance(pks, list) and len(pks) > 0:
        return [str(c) for c in pks]
    index = md.get("replication_index")
    if kind == "sqlserver" and isinstance(index, list) and len(index) > 0:
        return [str(c) for c in index]
    return None if kind == "oracle" else list(payload)


def _position(kind: str, md: dict[str, Any], ts: int, event: dict[str, Any]) -> Any:
    if kind == "mysql":
        return mysql_position(md)
    if kind == "oracle":
        return oracle_db_position(md)
    if kind == "postgresql":
        return (ts, postgres_lsn(md.get("lsn")))
    if kind == "sqlserver":
        return (ts, sqlserver_lsn(md.get("lsn")))
    if kind == "spanner":
        return (
            parse_instant(md.get("commit_timestamp")),
            _require_int(md.get("record_sequence"), "record_sequence"),
            _require_int(md.get("mod_index"), "mod_index"),
        )
    sort_keys = event.get("sort_keys")
    if not isinstance(sort_keys, list):
        raise BadInput("missing sort_keys")
    return (ts, sort_keys)


def _tx(kind: str, is_backfill: bool, uid: str, md: dict[str, Any]) -> tuple[str, ...]:
    if is_backfill or kind in ("salesforce", "mongodb"):
        return ("own", uid)
    if kind == "mysql":
        return ("mysql", str(md.get("log_file")), str(md.get("log_position")))
    field = "server_transaction_id" if kind == "spanner" else "tx_id"
    tx_id = md.get(field)
    if tx_id is None or tx_id == "":
        return ("own", uid)
    return ("tx", str(tx_id))


def interpret(source_name: str, event: Any, declared: dict[tuple[str, str], list[str]]) -> Event:
    """Check and interpret one event; raise BadInput for bad input."""
    if not isinstance(event, dict):
        raise BadInput("event is not an object")
    uid = event.get("uuid")
    if not isinstance(uid, str) or uid == "":
        raise BadInput("missing uuid")
    read_method = event.get("read_method")
    if not isinstance(read_method, str):
        raise BadInput("missing read_method")
    kind = _kind(read_method)
    if kind is None:
        raise BadInput(f"unknown read_method {read_method!r}")
    ts = parse_instant(event.get("source_timestamp"))
    md = event.get("source_metadata")
    if not isinstance(md, dict):
        raise BadInput("missing source_metadata")
    payload = event.get("payload")
    if not isinstance(payload, dict):
        raise BadInput("missing payload")
    table = _source_table(kind, md)
    key_cols = _key_columns(kind, table, md, payload, declared)
    row = {str(k): canonical_value(v) for k, v in payload.items()}
    if key_cols is None:
        if not isinstance(md.get("row_id"), str) or not md["row_id"]:
            raise BadInput("Oracle row without a key or a row_id")
        key = {"ROWID": md["row_id"]}
    else:
        for col in key_cols:
            if col not in payload:
                raise BadInput(f"payload lacks key column {col!r}")
        key = {c: row[c] for c in key_cols}
    is_backfill = "-backfill" in read_method
    op = _op(kind, read_method, md)
    position = None if is_backfill else _position(kind, md, ts, event)
    return Event(
        source_name=source_name,
        source_table=table,
        kind=kind,
        uuid=uid,
        op=op,
        is_backfill=is_backfill,
        ts=ts,
        position=position,
        tx=_tx(kind, is_backfill, uid, md),
        key_json=canonical_json(key),
        row_json=canonical_json(row),
    )


# --------------------------------------------------------------------------------------------
# Reading files
# --------------------------------------------------------------------------------------------


def read_file(path: str, data: bytes) -> list[Line]:
    """(line or record number, raw event, error) for each line / record of one file."""
    if not path.endswith(".avro"):
        return json_lines(data, parse_float=Decimal, malformed="malformed JSON")
    try:
        reader = fastavro.reader(io.BytesIO(data))
    except Exception as exc:
        return [(0, None, f"unreadable Avro header: {exc}")]
    out: list[Line] = []
    number = 0
    while True:
        try:
            record = next(reader)
        except StopIteration:
            break
        except Exception as exc:
            out.append((number + 1, None, f"unreadable Avro record: {exc}"))
            break
        number += 1
        out.append((number, record, None))
    return out


# --------------------------------------------------------------------------------------------
# Ordering
# --------------------------------------------------------------------------------------------


def _op_rank(op: str) -> int:
    return 0 if op == "delete" else 1


def compare_cdc(a: Event, b: Event) -> int:
    """Source position order; at an equal position a delete first; then uuid for determinism."""
    c = compare_values(a.position, b.position)
    if c != 0:
        return c
    c = _op_rank(a.op) - _op_rank(b.op)
    if c != 0:
        return c
    return (a.uuid > b.uuid) - (a.uuid < b.uuid)


def compare_backfill(a: Event, b: Event) -> int:
    """Backfill reads among themselves: source_timestamp, then uuid."""
    if a.ts != b.ts:
        return -1 if a.ts < b.ts else 1
    return (a.uuid > b.uuid) - (a.uuid < b.uuid)


def order_key_events(events: list[Event]) -> list[Event]:
    """One key's events in source order: CDC by position, each backfill read just before the
    first CDC event (in position order) whose source_timestamp is >= its own."""
    cdc = sorted([e for e in events if not e.is_backfill], key=functools.cmp_to_key(compare_cdc))
    pending = sorted(
        [e for e in events if e.is_backfill], key=functools.cmp_to_key(compare_backfill)
    )
    ordered: list[Event] = []
    for change in cdc:
        still_pending: list[Event] = []
        for read in pending:
            if read.ts <= change.ts:
                ordered.append(read)
            else:
                still_pending.append(read)
        pending = still_pending
        ordered.append(change)
    ordered.extend(pending)
    return ordered


def key_steps(ordered: list[Event]) -> list[Step]:
    """One key's events in contract order as steps: a full row image each, a delete none."""
    return [Step(e.tx, e.op, e.ts, None if e.op == "delete" else (e.row_json, ())) for e in ordered]


# --------------------------------------------------------------------------------------------
# Marts
# --------------------------------------------------------------------------------------------


def expected_marts(
    waves: list[dict[str, bytes]], declared_keys: dict[tuple[str, str], list[str]]
) -> dict[str, list[dict[str, Any]]]:
    """Expected cdc_current, cdc_history and cdc_quarantine after landing all ``waves``."""
    events, quarantine = land(
        waves,
        SOURCE_SYSTEM,
        (".jsonl", ".avro"),
        read_file,
        lambda stream, raw: interpret(stream, raw, declared_keys),
    )
    seen: set[tuple[str, str]] = set()
    by_key: dict[tuple[str, str, str], list[Event]] = {}
    for stream, event in events:
        if (stream, event.uuid) in seen:
            continue
        seen.add((stream, event.uuid))
        ident = (event.source_name, event.source_table, event.key_json)
        by_key.setdefault(ident, []).append(event)
    steps_by_key = {ident: key_steps(order_key_events(same)) for ident, same in by_key.items()}
    return marts(SOURCE_SYSTEM, steps_by_key, quarantine)
