"""Spanner initial snapshot files: the header in both dialects' column_types shapes, rows typed
as data change records type their values, keys, the position at the read timestamp among the
changes around it, the identity that makes a file landed twice count once, and bad input."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from python_udfs.change_log import FIELDS
from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.snapshots import NO_HEADER
from python_udfs.spanner import flatten_line
from python_udfs.spanner.snapshot import snapshot_header, snapshot_row, snapshot_sort_pos
from python_udfs.table_settings import declared_key_lookup

STREAM = "ledger_stream"
READ_AT = "2024-06-03T10:00:00.123456Z"
READ_NS = 1_717_408_800_123_456_000

# GoogleSQL: the type is a JSON column, which exports may write as text or as a bare code.
GOOGLESQL_COLUMNS = [
    {"name": "Id", "type": '{"code":"INT64"}', "is_primary_key": True, "ordinal_position": 1},
    {"name": "Price", "type": "NUMERIC", "is_primary_key": False, "ordinal_position": 2},
    {"name": "Tags", "type": {"code": "ARRAY", "array_element_type": {"code": "STRING"}}},
    {"name": "Seen", "type": {"code": "TIMESTAMP"}, "is_primary_key": False},
]
# PostgreSQL: type objects with the dialect's annotations.
POSTGRESQL_COLUMNS = [
    {"name": "id", "type": {"code": "STRING"}, "is_primary_key": True, "ordinal_position": 1},
    {"name": "balance", "type": {"code": "NUMERIC", "type_annotation": "PG_NUMERIC"}},
    {"name": "prefs", "type": {"code": "JSON", "type_annotation": "PG_JSONB"}},
    {"name": "avatar", "type": {"code": "BYTES"}, "is_primary_key": False},
]
GOOGLESQL_VALUES = {"Id": "42", "Price": "12.50", "Tags": ["a", None], "Seen": READ_AT}
POSTGRESQL_VALUES = {
    "id": "acc-1",
    "balance": "NaN",
    "prefs": '{"b": 1, "a": [2]}',
    "avatar": "AP8=",
}
DIALECTS = pytest.mark.parametrize(
    ("columns", "values"),
    [(GOOGLESQL_COLUMNS, GOOGLESQL_VALUES), (POSTGRESQL_COLUMNS, POSTGRESQL_VALUES)],
    ids=["googlesql", "postgresql"],
)


def header(columns: Any = GOOGLESQL_COLUMNS, **fields: Any) -> str:
    snapshot = {"read_timestamp": READ_AT, "table": "Products", "column_types": columns}
    snapshot.update(fields)
    return json.dumps({"snapshot": {k: v for k, v in snapshot.items() if v is not None}})


def header_json(line: str | None = None) -> str:
    result = snapshot_header(header() if line is None else line, STREAM)
    assert result["error"] is None, result
    return result["header_json"]


def row(
    values: Any, head: str | None = None, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    line = json.dumps({"values": values})
    return snapshot_row((line, header_json() if head is None else head), STREAM, settings)


def inserted(columns: list[dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """The row of a NEW_ROW insert of the same values at the read timestamp."""
    key_names = [c["name"] for c in columns if c.get("is_primary_key")]
    record = {
        "commit_timestamp": READ_AT,
        "record_sequence": "00000000",
        "server_transaction_id": "tx-1",
        "table_name": "Products",
        "column_types": columns,
        "mods": [
            {
                "keys": {k: values[k] for k in key_names},
                "new_values": {k: v for k, v in values.items() if k not in key_names},
            }
        ],
        "mod_type": "INSERT",
        "value_capture_type": "NEW_ROW",
        "number_of_records_in_transaction": 1,
    }
    (change,) = flatten_line(
        json.dumps({"partition_token": "t", "data_change_record": record}), STREAM
    )
    assert change["error"] is None, change
    return change


@DIALECTS
def test_a_row_is_a_snapshot_change_typed_as_data_change_records_type_values(columns, values):
    head = snapshot_header(header(columns), STREAM)
    assert head["error"] is None
    result = row(values, head["header_json"])
    change = inserted(columns, values)
    assert set(result) == set(FIELDS)
    assert head["column_types"] == change["column_types"]
    assert head["column_names"] == change["column_names"]
    assert result["row_image"] == change["row_image"]
    assert result["key_json"] == change["key_json"]
    assert result["source_table"] == "Products"
    assert (result["op"], result["is_backfill"]) == ("snapshot", False)
    assert result["order_ts"] is None
    assert result["committed_at"] == READ_NS // 1000
    assert result["txn_id"] == f"snapshot:{READ_NS}"
    assert result["event_id"] == f'["snapshot",{READ_NS},"Products",{result["key_json"]}]'
    assert result["sort_pos"] == snapshot_sort_pos(READ_NS)


def test_the_googlesql_values_in_canonical_form():
    assert row(GOOGLESQL_VALUES)["row_image"] == {
        "Id": "42",
        "Price": "12.5",
        "Tags": '["a",null]',
        "Seen": '"2024-06-03T10:00:00.123456Z"',
    }


def test_nulls_are_null_values():
    result = row({"Id": "1", "Price": None, "Tags": None, "Seen": None})
    assert result["row_image"] == {"Id": "1", "Price": "null", "Tags": "null", "Seen": "null"}


def test_a_declared_key_beats_is_primary_key():
    keys = declared_key_lookup(
        [{"source_system": "spanner", "source_table": "Products", "primary_key": ["Price"]}]
    )
    assert (
        row(GOOGLESQL_VALUES, settings=DecodeSettings(declared_keys=keys))["key_json"]
        == '{"Price":12.5}'
    )


def test_the_same_row_from_a_file_landed_twice_has_one_identity():
    line = json.dumps({"values": GOOGLESQL_VALUES})
    again = json.dumps({"values": dict(reversed(GOOGLESQL_VALUES.items()))}, indent=2)
    assert snapshot_row((line, header_json()), STREAM) == snapshot_row(
        (again, header_json()), STREAM
    )
    # The read timestamp in another spelling is the same instant.
    other_spelling = header_json(header(read_timestamp="2024-06-03T12:00:00.123456000+02:00"))
    assert row(GOOGLESQL_VALUES, other_spelling) == row(GOOGLESQL_VALUES)


def test_other_keys_tables_and_read_timestamps_have_other_identities():
    ids = {
        row(GOOGLESQL_VALUES)["event_id"],
        row({**GOOGLESQL_VALUES, "Id": "43"})["event_id"],
        row(GOOGLESQL_VALUES, header_json(header(table="Orders")))["event_id"],
        row(GOOGLESQL_VALUES, header_json(header(read_timestamp="2024-06-03T10:00:01Z")))[
            "event_id"
        ],
    }
    assert len(ids) == 4


# --- where a snapshot row sorts ----------------------------------------------------------------


def rfc3339(ns: int) -> str:
    seconds, fraction = divmod(ns, 10**9)
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{fraction:09d}Z"


def change_at(commit_ns: int, transaction: str, sequence: str, mods: int) -> list[dict[str, Any]]:
    record = {
        "commit_timestamp": rfc3339(commit_ns),
        "record_sequence": sequence,
        "server_transaction_id": transaction,
        "table_name": "Products",
        "column_types": GOOGLESQL_COLUMNS,
        "mods": [{"keys": {"Id": str(index)}} for index in range(mods)],
        "mod_type": "DELETE",
        "value_capture_type": "OLD_AND_NEW_VALUES",
        "number_of_records_in_transaction": 1,
    }
    rows = flatten_line(json.dumps({"partition_token": None, "data_change_record": record}), "s")
    assert all(r["error"] is None for r in rows), rows
    return rows


def sort_key(change: dict[str, Any]) -> str:
    """cdc_history's sort_key after its time and class parts: sort_pos, op rank, event_id."""
    rank = "0" if change["op"] == "delete" else "1"
    return ".".join((change["sort_pos"], rank, change["event_id"]))


