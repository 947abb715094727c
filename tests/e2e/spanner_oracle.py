"""Independent expected-result oracle for Spanner change stream landing files.

Written from Google's change stream record documentation and the guarantees of
docs/guarantees.md only, in plain Python and independent of the production code (it imports
nothing from the project), so the end-to-end test can compare the pipeline's marts with it.
``expected_marts(waves)`` gives ``cdc_current``, ``cdc_history`` and ``cdc_quarantine`` after
landing all the given waves; ``expected_stream_status(waves)`` gives the operator view of each
stream (``cdc_spanner_streams``).

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
- versions: consecutive changes of a key in one transaction make one version, the state after
  the last, with that last change's op (INSERT insert, UPDATE update, DELETE delete); a state
  (row_json, unavailable_columns) equal to the open version is no version; a delete closes the
  open version (valid_to = its commit time) and is no version itself; a delete with nothing open
  is nothing; valid_from = the commit time, clipped to the next transition's; last_committed_at
  = the current version's own commit time; times are truncated to microseconds.
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

SOURCE_SYSTEM = "spanner"
RECORD_KINDS = ("data_change_record", "heartbeat_record", "child_partitions_record")
OP_NAMES = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
CAPTURE_TYPES = ("OLD_AND_NEW_VALUES", "NEW_VALUES", "NEW_ROW", "NEW_ROW_AND_OLD_VALUES")
FULL_ROW_CAPTURES = ("NEW_ROW", "NEW_ROW_AND_OLD_VALUES")
FLOAT_WORDS = ("NaN", "Infinity", "-Infinity")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_LIMIT = 2**53
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NS_PER_S = 1_000_000_000


class BadLine(Exception):
    """An input line that goes to quarantine."""


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
        raise BadLine(f"{what}: expected an RFC 3339 timestamp, got {value!r}")
    m = _TIMESTAMP_RE.match(value)
    if m is None:
        raise BadLine(f"{what}: not an RFC 3339 timestamp: {value!r}")
    try:
        wall = datetime(*(int(g) for g in m.groups()[:6]), tzinfo=UTC)
    except ValueError as exc:
        raise BadLine(f"{what}: impossible timestamp {value!r}: {exc}") from exc
    zone = m.group(8)
    offset_s = 0
    if zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        offset_s = sign * (int(zone[1:3]) * 3600 + int(zone[4:6]) * 60)
    seconds = (wall - _EPOCH) // timedelta(seconds=1) - offset_s
    return seconds * _NS_PER_S + int((m.group(7) or "").ljust(9, "0"))


def instant(ns: int) -> datetime:
    """Epoch nanoseconds as an aware UTC datetime, truncated to microseconds."""
    return _EPOCH + timedelta(microseconds=ns // 1000)


def timestamp_text(ns: int) -> str:
    """The canonical instant text: 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    return instant(ns).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def canonical_int(value: int) -> int | str:
    """An int, or its decimal string beyond +-2**53."""
    return value if -_LIMIT <= value <= _LIMIT else str(value)


