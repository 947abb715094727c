"""MySQL ``shop.products``: its Avro files (the backfill, CDC, a corrupt file) and one JSON file,
and what each wave lands."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from cdc_warehouse.bench.datastream_avro import DATETIME_RECORD, avro_container, mysql_event_schema

from .events import _NS, MYSQL, File, _instant, _p, _Wave, land
from .mysql import B9, B10, _mysql

# --------------------------------------------------------------------------------------------
# Avro (MySQL shop.products)
# --------------------------------------------------------------------------------------------

_OPT = "null"

PRODUCTS_AVRO_SCHEMA = mysql_event_schema(
    "shop_products",
    [
        {"name": "sku", "type": [_OPT, "string"]},
        {
            "name": "price",
            "type": [
                _OPT,
                {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            ],
        },
        {
            "name": "cost_precise",
            "type": [
                _OPT,
                {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": 38,
                    "scale": 12,
                },
            ],
        },
        {"name": "weight_kg", "type": [_OPT, "double"]},
        {"name": "stock", "type": [_OPT, "long"]},
        {"name": "barcode", "type": [_OPT, "long"]},
        {"name": "active", "type": [_OPT, "boolean"]},
        {"name": "released", "type": [_OPT, {"type": "int", "logicalType": "date"}]},
        {
            "name": "updated_at",
            "type": [_OPT, {"type": "long", "logicalType": "timestamp-micros"}],
        },
        {
            "name": "local_dt",
            "type": [
                _OPT,
                DATETIME_RECORD,
            ],
        },
        {"name": "thumbnail", "type": [_OPT, "bytes"]},
        {"name": "description", "type": [_OPT, "string"]},
    ],
)


def _product(
    sku: str,
    price: str,
    stock: int,
    *,
    active: bool = True,
    description: str | None = None,
    updated: str = "2024-05-01T09:59:59.123456",
) -> dict[str, Any]:
    """A shop.products row as the JSON format writes it (the canonical forms of Avro values)."""
    return {
        "sku": sku,
        "price": Decimal(price),
        "cost_precise": Decimal("12345678901234567890.123456789012"),
        "weight_kg": 0.5,
        "stock": stock,
        "barcode": 9007199254740993,
        "active": active,
        "released": "2024-04-30",
        "updated_at": updated + "Z",
        "local_dt": updated,
        "thumbnail": "AAEC/w==",
        "description": description,
    }


def _product_avro_payload(row: dict[str, Any]) -> dict[str, Any]:
    """The same row with Avro-native values (decimal, date, timestamp, datetime record, bytes)."""
    local = datetime.fromisoformat(row["local_dt"])
    return {
        **row,
        "released": date.fromisoformat(row["released"]),
        "updated_at": _instant(row["updated_at"]),
        "local_dt": {"date": local.date(), "time": local.time()},
        "thumbnail": bytes([0, 1, 2, 255]),
    }


def _avro_record(event: dict[str, Any]) -> dict[str, Any]:
    """A JSON-shaped MySQL products event as an Avro record."""
    return {
        **event,
        "read_timestamp": _instant(event["read_timestamp"]),
        "source_timestamp": _instant(event["source_timestamp"]),
        "payload": _product_avro_payload(event["payload"]),
    }


def _avro_file(events: list[dict[str, Any]], marker: str) -> bytes:
    """An Avro object container file of products events (deterministic sync marker)."""
    records = [_avro_record(e) for e in events]
    return avro_container(PRODUCTS_AVRO_SCHEMA, records, sync_marker=uuid.uuid5(_NS, marker).bytes)


def _products(
    label: str,
    change_type: str,
    row: dict[str, Any],
    ts: str,
    log_file: str = "",
    log_position: int = 0,
    *,
    read_method: str = "mysql-cdc-binlog",
) -> dict[str, Any]:
    """A MySQL shop.products event."""
    return _mysql(
        label,
        "products",
        change_type,
        row,
        ts,
        log_file,
        log_position,
        read_method=read_method,
        primary_keys=["sku"],
    )


def _product_event(
    label: str,
    change_type: str,
    row: dict[str, Any],
    ts: str,
    log_file: str = "",
    log_position: int = 0,
    read_method: str = "mysql-cdc-binlog",
) -> dict[str, Any]:
    """An event row of JSON_FILES and AVRO_FILES: a shop.products row, a source_timestamp on
    2024-05-01, a binlog position."""
    ts = f"2024-05-01T{ts}"
    return _products(label, change_type, row, ts, log_file, log_position, read_method=read_method)


# fmt: off
SKU3_I = ("sku3/i", "INSERT", _product("SKU-3", "1.10", 3), "10:00:05Z", B9, 1300)
SKU3_U = ("sku3/u", "UPDATE", _product("SKU-3", "1.15", 2, description="restocked soon"),
          "10:01:03Z", B10, 400)

# The Avro files each wave lands as (file, its sync marker's seed, the bytes it keeps if cut
# short), their events as (label, change type, row, source_timestamp[, binlog file, position]).
AVRO_FILES = (
    (File(1, "10:00", "a41f02_mysql-backfill-fulldump_0_0.avro", (
        ("sku1/bf", "INSERT", _product("SKU-1", "19.99", 100), "10:00:00.000Z"),
        ("sku2/bf", "INSERT", _product("SKU-2", "5.25", 7, description="Füße"), "10:00:00.000Z"),
    ), (
        "Avro backfill: decimal, date, timestamp-micros, DATETIME record, bytes, double, "
        "long beyond 2**53, boolean, string, null",
    ), "mysql-backfill-fulldump"), "products-bf", None),
    (File(1, "10:01", "a41f02_mysql-cdc-binlog_1714557605_9_1300.avro", (
        SKU3_I,
        ("sku1/u1", "UPDATE", _product("SKU-1", "18.49", 95), "10:00:06Z", B9, 1400),
        SKU3_I,
    ), ("Avro CDC; the same uuid twice in one Avro file",)), "products-cdc-1", None),
    (File(3, "10:09", "a41f02_mysql-cdc-binlog_1714557663_10_400.avro", (
        SKU3_U,
        ("sku2/d", "DELETE", _product("SKU-2", "5.25", 7, description="Füße"), "10:01:50Z",
         B10, 1800),
        ("sku1/u2", "UPDATE",
         _product("SKU-1", "17.99", 90, active=False, updated="2024-05-01T10:01:55.000001"),
         "10:01:55Z", B10, 1900),
    ), ("Avro record 1 duplicates the wave-2 JSON event's uuid",)), "products-cdc-2", None),
    (File(3, "10:10", "a41f02_mysql-cdc-binlog_1714557700_10_2000.avro", (
        ("never", "INSERT", _product("SKU-9", "9.99", 9), "10:01:58Z", B10, 2000),
    ), ("truncated Avro file: header unreadable (quarantine, record 0)",)), "corrupt", 60),
)

JSON_FILES = (
    File(2, "10:06", "a41f02_mysql-cdc-binlog_1714557663_10_400.jsonl", (
        SKU3_U,
    ), ("JSON products event whose uuid reappears in a wave-3 Avro file",)),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, MYSQL, "shop_products", JSON_FILES, _product_event)
    for file, marker, cut in AVRO_FILES:
        if file.wave != w.number:
            continue
        path = _p(MYSQL, "shop_products", file.hhmm, file.name)
        method: dict[str, Any] = (
            {} if file.read_method is None else {"read_method": file.read_method}
        )
        events = [_product_event(*row, **method) for row in file.lines if isinstance(row, tuple)]
        w.put(path, _avro_file(events, marker)[:cut])
        for trap in file.notes:
            w.note(path, trap)
