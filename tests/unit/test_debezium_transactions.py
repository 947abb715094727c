"""Debezium transaction metadata: BEGIN and END records of the transaction topic, with and
without the schema envelope, the transaction key of `<txid>:<lsn>` ids, the counts an END must
hold, and the transaction block of change events, which SQL counts against the END."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from python_udfs.debezium import flatten_record
from python_udfs.debezium_transactions import (
    CHANGE_TRANSACTION_FIELDS,
    TRANSACTION_FIELDS,
    change_transaction,
    transaction_key,
    transaction_record,
)
from python_udfs.decoding import DecodeSettings

SERVER = "dbserver1"
TX_TOPIC = f"{SERVER}.transaction"
SOURCE = {
    "version": "2.5.0.Final",
    "connector": "postgresql",
    "name": SERVER,
    "ts_ms": 1_717_401_600_810,
    "snapshot": "false",
    "db": "shopdb",
    "schema": "inventory",
    "table": "orders",
    "txId": 571,
    "lsn": 53_195_829,
    "xmin": None,
}
BEGIN = {
    "status": "BEGIN",
    "id": "571:53195829",
    "event_count": None,
    "data_collections": None,
    "ts_ms": 1_717_401_600_800,
}
END = {
    "status": "END",
    "id": "571:53195832",
    "event_count": 3,
    "data_collections": [
        {"data_collection": "inventory.orders", "event_count": 1},
        {"data_collection": "inventory.order_lines", "event_count": 2},
    ],
    "ts_ms": 1_717_401_600_900,
}
# The value schema the connector gives transaction records (TransactionMetadataValue).
TX_SCHEMA = {
    "type": "struct",
    "name": "io.debezium.connector.common.TransactionMetadataValue",
    "optional": False,
    "fields": [
        {"type": "string", "optional": False, "field": "status"},
        {"type": "string", "optional": False, "field": "id"},
        {"type": "int64", "optional": True, "field": "event_count"},
        {
            "type": "array",
            "optional": True,
            "field": "data_collections",
            "items": {
                "type": "struct",
                "optional": False,
                "fields": [
                    {"type": "string", "optional": False, "field": "data_collection"},
                    {"type": "int64", "optional": False, "field": "event_count"},
                ],
            },
        },
        {"type": "int64", "optional": False, "field": "ts_ms"},
    ],
}


def kcat(value: Any, topic: str = TX_TOPIC, key: Any = None, envelope: bool = False) -> str:
    """One line as `kcat -J` prints it, key and value as JSON text."""
    if envelope:
        value = {"schema": TX_SCHEMA, "payload": value}
    return json.dumps(
        {
            "topic": topic,
            "partition": 0,
            "offset": 11,
            "ts": 1_717_401_601_000,
            "key": None if key is None else json.dumps(key),
            "payload": None if value is None else json.dumps(value),
        }
    )


def event(table: str = "orders", block: Any = None, op: str = "c", **source: Any) -> dict[str, Any]:
    """A change event's value payload, with its transaction block."""
    return {
        "before": None,
        "after": {"id": 1},
        "source": {**SOURCE, "table": table, **source},
        "op": op,
        "ts_ms": 1_717_401_601_000,
        "transaction": block,
    }


def block(total: Any = 1, in_collection: Any = 1, tx: Any = "571:53195832") -> dict[str, Any]:
    return {"id": tx, "total_order": total, "data_collection_order": in_collection}


def change_line(value: dict[str, Any], table: str = "orders") -> str:
    return kcat(value, topic=f"{SERVER}.inventory.{table}", key={"id": 1})


# --- transaction records -----------------------------------------------------------------------


@pytest.mark.parametrize("envelope", [False, True], ids=["plain", "envelope"])
def test_begin_record(envelope):
    assert transaction_record(kcat(BEGIN, envelope=envelope)) == {
        "error": None,
        "status": "BEGIN",
        "transaction_id": "571:53195829",
        "transaction_key": "571",
        "event_count": None,
        "data_collections": None,
        "record_ts": 1_717_401_600_800_000,
    }


