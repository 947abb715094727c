"""pgoutput initial snapshot files: the header, rows typed as TupleData text values are, keys,
the position between the changes committed before and after the slot's consistent point, the
identity that makes a file landed twice count once, and every kind of bad input."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdc_warehouse.bench import pgoutput_encoder as enc
from cdc_warehouse.bench.pgoutput_encoder import format_lsn, slot_line
from python_udfs.change_log import FIELDS
from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import pos_join, pos_uint
from python_udfs.pgoutput import change_rows, message_row
from python_udfs.pgoutput.snapshot import snapshot_header, snapshot_row, snapshot_sort_pos
from python_udfs.snapshots import NO_HEADER
from python_udfs.table_settings import declared_key_lookup

SLOT = "app_slot"
LSN = 0x1_6B37_4D48  # 1/6B374D48
# (name, type oid, type modifier, key): int4 key, varchar(64), text[], numeric(10,2), bytea.
COLUMNS = [
    ("id", 23, -1, True),
    ("name", 1043, 68, False),
    ("tags", 1009, -1, False),
    ("price", 1700, (10 << 16 | 2) + 4, False),
    ("blob", 17, -1, False),
]


def header(lsn: str = format_lsn(LSN), columns: list[Any] | None = None, **fields: Any) -> str:
    described = [
        {"name": name, "type_oid": oid, "type_modifier": modifier, "key": key}
        for name, oid, modifier, key in (COLUMNS if columns is None else columns)
    ]
    snapshot = {"lsn": lsn, "table": "public.users", "columns": described, **fields}
    return json.dumps({"snapshot": snapshot})


def header_json(line: str | None = None) -> str:
    result = snapshot_header(header() if line is None else line, SLOT)
    assert result["error"] is None, result
    return result["header_json"]


def row(
    values: list[Any], head: str | None = None, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    line = json.dumps({"values": values})
    return snapshot_row((line, header_json() if head is None else head), SLOT, settings)


VALUES = ["7", "Ann", '{a,"b c",NULL}', "12.50", "\\x00ff"]


def test_header_names_the_table_and_its_column_types_as_a_relation_message_does():
    result = snapshot_header(header(), SLOT)
    columns = [(int(key), name, oid, modifier) for name, oid, modifier, key in COLUMNS]
    relation = message_row(
        (slot_line(LSN, 1, enc.relation(16_385, "public", "users", columns)), False), SLOT
    )
    assert result["error"] is None
    assert result["source_table"] == "public.users"
    assert result["column_types"] == relation["column_types"]
    assert json.loads(result["header_json"]) == {
        "lsn": LSN,
        "table": "public.users",
        "columns": [[name, oid, key] for name, oid, _, key in COLUMNS],
    }


def test_a_row_is_a_snapshot_change_of_every_column():
    result = row(VALUES)
    assert set(result) == set(FIELDS)
    assert result == {
        "error": None,
        "source_table": "public.users",
        "key_json": '{"id":7}',
        "op": "snapshot",
        "row_image": {
            "id": "7",
            "name": '"Ann"',
            "tags": '["a","b c",null]',
            "price": "12.5",
            "blob": '"AP8="',
        },
        "is_backfill": False,
        "order_ts": None,
        "sort_pos": snapshot_sort_pos(LSN),
        "committed_at": 0,
        "txn_id": f"snapshot:{LSN}",
        "event_id": f'["snapshot",{LSN},"public.users",{{"id":7}}]',
    }


def test_null_is_null_not_unknown():
    result = row(["7", None, None, None, None])
    assert result["row_image"] == {
        "id": "7",
        **dict.fromkeys(("name", "tags", "price", "blob"), "null"),
    }


def inserted_image(values: list[str | None]) -> dict[str, Any]:
    """The row image change_rows gives an Insert of the same text values."""
    relation = {
        "namespace": "public",
        "name": "users",
        "columns": [
            {"name": name, "is_key": key, "type_oid": oid} for name, oid, _, key in COLUMNS
        ],
    }
    tuple_json = json.dumps([["n", None] if v is None else ["t", v] for v in values])
    (change,) = change_rows((json.dumps(relation), "insert", None, None, tuple_json), SLOT)
    return change


def test_values_are_typed_exactly_as_tuple_data_text_values():
    assert row(VALUES)["row_image"] == inserted_image(VALUES)["row_image"]
    assert row(VALUES)["key_json"] == inserted_image(VALUES)["key_json"]


# Types whose text output has rules, and texts that fit them or not.
TYPED_OIDS = [16, 20, 701, 1082, 1184]  # boolean, int8, float8, date, timestamptz


@given(
    st.sampled_from(TYPED_OIDS),
    st.one_of(
        st.sampled_from(["t", "f", "NaN", "-Infinity", "2024-05-01", "infinity"]),
        st.sampled_from(["2024-05-01 10:00:00.5+02", "1999-12-31 23:59:59-08:30:15"]),
        st.integers(min_value=-(2**70), max_value=2**70).map(str),
        st.floats(allow_nan=False).map(repr),
        st.text(max_size=12),
    ),
)
def test_any_text_types_as_tuple_data_or_fails_as_it(oid, text):
    """Property: for any text, the snapshot row holds what an Insert would, or both fail."""
    columns = [("id", 23, -1, True), ("v", oid, -1, False)]
    head = header_json(header(columns=columns))
    snapshot = snapshot_row((json.dumps({"values": ["1", text]}), head), SLOT)
    relation = {
        "namespace": "public",
        "name": "users",
        "columns": [
            {"name": "id", "is_key": True, "type_oid": 23},
            {"name": "v", "is_key": False, "type_oid": oid},
        ],
    }
    (change,) = change_rows(
        (json.dumps(relation), "insert", None, None, json.dumps([["t", "1"], ["t", text]])), SLOT
    )
    if change["error"] is None:
        assert snapshot["error"] is None
        assert snapshot["row_image"] == change["row_image"]
    else:
        assert snapshot["error"] == change["error"]


def test_the_key_comes_from_the_header_flags():
    columns = [("a", 23, -1, True), ("b", 25, -1, True), ("c", 25, -1, False)]
    result = row(["1", "x", "y"], header_json(header(columns=columns)))
    assert result["key_json"] == '{"a":1,"b":"x"}'


def test_a_declared_key_beats_the_flags_of_replica_identity_full():
    columns = [("a", 23, -1, True), ("b", 25, -1, True)]
    keys = declared_key_lookup(
        [{"source_system": "pgoutput", "source_table": "public.users", "primary_key": ["a"]}]
    )
    result = row(
        ["1", "x"], header_json(header(columns=columns)), DecodeSettings(declared_keys=keys)
    )
    assert result["key_json"] == '{"a":1}'
    assert result["event_id"] == f'["snapshot",{LSN},"public.users",{{"a":1}}]'


def test_without_key_flags_every_column_is_the_key():
    columns = [("a", 23, -1, False), ("b", 25, -1, False)]
    assert row(["1", "x"], header_json(header(columns=columns)))["key_json"] == '{"a":1,"b":"x"}'


def test_a_declared_key_column_the_header_lacks_is_an_error():
    keys = declared_key_lookup(
        [{"source_system": "pgoutput", "source_table": "public.users", "primary_key": ["nope"]}]
    )
    assert (
        row(VALUES, settings=DecodeSettings(declared_keys=keys))["error"]
        == "key column 'nope' has no value"
    )


def test_the_same_row_from_a_file_landed_twice_has_one_identity():
    first = snapshot_row((json.dumps({"values": VALUES}), header_json()), SLOT)
    # Another name, other whitespace and key order in the JSON: the same row.
    again = snapshot_row(
        ('{ "values" : ' + json.dumps(VALUES, indent=1) + "}", header_json()), SLOT
    )
    assert again == first


def test_other_keys_and_other_snapshots_have_other_identities():
    ids = {
        row(VALUES)["event_id"],
        row(["8", *VALUES[1:]])["event_id"],
        row(VALUES, header_json(header(lsn=format_lsn(LSN + 1))))["event_id"],
        row(VALUES, header_json(header(table="public.other")))["event_id"],
    }
    assert len(ids) == 4


# --- where a snapshot row sorts ----------------------------------------------------------------


def change_sort_pos(commit_lsn: int, lsn: int) -> str:
    """A change's sort_pos as int_pgoutput__changes.sql writes it (position_uint, 20 digits)."""
    return pos_join(pos_uint(commit_lsn, 20), pos_uint(lsn, 20))


