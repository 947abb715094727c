"""PostgreSQL table ``public.accounts`` and what each wave lands."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .events import POSTGRES, File, _event, _ms, _uid, _Wave, land


def _postgres(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    lsn: str = "",
    tx_id: str = "",
    read_method: str = "postgres-cdc-wal",
) -> dict[str, Any]:
    """An event of the PostgreSQL table public.accounts."""
    metadata = {
        "schema": "public",
        "table": "accounts",
        "is_deleted": change_type == "DELETE",
        "change_type": change_type,
        "tx_id": tx_id,
        "lsn": lsn,
        "primary_keys": ["id"],
    }
    return _event(
        POSTGRES, read_method, "public_accounts", _uid(label), ts, [_ms(ts), lsn], metadata, payload
    )


def _account(
    account_id: int,
    email: str,
    balance: Decimal,
    *,
    counter: int = 7,
    active: bool = True,
    closed_at: str | None = None,
) -> dict[str, Any]:
    """A row of public.accounts."""
    return {
        "id": account_id,
        "email": email,
        "balance": balance,
        "lifetime_events": counter,
        "active": active,
        "closed_at": closed_at,
    }


def _account_event(
    label: str,
    change_type: str,
    account: tuple[Any, ...],
    ts: str,
    lsn: str = "",
    tx_id: str = "",
    read_method: str = "postgres-cdc-wal",
) -> dict[str, Any]:
    """An event row of FILES: an account as (id, email, balance[, other columns]), a
    source_timestamp on 2024-05-01."""
    account_id, email, balance, *other = account
    row = _account(account_id, email, Decimal(balance)) | (other[0] if other else {})
    ts = f"2024-05-01T{ts}"
    return _postgres(label, change_type, row, ts, lsn=lsn, tx_id=tx_id, read_method=read_method)


def _without_uuid() -> dict[str, Any]:
    """An event without uuid (quarantined)."""
    no_uuid = _account_event(
        "bad/pg-nouuid", "UPDATE", (2, "bob@example.com", "1.5"), "10:03:10Z", "0/2050", "609"
    )
    del no_uuid["uuid"]
    return no_uuid


BACKFILL = "postgresql-backfill"
ANN, BOB, CY, DEE = "ann@example.com", "bob@example.com", "cy@example.com", "dee@example.com"

# The files each wave lands, their events in file order as
# (label, change type, (id, email, balance[, other columns]), source_timestamp[, lsn, tx_id]).
# fmt: off
FILES = (
    File(1, "10:00", "5e5e5e_postgresql-backfill_0_0.jsonl", (
        ("pg/1/bf", "INSERT", (1, ANN, "100.10"), "10:00:00.000000Z"),
        ("pg/2/bf", "INSERT", (2, BOB, "250.75"), "10:00:00.000000Z"),
    ), ("PostgreSQL backfill",), BACKFILL),
    File(1, "10:02", "5e5e5e_postgres-cdc-wal_0_9A8.jsonl", (
        ("pg/1/u502", "UPDATE", (1, ANN, "99.75"), "10:00:05Z", "0/10A0", "502"),
        ("pg/1/u501", "UPDATE", (1, ANN, "120.25"), "10:00:05Z", "0/9A8", "501"),
        ("pg/3/i", "INSERT", (3, CY, "1.05"), "10:02:00.250Z", "0/1F00", "600"),
        ("pg/3/u1", "UPDATE", (3, CY, "2.05"), "10:02:00.250Z", "0/1F40", "600"),
        ("pg/3/u2", "UPDATE", (3, CY, "3.30", {"lifetime_events": 9007199254740993}),
         "10:02:00.250Z", "0/1F80", "600"),
    ), (
        "PostgreSQL: equal source_timestamp ordered by lsn 0/9A8 < 0/10A0 (string order "
        "wrong); three changes of id 3 in tx 600 make one version",
    )),
    File(2, "10:04", "5e5e5e_postgres-cdc-wal_0_2000.jsonl", (
        ("pg/2/u611", "UPDATE", (2, BOB, "200.5"), "10:03:00.500Z", "0/2100", "611"),
        _without_uuid(),
        ("pg/2/u610", "UPDATE", (2, BOB, "225.5"), "10:03:00Z", "0/2000", "610"),
        ("pg/4/u", "UPDATE", (4, DEE, "8.8", {"active": False}), "10:03:30Z", "1/100", "630"),
        ("pg/4/i", "INSERT", (4, DEE, "8.8"), "10:03:30Z", "0/FFFFFF00", "620"),
    ), (
        "'10:03:00Z' before '10:03:00.500Z' (string order wrong); line 2 without uuid "
        "(quarantine); lsn 0/FFFFFF00 < 1/100 at equal source_timestamp",
    )),
    File(3, "10:09", "5e5e5e_postgres-cdc-wal_1_200.jsonl", (
        ("pg/1/d", "DELETE", (1, ANN, "99.75"), "10:04:00Z", "1/200", "700"),
        # The source added a column (ALTER TABLE ... ADD COLUMN tier): later events carry it.
        ("pg/3/tier", "UPDATE", (3, CY, "3.30", {"tier": "gold"}), "10:05:00Z", "1/300", "701"),
    ), ("PostgreSQL column added mid-stream (tier): appears in typed models",)),
    File(3, "10:09", "5e5e5e_postgresql-backfill_0_1.jsonl", (
        ("pg/2/bf2", "INSERT", (2, BOB, "250.75"), "10:02:30Z"),
    ), ("PostgreSQL backfill landing after newer CDC (no-op)",), BACKFILL),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, POSTGRES, "public_accounts", FILES, _account_event)
