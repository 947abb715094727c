"""The connector ``pg_txn`` (JsonConverter without schemas, Debezium 2.5, transaction metadata
turned on after its snapshot): tables ``shop.orders`` and ``shop.order_items``, their rows, its
transaction topic ``pg_txn.transaction``, and what each wave lands.

A change event of a transaction carries its transaction block; the transaction's BEGIN and END
land on the transaction topic, in a file of their own, so a transaction's END and its events
on the two tables' topics may land in different runs."""

from __future__ import annotations

from typing import Any

from .connect import (
    DOUBLE,
    INT32,
    STRING,
    TXN,
    _k,
    _Server,
    _Table,
    _Transaction,
    _TransactionTopic,
    _Wave,
    us,
)

PG_TXN = _Server(TXN, False, "2.5.4.Final", "orderdb")
TRANSACTIONS = _TransactionTopic(PG_TXN)

ORDERS = _Table(
    PG_TXN,
    "shop",
    "orders",
    ("id",),
    (("id", INT32), ("customer", STRING), ("status", STRING), ("total", DOUBLE)),
)
ORDER_ITEMS = _Table(
    PG_TXN,
    "shop",
    "order_items",
    ("order_id", "item_no"),
    (("order_id", INT32), ("item_no", INT32), ("sku", STRING), ("qty", INT32)),
)


def _order(oid: int, customer: str, status: str, total: float) -> dict[str, Any]:
    return {"id": oid, "customer": customer, "status": status, "total": total}


def _item(order_id: int, item_no: int, sku: str, qty: int) -> dict[str, Any]:
    return {"order_id": order_id, "item_no": item_no, "sku": sku, "qty": qty}


class Transactions:
    """The server's transactions, in commit order (txId, lsn of the commit, commit time), made
    for one build of the scenario: each counts the events its blocks name, and the waves after
    the first land what the first left out."""

    def __init__(self) -> None:
        self.whole = _Transaction(7010, 30_100_300, us("08:10:00"))
        self.two_runs = _Transaction(7011, 30_200_300, us("08:20:00"))
        self.end_twice = _Transaction(7012, 30_300_300, us("08:30:00"))
        self.no_end = _Transaction(7013, 30_400_300, us("08:40:00"))
        self.truncating = _Transaction(7014, 30_500_300, us("08:50:00"))
        self.later = _Transaction(7015, 30_600_300, us("09:00:00"))
        # Blocks of events counted in one wave and landed in a later one.
        self.held: dict[str, dict[str, Any]] = {}
        self.whole_first_event: dict[str, Any] = {}


