"""The GoogleSQL change stream ``shop_gsql``: tables ``Products`` (every type code) and
``Orders`` (composite key), the rows they hold, and what each wave lands from its partitions
(g1, g2, g3; g1 splits into g1a and g1b at 10:04; g2 and g3 merge into g23 at 10:06)."""

from __future__ import annotations

from .streams import (
    BIG,
    BOOL,
    BYTES,
    DATE,
    FLOAT64,
    GSQL,
    INT64,
    JPEG,
    JSON,
    NUMERIC,
    PNG,
    STRING,
    TIMESTAMP,
    _array,
    _b64,
    _Stream,
    _Table,
    _Wave,
    at,
)

PRODUCTS = _Table(
    "Products",
    ("ProductId",),
    (
        ("ProductId", INT64),
        ("Name", STRING),
        ("Price", NUMERIC),
        ("Weight", FLOAT64),
        ("InStock", BOOL),
        ("Thumbnail", BYTES),
        ("Released", DATE),
        ("UpdatedAt", TIMESTAMP),
        ("Attributes", JSON),
        ("Tags", _array(STRING)),
        ("Views", INT64),
        ("Ratings", _array(FLOAT64)),
    ),
)
ORDERS = _Table(
    "Orders",
    ("CustomerId", "OrderId"),
    (
        ("CustomerId", STRING),
        ("OrderId", INT64),
        ("Status", STRING),
        ("Total", NUMERIC),
        ("PlacedAt", TIMESTAMP),
        ("Note", STRING),
    ),
)

# Rows as Spanner's JSON encoding writes them (INT64 as numbers or decimal strings, NUMERIC as
# decimal strings, FLOAT64 numbers or words, BYTES base64, JSON columns as strings holding JSON).
P1 = {
    "ProductId": "1",
    "Name": "Espresso Grinder Mühle",
    "Price": "249.99",
    "Weight": 3.25,
    "InStock": True,
    "Thumbnail": _b64(PNG),
    "Released": "2024-05-01",
    "UpdatedAt": "2024-06-03T10:00:30.5Z",
    "Attributes": '{"sku": 12345678901234567891, "dims": {"w": 12.5, "h": 30}, "color": "black"}',
    "Tags": ["kitchen", "coffee"],
    "Views": BIG,
    "Ratings": [4.5, "NaN", None],
}
P2 = {
    "ProductId": 2,
    "Name": "Tea Kettle",
    "Price": "12345678901234567890.123456789",
    "Weight": "Infinity",
    "InStock": False,
    "Thumbnail": "",
    "Released": "1999-12-31",
    "UpdatedAt": "2024-06-03T09:59:59.999999999Z",
    "Attributes": "null",
    "Tags": [],
    "Views": 9007199254740992,  # 2**53: still exact as a double
    "Ratings": [],
}
P3 = {
    "ProductId": "3",
    "Name": "Mug 日本",
    "Price": "10.00",
    "Weight": 0.35,
    "InStock": None,
    "Thumbnail": None,
    "Released": None,
    "UpdatedAt": None,
    "Attributes": '[1, "two", {"b": true, "a": null}]',
    "Tags": None,
    "Views": "-42",
    "Ratings": ["-Infinity"],
}
P4 = {
    "ProductId": "4",
    "Name": "Pour-over Stand",
    "Price": "0.1",
    "Weight": 1.2,
    "InStock": True,
    "Thumbnail": _b64(JPEG),
    "Released": "2024-06-01",
    "UpdatedAt": "2024-06-03T12:04:20.000001+02:00",
    "Attributes": '{"origin": "Kyoto", "materials": ["ceramic", "oak"]}',
    "Tags": ["coffee", "ceramic"],
    "Views": 0,
    "Ratings": [4.75, 4.25],
}
P5 = {
    "ProductId": "5",
    "Name": "Coffee Scale",
    "Price": "35",
    "Weight": 0.8,
    "InStock": True,
    "Thumbnail": None,
    "Released": "2023-11-30",
    "UpdatedAt": "2024-06-03T10:04:20Z",
    "Attributes": '{"max_g": 3000}',
    "Tags": ["coffee"],
    "Views": "15",
    "Ratings": None,
}
P5_AGAIN = {
    **P5,
    "Name": "Coffee Scale (refurbished)",
    "Price": "29.90",
    "UpdatedAt": "2024-06-03T10:06:10Z",
    "Views": "0",
}
P6 = {
    "ProductId": "6",
    "Name": "Filter Papers (100 pcs)",
    "Price": "4.99",
    "Weight": 0.15,
    "InStock": True,
    "Thumbnail": None,
    "Released": "2022-01-01",
    "UpdatedAt": "2024-06-03T10:04:20Z",
    "Attributes": "{}",
    "Tags": ["consumable"],
    "Views": "9223372036854775807",
    "Ratings": [3.9],
}
P7_BEFORE_STREAM = {
    "ProductId": "7",
    "Name": "Milk Frother",
    "Price": "6.00",
    "Weight": 0.4,
    "InStock": False,
    "Thumbnail": None,
    "Released": "2021-03-15",
    "UpdatedAt": "2024-05-30T08:00:00Z",
    "Attributes": '{"battery": "AA"}',
    "Tags": ["kitchen"],
    "Views": "1200",
    "Ratings": [3.5],
}
ADA_1001 = {
    "CustomerId": "c-ada",
    "OrderId": 1001,
    "Status": "placed",
    "Total": "74.50",
    "PlacedAt": "2024-06-03T10:01:10.123456Z",
    "Note": None,
}
BOB_1002 = {
    "CustomerId": "c-bob",
    "OrderId": "1002",
    "Status": "placed",
    "Total": "19.99",
    "PlacedAt": "2024-06-03T10:01:10.123456Z",
    "Note": "gift wrap",
}
CYD_1003 = {
    "CustomerId": "c-cyd",
    "OrderId": "1003",
    "Status": "placed",
    "Total": "1000000000000000000000.5",
    "PlacedAt": "2024-06-03T10:08:30Z",
    "Note": "Ünïcødé ✓",
}
DAN_1004_BEFORE_STREAM = {
    "CustomerId": "c-dan",
    "OrderId": "1004",
    "Status": "placed",
    "Total": "5",
    "PlacedAt": "2024-06-02T18:00:00Z",
    "Note": None,
}


