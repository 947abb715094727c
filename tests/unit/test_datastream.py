"""Datastream events to change-log rows: every source type, order, keys, values and errors."""

from __future__ import annotations

import copy
import datetime as dt
import io
import json
from decimal import Decimal

import fastavro
import pytest

from cdc_warehouse.bench.datastream_avro import avro_container, mysql_event_schema
from python_udfs.datastream import FIELDS, avro_events, avro_file_events, flatten_event
from python_udfs.decoding import DecodeSettings
from python_udfs.json_values import parse_instant_ns, pos_instant

STREAM = "orders-stream"

# The source document's Oracle example (INSERT, UPDATE, DELETE of one row), with its gaps and
# trailing commas fixed so that it is valid JSON.
ORACLE_DB_INSERT = """{
  "stream_name": "projects/myProj/locations/myLoc/streams/Oracle-to-Source",
  "read_method": "oracle-cdc-logminer",
  "object": "SAMPLE.TBL",
  "uuid": "d7989206-380f-0e81-8056-240501101100",
  "read_timestamp": "2019-11-07T07:37:16.808Z",
  "source_timestamp": "2019-11-07T02:15:39",
  "source_metadata": {
    "log_file": "",
    "scn": 15869116216871,
    "row_id": "AAAPwRAALAAMzMBABD",
    "is_deleted": false,
    "database": "DB1",
    "schema": "ROOT",
    "table": "SAMPLE",
    "change_type": "INSERT",
    "tx_id": "",
    "rs_id": "0x0073c9.000a4e4c.01d0",
    "ssn": 67
  },
  "payload": {"THIS_IS_MY_PK": "1231535353", "FIELD1": "foo", "FIELD2": "TLV"}
}"""
ORACLE_DB_UPDATE = """{
  "stream_name": "projects/myProj/locations/myLoc/streams/Oracle-to-Source",
  "read_method": "oracle-cdc-logminer",
  "object": "SAMPLE.TBL",
  "uuid": "e6067366-1efc-0a10-a084-0d8701101101",
  "read_timestamp": "2019-11-07T07:37:18.808Z",
  "source_timestamp": "2019-11-07T02:17:39",
  "source_metadata": {
    "log_file": "",
    "scn": 15869150473224,
    "row_id": "AAAGYPAATAAPIC5AAB",
    "is_deleted": false,
    "database": "",
    "schema": "ROOT",
    "table": "SAMPLE",
    "change_type": "UPDATE",
    "tx_id": "",
    "rs_id": "0x006cf4.00056b26.0010",
    "ssn": 0
  },
  "payload": {"THIS_IS_MY_PK": "1231535353", "FIELD1": null, "FIELD2": "TLV"}
}"""
ORACLE_DB_DELETE = """{
  "stream_name": "projects/myProj/locations/myLoc/streams/Oracle-to-Source",
  "read_method": "oracle-cdc-logminer",
  "object": "SAMPLE.TBL",
  "uuid": "c504f4bc-0ffc-4a1a-84df-6aba382fa651",
  "read_timestamp": "2019-11-07T07:37:20.808Z",
  "source_timestamp": "2019-11-07T02:19:39",
  "source_metadata": {
    "log_file": "",
    "scn": 158691504732555,
    "row_id": "AAAGYPAATAAPIC5AAC",
    "is_deleted": true,
    "database": "",
    "schema": "ROOT",
    "table": "SAMPLE",
    "change_type": "DELETE",
    "tx_id": "",
    "rs_id": "0x006cf4.00056b26.0011",
    "ssn": 0
  },
  "payload": {"THIS_IS_MY_PK": "1231535353", "FIELD1": null, "FIELD2": "TLV"}
}"""

READ_METHODS = {
    "mysql": "mysql-cdc-binlog",
    "oracle": "oracle-cdc-logminer",
    "postgresql": "postgres-cdc-wal",
    "sqlserver": "sqlserver-cdc",
    "spanner": "spanner-cdc",
    "salesforce": "salesforce-cdc",
    "mongodb": "mongodb-cdc",
}

METADATA = {
    "mysql": {
        "database": "shop",
        "table": "orders",
        "log_file": "mysql-bin.000009",
        "log_position": 900,
        "primary_keys": ["id"],
        "is_deleted": False,
        "change_type": "INSERT",
    },
    "oracle": {
        "database": "DB1",
        "schema": "SALES",
        "table": "ORDERS",
        "log_file": "",
        "scn": 100,
        "row_id": "AAAPwRAALAAMzMBABD",
        "is_deleted": False,
        "change_type": "INSERT",
        "tx_id": "7.12.3305",
        "rs_id": "0x0073c9.000a4e4c.01d0",
        "ssn": 1,
    },
    "postgresql": {
        "schema": "public",
        "table": "orders",
        "is_deleted": False,
        "change_type": "INSERT",
        "tx_id": "5123",
        "lsn": "0/16B3748",
        "primary_keys": ["id"],
    },
    "sqlserver": {
        "database": 5,
        "schema": ["dbo"],
        "table": "orders",
        "is_deleted": False,
        "lsn": "0000002a:00000bb8:0003",
        "tx_id": "0000:00001a2b",
        "physical_location": [1, 312, 4],
        "replication_index": ["id"],
        "change_type": "INSERT",
    },
    "spanner": {
        "commit_timestamp": "2024-02-29T12:00:00.123456789Z",
        "snapshot": False,
        "project_id": "p",
        "instance_id": "i",
        "database_id": "d",
        "change_stream_name": "cs",
        "table": "Orders",
        "server_transaction_id": "tx-1",
        "record_sequence": "00000001",
        "mod_index": "0",
        "transaction_tag": "",
        "system_transaction": "false",
        "number_of_records_in_transaction": 1,
        "value_capture_type": "NEW_ROW",
        "mod_type": "INSERT",
        "primary_keys": ["id"],
        "is_deleted": False,
    },
    "salesforce": {
        "object_name": "Account",
        "domain": "example.my.salesforce.com",
        "is_deleted": False,
        "change_type": "INSERT",
        "primary_keys": ["Id"],
    },
    "mongodb": {
        "database": "shop",
        "collection": "orders",
        "change_type": "CREATE",
        "is_deleted": False,
        "primary_keys": ["_id"],
    },
}

PAYLOADS = {
    "salesforce": {"Id": "001xx000003DGb2AAG", "Name": "Acme"},
    "mongodb": {"_id": "65e0c0ffee", "total": 5},
}


