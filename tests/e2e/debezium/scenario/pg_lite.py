"""The connector ``pg_lite`` (JsonConverter without schemas, Debezium 2.3,
decimal.handling.mode=double): tables ``sales.order_lines`` and ``public.profiles``, their rows,
and what each wave lands."""

from __future__ import annotations

import json
from typing import Any

from .connect import (
    BYTES,
    DOUBLE,
    INT32,
    INT64,
    LITE,
    PH_ARRAY,
    PLACEHOLDER,
    PLACEHOLDER_BASE64,
    PNG,
    STRING,
    ZONED_T,
    _array_t,
    _b64,
    _k,
    _key_only,
    _Server,
    _Table,
    _Wave,
    us,
)

PG_LITE = _Server(LITE, False, "2.3.4.Final", "shopdb")

ORDER_LINES = _Table(
    PG_LITE,
    "sales",
    "order_lines",
    ("order_id", "line_no"),
    (
        ("order_id", INT32),
        ("line_no", INT32),
        ("sku", STRING),
        ("qty", INT32),
        ("unit_price", DOUBLE),
        ("big_ref", INT64),
        ("created_at", ZONED_T),
        ("note", STRING),
    ),
)
PROFILES = _Table(
    PG_LITE,
    "public",
    "profiles",
    ("id",),
    (
        ("id", INT32),
        ("handle", STRING),
        ("bio", STRING),
        ("avatar", BYTES),
        ("aliases", _array_t(STRING)),
    ),
)


def _line(order_id: int, line_no: int, sku: str, qty: int, price: float) -> dict[str, Any]:
    """A sales.order_lines row (no schemas: plain JSON; numeric as double)."""
    return {
        "order_id": order_id,
        "line_no": line_no,
        "sku": sku,
        "qty": qty,
        "unit_price": price,
        "big_ref": 9007199254740995 + 10 * order_id + line_no,
        "created_at": "2024-06-03T07:55:00Z",
        "note": None,
    }


SNAPSHOT_LITE = 9_800_000  # pg_lite's snapshot lsn (txId 5000)
TRUNCATE_LSN = 10_200_000

PROFILE7 = {
    "id": 7,
    "handle": "ada",
    "bio": "Mathematician and writer, known for notes on the Analytical Engine. " * 10,
    "avatar": _b64(PNG + b"ada"),
    "aliases": ["Countess of Lovelace", "A.A.L."],
}
PROFILE8 = {
    "id": 8,
    "handle": "grace",
    "bio": "Computer scientist and rear admiral; popularised the term 'debugging'. " * 10,
    "avatar": _b64(PNG + b"grace"),
    "aliases": ["Amazing Grace"],
}


def _profile_toasted(pid: int, handle: str, **real: Any) -> dict[str, Any]:
    row = {
        "id": pid,
        "handle": handle,
        "bio": PLACEHOLDER,
        "avatar": PLACEHOLDER_BASE64,
        "aliases": PH_ARRAY,
    }
    row.update(real)
    return row


def wave1(w: _Wave) -> None:
    # ---- pg_lite snapshot and streaming ---------------------------------------------------
    lsnap = {"lsn": SNAPSHOT_LITE, "tx": 5000}
    ol0 = w.file(ORDER_LINES, 0)
    ol1 = w.file(ORDER_LINES, 1)
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "r",
        _k(order_id=1, line_no=1),
        after=_line(1, 1, "ESP-1KG", 2, 19.99),
        ts=us("08:00:00.700"),
        snapshot="first",
        **lsnap,
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "r",
        _k(order_id=1, line_no=2),
        after=_line(1, 2, "TMP-58", 1, 24.5),
        ts=us("08:00:00.710"),
        **lsnap,
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "r",
        _k(order_id=2, line_no=1),
        after=_line(2, 1, "GRD-PRO", 5, 0.75),
        ts=us("08:00:00.720"),
        **lsnap,
    )
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "u",
        _k(order_id=1, line_no=1),
        after=_line(1, 1, "ESP-1KG", 3, 19.99),
        lsn=9_900_000,
        tx=5001,
        ts=us("08:10:00.123"),
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "u",
        _k(order_id=1, line_no=2),
        after=_line(1, 2, "TMP-58", 4, 24.5),
        lsn=9_950_000,
        tx=5002,
        ts=us("08:11:00"),
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "c",
        _k(order_id=3, line_no=1),
        after=_line(3, 1, "TEA-S", 1, 3.25),
        lsn=10_400_000,
        tx=5011,
        ts=us("08:40:00"),
    )
    w.note(
        ol0,
        "no envelope; composite key; int beyond 2**53 as a JSON number; "
        "ZonedTimestamp text kept as sent (plain JSON)",
    )
    w.note(ol1, "insert at lsn above the truncate lands a wave before the truncate: stays live")

    pr0 = w.file(PROFILES, 0)
    pr1 = w.file(PROFILES, 1)
    w.change(pr1, PROFILES, 1, "r", _k(id=7), after=PROFILE7, ts=us("08:00:00.800"), **lsnap)
    w.change(
        pr0,
        PROFILES,
        0,
        "r",
        _k(id=8),
        after=PROFILE8,
        ts=us("08:00:00.810"),
        snapshot="last",
        **lsnap,
    )
    w.change(
        pr0,
        PROFILES,
        0,
        "u",
        _k(id=8),
        after=_profile_toasted(8, "grace.hopper"),
        lsn=9_960_000,
        tx=5003,
        ts=us("08:12:00.456"),
    )
    w.note(
        pr0,
        "no envelope: placeholders (text, base64 bytes, [placeholder]) filled from the snapshot",
    )