def stream() -> _Stream:
    return _Stream(
        GSQL,
        "googlesql",
        ("OLD_AND_NEW_VALUES", "NEW_ROW"),
        (PRODUCTS, ORDERS),
        [(PRODUCTS, P7_BEFORE_STREAM), (ORDERS, DAN_1004_BEFORE_STREAM)],
        decoded=("g1a", "g1b"),
    )


def wave1(w: _Wave, shop: _Stream, third: _Wave) -> None:
    orders = shop.snapshot_path(ORDERS, "at-start.jsonl")
    third.add(orders, *shop.snapshot(ORDERS, "10:00:00"))
    third.note(
        orders,
        "Orders snapshot read at the stream's start, landed after the log files of its period: "
        "c-dan's order, which no good record ever changes, appears; the orders placed since "
        "come from the log",
    )
    init = shop.path(None, "0001.jsonl")
    w.add(
        init,
        shop.children(None, "10:00:00", "00000001", [("g1", [None]), ("g2", [None])]),
        shop.children(None, "10:00:00", "00000002", [("g3", [None])]),
    )
    w.note(init, "initial query (token null): two child_partitions_records, parents [null]")
    g1 = shop.path("g1", "0001.jsonl")
    w.add(
        g1,
        shop.data("g1", "10:00:30.500", "4410000001", PRODUCTS, "INSERT", [P1, P2, P3]),
    )
    bad = w.add(
        g1,
        '{"partition_token":"' + str(shop.token("g1")) + '","ChangeRecord":[{"data_change_'
        'record":[],"heartbeat_record":[{"timestamp":"2024-06-03T10:01:2',
    )
    w.add(
        g1,
        shop.data(
            "g1",
            "10:01:45.250000000",
            "4410000003",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "1", "Price": "229.99"}],
        ),
        shop.heartbeat("g1", "10:02:00"),
    )
    w.note(g1, "one INSERT record with three mods; every type code; INT64 beyond 2**53")
    w.note(g1, f"line {bad}: malformed JSON (truncated line) between good records")
    w.note(g1, "OLD_AND_NEW_VALUES update at 10:01:45.250000000 (9 digits): above the watermark")
    g2 = shop.path("g2", "0001.jsonl")
    w.add(g2, shop.heartbeat("g2", "10:01:00"), shop.heartbeat("g2", "10:01:30"))
    w.note(g2, "heartbeat-only partition holds the watermark at 10:01:30")
    g3 = shop.path("g3", "0001.jsonl")
    w.add(
        g3,
        shop.data("g3", "10:01:10.123456", "4410000002", ORDERS, "INSERT", [ADA_1001, BOB_1002]),
        shop.heartbeat("g3", "10:02:10"),
    )
    w.note(g3, "composite key (STRING, INT64) inserts")


