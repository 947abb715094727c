"""MySQL database ``shop``: tables ``orders`` (JSON) and ``audit_log`` (no primary key), the
events of each, and what each wave lands."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .events import MYSQL, File, _event, _ms, _uid, _Wave, land


def _mysql(
    label: str,
    table: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    log_file: str = "",
    log_position: int = 0,
    *,
    read_method: str = "mysql-cdc-binlog",
    primary_keys: list[str] | None = None,
) -> dict[str, Any]:
    """A MySQL event of database ``shop``."""
    pks = ["order_id"] if primary_keys is None else primary_keys
    metadata = {
        "table": table,
        "database": "shop",
        "primary_keys": pks,
        "log_file": log_file,
        "log_position": log_position,
        "change_type": change_type,
        "is_deleted": change_type in ("DELETE", "UPDATE-DELETE"),
    }
    return _event(
        MYSQL,
        read_method,
        f"shop_{table}",
        _uid(label),
        ts,
        [_ms(ts), log_file, log_position],
        metadata,
        payload,
    )


def _order(
    order_id: int,
    status: str,
    *,
    customer_id: int = 501,
    amount: Decimal = Decimal("10.50"),
    ext_ref: int = 9007199254740991,
    paid: bool = False,
    note: str | None = None,
) -> dict[str, Any]:
    """A row of shop.orders."""
    return {
        "order_id": order_id,
        "customer_id": customer_id,
        "status": status,
        "amount": amount,
        "ext_ref": ext_ref,
        "paid": paid,
        "note": note,
    }


def _order10() -> dict[str, Any]:
    """Order 10: an int below -2**53, a BIGINT at 2**63-1, a 30-digit decimal, a NULL."""
    return _order(
        10,
        "new",
        customer_id=-9007199254740993,
        amount=Decimal("12345678901234567890.123456789"),
        ext_ref=9223372036854775807,
        paid=True,
        note=None,
    )


B9 = "mysql-bin.000009"
B10 = "mysql-bin.000010"


def _order_event(
    label: str,
    change_type: str,
    row: dict[str, Any],
    ts: str,
    log_file: str = "",
    log_position: int = 0,
    read_method: str = "mysql-cdc-binlog",
) -> dict[str, Any]:
    """An event row of ORDERS: a shop.orders row, a source_timestamp on 2024-05-01, a binlog
    position."""
    ts = f"2024-05-01T{ts}"
    return _mysql(
        label, "orders", change_type, row, ts, log_file, log_position, read_method=read_method
    )


def _without_key_column() -> dict[str, Any]:
    """An event whose payload misses its key column (quarantined)."""
    bad_key = _order_event("bad/nokey", "UPDATE", _order(12, "new"), "10:01:20Z", B10, 1100)
    del bad_key["payload"]["order_id"]
    return bad_key


def _without_log_position() -> dict[str, Any]:
    """A CDC event without log_position (quarantined)."""
    no_pos = _order_event("bad/nopos", "UPDATE", _order(10, "lost"), "10:01:44Z", B10, 1650)
    del no_pos["source_metadata"]["log_position"]
    return no_pos


def _audit_event(
    label: str, change_type: str, user_name: str, at: str, ts: str, log_file: str, log_position: int
) -> dict[str, Any]:
    """An event row of AUDIT_LOG: a login of a user at a time, a source_timestamp on
    2024-05-01, a binlog position; the table has no primary key."""
    row = {"event": "login", "user_name": user_name, "at": f"2024-05-01T{at}"}
    ts = f"2024-05-01T{ts}"
    return _mysql(label, "audit_log", change_type, row, ts, log_file, log_position, primary_keys=[])


# A line cut short: malformed JSON.
TRUNCATED = (
    '{"stream_name": "projects/acme-data/locations/europe-west1/streams/mysql-shop", '
    '"read_method": "mysql-cdc-binlog", "object": "shop_orders", "uuid": "'
)
ORDER8_Y = ("ord8/u1", "UPDATE", _order(8, "paid", paid=True), "10:01:05Z", B10, 500)
ORDER8_Z = ("ord8/u2", "UPDATE", _order(8, "shipped", paid=True), "10:01:40Z", B10, 1500)

# The files of shop.orders each wave lands, their events in file order as
# (label, change type, row, source_timestamp[, binlog file, position]).
# fmt: off
ORDERS = (
    File(1, "10:00", "3f9a1c_mysql-backfill-fulldump_0_0.jsonl", (
        ("ord1/bf1", "INSERT", _order(1, "new"), "10:00:01.000000Z"),
        ("ord11/bf1", "INSERT",
         _order(11, "archived", amount=Decimal("0.1"), note="only ever backfilled"),
         "10:00:01.000000Z"),
    ), ("MySQL backfill (fulldump): order 1 before its CDC, order 11 backfill-only",),
        "mysql-backfill-fulldump"),
    File(1, "10:01", "7be2d0_mysql-cdc-binlog_1714557600_9_900.jsonl", (
        ("ord1/u1", "UPDATE", _order(1, "paid", paid=True), "10:00:03.000Z", B9, 900),
        ("ord2/i", "INSERT", _order(2, "new"), "10:00:04Z", B9, 1200),
        TRUNCATED,
        ("ord3/i", "INSERT", _order(3, "new", note="gift"), "10:00:06.250Z", B9, 1500),
        ("ord8/i", "INSERT", _order(8, "new"), "10:00:12Z", B9, 10800),
        ("ord8/i", "INSERT", _order(8, "new"), "10:00:12Z", B9, 10800),
        ("ord4/i", "INSERT", _order(4, "new"), "10:00:14Z", B9, 11200),
        ("ord6/i", "INSERT", _order(6, "new"), "10:00:16Z", B9, 11600),
        ("ord7/i", "INSERT", _order(7, "new"), "10:00:18Z", B9, 12000),
        ("ord9/i", "INSERT", _order(9, "new"), "10:00:20Z", B9, 12400),
        ("ord10/i", "INSERT", _order10(), "10:00:22Z", B9, 12800),
    ), (
        "line 3 malformed JSON between good lines (quarantine)",
        "order 8 insert: same uuid twice in one file",
        "order 10: int beyond -2**53, bigint 2**63-1, 30-digit decimal, null, boolean",
        "order 1 update at mysql-bin.000009:900 (string order of 900 vs 10000 is wrong)",
    )),
    # file b's path sorts after a's but holds both earlier-in-file and later positions
    File(1, "10:02", "7be2d0_mysql-cdc-binlog_1714557660_10_300.jsonl", (
        ("ord2/u", "UPDATE", _order(2, "shipped"), "10:01:00.500Z", B10, 300),
        ("ord3/d", "DELETE", _order(3, "new", note="gift"), "10:00:10.123Z", B9, 10400),
        ("ord1/u2", "UPDATE", _order(1, "shipped", paid=True), "10:00:08Z", B9, 10000),
    ), (
        "order 1 update at mysql-bin.000009:10000; order 2 update at mysql-bin.000010:300 "
        "(position smaller than in .000009); lines not in source order",
    )),
    File(2, "10:05", "3f9a1c_mysql-backfill-incremental_0_1.jsonl", (
        ("ord1/bf2", "INSERT", _order(1, "paid", paid=True), "10:00:08"),
    ), (
        "backfill of order 1 landing after newer CDC, source_timestamp '...10:00:08' equal "
        "to the CDC update's '...10:00:08Z': sits before it, equals the open version "
        "(no-op)",
    ), "mysql-backfill-incremental"),
    File(2, "10:06", "7be2d0_mysql-cdc-binlog_1714557665_10_500.jsonl", (
        ORDER8_Y,
        ("ord3/reinsert", "INSERT", _order(3, "new", note="gift"), "10:01:10Z", B10, 700),
        # primary key change 4 -> 5: UPDATE-DELETE (old key) + UPDATE-INSERT (new key)
        ("ord4/ud", "UPDATE-DELETE", _order(4, "new"), "10:01:12Z", B10, 800),
        ("ord5/ui", "UPDATE-INSERT", _order(5, "new"), "10:01:12Z", B10, 800),
        # same-key update as a pair, insert half written first
        ("ord6/ui", "UPDATE-INSERT", _order(6, "confirmed"), "10:01:14Z", B10, 900),
        ("ord6/ud", "UPDATE-DELETE", _order(6, "new"), "10:01:14Z", B10, 900),
        # no-op update
        ("ord7/noop", "UPDATE", _order(7, "new"), "10:01:16Z", B10, 1000),
        # a later binlog position with an EARLIER timestamp (valid_from clipping)
        ("ord9/u2", "UPDATE", _order(9, "cancelled"), "10:01:25Z", B10, 1300),
        ("ord9/u1", "UPDATE", _order(9, "paid", paid=True), "10:01:30Z", B10, 1200),
        ORDER8_Z,
        _without_key_column(),
    ), (
        "re-insert of order 3 after delete (identical row: new version)",
        "PK change 4->5 as UPDATE-DELETE + UPDATE-INSERT at mysql-bin.000010:800",
        "order 6: UPDATE-INSERT then UPDATE-DELETE lines, same key, same position: one "
        "update version",
        "order 7 no-op update; order 9 clipping; order 8 update Y (dup in another file)",
        "last line: payload without key column order_id (quarantine)",
    )),
    File(2, "10:07", "7be2d0_mysql-cdc-binlog_1714557666_10_500.jsonl", (
        ORDER8_Y,
    ), ("same uuid as a line of the other file of this wave",)),
    File(3, "10:09", "7be2d0_mysql-cdc-binlog_1714557630_9_13200.jsonl", (
        ("ord2/u-late", "UPDATE", _order(2, "packed"), "10:00:30Z", B9, 13200),
        _without_log_position(),
        ("ord10/d", "DELETE", _order10(), "10:01:45Z", B10, 1700),
        ORDER8_Z,
    ), (
        "late order 2 update (mysql-bin.000009:13200) sorting between applied events",
        "line 2: CDC event without log_position (quarantine)",
        "order 8 update Z again (duplicate across waves)",
    )),
)

# The files of shop.audit_log (no primary key: the whole row is the key), their events as
# (label, change type, user_name, at, source_timestamp, binlog file, position).
AUDIT_LOG = (
    File(1, "10:01", "19ac44_mysql-cdc-binlog_1714557635_9_14000.jsonl", (
        ("audit/ann", "INSERT", "ann", "10:00:35", "10:00:35Z", B9, 14000),
        ("audit/bob", "INSERT", "bob", "10:00:36", "10:00:36Z", B9, 14100),
    ), ("table without primary key (primary_keys []): whole row is the key",)),
    File(2, "10:06", "19ac44_mysql-cdc-binlog_1714557702_10_1600.jsonl", (
        ("audit/ann/d", "DELETE", "ann", "10:00:35", "10:01:42Z", B10, 1600),
    ), ("delete in a keyless table",)),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, MYSQL, "shop_orders", ORDERS, _order_event)
    land(w, MYSQL, "shop_audit_log", AUDIT_LOG, _audit_event)