def canonical_numeric(value: Decimal) -> int | float | str:
    """Integral within +-2**53: an int; else a float if a double holds it exactly; else text."""
    if value == value.to_integral_value() and -_LIMIT <= value <= _LIMIT:
        return int(value)
    if Decimal(repr(float(value))) == value:
        return float(value)
    text = format(value, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def canonical_json(obj: Any) -> str:
    """Sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_document(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        raise BadLine(f"{what}: JSON column value is not JSON: {exc}") from exc


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def type_code(spec: Any, what: str) -> dict[str, Any]:
    """A column type (an object, or a string holding one) with a ``code``."""
    if isinstance(spec, str):
        try:
            spec = json.loads(spec)
        except ValueError as exc:
            raise BadLine(f"{what}: type is not JSON: {exc}") from exc
    if not isinstance(spec, dict) or not isinstance(spec.get("code"), str):
        raise BadLine(f"{what}: type without a code: {spec!r}")
    return spec


def typed_value(value: Any, spec: dict[str, Any], what: str) -> Any:
    """One value in Spanner's JSON encoding, typed by its column type, in the canonical typing."""
    if value is None:
        return None
    code = spec["code"]
    if code == "INT64":
        if _is_int(value):
            number = value
        elif isinstance(value, str) and _INT_RE.match(value):
            number = int(value)
        else:
            raise BadLine(f"{what}: not an INT64: {value!r}")
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise BadLine(f"{what}: out of the INT64 range: {value!r}")
        return canonical_int(number)
    if code == "FLOAT64":
        if isinstance(value, str) and value in FLOAT_WORDS:
            return value
        if isinstance(value, int | float | Decimal) and not isinstance(value, bool):
            number = float(value)
            if math.isinf(number) or math.isnan(number):
                raise BadLine(f"{what}: not a finite FLOAT64: {value!r}")
            return number
        raise BadLine(f"{what}: not a FLOAT64: {value!r}")
    if code == "NUMERIC":
        if isinstance(value, str) and _NUMERIC_RE.match(value):
            return canonical_numeric(Decimal(value))
        raise BadLine(f"{what}: not a NUMERIC decimal string: {value!r}")
    if code == "BOOL":
        if isinstance(value, bool):
            return value
        raise BadLine(f"{what}: not a BOOL: {value!r}")
    if code == "STRING":
        if isinstance(value, str):
            return value
        raise BadLine(f"{what}: not a STRING: {value!r}")
    if code == "BYTES":
        try:
            base64.b64decode(value.encode("ascii"), validate=True)
        except (AttributeError, binascii.Error, UnicodeEncodeError, ValueError) as exc:
            raise BadLine(f"{what}: not base64 BYTES: {value!r}") from exc
        return value
    if code == "DATE":
        if isinstance(value, str) and _DATE_RE.match(value):
            try:
                date.fromisoformat(value)
            except ValueError as exc:
                raise BadLine(f"{what}: impossible DATE {value!r}") from exc
            return value
        raise BadLine(f"{what}: not a DATE: {value!r}")
    if code == "TIMESTAMP":
        return timestamp_text(timestamp_ns(value, what))
    if code == "JSON":
        if isinstance(value, str):
            return _json_document(value, what)
        raise BadLine(f"{what}: a JSON column value must be a string holding JSON: {value!r}")
    if code == "ARRAY":
        element = type_code(spec.get("array_element_type"), f"{what} element")
        if not isinstance(value, list):
            raise BadLine(f"{what}: not an ARRAY: {value!r}")
        return [typed_value(v, element, f"{what}[{i}]") for i, v in enumerate(value)]
    raise BadLine(f"{what}: unsupported type code {code!r}")


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


Record = DataRecord | Heartbeat | ChildPartitions


def _object(value: Any, what: str, *, empty_if_null: bool = False) -> dict[str, Any]:
    """A JSON-typed field: an object, or a string holding one."""
    if value is None and empty_if_null:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_float=Decimal)
        except ValueError as exc:
            raise BadLine(f"{what} is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise BadLine(f"{what} is not an object")
    return value


def _count(value: Any, what: str) -> int:
    """An INT64 field: a number or a decimal string."""
    if _is_int(value):
        return value
    if isinstance(value, str) and _INT_RE.match(value):
        return int(value)
    raise BadLine(f"{what}: not an integer: {value!r}")


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str) or value == "":
        raise BadLine(f"missing or bad {name}: {value!r}")
    return value


def _sequence(value: Any, what: str) -> int:
    if _is_int(value) and value >= 0:
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    raise BadLine(f"{what}: not a decimal sequence number: {value!r}")


def _typed_image(
    image: dict[str, Any], types: dict[str, dict[str, Any]], what: str
) -> dict[str, Any]:
    out = {}
    for column, raw in image.items():
        if column not in types:
            raise BadLine(f"{what}.{column}: column not in column_types")
        out[column] = typed_value(raw, types[column], f"{what}.{column}")
    return out