def sort_key(sort_pos: str, op: str, event_id: str) -> str:
    """cdc_history's sort_key after its time and class parts: sort_pos, op rank, event_id."""
    return ".".join((sort_pos, "0" if op == "delete" else "1", event_id))


LSNS = st.integers(min_value=1, max_value=2**64 - 1)


@given(LSNS, LSNS, LSNS, st.sampled_from(["insert", "update", "delete"]))
def test_a_snapshot_sorts_between_changes_committed_before_and_at_or_after_its_lsn(
    snapshot_lsn, commit_lsn, own_lsn, op
):
    """Property: the consistent point splits the log: a transaction committed before it is in
    the snapshot, one committed at it or later is not (see python_udfs/pgoutput/snapshot.py).
    It holds for sort_pos and for the sort_key cdc_history appends parts to."""
    snapshot = snapshot_sort_pos(snapshot_lsn)
    change = change_sort_pos(commit_lsn, own_lsn)
    change_id = f"{commit_lsn}:{own_lsn}:{op}"
    snapshot_id = f'["snapshot",{snapshot_lsn},"public.users",{{"id":7}}]'
    assert (snapshot < change) == (commit_lsn >= snapshot_lsn)
    assert (sort_key(snapshot, "snapshot", snapshot_id) < sort_key(change, op, change_id)) == (
        commit_lsn >= snapshot_lsn
    )


