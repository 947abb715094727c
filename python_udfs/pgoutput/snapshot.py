"""pgoutput initial snapshot files (`pgoutput/<slot>/snapshot/**/*.jsonl`, CONTRACT §1 "Initial
snapshots"): each table as `COPY` read it inside the snapshot the slot exported when it was
created. The first line of a file is its header (`snapshot_header`), every further line one row
(`snapshot_row`), typed by the same value decoder as TupleData text values. Both are stages of
the family's decoding (python_udfs/decoding.py's `Decoder`; python_udfs/families.py).

Where a snapshot row sorts: the header's lsn is the slot's consistent point, the end of the WAL
record at which the slot's snapshot builder became consistent; the exported snapshot holds every
transaction whose commit record lies before it. The slot decodes a transaction whose commit
record starts at or after it and skips one whose commit record starts before it (snapbuild.c,
SnapBuildXactNeedsSkip: skipped iff the commit's start < start_decoding_at, the consistent point
at the slot's first read). pgoutput's commit LSN is where the commit record starts, and the
first commit after the consistent point may start exactly there (a transaction still running
when the builder became consistent, committed by the next WAL record): it is decoded and not in
the snapshot. So the changes "at or before" the snapshot's position, in the contract's words,
are those whose commit record ends at or before the consistent point: commit LSN < lsn. A
pgoutput change's `sort_pos` is (commit LSN, the change's own LSN), each `pos_uint(..., 20)`
(models/intermediate/pgoutput/int_pgoutput__changes.sql); a snapshot row's is (lsn, 0): after
every change committed before the consistent point, before every change of a transaction
committed at it or later (see `snapshot_sort_pos`; docs/sources/pgoutput.md, "Initial
snapshots").

committed_at: the snapshot carries no time. A snapshot row is the row as it stood since before
the slot's log began, so its time is the epoch (1970-01-01T00:00:00Z): a version needs a
valid_from, and in history a version's valid_from is the minimum committed_at over it and the
versions after it, so any later time would be taken from the log and change as its files land.
The freshness view does not count it as a commit applied (models/marts/cdc_source_freshness.sql).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import loads, pos_join, pos_uint
from python_udfs.pgoutput import _key_json, parse_lsn, typed_value
from python_udfs.pgoutput.column_types import pg_column_type
from python_udfs.snapshots import (
    NO_HEADER,
    SnapshotRowLine,
    error_row,
    header_fields,
    row_values,
    snapshot_change,
)
from python_udfs.source_types import ColumnType, column_types_json

# LSN and own-LSN parts, 20 digits each, as int_pgoutput__changes.sql writes a change's.
_LSN_DIGITS = 20
_MAX_OID = 2**32 - 1

# A header's columns as (name, type_oid, is_key), in the order the row values come.
SnapshotColumns = tuple[tuple[str, int, bool], ...]
# A snapshot row's time: since before the slot's log began (see the module docstring).
SNAPSHOT_COMMITTED_AT = 0


def snapshot_sort_pos(lsn: int) -> str:
    """(lsn, 0). Every change's sort_pos is two 20-digit parts (commit LSN, own LSN): one
    committed before `lsn` differs in the first part and sorts first; one committed at `lsn`
    or later sorts after, in the first part or, at `lsn`, in the second, since a change's own
    LSN is a WAL position and never 0. Both parts are as wide as a change's, so the order is
    decided inside a part and still holds where SQL appends more parts (cdc_history's sort_key
    adds op rank and event_id after sort_pos): a shorter position would not be."""
    return pos_join(pos_uint(lsn, _LSN_DIGITS), pos_uint(0, _LSN_DIGITS))


def snapshot_header(
    line: str, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """A snapshot file's first line, `{"snapshot": {"lsn", "table", "columns": [{"name",
    "type_oid", "type_modifier", "key"}, ...]}}`, validated field by field, as the row of
    `snapshots.HEADER_COLUMNS`: the table, `header_json` for `snapshot_row`, and the columns'
    types as `cdc_source_columns` collects them (the same as a Relation message gives).
    Fields the contract does not name are ignored; a header is the same whichever slot it came
    from. Never raises: `error` names what does not fit."""
    try:
        fields = header_fields(line, loads)
    except ValueError as exc:
        return {"error": str(exc)}
    try:
        lsn = parse_lsn(fields.get("lsn"))
        if lsn == 0:
            raise ValueError("bad lsn '0/0': no WAL position")
        table = fields.get("table")
        if not isinstance(table, str) or "." not in table[1:-1]:
            raise ValueError(f"bad table {table!r}: not schema.table")
        columns, types = _header_columns(fields.get("columns"))
    except (ValueError, TypeError) as exc:
        return {"error": f"bad snapshot header: {exc}"}
    header = {"lsn": lsn, "table": table, "columns": [list(column) for column in columns]}
    return {
        "error": None,
        "source_table": table,
        "header_json": json.dumps(header, separators=(",", ":"), ensure_ascii=False),
        "column_types": column_types_json(types),
    }


def _header_columns(raw: Any) -> tuple[SnapshotColumns, dict[str, ColumnType]]:
    if not isinstance(raw, list) or not raw:
        raise ValueError("columns must be a non-empty array")
    columns = []
    types: dict[str, ColumnType] = {}
    for index, column in enumerate(raw):
        where = f"column {index + 1}"
        if not isinstance(column, dict):
            raise ValueError(f"{where} is not an object")
        name = column.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError(f"{where}: missing name")
        where = f"column {name!r}"
        if name in types:
            raise ValueError(f"{where} appears twice")
        type_oid = _integer(column.get("type_oid"), 1, _MAX_OID, f"{where}: bad type_oid")
        modifier = _integer(
            column.get("type_modifier"), -(2**31), 2**31 - 1, f"{where}: bad type_modifier"
        )
        key = column.get("key")
        if not isinstance(key, bool):
            raise ValueError(f"{where}: key must be true or false, got {key!r}")
        columns.append((name, type_oid, key))
        types[name] = pg_column_type(type_oid, modifier)
    return tuple(columns), types


def _integer(value: Any, low: int, high: int, reason: str) -> int:
    """An integer field of JSON within [low, high]; true and false are no integers."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{reason} {value!r}"[:200])
    return value


@functools.lru_cache(maxsize=256)
def _header(header_json: str) -> tuple[int, str, SnapshotColumns]:
    """(lsn, table, columns) of `snapshot_header`'s text; every row of a file passes the same
    text, so it is parsed once."""
    header = loads(header_json)
    columns = tuple((name, type_oid, key) for name, type_oid, key in header["columns"])
    return header["lsn"], header["table"], columns


def snapshot_row(
    unit: SnapshotRowLine, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """One row line, `{"values": [<text or null>, ...]}` in the header's column order, with its
    file's `header_json` (`snapshot_header`; None when that line was no valid header), as a
    change-log row with op `snapshot` (see the module docstring for its position and time).

    Each value is its type's text output, so it is typed as a TupleData text value ('t') of the
    column's type OID, NULL as 'n'. The key is the table's declared key, else the columns the
    header flags, else every column (as for changes, `pgoutput.change_rows`). Never raises."""
    line, header_json = unit
    declared_keys = settings.declared_keys
    if header_json is None:
        return error_row(NO_HEADER)
    try:
        lsn, table, columns = _header(header_json)
        values = row_values(line, loads)
        if not isinstance(values, list):
            raise ValueError("values is not an array")
        if len(values) != len(columns):
            raise ValueError(f"row has {len(values)} values, the header {len(columns)} columns")
        image: dict[str, str | None] = {
            name: _typed(name, type_oid, value)
            for (name, type_oid, _), value in zip(columns, values, strict=True)
        }
        declared = declared_keys("pgoutput", source_name, table) if declared_keys else None
        key_columns = declared or [name for name, _, key in columns if key]
        key_json = _key_json(image, key_columns or [name for name, _, _ in columns])
    except (ValueError, TypeError, KeyError) as exc:
        return error_row(str(exc) or type(exc).__name__)
    return snapshot_change(
        table=table,
        key_json=key_json,
        row_image=image,
        sort_pos=snapshot_sort_pos(lsn),
        committed_at=SNAPSHOT_COMMITTED_AT,
        position=lsn,
    )


def _typed(name: str, type_oid: int, value: Any) -> str:
    """The canonical JSON text of one column, typed as TupleData: text as 't', NULL as 'n'."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"column {name!r}: not text or null: {value!r}"[:200])
    try:
        raw = None if value is None else value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"column {name!r}: text value is not UTF-8") from None
    try:
        _, text = typed_value("n" if raw is None else "t", raw, type_oid)
    except (ValueError, RecursionError) as exc:  # a JSON value nested deeper than Python recurses
        raise ValueError(f"column {name!r}: {exc}") from None
    assert text is not None  # 't' and 'n' values are always known: typed_value says so
    return text