def make_event(source_type: str, meta: dict | None = None, **top) -> dict:
    """A valid CDC event of the source type; `meta` entries set to None are removed."""
    metadata = copy.deepcopy(METADATA[source_type])
    for field, value in (meta or {}).items():
        if value is None:
            metadata.pop(field, None)
        else:
            metadata[field] = value
    event = {
        "stream_name": f"projects/p/locations/l/streams/{STREAM}",
        "read_method": READ_METHODS[source_type],
        "object": "fallback_object",
        "schema_key": "abc123",
        "uuid": f"uuid-{source_type}",
        "read_timestamp": "2024-02-29T12:00:05.000Z",
        "source_timestamp": "2024-02-29T12:00:00.000Z",
        "sort_keys": [],
        "source_metadata": metadata,
        "payload": copy.deepcopy(PAYLOADS.get(source_type, {"id": 1, "total": 5})),
    }
    event.update(top)
    return event


def flat(event: dict, declared_keys=None) -> dict:
    row = flatten_event(json.dumps(event), STREAM, DecodeSettings(declared_keys=declared_keys))
    assert set(row) == set(FIELDS)
    return row


def ok(event: dict, declared_keys=None) -> dict:
    row = flat(event, declared_keys)
    assert row["error"] is None, row["error"]
    return row


def error_of(event_or_line) -> str:
    line = event_or_line if isinstance(event_or_line, str) else json.dumps(event_or_line)
    row = flatten_event(line, STREAM)
    assert set(row) == set(FIELDS)
    assert row["error"] is not None
    assert all(row[field] is None for field in FIELDS if field != "error")
    return row["error"]


def micros(text: str) -> int:
    return parse_instant_ns(text) // 1000


# --- the source document's Oracle example -------------------------------------------------


def test_oracle_db_example_events():
    declared = {("datastream", STREAM, "ROOT.SAMPLE"): ["THIS_IS_MY_PK"]}
    calls = []

    def lookup(system, name, table):
        calls.append((system, name, table))
        return declared.get((system, name, table))

    settings = DecodeSettings(declared_keys=lookup)
    rows = [flatten_event(line, STREAM, settings) for line in (ORACLE_DB_INSERT, ORACLE_DB_UPDATE)]
    rows.append(flatten_event(ORACLE_DB_DELETE, STREAM, settings))
    assert [row["error"] for row in rows] == [None, None, None]
    assert calls == [("datastream", STREAM, "ROOT.SAMPLE")] * 3
    assert [row["op"] for row in rows] == ["insert", "update", "delete"]
    assert {row["source_type"] for row in rows} == {"oracle"}
    assert {row["source_table"] for row in rows} == {"ROOT.SAMPLE"}
    assert {row["key_json"] for row in rows} == {'{"THIS_IS_MY_PK":"1231535353"}'}
    assert rows[0]["row_image"] == {
        "THIS_IS_MY_PK": '"1231535353"',
        "FIELD1": '"foo"',
        "FIELD2": '"TLV"',
    }
    assert rows[1]["row_image"]["FIELD1"] == "null"
    assert [row["committed_at"] for row in rows] == [
        int(dt.datetime(2019, 11, 7, 2, minute, 39, tzinfo=dt.UTC).timestamp()) * 10**6
        for minute in (15, 17, 19)
    ]
    assert [row["order_ts"] for row in rows] == [row["committed_at"] for row in rows]
    assert [row["txn_id"] for row in rows] == [f"uuid:{row['event_id']}" for row in rows]
    assert rows[0]["event_id"] == "d7989206-380f-0e81-8056-240501101100"
    assert not any(row["is_backfill"] for row in rows)
    assert rows[1]["sort_pos"] < rows[2]["sort_pos"]  # same record set, next offset


def test_oracle_db_without_a_declared_key_is_keyed_by_its_row_id():
    """Oracle events carry no primary_keys; keyed by the whole row, an update would leave the
    old row live beside the new one."""
    row = flatten_event(ORACLE_DB_UPDATE, STREAM)
    assert row["key_json"] == '{"ROWID":"AAAGYPAATAAPIC5AAB"}'
    update = json.loads(ORACLE_DB_UPDATE)
    update["payload"]["FIELD2"] = "changed"
    assert flatten_event(json.dumps(update), STREAM)["key_json"] == row["key_json"]


def test_oracle_db_without_key_or_row_id_is_quarantined():
    event = make_event("oracle", {"row_id": None})
    assert "source_metadata.row_id" in error_of(event)


def test_a_declared_oracle_db_key_wins_over_the_row_id():
    event = make_event("oracle")
    row = ok(event, declared_keys=lambda *_: ["id"])
    assert row["key_json"] == '{"id":1}'


# --- every source type --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source_type", "table", "key_json"),
    [
        ("mysql", "shop.orders", '{"id":1}'),
        ("oracle", "SALES.ORDERS", '{"ROWID":"AAAPwRAALAAMzMBABD"}'),
        ("postgresql", "public.orders", '{"id":1}'),
        ("sqlserver", "dbo.orders", '{"id":1}'),
        ("spanner", "Orders", '{"id":1}'),
        ("salesforce", "Account", '{"Id":"001xx000003DGb2AAG"}'),
        ("mongodb", "shop.orders", '{"_id":"65e0c0ffee"}'),
    ],
)
def test_every_source_type(source_type, table, key_json):
    row = ok(make_event(source_type))
    assert row["source_type"] == source_type
    assert row["read_method"] == READ_METHODS[source_type]
    assert row["source_table"] == table
    assert row["key_json"] == key_json
    assert row["op"] == "insert"
    assert row["is_backfill"] is False
    assert row["event_id"] == f"uuid-{source_type}"
    assert row["committed_at"] == row["order_ts"] == micros("2024-02-29T12:00:00Z")


@pytest.mark.parametrize(
    ("source_type", "txn_id"),
    [
        ("mysql", "binlog:mysql-bin.000009:900"),
        ("oracle", "tx:7.12.3305"),
        ("postgresql", "tx:5123"),
        ("sqlserver", "tx:0000:00001a2b"),
        ("spanner", "tx:tx-1"),
        ("salesforce", "uuid:uuid-salesforce"),
        ("mongodb", "uuid:uuid-mongodb"),
    ],
)
def test_transaction_ids(source_type, txn_id):
    assert ok(make_event(source_type))["txn_id"] == txn_id


