"""pgoutput end to end against a REAL PostgreSQL 15: a database with rows (TOASTed values too)
before its two slots (protocol 2, and protocol 3 with two_phase) exist, each created with an
exported snapshot whose tables are read with COPY into snapshot files, landed with the first
wave (cdc_warehouse/pg_snapshot.py; one transaction commits exactly at the first slot's
consistent point); then the workload (streamed large transactions, one left open across slot
reads with a ROLLBACK TO SAVEPOINT inside, aborted and two-phase transactions, TOAST updates of
the snapshot's rows and others, primary key changes, TRUNCATE, messages) read from both slots in
waves; after each wave `cdcw run`, and the marts must equal the database's own state and the
history its audit triggers recorded from each snapshot on. The operator view counts each slot's
transactions streamed or prepared and not yet decided."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Pipeline, utc_text
from tests.e2e.marts import assert_same, assert_same_marts, run_waves, snapshot

from . import workload
from .pgoutput_capture import decode_lines, parse_landing_bytes

DBT_VARS = ("--vars", "{cdc_keys_per_partition: 500}")
FRESHNESS = "cdc_source_freshness"


@pytest.fixture(scope="module")
def captured_waves(postgres_workload):
    """The package's workload (conftest.py), shared with test_harness_smoke.py."""
    return postgres_workload.waves


@pytest.fixture(scope="module")
def waves_run(tmp_path_factory, captured_waves, java_available):
    pipeline = Pipeline(tmp_path_factory.mktemp("pgoutput_waves"), workload.TABLES_YAML)
    waves = [wave["files"] for wave in captured_waves]
    return pipeline, run_waves(pipeline, waves, *DBT_VARS, views=(FRESHNESS,))


def current_rows(rows):
    return sorted(
        (row["source_name"], row["source_table"], row["key_json"], row["row_json"]) for row in rows
    )


def history_rows(rows):
    return sorted(
        (
            row["source_name"],
            row["source_table"],
            row["key_json"],
            row["row_json"],
            row["op"],
            row["valid_from"],
            row["valid_to"] or "",
            row["is_current"],
        )
        for row in rows
    )


def expected_history(wave):
    return [
        row | {"valid_from": utc_text(row["valid_from"]), "valid_to": utc_text(row["valid_to"])}
        for row in wave["expected_history"]
    ]


@pytest.mark.parametrize("wave_index", range(5))
def test_current_state_equals_the_database(waves_run, captured_waves, wave_index):
    _, snapshots = waves_run
    actual = snapshots[wave_index]["cdc_current"]
    assert all(row["unavailable_columns"] == [] for row in actual)
    assert_same(
        current_rows(actual),
        current_rows(captured_waves[wave_index]["expected_current"]),
        f"cdc_current after wave {wave_index + 1}",
    )


@pytest.mark.parametrize("wave_index", range(5))
def test_history_equals_the_audit_trail(waves_run, captured_waves, wave_index):
    _, snapshots = waves_run
    assert_same(
        history_rows(snapshots[wave_index]["cdc_history"]),
        history_rows(expected_history(captured_waves[wave_index])),
        f"cdc_history after wave {wave_index + 1}",
    )


def test_uncommitted_and_rolled_back_rows_never_appear(waves_run):
    _, snapshots = waves_run
    for wave_snapshot in snapshots:
        for row in wave_snapshot["cdc_history"]:
            if row["source_table"] == "public.bulk":
                batch = json.loads(row["row_json"]).get("batch")
                assert batch not in workload.NEVER_COMMITTED_BATCHES, row


def undecided_transactions(waves: list[dict[str, bytes]]) -> dict[str, int]:
    """Per slot, the transactions whose newest start (Begin, Begin Prepare, a first Stream Start)
    the slot sent after their newest decision (a commit, Rollback Prepared, the Stream Abort of
    the whole transaction), read from the slots' landed lines."""
    started: dict[tuple[str, int], int] = {}
    decided: dict[tuple[str, int], int] = {}
    position = 0
    for wave in waves:
        for path, content in sorted(wave.items()):
            if "snapshot" in Path(path).parts:
                continue  # no part of the slot's log
            slot = Path(path).parts[1]
            lines = parse_landing_bytes(content)
            for line, message in zip(lines, decode_lines(lines), strict=True):
                position += 1
                kind, transaction = message["type"], (slot, line["xid"])
                if kind in "Bb" or (kind == "S" and message["first_segment"]):
                    started[transaction] = position
                elif kind in "CcKr" or (kind == "A" and message["subxid"] == message["xid"]):
                    decided[transaction] = position
    undecided = Counter(
        slot for (slot, xid), at in started.items() if at > decided.get((slot, xid), 0)
    )
    return {slot: undecided[slot] for slot, _ in started}


