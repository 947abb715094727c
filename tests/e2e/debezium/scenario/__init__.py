"""Deterministic Debezium landing files, delivered in waves, for the end-to-end test.

Two Debezium PostgreSQL connectors, each landing ``kcat -J`` dumps of its table topics under
``debezium/<server>/<topic>/partition=<p>/<topic>+<p>+<first offset>.jsonl``:

- ``pg_main``: JsonConverter with schemas (every key and value in the ``schema`` / ``payload``
  envelope), Debezium 2.7 (source.ts_us present). Tables ``public.documents`` (TOASTed text,
  bytea, text[] and jsonb columns, default replica identity, two partitions),
  ``inventory.products`` (typed columns: Date, MicroTimestamp, ZonedTimestamp, Decimal,
  VariableScaleDecimal, Json, int64 beyond 2**53, bytes, int[], boolean, double) and
  ``public.accounts`` (REPLICA IDENTITY FULL: before images on updates and deletes).
- ``pg_lite``: JsonConverter without schemas, Debezium 2.3 (source.ts_ms only),
  decimal.handling.mode=double. Tables ``sales.order_lines`` (composite key, truncated) and
  ``public.profiles`` (TOASTed columns, a primary key change whose halves land in different
  waves).
- ``pg_txn``: JsonConverter without schemas, Debezium 2.5, ``provide.transaction.metadata``
  on after its snapshot: tables ``shop.orders`` and ``shop.order_items``, and the BEGIN and
  END records of its transaction topic ``pg_txn.transaction``. Transactions over both tables
  whose events and END land in different waves, an END delivered twice, one with other counts,
  a malformed one, a truncate inside a transaction, and a transaction whose END never comes.

The events follow the documented Debezium change event shape (before, after, source with
lsn / txId / ts_ms / ts_us, op, ts_ms; tombstones after deletes; truncate with no key) and are
built to exercise the contract's traps; ``build_scenario()`` gives the waves and which trap sits in
which wave and file.

"""

from __future__ import annotations

from tests.e2e.waves import Scenario

from . import pg_lite, pg_main, pg_txn
from .connect import _Offsets, _Wave, us

__all__ = ["build_scenario", "us"]


def build_scenario() -> Scenario:
    """The scenario's three waves and their coverage: each wave lands pg_main's files, then
    pg_lite's, then pg_txn's, the connectors' offsets running on from wave to wave."""
    offsets = _Offsets()
    first, second, third = (_Wave(n, offsets) for n in (1, 2, 3))
    # Both snapshots and the first streaming changes.
    pg_main.wave1(first)
    pg_lite.wave1(first)
    transactions = pg_txn.wave1(first)
    # Streaming: re-sends, a multi-change transaction, a primary key change, late and
    # overlapping changes, a truncate, bad lines.
    pg_main.wave2(second, first)
    pg_lite.wave2(second, first)
    pg_txn.wave2(second, transactions)
    # Late events, the second half of a primary key change, deletes with tombstones, a no-op
    # update, overlapping dumps, a re-landed file, an unknown op.
    pg_main.wave3(third, first, second)
    pg_lite.wave3(third, first, second)
    pg_txn.wave3(third, transactions)
    waves = (first, second, third)
    return Scenario([w.files() for w in waves], [note for w in waves for note in w.coverage])