def data_record(partition: str | None, body: Any) -> DataRecord:
    if not isinstance(body, dict):
        raise BadLine("data_change_record is not an object")
    commit_ns = timestamp_ns(body.get("commit_timestamp"), "commit_timestamp")
    seq = _sequence(body.get("record_sequence"), "record_sequence")
    txn = _text(body, "server_transaction_id")
    table = _text(body, "table_name")
    mod_type = body.get("mod_type")
    if mod_type not in OP_NAMES:
        raise BadLine(f"unknown mod_type {mod_type!r}")
    capture = body.get("value_capture_type")
    if capture not in CAPTURE_TYPES:
        raise BadLine(f"unknown value_capture_type {capture!r}")
    records_in_txn = _count(
        body.get("number_of_records_in_transaction"), "number_of_records_in_transaction"
    )
    if records_in_txn < 1:
        raise BadLine("number_of_records_in_transaction below 1")
    column_types = body.get("column_types")
    if not isinstance(column_types, list) or not column_types:
        raise BadLine("missing column_types")
    types: dict[str, dict[str, Any]] = {}
    for entry in column_types:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise BadLine(f"bad column_types entry {entry!r}")
        types[entry["name"]] = type_code(entry.get("type"), f"column_types.{entry['name']}")
    mods_raw = body.get("mods")
    if not isinstance(mods_raw, list) or not mods_raw:
        raise BadLine("missing mods")
    mods = []
    for i, mod in enumerate(mods_raw):
        if not isinstance(mod, dict):
            raise BadLine(f"mods[{i}] is not an object")
        keys = _object(mod.get("keys"), f"mods[{i}].keys")
        if not keys:
            raise BadLine(f"mods[{i}].keys is empty")
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
        raise BadLine("heartbeat_record is not an object")
    return Heartbeat(partition, timestamp_ns(body.get("timestamp"), "heartbeat timestamp"))


def child_partitions_record(partition: str | None, body: Any) -> ChildPartitions:
    if not isinstance(body, dict):
        raise BadLine("child_partitions_record is not an object")
    start_ns = timestamp_ns(body.get("start_timestamp"), "start_timestamp")
    _sequence(body.get("record_sequence"), "child partitions record_sequence")
    children_raw = body.get("child_partitions")
    if not isinstance(children_raw, list):
        raise BadLine("child_partitions is not an array")
    children = []
    for child in children_raw:
        if not isinstance(child, dict) or not isinstance(child.get("token"), str):
            raise BadLine(f"bad child partition {child!r}")
        parents = child.get("parent_partition_tokens")
        if not isinstance(parents, list) or not all(
            p is None or isinstance(p, str) for p in parents
        ):
            raise BadLine(f"bad parent_partition_tokens {parents!r}")
        children.append(child["token"])
    return ChildPartitions(partition, start_ns, children)


def _googlesql_record(change_record: Any) -> tuple[str, Any]:
    """The one record of a GoogleSQL ``ChangeRecord`` array: (kind, element)."""
    if not isinstance(change_record, list) or len(change_record) != 1:
        raise BadLine("ChangeRecord is not an array of exactly one element")
    struct = change_record[0]
    if not isinstance(struct, dict):
        raise BadLine("ChangeRecord element is not a struct")
    filled = [(kind, value) for kind, value in struct.items() if value not in (None, [])]
    if len(filled) != 1:
        raise BadLine(f"ChangeRecord holds {len(filled)} records, expected exactly one")
    [(kind, value)] = filled
    if kind not in RECORD_KINDS:
        raise BadLine(f"unknown record kind {kind!r}")
    if not isinstance(value, list) or len(value) != 1:
        raise BadLine(f"{kind} is not an array of exactly one element")
    return kind, value[0]


