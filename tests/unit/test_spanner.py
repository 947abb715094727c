"""Spanner change stream rows to change-log rows: both dialects, the documented examples, value
typing, order, identity, keys and errors."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from python_udfs.change_log import CHANGE_COLUMNS
from python_udfs.decoding import DecodeSettings
from python_udfs.spanner import COLUMNS, EXTRA_COLUMNS, FIELDS, flatten_line

STREAM = "banking_stream"

# Google's documented records (record format page), with their comments and trailing commas
# removed so that they are valid JSON.
ACCOUNT_COLUMNS = [
    {
        "name": "AccountId",
        "type": {"code": "STRING"},
        "is_primary_key": True,
        "ordinal_position": 1,
    },
    {
        "name": "LastUpdate",
        "type": {"code": "TIMESTAMP"},
        "is_primary_key": False,
        "ordinal_position": 2,
    },
    {"name": "Balance", "type": {"code": "INT"}, "is_primary_key": False, "ordinal_position": 3},
]

# The transfer between two accounts: one transaction, one record in each of two partitions.
TRANSFER_1 = {
    "commit_timestamp": "2022-09-27T12:30:00.123456Z",
    "record_sequence": "00000000",
    "server_transaction_id": "6329047911",
    "is_last_record_in_transaction_in_partition": True,
    "table_name": "AccountBalance",
    "column_types": ACCOUNT_COLUMNS,
    "mods": [
        {
            "keys": {"AccountId": "Id1"},
            "new_values": {"LastUpdate": "2022-09-27T12:30:00.123456Z", "Balance": 1000},
            "old_values": {"LastUpdate": "2022-09-26T11:28:00.189413Z", "Balance": 1500},
        }
    ],
    "mod_type": "UPDATE",
    "value_capture_type": "OLD_AND_NEW_VALUES",
    "number_of_records_in_transaction": 2,
    "number_of_partitions_in_transaction": 2,
    "transaction_tag": "app=banking,env=prod,action=update",
    "is_system_transaction": False,
}
TRANSFER_2 = {
    **TRANSFER_1,
    "record_sequence": "00000001",
    "mods": [
        {
            "keys": {"AccountId": "Id2"},
            "new_values": {"LastUpdate": "2022-09-27T12:30:00.123456Z", "Balance": 2000},
            "old_values": {"LastUpdate": "2022-01-20T11:25:00.199915Z", "Balance": 1500},
        }
    ],
}
NEW_VALUES = {
    **TRANSFER_1,
    "record_sequence": "00000000",
    "column_types": ACCOUNT_COLUMNS[:2],
    "mods": [
        {
            "keys": {"AccountId": "Id1"},
            "new_values": {"LastUpdate": "2022-09-27T12:30:00.123456Z"},
            "old_values": {},
        }
    ],
    "value_capture_type": "NEW_VALUES",
    "number_of_records_in_transaction": 1,
    "number_of_partitions_in_transaction": 1,
}
NEW_ROW = {
    **NEW_VALUES,
    "column_types": ACCOUNT_COLUMNS,
    "mods": [
        {
            "keys": {"AccountId": "Id1"},
            "new_values": {"LastUpdate": "2022-09-27T12:30:00.123456Z", "Balance": 1000},
            "old_values": {},
        }
    ],
    "value_capture_type": "NEW_ROW",
}
NEW_ROW_AND_OLD_VALUES = {
    **NEW_ROW,
    "mods": [
        {
            "keys": {"AccountId": "Id1"},
            "new_values": {"LastUpdate": "2022-09-27T12:30:00.123456Z", "Balance": 1000},
            "old_values": {"LastUpdate": "2022-09-26T11:28:00.189413Z"},
        }
    ],
    "value_capture_type": "NEW_ROW_AND_OLD_VALUES",
}
HEARTBEAT = {"timestamp": "2022-09-27T12:35:00.312486Z"}
# The initial query's two child partitions records, then the merge of two partitions.
INITIAL_CHILDREN = {
    "record_type": "child_partitions",
    "start_timestamp": "2022-05-01T09:00:01Z",
    "record_sequence": "1000012389",
    "child_partitions": [
        {"token": "child_token_1", "parent_partition_tokens": [None]},
        {"token": "child_token_2", "parent_partition_tokens": [None]},
    ],
}
MERGE = {
    "record_type": "child_partitions",
    "start_timestamp": "2022-05-01T09:30:15Z",
    "record_sequence": "1000012389",
    "child_partitions": [
        {"token": "child_token_4", "parent_partition_tokens": ["child_token_2", "child_token_3"]}
    ],
}

KINDS = ("data_change_record", "heartbeat_record", "child_partitions_record")


def postgresql_line(kind: str, record: Any, token: str | None = "token_a") -> str:
    """PostgreSQL dialect: the record under its kind's key."""
    return json.dumps({"partition_token": token, kind: record})


def googlesql_line(kind: str, record: Any, token: str | None = "token_a") -> str:
    """GoogleSQL dialect: ChangeRecord, an array of one struct of three arrays."""
    struct = {name: [record] if name == kind else [] for name in KINDS}
    return json.dumps({"partition_token": token, "ChangeRecord": [struct]})


DIALECTS = pytest.mark.parametrize("line_of", [postgresql_line, googlesql_line])


def flatten(line: str, declared=None) -> list[dict[str, Any]]:
    rows = flatten_line(line, STREAM, DecodeSettings(declared_keys=declared))
    assert rows
    for row in rows:
        assert tuple(row) == FIELDS
    return rows


def change(record: dict[str, Any], line_of=postgresql_line, **kwargs: Any) -> dict[str, Any]:
    """The only row of a one-mod data change record, which must be good."""
    (row,) = flatten(line_of("data_change_record", record), **kwargs)
    assert row["error"] is None, row["error"]
    return row


