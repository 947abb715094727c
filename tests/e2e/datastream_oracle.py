"""Independent expected-result oracle for Datastream landing files.

Written from the Datastream event documentation and the guarantees of docs/guarantees.md only,
in plain Python and independent of the production code, so the end-to-end test can compare the
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
- consecutive changes with one transaction identity make one version; a version equal to the open
  one is not a version; valid_from is the source time clipped to the next transition's.
"""

from __future__ import annotations

import base64
import functools
import io
import json
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import fastavro

SOURCE_SYSTEM = "datastream"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LIMIT = 2**53

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


class BadEvent(Exception):
    """An input line or record that goes to quarantine."""


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def canonical_value(value: Any) -> Any:
    """A value in the canonical JSON typing (see module docstring)."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if value > _LIMIT or value < -_LIMIT:
            return str(value)
        return value
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise BadEvent(f"non-finite decimal {value}")
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
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
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
    raise BadEvent(f"unsupported value {value!r}")


def canonical_json(obj: dict[str, Any]) -> str:
    """The canonical JSON text of an object of canonical values."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
        delta = value.astimezone(UTC) - _EPOCH
        return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(value, int) and not isinstance(value, bool):
        return value * 1000  # epoch milliseconds
    if not isinstance(value, str):
        raise BadEvent(f"bad timestamp {value!r}")
    m = _TS_RE.match(value)
    if m is None:
        raise BadEvent(f"bad timestamp {value!r}")
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
        raise BadEvent(f"bad timestamp {value!r}: {exc}") from exc
    zone = m.group(8)
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        offset = timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
        parsed = parsed - sign * offset
    return parse_instant(parsed)


def instant_to_datetime(micros: int) -> datetime:
    """Epoch microseconds as an aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=micros)


def _require_int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        raise BadEvent(f"missing or bad {what}: {value!r}")
    return value


def _require_str(value: Any, what: str) -> str:
    if not isinstance(value, str) or value == "":
        raise BadEvent(f"missing or bad {what}: {value!r}")
    return value


def mysql_position(md: dict[str, Any]) -> tuple[int, int]:
    """(log file number, log_position); 'mysql-bin.000010' -> 10."""
    log_file = _require_str(md.get("log_file"), "log_file")
    m = re.match(r"^.*\.(\d+)$", log_file)
    if m is None:
        raise BadEvent(f"bad log_file {log_file!r}")
    return (int(m.group(1)), _require_int(md.get("log_position"), "log_position"))


def oracle_position(md: dict[str, Any]) -> tuple[tuple[int, ...], int]:
    """(rs_id parts as hex ints, ssn); rs_id looks like ' 0x0073c9.000a4e4c.01d0'."""
    rs_id = _require_str(md.get("rs_id"), "rs_id").strip()
    if rs_id.lower().startswith("0x"):
        rs_id = rs_id[2:]
    try:
        parts = tuple(int(p, 16) for p in rs_id.split("."))
    except ValueError as exc:
        raise BadEvent(f"bad rs_id {md.get('rs_id')!r}") from exc
    return (parts, _require_int(md.get("ssn"), "ssn"))


def postgres_lsn(value: Any) -> int:
    """'X/Y' (hex halves) as one integer."""
    text = _require_str(value, "lsn")
    m = re.match(r"^([0-9A-Fa-f]+)/([0-9A-Fa-f]+)$", text)
    if m is None:
        raise BadEvent(f"bad lsn {text!r}")
    return int(m.group(1), 16) * 2**32 + int(m.group(2), 16)


def sqlserver_lsn(value: Any) -> tuple[int, int, int]:
    """'0000002A:00000598:0003' as (VLF sequence, log block, slot)."""
    text = _require_str(value, "lsn")
    m = re.match(r"^([0-9A-Fa-f]+):([0-9A-Fa-f]+):([0-9A-Fa-f]+)$", text)
    if m is None:
        raise BadEvent(f"bad lsn {text!r}")
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
    raise BadEvent(f"unknown change type {change!r}")


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
        return oracle_position(md)
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
        raise BadEvent("missing sort_keys")
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
    """Check and interpret one event; raise BadEvent for bad input."""
    if not isinstance(event, dict):
        raise BadEvent("event is not an object")
    uid = event.get("uuid")
    if not isinstance(uid, str) or uid == "":
        raise BadEvent("missing uuid")
    read_method = event.get("read_method")
    if not isinstance(read_method, str):
        raise BadEvent("missing read_method")
    kind = _kind(read_method)
    if kind is None:
        raise BadEvent(f"unknown read_method {read_method!r}")
    ts = parse_instant(event.get("source_timestamp"))
    md = event.get("source_metadata")
    if not isinstance(md, dict):
        raise BadEvent("missing source_metadata")
    payload = event.get("payload")
    if not isinstance(payload, dict):
        raise BadEvent("missing payload")
    table = _source_table(kind, md)
    key_cols = _key_columns(kind, table, md, payload, declared)
    row = {str(k): canonical_value(v) for k, v in payload.items()}
    if key_cols is None:
        if not isinstance(md.get("row_id"), str) or not md["row_id"]:
            raise BadEvent("Oracle row without a key or a row_id")
        key = {"ROWID": md["row_id"]}
    else:
        for col in key_cols:
            if col not in payload:
                raise BadEvent(f"payload lacks key column {col!r}")
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


def _stream_of(path: str) -> str | None:
    """'datastream/<stream>/...' -> '<stream>'."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != SOURCE_SYSTEM:
        return None
    return parts[1]


