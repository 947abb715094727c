"""Independent expected-result oracle for Spanner change stream landing files.

Written from Google's change stream record documentation and the guarantees of
docs/guarantees.md only, in plain Python and independent of the production code (the rules every
family shares are in tests/e2e/oracle_core.py), so the end-to-end test can compare the
pipeline's marts with it. ``expected_marts(waves)`` gives ``cdc_current``, ``cdc_history`` and
``cdc_quarantine`` after landing all the given waves; ``expected_stream_status(waves)`` gives
the operator view of each stream (``cdc_spanner_streams``).

Conventions (this oracle's decisions where the documentation and the guarantees leave a choice):

- input: ``spanner/<stream>/**/*.jsonl``, one JSON object per line: ``partition_token`` (a string,
  or null for the initial query) plus one record in either dialect's shape. PostgreSQL: exactly
  one other key, ``data_change_record`` / ``heartbeat_record`` / ``child_partitions_record``.
  GoogleSQL: ``ChangeRecord``, an array of exactly one struct whose non-empty field (exactly one;
  empty or null fields are ignored) is one of the three and holds exactly one element. In the
  GoogleSQL shape the JSON-typed fields (mods ``keys`` / ``new_values`` / ``old_values``,
  ``column_types[].type``) may be strings holding JSON and INT64 fields decimal strings; both
  spellings are accepted in both dialects;
- bad input, quarantined with file and 1-based line number, nothing of the line used (it counts
  neither for partition progress nor for a transaction's records): malformed JSON, a missing or
  ill-typed field, an unknown record kind (any other key, e.g. ``partition_event_record``), an
  unknown mod_type / value_capture_type, a value that does not fit its column type, a column
  without a type in ``column_types``;
- values, typed by ``column_types[].type.code`` (``type_annotation`` ignored): INT64 (number or
  decimal string, within 64 bits) -> number within +-2**53, else decimal string; FLOAT64 (number,
  or "NaN" / "Infinity" / "-Infinity") -> the double (Python's shortest repr) or that string;
  NUMERIC (decimal string) -> an integer if integral within +-2**53, else a number if a double
  holds it exactly, else the plain decimal string without trailing fractional zeros; BOOL,
  STRING as they are; BYTES (strict base64) as sent; DATE 'YYYY-MM-DD' (a real date) as sent;
  TIMESTAMP (RFC 3339) -> UTC 'YYYY-MM-DDTHH:MM:SS.ffffffZ', nanoseconds truncated; JSON (a
  string holding JSON; NaN rejected) -> the JSON value itself, keys sorted, its numbers untouched;
  ARRAY -> element by element; null -> null;
- identity: source_system 'spanner', source_name = the stream directory, source_table =
  table_name, key = the mod's ``keys``;
- dedupe: a data change record counts once per (stream, partition_token, server_transaction_id,
  record_sequence, commit_timestamp); the records of a transaction are its distinct
  record_sequence values in the stream;
- partitions: known = tokens with a good line (the initial null token included) and tokens
  announced in a child_partitions_record; closed = tokens whose own child_partitions_record
  landed; progress = the latest timestamp a partition reported (data commit_timestamp, heartbeat
  timestamp, child partitions start_timestamp, and for an announced token the start_timestamp of
  the record announcing it). The stream's low watermark is the minimum progress over the open
  (known, not closed) partitions; with no open partition everything landed counts (no
  watermark, NULL in the status view);
- a transaction is complete when its distinct records reach number_of_records_in_transaction
  (the largest value its records give). A data change applies once its transaction is complete
  and its commit_timestamp <= the stream's low watermark (nanosecond precision), both evaluated
  over everything landed so far;
- order per key: (commit_timestamp as an instant, server_transaction_id as text,
  record_sequence as an integer, position in ``mods``);
- row images: INSERT, and any change captured as NEW_ROW / NEW_ROW_AND_OLD_VALUES, is the full
  row (key columns + new_values). An UPDATE captured as NEW_VALUES / OLD_AND_NEW_VALUES carries
  only the changed columns: every other column of the table takes the key's latest earlier known
  value (in the order above, applied changes only; old_values are not used). The table's columns
  are the union of ``column_types`` names over every landed good record of that table in that
  stream; a column with no known value is absent from row_json and listed (sorted) in
  unavailable_columns;
- versions, by the rules every family shares: a transaction is a server_transaction_id, a
  change's op its mod_type (INSERT insert, UPDATE update, DELETE delete) and its time its
  commit_timestamp, truncated to microseconds;
- initial snapshots (CONTRACT §1 "Initial snapshots"): a file under
  ``spanner/<stream>/snapshot/`` is no part of the stream's partitions. Its first line is the
  header ``{"snapshot": {"read_timestamp", "table", "column_types"}}`` (an RFC 3339 timestamp, a
  table name, column_types as a data change record gives them, at least one column, each name
  once, each type one the values above can be typed by); every further line a row
  ``{"values": {...}}`` naming exactly the header's columns, typed like data change values. A
  header that does not fit is quarantined, and every row of its file with it; a row that does
  not fit its header is quarantined alone. A row is its table's whole row at the read timestamp
  T: its key is the header's is_primary_key columns, its op ``snapshot``, its time T, a
  transaction of its own; it sorts after every change of its key committed at or before T and
  before every change after T. It applies once the stream's low watermark has reached T, as a
  change committed at T would; a stream none of whose partitions is known yet has no watermark,
  and one with no partition open is at its latest progress. The same (T, table, key) landed
  twice counts once. A header's columns are the table's columns too.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from tests.e2e.oracle_core import (
    EPOCH,
    MAX_EXACT_INT,
    BadInput,
    Line,
    Step,
    canonical_int,
    canonical_json,
    instant_text,
    is_int,
    json_lines,
    land,
    marts,
    utc_datetime,
)

SOURCE_SYSTEM = "spanner"
RECORD_KINDS = ("data_change_record", "heartbeat_record", "child_partitions_record")
OP_NAMES = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
CAPTURE_TYPES = ("OLD_AND_NEW_VALUES", "NEW_VALUES", "NEW_ROW", "NEW_ROW_AND_OLD_VALUES")
FULL_ROW_CAPTURES = ("NEW_ROW", "NEW_ROW_AND_OLD_VALUES")
FLOAT_WORDS = ("NaN", "Infinity", "-Infinity")

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NS_PER_S = 1_000_000_000


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------

_TIMESTAMP_RE = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$"
)
_DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_INT_RE = re.compile(r"^-?\d+$")
_NUMERIC_RE = re.compile(r"^[+-]?\d+(\.\d+)?$")


def timestamp_ns(value: Any, what: str = "timestamp") -> int:
    """Epoch nanoseconds of an RFC 3339 timestamp (0 to 9 fractional digits, Z or an offset)."""
    if not isinstance(value, str):
        raise BadInput(f"{what}: expected an RFC 3339 timestamp, got {value!r}")
    m = _TIMESTAMP_RE.match(value)
    if m is None:
        raise BadInput(f"{what}: not an RFC 3339 timestamp: {value!r}")
    try:
        wall = datetime(*(int(g) for g in m.groups()[:6]), tzinfo=UTC)
    except ValueError as exc:
        raise BadInput(f"{what}: impossible timestamp {value!r}: {exc}") from exc
    zone = m.group(8)
    offset_s = 0
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        offset_s = sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    seconds = (wall - EPOCH) // timedelta(seconds=1) - offset_s
    return seconds * _NS_PER_S + int((m.group(7) or "").ljust(9, "0"))


def micros(ns: int) -> int:
    """Epoch nanoseconds truncated to the marts' microseconds."""
    return ns // 1000


