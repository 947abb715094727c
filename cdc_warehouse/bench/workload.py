"""Seeded workload generator: landing files of every source family, in waves, at any scale.

`python -m cdc_warehouse.bench.workload --scale 1000000 --out bench/w1m` writes

    <out>/wave-0000/ .. wave-NNNN/    the base events, one landing root per wave (a landing run)
    <out>/topup-realistic/           1% more events: new keys, changes to recent keys, a few
                                     late changes of old keys (placed back in source order)
    <out>/topup-adversarial/         1% more events: updates of random live keys of all ages
    <out>/topup-small/               one small file: the first 1,000 events of the realistic
                                     top-up's first Datastream (else Debezium) file
    <out>/manifest.json              what was generated: files and lines per wave, events,
                                     duplicates, late files, placeholders, Avro files, splits,
                                     merges, truncates, live keys per family
    <out>/expected-sample.json       per family, the rows cdc_current holds after the base
                                     waves for a sample of live keys (`expected_sample`)

Each directory is shaped like a landing root (README, `CDC_LANDING_ROOT`:
`<family>/<stream, server or slot>/**/*.jsonl`, Datastream's `*.avro` too): `stage()` hard-links
one into the real landing root so that each wave lands as its own run.

The model (everything is a pure function of the seed and the scale, vectorised with numpy):
per family a timeline of row changes; a change either creates a key or changes an existing
one, chosen mostly among recently created keys (exponential recency), sometimes among a small
set of hot keys (update-heavy) and sometimes uniformly among all keys (old ones). A key's first
change is its insert (a backfill / snapshot read for keys that exist before the stream
starts), its last may be a delete or a primary key change; transactions group consecutive
changes, a few of them large (streamed by pgoutput). Family formats follow the scenario
generators in tests/e2e and tests/pg:

- datastream: MySQL (binlog positions) and PostgreSQL (lsn, tx_id) JSON events, backfill reads,
  redelivered events (same uuid) and a small file landed twice under another name; about half
  of the MySQL files are Avro object container files (the same events);
- debezium: `kcat -J` records of two servers (with and without the schema envelope), snapshot
  reads, TOAST placeholders (text, bytes as base64, arrays), primary key changes, tombstones,
  records delivered twice at the same offset and changes re-sent at a new offset, and a side
  table that truncates (op "t") empty every other wave;
- pgoutput: protocol 2 slot lines, TOAST 'u' columns, primary key changes, large transactions
  streamed in blocks interleaved with others, an aborted subtransaction in each, at each
  wave boundary a streamed transaction left open and re-sent by the next slot read, and a side
  table that Truncate messages empty every other wave;
- spanner: change stream rows in both dialects, all four value capture types, partitions with
  heartbeats that split and merge at each wave boundary, the same record read twice.

Late files (datastream, debezium) are files whose events belong to one wave but that land one or
two waves later; their path sorts where their events' time is.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from multiprocessing import get_context
from pathlib import Path
from typing import Any, TypeVar

import fastavro
import numpy as np

from cdc_warehouse.bench import pgoutput_encoder as pg
from cdc_warehouse.bench.datastream_avro import mysql_event_schema
from cdc_warehouse.files import replace_text
from python_udfs.families import FAMILIES as SOURCE_FAMILIES
from python_udfs.json_values import normalize

# Every family of the registry, by name; a family's random streams are seeded by its place here.
FAMILIES: tuple[str, ...] = tuple(sorted(family.name for family in SOURCE_FAMILIES))
FAMILY_SHARE = {"datastream": 0.35, "debezium": 0.25, "pgoutput": 0.25, "spanner": 0.15}
# The top-ups: 1% more events, in the realistic mix and all updates; and the realistic mix at a
# size that does not follow the scale (`fixed`), so a run's cost against history size shows.
TOPUP_MODES: tuple[str, ...] = ("realistic", "adversarial", "fixed")
TOPUP_SHARE = 0.01
FIXED_TOPUP_EVENTS = 10_000
# The delivery of one small file, what a frequent scheduled run finds.
SMALL_FILE = "small"
SMALL_FILE_EVENTS = 1_000
# Families whose every line is a whole event: a file's first lines are a valid file of their own.
SMALL_FILE_FAMILIES = ("datastream", "debezium")

# The mix, as probabilities (documented in docs/benchmarks.md and checked by the unit tests).
NEW_KEY_SHARE = 0.35  # of base changes: a new key
HOT_SHARE = 0.10  # of changes to existing keys: one of every 1000th key (update-heavy keys)
OLD_SHARE = 0.05  # of changes to existing keys: any key, uniformly
RECENT_WINDOW = 0.005  # mean distance (share of all keys) back from the newest key
DELETE_SHARE = 0.08  # of keys with more than one change: the last one is a delete
PK_CHANGE_SHARE = 0.01  # ... or a primary key change (debezium, pgoutput)
BACKFILL_SHARE = 0.10  # keys created in this first share of the timeline are backfilled
TOAST_SHARE = 0.60  # of updates (debezium pg_main, pgoutput): TOASTed columns unchanged
DUPLICATE_SHARE = 0.01  # of delivered lines: delivered once more (same event)
RESEND_SHARE = 0.005  # of debezium changes: re-sent at a new offset
LATE_FILE_SHARE = 0.05  # of datastream / debezium files: land 1-2 waves late
LARGE_TXN_EVERY = 20_000  # base changes per large transaction
STREAM_BLOCK = 32  # changes per Stream Start .. Stream Stop block

# Datastream Avro: MySQL files with an odd (wave + file number), except the small file landed
# twice, are Avro object container files (about half of the MySQL source's events).
AVRO_SOURCE = 0
# Spanner: at each wave boundary a stream's partitions end with child partitions records. A
# key's partition is chosen by key % SP_RESIDUES; the generations alternate between the two
# layouts below, so that every boundary has a split (a parent, two children) and a merge (a
# child of two parents).
SP_RESIDUES = 4
SP_GENERATIONS = (((0,), (1,), (2, 3)), ((0, 1), (2,), (3,)))
# Truncates: a small side table per family that can express one (Debezium op "t", pgoutput
# Truncate 'T'); every wave inserts SIDE_ROWS new rows and every TRUNCATE_EVERY-th wave
# (from wave 1) truncates the table first, so only the rows inserted since the last truncate
# are live.
SIDE_ROWS = 8  # (at most 8: pgoutput's side transactions fit below a wave's first lsn)
TRUNCATE_EVERY = 2
# The expected rows (values) of a sample of live keys per family, checked by the benchmark.
SAMPLE_KEYS = 200
SAMPLE_FILE = "expected-sample.json"

TOPUP_NEW = 0.30  # realistic top-up: new keys
TOPUP_LATE = 0.05  # ... late changes of old keys, placed back in source order
TOPUP_DELETE = 0.05  # ... deletes of recent keys; the rest update recent keys

T0_US = 1_717_200_000_000_000  # 2024-06-01T00:00:00Z
STEP_US = 10_000  # source time between consecutive changes of a family
LSN0 = 0x1_0000_0000
LSN_STEP = 256
PK_KEY_OFFSET = 1_000_000_000  # key ids made by primary key changes

OP_INSERT, OP_UPDATE, OP_DELETE, OP_SNAPSHOT, OP_PK_CHANGE = range(5)


@dataclass(frozen=True)
class Spec:
    scale: int
    seed: int = 42
    waves: int = 8
    families: tuple[str, ...] = FAMILIES
    chunk_events: int = 50_000
    jobs: int = 0  # 0: one per CPU


# --------------------------------------------------------------------------------------------
# Planning: which change hits which key, in which transaction and wave (numpy, no formatting)
# --------------------------------------------------------------------------------------------


@dataclass
class Plan:
    """One family's changes in source order (base, then each top-up after it)."""

    family: str
    key: np.ndarray  # int64 key id
    op: np.ndarray  # int8 OP_*
    pos: np.ndarray  # float64 source position (the change's place in the family's timeline)
    txn: np.ndarray  # int64 transaction number, increasing with commit order
    commit_pos: np.ndarray  # float64 position of the transaction's commit
    wave: np.ndarray  # int16 wave the change belongs to (before late delivery)
    toast: np.ndarray  # bool: TOASTed columns unchanged in this update
    prev_pos: np.ndarray  # float64 position of the key's previous change (-1: none)
    n_keys: int = 0
    live: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # live key ids
    first_pos: np.ndarray = field(default_factory=lambda: np.zeros(0))  # per key id < n_keys
    variant: int = 0  # 0 base, 1 + index of the top-up mode


def _family_seed(spec: Spec, family: str, salt: int = 0) -> np.random.Generator:
    return np.random.default_rng([spec.seed, FAMILIES.index(family), salt])


def family_events(spec: Spec) -> dict[str, int]:
    """How many base changes each family gets (shares renormalised over the chosen ones)."""
    total = sum(FAMILY_SHARE[f] for f in spec.families)
    counts = {f: int(spec.scale * FAMILY_SHARE[f] / total) for f in spec.families}
    counts[spec.families[0]] += spec.scale - sum(counts.values())
    return counts


