"""Debezium: `kcat -J` records of two servers (with and without the schema envelope), snapshot
reads, TOAST placeholders (text, bytes as base64, arrays), primary key changes, tombstones,
records delivered twice at the same offset and changes re-sent at a new offset, and a side table
that truncates (op "t") empty every other wave. Both servers send transaction metadata
(`provide.transaction.metadata`): each change event but a snapshot read carries its
transaction's block, and the BEGIN and END records of each transaction land on the server's
transaction topic, in a file per wave; a change in a late file holds its transaction back until
that file lands."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

import numpy as np

from cdc_warehouse.bench.workload.plan import (
    _WORDS,
    LSN0,
    LSN_STEP,
    OP_DELETE,
    OP_INSERT,
    OP_PK_CHANGE,
    OP_SNAPSHOT,
    OP_UPDATE,
    PK_KEY_OFFSET,
    RESEND_SHARE,
    SIDE_ROWS,
    TOPUP_MODES,
    Chunk,
    FileStats,
    Plan,
    Spec,
    _amount,
    _dec,
    _dup_mask,
    _iso,
    _late_delay,
    _micros,
    _side_lsn,
    _text,
    side_keys,
    side_row,
    truncates_in,
)

PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_B64 = base64.b64encode(PLACEHOLDER.encode()).decode()

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
# The schemas the connector gives its transaction topic's records (pg_main's converter writes
# them in the envelope).
_DBZ_TRANSACTION_KEY_SCHEMA = (
    '{"type":"struct","fields":[{"type":"string","optional":false,"field":"id"}],'
    '"optional":false,"name":"io.debezium.connector.common.TransactionMetadataKey"}'
)
_DBZ_TRANSACTION_SCHEMA = (
    '{"type":"struct","fields":[{"type":"string","optional":false,"field":"status"},'
    '{"type":"string","optional":false,"field":"id"},'
    '{"type":"int64","optional":true,"field":"event_count"},'
    '{"type":"array","items":{"type":"struct","fields":['
    '{"type":"string","optional":false,"field":"data_collection"},'
    '{"type":"int64","optional":false,"field":"event_count"}],"optional":false},'
    '"optional":true,"field":"data_collections"},'
    '{"type":"int64","optional":false,"field":"ts_ms"}],"optional":false,'
    '"name":"io.debezium.connector.common.TransactionMetadataValue"}'
)
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
    server: int,
    k: int,
    p: float,
    op: str,
    us: int,
    lsn: int,
    tx: int,
    toast: bool,
    snapshot: bool,
    block: str = "null",
) -> tuple[str, str]:
    """(key text, value text) of one change; `block`, its transaction block as JSON text."""
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
            f'{{"before":{before},"after":{after},"source":{source},"transaction":{block},'
            f'"op":"{op}","ts_ms":{processed},"ts_us":{processed * 1000},'
            f'"ts_ns":{processed * 1_000_000}}}'
        )
        return (
            f'{{"schema":{_DBZ_KEY_SCHEMA},"payload":{key}}}',
            f'{{"schema":{_DBZ_VALUE_SCHEMA},"payload":{payload}}}',
        )
    return key, (
        f'{{"before":{before},"after":{after},"source":{source},"op":"{op}",'
        f'"ts_ms":{processed},"transaction":{block}}}'
    )


def _block(transaction_id: str, order: int) -> str:
    """A change event's transaction block: each server's transactions change one table, so an
    event's place in its transaction is its place among its table's events too."""
    return f'{{"id":"{transaction_id}","total_order":{order},"data_collection_order":{order}}}'


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
# Its wave's transaction id is this plus the wave: far above the main table's (the plan's
# transaction numbers plus 5000), so that no two transactions of pg_lite share an id at any
# scale.
DBZ_SIDE_TX0 = 1_000_000_000


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
    changes = _side_changes(wave)
    side = _side_transaction(wave, float(chunk.extra["wave_start"]))
    for step, (op, n) in enumerate(changes):
        source = (
            f'{{"version":"{version}","connector":"postgresql","name":"{name}",'
            f'"ts_ms":{us // 1000},"snapshot":"false","db":"{db}","sequence":null,'
            f'"schema":"{DBZ_SIDE_SCHEMA}","table":"{DBZ_SIDE_TABLE}","txId":{side.tx},'
            f'"lsn":{lsn + 8 * step},"xmin":null}}'
        )
        after = "null" if n is None else json.dumps(side_row(n), separators=(",", ":"))
        value = (
            f'{{"before":null,"after":{after},"source":{source},"op":"{op}",'
            f'"ts_ms":{us // 1000 + 350},"transaction":{_block(side.id, step + 1)}}}'
        )
        key = None if n is None else f'{{"id":{n}}}'
        lines.append(_kcat(topic, 0, offset + step, us // 1000 + 350, key, value))
        stats.events += 1
        stats.truncates += int(op == "t")
    stats.lines = len(lines)
    return lines, stats


def _side_changes(wave: int) -> list[tuple[str, int | None]]:
    """A base wave's side table changes, one transaction: a truncate where the wave has one,
    then the wave's inserts."""
    changes: list[tuple[str, int | None]] = [("t", None)] if truncates_in(wave) else []
    return changes + [("c", n) for n in side_keys(wave)]