def interpret(line: Any) -> Record:
    """Check and interpret one landed line; BadLine for anything to quarantine."""
    if not isinstance(line, dict):
        raise BadLine("line is not a JSON object")
    if "partition_token" not in line:
        raise BadLine("missing partition_token")
    partition = line["partition_token"]
    if partition is not None and not isinstance(partition, str):
        raise BadLine(f"bad partition_token {partition!r}")
    rest = {k: v for k, v in line.items() if k != "partition_token"}
    if set(rest) == {"ChangeRecord"}:
        kind, body = _googlesql_record(rest["ChangeRecord"])
    elif len(rest) == 1:
        [(kind, body)] = rest.items()
        if kind not in RECORD_KINDS:
            raise BadLine(f"unknown record kind {kind!r}")
    else:
        raise BadLine(f"expected exactly one record, got keys {sorted(rest)}")
    if kind == "data_change_record":
        return data_record(partition, body)
    if kind == "heartbeat_record":
        return heartbeat_record(partition, body)
    return child_partitions_record(partition, body)


def read_lines(data: bytes) -> list[tuple[int, Any, str | None]]:
    """(1-based line number, parsed JSON, error) for each non-blank line."""
    out: list[tuple[int, Any, str | None]] = []
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines = lines[:-1]
    for index, raw in enumerate(lines):
        if raw.strip() == b"":
            continue
        try:
            parsed = json.loads(raw.decode("utf-8"), parse_float=Decimal)
        except (UnicodeDecodeError, ValueError) as exc:
            out.append((index + 1, None, f"malformed JSON line: {exc}"))
            continue
        out.append((index + 1, parsed, None))
    return out


def _stream_of(path: str) -> str | None:
    """'spanner/<stream>/...jsonl' -> '<stream>'."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != SOURCE_SYSTEM or not path.endswith(".jsonl"):
        return None
    return parts[1]


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

    def report(self, partition: str | None, ts_ns: int) -> None:
        self.progress[partition] = max(ts_ns, self.progress.get(partition, ts_ns))

    def add(self, record: Record) -> None:
        if isinstance(record, DataRecord):
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

    def applied(self) -> list[DataRecord]:
        """The records whose changes are in current state and history."""
        watermark = self.low_watermark()
        waiting = self.incomplete_transactions()
        return [
            r
            for r in self.data.values()
            if r.txn not in waiting and (watermark is None or r.commit_ns <= watermark)
        ]


def collect(waves: list[dict[str, bytes]]) -> tuple[dict[str, Stream], list[dict[str, Any]]]:
    """Every stream's good records, and the quarantine rows."""
    streams: dict[str, Stream] = {}
    quarantine: list[dict[str, Any]] = []
    for wave in waves:
        for path in sorted(wave):
            name = _stream_of(path)
            if name is None:
                continue
            stream = streams.setdefault(name, Stream(name))
            for number, line, error in read_lines(wave[path]):
                if error is None:
                    try:
                        stream.add(interpret(line))
                        continue
                    except BadLine as exc:
                        error = str(exc) or "bad line"
                quarantine.append(
                    {
                        "source_system": SOURCE_SYSTEM,
                        "source_name": name,
                        "file_path": path,
                        "line_number": number,
                        "reason": error,
                    }
                )
    quarantine.sort(key=lambda q: (q["file_path"], q["line_number"]))
    return streams, quarantine


# --------------------------------------------------------------------------------------------
# Folding a key's changes into versions
# --------------------------------------------------------------------------------------------


@dataclass
class Change:
    order: tuple[int, str, int, int]
    txn: str
    op: str
    commit_ns: int
    row: dict[str, Any] | None  # None for a delete
    full: bool


@dataclass
class Transition:
    op: str
    state: tuple[str, tuple[str, ...]] | None  # None: a delete
    commit_ns: int
    effective_ns: int = 0


