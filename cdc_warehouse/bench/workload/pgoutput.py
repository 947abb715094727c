"""pgoutput: protocol 2 slot lines, TOAST 'u' columns, primary key changes, large transactions
streamed in blocks interleaved with others, an aborted subtransaction in each, at each wave
boundary a streamed transaction left open and re-sent by the next slot read, a side table
that Truncate messages empty every other wave, and the keys that exist before the slot in its
snapshot files (at a consistent point below every commit)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from cdc_warehouse import pg_snapshot
from cdc_warehouse.bench import pgoutput_encoder as pg
from cdc_warehouse.bench.workload.plan import (
    LSN0,
    LSN_STEP,
    OP_DELETE,
    OP_INSERT,
    OP_PK_CHANGE,
    OP_SNAPSHOT,
    PK_KEY_OFFSET,
    SIDE_ROWS,
    STREAM_BLOCK,
    T0_US,
    Chunk,
    FileStats,
    Plan,
    Spec,
    _amount,
    _dec,
    _deliver_name,
    _iso,
    _micros,
    _side_lsn,
    _split,
    _text,
    _txn_groups,
    side_keys,
    side_row,
    snapshot_split,
    truncates_in,
)


def _pg_text_ts(us: int) -> str:
    secs, frac = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(secs)) + f".{frac:06d}+00"


PG_SLOT = "bench_slot"
PG_OID = 16_500
_PG_COLUMNS = [
    (1, "id", 23, -1),
    (0, "sku", 25, -1),
    (0, "qty", 23, -1),
    (0, "price", 1700, -1),
    (0, "note", 25, -1),
    (0, "updated_at", 1184, -1),
]
PG_RELATION = pg.relation(PG_OID, "public", "items", _PG_COLUMNS)
# The slot's snapshot: the table as the relation names it, at a consistent point below every
# commit of the log (the side table's included).
PG_SNAPSHOT_TABLE = pg_snapshot.Table(
    "public",
    "items",
    tuple(
        pg_snapshot.Column(name, oid, modifier, bool(flags))
        for flags, name, oid, modifier in _PG_COLUMNS
    ),
    None,
)
PG_SNAPSHOT_LSN = LSN0 - 4096


def _pg_values(k: int, p: float, us: int) -> list[str]:
    """A row's text values, as TupleData and COPY carry them."""
    return [
        str(k),
        f"SKU-{(k * 31 + int(p)) % 5000}",
        str((k + int(p)) % 50),
        _amount(k, p),
        _text(k, p, 30),
        _pg_text_ts(us),
    ]


def _pg_tuple(k: int, p: float, us: int, toast: bool) -> bytes:
    values: list[pg.Column] = [("t", value.encode()) for value in _pg_values(k, p, us)]
    if toast:
        values[4] = ("u", None)
    return pg.tuple_data(*values)


def _pg_snapshot_file(plan: Plan, index: np.ndarray, stats: FileStats) -> list[str]:
    """A snapshot file: its header, then each key's row as it stood before the log began."""
    lines = [pg_snapshot.header_line(pg.format_lsn(PG_SNAPSHOT_LSN), PG_SNAPSHOT_TABLE)]
    for i in index:
        k, p = int(plan.key[i]), float(plan.pos[i])
        lines.append(pg_snapshot.row_line(_pg_values(k, p, _micros(plan.commit_pos[i]))))
    stats.events += len(index)
    stats.snapshot_lines += len(lines)
    return lines


def _pg_key_tuple(k: int) -> bytes:
    return pg.tuple_data(("t", str(k).encode()), *([("n", None)] * 5))


def _pg_change(plan: Plan, i: int, xid: int | None, stats: FileStats) -> bytes:
    k, p, op = int(plan.key[i]), float(plan.pos[i]), int(plan.op[i])
    us = _micros(plan.commit_pos[i])
    if op == OP_INSERT:
        return pg.insert(PG_OID, _pg_tuple(k, p, us, False), xid)
    if op == OP_DELETE:
        return pg.delete(PG_OID, _pg_key_tuple(k), "K", xid)
    if op == OP_PK_CHANGE:
        stats.pk_changes += 1
        stats.placeholders += 1
        new = _pg_tuple(k + PK_KEY_OFFSET, p, us, True)
        return pg.update(PG_OID, new, _pg_key_tuple(k), "K", xid)
    toast = bool(plan.toast[i])
    stats.placeholders += int(toast)
    return pg.update(PG_OID, _pg_tuple(k, p, us, toast), None, "K", xid)


PG_SIDE_OID = 16_501
PG_SIDE_TABLE = "promotions"
_PG_SIDE_COLUMNS = [(1, "id", 23, -1), (0, "label", 25, -1), (0, "percent", 23, -1)]
PG_SIDE_RELATION = pg.relation(PG_SIDE_OID, "public", PG_SIDE_TABLE, _PG_SIDE_COLUMNS)
PG_SIDE_XID = 400_000_000