def _transactions(n: int, rng: np.random.Generator, large: bool) -> np.ndarray:
    """Transaction number per change: mostly 1-3 changes, and a few large ones."""
    boundary = rng.random(n) < 0.5
    boundary[0] = True
    if large and n > 200:
        size = max(80, min(1000, n // 100))
        count = max(1, n // LARGE_TXN_EVERY)
        starts = np.linspace(n // (2 * count), n - size - 1, count).astype(np.int64)
        for start in starts:
            boundary[start : start + size] = False
            boundary[start] = True
            if start + size < n:
                boundary[start + size] = True
    return np.cumsum(boundary) - 1


def _commit_positions(txn: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Position of each change's transaction commit: the last change of the transaction."""
    last = np.r_[np.flatnonzero(np.diff(txn)), len(txn) - 1]
    counts = np.diff(np.r_[-1, last])
    return np.repeat(pos[last], counts)


def plan_base(spec: Spec, family: str, n: int) -> Plan:
    rng = _family_seed(spec, family)
    is_new = rng.random(n) < NEW_KEY_SHARE
    is_new[0] = True
    created = np.cumsum(is_new)
    existing: np.ndarray = created - is_new  # keys that exist before this change
    safe = np.maximum(existing, 1)
    choice = rng.random(n)
    offset = np.floor(rng.exponential(max(1.0, RECENT_WINDOW * created[-1]), n)).astype(np.int64)
    recent = safe - 1 - np.minimum(offset, safe - 1)
    old = np.minimum(np.floor(rng.random(n) * safe).astype(np.int64), safe - 1)
    hot = np.minimum(np.floor(rng.random(n) * np.maximum(safe // 1000, 1)) * 1000, safe - 1)
    key = np.where(
        is_new,
        created - 1,
        np.where(choice < HOT_SHARE, hot, np.where(choice < HOT_SHARE + OLD_SHARE, old, recent)),
    ).astype(np.int64)
    n_keys = int(created[-1])

    order = np.argsort(key, kind="stable")
    sorted_key = key[order]
    starts = np.r_[True, sorted_key[1:] != sorted_key[:-1]]
    ends = np.r_[sorted_key[1:] != sorted_key[:-1], True]
    group_size = np.diff(np.r_[np.flatnonzero(starts), n])
    op = np.full(n, OP_UPDATE, np.int8)
    first_idx = order[starts]
    op[first_idx] = OP_INSERT
    backfilled = first_idx[first_idx < BACKFILL_SHARE * n]
    if family != "pgoutput" and family != "spanner":
        op[backfilled] = OP_SNAPSHOT
    last_idx = order[ends]
    fate = rng.random(len(last_idx))
    multi = group_size > 1
    op[last_idx[multi & (fate < DELETE_SHARE)]] = OP_DELETE
    if family in ("debezium", "pgoutput"):
        pk = multi & (fate >= DELETE_SHARE) & (fate < DELETE_SHARE + PK_CHANGE_SHARE)
        op[last_idx[pk]] = OP_PK_CHANGE

    pos = np.arange(n, dtype=np.float64)
    prev_sorted = np.r_[-1.0, pos[order][:-1]]
    prev_sorted[starts] = -1.0
    prev_pos = np.empty(n)
    prev_pos[order] = prev_sorted

    txn = _transactions(n, rng, large=True)
    commit_pos = _commit_positions(txn, pos)
    # A transaction belongs to the wave of its first change, so no transaction spans waves.
    first_of_txn = np.r_[True, txn[1:] != txn[:-1]]
    wave_first = (pos[first_of_txn] * spec.waves // max(n, 1)).astype(np.int16)
    wave = np.repeat(wave_first, np.diff(np.r_[np.flatnonzero(first_of_txn), n]))
    toast = (op == OP_UPDATE) & (rng.random(n) < TOAST_SHARE)

    dead = op[last_idx]
    live = np.sort(
        np.r_[
            sorted_key[ends][(dead != OP_DELETE) & (dead != OP_PK_CHANGE)],
            sorted_key[ends][dead == OP_PK_CHANGE] + PK_KEY_OFFSET,
        ]
    )
    first_pos = np.empty(n_keys)
    first_pos[sorted_key[starts]] = pos[first_idx]
    return Plan(
        family, key, op, pos, txn, commit_pos, wave, toast, prev_pos, n_keys, live, first_pos
    )


def topup_size(spec: Spec, family: str, n_base: int, mode: str) -> int:
    """The changes a top-up adds to a family: 1% of its base, or its share of
    FIXED_TOPUP_EVENTS."""
    if mode == "fixed":
        shares = sum(FAMILY_SHARE[name] for name in spec.families)
        return max(1, round(FIXED_TOPUP_EVENTS * FAMILY_SHARE[family] / shares))
    return max(1, round(TOPUP_SHARE * n_base))


def plan_topup(spec: Spec, base: Plan, mode: str) -> Plan:
    """More changes after the base (topup_size), in one more wave."""
    rng = _family_seed(spec, base.family, 1 + TOPUP_MODES.index(mode))
    n_base = len(base.key)
    m = topup_size(spec, base.family, n_base, mode)
    candidates = base.live[base.live < PK_KEY_OFFSET]
    live_count = len(candidates)
    window = max(1.0, RECENT_WINDOW * base.n_keys)
    late = np.zeros(m, bool)
    if mode == "adversarial" or live_count == 0:
        key = candidates[rng.integers(0, max(live_count, 1), m)] if live_count else np.zeros(m)
        op = np.full(m, OP_UPDATE, np.int8)
        if live_count == 0:
            key = np.arange(m) + base.n_keys
            op[:] = OP_INSERT
    else:
        choice = rng.random(m)
        n_delete = round(TOPUP_DELETE * m)
        is_new = choice < TOPUP_NEW
        late = (choice >= TOPUP_NEW) & (choice < TOPUP_NEW + TOPUP_LATE)
        offset = np.floor(rng.exponential(window, m)).astype(np.int64)
        recent = candidates[live_count - 1 - np.minimum(offset, live_count - 1)]
        old = candidates[rng.integers(0, live_count, m)]
        key = np.where(is_new, base.n_keys + np.cumsum(is_new) - 1, np.where(late, old, recent))
        # One late change per key: a key's late changes would share one source position.
        late_index = np.flatnonzero(late)
        _, first_late = np.unique(key[late_index], return_index=True)
        repeated = np.setdiff1d(late_index, late_index[first_late])
        late[repeated] = False
        key[repeated] = recent[repeated]
        op = np.where(is_new, OP_INSERT, OP_UPDATE).astype(np.int8)
        # Deletes come last, each of a different recent key that nothing in this top-up
        # changes after it.
        if n_delete:
            pool = np.setdiff1d(candidates[-max(n_delete * 4, int(window) * 4) :], key)
            chosen = pool[rng.permutation(len(pool))[:n_delete]]
            keep = m - len(chosen)
            key = np.r_[key[:keep], chosen]
            op = np.r_[op[:keep], np.full(len(chosen), OP_DELETE, np.int8)]
            late = np.r_[late[:keep], np.zeros(len(chosen), bool)]
    key = key.astype(np.int64)
    pos = n_base + np.arange(m, dtype=np.float64)
    if base.family in ("datastream", "debezium"):
        # Late changes sit just after the key's first change in source order.
        late_keys = key[late]
        pos[late] = base.first_pos[late_keys] + 0.5
    else:
        late[:] = False
    txn = _transactions(m, rng, large=False) + int(base.txn[-1]) + 1
    if late.any():  # a late change is its own transaction
        txn = np.where(late, -1, txn)
        txn = np.where(late, int(txn.max()) + 1 + np.arange(m), txn)
    commit_pos = np.where(late, pos, 0.0)
    normal = ~late
    if normal.any():
        commit_pos[normal] = _commit_positions(txn[normal], pos[normal])
    toast = (op == OP_UPDATE) & (rng.random(m) < TOAST_SHARE)
    prev_pos = np.full(m, -2.0)  # unknown: values of the previous change are not needed
    wave = np.full(m, spec.waves, np.int16)
    touched_dead = key[op == OP_DELETE]
    live = np.union1d(np.setdiff1d(base.live, touched_dead), key[op == OP_INSERT])
    variant = 1 + TOPUP_MODES.index(mode)
    return Plan(
        base.family, key, op, pos, txn, commit_pos, wave, toast, prev_pos, 0, live, variant=variant
    )


# --------------------------------------------------------------------------------------------
# Values: deterministic functions of (key, position)
# --------------------------------------------------------------------------------------------

STATUSES = ("new", "paid", "packed", "shipped", "delivered", "returned")
PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_B64 = base64.b64encode(PLACEHOLDER.encode()).decode()
_WORDS = ["change", "data", "capture", "warehouse", "lakehouse", "partition", "version", "history"]


def _micros(pos: float) -> int:
    return T0_US + int(pos * STEP_US)


def _iso(us: int) -> str:
    """RFC 3339 UTC with microseconds."""
    secs, frac = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:06d}Z"


def _pg_text_ts(us: int) -> str:
    secs, frac = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(secs)) + f".{frac:06d}+00"


def _amount(k: int, p: float) -> str:
    cents = (k * 7919 + int(p) * 104_729) % 1_000_000
    return f"{cents // 100}.{cents % 100:02d}"


def _text(k: int, p: float, words: int) -> str:
    start = (k + int(p)) % len(_WORDS)
    return " ".join(_WORDS[(start + i) % len(_WORDS)] for i in range(words)) + f" #{k}"


# --------------------------------------------------------------------------------------------
# Files: a chunk of one family's delivered changes becomes one file
# --------------------------------------------------------------------------------------------


@dataclass
class Chunk:
    family: str
    source: str  # stream / server / slot name
    table: int  # sub-source index within the family
    wave: int  # wave whose events these are
    deliver: int  # wave (or top-up) in which the file lands
    index: np.ndarray  # change indexes into the plan, in delivery order
    extra: dict[str, Any] = field(default_factory=dict)
    path: str = ""


@dataclass
class FileStats:
    lines: int = 0
    events: int = 0
    duplicates: int = 0
    placeholders: int = 0
    pk_changes: int = 0
    streamed_txns: int = 0
    aborted_subtxns: int = 0
    resent_open_txns: int = 0
    late_events: int = 0
    avro_files: int = 0
    avro_events: int = 0
    truncates: int = 0
    splits: int = 0
    merges: int = 0
    partition_ends: int = 0

    def add(self, other: FileStats) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


_PLANS: dict[tuple[str, str], Plan] = {}  # (family, "base" | mode) -> plan; read by workers


def _dup_mask(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n) < DUPLICATE_SHARE


# ---- datastream ------------------------------------------------------------------------------

DS_SOURCES = (
    ("mysql_shop", "shop", "orders", "order_id"),
    ("postgres_crm", "public", "accounts", "id"),
)
_DS_PREFIX = "projects/bench/locations/us-central1/streams/"


def _ds_uuid(seed: int, source: int, variant: int, p: float) -> str:
    """Unique per change: its position (late changes sit at half positions)."""
    serial = int(p * 2)
    return (
        f"{seed & 0xFFFFFFFF:08x}-{source:04x}-4{variant:03x}-8{serial >> 48 & 0xFFF:03x}-"
        f"{serial:012x}"
    )


def _ds_mysql_position(p: float, backfill: bool) -> tuple[str, int, str]:
    """(log_file, log_position, read_method) of a MySQL change."""
    ip = int(p * 2)
    log_file = "" if backfill else f"mysql-bin.{100 + ip // 200_000:06d}"
    log_pos = 0 if backfill else 4 + (ip % 200_000) * 256
    return log_file, log_pos, "mysql-backfill-fulldump" if backfill else "mysql-cdc-binlog"


def _datastream_line(plan: Plan, i: int, seed: int, source: int) -> str:
    k = int(plan.key[i])
    p = float(plan.pos[i])
    op = int(plan.op[i])
    us = _micros(plan.commit_pos[i])
    ts = _iso(us)
    read_ts = _iso(us + 2_250_000)
    stream, schema, table, key_col = DS_SOURCES[source]
    uid = _ds_uuid(seed, source, plan.variant, p)
    backfill = op == OP_SNAPSHOT
    deleted = op == OP_DELETE
    change = "INSERT" if op in (OP_INSERT, OP_SNAPSHOT) else "DELETE" if deleted else "UPDATE"
    note = "null" if k % 3 else json.dumps(_text(k, p, 4))
    if source == 0:
        payload = (
            f'{{"order_id":{k},"customer_id":{k % 7919},"status":"{STATUSES[(k + int(p)) % 6]}",'
            f'"amount":{_amount(k, p)},"note":{note},"updated_at":"{ts}"}}'
        )
        log_file, log_pos, method = _ds_mysql_position(p, backfill)
        meta = (
            f'{{"table":"{table}","database":"{schema}","primary_keys":["{key_col}"],'
            f'"log_file":"{log_file}","log_position":{log_pos},"change_type":"{change}",'
            f'"is_deleted":{"true" if deleted else "false"}}}'
        )
        sort_keys = f'[{us // 1000},"{log_file}",{log_pos}]'
        obj = f"{schema}_{table}"
    else:
        payload = (
            f'{{"id":{k},"email":"user{k}@example.com","balance":{_amount(k, p)},'
            f'"tier":"{STATUSES[(k + int(p)) % 6]}","active":{"false" if deleted else "true"},'
            f'"note":{note}}}'
        )
        lsn = "" if backfill else pg.format_lsn(LSN0 + int(p * LSN_STEP))
        tx = "" if backfill else str(int(plan.txn[i]) + 1000)
        method = "postgres-backfill" if backfill else "postgres-cdc-wal"
        meta = (
            f'{{"schema":"{schema}","table":"{table}","is_deleted":'
            f'{"true" if deleted else "false"},"change_type":"{change}","tx_id":"{tx}",'
            f'"lsn":"{lsn}","primary_keys":["{key_col}"]}}'
        )
        sort_keys = f'[{us // 1000},"{lsn}"]'
        obj = f"{schema}_{table}"
    return (
        f'{{"stream_name":"{_DS_PREFIX}{stream.replace("_", "-")}","read_method":"{method}",'
        f'"object":"{obj}","uuid":"{uid}","read_timestamp":"{read_ts}",'
        f'"source_timestamp":"{ts}","sort_keys":{sort_keys},"source_metadata":{meta},'
        f'"payload":{payload}}}'
    )


# A Datastream event as a file format holds it: a JSON line, or an Avro record.
_Event = TypeVar("_Event")


def _datastream_events(
    chunk: Chunk, plan: Plan, seed: int, build: Callable[[int], _Event]
) -> tuple[list[_Event], FileStats]:
    """The chunk's events built by `build(index)`, each redelivered event twice in a row (the
    same redeliveries whether the file is written as JSON lines or as Avro)."""
    stats = FileStats()
    rng = np.random.default_rng(
        [seed, 11, chunk.wave, int(chunk.index[0]) if len(chunk.index) else 0]
    )
    dups = _dup_mask(len(chunk.index), rng)
    events: list[_Event] = []
    for j, i in enumerate(chunk.index):
        event = build(int(i))
        events.append(event)
        stats.events += 1
        stats.late_events += int(plan.pos[i] != int(plan.pos[i]))
        if dups[j]:
            events.append(event)
            stats.duplicates += 1
    stats.lines = len(events)
    return events, stats


def _datastream_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    return _datastream_events(
        chunk, plan, seed, lambda i: _datastream_line(plan, i, seed, chunk.table)
    )


def _nullable(kind: Any) -> list[Any]:
    return ["null", kind]


# The MySQL orders table's Avro events: NUMERIC as a decimal, DATETIME-like columns as
# timestamp-micros (the envelope's metadata instants are millis).
DS_AVRO_SCHEMA: dict[str, Any] = mysql_event_schema(
    "shop_orders",
    [
        {"name": "order_id", "type": _nullable("long")},
        {"name": "customer_id", "type": _nullable("long")},
        {"name": "status", "type": _nullable("string")},
        {
            "name": "amount",
            "type": _nullable(
                {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
            ),
        },
        {"name": "note", "type": _nullable("string")},
        {
            "name": "updated_at",
            "type": _nullable({"type": "long", "logicalType": "timestamp-micros"}),
        },
    ],
)
_DS_AVRO_PARSED = fastavro.parse_schema(DS_AVRO_SCHEMA)


def _datastream_avro_record(plan: Plan, i: int, seed: int) -> dict[str, Any]:
    """The MySQL change `_datastream_line` writes, as the Avro record of the same event."""
    k, p, op = int(plan.key[i]), float(plan.pos[i]), int(plan.op[i])
    us = _micros(plan.commit_pos[i])
    stream, schema, table, key_col = DS_SOURCES[AVRO_SOURCE]
    backfill = op == OP_SNAPSHOT
    deleted = op == OP_DELETE
    change = "INSERT" if op in (OP_INSERT, OP_SNAPSHOT) else "DELETE" if deleted else "UPDATE"
    log_file, log_pos, method = _ds_mysql_position(p, backfill)
    return {
        "stream_name": f"{_DS_PREFIX}{stream.replace('_', '-')}",
        "read_method": method,
        "object": f"{schema}_{table}",
        "schema_key": f"{seed & 0xFFFFFFFF:08x}{schema}{table}",
        "uuid": _ds_uuid(seed, AVRO_SOURCE, plan.variant, p),
        "read_timestamp": (us + 2_250_000) // 1000,
        "source_timestamp": us // 1000,
        "sort_keys": [us // 1000, log_file, log_pos],
        "source_metadata": {
            "table": table,
            "database": schema,
            "primary_keys": [key_col],
            "log_file": log_file,
            "log_position": log_pos,
            "change_type": change,
            "is_deleted": deleted,
        },
        "payload": {
            "order_id": k,
            "customer_id": k % 7919,
            "status": STATUSES[(k + int(p)) % 6],
            "amount": Decimal(_amount(k, p)),
            "note": None if k % 3 else _text(k, p, 4),
            "updated_at": us,
        },
    }


def _datastream_avro_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[bytes, FileStats]:
    """An Avro object container file of the chunk's events (with the same redeliveries as a
    JSON file would have), its sync marker a function of the seed and the chunk."""
    records, stats = _datastream_events(
        chunk, plan, seed, lambda i: _datastream_avro_record(plan, i, seed)
    )
    stats.avro_files, stats.avro_events = 1, stats.events
    first = int(chunk.index[0]) if len(chunk.index) else 0
    out = io.BytesIO()
    marker = np.random.default_rng([seed, 29, chunk.wave, first]).bytes(16)
    fastavro.writer(out, _DS_AVRO_PARSED, records, sync_marker=marker)
    return out.getvalue(), stats


# ---- debezium --------------------------------------------------------------------------------

DBZ_SERVERS = (
    # server, enveloped, version, db, schema, table, partitions
    ("pg_main", True, "2.7.3.Final", "appdb", "public", "documents", 3),
    ("pg_lite", False, "2.3.4.Final", "shopdb", "sales", "order_lines", 2),
)
DBZ_MAIN_SHARE = 0.3  # of debezium keys: pg_main (large enveloped records with TOAST columns)
_ATTACHMENTS = tuple(base64.b64encode(bytes(range(i, i + 48))).decode() for i in range(8))


def _dbz_schemas() -> tuple[str, str]:
    def f(kind: str, column: str, optional: bool = True, name: str | None = None, **kw):
        spec: dict[str, Any] = {"type": kind, "optional": optional, "field": column}
        if name:
            spec.update(name=name, version=1)
        spec.update(kw)
        return spec

    row = [
        f("int32", "id", False),
        f("string", "title"),
        f("string", "body"),
        f("bytes", "attachment"),
        {
            "type": "array",
            "items": {"type": "string", "optional": True},
            "optional": True,
            "field": "tags",
        },
        f("string", "meta", name="io.debezium.data.Json"),
        f("string", "updated_at", name="io.debezium.time.ZonedTimestamp"),
    ]
    image = {
        "type": "struct",
        "fields": row,
        "optional": True,
        "name": "pg_main.public.documents.Value",
    }
    source = {
        "type": "struct",
        "fields": [
            f("string", "version", False),
            f("string", "connector", False),
            f("string", "name", False),
            f("int64", "ts_ms", False),
            f("string", "snapshot"),
            f("string", "db", False),
            f("string", "sequence"),
            f("int64", "ts_us"),
            f("int64", "ts_ns"),
            f("string", "schema", False),
            f("string", "table", False),
            f("int64", "txId"),
            f("int64", "lsn"),
            f("int64", "xmin"),
        ],
        "optional": False,
        "name": "io.debezium.connector.postgresql.Source",
        "field": "source",
    }
    value = {
        "type": "struct",
        "fields": [
            {**image, "field": "before"},
            {**image, "field": "after"},
            source,
            {
                "type": "struct",
                "fields": [
                    f("string", "id", False),
                    f("int64", "total_order", False),
                    f("int64", "data_collection_order", False),
                ],
                "optional": True,
                "name": "event.block",
                "version": 1,
                "field": "transaction",
            },
            f("string", "op", False),
            f("int64", "ts_ms"),
            f("int64", "ts_us"),
            f("int64", "ts_ns"),
        ],
        "optional": False,
        "name": "pg_main.public.documents.Envelope",
        "version": 2,
    }
    key = {
        "type": "struct",
        "fields": [f("int32", "id", False)],
        "optional": False,
        "name": "pg_main.public.documents.Key",
    }
    compact = (",", ":")
    return json.dumps(key, separators=compact), json.dumps(value, separators=compact)


_DBZ_KEY_SCHEMA, _DBZ_VALUE_SCHEMA = _dbz_schemas()
_DBZ_OPS = {OP_INSERT: "c", OP_UPDATE: "u", OP_DELETE: "d", OP_SNAPSHOT: "r"}


def _dbz_document(k: int, p: float, us: int, toast: bool) -> str:
    if toast:
        body, attach, tags = (json.dumps(PLACEHOLDER), f'"{PLACEHOLDER_B64}"', f'["{PLACEHOLDER}"]')
    else:
        body = json.dumps(_text(k, p, 40))
        attach = f'"{_ATTACHMENTS[(k + int(p)) % 8]}"'
        tags = f'["{_WORDS[k % 8]}","{_WORDS[int(p) % 8]}"]'
    meta = json.dumps(f'{{"rev":{int(p)},"lang":"en"}}')
    return (
        f'{{"id":{k},"title":"Document {k} rev {int(p)}","body":{body},"attachment":{attach},'
        f'"tags":{tags},"meta":{meta},"updated_at":"{_iso(us)}"}}'
    )


def _dbz_order_line(k: int, p: float) -> str:
    return (
        f'{{"order_id":{k // 4 + 1},"line_no":{k % 4 + 1},"sku":"SKU-{(k * 31 + int(p)) % 5000}",'
        f'"qty":{(k + int(p)) % 20 + 1},"unit_price":{_amount(k, p)},'
        f'"note":{"null" if k % 5 else json.dumps(_text(k, p, 3))}}}'
    )


def _dbz_record(
    server: int, k: int, p: float, op: str, us: int, lsn: int, tx: int, toast: bool, snapshot: bool
) -> tuple[str, str]:
    """(key text, value text) of one change."""
    name, enveloped, version, db, schema, table, _ = DBZ_SERVERS[server]
    ms = us // 1000
    seq = "null" if op == "r" else json.dumps(f'["{lsn - 4096}","{lsn}"]')
    if server == 0:
        after = "null" if op == "d" else _dbz_document(k, p, us, toast)
        before = (
            f'{{"id":{k},"title":null,"body":null,"attachment":null,"tags":null,"meta":null,'
            f'"updated_at":null}}'
            if op == "d"
            else "null"
        )
        key = f'{{"id":{k}}}'
    else:
        after = "null" if op == "d" else _dbz_order_line(k, p)
        before = (
            f'{{"order_id":{k // 4 + 1},"line_no":{k % 4 + 1},"sku":null,"qty":null,'
            f'"unit_price":null,"note":null}}'
            if op == "d"
            else "null"
        )
        key = f'{{"order_id":{k // 4 + 1},"line_no":{k % 4 + 1}}}'
    source = (
        f'{{"version":"{version}","connector":"postgresql","name":"{name}","ts_ms":{ms},'
        f'"snapshot":"{"true" if snapshot else "false"}","db":"{db}","sequence":{seq},'
    )
    if enveloped:
        source += f'"ts_us":{us},"ts_ns":{us * 1000},'
    source += f'"schema":"{schema}","table":"{table}","txId":{tx},"lsn":{lsn},"xmin":null}}'
    processed = ms + 350
    if enveloped:
        payload = (
            f'{{"before":{before},"after":{after},"source":{source},"transaction":null,'
            f'"op":"{op}","ts_ms":{processed},"ts_us":{processed * 1000},'
            f'"ts_ns":{processed * 1_000_000}}}'
        )
        return (
            f'{{"schema":{_DBZ_KEY_SCHEMA},"payload":{key}}}',
            f'{{"schema":{_DBZ_VALUE_SCHEMA},"payload":{payload}}}',
        )
    return key, (
        f'{{"before":{before},"after":{after},"source":{source},"op":"{op}",'
        f'"ts_ms":{processed},"transaction":null}}'
    )


def _kcat(
    topic: str, partition: int, offset: int, ts_ms: int, key: str | None, value: str | None
) -> str:
    return (
        f'{{"topic":"{topic}","partition":{partition},"offset":{offset},"tstype":"create",'
        f'"ts":{ts_ms},"broker":1,"key":{json.dumps(key, ensure_ascii=False)},'
        f'"payload":{"null" if value is None else json.dumps(value, ensure_ascii=False)}}}'
    )


# The side table that truncates empty (Debezium): pg_lite's sales.promotions, one partition.
DBZ_SIDE_SERVER = 1
DBZ_SIDE_SCHEMA, DBZ_SIDE_TABLE = "sales", "promotions"


def side_keys(wave: int) -> range:
    """The side table's rows that a base wave inserts (ids, the same in both families)."""
    return range(wave * SIDE_ROWS, (wave + 1) * SIDE_ROWS)


def truncates_in(wave: int) -> bool:
    """Whether a base wave truncates the side table before inserting its rows."""
    return wave >= 1 and wave % TRUNCATE_EVERY == 1


def side_live_keys(waves: int) -> list[int]:
    """The side table's ids live after `waves` base waves: those inserted since the last
    truncate."""
    last = max((w for w in range(waves) if truncates_in(w)), default=0)
    return [n for w in range(last, waves) for n in side_keys(w)]


def side_row(n: int) -> dict[str, Any]:
    """A side table row (both families), as the warehouse's row_json holds it."""
    return {"id": n, "label": f"promotion {n}", "percent": n % 40 + 5}


def _side_lsn(wave_start: float) -> int:
    """The first lsn of a wave's side table changes: below its first change's (the previous
    wave's last commit is at least LSN_STEP - 24 lower still)."""
    return LSN0 + int(wave_start * LSN_STEP) - 200


def _debezium_side_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    """A wave's side table records: a truncate (op t, no key, no images) where the wave has
    one, then the wave's inserts."""
    stats = FileStats()
    name, _, version, db, _, _, _ = DBZ_SERVERS[DBZ_SIDE_SERVER]
    topic = f"{name}.{DBZ_SIDE_SCHEMA}.{DBZ_SIDE_TABLE}"
    wave = chunk.wave
    lsn = _side_lsn(float(chunk.extra["wave_start"]))
    us = _micros(float(chunk.extra["wave_start"])) - 2_000
    offset = int(chunk.extra["offset"])
    lines = []
    changes: list[tuple[str, int | None]] = [("t", None)] if truncates_in(wave) else []
    changes += [("c", n) for n in side_keys(wave)]
    for step, (op, n) in enumerate(changes):
        source = (
            f'{{"version":"{version}","connector":"postgresql","name":"{name}",'
            f'"ts_ms":{us // 1000},"snapshot":"false","db":"{db}","sequence":null,'
            f'"schema":"{DBZ_SIDE_SCHEMA}","table":"{DBZ_SIDE_TABLE}","txId":{900_000 + wave},'
            f'"lsn":{lsn + 8 * step},"xmin":null}}'
        )
        after = "null" if n is None else json.dumps(side_row(n), separators=(",", ":"))
        value = (
            f'{{"before":null,"after":{after},"source":{source},"op":"{op}",'
            f'"ts_ms":{us // 1000 + 350},"transaction":null}}'
        )
        key = None if n is None else f'{{"id":{n}}}'
        lines.append(_kcat(topic, 0, offset + step, us // 1000 + 350, key, value))
        stats.events += 1
        stats.truncates += int(op == "t")
    stats.lines = len(lines)
    return lines, stats


# Records of a debezium change: what a change expands to in its topic partitions.
REC_CHANGE, REC_TOMBSTONE, REC_PK_DELETE, REC_PK_CREATE, REC_RESEND = range(5)


def _debezium_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    if chunk.extra.get("side"):
        return _debezium_side_file(chunk, plan, seed)
    stats = FileStats()
    server = chunk.table
    name, _, _, _, schema, table, _ = DBZ_SERVERS[server]
    topic = f"{name}.{schema}.{table}"
    partition = chunk.extra["partition"]
    kinds, offsets = chunk.extra["kinds"], chunk.extra["offsets"]
    rng = np.random.default_rng([seed, 13, chunk.wave, int(offsets[0]) if len(offsets) else 0])
    dups = _dup_mask(len(chunk.index), rng)
    lines = []
    for j, i in enumerate(chunk.index):
        i = int(i)
        k, p, op = int(plan.key[i]), float(plan.pos[i]), int(plan.op[i])
        us = _micros(plan.commit_pos[i])
        lsn = LSN0 + int(p * LSN_STEP)
        tx = int(plan.txn[i]) + 5000
        kind = int(kinds[j])
        toast = bool(plan.toast[i]) and server == 0
        if kind == REC_TOMBSTONE:
            key, _ = _dbz_record(server, k, p, "d", us, lsn, tx, False, False)
            line = _kcat(topic, partition, int(offsets[j]), us // 1000 + 351, key, None)
        else:
            if kind == REC_PK_DELETE:
                letter, key_id = "d", k
            elif kind == REC_PK_CREATE:
                # The new key's unchanged TOAST columns arrive as placeholders.
                letter, key_id, toast = "c", k + PK_KEY_OFFSET, server == 0
                stats.pk_changes += 1
            else:
                letter, key_id = _DBZ_OPS[op], k
            key, value = _dbz_record(
                server, key_id, p, letter, us, lsn, tx, toast, op == OP_SNAPSHOT
            )
            line = _kcat(topic, partition, int(offsets[j]), us // 1000 + 350, key, value)
            if kind != REC_RESEND and kind != REC_PK_DELETE:
                stats.events += 1
            if kind == REC_RESEND:
                stats.duplicates += 1
            stats.placeholders += int(toast)
            stats.late_events += int(p != int(p))
        lines.append(line)
        if dups[j]:
            lines.append(line)
            stats.duplicates += 1
    stats.lines = len(lines)
    return lines, stats


# ---- pgoutput --------------------------------------------------------------------------------

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


def _pg_tuple(k: int, p: float, us: int, toast: bool) -> bytes:
    note = ("u", None) if toast else ("t", _text(k, p, 30).encode())
    return pg.tuple_data(
        ("t", str(k).encode()),
        ("t", f"SKU-{(k * 31 + int(p)) % 5000}".encode()),
        ("t", str((k + int(p)) % 50).encode()),
        ("t", _amount(k, p).encode()),
        note,
        ("t", _pg_text_ts(us).encode()),
    )


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


def _txn_groups(plan: Plan, index: np.ndarray) -> list[np.ndarray]:
    txn = plan.txn[index]
    cuts = np.flatnonzero(np.diff(txn)) + 1
    return np.split(index, cuts)


def _pgoutput_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    """Transactions in commit order; a large one's blocks interleave with the small ones
    committed before it, and its Stream Commit follows them."""
    stats = FileStats()
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


# ---- spanner ---------------------------------------------------------------------------------

SP_STREAMS = (
    ("spanner_orders_a", "OLD_AND_NEW_VALUES", "postgresql"),
    ("spanner_orders_b", "NEW_VALUES", "postgresql"),
    ("spanner_orders_c", "NEW_ROW", "googlesql"),
    ("spanner_orders_d", "NEW_ROW_AND_OLD_VALUES", "googlesql"),
)
_SP_COLUMNS = json.dumps(
    [
        {
            "name": "OrderId",
            "type": {"code": "INT64"},
            "is_primary_key": True,
            "ordinal_position": 1,
        },
        {
            "name": "Status",
            "type": {"code": "STRING"},
            "is_primary_key": False,
            "ordinal_position": 2,
        },
        {
            "name": "Amount",
            "type": {"code": "NUMERIC"},
            "is_primary_key": False,
            "ordinal_position": 3,
        },
        {"name": "Qty", "type": {"code": "INT64"}, "is_primary_key": False, "ordinal_position": 4},
        {
            "name": "UpdatedAt",
            "type": {"code": "TIMESTAMP"},
            "is_primary_key": False,
            "ordinal_position": 5,
        },
    ],
    separators=(",", ":"),
)


def _sp_values(k: int, p: float, us: int, changed_only: bool) -> str:
    changed = (
        f'"Status":"{STATUSES[(k + int(p)) % 6]}","Amount":"{_amount(k, p)}",'
        f'"UpdatedAt":"{_iso(us)}"'
    )
    if changed_only:
        return "{" + changed + "}"
    return "{" + changed + f',"Qty":"{(k + int(p)) % 50}"}}'


def _sp_wrap(token: str | None, kind: str, record: str, dialect: str) -> str:
    tok = "null" if token is None else f'"{token}"'
    if dialect == "postgresql":
        return f'{{"partition_token":{tok},"{kind}":{record}}}'
    arrays = {
        k: "[]" for k in ("data_change_record", "heartbeat_record", "child_partitions_record")
    }
    arrays[kind] = f"[{record}]"
    inner = ",".join(f'"{k}":{v}' for k, v in arrays.items())
    return f'{{"partition_token":{tok},"ChangeRecord":[{{{inner}}}]}}'


def _sp_groups(gen: int) -> tuple[tuple[int, ...], ...]:
    """A generation's partitions, as the key residues (key % 4) each holds."""
    return SP_GENERATIONS[gen % len(SP_GENERATIONS)]


def _sp_token(stream: str, gen: int, group: tuple[int, ...]) -> str:
    return f"{stream}-g{gen}-r{''.join(map(str, group))}"


def _sp_partition_of(gen: int) -> list[int]:
    """Partition number (index into `_sp_groups(gen)`) of each key residue."""
    return [next(n for n, g in enumerate(_sp_groups(gen)) if r in g) for r in range(SP_RESIDUES)]


def _sp_child_records(stream: str, gen: int, start_us: int) -> list[tuple[str, str]]:
    """(parent token, its child partitions record) that end generation gen - 1 at start_us: a
    parent whose residues two children share splits, a child whose residues two parents held
    merges them (both parents announce it)."""
    old, new = _sp_groups(gen - 1), _sp_groups(gen)
    records = []
    for parent in old:
        listed = []
        for child in new:
            if set(child) & set(parent):
                parents = [_sp_token(stream, gen - 1, g) for g in old if set(g) & set(child)]
                listed.append(
                    f'{{"token":"{_sp_token(stream, gen, child)}",'
                    f'"parent_partition_tokens":{json.dumps(parents)}}}'
                )
        records.append(
            (
                _sp_token(stream, gen - 1, parent),
                f'{{"start_timestamp":"{_iso(start_us)}","record_sequence":"00000000",'
                f'"child_partitions":[{",".join(listed)}]}}',
            )
        )
    return records


def _sp_splits_merges(gen: int) -> tuple[int, int]:
    """(parents split into several children, children merged from several parents) at the
    start of generation gen."""
    old, new = _sp_groups(gen - 1), _sp_groups(gen)
    splits = sum(sum(bool(set(c) & set(p)) for c in new) > 1 for p in old)
    merges = sum(sum(bool(set(c) & set(p)) for p in old) > 1 for c in new)
    return splits, merges


def _spanner_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    stats = FileStats()
    stream, capture, dialect = SP_STREAMS[chunk.table]
    gen = int(chunk.extra.get("gen", 0))
    tokens = [_sp_token(stream, gen, group) for group in _sp_groups(gen)]
    partition_of = _sp_partition_of(gen)
    lines = []
    if chunk.extra.get("initial"):
        children = ",".join(f'{{"token":"{t}","parent_partition_tokens":[]}}' for t in tokens)
        lines.append(
            _sp_wrap(
                None,
                "child_partitions_record",
                (
                    f'{{"start_timestamp":"{_iso(T0_US)}","record_sequence":"00000000",'
                    f'"child_partitions":[{children}]}}'
                ),
                dialect,
            )
        )
    if chunk.extra.get("split_at") is not None:
        # The previous generation's partitions end where this wave starts: every record of
        # theirs landed before, every record of the children (this file on) comes after.
        for parent, record in _sp_child_records(stream, gen, int(chunk.extra["split_at"])):
            lines.append(_sp_wrap(parent, "child_partitions_record", record, dialect))
            stats.partition_ends += 1
        splits, merges = _sp_splits_merges(gen)
        stats.splits += splits
        stats.merges += merges
    rng = np.random.default_rng(
        [seed, 17, chunk.wave, int(chunk.index[0]) if len(chunk.index) else 0]
    )
    dups = _dup_mask(len(chunk.index), rng)
    groups = _txn_groups(plan, chunk.index)
    j = 0
    last_us = T0_US
    for group in groups:
        parts = [partition_of[int(plan.key[i]) % SP_RESIDUES] for i in group]
        n_parts = len(set(parts))
        us = _micros(plan.commit_pos[int(group[-1])])
        last_us = max(last_us, us)
        for seq, i in enumerate(group):
            i = int(i)
            k, p, op = int(plan.key[i]), float(plan.pos[i]), int(plan.op[i])
            keys = f'{{"OrderId":"{k}"}}'
            prev = float(plan.prev_pos[i])
            old_us = _micros(prev) if prev >= 0 else us
            if op == OP_INSERT:
                mod_type, new, old = "INSERT", _sp_values(k, p, us, False), "{}"
            elif op == OP_DELETE:
                mod_type, new = "DELETE", "{}"
                keep_old = capture in ("OLD_AND_NEW_VALUES", "NEW_ROW_AND_OLD_VALUES")
                old = _sp_values(k, prev, old_us, False) if keep_old and prev >= 0 else "{}"
            else:
                mod_type = "UPDATE"
                new = _sp_values(k, p, us, capture in ("OLD_AND_NEW_VALUES", "NEW_VALUES"))
                old = (
                    _sp_values(k, prev, old_us, True)
                    if capture in ("OLD_AND_NEW_VALUES", "NEW_ROW_AND_OLD_VALUES") and prev >= 0
                    else "{}"
                )
            last = "true" if seq == len(group) - 1 else "false"
            record = (
                f'{{"commit_timestamp":"{_iso(us)}","record_sequence":"{seq:08d}",'
                f'"server_transaction_id":"{seed}-{int(plan.txn[i])}",'
                f'"is_last_record_in_transaction_in_partition":{last},'
                f'"table_name":"Orders","column_types":{_SP_COLUMNS},'
                f'"mods":[{{"keys":{keys},"new_values":{new},"old_values":{old}}}],'
                f'"mod_type":"{mod_type}","value_capture_type":"{capture}",'
                f'"number_of_records_in_transaction":{len(group)},'
                f'"number_of_partitions_in_transaction":{n_parts},"transaction_tag":"",'
                f'"is_system_transaction":false}}'
            )
            line = _sp_wrap(tokens[parts[seq]], "data_change_record", record, dialect)
            lines.append(line)
            stats.events += 1
            if dups[j]:
                lines.append(line)
                stats.duplicates += 1
            j += 1
    for token in tokens:
        lines.append(
            _sp_wrap(token, "heartbeat_record", f'{{"timestamp":"{_iso(last_us)}"}}', dialect)
        )
    stats.lines = len(lines)
    return lines, stats


_WRITERS = {
    "datastream": _datastream_file,
    "debezium": _debezium_file,
    "pgoutput": _pgoutput_file,
    "spanner": _spanner_file,
}


# --------------------------------------------------------------------------------------------
# Which changes go into which file
# --------------------------------------------------------------------------------------------


def _sub_source(family: str, key: np.ndarray) -> np.ndarray:
    if family == "datastream":
        return (key % 5 >= 3).astype(np.int64)  # 60% MySQL, 40% PostgreSQL
    if family == "debezium":
        return (key % 10 >= DBZ_MAIN_SHARE * 10).astype(np.int64)  # pg_main, pg_lite
    if family == "spanner":
        return key % len(SP_STREAMS)
    return np.zeros(len(key), np.int64)


def _split(plan: Plan, index: np.ndarray, size: int, txn_aligned: bool) -> list[np.ndarray]:
    if len(index) == 0:
        return []
    if len(index) <= size:
        return [index]
    if not txn_aligned:
        return np.array_split(index, -(-len(index) // size))
    changes = np.flatnonzero(np.diff(plan.txn[index])) + 1
    targets = np.arange(size, len(index), size)
    cuts = np.unique(changes[np.minimum(np.searchsorted(changes, targets), len(changes) - 1)])
    return [part for part in np.split(index, cuts) if len(part)]


def _deliver_name(wave: int, waves: int, mode: str | None) -> str:
    return f"topup-{mode}" if mode else f"wave-{wave:04d}"


def _late_delay(
    rng: np.random.Generator, wave: int, waves: int, mode: str | None, first: bool = False
) -> int:
    """Waves a file lands late by: LATE_FILE_SHARE of files, and always the first file of the
    first wave (so every workload with two waves or more has one)."""
    draw = rng.random()
    if mode or wave >= waves - 1 or (draw >= LATE_FILE_SHARE and not (first and wave == 0)):
        return 0
    return int(min(waves - 1 - wave, 1 + int(rng.random() < 0.5)))


def _ds_chunks(spec: Spec, plan: Plan, mode: str | None) -> list[Chunk]:
    rng = np.random.default_rng([spec.seed, 21, TOPUP_MODES.index(mode) + 1 if mode else 0])
    sub = _sub_source("datastream", plan.key)
    chunks = []
    for wave in np.unique(plan.wave):
        for source in range(len(DS_SOURCES)):
            index = np.flatnonzero((plan.wave == wave) & (sub == source))
            parts = _split(plan, index, spec.chunk_events, False)
            twice_number = -1
            if parts and len(parts[-1]) >= 2 and mode is None:
                # The tail of the last file is a small file that lands twice under two names.
                tail = max(1, min(200, len(parts[-1]) // 100))
                parts[-1], tail_part = parts[-1][:-tail], parts[-1][-tail:]
                parts.append(tail_part)
                twice_number = len(parts) - 1
            for number, part in enumerate(parts):
                stream, schema, table, _ = DS_SOURCES[source]
                method = "mysql-cdc-binlog" if source == 0 else "postgres-cdc-wal"
                stamp = time.strftime(
                    "%Y/%m/%d/%H/%M", time.gmtime(_micros(plan.pos[part[0]]) // 1_000_000)
                )
                twice = number == twice_number
                delay = _late_delay(rng, int(wave), spec.waves, mode, source + number == 0)
                avro = source == AVRO_SOURCE and not twice and (int(wave) + number) % 2 == 1
                chunk = Chunk(
                    "datastream",
                    stream,
                    source,
                    int(wave),
                    int(wave) + delay,
                    part,
                    {"twice": twice, "late": delay > 0, "avro": avro},
                )
                chunk.path = (
                    f"datastream/{stream}/{schema}_{table}/{stamp}/"
                    f"{spec.seed:x}{wave:04d}{number:05d}_{method}_{wave}_{number}"
                    f"{'.avro' if avro else '.jsonl'}"
                )
                chunks.append(chunk)
    return chunks


def _dbz_records(plan: Plan, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(event index, record kind) of the records the changes make, in production order."""
    op = plan.op[index]
    counts = np.where(op == OP_PK_CHANGE, 3, np.where(op == OP_DELETE, 2, 1))
    events = np.repeat(index, counts)
    kinds = np.zeros(len(events), np.int8)
    start = np.cumsum(counts) - counts
    deletes = start[op == OP_DELETE]
    kinds[deletes + 1] = REC_TOMBSTONE
    pks = start[op == OP_PK_CHANGE]
    kinds[pks] = REC_PK_DELETE
    kinds[pks + 1] = REC_TOMBSTONE
    kinds[pks + 2] = REC_PK_CREATE
    return events, kinds


def _dbz_chunks(
    spec: Spec, plan: Plan, mode: str | None, next_offset: dict[tuple[int, int], int]
) -> list[Chunk]:
    rng = np.random.default_rng([spec.seed, 23, TOPUP_MODES.index(mode) + 1 if mode else 0])
    sub = _sub_source("debezium", plan.key)
    chunks: list[Chunk] = []
    for wave in np.unique(plan.wave):
        for server in range(len(DBZ_SERVERS)):
            name, _, _, _, schema, table, partitions = DBZ_SERVERS[server]
            topic = f"{name}.{schema}.{table}"
            index = np.flatnonzero((plan.wave == wave) & (sub == server))
            events, kinds = _dbz_records(plan, index)
            resend = np.flatnonzero((kinds == REC_CHANGE) & (rng.random(len(kinds)) < RESEND_SHARE))
            events = np.r_[events, events[resend]]
            kinds = np.r_[kinds, np.full(len(resend), REC_RESEND, np.int8)]
            key = plan.key[events] + np.where(kinds == REC_PK_CREATE, PK_KEY_OFFSET, 0)
            partition = key % partitions
            for part_no in range(partitions):
                chosen = np.flatnonzero(partition == part_no)
                base = next_offset.get((server, part_no), 0)
                offsets = base + np.arange(len(chosen))
                next_offset[(server, part_no)] = base + len(chosen)
                for piece in np.array_split(
                    np.arange(len(chosen)), max(1, -(-len(chosen) // spec.chunk_events))
                ):
                    if not len(piece):
                        continue
                    delay = _late_delay(
                        rng, int(wave), spec.waves, mode, server + part_no == 0 and not chunks
                    )
                    chunk = Chunk(
                        "debezium",
                        name,
                        server,
                        int(wave),
                        int(wave) + delay,
                        events[chosen[piece]],
                        {
                            "partition": part_no,
                            "kinds": kinds[chosen[piece]],
                            "offsets": offsets[piece],
                            "late": delay > 0,
                        },
                    )
                    chunk.path = (
                        f"debezium/{name}/{topic}/partition={part_no}/"
                        f"{topic}+{part_no}+{int(offsets[piece[0]]):010d}.jsonl"
                    )
                    chunks.append(chunk)
        if mode is None:
            chunks.append(_dbz_side_chunk(plan, int(wave), next_offset))
    return chunks


def _dbz_side_chunk(plan: Plan, wave: int, next_offset: dict[tuple[int, int], int]) -> Chunk:
    """The side table's file of a base wave, landed with its wave."""
    name = DBZ_SERVERS[DBZ_SIDE_SERVER][0]
    topic = f"{name}.{DBZ_SIDE_SCHEMA}.{DBZ_SIDE_TABLE}"
    slot = (len(DBZ_SERVERS), 0)
    offset = next_offset.get(slot, 0)
    records = SIDE_ROWS + int(truncates_in(wave))
    next_offset[slot] = offset + records
    start = float(plan.pos[plan.wave == wave].min())
    chunk = Chunk(
        "debezium",
        name,
        DBZ_SIDE_SERVER,
        wave,
        wave,
        np.zeros(0, np.int64),
        {"side": True, "offset": offset, "wave_start": start},
    )
    chunk.path = f"debezium/{name}/{topic}/partition=0/{topic}+0+{offset:010d}.jsonl"
    return chunk


def _pg_chunks(spec: Spec, plan: Plan, mode: str | None) -> list[Chunk]:
    chunks = []
    waves = np.unique(plan.wave)
    for wave in waves:
        index = np.flatnonzero(plan.wave == wave)
        parts = _split(plan, index, spec.chunk_events, True)
        deliver = _deliver_name(int(wave), spec.waves, mode)
        for number, part in enumerate(parts):
            chunk = Chunk("pgoutput", PG_SLOT, 0, int(wave), int(wave), part)
            chunk.path = f"pgoutput/{PG_SLOT}/{deliver}/{number:05d}.jsonl"
            if mode is None and number == 0:
                chunk.extra.update(side_wave=int(wave), wave_start=float(plan.pos[index].min()))
            chunks.append(chunk)
        if mode is None and wave + 1 < spec.waves and parts:
            following = np.flatnonzero(plan.wave == wave + 1)
            groups = _txn_groups(plan, following) if len(following) else []
            carry = next((g for g in groups if len(g) >= 2 * STREAM_BLOCK), None)
            chunks[-1].extra["carry"] = carry
    return chunks


def _sp_chunks(spec: Spec, plan: Plan, mode: str | None, gens: dict[int, int]) -> list[Chunk]:
    """Each stream's base waves with changes are its partition generations 0, 1, ...: a
    wave's first file ends the previous generation (child partitions records); the top-ups
    read the last generation (`gens`, filled by the base's call)."""
    sub = _sub_source("spanner", plan.key)
    chunks = []
    for wave in np.unique(plan.wave):
        deliver = _deliver_name(int(wave), spec.waves, mode)
        in_wave = plan.wave == wave
        start_us = _micros(float(plan.pos[in_wave].min())) - STEP_US // 2
        for stream_no, (stream, _, _) in enumerate(SP_STREAMS):
            index = np.flatnonzero(in_wave & (sub == stream_no))
            parts = _split(plan, index, spec.chunk_events, True)
            if not parts:
                continue
            if mode is None:
                gen = gens[stream_no] = gens.get(stream_no, -1) + 1
            else:
                gen = gens.get(stream_no, 0)
            for number, part in enumerate(parts):
                chunk = Chunk(
                    "spanner",
                    stream,
                    stream_no,
                    int(wave),
                    int(wave),
                    part,
                    {
                        "initial": mode is None and gen == 0 and number == 0,
                        "gen": gen,
                        "split_at": start_us if mode is None and gen and number == 0 else None,
                    },
                )
                chunk.path = f"spanner/{stream}/{deliver}/{number:05d}.jsonl"
                chunks.append(chunk)
    return chunks


# --------------------------------------------------------------------------------------------
# Expected rows: what cdc_current holds for a sample of keys after the base waves
# --------------------------------------------------------------------------------------------


def _carries_all(family: str, plan: Plan, i: int) -> bool:
    """Whether change i carries every column (else some take the key's earlier values:
    TOAST placeholders / 'u', a primary key change's new key, Spanner's changed-only updates)."""
    op = int(plan.op[i])
    if family == "datastream" or op in (OP_INSERT, OP_SNAPSHOT):
        return True
    k = int(plan.key[i])
    if family == "spanner":
        return SP_STREAMS[k % len(SP_STREAMS)][1] not in ("OLD_AND_NEW_VALUES", "NEW_VALUES")
    if family == "debezium" and int(_sub_source(family, plan.key[i : i + 1])[0]) != 0:
        return True  # pg_lite: no TOAST columns
    return op != OP_PK_CHANGE and not bool(plan.toast[i])


def _dec(text: str) -> Any:
    return normalize(Decimal(text))


def _expected_row(family: str, plan: Plan, last: int, full: int) -> dict[str, Any]:
    """(identity, key and row_json as JSON values) of a key whose last change is `last` and
    whose latest change carrying every column is `full`, mirroring the writers above."""
    k, p, op = int(plan.key[last]), float(plan.pos[last]), int(plan.op[last])
    pf = float(plan.pos[full])
    us = _micros(plan.commit_pos[last])
    key_id = k + PK_KEY_OFFSET if op == OP_PK_CHANGE else k
    sub = int(_sub_source(family, plan.key[last : last + 1])[0])
    if family == "datastream":
        stream, schema, table, key_col = DS_SOURCES[sub]
        note = None if k % 3 else _text(k, p, 4)
        if sub == 0:
            row = {
                "order_id": k,
                "customer_id": k % 7919,
                "status": STATUSES[(k + int(p)) % 6],
                "amount": _dec(_amount(k, p)),
                "note": note,
                "updated_at": _iso(us),
            }
        else:
            row = {
                "id": k,
                "email": f"user{k}@example.com",
                "balance": _dec(_amount(k, p)),
                "tier": STATUSES[(k + int(p)) % 6],
                "active": True,
                "note": note,
            }
        return {
            "source_name": stream,
            "source_table": f"{schema}.{table}",
            "key": {key_col: k},
            "row": row,
        }
    if family == "debezium":
        name, _, _, _, schema, table, _ = DBZ_SERVERS[sub]
        if sub == 0:
            row = {
                "id": key_id,
                "title": f"Document {key_id} rev {int(p)}",
                # The TOASTed columns: the old key's, for a primary key change.
                "body": _text(k, pf, 40),
                "attachment": _ATTACHMENTS[(k + int(pf)) % 8],
                "tags": [_WORDS[k % 8], _WORDS[int(pf) % 8]],
                "meta": {"rev": int(p), "lang": "en"},
                "updated_at": _iso(us),
            }
            key = {"id": key_id}
        else:
            row = {
                "order_id": key_id // 4 + 1,
                "line_no": key_id % 4 + 1,
                "sku": f"SKU-{(key_id * 31 + int(p)) % 5000}",
                "qty": (key_id + int(p)) % 20 + 1,
                "unit_price": _dec(_amount(key_id, p)),
                "note": None if key_id % 5 else _text(key_id, p, 3),
            }
            key = {"order_id": key_id // 4 + 1, "line_no": key_id % 4 + 1}
        return {"source_name": name, "source_table": f"{schema}.{table}", "key": key, "row": row}
    if family == "pgoutput":
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
    stream = SP_STREAMS[sub][0]
    row = {
        "OrderId": k,
        "Status": STATUSES[(k + int(p)) % 6],
        "Amount": _dec(_amount(k, p)),
        "Qty": (k + int(pf)) % 50,
        "UpdatedAt": _iso(us),
    }
    return {"source_name": stream, "source_table": "Orders", "key": {"OrderId": k}, "row": row}


def _side_expected(family: str, waves: int) -> list[dict[str, Any]]:
    if family == "debezium":
        name, table = DBZ_SERVERS[DBZ_SIDE_SERVER][0], f"{DBZ_SIDE_SCHEMA}.{DBZ_SIDE_TABLE}"
    else:
        name, table = PG_SLOT, f"public.{PG_SIDE_TABLE}"
    return [
        {
            "source_name": name,
            "source_table": table,
            "key": {"id": n},
            "row": side_row(n),
            "why": ["after_truncate"],
        }
        for n in side_live_keys(waves)
    ]


def expected_sample(
    spec: Spec, plan: Plan, in_avro: np.ndarray | None = None, size: int = SAMPLE_KEYS
) -> list[dict[str, Any]]:
    """The rows cdc_current holds after the base waves for a deterministic sample of live keys:
    up to `size` // 8 of each kind worth checking (last change an update with TOAST columns
    unchanged, a primary key change's new key, a backfilled key, a Spanner changed-only update,
    an event read from an Avro file), the rest uniform; plus every live row of the side table
    that truncates empty. `in_avro`: per change, whether it landed in an Avro file."""
    family = plan.family
    rng = np.random.default_rng([spec.seed, 31, FAMILIES.index(family)])
    order = np.argsort(plan.key, kind="stable")
    sorted_key = plan.key[order]
    live = plan.live
    base_key = np.where(live >= PK_KEY_OFFSET, live - PK_KEY_OFFSET, live)
    last = order[np.searchsorted(sorted_key, base_key, side="right") - 1]
    op = plan.op[last]
    kinds = {
        "toast": (op == OP_UPDATE) & plan.toast[last],
        "pk_successor": live >= PK_KEY_OFFSET,
        "backfill": plan.first_pos[base_key] < BACKFILL_SHARE * len(plan.key),
        "updated": op == OP_UPDATE,
    }
    if family == "debezium":
        kinds["toast"] &= _sub_source(family, base_key) == 0
    if family == "datastream":
        del kinds["toast"], kinds["pk_successor"]
        if in_avro is not None:
            kinds["avro"] = in_avro[last]
    if family == "spanner":
        del kinds["toast"], kinds["pk_successor"]
        kinds["changed_only"] = (op == OP_UPDATE) & (_sub_source(family, base_key) < 2)
    share = max(1, size // 8)
    chosen: dict[int, list[str]] = {}
    for why, mask in kinds.items():
        candidates = np.flatnonzero(mask)
        for n in candidates[rng.permutation(len(candidates))[:share]]:
            chosen.setdefault(int(n), []).append(why)
    rest = np.setdiff1d(np.arange(len(live)), np.fromiter(chosen, np.int64, len(chosen)))
    for n in rest[rng.permutation(len(rest))[: max(0, size - len(chosen))]]:
        chosen.setdefault(int(n), []).append("uniform")
    rows = []
    for n in sorted(chosen):
        i = int(last[n])
        lo = np.searchsorted(sorted_key, plan.key[i])
        changes = order[lo : np.searchsorted(sorted_key, plan.key[i], side="right")]
        full = next(int(j) for j in changes[::-1] if _carries_all(family, plan, int(j)))
        rows.append({**_expected_row(family, plan, i, full), "why": chosen[n]})
    if family in ("debezium", "pgoutput"):
        rows += _side_expected(family, spec.waves)
    return rows


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _write_chunk(task: tuple[str, Chunk, str, int]) -> tuple[str, str, int, int, dict]:
    plan_key, chunk, root, seed = task
    plan = _PLANS[(chunk.family, plan_key)]
    if chunk.extra.get("avro"):
        data, stats = _datastream_avro_file(chunk, plan, seed)
    else:
        lines, stats = _WRITERS[chunk.family](chunk, plan, seed)
        data = ("\n".join(lines) + "\n").encode("utf-8")
    paths = [Path(root) / chunk.path]
    if chunk.extra.get("twice"):
        paths.append(Path(root) / chunk.path.replace(".jsonl", "-redelivered.jsonl"))
        stats.duplicates += stats.lines
        stats.lines *= 2
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return chunk.family, root, len(paths), len(data) * len(paths), asdict(stats)


def _tasks(
    spec: Spec, out: Path
) -> tuple[list[tuple[str, Chunk, str, int]], dict[str, Any], dict[str, list[dict[str, Any]]]]:
    counts = family_events(spec)
    tasks: list[tuple[str, Chunk, str, int]] = []
    facts: dict[str, Any] = {}
    samples: dict[str, list[dict[str, Any]]] = {}
    for family in spec.families:
        base = plan_base(spec, family, counts[family])
        _PLANS[(family, "base")] = base
        offsets: dict[tuple[int, int], int] = {}
        sp_gens: dict[int, int] = {}
        facts[family] = {
            "base_events": len(base.key),
            "keys": int(base.n_keys),
            "live_keys": {"base": len(base.live)},
            "topup_events": {},
            "late_files": 0,
        }
        plans: list[tuple[str, Plan, str | None]] = [("base", base, None)]
        for topup_mode in TOPUP_MODES:
            topup = plan_topup(spec, base, topup_mode)
            _PLANS[(family, topup_mode)] = topup
            plans.append((topup_mode, topup, topup_mode))
            facts[family]["live_keys"][topup_mode] = len(topup.live)
            facts[family]["topup_events"][topup_mode] = len(topup.key)
        side = family in ("debezium", "pgoutput")
        if side:
            # The side table that truncates empty (the top-ups do not touch it).
            side_live = len(side_live_keys(spec.waves))
            facts[family]["side_table"] = {
                "events": spec.waves * SIDE_ROWS + sum(map(truncates_in, range(spec.waves))),
                "truncates": sum(map(truncates_in, range(spec.waves))),
                "live_keys": side_live,
            }
            for name in facts[family]["live_keys"]:
                facts[family]["live_keys"][name] += side_live
        for plan_key, plan, mode in plans:
            if family == "datastream":
                chunks = _ds_chunks(spec, plan, mode)
            elif family == "debezium":
                chunks = _dbz_chunks(spec, plan, mode, dict(offsets) if mode else offsets)
            elif family == "pgoutput":
                chunks = _pg_chunks(spec, plan, mode)
            else:
                chunks = _sp_chunks(spec, plan, mode, sp_gens)
            if mode is None:
                in_avro = np.zeros(len(plan.key), bool)
                for chunk in chunks:
                    if chunk.extra.get("avro"):
                        in_avro[chunk.index] = True
                samples[family] = expected_sample(spec, plan, in_avro)
                facts[family]["sample_keys"] = len(samples[family])
            for chunk in chunks:
                target = out / _deliver_name(chunk.deliver, spec.waves, mode)
                facts[family]["late_files"] += int(bool(chunk.extra.get("late")))
                tasks.append((plan_key, chunk, str(target), spec.seed))
    return tasks, facts, samples


def write_small_file(out: Path) -> dict[str, Any] | None:
    """`topup-small` (apart from the deliveries: its lines repeat the realistic top-up's): the
    first SMALL_FILE_EVENTS lines of the realistic top-up's first file of
    the first family in SMALL_FILE_FAMILIES it holds (None when it holds neither)."""
    realistic = out / f"topup-{TOPUP_MODES[0]}"
    for family in SMALL_FILE_FAMILIES:
        files = sorted((realistic / family).rglob("*.jsonl"))
        if not files:
            continue
        with files[0].open() as whole:
            lines = [line for _, line in zip(range(SMALL_FILE_EVENTS), whole, strict=False)]
        relative = files[0].relative_to(realistic)
        target = out / f"topup-{SMALL_FILE}" / relative
        target.parent.mkdir(parents=True)
        target.write_text("".join(lines))
        return {"family": family, "path": str(relative), "events": len(lines)}
    return None


def generate(spec: Spec, out: Path | str) -> dict[str, Any]:
    """Write every wave, both top-ups and the small file under `out` and return (and write)
    the manifest."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    started = time.perf_counter()
    _PLANS.clear()
    tasks, facts, samples = _tasks(spec, out)
    jobs = spec.jobs or os.cpu_count() or 1
    # Big chunks first, so the pool's workers finish together.
    tasks.sort(key=lambda task: -len(task[1].index))
    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork")) as pool:
            results = list(pool.map(_write_chunk, tasks, chunksize=1))
    else:
        results = [_write_chunk(task) for task in tasks]
    _PLANS.clear()
    small_file = write_small_file(out)
    deliveries: dict[str, dict[str, Any]] = {}
    for family, root, files, size, stats in results:
        name = Path(root).name
        entry = deliveries.setdefault(name, {"files": 0, "bytes": 0, "families": {}})
        entry["files"] += files
        entry["bytes"] += size
        total = entry["families"].setdefault(family, FileStats())
        total.add(FileStats(**stats))
    manifest = {
        "spec": {**asdict(spec), "families": list(spec.families)},
        "generate_seconds": round(time.perf_counter() - started, 2),
        "waves": [f"wave-{w:04d}" for w in range(spec.waves)],
        "topups": {mode: f"topup-{mode}" for mode in TOPUP_MODES},
        "deliveries": {
            name: {
                "files": entry["files"],
                "bytes": entry["bytes"],
                "families": {f: asdict(s) for f, s in sorted(entry["families"].items())},
            }
            for name, entry in sorted(deliveries.items())
        },
        "families": facts,
        "small_file": small_file,
    }
    replace_text(out / SAMPLE_FILE, json.dumps(samples, indent=1) + "\n")
    replace_text(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


def load_expected_sample(out: Path | str) -> dict[str, list[dict[str, Any]]]:
    """Per family, the expected cdc_current rows of the sampled keys after the base waves
    (`expected_sample`): source_name, source_table, key, row (JSON values), why."""
    return json.loads((Path(out) / SAMPLE_FILE).read_text())


def load_manifest(out: Path | str) -> dict[str, Any]:
    return json.loads((Path(out) / "manifest.json").read_text())


def delivery_files(out: Path | str, name: str) -> Iterator[Path]:
    root = Path(out) / name
    for dirpath, _, filenames in os.walk(root):
        for filename in filenames:
            yield Path(dirpath, filename).relative_to(root)


def stage(out: Path | str, name: str, landing_root: Path | str, families: Iterable[str] = FAMILIES):
    """Hard-link one delivery's files into the landing root (copy where links cannot be made),
    as the next arrivals. Returns the number of files staged."""
    families = set(families)
    count = 0
    for relative in sorted(delivery_files(out, name)):
        if relative.parts[0] not in families:
            continue
        target = Path(landing_root) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        source = Path(out) / name / relative
        if target.exists():
            continue
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        count += 1
    return count


def unstage(out: Path | str, name: str, landing_root: Path | str) -> None:
    for relative in delivery_files(out, name):
        (Path(landing_root) / relative).unlink(missing_ok=True)


def discard(out: Path | str, name: str, landing_root: Path | str) -> None:
    """Delete a landed delivery's files from the landing root and the workload: at 50M events
    the workload (47 GB) and a build's shuffle and spill do not fit on one disk together. The
    workload is incomplete afterwards (`is_complete`), so the next bench generates it again."""
    unstage(out, name, landing_root)
    shutil.rmtree(Path(out) / name, ignore_errors=True)


def is_complete(out: Path | str, manifest: dict[str, Any]) -> bool:
    """Every delivery is there, and the small file (a manifest written before it had none)."""
    if not all((Path(out) / name).is_dir() for name in manifest["deliveries"]):
        return False
    if "small_file" not in manifest or not (Path(out) / SAMPLE_FILE).is_file():
        return False
    small = manifest["small_file"]
    return small is None or (Path(out) / f"topup-{SMALL_FILE}" / small["path"]).is_file()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_warehouse.bench.workload", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--scale", type=int, required=True, help="base change events")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--waves", type=int, default=8)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--chunk-events", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=0)
    args = parser.parse_args(argv)
    families = tuple(f for f in args.families.split(",") if f)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {', '.join(sorted(unknown))}")
    spec = Spec(args.scale, args.seed, args.waves, families, args.chunk_events, args.jobs)
    manifest = generate(spec, args.out)
    lines = sum(s["lines"] for d in manifest["deliveries"].values() for s in d["families"].values())
    print(
        f"wrote {args.out}: {args.scale} base events, {lines} lines in "
        f"{manifest['generate_seconds']}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