def timestamp_text(ns: int) -> str:
    """The canonical instant text: 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    return instant_text(utc_datetime(micros(ns)))


def canonical_numeric(value: Decimal) -> int | float | str:
    """Integral within +-2**53: an int; else a float if a double holds it exactly; else text."""
    if value == value.to_integral_value() and -MAX_EXACT_INT <= value <= MAX_EXACT_INT:
        return int(value)
    if Decimal(repr(float(value))) == value:
        return float(value)
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_document(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise BadInput(f"{what}: JSON column value is not JSON: {exc}") from exc


def type_code(spec: Any, what: str) -> dict[str, Any]:
    """A column type (an object, or a string holding one) with a ``code``."""
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError as exc:
            raise BadInput(f"{what}: type is not JSON: {exc}") from exc
    if not isinstance(spec, dict) or not isinstance(spec.get("code"), str):
        raise BadInput(f"{what}: type without a code: {spec!r}")
    return spec


def typed_value(value: Any, spec: dict[str, Any], what: str) -> Any:
    """One value in Spanner's JSON encoding, typed by its column type, in the canonical typing."""
    if value is None:
        return None
    code = spec["code"]
    if code == "INT64":
        if is_int(value):
            number = value
        elif isinstance(value, str) and _INT_RE.match(value):
            number = int(value)
        else:
            raise BadInput(f"{what}: not an INT64: {value!r}")
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise BadInput(f"{what}: out of the INT64 range: {value!r}")
        return canonical_int(number)
    if code == "FLOAT64":
        if isinstance(value, str) and value in FLOAT_WORDS:
            return value
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            double = float(value)
            if math.isinf(double) or math.isnan(double):
                raise BadInput(f"{what}: not a finite FLOAT64: {value!r}")
            return double
        raise BadInput(f"{what}: not a FLOAT64: {value!r}")
    if code == "NUMERIC":
        if isinstance(value, str) and _NUMERIC_RE.match(value):
            return canonical_numeric(Decimal(value))
        raise BadInput(f"{what}: not a NUMERIC decimal string: {value!r}")
    if code == "BOOL":
        if isinstance(value, bool):
            return value
        raise BadInput(f"{what}: not a BOOL: {value!r}")
    if code == "STRING":
        if isinstance(value, str):
            return value
        raise BadInput(f"{what}: not a STRING: {value!r}")
    if code == "BYTES":
        try:
            base64.b64decode(value.encode("ascii"), validate=True)
        except (AttributeError, binascii.Error, UnicodeEncodeError, ValueError) as exc:
            raise BadInput(f"{what}: not base64 BYTES: {value!r}") from exc
        return value
    if code == "DATE":
        if isinstance(value, str) and _DATE_RE.match(value):
            try:
                date.fromisoformat(value)
            except ValueError as exc:
                raise BadInput(f"{what}: impossible DATE {value!r}") from exc
            return value
        raise BadInput(f"{what}: not a DATE: {value!r}")
    if code == "TIMESTAMP":
        return timestamp_text(timestamp_ns(value, what))
    if code == "JSON":
        if isinstance(value, str):
            return _json_document(value, what)
        raise BadInput(f"{what}: a JSON column value must be a string holding JSON: {value!r}")
    if code == "ARRAY":
        element = type_code(spec.get("array_element_type"), f"{what} element")
        if not isinstance(value, list):
            raise BadInput(f"{what}: not an ARRAY: {value!r}")
        return [typed_value(v, element, f"{what}[{i}]") for i, v in enumerate(value)]
    raise BadInput(f"{what}: unsupported type code {code!r}")