def line_error(line: str, token: str | None = None) -> str:
    """A line-level error: one row, nothing but the reason and the partition token."""
    (row,) = flatten(line)
    assert row["error"]
    assert row["partition_token"] == token
    assert all(row[f] is None for f in FIELDS if f not in ("error", "partition_token"))
    return row["error"]


def mod_error(record: dict[str, Any], line_of=postgresql_line, **kwargs: Any) -> str:
    """A mod-level error: the mod's row still names its record."""
    (row,) = flatten(line_of("data_change_record", record), **kwargs)
    assert row["error"]
    assert row["record_kind"] == "data_change"
    assert row["partition_token"] == "token_a"
    assert row["record_ts"] == row["committed_at"] is not None
    assert row["record_sequence"] == record["record_sequence"]
    assert row["server_transaction_id"] == row["txn_id"] == record["server_transaction_id"]
    assert row["records_in_transaction"] == int(record["number_of_records_in_transaction"])
    assert row["mod_index"] == 0
    assert row["event_id"] is not None
    assert row["op"] is row["key_json"] is row["row_image"] is None
    return row["error"]


def with_mods(record: dict[str, Any], *mods: dict[str, Any], **fields: Any) -> dict[str, Any]:
    result = copy.deepcopy(record)
    result.update(fields)
    if mods:
        result["mods"] = list(mods)
    return result


# --- shape -----------------------------------------------------------------------------------


def test_columns_are_the_change_log_then_the_spanner_columns():
    assert COLUMNS == CHANGE_COLUMNS + EXTRA_COLUMNS
    assert tuple(name for name, _ in COLUMNS) == FIELDS
    assert len(set(FIELDS)) == len(FIELDS)


# --- the documented examples, in both dialects ------------------------------------------------


@DIALECTS
def test_transfer_first_record(line_of):
    (row,) = flatten(line_of("data_change_record", TRANSFER_1))
    assert row == {
        "error": None,
        "source_table": "AccountBalance",
        "key_json": '{"AccountId":"Id1"}',
        "op": "update",
        "row_image": {
            "AccountId": '"Id1"',
            "LastUpdate": '"2022-09-27T12:30:00.123456Z"',
            "Balance": "1000",
        },
        "is_backfill": False,
        "order_ts": None,
        "sort_pos": (
            "101664281800123456000." + b"6329047911".hex() + "!.000000000000000000000.0000000000"
        ),
        "committed_at": 1664281800123456,
        "txn_id": "6329047911",
        "event_id": '["token_a",1664281800123456000,"6329047911","00000000",0]',
        "record_kind": "data_change",
        "partition_token": "token_a",
        "record_ts": 1664281800123456,
        "record_sequence": "00000000",
        "server_transaction_id": "6329047911",
        "records_in_transaction": 2,
        "partitions_in_transaction": 2,
        "value_capture_type": "OLD_AND_NEW_VALUES",
        "mod_index": 0,
        "column_names": ["AccountId", "LastUpdate", "Balance"],
        "column_types": (
            '{"AccountId":["STRING","string"],"Balance":["INT","bigint"],'
            '"LastUpdate":["TIMESTAMP","timestamp"]}'
        ),
        "child_token": None,
        "parent_tokens": None,
    }


@DIALECTS
def test_transfer_over_two_partitions_is_one_transaction_in_record_sequence_order(line_of):
    (first,) = flatten(line_of("data_change_record", TRANSFER_1, token="token_a"))
    (second,) = flatten(line_of("data_change_record", TRANSFER_2, token="token_b"))
    assert second["key_json"] == '{"AccountId":"Id2"}'
    assert second["row_image"]["Balance"] == "2000"
    assert first["txn_id"] == second["txn_id"]
    assert first["records_in_transaction"] == second["records_in_transaction"] == 2
    assert (first["partition_token"], second["partition_token"]) == ("token_a", "token_b")
    assert first["sort_pos"] < second["sort_pos"]
    assert first["event_id"] != second["event_id"]


@pytest.mark.parametrize(
    "record", [TRANSFER_1, NEW_VALUES, NEW_ROW, NEW_ROW_AND_OLD_VALUES, HEARTBEAT, MERGE]
)
def test_both_dialects_give_the_same_rows(record):
    kind = (
        "heartbeat_record"
        if record is HEARTBEAT
        else "child_partitions_record"
        if record is MERGE
        else "data_change_record"
    )
    assert flatten(postgresql_line(kind, record)) == flatten(googlesql_line(kind, record))


def test_new_values_update_carries_only_the_changed_column():
    row = change(NEW_VALUES)
    assert row["row_image"] == {
        "AccountId": '"Id1"',
        "LastUpdate": '"2022-09-27T12:30:00.123456Z"',
    }
    assert row["value_capture_type"] == "NEW_VALUES"
    assert row["column_names"] == ["AccountId", "LastUpdate"]


@pytest.mark.parametrize("record", [NEW_ROW, NEW_ROW_AND_OLD_VALUES])
def test_new_row_updates_are_full_images_of_the_new_values(record):
    row = change(record)
    assert row["row_image"] == {
        "AccountId": '"Id1"',
        "LastUpdate": '"2022-09-27T12:30:00.123456Z"',
        "Balance": "1000",
    }


@pytest.mark.parametrize("capture", ["OLD_AND_NEW_VALUES", "NEW_VALUES", "NEW_ROW"])
def test_insert_is_a_full_image_whatever_the_capture_type(capture):
    record = with_mods(NEW_ROW, mod_type="INSERT", value_capture_type=capture)
    row = change(record)
    assert row["op"] == "insert"
    assert row["row_image"] == change(NEW_ROW)["row_image"]


