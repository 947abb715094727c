"""The connector ``pg_main`` (JsonConverter with schemas, Debezium 2.7): tables
``public.documents``, ``inventory.products`` and ``public.accounts``, their rows, and what each
wave lands."""

from __future__ import annotations

import json
from typing import Any

from .connect import (
    BOOLEAN,
    BYTES,
    DATE_T,
    DOUBLE,
    INT32,
    INT64,
    JPEG,
    JSON_T,
    MAIN,
    MICRO_T,
    PDF,
    PH_ARRAY,
    PLACEHOLDER,
    PLACEHOLDER_BASE64,
    PNG,
    STRING,
    VSD_T,
    ZONED_T,
    _array_t,
    _b64,
    _days,
    _decimal,
    _decimal_t,
    _k,
    _key_only,
    _micros,
    _Server,
    _Table,
    _vsd,
    _Wave,
    us,
)

PG_MAIN = _Server(MAIN, True, "2.7.3.Final", "appdb")

DOCUMENTS = _Table(
    PG_MAIN,
    "public",
    "documents",
    ("id",),
    (
        ("id", INT32),
        ("title", STRING),
        ("body", STRING),
        ("attachment", BYTES),
        ("tags", _array_t(STRING)),
        ("meta", JSON_T),
        ("updated_at", ZONED_T),
    ),
)
PRODUCTS = _Table(
    PG_MAIN,
    "inventory",
    "products",
    ("id",),
    (
        ("id", INT64),
        ("name", STRING),
        ("price", _decimal_t(2, 20)),
        ("weight_kg", VSD_T),
        ("released", DATE_T),
        ("restocked_at", MICRO_T),
        ("listed_at", ZONED_T),
        ("barcode", INT64),
        ("specs", JSON_T),
        ("thumbnail", BYTES),
        ("dims", _array_t(INT32)),
        ("in_stock", BOOLEAN),
        ("rating", DOUBLE),
    ),
)
ACCOUNTS = _Table(
    PG_MAIN,
    "public",
    "accounts",
    ("id",),
    (
        ("id", INT32),
        ("email", STRING),
        ("balance", _decimal_t(2, 12)),
        ("notes", STRING),
        ("status", STRING),
    ),
)


def _doc(
    doc_id: int,
    title: str,
    body: str | None,
    attachment: str | None,
    tags: list[str] | None,
    meta: str | None,
    updated_at: str | None,
) -> dict[str, Any]:
    """A public.documents row; attachment already base64 (or its placeholder)."""
    return {
        "id": doc_id,
        "title": title,
        "body": body,
        "attachment": attachment,
        "tags": tags,
        "meta": meta,
        "updated_at": updated_at,
    }


def _toasted(doc_id: int, title: str, updated_at: str, **real: Any) -> dict[str, Any]:
    """A documents update image whose TOASTable columns are unchanged unless given."""
    row = _doc(doc_id, title, PLACEHOLDER, PLACEHOLDER_BASE64, PH_ARRAY, PLACEHOLDER, updated_at)
    row.update(real)
    return row


def _product(
    pid: int,
    name: str,
    price: str | None,
    weight: str | None,
    released: str | None,
    restocked: str | None,
    listed: str | None,
    barcode: int | None,
    specs: str | None,
    thumbnail: bytes | None,
    dims: list[int] | None,
    in_stock: bool | None,
    rating: float | None,
) -> dict[str, Any]:
    """An inventory.products row as the JsonConverter encodes it."""
    return {
        "id": pid,
        "name": name,
        "price": _decimal(price, 2),
        "weight_kg": _vsd(weight),
        "released": _days(released),
        "restocked_at": _micros(restocked),
        "listed_at": listed,
        "barcode": barcode,
        "specs": specs,
        "thumbnail": _b64(thumbnail),
        "dims": dims,
        "in_stock": in_stock,
        "rating": rating,
    }


def _account(aid: int, email: str, balance: str, notes: str, status: str) -> dict[str, Any]:
    return {
        "id": aid,
        "email": email,
        "balance": _decimal(balance, 2),
        "notes": notes,
        "status": status,
    }


SNAPSHOT_MAIN = 24_000_000  # pg_main's snapshot lsn (txId 900)