def _pg_side_transactions(wave: int, wave_start: float, stats: FileStats) -> list[str]:
    """A wave's side table transactions, committed before the wave's first change: a Truncate
    (where the wave has one), then the wave's inserts."""
    base = _side_lsn(wave_start)
    us = _micros(wave_start) - 2_000
    lines = []
    xid = PG_SIDE_XID + 2 * wave
    if truncates_in(wave):
        commit_lsn = base + 16
        lines += [
            pg.slot_line(base, xid, pg.begin(commit_lsn, us, xid)),
            pg.slot_line(base, xid, PG_SIDE_RELATION),
            pg.slot_line(base + 8, xid, pg.truncate([PG_SIDE_OID])),
            pg.slot_line(commit_lsn, xid, pg.commit(commit_lsn, commit_lsn + 8, us)),
        ]
        stats.truncates += 1
        stats.events += 1
    xid += 1
    first = base + 32
    commit_lsn = first + 8 * (SIDE_ROWS + 1)
    lines += [
        pg.slot_line(first, xid, pg.begin(commit_lsn, us, xid)),
        pg.slot_line(first, xid, PG_SIDE_RELATION),
    ]
    for step, n in enumerate(side_keys(wave)):
        row = side_row(n)
        new = pg.tuple_data(
            ("t", str(n).encode()),
            ("t", row["label"].encode()),
            ("t", str(row["percent"]).encode()),
        )
        lines.append(pg.slot_line(first + 8 * (step + 1), xid, pg.insert(PG_SIDE_OID, new)))
        stats.events += 1
    lines.append(pg.slot_line(commit_lsn, xid, pg.commit(commit_lsn, commit_lsn + 8, us)))
    return lines


def _pg_xid(txn: int) -> int:
    return 1000 + 2 * txn


def _pg_transaction(plan: Plan, idx: np.ndarray, relation: bool, stats: FileStats) -> list[str]:
    """A small transaction: Begin, changes, Commit."""
    first, last = int(idx[0]), int(idx[-1])
    xid = _pg_xid(int(plan.txn[first]))
    commit_lsn = LSN0 + int(plan.pos[last] * LSN_STEP) + 16
    us = _micros(plan.commit_pos[last])
    begin_lsn = LSN0 + int(plan.pos[first] * LSN_STEP) - 8
    lines = [pg.slot_line(begin_lsn, xid, pg.begin(commit_lsn, us, xid))]
    if relation:
        lines.append(pg.slot_line(begin_lsn, xid, PG_RELATION))
    for i in idx:
        lsn = LSN0 + int(plan.pos[i] * LSN_STEP)
        lines.append(pg.slot_line(lsn, xid, _pg_change(plan, int(i), None, stats)))
        stats.events += 1
    lines.append(pg.slot_line(commit_lsn, xid, pg.commit(commit_lsn, commit_lsn + 8, us)))
    return lines


def _pg_stream_blocks(
    plan: Plan, idx: np.ndarray, stats: FileStats, count_events: bool = True
) -> list[list[str]]:
    """A large transaction's Stream Start .. Stream Stop blocks (the first re-starts it), with
    one aborted subtransaction (a block of changes, then Stream Abort) in the middle."""
    xid = _pg_xid(int(plan.txn[int(idx[0])]))
    subxid = xid + 1
    blocks = []
    for number, start in enumerate(range(0, len(idx), STREAM_BLOCK)):
        part = idx[start : start + STREAM_BLOCK]
        lsn0 = LSN0 + int(plan.pos[part[0]] * LSN_STEP)
        block = [pg.slot_line(lsn0, xid, pg.stream_start(xid, number == 0))]
        if number == 0:
            block.append(
                pg.slot_line(
                    lsn0, xid, pg.relation(PG_OID, "public", "items", _PG_COLUMNS, "d", xid)
                )
            )
        for i in part:
            lsn = LSN0 + int(plan.pos[i] * LSN_STEP)
            block.append(pg.slot_line(lsn, xid, _pg_change(plan, int(i), xid, stats)))
            if count_events:
                stats.events += 1
        block.append(pg.slot_line(lsn, xid, pg.stream_stop()))
        blocks.append(block)
        if number == 0 and len(idx) > STREAM_BLOCK:
            # A savepoint rolled back: its changes are streamed, then aborted.
            aborted = [pg.slot_line(lsn + 1, xid, pg.stream_start(xid, False))]
            for n, i in enumerate(part[:4]):
                k = int(plan.key[i])
                bogus = pg.update(PG_OID, _pg_tuple(k, -1.0, T0_US, False), None, "K", subxid)
                aborted.append(pg.slot_line(lsn + 2 + n, xid, bogus))
            aborted.append(pg.slot_line(lsn + 8, xid, pg.stream_stop()))
            aborted.append(pg.slot_line(lsn + 8, xid, pg.stream_abort(xid, subxid)))
            blocks.append(aborted)
            if count_events:
                stats.aborted_subtxns += 1
    return blocks