# Records of a debezium change: what a change expands to in its topic partitions.
REC_CHANGE, REC_TOMBSTONE, REC_PK_DELETE, REC_PK_CREATE, REC_RESEND = range(5)


@dataclass(frozen=True)
class _Transaction:
    """One transaction of a server, as its BEGIN and END records give it."""

    tx: int
    commit_lsn: int
    first_lsn: int
    ts_ms: int
    collection: str
    events: int

    @property
    def id(self) -> str:
        """The PostgreSQL connector's `<txid>:<lsn>`."""
        return f"{self.tx}:{self.commit_lsn}"


def _side_transaction(wave: int, wave_start: float) -> _Transaction:
    lsn = _side_lsn(wave_start)
    records = len(_side_changes(wave))
    return _Transaction(
        DBZ_SIDE_TX0 + wave,
        lsn + 8 * (records - 1),
        lsn,
        (_micros(wave_start) - 2_000) // 1000,
        f"{DBZ_SIDE_SCHEMA}.{DBZ_SIDE_TABLE}",
        records,
    )


def _counted(plan: Plan, index: np.ndarray) -> np.ndarray:
    """The events each change counts in its transaction: a primary key change's delete and
    create, one for any other change, none for a snapshot read (outside any transaction)."""
    op = plan.op[index]
    return np.where(op == OP_PK_CHANGE, 2, np.where(op == OP_SNAPSHOT, 0, 1))


def _first_orders(plan: Plan, index: np.ndarray) -> np.ndarray:
    """Per change of `index` (one server's changes of a wave, in source order), the place of its
    first event among its transaction's events, from 1."""
    counts = _counted(plan, index)
    order = np.argsort(plan.txn[index], kind="stable")
    txn, sorted_counts = plan.txn[index][order], counts[order]
    starts = np.r_[True, txn[1:] != txn[:-1]] if len(txn) else np.zeros(0, bool)
    before = np.cumsum(sorted_counts) - sorted_counts
    first = before - before[starts][np.cumsum(starts) - 1] + 1
    places = np.empty_like(first)
    places[order] = first
    return places


def _transaction_groups(plan: Plan, index: np.ndarray) -> tuple[np.ndarray, ...]:
    """(txn, first change, last change, events) of each transaction of one server's changes of
    a wave (`index`, in source order) that counts an event: one of snapshot reads only is
    none."""
    if not len(index):
        return index, index, index, index
    order = np.argsort(plan.txn[index], kind="stable")
    txn, changes, counts = plan.txn[index][order], index[order], _counted(plan, index)[order]
    starts = np.flatnonzero(np.r_[True, txn[1:] != txn[:-1]])
    ends = np.r_[starts[1:], len(txn)] - 1
    events = np.add.reduceat(counts, starts)
    kept = events > 0
    return txn[starts][kept], changes[starts][kept], changes[ends][kept], events[kept]


