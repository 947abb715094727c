"""Spanner: change stream rows in both dialects, all four value capture types, partitions with
heartbeats that split and merge at each wave boundary, the same record read twice, and the keys
that exist before the stream in its snapshot files (read just before its start)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from cdc_warehouse.bench.workload.plan import (
    OP_DELETE,
    OP_INSERT,
    OP_SNAPSHOT,
    STATUSES,
    STEP_US,
    T0_US,
    Chunk,
    FileStats,
    Plan,
    Spec,
    _amount,
    _dec,
    _deliver_name,
    _dup_mask,
    _iso,
    _micros,
    _split,
    _txn_groups,
    snapshot_split,
)

# Spanner: at each wave boundary a stream's partitions end with child partitions records. A
# key's partition is chosen by key % SP_RESIDUES; the generations alternate between the two
# layouts below, so that every boundary has a split (a parent, two children) and a merge (a
# child of two parents).
SP_RESIDUES = 4
SP_GENERATIONS = (((0,), (1,), (2, 3)), ((0, 1), (2,), (3,)))

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


# Each stream's snapshot is read just before its first change: the watermark of the first
# wave has passed it.
SP_SNAPSHOT_US = T0_US - STEP_US


def _sp_snapshot_header(stream_no: int) -> str:
    """A stream's snapshot header, its column types spelled as its dialect's records are."""
    _, _, dialect = SP_STREAMS[stream_no]
    columns = json.loads(_SP_COLUMNS)
    if dialect == "googlesql":
        for column in columns:
            column["type"] = json.dumps(column["type"], separators=(",", ":"))
    header = {"read_timestamp": _iso(SP_SNAPSHOT_US), "table": "Orders", "column_types": columns}
    return json.dumps({"snapshot": header}, separators=(",", ":"))


def _sp_snapshot_file(chunk: Chunk, plan: Plan, stats: FileStats) -> list[str]:
    """A snapshot file: its header, then each key's whole row as the read found it."""
    lines = [_sp_snapshot_header(chunk.table)]
    for i in chunk.index:
        k, p = int(plan.key[i]), float(plan.pos[i])
        values = _sp_values(k, p, _micros(plan.commit_pos[i]), False)
        lines.append(f'{{"values":{{"OrderId":"{k}",{values[1:]}}}')
    stats.events += len(chunk.index)
    stats.snapshot_lines += len(lines)
    return lines


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


def write_file(chunk: Chunk, plan: Plan, seed: int) -> tuple[list[str], FileStats]:
    stats = FileStats()
    if chunk.extra.get("snapshot"):
        snapshot = _sp_snapshot_file(chunk, plan, stats)
        stats.lines = len(snapshot)
        return snapshot, stats
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


def sub_source(key: np.ndarray) -> np.ndarray:
    """SP_STREAMS index of each key."""
    return key % len(SP_STREAMS)


def chunks(spec: Spec, plan: Plan, mode: str | None, gens: dict[int, int]) -> list[Chunk]:
    """Each stream's base waves with changes are its partition generations 0, 1, ...: a
    wave's first file ends the previous generation (child partitions records); the top-ups
    read the last generation (`gens`, filled by the base's call)."""
    sub = sub_source(plan.key)
    chunks = []
    for wave in np.unique(plan.wave):
        deliver = _deliver_name(int(wave), spec.waves, mode)
        in_wave = plan.wave == wave
        start_us = _micros(float(plan.pos[in_wave].min())) - STEP_US // 2
        for stream_no, (stream, _, _) in enumerate(SP_STREAMS):
            index, snapshot_rows = snapshot_split(
                plan, np.flatnonzero(in_wave & (sub == stream_no))
            )
            for number, part in enumerate(_split(plan, snapshot_rows, spec.chunk_events, False)):
                chunk = Chunk(
                    "spanner", stream, stream_no, int(wave), int(wave), part, {"snapshot": True}
                )
                chunk.path = f"spanner/{stream}/snapshot/{deliver}/{number:05d}.jsonl"
                chunks.append(chunk)
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


def carries_all(plan: Plan, i: int) -> bool:
    """Whether change i carries every column: not an update of a stream that captures the
    changed columns only (OLD_AND_NEW_VALUES, NEW_VALUES)."""
    if int(plan.op[i]) in (OP_INSERT, OP_SNAPSHOT):
        return True
    k = int(plan.key[i])
    return SP_STREAMS[k % len(SP_STREAMS)][1] not in ("OLD_AND_NEW_VALUES", "NEW_VALUES")


def expected_row(plan: Plan, last: int, full: int) -> dict[str, Any]:
    k, p = int(plan.key[last]), float(plan.pos[last])
    pf = float(plan.pos[full])
    us = _micros(plan.commit_pos[last])
    stream = SP_STREAMS[int(sub_source(plan.key[last : last + 1])[0])][0]
    row = {
        "OrderId": k,
        "Status": STATUSES[(k + int(p)) % 6],
        "Amount": _dec(_amount(k, p)),
        "Qty": (k + int(pf)) % 50,
        "UpdatedAt": _iso(us),
    }
    return {"source_name": stream, "source_table": "Orders", "key": {"OrderId": k}, "row": row}
