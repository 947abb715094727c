"""What the initial snapshot files of the raw log families (pgoutput, Spanner) share: the file's
shape, a header line then row lines (CONTRACT §1 "Initial snapshots"), and the change-log row a
snapshot row becomes. The families type the values and place the row in their own order
(`python_udfs/pgoutput/snapshot.py`, `python_udfs/spanner/snapshot.py`).

A snapshot row is one key's whole row as it stood at its snapshot's position, so it becomes one
change-log row with op `snapshot` and a full image; it is not a backfill read (placed by source
time) but sits in the family's own source order, by its `sort_pos`.

A family decodes them in two stages of its decoding (python_udfs/decoding.py's `Decoder`,
declared in python_udfs/families.py): the header stage's unit is a file's first line; the row
stage's is a further line with its file's header as the header stage returned it
(`SnapshotRowLine`), which SQL keeps one row per file, since a file's rows may land in later
runs than its header. Each stage never raises: what does not fit comes back as the `error` of
its row, named in the words below, for the quarantine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from python_udfs.change_log import FIELDS
from python_udfs.json_values import canonical_json, line_object

# The header's columns as `snapshot_header` functions return them: SQL stores one such row per
# file and hands `header_json` back with each row line of that file.
HEADER_COLUMNS: tuple[tuple[str, str], ...] = (
    ("error", "string"),
    ("source_table", "string"),
    ("header_json", "string"),  # the validated header, compact; opaque to SQL
    ("column_types", "string"),  # python_udfs/source_types.py: column -> [source, Spark type]
)

# The row stage's unit: a row line and its file's `header_json` (None where the file's first line
# was no valid header).
SnapshotRowLine = tuple[str, str | None]

# The row decoders' answer to a row of a file whose first line is no valid header: each row is
# quarantined on its own, so none is dropped silently.
NO_HEADER = "no valid snapshot header: the file's first line must be one"


def header_fields(line: Any, load: Callable[[str | bytes], Any]) -> dict[str, Any]:
    """The `snapshot` object of a header line; ValueError naming what is not a header."""
    document = line_object(line, load)
    if "snapshot" not in document:
        if "values" in document:
            raise ValueError("no snapshot header: the file's first line is a row")
        raise ValueError("no snapshot header: missing field: snapshot")
    fields = document["snapshot"]
    if not isinstance(fields, dict):
        raise ValueError("snapshot header is not an object")
    return fields


def row_values(line: Any, load: Callable[[str | bytes], Any]) -> Any:
    """The `values` of a row line, as the line holds them; ValueError for anything else, a
    second header included (only a file's first line is its header)."""
    document = line_object(line, load)
    if "snapshot" in document:
        raise ValueError("a snapshot header after the file's first line")
    if "values" not in document:
        raise ValueError("missing field: values")
    return document["values"]


def snapshot_event_id(position: int, table: str, key_json: str) -> str:
    """The JSON array ["snapshot", position, table, key]: a snapshot holds each key of its table
    once, so (position, table, key) names the row whatever file brought it (a file landed twice
    under another name, or a table's rows split over files, count once). The family's changes
    have other shapes of id, so no change can share it. Built as text so that a position beyond
    2**53 stays a number (canonical_json would make it a string)."""
    return f'["snapshot",{position},{canonical_json(table)},{key_json}]'


def snapshot_change(
    *,
    table: str,
    key_json: str,
    row_image: Mapping[str, str | None],
    sort_pos: str,
    committed_at: int | None,
    position: int,
) -> dict[str, Any]:
    """The change-log row (docs/decisions/001) of one snapshot row. Its own transaction
    (`snapshot:<position>`) keeps it one version, apart from the changes around it; every column
    is known, so it completes the partial images that follow it."""
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(
        source_table=table,
        key_json=key_json,
        op="snapshot",
        row_image=dict(row_image),
        is_backfill=False,
        sort_pos=sort_pos,
        committed_at=committed_at,
        txn_id=f"snapshot:{position}",
        event_id=snapshot_event_id(position, table, key_json),
    )
    return row


def error_row(reason: str) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row["error"] = reason
    return row
