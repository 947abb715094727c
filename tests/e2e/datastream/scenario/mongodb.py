"""MongoDB collection ``app.users`` (nested documents) and what each wave lands."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .events import MONGODB, File, _event, _ms, _uid, _Wave, land


def _mongo(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    increment: int = 1,
    read_method: str = "mongodb-cdc",
) -> dict[str, Any]:
    """An event of the MongoDB collection app.users."""
    metadata = {
        "database": "app",
        "collection": "users",
        "change_type": change_type,
        "is_deleted": change_type == "DELETE",
        "primary_keys": ["_id"],
    }
    sort_keys = [_ms(ts), increment]
    return _event(MONGODB, read_method, "app_users", _uid(label), ts, sort_keys, metadata, payload)


def _user(
    oid: str, name: str, city: str, *, active: bool = True, score: Decimal = Decimal("4.5")
) -> dict[str, Any]:
    """A MongoDB document of app.users (nested objects and arrays)."""
    return {
        "_id": oid,
        "name": name,
        "profile": {"address": {"city": city, "zip": "20121"}, "langs": ["it", "en"]},
        "score": score,
        "active": active,
        "visits": 12,
    }


def _user_event(
    label: str,
    change_type: str,
    user: tuple[Any, ...],
    ts: str,
    increment: int = 1,
    read_method: str = "mongodb-cdc",
) -> dict[str, Any]:
    """An event row of FILES: a user as (_id, name, city[, active]), a source_timestamp on
    2024-05-01."""
    doc = _user(*user[:3], active=user[3] if len(user) > 3 else True)
    ts = f"2024-05-01T{ts}"
    return _mongo(label, change_type, doc, ts, increment=increment, read_method=read_method)


ADA, LINUS = "6630a1b2c3d4e5f601234567", "6630a1b2c3d4e5f601234568"
BACKFILL = "mongodb-backfill"

# The files each wave lands, their events in file order as
# (label, change type, (_id, name, city[, active]), source_timestamp[, increment]).
# fmt: off
FILES = (
    File(1, "10:00", "0b0b0b_mongodb-backfill_0_0.jsonl", (
        ("mg/67/bf", "CREATE", (ADA, "Ada", "Milano"), "10:00:00.000Z"),
    ), ("MongoDB backfill with nested document, array, decimal 4.5",), BACKFILL),
    File(1, "10:00", "0b0b0b_mongodb-cdc_1_0.jsonl", (
        ("mg/68/c", "CREATE", (LINUS, "Linus", "Helsinki"), "10:00:30.000Z"),
    )),
    # Equal source_timestamp, order from sort_keys [ms, 9] < [ms, 10].
    File(2, "10:09", "0b0b0b_mongodb-cdc_2_0.jsonl", (
        ("mg/67/u10", "UPDATE", (ADA, "Ada", "Torino", False), "10:09:00.000Z", 10),
        ("mg/67/u9", "UPDATE", (ADA, "Ada", "Torino"), "10:09:00.000Z", 9),
    ), ("MongoDB: equal source_timestamp ordered by sort_keys (9 before 10)",)),
    File(3, "10:11", "0b0b0b_mongodb-cdc_3_0.jsonl", (
        ("mg/68/d", "DELETE", (LINUS, "Linus", "Helsinki"), "10:11:00Z"),
    ), ("MongoDB delete",)),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, MONGODB, "app_users", FILES, _user_event)