def test_delete_image_is_keys_and_old_values():
    mod = {
        "keys": {"AccountId": "Id1"},
        "new_values": {},
        "old_values": {"LastUpdate": "2022-09-26T11:28:00.189413Z", "Balance": None},
    }
    row = change(with_mods(TRANSFER_1, mod, mod_type="DELETE"))
    assert row["op"] == "delete"
    assert row["row_image"] == {
        "AccountId": '"Id1"',
        "LastUpdate": '"2022-09-26T11:28:00.189413Z"',
        # A known NULL is the text null, never None (unknown).
        "Balance": "null",
    }


def test_delete_without_old_values_is_its_key():
    mod = {"keys": {"AccountId": "Id1"}, "new_values": {}, "old_values": {}}
    row = change(with_mods(NEW_ROW, mod, mod_type="DELETE"))
    assert row["row_image"] == {"AccountId": '"Id1"'}


def test_mod_type_and_capture_type_are_read_case_insensitively():
    row = change(with_mods(NEW_ROW, mod_type="insert", value_capture_type="new_row"))
    assert (row["op"], row["value_capture_type"]) == ("insert", "NEW_ROW")


def test_every_mod_is_a_row_in_mods_order():
    mods = [
        {"keys": {"AccountId": f"Id{n}"}, "new_values": {"Balance": n}, "old_values": {}}
        for n in range(3)
    ]
    rows = flatten(postgresql_line("data_change_record", with_mods(TRANSFER_1, *mods)))
    assert [row["mod_index"] for row in rows] == [0, 1, 2]
    assert [row["key_json"] for row in rows] == [f'{{"AccountId":"Id{n}"}}' for n in range(3)]
    assert [row["sort_pos"] for row in rows] == sorted(row["sort_pos"] for row in rows)
    assert len({row["sort_pos"] for row in rows}) == 3
    assert len({row["event_id"] for row in rows}) == 3
    assert {row["record_sequence"] for row in rows} == {"00000000"}


@DIALECTS
def test_record_without_mods_is_one_row_that_names_the_record(line_of):
    (row,) = flatten(line_of("data_change_record", {**TRANSFER_1, "mods": []}))
    assert row["error"] is None
    assert row["op"] is row["mod_index"] is row["key_json"] is row["row_image"] is None
    assert row["record_kind"] == "data_change"
    assert row["record_sequence"] == "00000000"
    assert row["server_transaction_id"] == row["txn_id"] == "6329047911"
    assert row["records_in_transaction"] == 2
    assert row["record_ts"] == row["committed_at"] == 1664281800123456
    assert row["event_id"] == '["token_a",1664281800123456000,"6329047911","00000000",null]'


@DIALECTS
def test_heartbeat(line_of):
    (row,) = flatten(line_of("heartbeat_record", HEARTBEAT))
    assert row == {
        **dict.fromkeys(FIELDS),
        "record_kind": "heartbeat",
        "partition_token": "token_a",
        "record_ts": 1664282100312486,
    }


@DIALECTS
def test_initial_query_children_have_a_null_parent(line_of):
    rows = flatten(line_of("child_partitions_record", INITIAL_CHILDREN, token=None))
    common = {
        **dict.fromkeys(FIELDS),
        "record_kind": "child_partitions",
        "partition_token": None,
        "record_ts": 1651395601000000,
        "record_sequence": "1000012389",
    }
    assert rows == [
        {**common, "child_token": "child_token_1", "parent_tokens": [None]},
        {**common, "child_token": "child_token_2", "parent_tokens": [None]},
    ]


@DIALECTS
def test_merged_child_names_both_parents(line_of):
    (row,) = flatten(line_of("child_partitions_record", MERGE, token="child_token_2"))
    assert row["child_token"] == "child_token_4"
    assert row["parent_tokens"] == ["child_token_2", "child_token_3"]
    assert row["partition_token"] == "child_token_2"
    assert row["record_ts"] == 1651397415000000


def test_child_partitions_record_without_children_is_one_row():
    (row,) = flatten(postgresql_line("child_partitions_record", {**MERGE, "child_partitions": []}))
    assert row["error"] is None
    assert (row["record_kind"], row["child_token"], row["record_ts"]) == (
        "child_partitions",
        None,
        1651397415000000,
    )


def test_postgresql_shape_ignores_null_or_empty_other_kinds():
    line = json.dumps(
        {
            "partition_token": "t",
            "data_change_record": None,
            "heartbeat_record": HEARTBEAT,
            "child_partitions_record": {},
        }
    )
    (row,) = flatten(line)
    assert (row["error"], row["record_kind"]) == (None, "heartbeat")


def test_googlesql_shape_takes_null_for_empty_arrays():
    struct = {"data_change_record": None, "heartbeat_record": [HEARTBEAT]}
    (row,) = flatten(json.dumps({"partition_token": "t", "ChangeRecord": [struct]}))
    assert (row["error"], row["record_kind"]) == (None, "heartbeat")


def test_postgresql_change_record_column_kept_under_its_name():
    line = json.dumps({"partition_token": "t", "ChangeRecord": {"heartbeat_record": HEARTBEAT}})
    (row,) = flatten(line)
    assert (row["error"], row["record_kind"]) == (None, "heartbeat")


# --- how exports write Spanner values ---------------------------------------------------------


def test_int64_fields_as_strings_and_json_fields_as_text():
    record = copy.deepcopy(TRANSFER_1)
    record["number_of_records_in_transaction"] = "2"
    record["number_of_partitions_in_transaction"] = "2"
    for column in record["column_types"]:
        column["type"] = json.dumps(column["type"])
        column["ordinal_position"] = str(column["ordinal_position"])
    for mod in record["mods"]:
        for field in ("keys", "new_values", "old_values"):
            mod[field] = json.dumps(mod[field])
    assert flatten(postgresql_line("data_change_record", record)) == flatten(
        postgresql_line("data_change_record", TRANSFER_1)
    )