@pytest.mark.parametrize("source_type", ["oracle", "postgresql", "sqlserver"])
def test_empty_tx_id_falls_back_to_the_event(source_type):
    assert ok(make_event(source_type, {"tx_id": ""}))["txn_id"] == f"uuid:uuid-{source_type}"
    assert ok(make_event(source_type, {"tx_id": None}))["txn_id"] == f"uuid:uuid-{source_type}"


@pytest.mark.parametrize(
    ("read_method", "source_type"),
    [
        ("postgresql-backfill", "postgresql"),
        ("POSTGRES-CDC-WAL", "postgresql"),
        ("sqlserver-backfill", "sqlserver"),
        ("oracle-supplementation", "oracle"),
        ("mongodb-backfill", "mongodb"),
    ],
)
def test_read_method_prefix_wins_over_metadata(read_method, source_type):
    # MySQL-looking metadata: the read_method still decides
    event = make_event("mysql", read_method=read_method)
    event["source_metadata"].update(METADATA[source_type])
    event["payload"].update(PAYLOADS.get(source_type, {}))
    assert ok(event)["source_type"] == source_type


@pytest.mark.parametrize("read_method", [None, "", "db2-cdc", "unknown"])
@pytest.mark.parametrize(
    ("source_type", "remove"),
    [
        ("mysql", []),
        ("oracle", []),
        ("postgresql", []),
        ("sqlserver", ["replication_index"]),
        ("sqlserver", ["physical_location"]),
        ("spanner", ["change_stream_name"]),
        ("salesforce", ["domain"]),
        ("mongodb", []),
    ],
)
def test_source_type_from_telltale_metadata(read_method, source_type, remove):
    event = make_event(source_type, dict.fromkeys(remove), read_method=read_method)
    if read_method is None:
        del event["read_method"]
    assert flat(event)["source_type"] == source_type


@pytest.mark.parametrize("read_method", ["db2-cdc", None])
def test_unknown_source_type(read_method):
    event = make_event("mongodb", read_method=read_method, source_metadata={"table": "t"})
    assert error_of(event) == f"unknown source type for read_method {read_method!r}"


# --- source_table -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source_type", "meta"),
    [
        ("mysql", {"database": None}),
        ("oracle", {"schema": ""}),
        ("sqlserver", {"schema": []}),
        ("mongodb", {"collection": None}),
        ("salesforce", {"object_name": None}),
        ("spanner", {"table": None}),
    ],
)
def test_source_table_falls_back_to_object(source_type, meta):
    assert ok(make_event(source_type, meta))["source_table"] == "fallback_object"


def test_sqlserver_schema_as_plain_string():
    assert ok(make_event("sqlserver", {"schema": "sales"}))["source_table"] == "sales.orders"


def test_missing_table_and_object_is_an_error():
    event = make_event("mysql", {"table": None})
    del event["object"]
    assert error_of(event).startswith("missing field: source_metadata.database/")


# --- op -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change_type", "is_deleted", "op"),
    [
        ("INSERT", False, "insert"),
        ("CREATE", False, "insert"),
        ("UPDATE", False, "update"),
        ("UPDATE-INSERT", False, "update"),
        ("UPDATE-DELETE", False, "delete"),
        ("DELETE", False, "delete"),
        ("DELETE", True, "delete"),
        ("UPDATE", True, "delete"),
        ("update", False, "update"),
    ],
)
def test_op_mapping(change_type, is_deleted, op):
    event = make_event("mysql", {"change_type": change_type, "is_deleted": is_deleted})
    assert ok(event)["op"] == op


@pytest.mark.parametrize(("mod_type", "op"), [("INSERT", "insert"), ("UPDATE", "update")])
def test_spanner_mod_type(mod_type, op):
    assert ok(make_event("spanner", {"mod_type": mod_type}))["op"] == op


def test_spanner_delete():
    assert ok(make_event("spanner", {"mod_type": "DELETE", "is_deleted": True}))["op"] == "delete"
    assert ok(make_event("spanner", {"mod_type": "DELETE"}))["op"] == "delete"


def test_mysql_update_pair_is_one_binlog_event():
    delete = ok(make_event("mysql", {"change_type": "UPDATE-DELETE"}))
    insert = ok(make_event("mysql", {"change_type": "UPDATE-INSERT"}))
    assert (delete["op"], insert["op"]) == ("delete", "update")
    assert delete["txn_id"] == insert["txn_id"] == "binlog:mysql-bin.000009:900"
    assert delete["sort_pos"] == insert["sort_pos"]


def test_unknown_or_missing_change_type():
    assert error_of(make_event("mysql", {"change_type": "MERGE"})) == (
        "unknown change_type 'MERGE'"
    )
    assert error_of(make_event("mysql", {"change_type": None})) == (
        "missing field: source_metadata.change_type"
    )
    assert error_of(make_event("spanner", {"mod_type": "UPSERT"})) == "unknown mod_type 'UPSERT'"


# --- backfill -----------------------------------------------------------------------------

BACKFILL_NO_POSITION = {
    "log_file": "",
    "log_position": None,
    "rs_id": None,
    "ssn": None,
    "lsn": None,
    "record_sequence": None,
    "mod_index": None,
    "change_type": None,
    "mod_type": None,
}


@pytest.mark.parametrize(
    ("source_type", "read_method"),
    [
        ("mysql", "mysql-backfill-fulldump"),
        ("mysql", "mysql-backfill-incremental"),
        ("oracle", "oracle-backfill"),
        ("oracle", "oracle-supplementation"),
        ("postgresql", "postgresql-backfill"),
        ("sqlserver", "sqlserver-backfill"),
        ("salesforce", "salesforce-backfill"),
        ("mongodb", "mongodb-backfill"),
        ("spanner", "spanner-backfill"),
    ],
)
def test_backfill_reads(source_type, read_method):
    meta = {k: v for k, v in BACKFILL_NO_POSITION.items() if k in METADATA[source_type]}
    event = make_event(source_type, meta, read_method=read_method)
    row = ok(event)
    assert row["is_backfill"] is True
    assert row["op"] == "snapshot"
    assert row["sort_pos"] == pos_instant(parse_instant_ns("2024-02-29T12:00:00Z"))
    assert row["txn_id"] == f"uuid:uuid-{source_type}"
    assert row["order_ts"] == micros("2024-02-29T12:00:00Z")