def wave2(w: _Wave, first: _Wave) -> None:
    # ---- pg_lite ---------------------------------------------------------------------------
    ol0 = w.file(ORDER_LINES, 0)
    w.truncate(ol0, ORDER_LINES, 0, lsn=TRUNCATE_LSN, tx=5007, ts=us("08:30:00"))
    w.named["order_lines/0"] = ol0
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "c",
        _k(order_id=1, line_no=1),
        after=_line(1, 1, "ESP-1KG", 1, 18.75),
        lsn=10_300_000,
        tx=5009,
        ts=us("08:35:00"),
    )
    w.note(
        ol0,
        "truncate (op t, null key): every key of sales.order_lines deleted at its lsn; "
        "the later insert of (1,1) lives again",
    )
    ol1 = w.file(ORDER_LINES, 1)
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "u",
        _k(order_id=1, line_no=2),
        after=_line(1, 2, "TMP-58", 6, 24.5),
        lsn=10_050_000,
        tx=5004,
        ts=us("08:15:00"),
    )
    w.note(
        ol1,
        "out-of-order files: this file sorts after the truncate's but holds an earlier "
        "lsn (10050000 < 10200000; also < 9950000 as text): (1,2) stays deleted",
    )

    pr0 = w.file(PROFILES, 0)
    w.change(
        pr0,
        PROFILES,
        0,
        "c",
        _k(id=70),
        after=_profile_toasted(70, "ada"),
        lsn=10_250_000,
        tx=5008,
        ts=us("08:32:00.250"),
    )
    w.record(pr0, PROFILES, 0, _k(id=9), None, us("08:33:00") // 1000)
    w.lines[pr0][-1] = w.lines[pr0][-1].replace(
        '"payload":null',
        '"payload":"{\\"before\\":null,\\"after\\":{\\"id\\":9,\\"handle\\":\\"tr"',
    )
    w.note(
        pr0,
        "primary key change 7 -> 70: only the create (with placeholders) has landed; "
        "its delete comes in wave 3, so the columns are unknown for now",
    )
    w.note(pr0, "payload that is not JSON (line 2): quarantined")


def wave3(w: _Wave, first: _Wave, second: _Wave) -> None:
    # ---- pg_lite ---------------------------------------------------------------------------
    ol0 = w.file(ORDER_LINES, 0)
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "c",
        _k(order_id=4, line_no=1),
        after=_line(4, 1, "MUG-01", 2, 7.5),
        lsn=10_150_000,
        tx=5006,
        ts=us("08:25:00"),
    )
    truncate = json.loads(second.lines[second.named["order_lines/0"]][0])
    assert truncate["key"] is None
    w.resend(ol0, truncate, later_ms=15 * 60 * 1000)
    w.note(
        ol0,
        "late insert of (4,1) below the truncate's lsn: deleted by the truncate that "
        "landed a wave earlier",
    )
    w.note(ol0, "the truncate re-sent at a new offset: counts once")
    ol1 = w.file(ORDER_LINES, 1)
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "u",
        _k(order_id=2, line_no=1),
        after=_line(2, 1, "GRD-PRO", 7, 0.75),
        lsn=10_100_000,
        tx=5005,
        ts=us("08:20:00"),
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "x",
        _k(order_id=2, line_no=1),
        after=_line(2, 1, "GRD-PRO", 8, 0.75),
        lsn=10_600_000,
        tx=5012,
        ts=us("08:50:00"),
    )
    w.note(ol1, "late update of (2,1) below the truncate: a version closed by the truncate")
    w.note(ol1, "unknown op 'x' (line 2): quarantined")

    pr1 = w.file(PROFILES, 1)
    pk_ts = us("08:32:00.250")
    w.change(
        pr1,
        PROFILES,
        1,
        "d",
        _k(id=7),
        before=_key_only(PROFILES, {"id": 7}),
        lsn=10_250_000,
        tx=5008,
        ts=pk_ts,
    )
    w.tombstone(pr1, PROFILES, 1, _k(id=7), pk_ts)
    w.note(
        pr1,
        "the delete half of the 7 -> 70 key change lands a wave after the create: "
        "70's placeholders now take 7's values; 7 is closed",
    )
    pr0 = w.file(PROFILES, 0)
    w.change(
        pr0,
        PROFILES,
        0,
        "u",
        _k(id=8),
        after=_profile_toasted(8, "rear.admiral.hopper"),
        lsn=10_350_000,
        tx=5010,
        ts=us("08:36:00"),
    )
    w.change(
        pr0,
        PROFILES,
        0,
        "u",
        _k(id=70),
        after=_profile_toasted(70, "ada", bio="First programmer. " * 30),
        lsn=10_500_000,
        tx=5050,
        ts=us("08:45:00"),
    )
    w.note(pr0, "no envelope: placeholders filled from values two waves earlier (snapshot)")
    # primary key changes 70 -> 700 -> 7000: with 7 -> 70 (its delete just landed), a chain of
    # three, its last two changes in one run
    for old, new, lsn, tx, hms in (
        (70, 700, 10_550_000, 5060, "08:50:00"),
        (700, 7000, 10_560_000, 5061, "08:51:00"),
    ):
        pk = {"lsn": lsn, "tx": tx, "ts": us(hms)}
        w.change(pr1, PROFILES, 1, "d", _k(id=old), before=_key_only(PROFILES, {"id": old}), **pk)
        w.tombstone(pr1, PROFILES, 1, _k(id=old), pk["ts"])
        w.change(pr0, PROFILES, 0, "c", _k(id=new), after=_profile_toasted(new, "ada"), **pk)
    w.note(
        pr0,
        "primary key changes 70 -> 700 -> 7000 after 7 -> 70: 7000's bio is 70's (its wave-3 "
        "update), its avatar and aliases are 7's, three keys back",
    )
