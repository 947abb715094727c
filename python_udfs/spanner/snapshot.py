"""Spanner initial snapshot files (`spanner/<stream>/snapshot/**/*.jsonl`, CONTRACT §1 "Initial
snapshots"): each table as a strong read at one timestamp read it. The first line of a file is
its header (`snapshot_header`: read timestamp, table, column types as data change records give
them, either dialect's shape), every further line one row (`snapshot_row`: values in Spanner's
JSON encoding), typed by the data change records' own value typing (`spanner._typed`). Both
are stages of the family's decoding (python_udfs/decoding.py's `Decoder`;
python_udfs/families.py).

Where a snapshot row sorts: a strong read at T sees every transaction committed at or before
T and none after, so the row sorts after every change of its key with commit_timestamp <= T and
before every change after T, whatever order their files land in (`snapshot_sort_pos`).

committed_at is T: the row is the row as it stood at T. In history a version's valid_from is the
minimum committed_at over it and the versions after it; every change after the snapshot
commits after T, so the snapshot version is valid from T, and a change at or before T that
lands later sorts before it and keeps its own, earlier time. The row was as read since some
earlier, unknown time: T is the earliest the warehouse can vouch for, as for a Debezium
snapshot read ('r', its read time) or a Datastream backfill (its source_timestamp).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import (
    canonical_json,
    loads,
    loads_exact,
    normalize,
    pos_instant,
    pos_join,
    pos_text,
)
from python_udfs.snapshots import (
    HEADER_COLUMNS,
    NO_HEADER,
    SnapshotRowLine,
    error_row,
    header_fields,
    row_values,
    snapshot_change,
)
from python_udfs.spanner import (
    _BadLine,
    _column_types,
    _instant_ns,
    _source_types,
    _text,
    _typed,
)
from python_udfs.table_settings import KeyLookup

# The header row: the common columns, and the column names in order, as a data change record's
# row gives them (`int_spanner__table_columns` learns a table's columns from them).
SPANNER_HEADER_COLUMNS: tuple[tuple[str, str], ...] = (
    *HEADER_COLUMNS,
    ("column_names", "array<string>"),
)

# A header's columns as (name, Spanner type, is_primary_key), in column_types order.
SnapshotColumns = tuple[tuple[str, dict[str, Any], bool], ...]


def snapshot_sort_pos(read_ns: int) -> str:
    """(T + 1 ns, empty text). A change's sort_pos starts with its commit instant
    (`pos_instant`, nanoseconds), then its server_transaction_id (`pos_text`: hex of a
    non-empty text, then '!'), record sequence and mod index. A change committed at or before T
    has a smaller first part and sorts first; one committed at T + 1 ns or later has an equal
    or larger first part, and at T + 1 ns its transaction part starts with a hex digit, which
    sorts after the '!' of empty text. No bound inside the text alphabet sorts after every
    transaction at T, hence the next nanosecond. The order is decided inside a part, so it
    holds where SQL appends more parts (cdc_history's sort_key)."""
    return pos_join(pos_instant(read_ns + 1), pos_text(""))


def snapshot_header(
    line: str, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """A snapshot file's first line, `{"snapshot": {"read_timestamp", "table",
    "column_types"}}`, validated, as the row of `SPANNER_HEADER_COLUMNS`: the table,
    `header_json` for `snapshot_row`, the column types and names. Every column needs a type
    that can be read (each row carries each column), and a name used once. Fields the
    contract does not name are ignored; a header is the same whichever stream it came from.
    Never raises: `error` names what does not fit."""
    try:
        fields = header_fields(line, loads_exact)
    except ValueError as exc:
        return {"error": str(exc)}
    try:
        read_ns = _instant_ns(fields, "read_timestamp")
        table = _text(fields, "table")
        types, primary_key, names = _column_types(fields.get("column_types"))
        if not names:
            raise _BadLine("column_types is empty")
        if len(types) != len(names):
            twice = next(name for name in names if names.count(name) > 1)
            raise _BadLine(f"column {twice!r} appears twice in column_types")
        unreadable = [name for name in names if types[name] is None]
        if unreadable:
            raise _BadLine(f"column {unreadable[0]!r} has no readable type")
        _check_key_flags(fields["column_types"])
    except _BadLine as exc:
        return {"error": f"bad snapshot header: {exc}"}
    header = {
        "read_ns": read_ns,
        "table": table,
        "columns": [[name, types[name], name in primary_key] for name in names],
    }
    return {
        "error": None,
        "source_table": table,
        # A type object may hold numbers, parsed exactly as Decimal: written as JSON numbers.
        "header_json": json.dumps(
            header, separators=(",", ":"), ensure_ascii=False, default=normalize
        ),
        "column_types": _source_types(types),
        "column_names": names,
    }


def _check_key_flags(entries: list[dict[str, Any]]) -> None:
    """is_primary_key is true or false, or absent for false: a flag in another spelling
    ("true", 1) would otherwise make a key column a value column without a word."""
    for entry in entries:
        flag = entry.get("is_primary_key")
        if flag is not None and not isinstance(flag, bool):
            raise _BadLine(
                f"column {entry['name']!r}: is_primary_key must be true or false, got {flag!r}"
            )


@functools.lru_cache(maxsize=256)
def _header(header_json: str) -> tuple[int, str, SnapshotColumns]:
    """(read timestamp in ns, table, columns) of `snapshot_header`'s text; every row of a file
    passes the same text, so it is parsed once."""
    header = loads(header_json)
    columns = tuple((name, kind, is_key) for name, kind, is_key in header["columns"])
    return header["read_ns"], header["table"], columns


def snapshot_row(
    unit: SnapshotRowLine, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """One row line, `{"values": {<column>: <Spanner JSON value>}}`, with its file's
    `header_json` (`snapshot_header`; None when that line was no valid header), as a change-log
    row with op `snapshot` at the read timestamp (see the module docstring).

    The values must name exactly the header's columns: a snapshot row carries every column
    (that is what completes the partial images after it), and a column the header does not
    type cannot be read, so a missing or an extra column is a row that does not fit its header.
    The key is the table's declared key, else the columns flagged is_primary_key. Never
    raises."""
    line, header_json = unit
    if header_json is None:
        return error_row(NO_HEADER)
    try:
        read_ns, table, columns = _header(header_json)
        values = row_values(line, loads_exact)
        if not isinstance(values, dict):
            raise ValueError("values is not an object")
        types = {name: spanner_type for name, spanner_type, _ in columns}
        missing = [name for name in types if name not in values]
        if missing:
            raise ValueError(f"column {missing[0]!r} missing from the row's values")
        extra = [name for name in values if name not in types]
        if extra:
            raise ValueError(f"column {extra[0]!r} is not in the header's column_types")
        row = {name: _typed_column(name, types[name], values[name]) for name in types}
        key_columns = _key_columns(columns, table, source_name, settings.declared_keys)
        key_json = canonical_json({name: row[name][0] for name in key_columns})
    except (ValueError, TypeError, KeyError) as exc:
        return error_row(str(exc) or type(exc).__name__)
    return snapshot_change(
        table=table,
        key_json=key_json,
        row_image={name: text for name, (_, text) in row.items()},
        sort_pos=snapshot_sort_pos(read_ns),
        committed_at=read_ns // 1000,
        position=read_ns,
    )


def _typed_column(name: str, spanner_type: dict[str, Any], value: Any) -> tuple[Any, str]:
    """(canonical value, its JSON text) of one column; ValueError naming the column."""
    try:
        typed = _typed(spanner_type, value)
        return typed, canonical_json(typed)
    # RecursionError: a JSON value nested deeper than Python recurses.
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:
        raise ValueError(f"column {name!r}: {exc}") from None


def _key_columns(
    columns: SnapshotColumns, table: str, source_name: str, declared_keys: KeyLookup | None
) -> list[str]:
    """The declared key wins over the is_primary_key flags, as for data change records."""
    declared = None
    if declared_keys is not None:
        try:
            declared = declared_keys("spanner", source_name, table)
        except Exception as exc:  # a settings lookup failure is reported with the row
            raise ValueError(f"declared_keys failed: {type(exc).__name__}: {exc}") from None
    names = [name for name, _, _ in columns]
    if declared:
        unknown = [name for name in declared if name not in names]
        if unknown:
            raise ValueError(f"declared key column {unknown[0]!r} is not in the header")
        return declared
    flagged = [name for name, _, is_key in columns if is_key]
    if not flagged:
        raise ValueError("no primary key: no column is_primary_key and no key declared")
    return flagged
