"""Debezium transaction metadata (`provide.transaction.metadata`, CONTRACT §1 "debezium" and §2
"Debezium transactions"): the BEGIN and END records of the server's transaction topic
(`transaction_record_fields`), and the `transaction` block each change event then carries
(`change_transaction_fields`). `debezium.flatten_record` reads both from the payload it has
parsed, so a line is parsed once; the SQL counts a transaction's landed events per data
collection against its END and applies the transaction only once it is whole
(models/intermediate/debezium/, docs/sources/debezium.md "Transactions").

A transaction is known by its id; where the id has the PostgreSQL connector's `<txid>:<lsn>`
form, by its txid part, since the lsn part may differ between its records (`transaction_key`).
Counts and orders are JSON numbers as Kafka Connect writes int64, or decimal strings as
Debezium's own documentation prints them. A data collection is named `<schema>.<table>`, as the
change's source_table.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

# The fields of a decoded Debezium line that carry transaction metadata (python_udfs/debezium/
# adds them to the change-log row). A change event fills the first two, a BEGIN or END record
# the first and the last three; None everywhere: no transaction metadata.
TRANSACTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("transaction_key", "string"),  # `transaction_key` of the transaction's id
    ("data_collection_order", "bigint"),  # the event's place among its collection's events
    ("transaction_status", "string"),  # BEGIN | END
    ("transaction_event_count", "bigint"),  # END: the events of the transaction
    ("transaction_collections", "map<string,bigint>"),  # END: data collection -> its events
)

_TRANSACTION_TOPIC_SUFFIX = ".transaction"
_STATUSES = frozenset({"BEGIN", "END"})
# The PostgreSQL connector's transaction id: the xid, then the lsn of the record that sent it.
_POSTGRES_ID = re.compile(r"([0-9]+):[0-9]+")
_DIGITS = re.compile(r"[0-9]+")
_MAX_INT64 = 2**63 - 1


def transaction_key(transaction_id: str) -> str:
    """The txid part of a `<txid>:<lsn>` id, else the whole id (other connectors' ids, such as
    SQL Server's `00000025:00000d08:0025`, are known whole)."""
    match = _POSTGRES_ID.fullmatch(transaction_id)
    return match.group(1) if match else transaction_id


def is_transaction_record(topic: str, payload: dict[str, Any]) -> bool:
    """A BEGIN or END record of the server's transaction topic (`<server>.transaction`): it
    has a status and no op, which every change event has."""
    return (
        topic.endswith(_TRANSACTION_TOPIC_SUFFIX)
        and "status" in payload
        and payload.get("op") is None
    )


def transaction_record_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A BEGIN or END record's value payload as TRANSACTION_COLUMNS, and `committed_at`, its
    ts_ms in epoch microseconds (None without one). END carries the event counts, total and per
    data collection, which must add up. ValueError names what does not fit."""
    status = payload.get("status")
    if not isinstance(status, str) or status not in _STATUSES:
        raise ValueError(f"unknown transaction status {_shown(status)}")
    transaction_id = _transaction_id(payload.get("id"), "id")
    ts_ms = payload.get("ts_ms")
    if ts_ms is not None and (isinstance(ts_ms, bool) or not isinstance(ts_ms, int)):
        raise ValueError(f"bad ts_ms: {_shown(ts_ms)}")
    event_count = payload.get("event_count")
    collections = payload.get("data_collections")
    if status == "END":
        for field, value in (("event_count", event_count), ("data_collections", collections)):
            if value is None:
                raise ValueError(f"END record without {field}")
    total = None if event_count is None else _count(event_count, "event_count", 0)
    counts = None if collections is None else _collection_counts(collections)
    if total is not None and counts is not None and sum(counts.values()) != total:
        raise ValueError(
            f"data_collections count {sum(counts.values())} events, event_count says {total}"
        )
    return {
        "transaction_key": transaction_key(transaction_id),
        "transaction_status": status,
        "transaction_event_count": total,
        "transaction_collections": counts,
        "committed_at": None if ts_ms is None else ts_ms * 1000,
    }


def change_transaction_fields(payload: dict[str, Any]) -> dict[str, Any]:
    """A change event's transaction key and data_collection_order, from the `transaction`
    block of its value payload; both None when it has none (a server without metadata, a
    snapshot read). ValueError names a block that does not fit."""
    block = payload.get("transaction")
    if block is None:
        return {"transaction_key": None, "data_collection_order": None}
    if not isinstance(block, dict):
        raise ValueError("transaction is not an object")
    transaction_id = _transaction_id(block.get("id"), "transaction.id")
    # Not stored (a collection's events are counted by their own order), but a block whose
    # place in its transaction is not a number is not the connector's.
    _count(block.get("total_order"), "transaction.total_order", 1)
    return {
        "transaction_key": transaction_key(transaction_id),
        "data_collection_order": _count(
            block.get("data_collection_order"), "transaction.data_collection_order", 1
        ),
    }


def _shown(value: Any) -> str:
    """A value as a reason shows it: numbers as JSON spells them (the line is parsed with
    exact decimals), anything else as Python does, cut short."""
    text = str(value) if isinstance(value, Decimal) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _transaction_id(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"bad {field}: {_shown(value)}")
    return value


def _count(value: Any, field: str, minimum: int) -> int:
    """A count of at least `minimum`: a JSON integer or its decimal string."""
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise ValueError(f"bad {field}: {_shown(value)}")
    if not minimum <= number <= _MAX_INT64:
        raise ValueError(f"bad {field}: {_shown(value)}")
    return number


def _collection_counts(collections: Any) -> dict[str, int]:
    if not isinstance(collections, list):
        raise ValueError("data_collections is not an array")
    counts: dict[str, int] = {}
    for entry in collections:
        if not isinstance(entry, dict):
            raise ValueError("data_collections entry is not an object")
        name = entry.get("data_collection")
        if not isinstance(name, str) or not name:
            raise ValueError(f"bad data_collection: {_shown(name)}")
        if name in counts:
            raise ValueError(f"data_collection {name!r} listed twice")
        counts[name] = _count(entry.get("event_count"), f"event_count of {name!r}", 0)
    return counts