def test_spanner_snapshot_flag_is_a_backfill():
    row = ok(make_event("spanner", {"snapshot": True, "record_sequence": None}))
    assert (row["is_backfill"], row["op"]) == (True, "snapshot")


def test_backfill_of_a_deleted_row_is_a_delete():
    event = make_event("mysql", {"is_deleted": True}, read_method="mysql-backfill-fulldump")
    row = ok(event)
    assert (row["is_backfill"], row["op"]) == (True, "delete")


def test_cdc_read_is_not_a_backfill():
    assert ok(make_event("mysql"))["is_backfill"] is False
    assert ok(make_event("spanner", {"snapshot": False}))["is_backfill"] is False


def test_oracle_db_supplementation_with_a_log_position_is_ordered_as_cdc():
    row = ok(make_event("oracle", read_method="oracle-supplementation"))
    assert row["is_backfill"] is False
    assert row["op"] != "snapshot"


# --- sort positions -----------------------------------------------------------------------


def sort_pos(source_type: str, meta: dict | None = None, **top) -> str:
    return ok(make_event(source_type, meta, **top))["sort_pos"]


def assert_increasing(positions: list[str]) -> None:
    assert positions == sorted(positions)
    assert len(set(positions)) == len(positions)


def test_mysql_order_is_log_file_then_position():
    assert_increasing(
        [
            sort_pos("mysql", {"log_file": "mysql-bin.000009", "log_position": 4}),
            sort_pos("mysql", {"log_file": "mysql-bin.000009", "log_position": 900}),
            sort_pos("mysql", {"log_file": "mysql-bin.000009", "log_position": 1000}),
            sort_pos("mysql", {"log_file": "mysql-bin.000010", "log_position": 4}),
            sort_pos("mysql", {"log_file": "mysql-bin.999999", "log_position": 4}),
            sort_pos("mysql", {"log_file": "mysql-bin.1000000", "log_position": 4}),
        ]
    )


def test_mysql_position_as_text_and_timestamps_do_not_matter():
    as_number = sort_pos("mysql", {"log_position": 900})
    assert sort_pos("mysql", {"log_position": "900"}) == as_number
    later_clock = sort_pos("mysql", {"log_position": 900}, source_timestamp="2030-01-01T00:00:00Z")
    assert later_clock == as_number


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        ({"log_position": None}, "missing position: log_file/log_position"),
        ({"log_file": ""}, "missing position: log_file/log_position"),
        ({"log_file": "mysql-bin"}, "bad position: log_file 'mysql-bin' has no sequence number"),
        ({"log_position": -1}, "bad position: log_position -1 is not a non-negative integer"),
        ({"log_position": "9x"}, "bad position: log_position '9x' is not a non-negative integer"),
        ({"log_position": 1.5}, "bad position: log_position Decimal('1.5') is not a non-negative"),
        ({"log_file": "bin.1234567890123"}, "bad position: 1234567890123 does not fit 12"),
    ],
)
def test_mysql_position_errors(meta, reason):
    assert error_of(make_event("mysql", meta)).startswith(reason)


def test_oracle_db_order_is_rs_id_parts_then_ssn():
    assert_increasing(
        [
            sort_pos("oracle", {"rs_id": "0x9.0.0", "ssn": 5}),
            sort_pos("oracle", {"rs_id": "0x9.1.0", "ssn": 0}),
            sort_pos("oracle", {"rs_id": " 0x000009.000001.0010 ", "ssn": 0}),
            sort_pos("oracle", {"rs_id": "0x000009.000001.0010", "ssn": 1}),
            sort_pos("oracle", {"rs_id": "0x000009.000001.0010", "ssn": 10}),
            sort_pos("oracle", {"rs_id": "0x00000a.000000.0000", "ssn": 0}),
            sort_pos("oracle", {"rs_id": "0x10.0.0", "ssn": 0}),
            sort_pos("oracle", {"rs_id": "0x006cf4.00056b26.0010", "ssn": 0}),
            sort_pos("oracle", {"rs_id": "0x006cf4.00056b26.0011", "ssn": 0}),
            sort_pos("oracle", {"rs_id": "0x0073c9.000a4e4c.01d0", "ssn": 67}),
        ]
    )
    assert sort_pos("oracle", {"rs_id": "0073c9.000a4e4c.01d0"}) == sort_pos(
        "oracle", {"rs_id": "0x0073C9.000A4E4C.01D0"}
    )


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        ({"rs_id": None}, "missing position: rs_id/ssn"),
        ({"ssn": None}, "missing position: rs_id/ssn"),
        ({"rs_id": "0x12.zz.1"}, "bad position: rs_id 'zz' is not hexadecimal"),
        ({"rs_id": "0x12..1"}, "bad position: rs_id '' is not hexadecimal"),
        ({"ssn": "-3"}, "bad position: ssn '-3' is not a non-negative integer"),
    ],
)
def test_oracle_db_position_errors(meta, reason):
    assert error_of(make_event("oracle", meta)) == reason


def test_postgresql_order_is_timestamp_then_lsn():
    t0, t1 = "2024-02-29T12:00:00Z", "2024-02-29T12:00:00.001Z"
    assert_increasing(
        [
            sort_pos("postgresql", {"lsn": "0/FF"}, source_timestamp=t0),
            sort_pos("postgresql", {"lsn": "1/0"}, source_timestamp=t0),
            sort_pos("postgresql", {"lsn": "1/A"}, source_timestamp=t0),
            sort_pos("postgresql", {"lsn": "0/1"}, source_timestamp=t1),
            sort_pos("postgresql", {"lsn": "FFFFFFFF/FFFFFFFF"}, source_timestamp=t1),
        ]
    )
    assert sort_pos("postgresql", {"lsn": "255"}) == sort_pos("postgresql", {"lsn": "0/ff"})
    assert sort_pos("postgresql", {"lsn": 4294967296}) == sort_pos("postgresql", {"lsn": "1/0"})


@pytest.mark.parametrize(
    ("lsn", "reason"),
    [
        (None, "missing position: lsn"),
        ("", "missing position: lsn"),
        ("0/XYZ", "bad position: lsn '0/XYZ' is not a non-negative integer"),
        ("1/2/3", "bad position: lsn '1/2/3' is not a non-negative integer"),
    ],
)
def test_postgresql_position_errors(lsn, reason):
    assert error_of(make_event("postgresql", {"lsn": lsn})) == reason


