"""Self-checks of the Datastream oracle on tiny inputs whose answer is written out by hand."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, time
from decimal import Decimal
from typing import Any

from cdc_warehouse.bench.datastream_avro import DATETIME_RECORD, avro_container, mysql_event_schema
from tests.e2e.oracle_core import canonical_json

from .oracle import canonical_value, expected_marts
from .scenario import (
    ORACLE_DB_KEY,
    ORACLE_DB_TABLE,
    build_scenario,
    declared_keys,
    declared_tables_yaml,
)

ROOT = "datastream/s1/t/2024/05/01/10/00"


def at(hms: str) -> datetime:
    """2024-05-01 at a wall-clock time, UTC."""
    return datetime.fromisoformat(f"2024-05-01T{hms}+00:00")


def mysql(
    uid: str,
    change_type: str,
    row: dict[str, Any],
    ts: str,
    log_file: str = "mysql-bin.000001",
    pos: int = 0,
    read_method: str = "mysql-cdc-binlog",
) -> dict[str, Any]:
    """A minimal MySQL Datastream event of shop.t with key ``id``."""
    return {
        "uuid": uid,
        "read_method": read_method,
        "source_timestamp": ts,
        "sort_keys": [],
        "source_metadata": {
            "database": "shop",
            "table": "t",
            "primary_keys": ["id"],
            "log_file": log_file,
            "log_position": pos,
            "change_type": change_type,
            "is_deleted": change_type in ("DELETE", "UPDATE-DELETE"),
        },
        "payload": row,
    }


def postgres(uid: str, change_type: str, row: dict[str, Any], ts: str, lsn: str, tx: str):
    """A minimal PostgreSQL Datastream event of public.t with key ``id``."""
    return {
        "uuid": uid,
        "read_method": "postgres-cdc-wal",
        "source_timestamp": ts,
        "source_metadata": {
            "schema": "public",
            "table": "t",
            "primary_keys": ["id"],
            "lsn": lsn,
            "tx_id": tx,
            "change_type": change_type,
            "is_deleted": change_type == "DELETE",
        },
        "payload": row,
    }


def jsonl(*events: dict[str, Any] | str) -> bytes:
    """JSON lines; a str is written as is (a malformed line)."""
    lines = [e if isinstance(e, str) else json.dumps(e) for e in events]
    return ("\n".join(lines) + "\n").encode()


def versions(marts: dict[str, Any]) -> list[tuple[str, str, datetime, datetime | None]]:
    """History as (op, key_json + row status, valid_from, valid_to)."""
    out = []
    for h in marts["cdc_history"]:
        row = json.loads(h["row_json"])
        out.append((h["op"], f"{h['key_json']}:{row.get('s')}", h["valid_from"], h["valid_to"]))
    return out


def test_backfill_placement() -> None:
    """Backfill sits before the first CDC event with source_timestamp >= its own."""
    wave = {
        f"{ROOT}/cdc.jsonl": jsonl(
            mysql("u2", "UPDATE", {"id": 1, "s": "C"}, "2024-05-01T10:00:08Z", pos=200),
            mysql("u1", "UPDATE", {"id": 1, "s": "A"}, "2024-05-01T10:00:03.000Z", pos=100),
        ),
        f"{ROOT}/bf.jsonl": jsonl(
            # equal instant to u2, written without Z: goes before u2, differs -> a version
            mysql(
                "b8",
                "INSERT",
                {"id": 1, "s": "B"},
                "2024-05-01T10:00:08",
                read_method="mysql-backfill-fulldump",
            ),
            # between u1 and u2, equal to the open version -> no version
            mysql(
                "b5",
                "INSERT",
                {"id": 1, "s": "A"},
                "2024-05-01T10:00:05.000000Z",
                read_method="mysql-backfill-fulldump",
            ),
            # before everything
            mysql(
                "b1",
                "INSERT",
                {"id": 1, "s": "Z"},
                "2024-05-01T10:00:01Z",
                read_method="mysql-backfill-incremental",
            ),
            # after everything
            mysql(
                "b9",
                "INSERT",
                {"id": 1, "s": "C"},
                "2024-05-01T10:00:09Z",
                read_method="mysql-backfill-incremental",
            ),
        ),
    }
    marts = expected_marts([wave], {})
    k = '{"id":1}'
    assert versions(marts) == [
        ("snapshot", f"{k}:Z", at("10:00:01"), at("10:00:03")),
        ("update", f"{k}:A", at("10:00:03"), at("10:00:08")),
        ("snapshot", f"{k}:B", at("10:00:08"), at("10:00:08")),
        ("update", f"{k}:C", at("10:00:08"), None),
    ]
    [cur] = marts["cdc_current"]
    assert cur["last_op"] == "update"
    assert cur["last_committed_at"] == at("10:00:08")
    assert cur["source_name"] == "s1"
    assert cur["source_table"] == "shop.t"


def test_transaction_grouping() -> None:
    """Consecutive changes of a key in one transaction make one version (state after the last)."""
    wave = {
        f"{ROOT}/pg.jsonl": jsonl(
            postgres(
                "c", "UPDATE", {"id": 3, "s": "third"}, "2024-05-01T10:02:00.250Z", "0/1F80", "600"
            ),
            postgres(
                "a", "INSERT", {"id": 3, "s": "first"}, "2024-05-01T10:02:00.250Z", "0/1F00", "600"
            ),
            postgres(
                "b", "UPDATE", {"id": 3, "s": "second"}, "2024-05-01T10:02:00.250Z", "0/1F40", "600"
            ),
            # another transaction leaving the row as it is: no version
            postgres(
                "d", "UPDATE", {"id": 3, "s": "third"}, "2024-05-01T10:03:00Z", "0/2000", "601"
            ),
            # equal source_timestamp: lsn decides (0/9A8 < 0/10A0)
            postgres(
                "e", "UPDATE", {"id": 4, "s": "late"}, "2024-05-01T10:00:05Z", "0/10A0", "502"
            ),
            postgres(
                "f", "UPDATE", {"id": 4, "s": "early"}, "2024-05-01T10:00:05Z", "0/9A8", "501"
            ),
        )
    }
    marts = expected_marts([wave], {})
    assert versions(marts) == [
        ("update", '{"id":3}:third', at("10:02:00.250"), None),
        ("update", '{"id":4}:early', at("10:00:05"), at("10:00:05")),
        ("update", '{"id":4}:late', at("10:00:05"), None),
    ]
    assert [c["last_committed_at"] for c in marts["cdc_current"]] == [
        at("10:02:00.250"),
        at("10:00:05"),
    ]


def test_clipping_and_string_order_traps() -> None:
    """valid_from never later than the next transition's; binlog order by number, not text."""
    b9, b10 = "mysql-bin.000009", "mysql-bin.000010"
    wave = {
        f"{ROOT}/a.jsonl": jsonl(
            mysql("i", "INSERT", {"id": 9, "s": "new"}, "2024-05-01T10:00:20Z", b9, 10000),
            mysql("u2", "UPDATE", {"id": 9, "s": "cancelled"}, "2024-05-01T10:01:25Z", b10, 300),
            mysql("u0", "UPDATE", {"id": 9, "s": "early"}, "2024-05-01T10:00:10Z", b9, 900),
            mysql("u1", "UPDATE", {"id": 9, "s": "paid"}, "2024-05-01T10:01:30Z", b10, 200),
            # key 2: a delete whose source time is earlier than its version's
            mysql("x", "INSERT", {"id": 2, "s": "x"}, "2024-05-01T10:00:10Z", b9, 50),
            mysql("y", "DELETE", {"id": 2, "s": "x"}, "2024-05-01T10:00:05Z", b9, 60),
        )
    }
    marts = expected_marts([wave], {})
    assert versions(marts) == [
        ("insert", '{"id":2}:x', at("10:00:05"), at("10:00:05")),
        ("update", '{"id":9}:early', at("10:00:10"), at("10:00:20")),
        ("insert", '{"id":9}:new', at("10:00:20"), at("10:01:25")),
        ("update", '{"id":9}:paid', at("10:01:25"), at("10:01:25")),
        ("update", '{"id":9}:cancelled', at("10:01:25"), None),
    ]
    [cur] = marts["cdc_current"]
    assert cur["last_committed_at"] == at("10:01:25")


