"""The PostgreSQL-dialect change stream ``ledger_pg``: tables ``accounts`` and ``transfers``,
the rows they hold, and what each wave lands from its partitions p1 and p2."""

from __future__ import annotations

from .streams import (
    BIG,
    BOOL,
    BYTES,
    DATE,
    FLOAT64,
    INT64,
    PG_JSONB,
    PG_NUMERIC,
    PGSQL,
    STRING,
    TIMESTAMP,
    _array,
    _b64,
    _Stream,
    _Table,
    _Wave,
    at,
)

ACCOUNTS = _Table(
    "accounts",
    ("account_id",),
    (
        ("account_id", STRING),
        ("owner", STRING),
        ("balance", PG_NUMERIC),
        ("opened_on", DATE),
        ("updated_at", TIMESTAMP),
        ("prefs", PG_JSONB),
        ("active", BOOL),
        ("avatar", BYTES),
        ("limits", _array(INT64)),
    ),
)
TRANSFERS = _Table(
    "transfers",
    ("transfer_id",),
    (
        ("transfer_id", INT64),
        ("from_account", STRING),
        ("to_account", STRING),
        ("amount", PG_NUMERIC),
        ("fx_rate", FLOAT64),
        ("memo", STRING),
        ("created_at", TIMESTAMP),
    ),
)

# Rows as Spanner's JSON encoding writes them (INT64 as numbers or decimal strings, NUMERIC as
# decimal strings, FLOAT64 numbers or words, BYTES base64, JSON columns as strings holding JSON).
ACC_001 = {
    "account_id": "acc-001",
    "owner": "Ada Lovelace",
    "balance": "1250.50",
    "opened_on": "2015-12-10",
    "updated_at": "2024-06-03T10:00:20.250Z",
    "prefs": '{"lang": "en", "alerts": {"sms": false, "email": true}}',
    "active": True,
    "avatar": _b64(b"\x00\x01\x02\xff"),
    "limits": ["100", 2500, None],
}
ACC_002 = {
    "account_id": "acc-002",
    "owner": "Grace Hopper",
    "balance": "99999999999999999999999999999.999999999",
    "opened_on": "1906-12-09",
    "updated_at": "2024-06-03T10:00:20.250Z",
    "prefs": "{}",
    "active": True,
    "avatar": None,
    "limits": [],
}
ACC_003 = {
    "account_id": "acc-003",
    "owner": "Dorothy Vaughan",
    "balance": "12.345",
    "opened_on": "2024-06-03",
    "updated_at": "2024-06-03T10:04:00Z",
    "prefs": '{"tier": 2}',
    "active": True,
    "avatar": None,
    "limits": [1],
}
ACC_003_AGAIN = {
    **ACC_003,
    "balance": "0",
    "updated_at": "2024-06-03T10:07:00Z",
    "prefs": '{"tier": 1}',
}
ACC_004_BEFORE_STREAM = {
    "account_id": "acc-004",
    "owner": "Katherine Johnson",
    "balance": "0",
    "opened_on": "1953-06-01",
    "updated_at": "2024-01-01T00:00:00Z",
    "prefs": '{"lang": "en"}',
    "active": True,
    "avatar": None,
    "limits": [BIG],
}
ACC_005 = {
    "account_id": "acc-005",
    "owner": "Émilie du Châtelet",
    "balance": "-0.5",
    "opened_on": "2020-02-29",
    "updated_at": "2024-06-03T10:00:20.250Z",
    "prefs": '"plain JSON string"',
    "active": False,
    "avatar": "",
    "limits": None,
}
TRANSFER_BIG = {
    "transfer_id": BIG,
    "from_account": "acc-001",
    "to_account": "acc-002",
    "amount": "100.25",
    "fx_rate": "NaN",
    "memo": "initial",
    "created_at": "2024-06-03T10:00:40Z",
}
TRANSFER_42 = {
    "transfer_id": 42,
    "from_account": "acc-002",
    "to_account": "acc-001",
    "amount": "100",
    "fx_rate": "-Infinity",
    "memo": None,
    "created_at": "2024-06-03T10:01:30.123Z",
}