@pytest.mark.parametrize("envelope", [False, True], ids=["plain", "envelope"])
def test_end_record_counts_its_events_per_data_collection(envelope):
    assert transaction_record(kcat(END, envelope=envelope)) == {
        "error": None,
        "status": "END",
        "transaction_id": "571:53195832",
        "transaction_key": "571",
        "event_count": 3,
        "data_collections": {"inventory.orders": 1, "inventory.order_lines": 2},
        "record_ts": 1_717_401_600_900_000,
    }


def test_begin_and_end_with_other_lsn_parts_name_one_transaction():
    begin = transaction_record(kcat(BEGIN))
    end = transaction_record(kcat(END))
    assert begin["transaction_id"] != end["transaction_id"]
    assert begin["transaction_key"] == end["transaction_key"]


@pytest.mark.parametrize(
    ("transaction_id", "key"),
    [
        ("571:53195829", "571"),
        ("571", "571"),
        # Other connectors' ids are known whole: SQL Server's, a MySQL GTID.
        ("00000025:00000d08:0025", "00000025:00000d08:0025"),
        ("3e11fa47-71ca-11e1-9e33-c80aa9429562:23", "3e11fa47-71ca-11e1-9e33-c80aa9429562:23"),
        ("571:", "571:"),
        (":53195829", ":53195829"),
    ],
)
def test_transaction_key(transaction_id, key):
    assert transaction_key(transaction_id) == key


def test_counts_as_decimal_strings_and_no_ts_ms_are_accepted():
    """Debezium's documentation prints counts as strings; its early versions sent no ts_ms."""
    end = {k: v for k, v in END.items() if k != "ts_ms"}
    end["event_count"] = "3"
    end["data_collections"] = [{"data_collection": "inventory.orders", "event_count": "3"}]
    row = transaction_record(kcat(end))
    assert (row["error"], row["event_count"], row["record_ts"]) == (None, 3, None)
    assert row["data_collections"] == {"inventory.orders": 3}


def test_an_empty_transaction_counts_nothing():
    row = transaction_record(kcat({**END, "event_count": 0, "data_collections": []}))
    assert (row["error"], row["event_count"], row["data_collections"]) == (None, 0, {})


def end_with(**fields: Any) -> str:
    return kcat({**END, **fields})


def collections(*counts: Any) -> list[dict[str, Any]]:
    return [{"data_collection": f"s.t{i}", "event_count": n} for i, n in enumerate(counts)]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (end_with(status="COMMIT"), "unknown transaction status 'COMMIT'"),
        (end_with(status="end"), "unknown transaction status 'end'"),
        (end_with(status=None), "unknown transaction status None"),
        (end_with(status=["END"]), "unknown transaction status ['END']"),
        (end_with(id=None), "bad id: None"),
        (end_with(id=""), "bad id: ''"),
        (end_with(id=571), "bad id: 571"),
        (end_with(ts_ms="1717401600900"), "bad ts_ms: '1717401600900'"),
        (end_with(ts_ms=True), "bad ts_ms: True"),
        (end_with(event_count=None), "END record without event_count"),
        (end_with(data_collections=None), "END record without data_collections"),
        (end_with(event_count=-1), "bad event_count: -1"),
        (end_with(event_count=3.0), "bad event_count: 3.0"),
        (end_with(event_count=True), "bad event_count: True"),
        (end_with(event_count="three"), "bad event_count: 'three'"),
        (end_with(event_count=2**63), "bad event_count"),
        (end_with(data_collections={"s.t": 3}), "data_collections is not an array"),
        (end_with(data_collections=["s.t"]), "data_collections entry is not an object"),
        (end_with(data_collections=[{"event_count": 3}]), "bad data_collection: None"),
        (end_with(data_collections=[{"data_collection": "", "event_count": 3}]), "bad data"),
        (end_with(data_collections=collections(-1, 4)), "bad event_count of 's.t0': -1"),
        (end_with(data_collections=collections(None, 3)), "bad event_count of 's.t0': None"),
        (
            end_with(data_collections=[*collections(1, 2), *collections(0)]),
            "data_collection 's.t0' listed twice",
        ),
        (
            end_with(data_collections=collections(1, 1)),
            "data_collections count 2 events, event_count says 3",
        ),
        (
            end_with(data_collections=collections(2, 2)),
            "data_collections count 4 events, event_count says 3",
        ),
        (
            kcat({**BEGIN, "event_count": 2, "data_collections": collections(1)}),
            "data_collections count 1 events, event_count says 2",
        ),
        (kcat({**BEGIN, "event_count": -2}), "bad event_count: -2"),
    ],
)
def test_a_transaction_record_that_does_not_fit_is_an_error(line, reason):
    row = transaction_record(line)
    assert reason in row["error"]
    assert set(row) == set(TRANSACTION_FIELDS)
    assert all(row[field] is None for field in TRANSACTION_FIELDS if field != "error")