def read_file(path: str, data: bytes) -> list[tuple[int, Any, str | None]]:
    """(line or record number, raw event, error) for each line / record of one file."""
    out: list[tuple[int, Any, str | None]] = []
    if path.endswith(".avro"):
        try:
            reader = fastavro.reader(io.BytesIO(data))
        except Exception as exc:
            return [(0, None, f"unreadable Avro header: {exc}")]
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
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines = lines[:-1]
    for index, raw in enumerate(lines):
        number = index + 1
        if raw.strip() == b"":
            continue
        try:
            text = raw.decode("utf-8")
            parsed = json.loads(text, parse_float=Decimal)
        except (UnicodeDecodeError, ValueError, InvalidOperation) as exc:
            out.append((number, None, f"malformed JSON: {exc}"))
            continue
        out.append((number, parsed, None))
    return out


# --------------------------------------------------------------------------------------------
# Ordering and folding
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


def group_transactions(ordered: list[Event]) -> list[list[Event]]:
    """Consecutive events with the same transaction identity form one group."""
    groups: list[list[Event]] = []
    for event in ordered:
        if groups and groups[-1][-1].tx == event.tx:
            groups[-1].append(event)
        else:
            groups.append([event])
    return groups


@dataclass
class Transition:
    """A kept change of a key: a new version, or a delete closing the open version."""

    is_delete: bool
    op: str
    row_json: str | None
    source_ts: int
    effective_ts: int = 0


def fold_key(ordered: list[Event]) -> list[Transition]:
    """The kept transitions of one key, with effective (clipped) times."""
    transitions: list[Transition] = []
    open_row: str | None = None
    for group in group_transactions(ordered):
        last = group[-1]
        if last.op == "delete":
            if open_row is not None:
                transitions.append(Transition(True, "delete", None, last.ts))
                open_row = None
            continue
        if open_row is not None and open_row == last.row_json:
            continue
        transitions.append(Transition(False, last.op, last.row_json, last.ts))
        open_row = last.row_json
    later: int | None = None
    for t in reversed(transitions):
        t.effective_ts = t.source_ts if later is None else min(t.source_ts, later)
        later = t.effective_ts
    return transitions


# --------------------------------------------------------------------------------------------
# Marts
# --------------------------------------------------------------------------------------------


def _compare_rows(fields: list[str]):
    def cmp(a: dict[str, Any], b: dict[str, Any]) -> int:
        for f in fields:
            x, y = a[f], b[f]
            if x != y:
                return -1 if x < y else 1
        return 0

    return functools.cmp_to_key(cmp)


def expected_marts(
    waves: list[dict[str, bytes]], declared_keys: dict[tuple[str, str], list[str]]
) -> dict[str, list[dict[str, Any]]]:
    """Expected cdc_current, cdc_history and cdc_quarantine after landing all ``waves``."""
    quarantine: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    by_key: dict[tuple[str, str, str], list[Event]] = {}
    for wave in waves:
        for path in sorted(wave):
            stream = _stream_of(path)
            if stream is None:
                continue
            if not (path.endswith(".jsonl") or path.endswith(".avro")):
                continue
            for number, raw, error in read_file(path, wave[path]):
                event: Event | None = None
                if error is None:
                    try:
                        event = interpret(stream, raw, declared_keys)
                    except BadEvent as exc:
                        error = str(exc) or "bad event"
                if event is None:
                    quarantine.append(
                        {
                            "source_system": SOURCE_SYSTEM,
                            "source_name": stream,
                            "file_path": path,
                            "line_number": number,
                            "reason": error or "bad event",
                        }
                    )
                    continue
                if (stream, event.uuid) in seen:
                    continue
                seen.add((stream, event.uuid))
                ident = (event.source_name, event.source_table, event.key_json)
                by_key.setdefault(ident, []).append(event)

    current: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for ident in sorted(by_key):
        source_name, source_table, key_json = ident
        transitions = fold_key(order_key_events(by_key[ident]))
        base = {
            "source_system": SOURCE_SYSTEM,
            "source_name": source_name,
            "source_table": source_table,
            "key_json": key_json,
        }
        for i, t in enumerate(transitions):
            if t.is_delete:
                continue
            following = transitions[i + 1] if i + 1 < len(transitions) else None
            valid_to = None if following is None else instant_to_datetime(following.effective_ts)
            history.append(
                {
                    **base,
                    "row_json": t.row_json,
                    "unavailable_columns": [],
                    "op": t.op,
                    "valid_from": instant_to_datetime(t.effective_ts),
                    "valid_to": valid_to,
                    "is_current": valid_to is None,
                }
            )
            if following is None:
                current.append(
                    {
                        **base,
                        "row_json": t.row_json,
                        "unavailable_columns": [],
                        "last_op": t.op,
                        "last_committed_at": instant_to_datetime(t.source_ts),
                    }
                )
    quarantine.sort(key=_compare_rows(["file_path", "line_number"]))
    return {"cdc_current": current, "cdc_history": history, "cdc_quarantine": quarantine}
