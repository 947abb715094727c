"""Deterministic Spanner change stream landing files, delivered in four waves, for the end-to-end
test.

Two change streams, each landing the rows its partition queries returned, one JSON object per
line (``{"partition_token": ..., <the row>}``), under ``spanner/<stream>/<partition>/NNNN.jsonl``
(the initial query, partition token null, under ``initial/``):

- ``shop_gsql``: a GoogleSQL database (tables ``Products`` with every type code, ``Orders`` with a
  composite key). Rows in the GoogleSQL shape ``{"ChangeRecord": [{"data_change_record": [...],
  "heartbeat_record": [], "child_partitions_record": []}]}``; most records as a client library
  serialises them (JSON-typed fields as strings holding JSON, INT64 fields as decimal strings),
  the records of partitions g1a and g1b with those fields as decoded JSON. value_capture_type
  OLD_AND_NEW_VALUES (the default) until 10:05, then NEW_ROW (ALTER CHANGE STREAM). Partitions:
  the initial query announces g1, g2, g3 (parents [null]); g1 splits into g1a and g1b at 10:04;
  g2 and g3 merge into g23 at 10:06.
- ``ledger_pg``: a PostgreSQL-dialect database (tables ``accounts`` and ``transfers``), rows in
  the PostgreSQL shape ``{"data_change_record": {...}}``. value_capture_type NEW_VALUES until
  10:05, then NEW_ROW_AND_OLD_VALUES. Partitions p1 and p2 from the initial query.

Initial snapshots (``spanner/<stream>/snapshot/<table>/*.jsonl``, a header then rows, read from
the model of the database at the read timestamp): shop_gsql's Products read at 10:06 lands in
wave 1, before the log files of its period, and waits for the watermark; its Orders read at the
stream's start lands in wave 3, after them, and again under another name in wave 4; ledger_pg's
accounts read at 10:02:30 lands in wave 2, between them, completing a NEW_VALUES update, with a
late update before its read timestamp landing in wave 3.

The records are generated from a small model of each database (every key's current row), so
that old values, NEW_ROW images and partial images agree with each other. ``build_scenario()``
gives the waves and which trap sits in which wave and file; the stream status after each wave is in
``EXPECTED_STATUS`` (derived by hand, checked against the oracle by the self-check).

One module per stream (``shop_gsql``, ``ledger_pg``) holds its tables, rows and what each wave
lands; ``streams`` holds what both are generated from.

Usage: ``python -m tests.e2e.spanner.scenario write-sample <landing root>`` writes all waves.
"""

from __future__ import annotations

from tests.e2e.waves import Scenario

from . import ledger_pg, shop_gsql
from .ledger_pg import ACCOUNTS, TRANSFERS
from .shop_gsql import ORDERS, PRODUCTS
from .streams import GSQL, PGSQL, _Wave

__all__ = [
    "ACCOUNTS",
    "EXPECTED_STATUS",
    "GSQL",
    "ORDERS",
    "PGSQL",
    "PRODUCTS",
    "TRANSFERS",
    "build_scenario",
]

# (low watermark, open partitions, incomplete transactions) per stream after each wave.
EXPECTED_STATUS: dict[str, list[tuple[str, int, int]]] = {
    GSQL: [
        ("2024-06-03T10:01:30Z", 3, 0),  # held by heartbeat-only g2
        ("2024-06-03T10:04:00Z", 4, 0),  # held by g1b: announced, no line yet
        ("2024-06-03T10:04:50Z", 4, 1),  # held by stalled g3; 4410000015 half landed
        ("2024-06-03T10:09:00Z", 3, 0),
    ],
    PGSQL: [
        ("2024-06-03T10:01:00Z", 2, 1),  # held by heartbeat-only p2; 7305118804 half landed
        ("2024-06-03T10:03:00Z", 2, 1),  # 7305118804: its p1 half landed twice, p2 half not
        ("2024-06-03T10:05:30Z", 2, 0),
        ("2024-06-03T10:07:20Z", 2, 1),  # 7305118814 half landed, above the watermark
    ],
}


def build_scenario() -> Scenario:
    """The scenario's four waves and their coverage: each wave lands shop_gsql's files, then
    ledger_pg's."""
    shop, ledger = shop_gsql.stream(), ledger_pg.stream()
    first, second, third, fourth = (_Wave(n) for n in (1, 2, 3, 4))
    shop_gsql.wave1(first, shop, third)
    ledger_pg.wave1(first, ledger)
    shop_gsql.wave2(second, shop)
    ledger_pg.wave2(second, ledger, first)
    shop_gsql.wave3(third, shop, first, second)
    ledger_pg.wave3(third, ledger)
    shop_gsql.wave4(fourth, shop, third)
    ledger_pg.wave4(fourth, ledger)
    waves = (first, second, third, fourth)
    return Scenario([w.files() for w in waves], [note for w in waves for note in w.coverage])