def stream() -> _Stream:
    return _Stream(
        PGSQL,
        "postgresql",
        ("NEW_VALUES", "NEW_ROW_AND_OLD_VALUES"),
        (ACCOUNTS, TRANSFERS),
        [(ACCOUNTS, ACC_004_BEFORE_STREAM)],
    )


def wave1(w: _Wave, ledger: _Stream) -> None:
    init = ledger.path(None, "0001.jsonl")
    w.add(
        init,
        ledger.children(None, "10:00:00.000", "1000012389", [("p1", [None]), ("p2", [None])]),
    )
    w.note(init, "initial query (token null) announcing p1 and p2, parents [null]")
    p1 = ledger.path("p1", "0001.jsonl")
    w.add(
        p1,
        ledger.data(
            "p1", "10:00:20.250", "7305118801", ACCOUNTS, "INSERT", [ACC_001, ACC_002, ACC_005]
        ),
        ledger.data(
            "p1",
            "10:00:40",
            "7305118802",
            TRANSFERS,
            "INSERT",
            [TRANSFER_BIG],
            seq="9",
            records=2,
            last=False,
        ),
        ledger.data(
            "p1",
            "10:00:40",
            "7305118802",
            TRANSFERS,
            "UPDATE",
            [{"transfer_id": BIG, "memo": "initial (corrected)", "fx_rate": 0.9975}],
            seq="10",
            records=2,
        ),
        ledger.data(
            "p1",
            "10:01:30.123",
            "7305118803",
            ACCOUNTS,
            "UPDATE",
            [
                {
                    "account_id": "acc-001",
                    "balance": "1200.50",
                    "updated_at": "2024-06-03T10:01:30.123Z",
                }
            ],
        ),
        ledger.data(
            "p1",
            "10:01:30.123",
            "7305118804",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-002", "balance": "99999999999999999999999999899.999999999"}],
            records=2,
            partitions=2,
        ),
        ledger.heartbeat("p1", "10:02:00"),
    )
    w.note(
        p1,
        "one transaction, two records of one key: INSERT seq '9' then NEW_VALUES UPDATE seq "
        "'10' (numeric order) -> one version",
    )
    w.note(
        p1,
        "two transactions at the same commit timestamp 10:01:30.123 (7305118803 complete, "
        "7305118804 spread over p1 and p2: its p2 record lands in wave 3)",
    )
    p2 = ledger.path("p2", "0001.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:01:00"))
    w.note(p2, "heartbeat-only partition holds the watermark at 10:01:00")


def wave2(w: _Wave, ledger: _Stream, first: _Wave) -> None:
    again = ledger.path("p1", "0001.dup.jsonl")
    w.put(again, first.files()[ledger.path("p1", "0001.jsonl")])
    w.note(
        again,
        "wave 1's p1 file landed again under another name: 7305118804's p1 half counts once, "
        "so the transaction stays incomplete",
    )
    p1 = ledger.path("p1", "0002.jsonl")
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:10.654321",
            "7305118805",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-002", "owner": "Rear Admiral Grace Hopper"}],
        ),
    )
    unknown = w.add(
        p1,
        {
            "partition_token": ledger.token("p1"),
            "partition_event_record": {
                "commit_timestamp": at("10:02:20"),
                "record_sequence": "00000001",
                "partition_token": ledger.token("p1"),
                "move_in_events": [],
                "move_out_events": [{"destination_partition_token": ledger.token("p2")}],
            },
        },
    )
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:25",
            "7305118815",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-005", "owner": "Gabrielle Émilie du Châtelet"}],
        ),
    )
    accounts = ledger.snapshot_path(ACCOUNTS, "0001.jsonl")
    w.add(accounts, *ledger.snapshot(ACCOUNTS, "10:02:30"))
    bad_row = w.add(
        accounts,
        {"values": {**ACC_005, "account_id": "acc-099", "balance": "12x", "owner": "nobody"}},
    )
    w.note(
        accounts,
        "accounts snapshot read at 10:02:30 (PostgreSQL dialect), landed between the log files "
        "of its period: it completes acc-004's NEW_VALUES update at 10:02:40, and acc-002's "
        "balance already holds 7305118804's change, whose p2 half lands in wave 3",
    )
    w.note(accounts, f"line {bad_row}: a NUMERIC value that does not fit (quarantined alone)")
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:40",
            "7305118806",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-004", "active": False, "updated_at": "2024-06-03T10:02:40Z"}],
        ),
    )
    bad = w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:50",
            "7305118807",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-001", "limits": ["100", "12x"]}],
            commit=False,
        ),
    )
    w.add(p1, ledger.heartbeat("p1", "10:03:10"))
    w.note(p1, "NEW_VALUES update: owner only, balance from the latest applied value")
    w.note(p1, f"line {unknown}: unknown record kind partition_event_record (quarantined)")
    w.note(p1, "acc-004 first seen through a NEW_VALUES update: completed by the snapshot")
    w.note(p1, f"line {bad}: ARRAY<INT64> element '12x' does not fit (quarantined)")
    p2 = ledger.path("p2", "0003.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:03:00"))
    w.note(
        p2,
        "p2's later file lands before its earlier one: the watermark passes 10:01:30.123, but "
        "7305118804 is still incomplete and must wait",
    )