def test_type_as_a_bare_code():
    record = copy.deepcopy(NEW_ROW)
    record["column_types"][2]["type"] = "INT64"
    assert change(record)["row_image"]["Balance"] == "1000"


def test_record_sequence_written_as_a_number_is_its_text():
    assert change({**NEW_ROW, "record_sequence": 7})["record_sequence"] == "7"


def test_number_of_partitions_may_be_absent():
    record = {k: v for k, v in NEW_ROW.items() if k != "number_of_partitions_in_transaction"}
    assert change(record)["partitions_in_transaction"] is None


# --- value typing ----------------------------------------------------------------------------


def typed(spanner_type: Any, raw: Any) -> str:
    """The row_image text of one value of a column of `spanner_type`."""
    record = with_mods(
        NEW_ROW,
        {"keys": {"AccountId": "Id1"}, "new_values": {"v": raw}},
        column_types=[ACCOUNT_COLUMNS[0], {"name": "v", "type": spanner_type}],
    )
    return change(record)["row_image"]["v"]


def t(code: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, **extra}


BIG = 2**53 + 1
NUMERIC_38 = "12345678901234567890.123456789012345678"


@pytest.mark.parametrize(
    ("spanner_type", "raw", "expected"),
    [
        (t("INT64"), 42, "42"),
        (t("INT64"), "-42", "-42"),
        (t("INT64"), str(BIG), f'"{BIG}"'),
        (t("INT64"), BIG, f'"{BIG}"'),
        (t("INT64"), str(2**53), str(2**53)),
        (t("INT64"), str(-(2**63)), '"-9223372036854775808"'),
        (t("INT64"), str(2**63 - 1), '"9223372036854775807"'),
        (t("INT"), 1000, "1000"),
        (t("INT64", type_annotation="PG_OID"), "7", "7"),
        (t("FLOAT64"), 1.5, "1.5"),
        (t("FLOAT64"), 0.1, "0.1"),
        (t("FLOAT64"), 3, "3.0"),
        (t("FLOAT64"), 1.7976931348623157e308, "1.7976931348623157e+308"),
        (t("FLOAT64"), "NaN", '"NaN"'),
        (t("FLOAT64"), "Infinity", '"Infinity"'),
        (t("FLOAT64"), "-Infinity", '"-Infinity"'),
        (t("FLOAT32"), 0.5, "0.5"),
        (t("FLOAT32"), "NaN", '"NaN"'),
        (t("NUMERIC"), "123.45", "123.45"),
        (t("NUMERIC"), "-0.5", "-0.5"),
        (t("NUMERIC"), "100", "100"),
        (t("NUMERIC"), "1.10", "1.1"),
        (t("NUMERIC"), NUMERIC_38, f'"{NUMERIC_38}"'),
        (t("NUMERIC"), "99999999999999999999999999999999999999", '"' + "9" * 38 + '"'),
        (t("NUMERIC"), "0.000000001", "1e-09"),
        (t("NUMERIC", type_annotation="PG_NUMERIC"), "NaN", '"NaN"'),
        (t("NUMERIC", type_annotation="PG_NUMERIC"), "12.5", "12.5"),
        (t("BOOL"), True, "true"),
        (t("BOOL"), False, "false"),
        (t("STRING"), "héllo \"'", '"héllo \\"\'"'),
        (t("STRING"), "", '""'),
        (t("BYTES"), "AAEC/w==", '"AAEC/w=="'),
        # One byte string, one spelling: non-zero padding bits are dropped.
        (t("BYTES"), "AAF=", '"AAE="'),
        (t("BYTES"), "", '""'),
        (t("DATE"), "2024-02-29", '"2024-02-29"'),
        (t("DATE"), "0001-01-01", '"0001-01-01"'),
        (t("TIMESTAMP"), "2022-09-27T12:30:00Z", '"2022-09-27T12:30:00.000000Z"'),
        (t("TIMESTAMP"), "2022-09-27T12:30:00.1Z", '"2022-09-27T12:30:00.100000Z"'),
        (t("TIMESTAMP"), "2022-09-27T12:30:00.123456789Z", '"2022-09-27T12:30:00.123456Z"'),
        (
            t("TIMESTAMP"),
            "2022-09-27T14:30:00.123456789+02:00",
            '"2022-09-27T12:30:00.123456Z"',
        ),
        (t("TIMESTAMP"), "2022-09-27T07:00:00-05:30", '"2022-09-27T12:30:00.000000Z"'),
        (t("TIMESTAMP"), "1969-12-31T23:59:59.9999999Z", '"1969-12-31T23:59:59.999999Z"'),
        (t("JSON"), '{"b": [1, 2.5], "a": null}', '{"a":null,"b":[1,2.5]}'),
        # A JSON column is the JSON value itself: numbers inside are not re-typed.
        (t("JSON"), '{"n": 12345678901234567890}', '{"n":12345678901234567890}'),
        (t("JSON"), '"text"', '"text"'),
        (t("JSON"), "null", "null"),
        (t("JSON", type_annotation="PG_JSONB"), '{"k": [true]}', '{"k":[true]}'),
        (t("JSON", type_annotation="PG_JSONB"), {"k": [1.5, 2]}, '{"k":[1.5,2]}'),
        (
            t("ARRAY", array_element_type=t("INT64")),
            ["1", 2, None, str(BIG)],
            f'[1,2,null,"{BIG}"]',
        ),
        (
            t("ARRAY", array_element_type=t("JSON")),
            ['{"a": 1}', None, "[2]"],
            '[{"a":1},null,[2]]',
        ),
        (
            t("ARRAY", array_element_type=t("TIMESTAMP")),
            ["2024-01-01T00:00:00+01:00"],
            '["2023-12-31T23:00:00.000000Z"]',
        ),
        (t("ARRAY", array_element_type=t("FLOAT64")), [1, "NaN"], '[1.0,"NaN"]'),
        (t("ARRAY", array_element_type=t("STRING")), [], "[]"),
        (
            t("ARRAY", array_element_type=t("ARRAY", array_element_type=t("DATE"))),
            [["2024-01-01"]],
            '[["2024-01-01"]]',
        ),
        (
            t("STRUCT", struct_type={"fields": [{"name": "n", "type": t("INT64")}]}),
            [str(BIG)],
            f'["{BIG}"]',
        ),
        (
            t("STRUCT", struct_type={"fields": [{"name": "n", "type": t("INT64")}]}),
            {"n": "5", "other": 1},
            '{"n":5,"other":1}',
        ),
        (t("STRUCT"), {"b": 1, "a": [2]}, '{"a":[2],"b":1}'),
        # Unknown codes keep the value as the JSON holds it.
        (t("ENUM", proto_type_fqn="x.Color"), "RED", '"RED"'),
        (t("PROTO", proto_type_fqn="x.Msg"), "CgNmb28=", '"CgNmb28="'),
        (t("INTERVAL"), "P1Y2M3D", '"P1Y2M3D"'),
        (t("SOMETHING_NEW"), {"z": BIG, "a": 1.5}, f'{{"a":1.5,"z":"{BIG}"}}'),
    ],
)
def test_values_typed_by_column_types(spanner_type, raw, expected):
    assert typed(spanner_type, raw) == expected