def test_sqlserver_order_is_timestamp_then_lsn():
    t0, t1 = "2024-02-29T12:00:00Z", "2024-02-29T12:00:01Z"
    assert_increasing(
        [
            sort_pos("sqlserver", {"lsn": "0000002a:00000bb8:0003"}, source_timestamp=t0),
            sort_pos("sqlserver", {"lsn": "0000002a:00000bb8:0004"}, source_timestamp=t0),
            sort_pos("sqlserver", {"lsn": "0000002a:00000bb9:0001"}, source_timestamp=t0),
            sort_pos("sqlserver", {"lsn": "0000002b:00000001:0001"}, source_timestamp=t0),
            sort_pos("sqlserver", {"lsn": "00000001:00000001:0001"}, source_timestamp=t1),
        ]
    )


@pytest.mark.parametrize(
    ("lsn", "parts"),
    [
        ("0x0000002A00000BB8F003", "0000002a:00000bb8:f003"),
        ("0000002A00000BB8F003", "0000002a:00000bb8:f003"),
        ("42000000300061443", "0000002a:00000bb8:f003"),
        (42000000300061443, "0000002a:00000bb8:f003"),
        ("0x0000002AF0000BB80001", "0000002a:f0000bb8:0001"),
        ("42402653484000001", "0000002a:f0000bb8:0001"),
    ],
)
def test_sqlserver_single_number_lsn_encodes_like_its_parts(lsn, parts):
    assert sort_pos("sqlserver", {"lsn": lsn}) == sort_pos("sqlserver", {"lsn": parts})


@pytest.mark.parametrize(
    ("lsn", "reason"),
    [
        (None, "missing position: lsn"),
        ("0000002a:zz:0003", "bad position: lsn 'zz' is not hexadecimal"),
        ("12ab", "bad position: lsn '12ab' is not a non-negative integer"),
    ],
)
def test_sqlserver_position_errors(lsn, reason):
    assert error_of(make_event("sqlserver", {"lsn": lsn})) == reason


def test_spanner_order_is_commit_timestamp_record_sequence_mod_index():
    def pos(commit, record_sequence, mod_index):
        meta = {
            "commit_timestamp": commit,
            "record_sequence": record_sequence,
            "mod_index": mod_index,
        }
        return sort_pos("spanner", meta)

    assert_increasing(
        [
            pos("2024-02-29T12:00:00.123456789Z", "00000001", "0"),
            pos("2024-02-29T12:00:00.123456789Z", "00000001", "1"),
            pos("2024-02-29T12:00:00.123456789Z", "00000001", "10"),
            pos("2024-02-29T12:00:00.123456789Z", "00000002", "0"),
            pos("2024-02-29T12:00:00.12345679Z", "00000000", "0"),
            pos("2024-02-29T13:00:00.2+01:00", "00000000", "0"),
            pos("2024-02-29T12:00:00.3Z", "00000000", "0"),
        ]
    )


def test_spanner_commit_timestamp_defaults_to_source_timestamp():
    without = sort_pos("spanner", {"commit_timestamp": None}, source_timestamp=1709208000000)
    with_commit = sort_pos("spanner", {"commit_timestamp": "2024-02-29T12:00:00Z"})
    assert without == with_commit


@pytest.mark.parametrize(
    ("meta", "reason"),
    [
        ({"record_sequence": None}, "missing position: record_sequence/mod_index"),
        ({"mod_index": None}, "missing position: record_sequence/mod_index"),
        ({"record_sequence": "x1"}, "bad position: record_sequence 'x1' is not a non-negative"),
        (
            {"commit_timestamp": "soon"},
            "bad position: commit_timestamp: not an ISO-8601 instant: 'soon'",
        ),
    ],
)
def test_spanner_position_errors(meta, reason):
    assert error_of(make_event("spanner", meta)).startswith(reason)


@pytest.mark.parametrize("source_type", ["salesforce", "mongodb"])
def test_sort_keys_order_after_source_timestamp(source_type):
    t0, t1 = "2024-02-29T12:00:00Z", "2024-02-29T12:00:01Z"
    assert_increasing(
        [
            sort_pos(source_type, source_timestamp=t0, sort_keys=[]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=[-5]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=[3]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=[3, "a"]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=[3, "b"]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=[3, "ba"]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=[10]),
            sort_pos(source_type, source_timestamp=t0, sort_keys=["a"]),
            sort_pos(source_type, source_timestamp=t1, sort_keys=[-9]),
        ]
    )
    without = make_event(source_type, source_timestamp=t0)
    del without["sort_keys"]
    assert ok(without)["sort_pos"] == sort_pos(source_type, source_timestamp=t0, sort_keys=[])


@pytest.mark.parametrize(
    ("sort_keys", "reason"),
    [
        ("abc", "bad position: sort_keys 'abc' is not an array"),
        ([1.5], "bad position: sort_keys element Decimal('1.5') is neither string nor long"),
        ([True], "bad position: sort_keys element True is neither string nor long"),
        ([2**63], "bad position: 9223372036854775808 is not a 64-bit integer"),
    ],
)
def test_sort_keys_errors(sort_keys, reason):
    assert error_of(make_event("mongodb", sort_keys=sort_keys)) == reason


# --- timestamps ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source_timestamp",
    [
        "2024-02-29T12:00:00",
        "2024-02-29T12:00:00Z",
        "2024-02-29T12:00:00.000Z",
        "2024-02-29 12:00:00.000000",
        "2024-02-29T12:00:00.000000000Z",
        "2024-02-29T13:00:00+01:00",
        "2024-02-29T07:00:00-0500",
        1709208000000,
    ],
)
def test_source_timestamp_forms_are_one_instant(source_timestamp):
    row = ok(make_event("postgresql", source_timestamp=source_timestamp))
    assert row["committed_at"] == row["order_ts"] == 1709208000 * 10**6
    assert row["sort_pos"] == sort_pos("postgresql")


def test_source_timestamps_with_different_precision_order_as_instants():
    texts = [
        "2024-02-29T12:00:00Z",
        "2024-02-29T12:00:00.000001Z",
        "2024-02-29T12:00:00.001",
        "2024-02-29T12:00:00.1Z",
        "2024-02-29T13:00:00.9+01:00",
        "2024-02-29T12:00:01Z",
    ]
    positions = [sort_pos("sqlserver", source_timestamp=text) for text in texts]
    assert_increasing(positions)
    committed = [ok(make_event("salesforce", source_timestamp=t))["committed_at"] for t in texts]
    assert committed == sorted(committed)