def _transactions_of(plan: Plan, index: np.ndarray, server: int) -> list[_Transaction]:
    """The transactions of one server's changes of a wave (`index`), in commit order."""
    _, _, _, _, schema, table, _ = DBZ_SERVERS[server]
    txn, first, last, events = _transaction_groups(plan, index)
    found = [
        _Transaction(
            int(t) + 5000,
            LSN0 + int(plan.commit_pos[e] * LSN_STEP),
            LSN0 + int(plan.pos[f] * LSN_STEP),
            _micros(plan.commit_pos[e]) // 1000,
            f"{schema}.{table}",
            int(n),
        )
        for t, f, e, n in zip(txn, first, last, events, strict=True)
    ]
    return sorted(found, key=lambda t: (t.commit_lsn, t.tx))


def _transaction_record(status: str, transaction: _Transaction) -> tuple[str, str]:
    """(key text, value text) of a BEGIN or END record; END counts the transaction's events."""
    if status == "BEGIN":
        tx_id, counts = f"{transaction.tx}:{transaction.first_lsn}", "null"
        collections = "null"
    else:
        tx_id, counts = transaction.id, str(transaction.events)
        collections = (
            f'[{{"data_collection":"{transaction.collection}","event_count":{transaction.events}}}]'
        )
    return f'{{"id":"{tx_id}"}}', (
        f'{{"status":"{status}","id":"{tx_id}","event_count":{counts},'
        f'"data_collections":{collections},"ts_ms":{transaction.ts_ms}}}'
    )


def _transaction_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    """A wave's BEGIN and END records of one server's transactions, in commit order (the side
    table's first: its changes lie below the wave's first lsn), on its `<server>.transaction`
    topic (one partition), as the server's converter writes them (with or without the schema
    envelope); some delivered twice."""
    stats = FileStats()
    server = chunk.table
    name, enveloped, *_ = DBZ_SERVERS[server]
    transactions = [*chunk.extra["side_transactions"], *_transactions_of(plan, chunk.index, server)]
    rng = np.random.default_rng([seed, 17, chunk.wave, int(chunk.extra["offset"])])
    dups = _dup_mask(2 * len(transactions), rng)
    lines = []
    for n, (transaction, status) in enumerate(
        (transaction, status) for transaction in transactions for status in ("BEGIN", "END")
    ):
        key, value = _transaction_record(status, transaction)
        if enveloped:
            key = f'{{"schema":{_DBZ_TRANSACTION_KEY_SCHEMA},"payload":{key}}}'
            value = f'{{"schema":{_DBZ_TRANSACTION_SCHEMA},"payload":{value}}}'
        offset = int(chunk.extra["offset"]) + n
        lines.append(_kcat(f"{name}.transaction", 0, offset, transaction.ts_ms + 350, key, value))
        if dups[n]:
            lines.append(lines[-1])
            stats.duplicates += 1
        stats.transactions += int(status == "END")
    stats.lines = len(lines)
    return lines, stats


def sub_source(key: np.ndarray) -> np.ndarray:
    """DBZ_SERVERS index of each key: pg_main, pg_lite."""
    return (key % 10 >= DBZ_MAIN_SHARE * 10).astype(np.int64)


def write_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    if chunk.extra.get("side"):
        return _debezium_side_file(chunk, plan, seed)
    if chunk.extra.get("transactions"):
        return _transaction_file(chunk, plan, seed)
    stats = FileStats()
    server = chunk.table
    name, _, _, _, schema, table, _ = DBZ_SERVERS[server]
    topic = f"{name}.{schema}.{table}"
    partition = chunk.extra["partition"]
    kinds, offsets, orders = chunk.extra["kinds"], chunk.extra["offsets"], chunk.extra["orders"]
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
        block = "null"
        if op != OP_SNAPSHOT:
            block = _block(f"{tx}:{LSN0 + int(plan.commit_pos[i] * LSN_STEP)}", int(orders[j]))
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
                server, key_id, p, letter, us, lsn, tx, toast, op == OP_SNAPSHOT, block
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


def _record_counts(plan: Plan, index: np.ndarray) -> np.ndarray:
    """The records each change makes: a key change's delete, tombstone and create; a delete and
    its tombstone; one for any other change."""
    op = plan.op[index]
    return np.where(op == OP_PK_CHANGE, 3, np.where(op == OP_DELETE, 2, 1))