@pytest.mark.parametrize(
    "code", ["INT64", "FLOAT64", "NUMERIC", "BOOL", "STRING", "BYTES", "DATE", "TIMESTAMP", "JSON"]
)
def test_null_is_null_in_every_type(code):
    assert typed(t(code), None) == "null"
    assert typed(t("ARRAY", array_element_type=t(code)), None) == "null"


def test_bare_nan_token_of_a_float():
    record = with_mods(
        NEW_ROW,
        {"keys": {"AccountId": "Id1"}, "new_values": {"v": 0}},
        column_types=[ACCOUNT_COLUMNS[0], {"name": "v", "type": t("FLOAT64")}],
    )
    line = postgresql_line("data_change_record", record).replace('"v": 0', '"v": NaN')
    (row,) = flatten(line)
    assert row["row_image"]["v"] == '"NaN"'


def test_key_values_are_typed_like_any_value():
    columns = [
        {"name": "Id", "type": t("INT64"), "is_primary_key": True},
        {"name": "Day", "type": t("DATE"), "is_primary_key": True},
        {"name": "v", "type": t("STRING")},
    ]
    mod = {"keys": {"Id": str(BIG), "Day": "2024-01-01"}, "new_values": {"v": "x"}}
    row = change(with_mods(NEW_ROW, mod, column_types=columns))
    assert row["key_json"] == f'{{"Day":"2024-01-01","Id":"{BIG}"}}'
    assert row["row_image"]["Id"] == f'"{BIG}"'


def test_a_null_primary_key_value_is_a_key():
    columns = [{"name": "Id", "type": t("INT64"), "is_primary_key": True}]
    row = change(with_mods(NEW_ROW, {"keys": {"Id": None}}, column_types=columns))
    assert row["key_json"] == '{"Id":null}'


# --- order ------------------------------------------------------------------------------------


def sort_pos(**fields: Any) -> str:
    return change({**NEW_ROW, **fields})["sort_pos"]


def test_record_sequence_orders_as_a_number():
    assert sort_pos(record_sequence="9") < sort_pos(record_sequence="10")
    assert sort_pos(record_sequence="00000009") < sort_pos(record_sequence="10")
    assert sort_pos(record_sequence="1000012389") < sort_pos(record_sequence="1000012390")
    assert sort_pos(record_sequence="007") == sort_pos(record_sequence="7")


def test_record_sequences_that_are_not_numbers_order_after_numbers_and_as_text():
    huge = "1" + "0" * 20
    assert sort_pos(record_sequence="99999999999999999999") < sort_pos(record_sequence=huge)
    assert sort_pos(record_sequence=huge) < sort_pos(record_sequence="a")
    assert sort_pos(record_sequence="a") < sort_pos(record_sequence="ab")
    assert sort_pos(record_sequence="ab") < sort_pos(record_sequence="b")


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("2022-09-27T12:30:00Z", "2022-09-27T12:30:00.000000001Z"),
        ("2022-09-27T12:30:00.9Z", "2022-09-27T12:30:01Z"),
        ("2022-09-27T12:30:00.099Z", "2022-09-27T12:30:00.1Z"),
        ("2022-09-27T12:30:00.123456Z", "2022-09-27T12:30:00.123456001Z"),
        ("2022-09-27T13:30:00+02:00", "2022-09-27T12:30:00Z"),
        ("1969-12-31T23:59:59.999999999Z", "1970-01-01T00:00:00Z"),
    ],
)
def test_commit_timestamps_order_as_instants(earlier, later):
    assert sort_pos(commit_timestamp=earlier) < sort_pos(commit_timestamp=later)