@pytest.mark.parametrize("wave_index", range(5))
def test_the_freshness_view_counts_each_slots_undecided_transactions(
    waves_run, captured_waves, wave_index
):
    _, snapshots = waves_run
    waves = [wave["files"] for wave in captured_waves[: wave_index + 1]]
    pending = {
        row["source_name"]: row["pending_transactions"] for row in snapshots[wave_index][FRESHNESS]
    }
    assert pending == undecided_transactions(waves)
    # The database's own account: the open transaction (streamed) waits after the third wave;
    # after the fifth, everything is committed or rolled back.
    if wave_index == 2:
        assert all(pending.values()), pending
    if wave_index == 4:
        assert set(pending.values()) == {0}, pending


def test_each_snapshot_key_starts_with_its_snapshot_version(waves_run, captured_waves):
    """A row the slot's snapshot holds is its key's first version, op snapshot, since the
    epoch; the transaction committed at cdc_v2's consistent point (not in its snapshot) and
    the later ones follow it, their unchanged TOASTed bodies from it."""
    _, snapshots = waves_run
    history = snapshots[-1]["cdc_history"]
    by_key: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for row in sorted(history, key=lambda row: row["sort_key"]):
        by_key.setdefault((row["source_name"], row["source_table"], row["key_json"]), []).append(
            row
        )
    snapshot_keys = {
        key for key, rows in by_key.items() if any(r["op"] == "snapshot" for r in rows)
    }
    assert {key[1] for key in snapshot_keys} >= {"public.docs", "public.typed", "public.pairs"}
    for key in snapshot_keys:
        assert by_key[key][0]["op"] == "snapshot", key
        assert by_key[key][0]["valid_from"] == "1970-01-01 00:00:00.000000", key
    docs_7 = [json.loads(row["row_json"]) for row in by_key[("cdc_v2", "public.docs", '{"id":7}')]]
    assert [row["title"] for row in docs_7] == [
        "seventh, before the slot",
        "seventh, at the consistent point",
    ]
    assert docs_7[0]["body"] == docs_7[1]["body"] and len(docs_7[1]["body"]) == 6400


def test_a_slot_counts_no_snapshot_row_as_a_commit_applied(waves_run, captured_waves):
    """The freshness view's newest commit applied is a commit of the slot's log, not a snapshot
    row's epoch."""
    _, snapshots = waves_run
    commits = {slot: max(captured_waves[0]["commit_times"].values()) for slot in workload.SLOTS}
    for row in snapshots[0][FRESHNESS]:
        assert row["newest_commit_applied"] == utc_text(commits[row["source_name"]]), row


def test_nothing_is_quarantined(waves_run):
    _, snapshots = waves_run
    assert snapshots[-1]["cdc_quarantine"] == []


def test_incremental_runs_equal_a_full_refresh(waves_run):
    pipeline, snapshots = waves_run
    assert pipeline.cdcw("dbt", "build", "--full-refresh", *DBT_VARS) == 0
    refreshed = snapshot(pipeline)
    assert_same_marts(refreshed, snapshots[-1])


def catalog_type(column: dict[str, Any]) -> str:
    """The name cdc_source_columns should give a column's type, from PostgreSQL's catalog: the
    type's own name (an array's with []), with the modifier where it constrains the type; an
    enum known by OID only (pgoutput names it in a Type message, not in the Relation)."""
    name, modifier = column["type_name"], column["type_modifier"]
    if column["type_kind"] == "e":
        return f"oid {column['type_oid']}"
    if name.startswith("_"):
        return f"{name[1:]}[]"
    if name == "numeric" and modifier >= 0:
        return column["formatted"]  # numeric(12,2)
    if name == "varchar" and modifier >= 0:
        return f"varchar({modifier - 4})"
    return name


def test_source_columns_are_the_catalogs_columns_and_types(waves_run, captured_waves):
    """Every published table's columns in both slots, typed from the Relation messages as
    PostgreSQL's catalog types them (type modifiers included)."""
    pipeline, _ = waves_run
    catalog = {(c["table"], c["column"]): c for c in captured_waves[0]["column_catalog"]}
    expected = {key: catalog_type(column) for key, column in catalog.items()}
    rows = pipeline.rows("cdc_source_columns")
    assert {row["source_system"] for row in rows} == {"pgoutput"}
    for slot in workload.SLOTS:
        found = {
            (row["source_table"], row["column_name"]): row["source_type"]
            for row in rows
            if row["source_name"] == slot
        }
        assert found == expected, slot
    spark_types = {(row["source_table"], row["column_name"]): row["spark_type"] for row in rows}
    assert spark_types[("public.full_rows", "amount")] == "decimal(12,2)"
    assert spark_types[("public.typed", "c_numeric")] == "string"
    assert spark_types[("public.typed", "c_int2")] == "smallint"
    assert spark_types[("public.typed", "c_ts")] == "timestamp_ntz"
    assert spark_types[("public.typed", "c_tstz")] == "timestamp"
    assert spark_types[("public.typed", "c_mood")] == "string"