def wave3(w: _Wave, ledger: _Stream) -> None:
    p2 = ledger.path("p2", "0002.jsonl")
    w.add(
        p2,
        ledger.data(
            "p2",
            "10:01:30.123",
            "7305118804",
            TRANSFERS,
            "INSERT",
            [TRANSFER_42],
            seq="00000001",
            records=2,
            partitions=2,
        ),
        # Older than the model's state (wave 2's 10:02:25 update came after it).
        ledger.data(
            "p2",
            "10:02:20",
            "7305118816",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-005", "owner": "É. du Châtelet"}],
            commit=False,
        ),
        ledger.heartbeat("p2", "10:02:30"),
    )
    w.note(
        p2,
        "the late p2 half of 7305118804: the transaction applies below the watermark and takes "
        "its place before acc-002's later versions, the snapshot's balance already had it",
    )
    w.note(
        p2,
        "a late update of acc-005 at 10:02:20, before the snapshot read at 10:02:30 and the "
        "10:02:25 update: it takes its place in history and overwrites neither",
    )
    p1 = ledger.path("p1", "0003.jsonl")
    w.add(
        p1,
        ledger.data("p1", "10:04:00", "7305118808", ACCOUNTS, "INSERT", [ACC_003]),
        ledger.data(
            "p1",
            "10:05:10",
            "7305118809",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-001", "active": True}],
        ),
        ledger.data(
            "p1", "10:05:20", "7305118810", ACCOUNTS, "DELETE", [{"account_id": "acc-003"}]
        ),
        ledger.heartbeat("p1", "10:06:30"),
    )
    w.note(p1, "NEW_ROW_AND_OLD_VALUES update writing the same values: no new version")
    w.note(p1, "insert then delete of acc-003 (NEW_ROW_AND_OLD_VALUES delete with old values)")
    p2 = ledger.path("p2", "0004.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:05:30"))


def wave4(w: _Wave, ledger: _Stream) -> None:
    p1 = ledger.path("p1", "0004.jsonl")
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:06:50",
            "7305118811",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-004", "owner": "Katherine G. Johnson"}],
        ),
        ledger.data("p1", "10:07:00", "7305118812", ACCOUNTS, "INSERT", [ACC_003_AGAIN]),
        ledger.data("p1", "10:07:10", "7305118813", TRANSFERS, "DELETE", [{"transfer_id": BIG}]),
        ledger.data(
            "p1",
            "10:07:40",
            "7305118814",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-001", "balance": "1100.50"}],
            records=2,
            partitions=2,
        ),
        ledger.heartbeat("p1", "10:08:00"),
    )
    bad = w.add(
        p1,
        '{"partition_token":"' + str(ledger.token("p1")) + '","data_change_record":{"commit_'
        'timestamp":"2024-06-03T10:08:05Z","record_sequence":"00000000","server_trans',
    )
    w.note(p1, "NEW_ROW_AND_OLD_VALUES update of acc-004: full row, nothing unavailable any more")
    w.note(p1, "re-insert of acc-003 after its delete; delete of the big transfer key")
    w.note(
        p1,
        "7305118814 has one of its two records landed, above the watermark: incomplete, waits",
    )
    w.note(p1, f"line {bad}: truncated last line (quarantined)")
    p2 = ledger.path("p2", "0005.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:07:20"))
    w.note(p2, "p2's heartbeat holds the watermark at 10:07:20")