@pytest.mark.parametrize(
    ("commit_lsn", "own_lsn", "snapshot_first"),
    [(LSN - 1, LSN - 2, False), (LSN - 1, 2**64 - 1, False), (LSN, 1, True), (LSN + 1, LSN, True)],
)
def test_the_consistent_point_itself(commit_lsn, own_lsn, snapshot_first):
    assert (snapshot_sort_pos(LSN) < change_sort_pos(commit_lsn, own_lsn)) is snapshot_first


# --- bad input ---------------------------------------------------------------------------------


def snapshot(**fields: Any) -> str:
    base = json.loads(header())["snapshot"]
    base.update(fields)
    return json.dumps({"snapshot": {k: v for k, v in base.items() if v is not None}})


def described(**changes: Any) -> list[dict[str, Any]]:
    columns = json.loads(header())["snapshot"]["columns"]
    columns[0].update(changes)
    return columns


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"snapshot": ', "malformed line JSON"),
        ("[1]", "malformed line JSON: not an object"),
        (json.dumps({"values": VALUES}), "no snapshot header: the file's first line is a row"),
        ("{}", "no snapshot header: missing field: snapshot"),
        ('{"snapshot": []}', "snapshot header is not an object"),
        (snapshot(lsn=None), "bad snapshot header: bad lsn None"),
        (snapshot(lsn="16B3748"), "bad snapshot header: bad lsn '16B3748'"),
        (snapshot(lsn="1/123456789"), "bad snapshot header: bad lsn"),
        (snapshot(lsn="0/0"), "bad snapshot header: bad lsn '0/0'"),
        (snapshot(table=None), "bad snapshot header: bad table None"),
        (snapshot(table="users"), "bad snapshot header: bad table 'users': not schema.table"),
        (snapshot(table=".users"), "not schema.table"),
        (snapshot(table=["public", "users"]), "not schema.table"),
        (snapshot(columns=None), "bad snapshot header: columns must be a non-empty array"),
        (snapshot(columns=[]), "columns must be a non-empty array"),
        (snapshot(columns={"id": 23}), "columns must be a non-empty array"),
        (snapshot(columns=["id"]), "column 1 is not an object"),
        (snapshot(columns=described(name="")), "column 1: missing name"),
        (snapshot(columns=described(name=None)), "column 1: missing name"),
        (snapshot(columns=described(name="name")), "column 'name' appears twice"),
        (snapshot(columns=described(type_oid="23")), "column 'id': bad type_oid '23'"),
        (snapshot(columns=described(type_oid=0)), "column 'id': bad type_oid 0"),
        (snapshot(columns=described(type_oid=2**32)), "bad type_oid 4294967296"),
        (snapshot(columns=described(type_oid=True)), "bad type_oid True"),
        (snapshot(columns=described(type_modifier=None)), "column 'id': bad type_modifier None"),
        (snapshot(columns=described(type_modifier=2**31)), "bad type_modifier 2147483648"),
        (snapshot(columns=described(key="yes")), "column 'id': key must be true or false"),
        (snapshot(columns=described(key=None)), "key must be true or false, got None"),
    ],
)
def test_a_header_that_does_not_fit_is_an_error(line, reason):
    result = snapshot_header(line, SLOT)
    assert reason in result["error"]
    assert result.get("header_json") is None