@pytest.mark.parametrize(
    "spelling",
    [
        "2022-09-27T12:30:00.1Z",
        "2022-09-27T12:30:00.100Z",
        "2022-09-27T12:30:00.100000Z",
        "2022-09-27T12:30:00.100000000Z",
        "2022-09-27T14:30:00.1+02:00",
    ],
)
def test_spellings_of_one_commit_instant_are_one_position_and_one_event(spelling):
    reference = change({**NEW_ROW, "commit_timestamp": "2022-09-27T12:30:00.1Z"})
    row = change({**NEW_ROW, "commit_timestamp": spelling})
    assert (row["sort_pos"], row["event_id"]) == (reference["sort_pos"], reference["event_id"])
    assert row["committed_at"] == 1664281800100000


def test_commit_time_precedes_transaction_then_sequence():
    early = "2022-09-27T12:30:00Z"
    late = "2022-09-27T12:30:01Z"
    assert sort_pos(commit_timestamp=early, server_transaction_id="9", record_sequence="9") < (
        sort_pos(commit_timestamp=late, server_transaction_id="1", record_sequence="1")
    )
    assert sort_pos(server_transaction_id="a", record_sequence="9") < (
        sort_pos(server_transaction_id="b", record_sequence="1")
    )


def test_committed_at_floors_nanoseconds_to_microseconds():
    row = change({**NEW_ROW, "commit_timestamp": "1969-12-31T23:59:59.999999999Z"})
    assert row["committed_at"] == row["record_ts"] == -1


# --- identity ---------------------------------------------------------------------------------


def test_the_same_record_landed_twice_has_the_same_event_ids():
    line = googlesql_line("data_change_record", TRANSFER_1)
    assert [r["event_id"] for r in flatten(line)] == [
        r["event_id"] for r in flatten(postgresql_line("data_change_record", TRANSFER_1))
    ]


def test_event_id_tells_partitions_apart_and_null_from_any_token():
    ids = set()
    for token in ("token_a", "token_b", None, "null", "None", ""):
        (row,) = flatten(postgresql_line("data_change_record", TRANSFER_1, token))
        assert row["partition_token"] == token
        ids.add(row["event_id"])
    assert len(ids) == 6


@pytest.mark.parametrize("field", ["commit_timestamp", "server_transaction_id", "record_sequence"])
def test_event_id_depends_on_each_identity_field(field):
    other = {"commit_timestamp": "2022-09-27T12:30:01Z"}.get(field, "42")
    assert change(TRANSFER_1)["event_id"] != change({**TRANSFER_1, field: other})["event_id"]


# --- keys -------------------------------------------------------------------------------------


def test_declared_key_wins_and_takes_values_from_new_and_old_values():
    asked = []

    def declared(system: str, name: str, table: str) -> list[str] | None:
        asked.append((system, name, table))
        return ["Balance", "AccountId"]

    row = change(TRANSFER_1, declared=declared)
    assert asked == [("spanner", STREAM, "AccountBalance")]
    assert row["key_json"] == '{"AccountId":"Id1","Balance":1000}'

    deleted = with_mods(
        TRANSFER_1,
        {"keys": {"AccountId": "Id1"}, "old_values": {"Balance": 1500}},
        mod_type="DELETE",
    )
    assert change(deleted, declared=declared)["key_json"] == '{"AccountId":"Id1","Balance":1500}'

    # An update's new value wins; without one, the old value names the row.
    only_old = with_mods(
        TRANSFER_1, {"keys": {"AccountId": "Id1"}, "new_values": {}, "old_values": {"Balance": 7}}
    )
    assert change(only_old, declared=declared)["key_json"] == '{"AccountId":"Id1","Balance":7}'


def test_declared_key_column_missing_from_the_mod_is_a_mod_error():
    error = mod_error(NEW_VALUES, declared=lambda *_: ["Balance"])
    assert "declared key column 'Balance' missing" in error


def test_no_declared_key_falls_back_to_is_primary_key():
    assert change(TRANSFER_1, declared=lambda *_: None)["key_json"] == '{"AccountId":"Id1"}'


def test_failing_declared_key_lookup_is_a_mod_error():
    def broken(*_: Any) -> list[str]:
        raise RuntimeError("settings gone")

    assert "declared_keys failed: RuntimeError: settings gone" in mod_error(
        TRANSFER_1, declared=broken
    )


def test_without_primary_key_flags_the_mod_keys_are_the_key():
    record = copy.deepcopy(NEW_ROW)
    for column in record["column_types"]:
        column.pop("is_primary_key")
    assert change(record)["key_json"] == '{"AccountId":"Id1"}'


# --- mod-level errors --------------------------------------------------------------------------


def one_value(spanner_type: Any, raw: Any) -> dict[str, Any]:
    return with_mods(
        NEW_ROW,
        {"keys": {"AccountId": "Id1"}, "new_values": {"v": raw}},
        column_types=[ACCOUNT_COLUMNS[0], {"name": "v", "type": spanner_type}],
    )