def _change(
    w: _Wave,
    path: str,
    table: _Table,
    op: str,
    key: dict[str, Any],
    after: dict[str, Any] | None,
    lsn: int,
    txn: _Transaction,
    block: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A change event of `txn` (its next block, unless one counted earlier is given)."""
    return w.change(
        path,
        table,
        0,
        op,
        key,
        after=after,
        lsn=lsn,
        tx=txn.tx,
        ts=txn.ts,
        block=block or txn.block(table),
    )


def wave1(w: _Wave) -> Transactions:
    t = Transactions()
    orders = w.file(ORDERS, 0)
    items = w.file(ORDER_ITEMS, 0)
    txns = w.file(TRANSACTIONS, 0)
    # The snapshot and a change streamed before transaction metadata was turned on: no
    # transaction block, applied as they land.
    snap = {"lsn": 30_000_000, "tx": 7000, "snapshot": "true"}
    w.change(
        orders,
        ORDERS,
        0,
        "r",
        _k(id=10),
        after=_order(10, "eve", "new", 12.5),
        ts=us("08:00:00.100"),
        **snap,
    )
    w.change(
        items,
        ORDER_ITEMS,
        0,
        "r",
        _k(order_id=10, item_no=1),
        after=_item(10, 1, "MUG-01", 1),
        ts=us("08:00:00.110"),
        **snap,
    )
    w.change(
        orders,
        ORDERS,
        0,
        "u",
        _k(id=10),
        after=_order(10, "eve", "shipped", 12.5),
        lsn=30_050_000,
        tx=7001,
        ts=us("08:01:00"),
    )
    w.note(
        orders,
        "snapshot reads and a change streamed before metadata was on: no transaction block, "
        "applied as they land",
    )

    # A whole transaction over both tables.
    w.transaction_record(txns, TRANSACTIONS, t.whole.begin())
    t.whole_first_event = _change(
        w, orders, ORDERS, "c", _k(id=1), _order(1, "ann", "new", 30.0), 30_100_000, t.whole
    )
    _change(
        w,
        items,
        ORDER_ITEMS,
        "c",
        _k(order_id=1, item_no=1),
        _item(1, 1, "TEA-S", 2),
        30_100_100,
        t.whole,
    )
    _change(
        w,
        items,
        ORDER_ITEMS,
        "c",
        _k(order_id=1, item_no=2),
        _item(1, 2, "CUP-2", 1),
        30_100_200,
        t.whole,
    )
    w.transaction_record(txns, TRANSACTIONS, t.whole.end())
    w.note(txns, "transaction 7010 over two tables, its END and every event in this wave")

    # A transaction over two tables whose order_items event lands a wave later.
    w.transaction_record(txns, TRANSACTIONS, t.two_runs.begin())
    _change(w, orders, ORDERS, "c", _k(id=2), _order(2, "bob", "new", 7.25), 30_200_000, t.two_runs)
    t.held["two_runs"] = t.two_runs.block(ORDER_ITEMS)
    w.transaction_record(txns, TRANSACTIONS, t.two_runs.end())
    w.note(
        orders,
        "transaction 7011: its END and orders event here, its order_items event in wave 2: "
        "nothing of it applies after this wave",
    )

    # The same, its END to be delivered again in wave 2.
    w.transaction_record(txns, TRANSACTIONS, t.end_twice.begin())
    _change(
        w, orders, ORDERS, "u", _k(id=1), _order(1, "ann", "paid", 30.0), 30_300_000, t.end_twice
    )
    t.held["end_twice"] = t.end_twice.block(ORDER_ITEMS)
    w.transaction_record(txns, TRANSACTIONS, t.end_twice.end())
    return t


def wave2(w: _Wave, t: Transactions) -> None:
    orders = w.file(ORDERS, 0)
    items = w.file(ORDER_ITEMS, 0)
    txns = w.file(TRANSACTIONS, 0)
    # The events the first wave's two transactions still missed.
    _change(
        w,
        items,
        ORDER_ITEMS,
        "c",
        _k(order_id=2, item_no=1),
        _item(2, 1, "JAR-1", 4),
        30_200_100,
        t.two_runs,
        t.held["two_runs"],
    )
    _change(
        w,
        items,
        ORDER_ITEMS,
        "u",
        _k(order_id=1, item_no=1),
        _item(1, 1, "TEA-S", 3),
        30_300_100,
        t.end_twice,
        t.held["end_twice"],
    )
    w.note(items, "the missing order_items events of 7011 and 7012: both apply whole now")
    w.transaction_record(txns, TRANSACTIONS, t.end_twice.end())
    w.note(txns, "7012's END delivered again (same counts): a redelivery, counts once")

    # A transaction whose END never comes.
    w.transaction_record(txns, TRANSACTIONS, t.no_end.begin())
    _change(w, orders, ORDERS, "c", _k(id=3), _order(3, "cy", "new", 99.0), 30_400_000, t.no_end)
    _change(
        w,
        items,
        ORDER_ITEMS,
        "c",
        _k(order_id=3, item_no=1),
        _item(3, 1, "POT-9", 1),
        30_400_100,
        t.no_end,
    )
    w.note(orders, "transaction 7013: BEGIN and events, its END never comes: pending, not applied")

    # A transaction with a truncate, whose insert and END land in wave 3.
    w.transaction_record(txns, TRANSACTIONS, t.truncating.begin())
    w.truncate(
        items,
        ORDER_ITEMS,
        0,
        lsn=30_500_000,
        tx=t.truncating.tx,
        ts=t.truncating.ts,
        block=t.truncating.block(ORDER_ITEMS),
    )
    w.note(items, "transaction 7014's truncate of shop.order_items waits for its END (wave 3)")

    # A malformed END: its collections count fewer events than it says.
    bad = _Transaction(7099, 30_999_000, us("08:55:00"))
    w.transaction_record(txns, TRANSACTIONS, bad.end({"shop.orders": 1}) | {"event_count": 2})
    w.note(txns, "an END whose data_collections do not add up to its event_count: quarantined")


def wave3(w: _Wave, t: Transactions) -> None:
    orders = w.file(ORDERS, 0)
    items = w.file(ORDER_ITEMS, 0)
    txns = w.file(TRANSACTIONS, 0)
    _change(
        w,
        items,
        ORDER_ITEMS,
        "c",
        _k(order_id=1, item_no=3),
        _item(1, 3, "TEA-L", 1),
        30_500_100,
        t.truncating,
    )
    w.transaction_record(txns, TRANSACTIONS, t.truncating.end())
    w.note(txns, "7014's END: its truncate (landed a wave earlier) and insert apply together")

    w.transaction_record(txns, TRANSACTIONS, t.later.begin())
    _change(
        w,
        orders,
        ORDERS,
        "u",
        _k(id=10),
        _order(10, "eve", "returned", 12.5),
        30_600_000,
        t.later,
    )
    w.transaction_record(txns, TRANSACTIONS, t.later.end())
    w.note(txns, "7014 and 7015 committed after 7013 and are applied: 7013 is overdue")

    conflicting = t.whole.end({"shop.orders": 2, "shop.order_items": 2})
    w.transaction_record(txns, TRANSACTIONS, conflicting)
    w.note(txns, "7010's END again with other counts: quarantined; 7010 stays as applied")
    w.resend(orders, t.whole_first_event, later_ms=60 * 60 * 1000)
    w.note(orders, "7010's orders event re-sent at a new offset after 7010 applied: counts once")