def test_fields_the_contract_does_not_name_are_ignored():
    assert snapshot_header(header(taken_by="cdcw snapshot"), SLOT)["error"] is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ('{"values": ["7"', "malformed line JSON"),
        ("null", "malformed line JSON: not an object"),
        ("{}", "missing field: values"),
        (header(), "a snapshot header after the file's first line"),
        (json.dumps({"values": {"id": "7"}}), "values is not an array"),
        (json.dumps({"values": VALUES[:4]}), "row has 4 values, the header 5 columns"),
        (json.dumps({"values": [*VALUES, "x"]}), "row has 6 values, the header 5 columns"),
        (json.dumps({"values": []}), "row has 0 values, the header 5 columns"),
        (json.dumps({"values": ["seven", *VALUES[1:]]}), "column 'id': not a valid int4"),
        (json.dumps({"values": ["2147483648", *VALUES[1:]]}), "column 'id': not a valid int4"),
        (json.dumps({"values": [7, *VALUES[1:]]}), "column 'id': not text or null: 7"),
        (
            json.dumps({"values": [*VALUES[:2], "{a", *VALUES[3:]]}),
            "column 'tags': not a valid array",
        ),
        (
            json.dumps({"values": [*VALUES[:3], "1e5", VALUES[4]]}),
            "column 'price': not a valid numeric",
        ),
        (json.dumps({"values": [*VALUES[:4], "00ff"]}), "column 'blob': not a valid bytea"),
        ('{"values": ["\\ud800", null, null, null, null]}', "column 'id': text value is not UTF-8"),
        ('{"values": ' + "[" * 100_000 + "]" * 100_000 + "}", "malformed line JSON"),
    ],
)
def test_a_row_that_does_not_fit_its_header_is_an_error(line, reason):
    result = snapshot_row((line, header_json()), SLOT)
    assert reason in result["error"]
    assert result["op"] is None and result["key_json"] is None


def test_a_null_key_column_is_null_in_the_key_as_for_changes():
    assert row([None, *VALUES[1:]])["key_json"] == '{"id":null}'


def test_a_json_value_nested_deeper_than_python_recurses_is_an_error():
    columns = [("id", 23, -1, True), ("doc", 3802, -1, False)]
    nested = "[" * 5000 + "]" * 5000
    result = row(["1", nested], header_json(header(columns=columns)))
    assert result["error"].startswith("column 'doc': maximum recursion depth")


def test_a_row_before_any_header_is_an_error_of_its_own():
    assert snapshot_row((json.dumps({"values": VALUES}), None), SLOT)["error"] == NO_HEADER


@pytest.mark.parametrize(
    "head", ["", "{", "[]", '{"lsn": 1}', '{"lsn":1,"table":"a.b","columns":[1]}']
)
def test_a_damaged_header_record_is_an_error_not_a_raise(head):
    assert snapshot_row((json.dumps({"values": VALUES}), head), SLOT)["error"]
