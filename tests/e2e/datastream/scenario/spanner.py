"""Spanner table ``Items`` read by Datastream, and what each wave lands."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .events import SPANNER, File, _event, _ms, _uid, _Wave, land


def _spanner(
    label: str,
    mod_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    commit_timestamp: str,
    server_transaction_id: str = "",
    record_sequence: str = "00000000",
    mod_index: str = "0",
    records_in_tx: int = 1,
    read_method: str = "spanner-cdc",
) -> dict[str, Any]:
    """An event of the Spanner table Items."""
    backfill = "-backfill" in read_method
    metadata = {
        "commit_timestamp": commit_timestamp,
        "snapshot": backfill,
        "project_id": "acme-data",
        "instance_id": "catalog-prod",
        "database_id": "catalog",
        "change_stream_name": "datastream_items",
        "table": "Items",
        "server_transaction_id": server_transaction_id,
        "record_sequence": record_sequence,
        "mod_index": mod_index,
        "transaction_tag": "",
        "system_transaction": "false",
        "number_of_records_in_transaction": records_in_tx,
        "value_capture_type": "NEW_ROW",
        "mod_type": mod_type,
        "primary_keys": ["ItemId"],
        "is_deleted": mod_type == "DELETE",
    }
    sort_keys = [_ms(ts), record_sequence, mod_index]
    return _event(SPANNER, read_method, "Items", _uid(label), ts, sort_keys, metadata, payload)


def _item(item_id: int, name: str, price: Decimal, qty: int) -> dict[str, Any]:
    """A row of Items."""
    return {
        "ItemId": item_id,
        "Name": name,
        "Price": price,
        "Qty": qty,
        "GlobalId": 1152921504606846976 + item_id,
    }


def _item_event(
    label: str,
    mod_type: str,
    item: tuple[int, str, str, int],
    ts: str,
    commit_ts: str,
    txn: str,
    mod_index: str = "0",
    read_method: str = "spanner-cdc",
) -> dict[str, Any]:
    """An event row of FILES: an item as (ItemId, Name, Price, Qty); source and commit
    timestamps on 2024-05-01; a transaction id's last letter (none for a backfill)."""
    item_id, name, price, qty = item
    return _spanner(
        label,
        mod_type,
        _item(item_id, name, Decimal(price), qty),
        f"2024-05-01T{ts}",
        commit_timestamp=f"2024-05-01T{commit_ts}",
        server_transaction_id=f"MTIzNDU2Nzg5MA-{txn}" if txn else "",
        mod_index=mod_index,
        read_method=read_method,
    )


BACKFILL = "spanner-backfill"

# The files each wave lands, their events in file order as (label, mod type,
# (ItemId, Name, Price, Qty), source_timestamp, commit_timestamp, transaction[, mod_index]).
# fmt: off
FILES = (
    File(1, "10:00", "e7e7e7_spanner-backfill_0_0.jsonl", (
        ("sp/1/bf", "INSERT", (1, "Widget", "9.99", 10), "10:00:00.000Z", "10:00:00Z", ""),
        ("sp/2/bf", "INSERT", (2, "Gadget", "24.5", 3), "10:00:00.000Z", "10:00:00Z", ""),
    ), ("Spanner backfill",), BACKFILL),
    File(1, "10:01", "e7e7e7_spanner-cdc_0_0.jsonl", (
        ("sp/1/u-b", "UPDATE", (1, "Widget v3", "10.49", 10), "10:00:07.000Z",
         "10:00:07.000500Z", "b"),
        ("sp/1/u-a", "UPDATE", (1, "Widget v2", "9.99", 10), "10:00:07.000Z", "10:00:07Z", "a"),
        ("sp/3/i", "INSERT", (3, "Doohickey", "0.35", 1000), "10:00:09.123Z",
         "10:00:09.123456Z", "c", "0"),
        ("sp/4/i", "INSERT", (4, "Thingamajig", "7.77", 5), "10:00:09.123Z",
         "10:00:09.123456Z", "c", "1"),
    ), (
        "Spanner: commit_timestamp 10:00:07Z before 10:00:07.000500Z (string order "
        "wrong), equal source_timestamp",
    )),
    File(2, "10:01", "e7e7e7_spanner-cdc_1_0.jsonl", (
        ("sp/3/d", "DELETE", (3, "Doohickey", "0.35", 1000), "10:01:00.000Z",
         "10:01:00.000001Z", "d"),
        ("sp/2/u", "UPDATE", (2, "Gadget", "24.5", 2), "10:01:30.000Z", "10:01:30.000000Z", "e"),
    ), ("Spanner delete and update",)),
    File(3, "10:02", "e7e7e7_spanner-cdc_2_0.jsonl", (
        ("sp/3/i2", "INSERT", (3, "Doohickey", "0.35", 1000), "10:02:00.000Z",
         "10:02:00.000001Z", "f"),
    ), ("Spanner re-insert after delete",)),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, SPANNER, "Items", FILES, _item_event)