def test_dedupe_quarantine_and_waves() -> None:
    """A uuid counts once (per stream) across files and waves; bad lines are quarantined with
    their line numbers; good lines around them count; a late event takes its place."""
    ins = mysql("i", "INSERT", {"id": 1, "s": "a"}, "2024-05-01T10:00:00Z", pos=10)
    upd = mysql("u", "UPDATE", {"id": 1, "s": "c"}, "2024-05-01T10:00:30Z", pos=30)
    no_uuid = mysql("", "UPDATE", {"id": 1, "s": "q"}, "2024-05-01T10:00:40Z", pos=40)
    no_key = mysql("k", "UPDATE", {"s": "q"}, "2024-05-01T10:00:40Z", pos=41)
    no_pos = mysql("p", "UPDATE", {"id": 1, "s": "q"}, "2024-05-01T10:00:40Z", pos=42)
    del no_pos["source_metadata"]["log_position"]
    bad_ts = mysql("t", "UPDATE", {"id": 1, "s": "q"}, "yesterday", pos=43)
    unknown = {**upd, "uuid": "z", "read_method": "mystery", "source_metadata": {"n": 1}}
    first = {
        f"{ROOT}/1.jsonl": jsonl(ins, ins, "{not json", upd, no_uuid),
        f"{ROOT}/2.jsonl": jsonl(upd, no_key, no_pos, bad_ts, unknown),
    }
    late = mysql("l", "UPDATE", {"id": 1, "s": "b"}, "2024-05-01T10:00:20Z", pos=20)
    second = {f"{ROOT}/3.jsonl": jsonl(late, upd, ins), f"{ROOT}/4.jsonl": first[f"{ROOT}/1.jsonl"]}

    one = expected_marts([first], {})
    assert versions(one) == [
        ("insert", '{"id":1}:a', at("10:00:00"), at("10:00:30")),
        ("update", '{"id":1}:c', at("10:00:30"), None),
    ]
    assert [(q["file_path"].split("/")[-1], q["line_number"]) for q in one["cdc_quarantine"]] == [
        ("1.jsonl", 3),
        ("1.jsonl", 5),
        ("2.jsonl", 2),
        ("2.jsonl", 3),
        ("2.jsonl", 4),
        ("2.jsonl", 5),
    ]
    assert all(q["reason"] for q in one["cdc_quarantine"])

    two = expected_marts([first, second], {})
    assert versions(two) == [
        ("insert", '{"id":1}:a', at("10:00:00"), at("10:00:20")),
        ("update", '{"id":1}:b', at("10:00:20"), at("10:00:30")),
        ("update", '{"id":1}:c', at("10:00:30"), None),
    ]
    # the re-landed file's bad lines are bad again, under its own name
    assert len(two["cdc_quarantine"]) == 8