@given(
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=6),
    st.integers(min_value=0, max_value=6 * 10**6),
)
def test_an_end_is_accepted_exactly_when_its_collections_add_up(counts, event_count):
    """Property: the per-collection counts must add up to event_count, and are kept as sent."""
    row = transaction_record(
        end_with(event_count=event_count, data_collections=collections(*counts))
    )
    if sum(counts) == event_count:
        assert row["error"] is None
        assert row["data_collections"] == {f"s.t{i}": n for i, n in enumerate(counts)}
    else:
        assert row["error"] == (
            f"data_collections count {sum(counts)} events, event_count says {event_count}"
        )


NOT_A_TRANSACTION = dict.fromkeys(TRANSACTION_FIELDS)


@pytest.mark.parametrize(
    "line",
    [
        change_line(event(block=block())),
        kcat(event(), topic=f"{SERVER}.inventory.transaction"),  # a table named transaction
        kcat(None),  # a tombstone
        kcat({"ts_ms": 1}, topic=f"__debezium-heartbeat.{SERVER}"),
        kcat({**END, "op": "c"}),  # a status and an op: a change event
        kcat(END, topic=f"{SERVER}.inventory.orders"),  # another topic
        '{"topic": "dbserver1.transaction", "payload": "{not json"}',
        '{"topic": 5, "payload": "{}"}',
        '{"payload": "{}"}',
        "{broken",
        "[]",
        json.dumps({"topic": TX_TOPIC, "payload": "[" * 100_000 + "]" * 100_000}),
    ],
)
def test_a_line_that_is_no_transaction_record_is_left_to_flatten_record(line):
    """flatten_record reports what is wrong with these, so the line is quarantined once."""
    assert transaction_record(line) == NOT_A_TRANSACTION


def test_flatten_record_reports_a_payload_nested_too_deeply():
    line = json.dumps({"topic": TX_TOPIC, "payload": "[" * 100_000 + "]" * 100_000})
    row = flatten_record(line, SERVER, DecodeSettings())
    assert row["error"].startswith("payload is not JSON: maximum recursion depth")


def test_flatten_record_passes_transaction_records_by():
    for record in (BEGIN, END, {**END, "status": "COMMIT"}):
        row = flatten_record(
            kcat(record), SERVER, DecodeSettings(placeholders=("__debezium_unavailable_value",))
        )
        assert row["error"] is None and row["op"] is None


# --- the transaction block of change events -----------------------------------------------------


def test_a_change_event_names_its_transaction_and_data_collection():
    line = change_line(event("order_lines", block(total=3, in_collection=2)), "order_lines")
    assert change_transaction(line) == {
        "error": None,
        "transaction_key": "571",
        "data_collection": "inventory.order_lines",
        "total_order": 3,
        "data_collection_order": 2,
    }


def test_the_data_collection_is_the_changes_source_table():
    line = change_line(event(block=block()))
    row = flatten_record(line, SERVER, DecodeSettings())
    assert change_transaction(line)["data_collection"] == row["source_table"]


