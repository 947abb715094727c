"""SQL Server table ``dbo.invoices`` (no primary_keys: replication_index) and what each wave
lands."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .events import SQLSERVER, File, _event, _ms, _p, _uid, _Wave, land


def _sqlserver(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    lsn: str = "",
    tx_id: str = "",
    physical_location: list[int] | None = None,
    read_method: str = "sqlserver-cdc",
) -> dict[str, Any]:
    """An event of the SQL Server table dbo.invoices (no primary_keys: replication_index)."""
    metadata = {
        "table": "invoices",
        "database": "billing",
        "schema": "dbo",
        "is_deleted": change_type == "DELETE",
        "lsn": lsn,
        "tx_id": tx_id,
        "physical_location": physical_location or [1, 0, 0],
        "replication_index": ["invoice_id"],
        "change_type": change_type,
    }
    return _event(
        SQLSERVER, read_method, "dbo_invoices", _uid(label), ts, [_ms(ts), lsn], metadata, payload
    )


def _invoice(
    invoice_id: int,
    status: str,
    total: Decimal,
    *,
    customer: str = "ACME S.p.A.",
    tax_rate: Decimal = Decimal("0.2200"),
    due_date: str = "2024-06-01",
    paid: bool = False,
) -> dict[str, Any]:
    """A row of dbo.invoices."""
    return {
        "invoice_id": invoice_id,
        "customer": customer,
        "total": total,
        "tax_rate": tax_rate,
        "status": status,
        "due_date": due_date,
        "paid": paid,
    }


def _invoice_event(
    label: str,
    change_type: str,
    invoice: tuple[Any, ...],
    ts: str,
    lsn: str = "",
    tx_id: str = "",
    physical_location: list[int] | None = None,
    read_method: str = "sqlserver-cdc",
) -> dict[str, Any]:
    """An event row of FILES: an invoice as (invoice_id, status, total[, paid]), a
    source_timestamp on 2024-05-01, an lsn, a tx_id after 0x (padded to 16 digits)."""
    invoice_id, status, total, *paid = invoice
    row = _invoice(invoice_id, status, Decimal(total), paid=bool(paid and paid[0]))
    return _sqlserver(
        label,
        change_type,
        row,
        f"2024-05-01T{ts}",
        lsn=lsn,
        tx_id=f"0x{tx_id:0>16}" if tx_id else "",
        physical_location=physical_location,
        read_method=read_method,
    )


def _of_unknown_origin() -> dict[str, Any]:
    """An event whose read_method is unknown and whose source_metadata has none of a known
    source's telltale fields (quarantined)."""
    unknown = _sqlserver(
        "bad/unknown-method",
        "INSERT",
        _invoice(9, "draft", Decimal("1.5")),
        "2024-05-01T10:04:50Z",
        lsn="0000002B:00000008:0001",
        tx_id="0x1BFF",
    )
    unknown["read_method"] = "legacy-replicator"
    unknown["source_metadata"] = {"origin": "nightly-export", "batch": 17}
    return unknown


BACKFILL = "sqlserver-backfill"
CDC_1 = "d1d1d1_sqlserver-cdc_0000002A_00000598.jsonl"

# The files each wave lands, their events in file order as (label, change type,
# (invoice_id, status, total[, paid]), source_timestamp[, lsn, tx_id[, physical_location]]).
# fmt: off
FILES = (
    File(1, "10:00", "d1d1d1_sqlserver-backfill_0_0.jsonl", (
        ("ss/1/bf", "INSERT", (1, "draft", "1234.5678"), "10:00:00.000Z"),
    ), ("SQL Server backfill; key from replication_index",), BACKFILL),
    File(1, "10:04", CDC_1, (
        ("ss/1/u-paid", "UPDATE", (1, "paid", "1234.5678", True), "10:04:00.000Z",
         "0000002A:00000600:0001", "1A2C", [1, 312, 4]),
        ("ss/1/u-sent", "UPDATE", (1, "sent", "1234.5678"), "10:04:00.000Z",
         "0000002A:00000598:0003", "1A2B", [1, 312, 9]),
        ("ss/2/i", "INSERT", (2, "draft", "99999999999999999.99"), "10:04:10.000Z",
         "0000002A:00000610:0002", "1B00"),
        ("ss/2/u", "UPDATE", (2, "sent", "99999999999999999.99"), "10:04:10.000Z",
         "0000002A:00000610:0005", "1B00"),
        ("ss/3/i", "INSERT", (3, "draft", "42.42"), "10:04:20Z",
         "0000002A:00000620:0001", "1B10"),
    ), (
        "SQL Server: equal source_timestamp ordered by lsn; insert+update of invoice 2 "
        "in one tx_id; decimal too long for a double",
    )),
    File(2, "10:05", "d1d1d1_sqlserver-cdc_0000002B_00000010.jsonl", (
        _of_unknown_origin(),
        ("ss/3/d", "DELETE", (3, "draft", "42.42"), "10:05:00Z",
         "0000002B:00000010:0001", "1C00"),
    ), ("line 1: unknown read_method, no telltale source_metadata (quarantine)",)),
    # Re-insert.
    File(3, "10:06", "d1d1d1_sqlserver-cdc_0000002B_00000020.jsonl", (
        ("ss/3/reinsert", "INSERT", (3, "draft", "43.01"), "10:06:00.000000Z",
         "0000002B:00000020:0001", "1C10"),
    )),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, SQLSERVER, "dbo_invoices", FILES, _invoice_event)
    if w.number == 3:
        # The whole wave-1 file landed again under another name.
        first = _Wave(1)
        land(first, SQLSERVER, "dbo_invoices", FILES, _invoice_event)
        again = _p(SQLSERVER, "dbo_invoices", "10:04", CDC_1.replace(".jsonl", ".retry-1.jsonl"))
        w.put(again, first.files()[_p(SQLSERVER, "dbo_invoices", "10:04", CDC_1)])
        w.note(again, "the whole wave-1 SQL Server CDC file landed again under another name")