def test_primary_key_change_and_same_key_pair() -> None:
    """UPDATE-DELETE + UPDATE-INSERT at one position: a key change closes the old key and opens
    the new one; for the same key it is one update version."""
    pos = ("mysql-bin.000010", 800)
    wave = {
        f"{ROOT}/a.jsonl": jsonl(
            mysql(
                "i4",
                "INSERT",
                {"id": 4, "s": "n"},
                "2024-05-01T10:00:14Z",
                "mysql-bin.000009",
                11200,
            ),
            mysql(
                "i6",
                "INSERT",
                {"id": 6, "s": "n"},
                "2024-05-01T10:00:16Z",
                "mysql-bin.000009",
                11600,
            ),
            mysql("ud4", "UPDATE-DELETE", {"id": 4, "s": "n"}, "2024-05-01T10:01:12Z", *pos),
            mysql("ui5", "UPDATE-INSERT", {"id": 5, "s": "n"}, "2024-05-01T10:01:12Z", *pos),
            mysql(
                "ui6",
                "UPDATE-INSERT",
                {"id": 6, "s": "c"},
                "2024-05-01T10:01:14Z",
                "mysql-bin.000010",
                900,
            ),
            mysql(
                "ud6",
                "UPDATE-DELETE",
                {"id": 6, "s": "n"},
                "2024-05-01T10:01:14Z",
                "mysql-bin.000010",
                900,
            ),
        )
    }
    marts = expected_marts([wave], {})
    assert versions(marts) == [
        ("insert", '{"id":4}:n', at("10:00:14"), at("10:01:12")),
        ("update", '{"id":5}:n', at("10:01:12"), None),
        ("insert", '{"id":6}:n', at("10:00:16"), at("10:01:14")),
        ("update", '{"id":6}:c', at("10:01:14"), None),
    ]
    assert [(c["key_json"], c["last_op"]) for c in marts["cdc_current"]] == [
        ('{"id":5}', "update"),
        ('{"id":6}', "update"),
    ]


def test_delete_and_reinsert() -> None:
    """A delete closes the version; a re-insert of the identical row opens a new one."""
    row = {"id": 3, "s": "same"}
    wave = {
        f"{ROOT}/a.jsonl": jsonl(
            mysql("i", "INSERT", row, "2024-05-01T10:00:06.250Z", pos=1),
            mysql("d", "DELETE", row, "2024-05-01T10:00:10.123Z", pos=2),
            mysql("r", "INSERT", row, "2024-05-01T10:01:10Z", pos=3),
            mysql("bf", "INSERT", row, "2024-05-01T10:00:08Z", read_method="mysql-backfill-x"),
        )
    }
    marts = expected_marts([wave], {})
    assert versions(marts) == [
        ("insert", '{"id":3}:same', at("10:00:06.250"), at("10:00:10.123")),
        ("insert", '{"id":3}:same', at("10:01:10"), None),
    ]