# --------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Mod:
    key: dict[str, Any]
    new_values: dict[str, Any]


@dataclass
class DataRecord:
    partition: str | None
    commit_ns: int
    txn: str
    seq: int
    table: str
    columns: tuple[str, ...]
    mods: list[Mod]
    mod_type: str
    capture: str
    records_in_txn: int

    @property
    def identity(self) -> tuple[Any, ...]:
        return (self.partition, self.txn, self.seq, self.commit_ns)


@dataclass
class Heartbeat:
    partition: str | None
    ts_ns: int


@dataclass
class ChildPartitions:
    partition: str | None
    start_ns: int
    children: list[str]


@dataclass(frozen=True)
class SnapshotHeader:
    read_ns: int
    table: str
    types: dict[str, dict[str, Any]]
    key: tuple[str, ...]


@dataclass(frozen=True)
class SnapshotRow:
    header: SnapshotHeader
    key: dict[str, Any]
    row: dict[str, Any]


Record = DataRecord | Heartbeat | ChildPartitions | SnapshotHeader | SnapshotRow


def _object(value: Any, what: str, *, empty_if_null: bool = False) -> dict[str, Any]:
    """A JSON-typed field: an object, or a string holding one."""
    if value is None and empty_if_null:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_float=Decimal)
        except ValueError as exc:
            raise BadInput(f"{what} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadInput(f"{what} is not an object")
    return value


def _count(value: Any, what: str) -> int:
    """An INT64 field: a number or a decimal string."""
    if is_int(value):
        return value
    if isinstance(value, str) and _INT_RE.match(value):
        return int(value)
    raise BadInput(f"{what}: not an integer: {value!r}")


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or value == "":
        raise BadInput(f"missing or bad {name}: {value!r}")
    return value


def _sequence(value: Any, what: str) -> int:
    if is_int(value) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise BadInput(f"{what}: not a decimal sequence number: {value!r}")


def _typed_image(
    image: dict[str, Any], types: dict[str, dict[str, Any]], what: str
) -> dict[str, Any]:
    out = {}
    for column, raw in image.items():
        if column not in types:
            raise BadInput(f"{what}.{column}: column not in column_types")
        out[column] = typed_value(raw, types[column], f"{what}.{column}")
    return out


def data_record(partition: str | None, body: Any) -> DataRecord:
    if not isinstance(body, dict):
        raise BadInput("data_change_record is not an object")
    commit_ns = timestamp_ns(body.get("commit_timestamp"), "commit_timestamp")
    seq = _sequence(body.get("record_sequence"), "record_sequence")
    txn = _text(body, "server_transaction_id")
    table = _text(body, "table_name")
    mod_type = body.get("mod_type")
    if mod_type not in OP_NAMES:
        raise BadInput(f"unknown mod_type {mod_type!r}")
    capture = body.get("value_capture_type")
    if capture not in CAPTURE_TYPES:
        raise BadInput(f"unknown value_capture_type {capture!r}")
    records_in_txn = _count(
        body.get("number_of_records_in_transaction"), "number_of_records_in_transaction"
    )
    if records_in_txn < 1:
        raise BadInput("number_of_records_in_transaction below 1")
    column_types = body.get("column_types")
    if not isinstance(column_types, list) or not column_types:
        raise BadInput("missing column_types")
    types: dict[str, dict[str, Any]] = {}
    for entry in column_types:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise BadInput(f"bad column_types entry {entry!r}")
        types[entry["name"]] = type_code(entry.get("type"), f"column_types.{entry['name']}")
    mods_raw = body.get("mods")
    if not isinstance(mods_raw, list) or not mods_raw:
        raise BadInput("missing mods")
    mods = []
    for i, mod in enumerate(mods_raw):
        if not isinstance(mod, dict):
            raise BadInput(f"mods[{i}] is not an object")
        keys = _object(mod.get("keys"), f"mods[{i}].keys")
        if not keys:
            raise BadInput(f"mods[{i}].keys is empty")
        new_values = _object(mod.get("new_values"), f"mods[{i}].new_values", empty_if_null=True)
        old_values = _object(mod.get("old_values"), f"mods[{i}].old_values", empty_if_null=True)
        typed_keys = _typed_image(keys, types, f"mods[{i}].keys")
        typed_new = _typed_image(new_values, types, f"mods[{i}].new_values")
        _typed_image(old_values, types, f"mods[{i}].old_values")  # checked, not used
        mods.append(Mod(typed_keys, typed_new))
    return DataRecord(
        partition,
        commit_ns,
        txn,
        seq,
        table,
        tuple(types),
        mods,
        mod_type,
        capture,
        records_in_txn,
    )


def heartbeat_record(partition: str | None, body: Any) -> Heartbeat:
    if not isinstance(body, dict):
        raise BadInput("heartbeat_record is not an object")
    return Heartbeat(partition, timestamp_ns(body.get("timestamp"), "heartbeat timestamp"))


def child_partitions_record(partition: str | None, body: Any) -> ChildPartitions:
    if not isinstance(body, dict):
        raise BadInput("child_partitions_record is not an object")
    start_ns = timestamp_ns(body.get("start_timestamp"), "start_timestamp")
    _sequence(body.get("record_sequence"), "child partitions record_sequence")
    children_raw = body.get("child_partitions")
    if not isinstance(children_raw, list):
        raise BadInput("child_partitions is not an array")
    children = []
    for child in children_raw:
        if not isinstance(child, dict) or not isinstance(child.get("token"), str):
            raise BadInput(f"bad child partition {child!r}")
        parents = child.get("parent_partition_tokens")
        if not isinstance(parents, list) or not all(
            p is None or isinstance(p, str) for p in parents
        ):
            raise BadInput(f"bad parent_partition_tokens {parents!r}")
        children.append(child["token"])
    return ChildPartitions(partition, start_ns, children)


def _googlesql_record(change_record: Any) -> tuple[str, Any]:
    """The one record of a GoogleSQL ``ChangeRecord`` array: (kind, element)."""
    if not isinstance(change_record, list) or len(change_record) != 1:
        raise BadInput("ChangeRecord is not an array of exactly one element")
    struct = change_record[0]
    if not isinstance(struct, dict):
        raise BadInput("ChangeRecord element is not a struct")
    filled = [(kind, value) for kind, value in struct.items() if value not in (None, [])]
    if len(filled) != 1:
        raise BadInput(f"ChangeRecord holds {len(filled)} records, expected exactly one")
    [(kind, value)] = filled
    if kind not in RECORD_KINDS:
        raise BadInput(f"unknown record kind {kind!r}")
    if not isinstance(value, list) or len(value) != 1:
        raise BadInput(f"{kind} is not an array of exactly one element")
    return kind, value[0]


def interpret(line: Any) -> Record:
    """Check and interpret one landed line; BadInput for anything to quarantine."""
    if not isinstance(line, dict):
        raise BadInput("line is not a JSON object")
    if "partition_token" not in line:
        raise BadInput("missing partition_token")
    partition = line["partition_token"]
    if partition is not None and not isinstance(partition, str):
        raise BadInput(f"bad partition_token {partition!r}")
    rest = {k: v for k, v in line.items() if k != "partition_token"}
    if set(rest) == {"ChangeRecord"}:
        kind, body = _googlesql_record(rest["ChangeRecord"])
    elif len(rest) == 1:
        [(kind, body)] = rest.items()
        if kind not in RECORD_KINDS:
            raise BadInput(f"unknown record kind {kind!r}")
    else:
        raise BadInput(f"expected exactly one record, got keys {sorted(rest)}")
    if kind == "data_change_record":
        return data_record(partition, body)
    if kind == "heartbeat_record":
        return heartbeat_record(partition, body)
    return child_partitions_record(partition, body)


# --------------------------------------------------------------------------------------------
# Streams: partitions, watermark, transactions
# --------------------------------------------------------------------------------------------


@dataclass
class Stream:
    """Everything good landed for one stream."""

    name: str
    data: dict[tuple[Any, ...], DataRecord] = field(default_factory=dict)
    progress: dict[str | None, int] = field(default_factory=dict)
    closed: set[str | None] = field(default_factory=set)
    table_columns: dict[str, set[str]] = field(default_factory=dict)
    # (read ns, table, key_json) -> the row, once; and every row line landed, duplicates too
    snapshot_rows: dict[tuple[int, str, str], SnapshotRow] = field(default_factory=dict)
    snapshot_lines: list[SnapshotRow] = field(default_factory=list)

    def report(self, partition: str | None, ts_ns: int) -> None:
        self.progress[partition] = max(ts_ns, self.progress.get(partition, ts_ns))

    def add(self, record: Record) -> None:
        if isinstance(record, SnapshotHeader):
            self.table_columns.setdefault(record.table, set()).update(record.types)
        elif isinstance(record, SnapshotRow):
            identity = (record.header.read_ns, record.header.table, canonical_json(record.key))
            self.snapshot_rows.setdefault(identity, record)
            self.snapshot_lines.append(record)
        elif isinstance(record, DataRecord):
            self.report(record.partition, record.commit_ns)
            self.data.setdefault(record.identity, record)
            self.table_columns.setdefault(record.table, set()).update(record.columns)
        elif isinstance(record, Heartbeat):
            self.report(record.partition, record.ts_ns)
        else:
            self.report(record.partition, record.start_ns)
            self.closed.add(record.partition)
            for child in record.children:
                self.report(child, record.start_ns)

    def open_partitions(self) -> list[str | None]:
        return [p for p in self.progress if p not in self.closed]

    def low_watermark(self) -> int | None:
        """Epoch ns, or None when no partition is open (everything landed counts)."""
        open_ = self.open_partitions()
        return min(self.progress[p] for p in open_) if open_ else None

    def transactions(self) -> dict[str, tuple[set[int], int]]:
        """server_transaction_id -> (its landed record sequences, records it should have)."""
        out: dict[str, tuple[set[int], int]] = {}
        for record in self.data.values():
            seqs, wanted = out.get(record.txn, (set(), 0))
            seqs.add(record.seq)
            out[record.txn] = (seqs, max(wanted, record.records_in_txn))
        return out

    def incomplete_transactions(self) -> set[str]:
        return {t for t, (seqs, wanted) in self.transactions().items() if len(seqs) < wanted}

    def snapshot_applies(self, row: SnapshotRow) -> bool:
        """At or below the low watermark, as a change committed at its read timestamp; with no
        partition known there is none, with none open it is the latest progress."""
        if not self.progress:
            return False
        watermark = self.low_watermark()
        reached = max(self.progress.values()) if watermark is None else watermark
        return row.header.read_ns <= reached

    def applied_snapshot_rows(self) -> list[SnapshotRow]:
        return [row for row in self.snapshot_rows.values() if self.snapshot_applies(row)]

    def applied(self) -> list[DataRecord]:
        """The records whose changes are in current state and history."""
        watermark = self.low_watermark()
        waiting = self.incomplete_transactions()
        return [
            r
            for r in self.data.values()
            if r.txn not in waiting and (watermark is None or r.commit_ns <= watermark)
        ]


def snapshot_header(line: Any) -> SnapshotHeader:
    if not isinstance(line, dict) or not isinstance(line.get("snapshot"), dict):
        raise BadInput("the first line of a snapshot file is no snapshot header")
    body = line["snapshot"]
    read_ns = timestamp_ns(body.get("read_timestamp"), "read_timestamp")
    table = _text(body, "table")
    entries = body.get("column_types")
    if not isinstance(entries, list) or not entries:
        raise BadInput("snapshot header without column_types")
    types: dict[str, dict[str, Any]] = {}
    key = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise BadInput(f"bad column_types entry {entry!r}")
        name = entry["name"]
        if name in types:
            raise BadInput(f"column {name} twice in the snapshot header")
        types[name] = type_code(entry.get("type"), f"column_types.{name}")
        typed_value(None, types[name], name)
        if entry.get("is_primary_key") not in (None, True, False):
            raise BadInput(f"column {name}: is_primary_key is no boolean")
        if entry.get("is_primary_key"):
            key.append(name)
    return SnapshotHeader(read_ns, table, types, tuple(key))


def snapshot_row(header: SnapshotHeader, line: Any) -> SnapshotRow:
    if not isinstance(line, dict) or set(line) != {"values"}:
        raise BadInput('a snapshot row is {"values": {...}}')
    values = line["values"]
    if not isinstance(values, dict) or set(values) != set(header.types):
        raise BadInput("a snapshot row names exactly its header's columns")
    if not header.key:
        raise BadInput("snapshot header has no is_primary_key column")
    row = _typed_image(values, header.types, "values")
    return SnapshotRow(header, {name: row[name] for name in header.key}, row)


def snapshot_lines(lines: list[Line]) -> list[Line]:
    """A snapshot file's lines, each with its header: (number, (header, line), error)."""
    header: SnapshotHeader | None = None
    out: list[Line] = []
    for number, parsed, error in lines:
        if error is None and number == 1:
            try:
                header = snapshot_header(parsed)
            except BadInput as exc:
                error = str(exc)
        elif error is None and header is None:
            error = "a row of a snapshot file without a valid header"
        out.append((number, (header, None if number == 1 else parsed), error))
    return out


def read_file(path: str, data: bytes) -> list[Line]:
    lines = json_lines(data, parse_float=Decimal)
    return snapshot_lines(lines) if path.split("/")[2:3] == ["snapshot"] else lines


def interpret_line(path_line: Any) -> Record:
    """A snapshot file's line comes as (its header, the line; None for the header itself)."""
    if isinstance(path_line, tuple):
        header, line = path_line
        return header if line is None else snapshot_row(header, line)
    return interpret(path_line)


def collect(waves: list[dict[str, bytes]]) -> tuple[dict[str, Stream], list[dict[str, Any]]]:
    """Every stream's good records, and the quarantine rows."""
    records: list[tuple[str, Record]]
    records, quarantine = land(
        waves,
        SOURCE_SYSTEM,
        (".jsonl",),
        read_file,
        lambda _, line: interpret_line(line),
    )
    streams: dict[str, Stream] = {}
    for name, record in records:
        streams.setdefault(name, Stream(name)).add(record)
    return streams, quarantine


# --------------------------------------------------------------------------------------------
# Each key's steps
# --------------------------------------------------------------------------------------------


@dataclass
class Change:
    # (commit ns, 0, transaction, record sequence, mod) for a change; (read ns, 1, ...) for a
    # snapshot row: after the changes committed at its read timestamp, before the next ns.
    order: tuple[int, int, str, int, int]
    txn: str
    op: str
    commit_ns: int
    row: dict[str, Any] | None  # None for a delete
    full: bool


def key_changes(
    records: list[DataRecord], snapshot_rows: list[SnapshotRow]
) -> dict[tuple[str, str], list[Change]]:
    """(table, key_json) -> its applied changes and snapshot rows, in source order."""
    out: dict[tuple[str, str], list[Change]] = {}
    for s in snapshot_rows:
        read_ns = s.header.read_ns
        snapshot = Change(
            (read_ns, 1, "", 0, 0), f"snapshot:{read_ns}", "snapshot", read_ns, s.row, True
        )
        out.setdefault((s.header.table, canonical_json(s.key)), []).append(snapshot)
    for r in records:
        for index, mod in enumerate(r.mods):
            full = r.mod_type == "INSERT" or r.capture in FULL_ROW_CAPTURES
            row = None if r.mod_type == "DELETE" else {**mod.new_values, **mod.key}
            change = Change(
                (r.commit_ns, 0, r.txn, r.seq, index),
                r.txn,
                OP_NAMES[r.mod_type],
                r.commit_ns,
                row,
                full,
            )
            out.setdefault((r.table, canonical_json(mod.key)), []).append(change)
    for changes in out.values():
        changes.sort(key=lambda c: c.order)
    return out


def key_steps(changes: list[Change], columns: set[str]) -> list[Step]:
    """One key's steps: each change's row image, a partial one completed with the key's latest
    known values (columns still without one are unavailable)."""
    known: dict[str, Any] = {}
    steps: list[Step] = []
    for c in changes:
        state = None
        if c.row is not None:
            row = dict(c.row)
            if not c.full:
                for column in columns - row.keys():
                    if column in known:
                        row[column] = known[column]
            known.update(row)
            state = (canonical_json(row), tuple(sorted(columns - row.keys())))
        steps.append(Step(c.txn, c.op, micros(c.commit_ns), state))
    return steps


# --------------------------------------------------------------------------------------------
# Marts
# --------------------------------------------------------------------------------------------


def expected_marts(waves: list[dict[str, bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Expected cdc_current, cdc_history and cdc_quarantine after landing all ``waves``."""
    streams, quarantine = collect(waves)
    steps_by_key = {
        (name, table, key_json): key_steps(changes, stream.table_columns[table])
        for name, stream in streams.items()
        for (table, key_json), changes in key_changes(
            stream.applied(), stream.applied_snapshot_rows()
        ).items()
    }
    return marts(SOURCE_SYSTEM, steps_by_key, quarantine)


def expected_stream_status(waves: list[dict[str, bytes]]) -> list[dict[str, Any]]:
    """One row per stream with a good line: its low watermark (None when no partition is open),
    its open partition count, its transactions counted by state: incomplete (at least one
    landed record and fewer distinct records than number_of_records_in_transaction), applied,
    and waiting (complete, committed above the low watermark), and its snapshot row lines
    landed that do not apply yet (each delivery counted)."""
    streams, _ = collect(waves)
    rows = []
    for name in sorted(streams):
        stream = streams[name]
        watermark = stream.low_watermark()
        incomplete = stream.incomplete_transactions()
        applied = {record.txn for record in stream.applied()}
        rows.append(
            {
                "source_system": SOURCE_SYSTEM,
                "source_name": name,
                "low_watermark": None if watermark is None else utc_datetime(micros(watermark)),
                "open_partitions": len(stream.open_partitions()),
                "incomplete_transactions": len(incomplete),
                "applied_transactions": len(applied),
                "waiting_transactions": len(stream.transactions().keys() - incomplete - applied),
                "waiting_snapshot_rows": sum(
                    not stream.snapshot_applies(row) for row in stream.snapshot_lines
                ),
            }
        )
    return rows