@pytest.mark.parametrize(
    ("spanner_type", "raw", "reason"),
    [
        (t("INT64"), "1.5", "INT64 expects an integer"),
        (t("INT64"), 1.5, "INT64 expects an integer"),
        (t("INT64"), True, "INT64 expects an integer"),
        (t("INT64"), " 1", "INT64 expects an integer"),
        (t("INT64"), str(2**63), "INT64 out of range"),
        (t("FLOAT64"), "abc", "FLOAT64 expects a number"),
        (t("FLOAT64"), "1.5", "FLOAT64 expects a number"),
        (t("FLOAT64"), "nan", "FLOAT64 expects a number"),
        (t("FLOAT64"), 10**400, "FLOAT64"),
        (t("NUMERIC"), "abc", "NUMERIC expects a decimal string"),
        (t("NUMERIC"), "NaN", "NUMERIC expects a decimal string"),
        (t("NUMERIC"), "1_000", "NUMERIC expects a decimal string"),
        (t("NUMERIC"), True, "NUMERIC expects a decimal string"),
        (t("BOOL"), "true", "BOOL expects true or false"),
        (t("BOOL"), 1, "BOOL expects true or false"),
        (t("STRING"), 5, "STRING expects a string"),
        (t("BYTES"), "not base64!", "BYTES expects base64"),
        (t("BYTES"), "AAE", "BYTES expects base64"),
        (t("DATE"), "2023-02-29", "DATE expects YYYY-MM-DD"),
        (t("DATE"), "2024/01/01", "DATE expects YYYY-MM-DD"),
        (t("DATE"), 19723, "DATE expects YYYY-MM-DD"),
        (t("TIMESTAMP"), "yesterday", "not an ISO-8601 instant"),
        (t("TIMESTAMP"), 1664281800000, "TIMESTAMP expects RFC 3339"),
        (t("JSON"), "{bad", "JSON expects JSON text"),
        (t("JSON"), "NaN", "JSON expects JSON text"),
        (t("ARRAY", array_element_type=t("INT64")), "[1]", "ARRAY expects an array"),
        (t("ARRAY", array_element_type=t("INT64")), ["x"], "INT64 expects an integer"),
        (t("ARRAY"), [1], "ARRAY type without array_element_type"),
        (t("ARRAY", array_element_type={"x": 1}), [1], "type without a code"),
        (
            t("STRUCT", struct_type={"fields": [{"name": "n", "type": t("INT64")}]}),
            ["1", "2"],
            "STRUCT of 1 fields got 2 values",
        ),
    ],
)
def test_values_that_do_not_fit_their_type_are_mod_errors(spanner_type, raw, reason):
    error = mod_error(one_value(spanner_type, raw))
    assert error.startswith("mod 0: new_values column 'v': ")
    assert reason in error


@pytest.mark.parametrize(
    ("mod", "reason"),
    [
        ({"keys": {"AccountId": "Id1"}, "new_values": {"Nope": 1}}, "'Nope' has no type"),
        ({"keys": {"AccountId": "Id1", "Nope": 1}}, "keys column 'Nope' has no type"),
        ({"new_values": {"Balance": 1}}, "mod without keys"),
        ({"keys": None}, "mod without keys"),
        ({"keys": {}, "new_values": {"Balance": 1}}, "key column 'AccountId' missing from keys"),
        ({"keys": {"AccountId": 5}}, "keys column 'AccountId': STRING expects a string"),
        ({"keys": ["Id1"]}, "keys is not an object"),
        ({"keys": "{not json"}, "keys is not JSON"),
        ({"keys": {"AccountId": "Id1"}, "old_values": 3}, "old_values is not an object"),
        ({"keys": {"AccountId": "Id1"}, "old_values": {"Balance": "x"}}, "old_values column"),
    ],
)
def test_bad_mods_are_mod_errors(mod, reason):
    assert reason in mod_error(with_mods(NEW_ROW, mod))


def test_mod_that_is_not_an_object_is_a_mod_error():
    assert "mod is not an object" in mod_error(with_mods(NEW_ROW, mods=["x"]))


def test_column_without_a_readable_type_fails_only_mods_that_use_it():
    record = copy.deepcopy(NEW_ROW)
    record["column_types"][2]["type"] = "{broken"
    good = {"keys": {"AccountId": "Id1"}, "new_values": {"LastUpdate": None}}
    bad = {"keys": {"AccountId": "Id2"}, "new_values": {"Balance": 1}}
    rows = flatten(postgresql_line("data_change_record", with_mods(record, good, bad)))
    assert [row["error"] is None for row in rows] == [True, False]
    assert "new_values column 'Balance' has no type in column_types" in rows[1]["error"]
    assert rows[1]["mod_index"] == 1


def test_a_bad_mod_leaves_the_other_mods_of_its_record():
    mods = [
        {"keys": {"AccountId": "Id1"}, "new_values": {"Balance": 1}},
        {"keys": {"AccountId": "Id2"}, "new_values": {"Balance": "x"}},
        {"keys": {"AccountId": "Id3"}, "new_values": {"Balance": 3}},
    ]
    rows = flatten(googlesql_line("data_change_record", with_mods(TRANSFER_1, *mods)))
    assert [row["error"] is None for row in rows] == [True, False, True]
    assert rows[1]["error"].startswith("mod 1: new_values column 'Balance'")
    assert [row["record_sequence"] for row in rows] == ["00000000"] * 3
    assert rows[1]["records_in_transaction"] == 2
    assert rows[2]["row_image"]["Balance"] == "3"


# --- line-level errors -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json", "malformed line JSON"),
        ("", "malformed line JSON"),
        ("[1]", "malformed line JSON: not an object"),
        ('"text"', "malformed line JSON: not an object"),
        (json.dumps({"heartbeat_record": HEARTBEAT}), "missing field: partition_token"),
        (json.dumps({"partition_token": 5, "heartbeat_record": HEARTBEAT}), "bad partition_token"),
    ],
)
def test_unreadable_lines(line, reason):
    assert reason in line_error(line)


def test_line_that_is_not_text():
    assert "no text" in line_error(None)


