"""pgoutput end to end against a REAL PostgreSQL 15: the workload (streamed large transactions,
one left open across slot reads with a ROLLBACK TO SAVEPOINT inside, aborted and two-phase
transactions, TOAST updates, primary key changes, TRUNCATE, messages) is read from two slots
(protocol 2, and protocol 3 with two_phase) in waves; after each wave `cdcw run`, and the marts
must equal the database's own state and the history its audit triggers recorded."""

from __future__ import annotations

import json

import pytest

from tests.conftest import Pipeline, utc_text
from tests.e2e.marts import assert_same, assert_same_marts, run_waves, snapshot

from . import workload
from .postgres import LocalPostgres

DBT_VARS = ("--vars", "{cdc_keys_per_partition: 500}")


@pytest.fixture(scope="module")
def captured_waves(tmp_path_factory):
    with LocalPostgres(tmp_path_factory.mktemp("postgres")) as pg:
        return workload.run_workload(pg)


@pytest.fixture(scope="module")
def waves_run(tmp_path_factory, captured_waves, java_available):
    pipeline = Pipeline(tmp_path_factory.mktemp("pgoutput_waves"), workload.TABLES_YAML)
    return pipeline, run_waves(pipeline, [wave["files"] for wave in captured_waves], *DBT_VARS)


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


def test_nothing_is_quarantined(waves_run):
    _, snapshots = waves_run
    assert snapshots[-1]["cdc_quarantine"] == []


def test_incremental_runs_equal_a_full_refresh(waves_run):
    pipeline, snapshots = waves_run
    assert pipeline.cdcw("dbt", "build", "--full-refresh", *DBT_VARS) == 0
    refreshed = snapshot(pipeline)
    assert_same_marts(refreshed, snapshots[-1])
