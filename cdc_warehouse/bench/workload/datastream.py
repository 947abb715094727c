"""Datastream: MySQL (binlog positions) and PostgreSQL (lsn, tx_id) JSON events, backfill reads,
redelivered events (same uuid) and a small file landed twice under another name; about half of
the MySQL files are Avro object container files (the same events)."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any, TypeVar

import fastavro
import numpy as np

from cdc_warehouse.bench import pgoutput_encoder as pg
from cdc_warehouse.bench.datastream_avro import mysql_event_schema
from cdc_warehouse.bench.workload.plan import (
    LSN0,
    LSN_STEP,
    OP_DELETE,
    OP_INSERT,
    OP_SNAPSHOT,
    STATUSES,
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
    _split,
    _text,
)

# Datastream Avro: MySQL files with an odd (wave + file number), except the small file landed
# twice, are Avro object container files (about half of the MySQL source's events).
AVRO_SOURCE = 0

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


def write_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str] | bytes, FileStats]:
    """The chunk's file: JSON lines, or an Avro object container file (`avro` in its extra)."""
    if chunk.extra.get("avro"):
        return _datastream_avro_file(chunk, plan, seed)
    return _datastream_events(
        chunk, plan, seed, lambda i: _datastream_line(plan, i, seed, chunk.table)
    )


def sub_source(key: np.ndarray) -> np.ndarray:
    """DS_SOURCES index of each key: 60% MySQL, 40% PostgreSQL."""
    return (key % 5 >= 3).astype(np.int64)


def chunks(spec: Spec, plan: Plan, mode: str | None, state: dict[Any, int]) -> list[Chunk]:
    rng = np.random.default_rng([spec.seed, 21, TOPUP_MODES.index(mode) + 1 if mode else 0])
    sub = sub_source(plan.key)
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


def carries_all(plan: Plan, i: int) -> bool:
    """Every Datastream event carries the whole row."""
    return True


def expected_row(plan: Plan, last: int, full: int) -> dict[str, Any]:
    k, p = int(plan.key[last]), float(plan.pos[last])
    us = _micros(plan.commit_pos[last])
    sub = int(sub_source(plan.key[last : last + 1])[0])
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