def data_line(**fields: Any) -> str:
    """The first transfer record with fields replaced (None removes the field)."""
    record = {k: v for k, v in {**TRANSFER_1, **fields}.items() if v is not None}
    return postgresql_line("data_change_record", record)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (json.dumps({"partition_token": "token_a"}), "no change record"),
        (
            json.dumps({"partition_token": "token_a", "data_change_record": {}}),
            "no change record",
        ),
        (
            json.dumps({"partition_token": "token_a", "partition_start_record": {"a": 1}}),
            "unknown record kind 'partition_start_record'",
        ),
        (
            json.dumps(
                {"partition_token": "token_a", "ChangeRecord": [{"partition_end_record": []}]}
            ),
            "no change record",
        ),
        (
            json.dumps(
                {
                    "partition_token": "token_a",
                    "ChangeRecord": [{"partition_end_record": [{"a": 1}]}],
                }
            ),
            "unknown record kind",
        ),
        (
            json.dumps(
                {
                    "partition_token": "token_a",
                    "heartbeat_record": HEARTBEAT,
                    "data_change_record": TRANSFER_1,
                }
            ),
            "several record kinds in one line: data_change_record, heartbeat_record",
        ),
        (
            json.dumps(
                {
                    "partition_token": "token_a",
                    "ChangeRecord": [{"heartbeat_record": [HEARTBEAT], "data_change_record": [{}]}],
                }
            ),
            "several record kinds",
        ),
        (
            json.dumps(
                {
                    "partition_token": "token_a",
                    "ChangeRecord": [{"heartbeat_record": [HEARTBEAT]}],
                    "heartbeat_record": HEARTBEAT,
                }
            ),
            "several record kinds",
        ),
        (
            json.dumps(
                {
                    "partition_token": "token_a",
                    "ChangeRecord": [
                        {"heartbeat_record": [HEARTBEAT]},
                        {"heartbeat_record": [HEARTBEAT]},
                    ],
                }
            ),
            "ChangeRecord must hold exactly one record struct",
        ),
        (
            json.dumps(
                {
                    "partition_token": "token_a",
                    "ChangeRecord": [{"heartbeat_record": [HEARTBEAT, HEARTBEAT]}],
                }
            ),
            "heartbeat_record must hold exactly one record object",
        ),
        (
            json.dumps({"partition_token": "token_a", "heartbeat_record": "soon"}),
            "heartbeat_record must hold exactly one record object",
        ),
        (data_line(commit_timestamp=None), "missing field: commit_timestamp"),
        (data_line(commit_timestamp="2022-13-01T00:00:00Z"), "bad commit_timestamp"),
        (data_line(commit_timestamp="yesterday"), "bad commit_timestamp"),
        (data_line(commit_timestamp=1664281800123), "bad commit_timestamp"),
        (data_line(server_transaction_id=None), "missing field: server_transaction_id"),
        (data_line(server_transaction_id=""), "missing field: server_transaction_id"),
        (data_line(server_transaction_id=5), "bad server_transaction_id"),
        (data_line(record_sequence=None), "missing field: record_sequence"),
        (data_line(record_sequence=["1"]), "bad record_sequence"),
        (
            data_line(number_of_records_in_transaction=None),
            "missing field: number_of_records_in_transaction",
        ),
        (data_line(number_of_records_in_transaction="two"), "bad number_of_records_in_trans"),
        (data_line(number_of_records_in_transaction=0), "bad number_of_records_in_transaction"),
        (data_line(number_of_records_in_transaction=-1), "bad number_of_records_in_transaction"),
        (data_line(number_of_records_in_transaction=True), "bad number_of_records_in_trans"),
        (data_line(number_of_partitions_in_transaction="x"), "bad number_of_partitions_in"),
        (data_line(table_name=None), "missing field: table_name"),
        (data_line(mod_type=None), "missing field: mod_type"),
        (data_line(mod_type="UPSERT"), "unknown mod_type 'UPSERT'"),
        (data_line(value_capture_type=None), "missing field: value_capture_type"),
        (data_line(value_capture_type="ALL"), "unknown value_capture_type 'ALL'"),
        (data_line(column_types=None), "missing field: column_types"),
        (data_line(column_types={"AccountId": "STRING"}), "column_types is not an array"),
        (data_line(column_types=[{"type": {"code": "STRING"}}]), "column_types entry without"),
        (data_line(mods=None), "missing field: mods"),
        (data_line(mods={"keys": {}}), "mods is not an array"),
        (postgresql_line("heartbeat_record", {"ts": "x"}), "missing field: timestamp"),
        (postgresql_line("heartbeat_record", {"timestamp": "noon"}), "bad timestamp"),
        (
            postgresql_line("child_partitions_record", {**MERGE, "start_timestamp": None}),
            "missing field: start_timestamp",
        ),
        (
            postgresql_line("child_partitions_record", {**MERGE, "record_sequence": None}),
            "missing field: record_sequence",
        ),
        (
            postgresql_line("child_partitions_record", {**MERGE, "child_partitions": None}),
            "missing field: child_partitions",
        ),
        (
            postgresql_line("child_partitions_record", {**MERGE, "child_partitions": "c"}),
            "child_partitions is not an array",
        ),
        (
            postgresql_line("child_partitions_record", {**MERGE, "child_partitions": ["c"]}),
            "child partition is not an object",
        ),
        (
            postgresql_line(
                "child_partitions_record",
                {**MERGE, "child_partitions": [{"parent_partition_tokens": [None]}]},
            ),
            "child partition without token",
        ),
        (
            postgresql_line(
                "child_partitions_record", {**MERGE, "child_partitions": [{"token": "c"}]}
            ),
            "child partition 'c': bad parent_partition_tokens",
        ),
        (
            postgresql_line(
                "child_partitions_record",
                {**MERGE, "child_partitions": [{"token": "c", "parent_partition_tokens": [1]}]},
            ),
            "child partition 'c': bad parent_partition_tokens",
        ),
    ],
)
def test_bad_records_are_line_errors_that_keep_the_partition_token(line, reason):
    assert reason in line_error(line, token="token_a")


def test_line_error_of_the_initial_query_has_no_token():
    line = postgresql_line("heartbeat_record", {}, token=None).replace("{}", '{"x": 1}')
    assert "missing field: timestamp" in line_error(line, token=None)
