"""What every family's generator shares: the spec, the plan (which change hits which key, in
which transaction and wave), the values every family derives from (key, position), the chunk a
file is written from and its counts, the side table that truncates, and how changes are cut
into files. Names with a leading underscore are the package's own, not its callers'."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

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

# Truncates: a small side table per family that can express one (Debezium op "t", pgoutput
# Truncate 'T'); every wave inserts SIDE_ROWS new rows and every TRUNCATE_EVERY-th wave
# (from wave 1) truncates the table first, so only the rows inserted since the last truncate
# are live.
SIDE_ROWS = 8  # (at most 8: pgoutput's side transactions fit below a wave's first lsn)
TRUNCATE_EVERY = 2

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
    # A key created early is read by the source's initial read instead: a backfill or snapshot
    # read (Datastream, Debezium), or a row of the snapshot files (pgoutput, Spanner).
    op[first_idx[first_idx < BACKFILL_SHARE * n]] = OP_SNAPSHOT
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
_WORDS = ["change", "data", "capture", "warehouse", "lakehouse", "partition", "version", "history"]


def _micros(pos: float) -> int:
    return T0_US + int(pos * STEP_US)


def _iso(us: int) -> str:
    """RFC 3339 UTC with microseconds."""
    secs, frac = divmod(us, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:06d}Z"


def _amount(k: int, p: float) -> str:
    cents = (k * 7919 + int(p) * 104_729) % 1_000_000
    return f"{cents // 100}.{cents % 100:02d}"


def _text(k: int, p: float, words: int) -> str:
    start = (k + int(p)) % len(_WORDS)
    return " ".join(_WORDS[(start + i) % len(_WORDS)] for i in range(words)) + f" #{k}"


def _dec(text: str) -> Any:
    return normalize(Decimal(text))


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
    transactions: int = 0  # Debezium: END records written (a redelivered one not counted)
    splits: int = 0
    merges: int = 0
    partition_ends: int = 0
    # Lines of snapshot files (pgoutput, Spanner): headers and rows, no part of the log.
    snapshot_lines: int = 0

    def add(self, other: FileStats) -> None:
        for name, value in asdict(other).items():
            setattr(self, name, getattr(self, name) + value)


def _dup_mask(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.random(n) < DUPLICATE_SHARE


# --------------------------------------------------------------------------------------------
# The side table that truncates empty (Debezium and pgoutput)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Which changes go into which file
# --------------------------------------------------------------------------------------------


def _txn_groups(plan: Plan, index: np.ndarray) -> list[np.ndarray]:
    txn = plan.txn[index]
    cuts = np.flatnonzero(np.diff(txn)) + 1
    return np.split(index, cuts)


def snapshot_split(plan: Plan, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the log's changes, the snapshot's rows) of `index`: a snapshot row is read before the
    log starts and lands in a snapshot file, never in the log (pgoutput, Spanner)."""
    is_snapshot = plan.op[index] == OP_SNAPSHOT
    return index[~is_snapshot], index[is_snapshot]


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