# Instants of 2000..2100 in nanoseconds, close to each other often enough to meet at a boundary.
INSTANTS = st.integers(min_value=946_684_800 * 10**9, max_value=4_102_444_800 * 10**9)


@given(
    INSTANTS,
    st.one_of(INSTANTS, st.integers(min_value=-2, max_value=2)),
    st.text(min_size=1, max_size=8),
    st.one_of(st.integers(min_value=0, max_value=10**25).map(str), st.text(min_size=1)),
    st.integers(min_value=0, max_value=3),
)
def test_a_snapshot_sorts_after_changes_at_or_before_its_read_timestamp_and_before_later_ones(
    read_ns, commit, transaction, sequence, mods
):
    """Property: a strong read at T holds every commit at or before T, none after. It holds
    for sort_pos, whatever the transaction id, record sequence and mod, and for the sort_key
    cdc_history appends parts to."""
    commit_ns = commit if commit > 10**9 else read_ns + commit  # often right at T
    head = header_json(header(read_timestamp=rfc3339(read_ns)))
    snapshot = row(GOOGLESQL_VALUES, head)
    for change in change_at(commit_ns, transaction, sequence, mods):
        after = commit_ns > read_ns
        assert (snapshot["sort_pos"] < change["sort_pos"]) is after
        assert (sort_key(snapshot) < sort_key(change)) is after


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{", "malformed line JSON"),
        (json.dumps({"values": GOOGLESQL_VALUES}), "no snapshot header: the file's first line"),
        ('{"snapshot": "Products"}', "snapshot header is not an object"),
        (header(read_timestamp=None), "bad snapshot header: missing field: read_timestamp"),
        (header(read_timestamp="yesterday"), "bad snapshot header: bad read_timestamp"),
        (header(read_timestamp=1717408800), "bad snapshot header: bad read_timestamp: 1717408800"),
        (header(table=None), "bad snapshot header: missing field: table"),
        (header(table=7), "bad snapshot header: bad table: 7"),
        (header(columns=None), "bad snapshot header: missing field: column_types"),
        (header(columns={"Id": "INT64"}), "bad snapshot header: column_types is not an array"),
        (header(columns=[]), "bad snapshot header: column_types is empty"),
        (header(columns=[{"type": "INT64"}]), "column_types entry without a name"),
        (
            header(columns=[*GOOGLESQL_COLUMNS, GOOGLESQL_COLUMNS[1]]),
            "column 'Price' appears twice in column_types",
        ),
        (
            header(columns=[*GOOGLESQL_COLUMNS, {"name": "X", "type": "{broken"}]),
            "column 'X' has no readable type",
        ),
        (
            header(columns=[*GOOGLESQL_COLUMNS, {"name": "X"}]),
            "column 'X' has no readable type",
        ),
        (
            header(columns=[{**GOOGLESQL_COLUMNS[0], "is_primary_key": "true"}]),
            "column 'Id': is_primary_key must be true or false, got 'true'",
        ),
    ],
)
def test_a_header_that_does_not_fit_is_an_error(line, reason):
    result = snapshot_header(line, STREAM)
    assert reason in result["error"]
    assert result.get("header_json") is None