def _dbz_records(plan: Plan, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(event index, record kind) of the records the changes make, in production order."""
    op = plan.op[index]
    counts = _record_counts(plan, index)
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


def chunks(
    spec: Spec, plan: Plan, mode: str | None, next_offset: dict[tuple[int, int], int]
) -> list[Chunk]:
    rng = np.random.default_rng([spec.seed, 23, TOPUP_MODES.index(mode) + 1 if mode else 0])
    sub = sub_source(plan.key)
    chunks: list[Chunk] = []
    for wave in np.unique(plan.wave):
        for server in range(len(DBZ_SERVERS)):
            name, _, _, _, schema, table, partitions = DBZ_SERVERS[server]
            topic = f"{name}.{schema}.{table}"
            index = np.flatnonzero((plan.wave == wave) & (sub == server))
            events, kinds = _dbz_records(plan, index)
            # Each record's place in its transaction: a key change's create comes after its
            # delete; a tombstone and a snapshot read carry no block.
            orders = np.repeat(_first_orders(plan, index), _record_counts(plan, index))
            orders += kinds == REC_PK_CREATE
            resend = np.flatnonzero((kinds == REC_CHANGE) & (rng.random(len(kinds)) < RESEND_SHARE))
            events = np.r_[events, events[resend]]
            kinds = np.r_[kinds, np.full(len(resend), REC_RESEND, np.int8)]
            orders = np.r_[orders, orders[resend]]
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
                            "orders": orders[chosen[piece]],
                            "late": delay > 0,
                        },
                    )
                    chunk.path = (
                        f"debezium/{name}/{topic}/partition={part_no}/"
                        f"{topic}+{part_no}+{int(offsets[piece[0]]):010d}.jsonl"
                    )
                    chunks.append(chunk)
            side = []
            if mode is None and server == DBZ_SIDE_SERVER:
                side = [_side_transaction(int(wave), float(plan.pos[plan.wave == wave].min()))]
            records = 2 * (len(side) + len(_transaction_groups(plan, index)[0]))
            if records:
                chunks.append(
                    _transaction_chunk(plan, int(wave), server, index, side, records, next_offset)
                )
        if mode is None:
            chunks.append(_dbz_side_chunk(plan, int(wave), next_offset))
    return chunks


def _transaction_chunk(
    plan: Plan,
    wave: int,
    server: int,
    index: np.ndarray,
    side: list[_Transaction],
    records: int,
    next_offset: dict[tuple[int, int], int],
) -> Chunk:
    """The file of a wave's BEGIN and END records of one server (`index`: its changes of the
    wave; `records`: how many), landed with the wave, never late: a late table file holds its
    transactions back."""
    name = DBZ_SERVERS[server][0]
    topic = f"{name}.transaction"
    slot = (server, -1)
    offset = next_offset.get(slot, 0)
    next_offset[slot] = offset + records
    chunk = Chunk(
        "debezium",
        name,
        server,
        wave,
        wave,
        index,
        {"transactions": True, "side_transactions": side, "offset": offset},
    )
    chunk.path = f"debezium/{name}/{topic}/partition=0/{topic}+0+{offset:010d}.jsonl"
    return chunk


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


def carries_all(plan: Plan, i: int) -> bool:
    """Whether change i carries every column: pg_lite's always (no TOAST columns); pg_main's
    unless TOAST placeholders stand for some, or it is a primary key change's new key."""
    op = int(plan.op[i])
    if op in (OP_INSERT, OP_SNAPSHOT) or int(sub_source(plan.key[i : i + 1])[0]) != 0:
        return True
    return op != OP_PK_CHANGE and not bool(plan.toast[i])


def expected_row(plan: Plan, last: int, full: int) -> dict[str, Any]:
    k, p, op = int(plan.key[last]), float(plan.pos[last]), int(plan.op[last])
    pf = float(plan.pos[full])
    us = _micros(plan.commit_pos[last])
    key_id = k + PK_KEY_OFFSET if op == OP_PK_CHANGE else k
    sub = int(sub_source(plan.key[last : last + 1])[0])
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