DOC1 = _doc(
    1,
    "Onboarding guide",
    "Welcome aboard! " * 40,
    _b64(PDF),
    ["guide", "hr"],
    '{"pages": 12, "lang": "en"}',
    "2024-06-01T09:15:00.123456Z",
)
DOC2 = _doc(
    2,
    "Release notes 2.0",
    "Highlights: incremental marts, TOAST-aware CDC. " * 30,
    _b64(PDF + b"2.0"),
    ["release"],
    '{"version": "2.0", "breaking": true}',
    "2024-06-02T16:00:00Z",
)
DOC3 = _doc(
    3,
    "Runbook",
    "Step 1: page the on-call. " * 50,
    _b64(JPEG),
    ["ops", "runbook"],
    '{"owner": "sre", "rev": 7}',
    "2024-05-30T11:11:11.5+02:00",
)
DOC5 = _doc(
    5,
    "Quarterly report Q2",
    "Revenue grew in every region; details follow. " * 25,
    _b64(PDF + b"Q2"),
    ["finance", "report"],
    '{"quarter": "Q2", "draft": true}',
    "2024-06-03T08:44:59.000001Z",
)

P101 = _product(
    101,
    "Espresso beans 1kg",
    "18.90",
    "1.000",
    "2023-05-23",
    "2024-06-02T17:45:00.123456",
    "2024-06-01T07:30:00Z",
    4006381333931,
    '{"origin": "Colombia", "roast": "medium", "tags": ["fair-trade", "organic"]}',
    PNG,
    [10, 20, 30],
    True,
    4.5,
)
P102 = _product(
    102,
    "Grinder Pro",
    "12345678901234567.89",
    "12345678901234567890.123456789",
    "1969-01-01",
    "1969-12-31T23:59:59.999999",
    "2024-06-01T09:30:00.5+02:00",
    9007199254740993,
    '{"name": "Mühle", "made_in": "日本", "certs": null}',
    JPEG,
    [],
    False,
    None,
)
P103 = _product(
    103,
    "Tamper 58mm",
    "10.00",
    "7",
    "2024-02-29",
    None,
    "2024-05-31T23:59:59.999999Z",
    9223372036854775807,
    '{"b": [1, {"y": 2, "x": 1}], "a": true}',
    b"\x00\x01\x02\xff",
    [1, 2, 3],
    True,
    3.75,
)
P104 = _product(
    104,
    "Sampler tea",
    "0.10",
    "0.250",
    "2000-01-01",
    "2024-06-01T00:00:00",
    "2024-06-02T12:00:00.000001Z",
    -9007199254740993,
    '"loose leaf"',
    None,
    None,
    True,
    0.25,
)

A1 = _account(1, "ann@example.com", "1500.00", "VIP since 2019; prefers email. " * 20, "active")
A2 = _account(2, "bob@example.com", "250.75", "Net-30 terms. " * 30, "active")
A3 = _account(3, "cy@example.com", "0.00", "Prefers phone calls. " * 25, "active")