def wave2(w: _Wave, shop: _Stream) -> None:
    g1 = shop.path("g1", "0002.jsonl")
    w.add(
        g1,
        shop.data(
            "g1",
            "10:02:40.125",
            "4410000004",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "1", "Views": "9007199254740995"}, {"ProductId": 3, "Views": 7}],
        ),
        shop.data(
            "g1",
            "10:03:04.999",
            "4410000005",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v1"}],
        ),
        shop.data(
            "g1",
            "10:03:04.999999999",
            "4410000006",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v2"}],
        ),
        shop.data(
            "g1",
            "10:03:05",
            "4410000007",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v3"}],
        ),
        shop.data(
            "g1",
            "10:03:05.000001",
            "4410000008",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v4"}],
        ),
        shop.data(
            "g1",
            "10:03:20.750",
            "4410000009",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "3", "InStock": True}],
            records=2,
            partitions=2,
        ),
        shop.data(
            "g1",
            "10:03:30",
            "4410000010",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "7", "Price": "5.50", "InStock": True}],
        ),
        shop.children("g1", "10:04:00", "00000001", [("g1a", ["g1"]), ("g1b", ["g1"])]),
    )
    w.note(g1, "one UPDATE record with two mods (two keys)")
    w.note(
        g1,
        "one key at 10:03:04.999, 10:03:04.999999999, 10:03:05, 10:03:05.000001 (3/9/0/6 "
        "digits): text order is wrong, instant order gives 'Tea Kettle v4'",
    )
    w.note(g1, "Products 7 first seen through a partial update: nine columns unavailable")
    w.note(g1, "split: g1 ends with a child_partitions_record announcing g1a and g1b at 10:04")
    g2 = shop.path("g2", "0002.jsonl")
    w.add(g2, shop.heartbeat("g2", "10:03:30"), shop.heartbeat("g2", "10:04:30"))
    w.note(g2, "heartbeat-only partition advances")
    g3 = shop.path("g3", "0002.jsonl")
    w.add(
        g3,
        shop.heartbeat("g3", "10:03:00"),
        shop.data(
            "g3",
            "10:03:20.750",
            "4410000009",
            ORDERS,
            "UPDATE",
            [{"CustomerId": "c-ada", "OrderId": "1001", "Status": "shipped"}],
            seq="00000001",
            records=2,
            partitions=2,
        ),
    )
    bad = w.add(
        g3,
        shop.data(
            "g3",
            "10:03:40",
            "4410000011",
            ORDERS,
            "UPDATE",
            [{"CustomerId": "c-dan", "OrderId": "1004", "PlacedAt": "2024-06-03T25:61:00Z"}],
            commit=False,
        ),
    )
    w.add(g3, shop.heartbeat("g3", "10:04:50"))
    w.note(g3, "transaction 4410000009 spread over g1 and g3, both landing in this wave")
    w.note(g3, f"line {bad}: TIMESTAMP value 25:61:00 does not fit its type (quarantined)")
    g1a = shop.path("g1a", "0001.jsonl")
    w.add(
        g1a,
        shop.data("g1a", "10:04:20", "4410000012", PRODUCTS, "INSERT", [P4, P5, P6]),
        shop.data("g1a", "10:04:40", "4410000013", PRODUCTS, "DELETE", [{"ProductId": "5"}]),
        shop.heartbeat("g1a", "10:05:00"),
    )
    w.note(
        g1a,
        "child g1a's records (decoded JSON fields) wait: g1b, announced without lines yet, "
        "holds the watermark at its start 10:04:00",
    )