def test_epoch_millis_source_timestamp_from_json_number():
    row = ok(make_event("mysql", source_timestamp=1709208000123))
    assert row["committed_at"] == 1709208000123000


# --- keys ---------------------------------------------------------------------------------


def test_key_precedence_declared_over_primary_keys_over_replication_index_over_row():
    event = make_event(
        "sqlserver",
        {"primary_keys": ["id"], "replication_index": ["code"]},
        payload={"id": 1, "code": "A", "total": 5},
    )

    def key(row: dict) -> tuple[str, str]:
        return row["key_json"], row["key_basis"]

    assert key(ok(event, lambda *_: ["code", "total"])) == ('{"code":"A","total":5}', "declared")
    assert key(ok(event, lambda *_: None)) == ('{"id":1}', "primary_keys")
    assert key(ok(event, lambda *_: [])) == ('{"id":1}', "primary_keys")
    assert key(ok(event)) == ('{"id":1}', "primary_keys")
    event["source_metadata"]["primary_keys"] = []
    assert key(ok(event)) == ('{"code":"A"}', "replication_index")
    event["source_metadata"]["replication_index"] = []
    assert key(ok(event)) == ('{"code":"A","id":1,"total":5}', "whole_row")


def test_an_oracle_db_row_id_is_no_real_key_and_a_declared_key_is():
    assert ok(make_event("oracle"))["key_basis"] == "row_id"
    assert ok(make_event("oracle"), declared_keys=lambda *_: ["id"])["key_basis"] == "declared"


def test_declared_keys_are_asked_with_the_contract_identity():
    calls = []
    ok(make_event("mysql"), lambda *args: calls.append(args))
    assert calls == [("datastream", STREAM, "shop.orders")]


def test_composite_key_is_canonical():
    event = make_event("mysql", {"primary_keys": ["b", "a"]}, payload={"a": 2**60, "b": "x"})
    assert ok(event)["key_json"] == '{"a":"1152921504606846976","b":"x"}'


@pytest.mark.parametrize(
    ("meta", "declared", "reason"),
    [
        ({"primary_keys": ["ID"]}, None, "key column 'ID' missing from payload"),
        ({}, ["id", "region"], "key column 'region' missing from payload"),
        ({"primary_keys": "id"}, None, "bad source_metadata.primary_keys: 'id'"),
        ({"primary_keys": ["id", 3]}, None, "bad source_metadata.primary_keys: ['id', 3]"),
    ],
)
def test_key_errors(meta, declared, reason):
    row = flat(make_event("mysql", meta), (lambda *_: declared) if declared else None)
    assert row["error"] == reason


def test_failing_declared_keys_lookup_is_reported():
    def broken(*_):
        raise KeyError("settings")

    row = flat(make_event("mysql"), broken)
    assert row["error"] == "declared_keys failed: KeyError: 'settings'"


# --- values -------------------------------------------------------------------------------


def test_row_image_values_use_the_contract_typing():
    line = json.dumps(make_event("mysql")).replace(
        '"payload": {"id": 1, "total": 5}',
        '"payload": {"id": 1, "big": 12345678901234567890, "exact": 2.50, "money": '
        '12345678901234567.891, "ratio": 0.1, "nan": NaN, "inf": -Infinity, "ok": true, '
        '"none": null, "name": "Zoë", "doc": {"z": [1, 2.0], "a": "b"}, "when": '
        '"2024-02-29T12:00:00.5+01:00"}',
    )
    row = flatten_event(line, STREAM)
    assert row["error"] is None
    assert row["row_image"] == {
        "id": "1",
        "big": '"12345678901234567890"',
        "exact": "2.5",
        "money": '"12345678901234567.891"',
        "ratio": "0.1",
        "nan": '"NaN"',
        "inf": '"-Infinity"',
        "ok": "true",
        "none": "null",
        "name": '"Zoë"',
        "doc": '{"a":"b","z":[1,2]}',
        "when": '"2024-02-29T12:00:00.5+01:00"',
    }
    assert row["key_json"] == '{"id":1}'


def test_empty_payload_of_a_keyless_table():
    event = make_event("mysql", {"primary_keys": None}, payload={})
    assert ok(event)["key_json"] == "{}"


# --- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "malformed line JSON: "),
        ("", "malformed line JSON: "),
        ('{"uuid": "a"} trailing', "malformed line JSON: "),
        ("[1, 2]", "malformed line JSON: not an object"),
        ("null", "malformed line JSON: not an object"),
    ],
)
def test_unreadable_lines(line, reason):
    assert error_of(line).startswith(reason)


def test_line_that_is_not_text():
    row = flatten_event(None, STREAM)  # type: ignore[arg-type]
    assert row["error"] == "malformed line JSON: no text"


def _without(source_type: str, field: str) -> dict:
    event = make_event(source_type)
    del event[field]
    return event


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (_without("mysql", "uuid"), "missing field: uuid"),
        (make_event("mysql", uuid=""), "missing field: uuid"),
        (make_event("mysql", uuid=7), "missing field: uuid"),
        (make_event("mysql", read_method=5), "bad read_method: 5"),
        (make_event("mysql", source_metadata=[1]), "source_metadata is not an object"),
        (_without("mysql", "source_timestamp"), "missing field: source_timestamp"),
        (make_event("mysql", source_timestamp=None), "missing field: source_timestamp"),
        (
            make_event("mysql", source_timestamp="2019-11-07 02:15"),
            "bad source_timestamp: not an ISO-8601 instant: '2019-11-07 02:15'",
        ),
        (
            make_event("mysql", source_timestamp=True),
            "bad source_timestamp: not an instant: True",
        ),
        (_without("mysql", "payload"), "missing field: payload"),
        (make_event("mysql", payload=[1, 2]), "payload is not an object"),
        (make_event("mysql", payload="x"), "payload is not an object"),
    ],
)
def test_event_errors(event, reason):
    assert error_of(event) == reason


def test_cdc_event_without_metadata_has_no_change_type():
    event = make_event("mysql", source_metadata=None)
    assert error_of(event) == "missing field: source_metadata.change_type"


def test_backfill_without_metadata_uses_object_as_table():
    event = make_event("mysql", read_method="mysql-backfill-fulldump")
    del event["source_metadata"]
    row = ok(event)
    assert (row["source_table"], row["op"], row["key_json"]) == (
        "fallback_object",
        "snapshot",
        '{"id":1,"total":5}',
    )