def test_fields_the_contract_does_not_name_are_ignored():
    assert snapshot_header(header(partition_token="x"), STREAM)["error"] is None


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        (["42", "12.50"], "values is not an object"),
        ({k: v for k, v in GOOGLESQL_VALUES.items() if k != "Seen"}, "column 'Seen' missing"),
        ({**GOOGLESQL_VALUES, "Extra": 1}, "column 'Extra' is not in the header's column_types"),
        ({**GOOGLESQL_VALUES, "Id": "forty-two"}, "column 'Id': INT64 expects an integer"),
        ({**GOOGLESQL_VALUES, "Id": 2**63}, "column 'Id': INT64 out of range"),
        ({**GOOGLESQL_VALUES, "Price": "12,50"}, "column 'Price': NUMERIC expects a decimal"),
        ({**GOOGLESQL_VALUES, "Tags": "a"}, "column 'Tags': ARRAY expects an array"),
        ({**GOOGLESQL_VALUES, "Seen": "noon"}, "column 'Seen': not an ISO-8601 instant"),
    ],
)
def test_a_row_that_does_not_fit_its_header_is_an_error(values, reason):
    result = row(values)
    assert reason in result["error"]
    assert result["op"] is None and result["key_json"] is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("[]", "malformed line JSON: not an object"),
        ("{}", "missing field: values"),
        (header(), "a snapshot header after the file's first line"),
    ],
)
def test_a_line_that_is_no_row_is_an_error(line, reason):
    assert reason in snapshot_row((line, header_json()), STREAM)["error"]


@pytest.mark.parametrize(
    "nested", [json.dumps("[" * 5000 + "]" * 5000), "[" * 950 + "]" * 950], ids=["text", "json"]
)
def test_a_json_value_nested_deeper_than_python_recurses_is_an_error(nested):
    """As JSON text, or as JSON in the line: then the line's parser or the typing gives up,
    whichever recurses deeper first."""
    line = '{"values": {"id": "a", "prefs": ' + nested + "}}"
    head = header_json(header([*POSTGRESQL_COLUMNS[:1], POSTGRESQL_COLUMNS[2]]))
    assert "maximum recursion depth" in snapshot_row((line, head), STREAM)["error"]


def test_a_row_before_any_header_is_an_error_of_its_own():
    assert snapshot_row((json.dumps({"values": GOOGLESQL_VALUES}), None), STREAM)["error"] == (
        NO_HEADER
    )


def test_a_table_without_primary_key_needs_a_declared_one():
    columns = [{**column, "is_primary_key": False} for column in GOOGLESQL_COLUMNS]
    head = header_json(header(columns))
    assert row(GOOGLESQL_VALUES, head)["error"] == (
        "no primary key: no column is_primary_key and no key declared"
    )
    keys = declared_key_lookup(
        [{"source_system": "spanner", "source_table": "Products", "primary_key": ["Id"]}]
    )
    assert (
        row(GOOGLESQL_VALUES, head, settings=DecodeSettings(declared_keys=keys))["key_json"]
        == '{"Id":42}'
    )


def test_a_declared_key_column_the_header_lacks_is_an_error():
    keys = declared_key_lookup(
        [{"source_system": "spanner", "source_table": "Products", "primary_key": ["Nope"]}]
    )
    assert row(GOOGLESQL_VALUES, settings=DecodeSettings(declared_keys=keys))["error"] == (
        "declared key column 'Nope' is not in the header"
    )


def test_a_failing_key_lookup_is_reported_with_the_row():
    def broken(*_: str) -> list[str]:
        raise KeyError("settings")

    assert (
        "declared_keys failed: KeyError"
        in row(GOOGLESQL_VALUES, settings=DecodeSettings(declared_keys=broken))["error"]
    )


@pytest.mark.parametrize("head", ["", "{", "[]", '{"read_ns": 1}', '{"read_ns":1,"columns":[1]}'])
def test_a_damaged_header_record_is_an_error_not_a_raise(head):
    assert row(GOOGLESQL_VALUES, head)["error"]