def wave1(w: _Wave) -> None:
    # ---- pg_main snapshot: accounts, documents, products (one snapshot, one lsn) ----------
    snap = {"lsn": SNAPSHOT_MAIN, "tx": 900}
    acc = w.file(ACCOUNTS, 0)
    w.change(
        acc, ACCOUNTS, 0, "r", _k(id=1), after=A1, ts=us("08:00:00.050"), snapshot="first", **snap
    )
    w.change(
        acc, ACCOUNTS, 0, "r", _k(id=2), after=A2, ts=us("08:00:00.060"), snapshot="true", **snap
    )
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=1),
        before=A1,
        after={**A1, "balance": _decimal("1250.50", 2), "notes": PLACEHOLDER},
        lsn=24_150_000,
        tx=9005,
        ts=us("08:07:30"),
    )
    w.note(acc, "REPLICA IDENTITY FULL update: before image present, after carries a placeholder")

    d0 = w.file(DOCUMENTS, 0)
    d1 = w.file(DOCUMENTS, 1)
    w.change(d1, DOCUMENTS, 1, "r", _k(id=1), after=DOC1, ts=us("08:00:00.500"), **snap)
    w.change(d0, DOCUMENTS, 0, "r", _k(id=2), after=DOC2, ts=us("08:00:00.510"), **snap)
    w.change(d1, DOCUMENTS, 1, "r", _k(id=3), after=DOC3, ts=us("08:00:00.520"), **snap)
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=1),
        after=_toasted(1, "Onboarding guide (2024)", "2024-06-03T08:05:00.250111Z"),
        lsn=24_100_000,
        tx=9003,
        ts=us("08:05:00.250111"),
    )
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=3),
        after=_toasted(3, "Runbook", "2024-06-03T08:10:00.0005Z", body="Runbook v2. " * 60),
        lsn=24_200_000,
        tx=9006,
        ts=us("08:10:00.000500"),
    )
    w.note(
        d1,
        "snapshot (op r) of documents; placeholders (text, bytea base64, text[] [ph], "
        "jsonb) filled from the snapshot in the same wave",
    )
    w.note(d1, "source.ts_us finer than source.ts_ms (08:05:00.250111)")
    w.named["documents/1"] = d1

    prod = w.file(PRODUCTS, 0)
    w.change(prod, PRODUCTS, 0, "r", _k(id=101), after=P101, ts=us("08:00:00.900"), **snap)
    w.change(prod, PRODUCTS, 0, "r", _k(id=102), after=P102, ts=us("08:00:00.910"), **snap)
    w.add_line(prod, '{"topic":"pg_main.inventory.products","partition":0,"offset":')
    w.change(prod, PRODUCTS, 0, "r", _k(id=103), after=P103, ts=us("08:00:00.920"), **snap)
    w.change(
        prod,
        PRODUCTS,
        0,
        "r",
        _k(id=104),
        after=P104,
        ts=us("08:00:03.000"),
        snapshot="last",
        **snap,
    )
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=104),
        after={**P104, "price": _decimal("0.15", 2)},
        lsn=24_010_000,
        tx=9001,
        ts=us("08:00:01.250"),
    )
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=101),
        after={**P101, "price": _decimal("19.50", 2)},
        lsn=24_050_000,
        tx=9002,
        ts=us("08:02:00.000100"),
    )
    w.note(
        prod,
        "typed columns: Decimal, VariableScaleDecimal, Date (pre-1970 too), "
        "MicroTimestamp (pre-1970 too), ZonedTimestamp with offset, Json (object, scalar "
        "string, unicode), int64 beyond 2**53, bytes, int[]",
    )
    w.note(prod, "malformed JSON line (line 3) between good records")
    w.named["products"] = prod
    w.note(
        prod,
        "snapshot row read at 08:00:03 but changed at lsn > snapshot at 08:00:01.25: "
        "snapshot version's valid_from clipped",
    )