def key_changes(records: list[DataRecord]) -> dict[tuple[str, str], list[Change]]:
    """(table, key_json) -> its applied changes, in source order."""
    out: dict[tuple[str, str], list[Change]] = {}
    for r in records:
        for index, mod in enumerate(r.mods):
            full = r.mod_type == "INSERT" or r.capture in FULL_ROW_CAPTURES
            row = None if r.mod_type == "DELETE" else {**mod.new_values, **mod.key}
            change = Change(
                (r.commit_ns, r.txn, r.seq, index),
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


def fold_key(changes: list[Change], columns: set[str]) -> list[Transition]:
    """The kept transitions of one key: new versions and deletes, with clipped times."""
    known: dict[str, Any] = {}
    ends: list[tuple[Change, tuple[str, tuple[str, ...]] | None]] = []
    for i, c in enumerate(changes):
        state = None
        if c.row is not None:
            row = dict(c.row)
            if not c.full:
                for column in columns - row.keys():
                    if column in known:
                        row[column] = known[column]
            known.update(row)
            state = (canonical_json(row), tuple(sorted(columns - row.keys())))
        if i + 1 == len(changes) or changes[i + 1].txn != c.txn:
            ends.append((c, state))
    transitions: list[Transition] = []
    open_state: tuple[str, tuple[str, ...]] | None = None
    for c, state in ends:
        if state is None:
            if open_state is not None:
                transitions.append(Transition(c.op, None, c.commit_ns))
                open_state = None
            continue
        if state == open_state:
            continue
        transitions.append(Transition(c.op, state, c.commit_ns))
        open_state = state
    later: int | None = None
    for t in reversed(transitions):
        t.effective_ns = t.commit_ns if later is None else min(t.commit_ns, later)
        later = t.effective_ns
    return transitions


# --------------------------------------------------------------------------------------------
# Marts
# --------------------------------------------------------------------------------------------


def expected_marts(waves: list[dict[str, bytes]]) -> dict[str, list[dict[str, Any]]]:
    """Expected cdc_current, cdc_history and cdc_quarantine after landing all ``waves``."""
    streams, quarantine = collect(waves)
    current: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for name in sorted(streams):
        stream = streams[name]
        per_key = key_changes(stream.applied())
        for table, key_json in sorted(per_key):
            transitions = fold_key(per_key[(table, key_json)], stream.table_columns[table])
            base = {
                "source_system": SOURCE_SYSTEM,
                "source_name": name,
                "source_table": table,
                "key_json": key_json,
            }
            for i, t in enumerate(transitions):
                if t.state is None:
                    continue
                row_json, unavailable = t.state
                following = transitions[i + 1] if i + 1 < len(transitions) else None
                valid_to = None if following is None else instant(following.effective_ns)
                history.append(
                    {
                        **base,
                        "row_json": row_json,
                        "unavailable_columns": list(unavailable),
                        "op": t.op,
                        "valid_from": instant(t.effective_ns),
                        "valid_to": valid_to,
                        "is_current": valid_to is None,
                    }
                )
                if following is None:
                    current.append(
                        {
                            **base,
                            "row_json": row_json,
                            "unavailable_columns": list(unavailable),
                            "last_op": t.op,
                            "last_committed_at": instant(t.commit_ns),
                        }
                    )
    return {"cdc_current": current, "cdc_history": history, "cdc_quarantine": quarantine}


def expected_stream_status(waves: list[dict[str, bytes]]) -> list[dict[str, Any]]:
    """One row per stream with a good line: its low watermark (None when no partition is open),
    its open partition count, and its transactions counted by state: incomplete (at least one
    landed record and fewer distinct records than number_of_records_in_transaction), applied,
    and waiting (complete, committed above the low watermark)."""
    streams, _ = collect(waves)
    rows = []
    for name in sorted(streams):
        stream = streams[name]
        if not stream.progress:
            continue
        watermark = stream.low_watermark()
        incomplete = stream.incomplete_transactions()
        applied = {record.txn for record in stream.applied()}
        rows.append(
            {
                "source_system": SOURCE_SYSTEM,
                "source_name": name,
                "low_watermark": None if watermark is None else instant(watermark),
                "open_partitions": len(stream.open_partitions()),
                "incomplete_transactions": len(incomplete),
                "applied_transactions": len(applied),
                "waiting_transactions": len(stream.transactions().keys() - incomplete - applied),
            }
        )
    return rows