def wave3(w: _Wave, shop: _Stream, first: _Wave, second: _Wave) -> None:
    g1b = shop.path("g1b", "0001.jsonl")
    w.add(
        g1b,
        shop.heartbeat("g1b", "10:05:30"),
        shop.data(
            "g1b",
            "10:05:40",
            "4410000014",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "7", "Name": "Milk Frother Pro"}],
        ),
    )
    w.note(g1b, "NEW_ROW update of Products 7 (after ALTER): waits behind stalled g3")
    products = shop.snapshot_path(PRODUCTS, "0001.jsonl")
    first.add(products, *shop.snapshot(PRODUCTS, "10:06:00"))
    first.note(
        products,
        "Products snapshot read at 10:06, landed before the log files of its period: it waits "
        "for the watermark (wave 4), and every change at or before 10:06 leaves the row as it "
        "reads, so it makes no version; the changes after it (10:06:10, 10:06:30) apply on top",
    )
    g1a = shop.path("g1a", "0002.jsonl")
    w.add(g1a, shop.data("g1a", "10:06:10", "4410000016", PRODUCTS, "INSERT", [P5_AGAIN]))
    unknown = w.add(
        g1a,
        {
            "partition_token": shop.token("g1a"),
            "ChangeRecord": [
                {
                    "data_change_record": [],
                    "heartbeat_record": [],
                    "child_partitions_record": [],
                    "partition_start_record": [
                        {
                            "start_timestamp": at("10:07:00"),
                            "record_sequence": "00000001",
                            "partition_tokens": [shop.token("g1a")],
                        }
                    ],
                }
            ],
        },
    )
    w.add(g1a, shop.heartbeat("g1a", "10:08:00"))
    w.note(g1a, "re-insert of Products 5 after its delete (waits until wave 4)")
    w.note(g1a, f"line {unknown}: unknown record kind partition_start_record (quarantined)")
    again = shop.path("g1a", "0001.redelivered.jsonl")
    w.put(again, second.files()[shop.path("g1a", "0001.jsonl")])
    w.note(again, "wave 2's g1a file landed again under another name: counts once")
    g2 = shop.path("g2", "0003.jsonl")
    w.add(
        g2,
        shop.heartbeat("g2", "10:05:45"),
        shop.children("g2", "10:06:00", "00000001", [("g23", ["g2", "g3"])]),
    )
    w.note(g2, "merge: g2 announces g23 (parents g2, g3) and ends")
    g23 = shop.path("g23", "0001.jsonl")
    w.add(
        g23,
        shop.data(
            "g23",
            "10:06:30",
            "4410000015",
            ORDERS,
            "UPDATE",
            [{"CustomerId": "c-bob", "OrderId": "1002", "Status": "shipped"}],
            records=2,
            partitions=2,
        ),
        shop.heartbeat("g23", "10:07:00"),
    )
    w.note(
        g23,
        "merged child's records land before parent g3 has finished: they wait; its transaction "
        "4410000015 also has a record in g1b that lands in wave 4",
    )
    w.note(
        shop.path("g3", "0003.jsonl"),
        "g3 stalls: its next file lands only in wave 4, the watermark stays at 10:04:50",
    )


def wave4(w: _Wave, shop: _Stream, third: _Wave) -> None:
    again = shop.snapshot_path(ORDERS, "at-start.again.jsonl")
    w.put(again, third.files()[shop.snapshot_path(ORDERS, "at-start.jsonl")])
    w.note(again, "wave 3's Orders snapshot landed again under another name: counts once")
    g3 = shop.path("g3", "0003.jsonl")
    w.add(
        g3,
        shop.data(
            "g3",
            "10:05:20",
            "4410000017",
            ORDERS,
            "UPDATE",
            [
                {
                    "CustomerId": "c-ada",
                    "OrderId": 1001,
                    "Status": "delivered",
                    "Note": "left at door",
                }
            ],
        ),
        shop.heartbeat("g3", "10:05:50"),
        shop.children("g3", "10:06:00", "00000001", [("g23", ["g2", "g3"])]),
    )
    w.note(g3, "stalled g3 finally lands and ends (same child record as g2): merge complete")
    g1b = shop.path("g1b", "0002.jsonl")
    w.add(
        g1b,
        shop.data(
            "g1b",
            "10:06:30",
            "4410000015",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "6", "InStock": False}],
            seq="00000001",
            records=2,
            partitions=2,
        ),
        shop.heartbeat("g1b", "10:09:10"),
    )
    w.note(g1b, "second half of 4410000015 (g23 + g1b): the transaction completes")
    g23 = shop.path("g23", "0002.jsonl")
    w.add(
        g23,
        shop.data("g23", "10:08:30", "4410000018", ORDERS, "INSERT", [CYD_1003]),
        shop.data(
            "g23",
            "10:08:40",
            "4410000019",
            ORDERS,
            "DELETE",
            [{"CustomerId": "c-bob", "OrderId": "1002"}],
        ),
        shop.heartbeat("g23", "10:09:00"),
    )
    w.note(g23, "NEW_ROW delete (no old values) of an order; NUMERIC a double cannot hold")
    g1a = shop.path("g1a", "0003.jsonl")
    w.add(g1a, shop.heartbeat("g1a", "10:09:30"))