def write_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    """Transactions in commit order; a large one's blocks interleave with the small ones
    committed before it, and its Stream Commit follows them."""
    stats = FileStats()
    if chunk.extra.get("snapshot"):
        snapshot = _pg_snapshot_file(plan, chunk.index, stats)
        stats.lines = len(snapshot)
        return snapshot, stats
    lines: list[str] = []
    if chunk.extra.get("side_wave") is not None:
        lines += _pg_side_transactions(
            int(chunk.extra["side_wave"]), float(chunk.extra["wave_start"]), stats
        )
    pending: list[list[str]] = []
    relation = True
    for group in _txn_groups(plan, chunk.index):
        if len(group) >= 2 * STREAM_BLOCK:
            blocks = _pg_stream_blocks(plan, group, stats)
            stats.streamed_txns += 1
            relation = False
            merged: list[str] = []
            for n, block in enumerate(blocks):
                merged.extend(block)
                if n < len(pending):
                    merged.extend(pending[n])
            for rest in pending[len(blocks) :]:
                merged.extend(rest)
            pending = []
            last = int(group[-1])
            xid = _pg_xid(int(plan.txn[last]))
            commit_lsn = LSN0 + int(plan.pos[last] * LSN_STEP) + 16
            us = _micros(plan.commit_pos[last])
            merged.append(
                pg.slot_line(commit_lsn, xid, pg.stream_commit(xid, commit_lsn, commit_lsn + 8, us))
            )
            lines.extend(merged)
        else:
            pending.append(_pg_transaction(plan, group, relation, stats))
            relation = False
            if len(pending) > 8:
                lines.extend(pending.pop(0))
    for rest in pending:
        lines.extend(rest)
    carry = chunk.extra.get("carry")
    if carry is not None and len(carry):
        # The slot read ends while this streamed transaction is open: its first block now,
        # everything again (from first_segment = 1) in the next read.
        first_blocks = _pg_stream_blocks(
            plan, carry[:STREAM_BLOCK], FileStats(), count_events=False
        )
        lines.extend(first_blocks[0])
        stats.resent_open_txns += 1
    stats.lines = len(lines)
    return lines, stats


def sub_source(key: np.ndarray) -> np.ndarray:
    """One slot, one table."""
    return np.zeros(len(key), np.int64)


def chunks(spec: Spec, plan: Plan, mode: str | None, state: dict[Any, int]) -> list[Chunk]:
    chunks = []
    waves = np.unique(plan.wave)
    for wave in waves:
        index, snapshot_rows = snapshot_split(plan, np.flatnonzero(plan.wave == wave))
        deliver = _deliver_name(int(wave), spec.waves, mode)
        for number, part in enumerate(_split(plan, snapshot_rows, spec.chunk_events, False)):
            chunk = Chunk("pgoutput", PG_SLOT, 0, int(wave), int(wave), part, {"snapshot": True})
            chunk.path = f"pgoutput/{PG_SLOT}/snapshot/{deliver}/{number:05d}.jsonl"
            chunks.append(chunk)
        parts = _split(plan, index, spec.chunk_events, True)
        for number, part in enumerate(parts):
            chunk = Chunk("pgoutput", PG_SLOT, 0, int(wave), int(wave), part)
            chunk.path = f"pgoutput/{PG_SLOT}/{deliver}/{number:05d}.jsonl"
            if mode is None and number == 0:
                chunk.extra.update(side_wave=int(wave), wave_start=float(plan.pos[index].min()))
            chunks.append(chunk)
        if mode is None and wave + 1 < spec.waves and parts:
            following, _ = snapshot_split(plan, np.flatnonzero(plan.wave == wave + 1))
            groups = _txn_groups(plan, following) if len(following) else []
            carry = next((g for g in groups if len(g) >= 2 * STREAM_BLOCK), None)
            chunks[-1].extra["carry"] = carry
    return chunks


def carries_all(plan: Plan, i: int) -> bool:
    """Whether change i carries every column: not where 'u' stands for the TOASTed column, nor
    a primary key change's new key."""
    op = int(plan.op[i])
    if op in (OP_INSERT, OP_SNAPSHOT):
        return True
    return op != OP_PK_CHANGE and not bool(plan.toast[i])


def expected_row(plan: Plan, last: int, full: int) -> dict[str, Any]:
    k, p, op = int(plan.key[last]), float(plan.pos[last]), int(plan.op[last])
    pf = float(plan.pos[full])
    us = _micros(plan.commit_pos[last])
    key_id = k + PK_KEY_OFFSET if op == OP_PK_CHANGE else k
    row = {
        "id": key_id,
        "sku": f"SKU-{(key_id * 31 + int(p)) % 5000}",
        "qty": (key_id + int(p)) % 50,
        "price": _dec(_amount(key_id, p)),
        "note": _text(k, pf, 30),
        "updated_at": _iso(us),
    }
    return {
        "source_name": PG_SLOT,
        "source_table": "public.items",
        "key": {"id": key_id},
        "row": row,
    }