def test_canonical_values() -> None:
    """Contract value typing."""
    assert canonical_value(2**53 - 1) == 2**53 - 1
    assert canonical_value(2**53 + 1) == "9007199254740993"
    assert canonical_value(-(2**53) - 1) == "-9007199254740993"
    assert canonical_value(Decimal("0.1")) == 0.1
    assert canonical_value(Decimal("12345678901234567890.123456789")) == (
        "12345678901234567890.123456789"
    )
    assert canonical_value(b"\x00\x01\x02\xff") == "AAEC/w=="
    assert canonical_value(date(2024, 4, 30)) == "2024-04-30"
    assert canonical_value(datetime(2024, 5, 1, 9, 59, 59, 5, tzinfo=UTC)) == (
        "2024-05-01T09:59:59.000005Z"
    )
    assert canonical_value({"date": date(2024, 5, 1), "time": time(9, 0, 1)}) == (
        "2024-05-01T09:00:01.000000"
    )
    assert canonical_json({"b": None, "a": "ë", "c": {"z": True, "y": [1.5]}}) == (
        '{"a":"ë","b":null,"c":{"y":[1.5],"z":true}}'
    )


def test_avro_file_and_corrupt_avro() -> None:
    """Avro payload values are typed like JSON ones; an unreadable header is record 0."""
    schema = mysql_event_schema(
        "shop_t",
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
            {"name": "d", "type": ["null", {"type": "int", "logicalType": "date"}]},
            {
                "name": "ts",
                "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}],
            },
            {
                "name": "dt",
                "type": [
                    "null",
                    DATETIME_RECORD,
                ],
            },
            {"name": "b", "type": ["null", "bytes"]},
            {"name": "n", "type": ["null", "string"]},
        ],
    )
    record = {
        "stream_name": "projects/p/locations/l/streams/s",
        "read_method": "mysql-backfill-fulldump",
        "object": "shop_t",
        "schema_key": "k",
        "uuid": "a1",
        "read_timestamp": datetime(2024, 5, 1, 10, 0, 5, tzinfo=UTC),
        "source_timestamp": datetime(2024, 5, 1, 10, 0, tzinfo=UTC),
        "sort_keys": [1, "x"],
        "source_metadata": {
            "database": "shop",
            "table": "t",
            "primary_keys": ["id"],
            "log_file": "",
            "log_position": 0,
            "change_type": "INSERT",
            "is_deleted": False,
        },
        "payload": {
            "id": 2**60,
            "price": Decimal("19.99"),
            "d": date(2024, 4, 30),
            "ts": datetime(2024, 5, 1, 9, 59, 59, 123456, tzinfo=UTC),
            "dt": {"date": date(2024, 5, 1), "time": time(11, 59, 59, 123456)},
            "b": b"\x00\x01",
            "n": None,
        },
    }
    data = avro_container(schema, [record, record])
    wave = {f"{ROOT}/a.avro": data, f"{ROOT}/b.avro": data[:40]}
    marts = expected_marts([wave], {})
    [cur] = marts["cdc_current"]
    assert cur["key_json"] == '{"id":"1152921504606846976"}'
    assert cur["row_json"] == (
        '{"b":"AAE=","d":"2024-04-30","dt":"2024-05-01T11:59:59.123456",'
        '"id":"1152921504606846976","n":null,"price":19.99,"ts":"2024-05-01T09:59:59.123456Z"}'
    )
    assert cur["last_op"] == "snapshot"
    assert len(marts["cdc_history"]) == 1
    assert [(q["file_path"], q["line_number"]) for q in marts["cdc_quarantine"]] == [
        (f"{ROOT}/b.avro", 0)
    ]


def test_declared_key_wins() -> None:
    """A declared key replaces the (absent) source key."""
    event = {
        "uuid": "o1",
        "read_method": "oracle-cdc-logminer",
        "source_timestamp": "2019-11-07T02:15:39",
        "source_metadata": {
            "schema": "ROOT",
            "table": "SAMPLE",
            "change_type": "INSERT",
            "is_deleted": False,
            "tx_id": "1.2.3",
            "rs_id": " 0x0073c9.000a4e4c.01d0",
            "ssn": 67,
        },
        "payload": {"THIS_IS_MY_PK": "1231535353", "FIELD1": "foo", "FIELD2": "TLV"},
    }
    marts = expected_marts([{f"{ROOT}/o.jsonl": jsonl(event)}], declared_keys())
    [cur] = marts["cdc_current"]
    assert cur["key_json"] == '{"THIS_IS_MY_PK":"1231535353"}'
    assert cur["last_committed_at"] == datetime(2019, 11, 7, 2, 15, 39, tzinfo=UTC)
    assert ORACLE_DB_TABLE in declared_tables_yaml()
    assert ORACLE_DB_KEY[0] in declared_tables_yaml()


