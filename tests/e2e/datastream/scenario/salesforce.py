"""Salesforce object ``Account`` and what each wave lands."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from .events import SALESFORCE, File, _event, _ms, _uid, _Wave, land


def _salesforce(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    read_method: str = "salesforce-cdc",
) -> dict[str, Any]:
    """An event of the Salesforce object Account."""
    metadata = {
        "object_name": "Account",
        "domain": "acme.my.salesforce.com",
        "is_deleted": change_type == "DELETE",
        "change_type": change_type,
        "primary_keys": ["Id"],
    }
    sort_keys = [_ms(ts), payload["Id"]]
    return _event(SALESFORCE, read_method, "Account", _uid(label), ts, sort_keys, metadata, payload)


def _sf_account(account_id: str, name: str, revenue: Decimal, employees: int) -> dict[str, Any]:
    """A row of Account."""
    return {
        "Id": account_id,
        "Name": name,
        "AnnualRevenue": revenue,
        "NumberOfEmployees": employees,
        "Website": None,
        "IsPartner": False,
    }


def _account_event(
    label: str,
    change_type: str,
    account: tuple[str, str, str, int],
    ts: str,
    read_method: str = "salesforce-cdc",
) -> dict[str, Any]:
    """An event row of FILES: an Account as (Id, Name, AnnualRevenue, NumberOfEmployees), a
    source_timestamp on 2024-05-01."""
    account_id, name, revenue, employees = account
    row = _sf_account(account_id, name, Decimal(revenue), employees)
    return _salesforce(label, change_type, row, f"2024-05-01T{ts}", read_method=read_method)


E, F = "0015g00000AbCdEAAV", "0015g00000AbCdFAAV"
BACKFILL = "salesforce-backfill"

# The files each wave lands, their events in file order as
# (label, change type, (Id, Name, AnnualRevenue, NumberOfEmployees), source_timestamp).
# fmt: off
FILES = (
    File(1, "10:00", "f00d00_salesforce-backfill_0_0.jsonl", (
        ("sf/E/bf", "INSERT", (E, "Acme", "1500000.5", 120), "10:00:00.000Z"),
        ("sf/F/bf", "INSERT", (F, "Globex", "2500000.25", 40), "10:00:00.000Z"),
    ), ("Salesforce backfill",), BACKFILL),
    File(1, "10:10", "f00d00_salesforce-cdc_1_0.jsonl", (
        ("sf/E/u1", "UPDATE", (E, "Acme Corp", "1500000.5", 120), "10:10:00Z"),
    )),
    # Two files whose path order is the reverse of source order.
    File(2, "10:20", "f00d00_salesforce-cdc_2_0.jsonl", (
        ("sf/E/u3", "UPDATE", (E, "Acme Holdings", "1750000.5", 130), "10:20:00Z"),
    ), ("Salesforce: later change in the file whose path sorts first",)),
    File(2, "10:21", "f00d00_salesforce-cdc_3_0.jsonl", (
        ("sf/E/u2", "UPDATE", (E, "Acme Group", "1500000.5", 125), "10:15:00.000Z"),
        ("sf/F/d", "DELETE", (F, "Globex", "2500000.25", 40), "10:12:00Z"),
    )),
    # Late backfill of a deleted record.
    File(3, "10:30", "f00d00_salesforce-backfill_0_1.jsonl", (
        ("sf/F/bf2", "INSERT", (F, "Globex", "2500000.25", 40), "10:05:00Z"),
    ), ("Salesforce backfill read before a delete, landing after it: key stays deleted",),
        BACKFILL),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, SALESFORCE, "Account", FILES, _account_event)