# --- Avro ---------------------------------------------------------------------------------

DATETIME_TYPE = {
    "type": "record",
    "name": "datetime",
    "fields": [
        # as Datastream documents it: the logical types sit on the fields
        {"name": "date", "type": "int", "logicalType": "date"},
        {"name": "time", "type": "long", "logicalType": "time-micros"},
    ],
}

AVRO_SCHEMA = mysql_event_schema(
    "ds_event",
    [
        {"name": "id", "type": ["null", "long"]},
        {
            "name": "price",
            "type": [
                "null",
                {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            ],
        },
        {
            "name": "huge",
            "type": [
                "null",
                {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": 30,
                    "scale": 3,
                },
            ],
        },
        {"name": "born", "type": ["null", {"type": "int", "logicalType": "date"}]},
        {
            "name": "seen_at",
            "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
        },
        {"name": "local_at", "type": ["null", DATETIME_TYPE]},
        {"name": "other_local_at", "type": ["null", "datetime"]},
        {"name": "blob", "type": ["null", "bytes"]},
        {"name": "ratio", "type": ["null", "double"]},
        {"name": "counter", "type": ["null", "long"]},
        {"name": "active", "type": ["null", "boolean"]},
        {"name": "name", "type": ["null", "string"]},
        {"name": "doc", "type": ["null", {"type": "string", "logicalType": "json"}]},
        {"name": "missing", "type": ["null", "string"]},
    ],
)


def avro_record(uuid: str, position: int, **payload) -> dict:
    values = {
        "id": 1,
        "price": Decimal("12.34"),
        "huge": Decimal("123456789012345678901234567.891"),
        "born": dt.date(2024, 2, 29),
        "seen_at": dt.datetime(2024, 2, 29, 12, 0, 0, 123456, tzinfo=dt.UTC),
        "local_at": {"date": 19782, "time": (13 * 3600 + 5) * 10**6 + 7},
        "other_local_at": {"date": -1, "time": 0},
        "blob": b"\x00\x01\xfe",
        "ratio": 0.1,
        "counter": 2**60,
        "active": True,
        "name": "Zoë",
        "doc": '{"b": [1, 2.5], "a": null}',
        "missing": None,
    }
    values.update(payload)
    return {
        "stream_name": "projects/p/locations/l/streams/s",
        "read_method": "mysql-cdc-binlog",
        "object": "shop_orders",
        "schema_key": "k",
        "uuid": uuid,
        "read_timestamp": dt.datetime(2024, 2, 29, 12, 0, 5, tzinfo=dt.UTC),
        "source_timestamp": dt.datetime(2024, 2, 29, 12, 0, 0, 250000, tzinfo=dt.UTC),
        "sort_keys": ["mysql-bin.000009", position],
        "source_metadata": {
            "log_file": "mysql-bin.000009",
            "log_position": position,
            "primary_keys": ["id"],
            "is_deleted": False,
            "database": "shop",
            "table": "orders",
            "change_type": "INSERT",
        },
        "payload": values,
    }


def avro_file(records: list[dict], **writer_options) -> bytes:
    return avro_container(AVRO_SCHEMA, records, **writer_options)


def test_avro_events_round_trip_into_flatten_event():
    data = avro_file([avro_record("u-1", 900), avro_record("u-2", 1000, ratio=float("nan"))])
    events = list(avro_events(io.BytesIO(data)))
    assert [(number, reason) for number, _, reason in events] == [(1, None), (2, None)]

    first = json.loads(events[0][1])
    assert first["read_timestamp"] == "2024-02-29T12:00:05.000000Z"
    assert first["source_timestamp"] == "2024-02-29T12:00:00.250000Z"
    assert first["sort_keys"] == ["mysql-bin.000009", 900]
    assert first["source_metadata"]["log_position"] == 900

    row = flatten_event(events[0][1], STREAM)
    assert row["error"] is None
    assert row["source_type"] == "mysql"
    assert row["source_table"] == "shop.orders"
    assert row["key_json"] == '{"id":1}'
    assert row["committed_at"] == 1709208000250000
    assert row["txn_id"] == "binlog:mysql-bin.000009:900"
    assert row["row_image"] == {
        "id": "1",
        "price": "12.34",
        "huge": '"123456789012345678901234567.891"',
        "born": '"2024-02-29"',
        "seen_at": '"2024-02-29T12:00:00.123456Z"',
        "local_at": '"2024-02-29T13:00:05.000007"',
        "other_local_at": '"1969-12-31T00:00:00.000000"',
        "blob": '"AAH+"',
        "ratio": "0.1",
        "counter": '"1152921504606846976"',
        "active": "true",
        "name": '"Zoë"',
        "doc": '{"a":null,"b":[1,2.5]}',
        "missing": "null",
    }
    second = flatten_event(events[1][1], STREAM)
    assert second["row_image"]["ratio"] == '"NaN"'
    assert row["sort_pos"] < second["sort_pos"]


def test_avro_and_json_forms_of_one_event_flatten_alike():
    data = avro_file([avro_record("u-1", 900, doc=None, local_at=None, other_local_at=None)])
    ((_, avro_line, _),) = avro_events(io.BytesIO(data))
    json_line = json.dumps(
        {
            "stream_name": "projects/p/locations/l/streams/s",
            "read_method": "mysql-cdc-binlog",
            "object": "shop_orders",
            "schema_key": "k",
            "uuid": "u-1",
            "read_timestamp": "2024-02-29T12:00:05.000Z",
            "source_timestamp": "2024-02-29T12:00:00.250Z",
            "sort_keys": ["mysql-bin.000009", 900],
            "source_metadata": avro_record("u-1", 900)["source_metadata"],
            "payload": {
                "id": 1,
                "price": 12.34,
                "huge": "123456789012345678901234567.891",
                "born": "2024-02-29",
                "seen_at": "2024-02-29T12:00:00.123456Z",
                "local_at": None,
                "other_local_at": None,
                "blob": "AAH+",
                "ratio": 0.1,
                "counter": 1152921504606846976,
                "active": True,
                "name": "Zoë",
                "doc": None,
                "missing": None,
            },
        }
    )
    from_avro, from_json = flatten_event(avro_line, STREAM), flatten_event(json_line, STREAM)
    # Only the Avro file names its columns' types (its schema); JSON events carry none.
    assert json.loads(from_avro.pop("column_types")) == {
        "id": ["long", "bigint"],
        "price": ["decimal(10,2)", "decimal(10,2)"],
        "huge": ["decimal(30,3)", "decimal(30,3)"],
        "born": ["int:date", "date"],
        "seen_at": ["long:timestamp-micros", "timestamp"],
        "local_at": ["datetime", "timestamp_ntz"],
        "other_local_at": ["datetime", "timestamp_ntz"],
        "blob": ["bytes", "binary"],
        "ratio": ["double", "double"],
        "counter": ["long", "bigint"],
        "active": ["boolean", "boolean"],
        "name": ["string", "string"],
        "doc": ["string:json", "string"],
        "missing": ["string", "string"],
    }
    assert from_json.pop("column_types") is None
    assert from_avro == from_json


def _avro_long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _avro_bytes(data: bytes) -> bytes:
    return _avro_long(len(data)) + data


def container_as_written_by_java(schema: dict, records: list[dict]) -> bytes:
    """A container file whose header keeps the schema text as given (short names, namespaces),
    as Avro's Java library writes it; fastavro's writer would spell every name in full."""
    parsed = fastavro.parse_schema(schema)
    body = io.BytesIO()
    for record in records:
        fastavro.schemaless_writer(body, parsed, record)
    sync = bytes(range(16))
    header = b"Obj\x01" + _avro_long(2)
    header += _avro_bytes(b"avro.schema") + _avro_bytes(json.dumps(schema).encode())
    header += _avro_bytes(b"avro.codec") + _avro_bytes(b"null") + _avro_long(0) + sync
    block = _avro_long(len(records)) + _avro_bytes(body.getvalue()) + sync
    return header + block


def test_avro_named_types_referenced_by_short_and_full_names():
    schema = copy.deepcopy(AVRO_SCHEMA)
    payload = schema["fields"][-1]["type"]
    payload["namespace"] = "types"
    fields = {field["name"]: field for field in payload["fields"]}
    # defined with a dotted name, used by its short name inside the same namespace
    fields["local_at"]["type"][1] = dict(DATETIME_TYPE, name="types.datetime")
    fields["other_local_at"]["type"] = ["null", "datetime"]
    # defined with a namespace attribute, used by its full name
    payload["fields"].append(
        {"name": "third_at", "type": ["null", dict(DATETIME_TYPE, name="dt", namespace="x")]}
    )
    payload["fields"].append({"name": "fourth_at", "type": ["null", "x.dt"]})
    # logical types on the field types, where Avro readers apply them
    typed = {
        "type": "record",
        "name": "typed_datetime",
        "fields": [
            {"name": "date", "type": {"type": "int", "logicalType": "date"}},
            {"name": "time", "type": {"type": "long", "logicalType": "time-micros"}},
        ],
    }
    payload["fields"].append({"name": "fifth_at", "type": typed})
    in_array = dict(DATETIME_TYPE, name="in_array")
    payload["fields"].append({"name": "sixth_at", "type": {"type": "array", "items": in_array}})
    payload["fields"].append({"name": "seventh_at", "type": "in_array"})
    record = avro_record("u-1", 1)
    record["payload"].update(
        third_at={"date": 0, "time": 1},
        fourth_at={"date": 1, "time": 0},
        fifth_at={"date": dt.date(2024, 1, 2), "time": dt.time(3, 4, 5, 6)},
        sixth_at=[{"date": 2, "time": 0}, {"date": 3, "time": 0}],
        seventh_at={"date": 4, "time": 0},
    )
    ((_, line, reason),) = avro_events(io.BytesIO(container_as_written_by_java(schema, [record])))
    assert reason is None
    row = flatten_event(line, STREAM)
    image = row["row_image"]
    types = json.loads(row["column_types"])
    for name in ("local_at", "other_local_at", "third_at", "fourth_at", "fifth_at", "seventh_at"):
        assert types[name] == ["datetime", "timestamp_ntz"], name
    assert types["sixth_at"] == ["array", "string"]
    assert image["local_at"] == '"2024-02-29T13:00:05.000007"'
    assert image["other_local_at"] == '"1969-12-31T00:00:00.000000"'
    assert image["third_at"] == '"1970-01-01T00:00:00.000001"'
    assert image["fourth_at"] == '"1970-01-02T00:00:00.000000"'
    assert image["fifth_at"] == '"2024-01-02T03:04:05.000006"'
    assert image["sixth_at"] == '["1970-01-03T00:00:00.000000","1970-01-04T00:00:00.000000"]'
    assert image["seventh_at"] == '"1970-01-05T00:00:00.000000"'


def test_avro_truncated_file_reports_instead_of_raising():
    records = [avro_record(f"u-{n}", n) for n in range(1, 6)]
    data = avro_file(records, sync_interval=1, codec="deflate")
    events = list(avro_events(io.BytesIO(data[: len(data) - 40])))
    good = [event for event in events if event[2] is None]
    assert [number for number, _, _ in good] == list(range(1, len(good) + 1))
    assert all(line is not None for _, line, _ in good)
    last_number, last_line, reason = events[-1]
    assert (last_number, last_line) == (len(good) + 1, None)
    assert reason.startswith("unreadable Avro record: ")


@pytest.mark.parametrize(
    "data",
    [b"", b"not an avro file at all", b"Obj\x01\xff\xff\xff"],
    ids=["empty", "garbage", "broken-header"],
)
def test_avro_unreadable_header(data):
    ((number, line, reason),) = list(avro_events(io.BytesIO(data)))
    assert (number, line) == (0, None)
    assert reason.startswith("unreadable Avro header: ")


def test_avro_record_with_an_unconvertible_value_does_not_stop_the_file():
    records = [avro_record("u-1", 1, doc="{broken"), avro_record("u-2", 2)]
    events = list(avro_events(io.BytesIO(avro_file(records))))
    assert [(number, line is None) for number, line, _ in events] == [(1, True), (2, False)]
    assert events[0][2].startswith("unconvertible Avro record: ")
    assert flatten_event(events[1][1], STREAM)["event_id"] == "u-2"


def test_avro_file_that_cannot_be_opened_is_one_error(tmp_path):
    ((number, line, reason),) = list(avro_file_events(str(tmp_path / "gone.avro")))
    assert (number, line) == (0, None)
    assert reason.startswith("unreadable file: ")