def wave2(w: _Wave, first: _Wave) -> None:
    # ---- documents -------------------------------------------------------------------------
    d1 = w.file(DOCUMENTS, 1)
    resent = [json.loads(line) for line in first.lines[first.named["documents/1"]]]
    for rec in resent[2:4]:  # u id1 @ 24_100_000 and u id3 @ 24_200_000
        w.resend(d1, rec, later_ms=40 * 60 * 1000)
    w.note(
        d1,
        "connector restart: two wave-1 changes re-sent at new offsets with a later "
        "envelope ts_ms (same lsn / key / op): count once",
    )
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=1),
        after=_toasted(
            1,
            "Onboarding guide (2024, rev 2)",
            "2024-06-03T08:20:00.000001Z",
            tags=["guide", "hr", "onboarding"],
        ),
        lsn=24_300_000,
        tx=9007,
        ts=us("08:20:00.000001"),
    )
    w.note(d1, "placeholders whose real values landed one wave earlier (snapshot, wave 1)")
    # primary key change 3 -> 30: delete (partition 1) and create (partition 0), one lsn / txId
    pk = {"lsn": 24_500_000, "tx": 9013, "ts": us("08:40:00.123456")}
    w.change(d1, DOCUMENTS, 1, "d", _k(id=3), before=_key_only(DOCUMENTS, {"id": 3}), **pk)
    w.tombstone(d1, DOCUMENTS, 1, _k(id=3), pk["ts"])
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=5),
        after=_toasted(5, "Quarterly report Q2 (final)", "2024-06-03T08:55:00.000008Z"),
        lsn=24_650_000,
        tx=9016,
        ts=us("08:55:00.000008"),
    )
    w.note(d1, "primary key change 3 -> 30: delete + tombstone of the old key")
    w.note(d1, "key 5: update with placeholders, its insert lands only in wave 3 (unknown until)")

    d0 = w.file(DOCUMENTS, 0)
    tx = {"tx": 9010, "ts": us("08:30:00.500")}
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=2),
        after=_toasted(2, "Release notes 2.0.1", "2024-06-03T08:30:00.5Z"),
        lsn=24_400_000,
        **tx,
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=2),
        after=_toasted(
            2,
            "Release notes 2.0.1",
            "2024-06-03T08:30:00.5Z",
            body="Release notes 2.0.1: fixes the ingest stall.",
        ),
        lsn=24_400_200,
        **tx,
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=2),
        after=_toasted(
            2, "Release notes 2.0.2", "2024-06-03T08:30:00.500001Z", tags=["release", "patch"]
        ),
        lsn=24_400_400,
        **tx,
    )
    w.note(
        d0,
        "three changes of key 2 in one txId: one version; the last change's body "
        "placeholder takes the value set by the second change of the same transaction",
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "c",
        _k(id=30),
        after=_toasted(
            30,
            "Runbook (archived)",
            "2024-06-03T08:40:00.123456Z",
            meta='{"archived": true, "by": "ops"}',
        ),
        **pk,
    )
    w.note(
        d0,
        "primary key change 3 -> 30: the create's placeholders take the OLD key's latest "
        "values (body from the wave-1 update, attachment / tags from the snapshot)",
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=4),
        after=_toasted(4, "Legal hold", "2024-06-03T08:50:00.000007Z", meta='{"hold": true}'),
        lsn=24_600_000,
        tx=9015,
        ts=us("08:50:00.000007"),
    )
    w.note(d0, "key 4: placeholders with no earlier value: unknown, listed in unavailable_columns")
    w.named["documents/0"] = d0

    # ---- products --------------------------------------------------------------------------
    prod = w.file(PRODUCTS, 0)
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=102),
        after={**P102, "name": "Grinder Pro (old)", "price": _decimal("999.99", 2)},
        lsn=23_990_000,
        tx=8990,
        ts=us("07:59:58.500"),
    )
    w.note(
        prod,
        "streaming change with lsn below the snapshot's, landing after the snapshot: "
        "goes before it in history, does not override current",
    )
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=103),
        after={**P103, "price": _decimal("11.00", 2), "listed_at": None},
        lsn=24_120_000,
        tx=9004,
        ts=us("08:06:00.000001"),
    )
    w.note(prod, "streaming change with lsn above the snapshot's: overrides it")
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=101),
        after={**P101, "price": _decimal("19.50", 2)},
        lsn=24_300_500,
        tx=9008,
        ts=us("08:21:00"),
    )
    # the Decimal's bytes are not base64
    lines = w.lines[prod]
    lines[-1] = lines[-1].replace(json.dumps(_decimal("19.50", 2))[1:-1], "12,50 EUR", 1)
    assert "12,50 EUR" in lines[-1]
    w.note(prod, "a Decimal whose bytes are not base64 (line 3): quarantined")

    # ---- accounts --------------------------------------------------------------------------
    acc = w.file(ACCOUNTS, 0)
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=3),
        before=A3,
        after={**A3, "status": "suspended", "notes": PLACEHOLDER},
        lsn=24_350_000,
        tx=9009,
        ts=us("08:25:00.000002"),
    )
    w.note(acc, "key 3 first seen in an update: its placeholder filled from the before image")
    a2_late = {**A2, "notes": "Net-45 terms. " * 30}
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=2),
        before=a2_late,
        after={**a2_late, "email": "robert@example.com", "notes": PLACEHOLDER},
        lsn=24_450_000,
        tx=9012,
        ts=us("08:35:00.000004"),
    )
    w.note(
        acc,
        "key 2: the before image's value (set by a change landing only in wave 3) wins "
        "over the older snapshot value",
    )