def test_an_enveloped_change_event():
    value = {"schema": {"type": "struct", "fields": []}, "payload": event(block=block())}
    line = kcat(value, topic=f"{SERVER}.inventory.orders")
    assert change_transaction(line)["transaction_key"] == "571"


def test_orders_as_decimal_strings_as_the_documentation_prints_them():
    row = change_transaction(change_line(event(block=block("1", "1"))))
    assert (row["error"], row["total_order"], row["data_collection_order"]) == (None, 1, 1)


def test_without_source_schema_and_table_the_topic_names_the_collection():
    value = event(block=block())
    value["source"] = {k: v for k, v in SOURCE.items() if k not in ("schema", "table")}
    assert change_transaction(change_line(value))["data_collection"] == "inventory.orders"


def test_one_transactions_events_match_its_end_counts():
    """What SQL counts: the END's collections are the events' data collections."""
    events = [
        change_line(event("orders", block(1, 1))),
        change_line(event("order_lines", block(2, 1)), "order_lines"),
        change_line(event("order_lines", block(3, 2)), "order_lines"),
    ]
    counted: dict[str, set[int]] = {}
    for line in events + events[1:2]:  # one event delivered twice
        row = change_transaction(line)
        assert row["transaction_key"] == transaction_record(kcat(END))["transaction_key"]
        counted.setdefault(row["data_collection"], set()).add(row["data_collection_order"])
    landed = {collection: len(orders) for collection, orders in counted.items()}
    assert landed == transaction_record(kcat(END))["data_collections"]


NO_TRANSACTION = dict.fromkeys(CHANGE_TRANSACTION_FIELDS)


@pytest.mark.parametrize(
    "line",
    [
        change_line(event(block=None)),  # a server without metadata
        change_line({k: v for k, v in event().items() if k != "transaction"}),
        change_line(event(block=None, op="r")),  # a snapshot read
        kcat(END),
        kcat(BEGIN, envelope=True),
        kcat(None, topic=f"{SERVER}.inventory.orders"),
        kcat({"ts_ms": 1, "transaction": block()}, topic=f"__debezium-heartbeat.{SERVER}"),
        change_line({**event(block=block()), "op": "m"}),
        change_line({**event(block=block()), "op": "x"}),
        change_line({**event(block=block()), "op": ["c"]}),
        change_line({**event(block=block()), "op": None}),
        "not json",
    ],
)
def test_no_transaction_block_or_no_change_event_leaves_every_field_none(line):
    assert change_transaction(line) == NO_TRANSACTION


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (event(block="571"), "transaction is not an object"),
        (event(block=block(tx=None)), "bad transaction.id: None"),
        (event(block=block(tx="")), "bad transaction.id: ''"),
        (event(block=block(tx=571)), "bad transaction.id: 571"),
        (event(block=block(total=0)), "bad transaction.total_order: 0"),
        (event(block=block(total=None)), "bad transaction.total_order: None"),
        (event(block=block(total=1.5)), "bad transaction.total_order: 1.5"),
        (event(block=block(in_collection=-1)), "bad transaction.data_collection_order: -1"),
        (event(block=block(in_collection="x")), "bad transaction.data_collection_order: 'x'"),
        ({**event(block=block()), "source": None}, "missing field: payload.source"),
        ({**event(block=block()), "source": {"schema": 5}}, "bad source.schema: 5"),
    ],
)
def test_a_transaction_block_that_does_not_fit_is_an_error(value, reason):
    row = change_transaction(change_line(value))
    assert reason in row["error"]
    assert all(row[field] is None for field in CHANGE_TRANSACTION_FIELDS if field != "error")


def test_an_event_of_a_topic_that_names_no_table_is_an_error():
    value = event(block=block())
    value["source"] = {"txId": 571}
    row = change_transaction(kcat(value, topic="orders"))
    assert "no source table" in row["error"]