# Hand-verified facts of the bundled scenario, wave by wave: the marts after waves 1..3 and one
# test per rule.

WAVES = build_scenario().waves
MARTS = [expected_marts(WAVES[:n], declared_keys()) for n in range(1, len(WAVES) + 1)]


def current(wave: int, stream: str, key: str) -> dict[str, Any] | None:
    """The current row of a key after ``wave``."""
    rows = [c for c in MARTS[wave - 1]["cdc_current"] if c["source_name"] == stream]
    rows = [c for c in rows if c["key_json"] == key]
    return rows[0] if rows else None


def status(wave: int, stream: str, key: str, col: str) -> Any:
    row = current(wave, stream, key)
    return None if row is None else json.loads(row["row_json"])[col]


def history(wave: int, key: str, stream: str | None = None) -> list[dict[str, Any]]:
    return [
        h
        for h in MARTS[wave - 1]["cdc_history"]
        if h["key_json"] == key and stream in (None, h["source_name"])
    ]


def test_scenario_is_deterministic() -> None:
    assert build_scenario().waves == WAVES
    assert len(WAVES) >= 3


def test_scenario_quarantines_its_bad_lines_wave_by_wave() -> None:
    assert [len(m["cdc_quarantine"]) for m in MARTS] == [1, 5, 7]


def test_scenario_mysql_positions_order_by_binlog_file_then_position() -> None:
    for wave in (1, 2, 3):
        assert status(wave, "mysql_shop", '{"order_id":1}', "status") == "shipped"
        assert current(wave, "mysql_shop", '{"order_id":1}')["last_committed_at"] == at("10:00:08")
    order2 = history(3, '{"order_id":2}')
    assert [(h["valid_from"], h["valid_to"]) for h in order2] == [
        (at("10:00:04"), at("10:00:30")),
        (at("10:00:30"), at("10:01:00.500")),
        (at("10:01:00.500"), None),
    ]


def test_scenario_oracle_changes_of_one_key_in_one_transaction_order_by_ssn() -> None:
    assert status(1, "oracle_erp", '{"THIS_IS_MY_PK":"1231535353"}', "FIELD1") is None
    assert status(3, "oracle_erp", '{"THIS_IS_MY_PK":"1231535354"}', "FIELD2") == "TLV2"


def test_scenario_postgres_orders_by_lsn_and_deletes() -> None:
    assert status(3, "postgres_crm", '{"id":2}', "balance") == 200.5
    assert status(1, "postgres_crm", '{"id":1}', "balance") == 99.75
    assert current(3, "postgres_crm", '{"id":1}') is None


def test_scenario_each_other_source_reaches_its_last_state() -> None:
    assert status(3, "sqlserver_billing", '{"invoice_id":1}', "status") == "paid"
    assert status(3, "spanner_catalog", '{"ItemId":1}', "Name") == "Widget v3"
    assert status(3, "salesforce_sales", '{"Id":"0015g00000AbCdEAAV"}', "Name") == "Acme Holdings"
    assert current(3, "salesforce_sales", '{"Id":"0015g00000AbCdFAAV"}') is None
    assert status(3, "mongodb_app", '{"_id":"6630a1b2c3d4e5f601234567"}', "active") is False


def test_scenario_mysql_no_op_update_primary_key_change_and_deletes() -> None:
    assert current(3, "mysql_shop", '{"order_id":7}')["last_op"] == "insert"
    assert current(3, "mysql_shop", '{"order_id":4}') is None
    assert current(3, "mysql_shop", '{"order_id":5}')["last_op"] == "update"
    assert current(3, "mysql_shop", '{"order_id":10}') is None


def test_scenario_avro_duplicate_makes_no_version() -> None:
    assert [h["op"] for h in history(3, '{"sku":"SKU-3"}')] == ["insert", "update"]


def test_scenario_column_added_mid_stream() -> None:
    account3 = history(3, '{"id":3}', "postgres_crm")
    # The second version is the first event carrying the column added mid-stream.
    assert [json.loads(h["row_json"]).get("tier") for h in account3] == [None, "gold"]


def test_scenario_lands_every_source() -> None:
    sources = {c["source_name"] for c in MARTS[2]["cdc_current"]}
    assert len(sources) == 7
