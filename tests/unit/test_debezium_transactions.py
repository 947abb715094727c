"""Debezium transaction metadata, as `flatten_record` decodes it in its one parse of a line:
BEGIN and END records of the transaction topic, with and without the schema envelope, the
transaction key of `<txid>:<lsn>` ids, the counts an END must hold, and the transaction block
of change events, which SQL counts against the END."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from python_udfs.debezium import FIELDS, flatten_record
from python_udfs.debezium.transactions import TRANSACTION_COLUMNS, transaction_key
from python_udfs.decoding import DecodeSettings

SERVER = "dbserver1"
SETTINGS = DecodeSettings(placeholders=("__debezium_unavailable_value",))
TRANSACTION_FIELDS = tuple(name for name, _ in TRANSACTION_COLUMNS)
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


def flatten(line: str) -> dict[str, Any]:
    return flatten_record(line, SERVER, SETTINGS)


def transaction_of(line: str) -> dict[str, Any]:
    """The transaction fields of a decoded line, its error and time."""
    row = flatten(line)
    return {field: row[field] for field in ("error", "committed_at", *TRANSACTION_FIELDS)}


# --- transaction records -----------------------------------------------------------------------


@pytest.mark.parametrize("envelope", [False, True], ids=["plain", "envelope"])
def test_a_begin_record_names_its_transaction_and_is_no_change(envelope):
    row = flatten(kcat(BEGIN, envelope=envelope))
    assert row == {
        **dict.fromkeys(FIELDS),
        "transaction_key": "571",
        "transaction_status": "BEGIN",
        "committed_at": 1_717_401_600_800_000,
    }


@pytest.mark.parametrize("envelope", [False, True], ids=["plain", "envelope"])
def test_an_end_record_counts_its_events_per_data_collection(envelope):
    row = flatten(kcat(END, envelope=envelope))
    assert row == {
        **dict.fromkeys(FIELDS),
        "transaction_key": "571",
        "transaction_status": "END",
        "transaction_event_count": 3,
        "transaction_collections": {"inventory.orders": 1, "inventory.order_lines": 2},
        "committed_at": 1_717_401_600_900_000,
    }


def test_begin_and_end_with_other_lsn_parts_name_one_transaction():
    assert BEGIN["id"] != END["id"]
    assert flatten(kcat(BEGIN))["transaction_key"] == flatten(kcat(END))["transaction_key"]


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
    row = transaction_of(kcat(end))
    assert (row["error"], row["transaction_event_count"], row["committed_at"]) == (None, 3, None)
    assert row["transaction_collections"] == {"inventory.orders": 3}


def test_an_empty_transaction_counts_nothing():
    row = transaction_of(kcat({**END, "event_count": 0, "data_collections": []}))
    assert (row["error"], row["transaction_event_count"]) == (None, 0)
    assert row["transaction_collections"] == {}


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
def test_a_transaction_record_that_does_not_fit_is_quarantined(line, reason):
    """A malformed BEGIN or END is bad input like any other (quarantined with its reason), and
    names no transaction: its counts are not trusted."""
    row = flatten(line)
    assert reason in row["error"]
    assert all(row[field] is None for field in FIELDS if field != "error")


@given(
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=6),
    st.integers(min_value=0, max_value=6 * 10**6),
)
def test_an_end_is_accepted_exactly_when_its_collections_add_up(counts, event_count):
    """Property: the per-collection counts must add up to event_count, and are kept as sent."""
    row = transaction_of(end_with(event_count=event_count, data_collections=collections(*counts)))
    if sum(counts) == event_count:
        assert row["error"] is None
        assert row["transaction_collections"] == {f"s.t{i}": n for i, n in enumerate(counts)}
    else:
        assert row["error"] == (
            f"data_collections count {sum(counts)} events, event_count says {event_count}"
        )


@pytest.mark.parametrize(
    ("line", "op"),
    [
        # a table named transaction; a status beside an op: change events
        (kcat(event(), topic=f"{SERVER}.inventory.transaction", key={"id": 1}), "insert"),
        (kcat({**END, **event()}, key={"id": 1}), "insert"),
        (kcat(None), None),  # a tombstone
        (kcat({"ts_ms": 1, **END}, topic=f"__debezium-heartbeat.{SERVER}"), None),
    ],
)
def test_a_status_off_the_transaction_topic_or_beside_an_op_is_no_transaction_record(line, op):
    row = flatten(line)
    assert (row["error"], row["op"], row["transaction_status"]) == (None, op, None)


def test_a_record_of_another_topic_with_a_status_and_no_op_is_an_error():
    assert flatten(kcat(END, topic=f"{SERVER}.inventory.orders"))["error"] == "payload without op"


def test_a_payload_nested_too_deeply_is_an_error():
    line = json.dumps({"topic": TX_TOPIC, "payload": "[" * 100_000 + "]" * 100_000})
    assert flatten(line)["error"].startswith("payload is not JSON: maximum recursion depth")


# --- the transaction block of change events -----------------------------------------------------


def test_a_change_event_names_its_transaction_and_place_in_its_collection():
    row = flatten(change_line(event("order_lines", block(total=3, in_collection=2)), "order_lines"))
    assert row["error"] is None and row["op"] == "insert"
    assert (row["transaction_key"], row["source_table"], row["data_collection_order"]) == (
        "571",
        "inventory.order_lines",
        2,
    )
    assert row["transaction_status"] is None and row["transaction_collections"] is None


def test_a_truncate_carries_its_transaction_too():
    value = {**event(block=block()), "op": "t", "before": None, "after": None}
    row = flatten(kcat(value, topic=f"{SERVER}.inventory.orders"))
    assert (row["op"], row["transaction_key"], row["data_collection_order"]) == (
        "truncate",
        "571",
        1,
    )


def test_an_enveloped_change_event():
    value = {
        "schema": {
            "type": "struct",
            "fields": [
                {"field": "after", "type": "struct", "fields": [{"field": "id", "type": "int32"}]}
            ],
        },
        "payload": event(block=block()),
    }
    row = flatten(kcat(value, topic=f"{SERVER}.inventory.orders", key={"id": 1}))
    assert (row["error"], row["transaction_key"]) == (None, "571")


def test_orders_as_decimal_strings_as_the_documentation_prints_them():
    row = flatten(change_line(event(block=block("1", "1"))))
    assert (row["error"], row["data_collection_order"]) == (None, 1)


def test_without_source_schema_and_table_the_topic_names_the_collection():
    value = event(block=block())
    value["source"] = {k: v for k, v in SOURCE.items() if k not in ("schema", "table")}
    assert flatten(change_line(value))["source_table"] == "inventory.orders"


def test_one_transactions_events_match_its_end_counts():
    """What SQL counts: per data collection (the change's source_table), the distinct orders
    of the transaction's events, an event delivered twice counted once, equal the END's."""
    events = [
        change_line(event("orders", block(1, 1))),
        change_line(event("order_lines", block(2, 1), lsn=53_195_831), "order_lines"),
        change_line(event("order_lines", block(3, 2), lsn=53_195_832), "order_lines"),
    ]
    end = flatten(kcat(END))
    counted: dict[str, set[int]] = {}
    for line in events + events[1:2]:  # one event delivered twice
        row = flatten(line)
        assert row["transaction_key"] == end["transaction_key"]
        counted.setdefault(row["source_table"], set()).add(row["data_collection_order"])
    landed = {collection: len(orders) for collection, orders in counted.items()}
    assert landed == end["transaction_collections"]


@pytest.mark.parametrize(
    "value",
    [
        event(block=None),  # a server without metadata
        {k: v for k, v in event().items() if k != "transaction"},
        event(block=None, op="r"),  # a snapshot read
    ],
    ids=["null", "absent", "snapshot"],
)
def test_a_change_without_a_transaction_block_names_no_transaction(value):
    row = flatten(change_line(value))
    assert row["error"] is None and row["op"] is not None
    assert all(row[field] is None for field in TRANSACTION_FIELDS)


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
    ],
)
def test_a_transaction_block_that_does_not_fit_quarantines_its_change(value, reason):
    row = flatten(change_line(value))
    assert row["error"] == reason
    assert all(row[field] is None for field in FIELDS if field != "error")