def wave3(w: _Wave, first: _Wave, second: _Wave) -> None:
    # ---- documents -------------------------------------------------------------------------
    last_of_d0 = json.loads(second.lines[second.named["documents/0"]][-1])
    d0 = w.file(DOCUMENTS, 0, start=last_of_d0["offset"])
    w.again(d0, last_of_d0)
    w.note(d0, "overlapping dump: starts with wave 2's last partition-0 record (same offset)")
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=30),
        after=_toasted(
            30,
            "Runbook (archived)",
            "2024-06-03T08:40:00.123456Z",
            meta='{"by": "ops", "archived": true}',
        ),
        lsn=24_750_000,
        tx=9018,
        ts=us("09:02:00"),
    )
    w.note(
        d0,
        "update of key 30 leaving the row as it is (placeholders filled, same JSON in "
        "another key order): no new version",
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=4),
        after=_toasted(
            4,
            "Legal hold",
            "2024-06-03T09:05:00.000009Z",
            meta='{"hold": true}',
            body="Hold notice: do not delete. " * 40,
        ),
        lsn=24_800_000,
        tx=9019,
        ts=us("09:05:00.000009"),
    )
    w.note(d0, "key 4: body becomes known; attachment and tags stay unknown")
    del_ts = us("09:10:00")
    w.change(
        d0,
        DOCUMENTS,
        0,
        "d",
        _k(id=2),
        before=_key_only(DOCUMENTS, {"id": 2}),
        lsn=24_900_000,
        tx=9022,
        ts=del_ts,
    )
    w.tombstone(d0, DOCUMENTS, 0, _k(id=2), del_ts)
    w.note(d0, "delete + tombstone (tombstone skipped, not quarantined)")

    d1 = w.file(DOCUMENTS, 1)
    w.change(
        d1,
        DOCUMENTS,
        1,
        "c",
        _k(id=5),
        after=DOC5,
        lsn=24_550_000,
        tx=9014,
        ts=us("08:45:00.000005"),
    )
    w.note(
        d1, "late insert of key 5 (lsn below its wave-2 update): fills that update's placeholders"
    )
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=1),
        after=_toasted(1, "Onboarding guide (2024, rev 2)", "2024-06-03T09:00:00.999999Z"),
        lsn=24_700_000,
        tx=9017,
        ts=us("09:00:00.999999"),
    )
    w.note(
        d1,
        "placeholders whose real values landed two waves earlier (body, attachment, "
        "meta from the wave-1 snapshot; tags from wave 2)",
    )
    # primary key change 30 -> 300: a chain of two (3 -> 30 came in wave 2)
    pk = {"lsn": 24_760_000, "tx": 9030, "ts": us("09:03:00")}
    w.change(d1, DOCUMENTS, 1, "d", _k(id=30), before=_key_only(DOCUMENTS, {"id": 30}), **pk)
    w.tombstone(d1, DOCUMENTS, 1, _k(id=30), pk["ts"])
    w.change(
        d0,
        DOCUMENTS,
        0,
        "c",
        _k(id=300),
        after=_toasted(300, "Runbook (archived)", "2024-06-03T09:03:00Z"),
        **pk,
    )
    w.note(
        d0,
        "primary key change 30 -> 300, the second of a chain (3 -> 30 in wave 2): body, "
        "attachment and tags are 3's values, which 30 took over; meta is 30's own",
    )

    # ---- products --------------------------------------------------------------------------
    prod = w.file(PRODUCTS, 0)
    del_ts = us("09:06:00")
    w.change(
        prod,
        PRODUCTS,
        0,
        "d",
        _k(id=104),
        before=_key_only(PRODUCTS, {"id": 104}),
        lsn=24_800_500,
        tx=9020,
        ts=del_ts,
    )
    w.tombstone(prod, PRODUCTS, 0, _k(id=104), del_ts)
    w.change(
        prod,
        PRODUCTS,
        0,
        "c",
        _k(id=105),
        after=_product(
            105,
            "Return credit",
            "-5.25",
            None,
            "2024-06-03",
            "2024-06-03T09:07:00",
            "2024-06-03T09:07:00.000010Z",
            None,
            None,
            None,
            None,
            False,
            None,
        ),
        lsn=24_850_000,
        tx=9021,
        ts=us("09:07:00.000010"),
    )
    w.note(prod, "delete + tombstone; insert with a negative Decimal (two's complement)")
    copy_of = first.named["products"]
    again = copy_of.replace(".jsonl", ".redelivered.jsonl")
    w.put(again, first.files()[copy_of])
    w.note(
        again,
        "the wave-1 products file landed again under another name: its records count "
        "once, its malformed line is quarantined again",
    )

    # ---- accounts --------------------------------------------------------------------------
    acc = w.file(ACCOUNTS, 0)
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=2),
        before=A2,
        after={**A2, "notes": "Net-45 terms. " * 30},
        lsn=24_420_000,
        tx=9011,
        ts=us("08:31:00.000003"),
    )
    w.note(acc, "late update of key 2 (lsn below its wave-2 update): a version in between")
    del_ts = us("09:12:00")
    a1_now = {**A1, "balance": _decimal("1250.50", 2)}
    w.change(acc, ACCOUNTS, 0, "d", _k(id=1), before=a1_now, lsn=24_950_000, tx=9023, ts=del_ts)
    w.tombstone(acc, ACCOUNTS, 0, _k(id=1), del_ts)
    w.note(acc, "REPLICA IDENTITY FULL delete (full before image) + tombstone")
