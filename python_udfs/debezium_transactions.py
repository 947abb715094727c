"""Debezium transaction metadata (`provide.transaction.metadata`, CONTRACT §1 "debezium" and §2
"Debezium transactions"): the BEGIN and END records of the server's transaction topic
(`transaction_record`), and the `transaction` block each change event then carries
(`change_transaction`), so that SQL can count a transaction's landed events per table against
its END record and apply the transaction only once it is whole.

A transaction is known by its id; where the id has the PostgreSQL connector's `<txid>:<lsn>`
form, by its txid part, since the lsn part may differ between its records (`transaction_key`).
Counts are JSON numbers as Kafka Connect writes int64, or decimal strings as Debezium's own
documentation prints them.

Lines that are not what a function decodes, including lines too damaged to tell, come back
with every field None: `debezium.flatten_record` reports those, so no line is quarantined for
the same fault twice.

How SQL should use them (a proposal; the models come with the family registry):
- `int_debezium__transaction_records`: the decoded BEGIN/END rows, with file and line; errors
  to the quarantine. The END of a transaction key is its first END in landing order; a later
  END with other counts is a conflict to quarantine, an equal one a redelivery.
- Each change row of a server gets its event's transaction key, data collection and
  data_collection_order (ideally from `payload_transaction` inside `flatten_record`, which has
  the payload parsed already). Landed events are counted per (server, transaction key, data
  collection) as distinct data_collection_order, so an event delivered twice counts once.
- A transaction is complete when its END has landed and, for each collection of its END, the
  distinct events landed equal the END's count. Its changes then enter the change log with the
  landing run in which it became complete (as a pgoutput transaction's changes take its
  commit's), in their source order; until then they wait, whatever run brought them.
- A change without a transaction block (a server without metadata, snapshot reads 'r')
  applies as it lands.
- An END that never comes (the connector crashed between the last event and END and the
  record was lost, metadata turned on mid-transaction, the transaction topic not landed): the
  events wait; they are never applied partially. `cdc_source_freshness` lists them as pending
  transactions with server, transaction key, events landed per table, the END's counts if any,
  and the age since the first event landed; one is "overdue" when a later transaction of the
  same server is complete, since the connector sends transactions in commit order and one that
  does not complete before its successor will not complete by waiting. A dbt test warns on
  overdue transactions; releasing one is an operator's decision (a dbt var naming the
  transaction keys to apply as they stand), never a timeout.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from python_udfs.debezium import (
    _HEARTBEAT_TOPIC_PREFIX,
    _OPS,
    _BadRecord,
    _embedded,
    _source_table,
    is_transaction_record,
)
from python_udfs.json_values import line_object

TRANSACTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("error", "string"),
    ("status", "string"),  # BEGIN | END; None: the line is no transaction record
    ("transaction_id", "string"),  # as sent
    ("transaction_key", "string"),  # `transaction_key(transaction_id)`
    ("event_count", "bigint"),  # END: the events of the transaction
    ("data_collections", "map<string,bigint>"),  # END: data collection -> its events
    ("record_ts", "bigint"),  # ts_ms, in epoch microseconds as committed_at is
)
TRANSACTION_FIELDS: tuple[str, ...] = tuple(name for name, _ in TRANSACTION_COLUMNS)

CHANGE_TRANSACTION_COLUMNS: tuple[tuple[str, str], ...] = (
    ("error", "string"),
    ("transaction_key", "string"),  # None: no transaction block, the change applies as it lands
    ("data_collection", "string"),  # `<schema>.<table>`, the change's source_table
    ("total_order", "bigint"),  # the event's place among its transaction's events, from 1
    ("data_collection_order", "bigint"),  # its place among the events of its collection
)
CHANGE_TRANSACTION_FIELDS: tuple[str, ...] = tuple(name for name, _ in CHANGE_TRANSACTION_COLUMNS)

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


def transaction_record(line: str) -> dict[str, Any]:
    """A transaction topic line as the row of TRANSACTION_COLUMNS: status, id and key, and for
    END the event counts, total and per data collection, which must add up. With or without
    the schema/payload envelope. Never raises: `error` names what does not fit."""
    row: dict[str, Any] = dict.fromkeys(TRANSACTION_FIELDS)
    payload = _payload(line)
    if payload is None or not is_transaction_record(payload[0], payload[1]):
        return row
    try:
        row.update(_transaction(payload[1]))
    except ValueError as exc:
        row["error"] = str(exc)
    return row


def _payload(line: str) -> tuple[str, dict[str, Any]] | None:
    """(topic, value payload) of a kcat line; None for any line that holds no such pair."""
    try:
        record = line_object(line)
        topic = record.get("topic")
        _, payload = _embedded(record, "payload")
    except (ValueError, _BadRecord):
        return None
    if not isinstance(topic, str) or not isinstance(payload, dict):
        return None
    return topic, payload


def _transaction(payload: dict[str, Any]) -> dict[str, Any]:
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
        "status": status,
        "transaction_id": transaction_id,
        "transaction_key": transaction_key(transaction_id),
        "event_count": total,
        "data_collections": counts,
        "record_ts": None if ts_ms is None else ts_ms * 1000,
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


def payload_transaction(topic: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The transaction fields (CHANGE_TRANSACTION_COLUMNS but error) of a change event's parsed
    value payload; None when it has no transaction block. The data collection is the change's
    source_table, `<schema>.<table>`, as the PostgreSQL connector names the collections of an
    END record. ValueError naming a block that does not fit."""
    block = payload.get("transaction")
    if block is None:
        return None
    if not isinstance(block, dict):
        raise ValueError("transaction is not an object")
    transaction_id = _transaction_id(block.get("id"), "transaction.id")
    source = payload.get("source")
    if not isinstance(source, dict):
        raise ValueError("missing field: payload.source")
    try:
        collection = _source_table(source, topic)
    except _BadRecord as exc:
        raise ValueError(str(exc)) from None
    return {
        "transaction_key": transaction_key(transaction_id),
        "data_collection": collection,
        "total_order": _count(block.get("total_order"), "transaction.total_order", 1),
        "data_collection_order": _count(
            block.get("data_collection_order"), "transaction.data_collection_order", 1
        ),
    }


def change_transaction(line: str) -> dict[str, Any]:
    """A change event line as the row of CHANGE_TRANSACTION_COLUMNS: its transaction key, data
    collection and places, or every field None for a change without a transaction block and
    for a line that is no change event (a tombstone, a heartbeat, a transaction record, a
    logical decoding message, or a line flatten_record rejects). Never raises: `error` names
    a transaction block that does not fit."""
    row: dict[str, Any] = dict.fromkeys(CHANGE_TRANSACTION_FIELDS)
    payload = _payload(line)
    if payload is None:
        return row
    topic, value = payload
    op = value.get("op")
    if topic.startswith(_HEARTBEAT_TOPIC_PREFIX) or not isinstance(op, str) or op not in _OPS:
        return row
    try:
        row.update(payload_transaction(topic, value) or {})
    except ValueError as exc:
        row["error"] = str(exc)
    return row
