"""Debezium end to end: kcat -J records of two servers (with and without the schema envelope)
landed in three waves, the real `cdcw run` after each, and all three marts compared with the
independent oracle: TOAST placeholders filled across runs and across primary key changes,
truncates, snapshot overlap, duplicates, bad lines."""

from __future__ import annotations

import pytest

from cdc_warehouse.spark import SQL_CONF
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline

from .debezium_oracle import expected_marts
from .debezium_scenario import build_waves
from .marts import (
    as_mart_text,
    assert_marts_match,
    assert_same_marts,
    current_facts,
    history_facts,
    run_waves,
    snapshot,
)

DBT_VARS = ("--vars", "{cdc_keys_per_partition: 3}")
WAVES = build_waves()


@pytest.fixture(scope="module")
def waves_run(tmp_path_factory, java_available):
    pipeline = Pipeline(tmp_path_factory.mktemp("debezium_waves"))
    return pipeline, run_waves(pipeline, WAVES, *DBT_VARS)


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_marts_match_oracle_after_each_wave(waves_run, wave_count):
    pipeline, snapshots = waves_run
    assert_marts_match(
        snapshots[wave_count - 1],
        as_mart_text(expected_marts(WAVES[:wave_count])),
        pipeline.landing_root,
        f"after wave {wave_count}",
    )


def test_no_placeholder_reaches_the_marts(waves_run):
    _, snapshots = waves_run
    for mart in ("cdc_current", "cdc_history"):
        for row in snapshots[-1][mart]:
            assert "__debezium_unavailable_value" not in row["row_json"]
            assert "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ" not in row["row_json"]


def test_some_values_stay_unknown_rather_than_null(waves_run):
    """Guards the scenario: a placeholder with no earlier value must be exercised."""
    _, snapshots = waves_run
    assert any(row["unavailable_columns"] for row in snapshots[-1]["cdc_history"])


def compiled_hinted_sql(pipeline: Pipeline) -> str:
    """The SQL the last run compiled for the models that join by what a run changed."""
    compiled = pipeline.warehouse_dir / "_dbt" / "target" / "compiled" / "cdc_warehouse" / "models"
    return "".join(
        (compiled / f"{model}.sql").read_text()
        for model in (
            "marts/cdc_current",
            "marts/cdc_history",
            "intermediate/int_cdc__key_successions",
        )
    )


# The hinted joins whose build side is a run's recomputed keys or new changes
# (`broadcast_hint`); cdc_history's per-table list of unknown columns is bounded by the schema
# and always broadcast.
KEY_SET_HINTS = tuple(
    f"broadcast({relation})"
    for relation in ("changed_keys", "key_successions", "recomputed_versions", "new_half_positions")
)


def test_shuffle_joins_above_the_broadcast_limit_give_the_same_marts(waves_run, tmp_path_factory):
    """With cdc_broadcast_max_rows at 0 the incremental run joins the recomputed keys without a
    broadcast hint (what a large backfill does) and must give the marts the hinted runs gave,
    whose builds ran the dbt tests. The first two waves arrive together: one incremental run,
    the last wave's, is what this is about."""
    _, snapshots = waves_run
    unhinted = Pipeline(tmp_path_factory.mktemp("debezium_shuffle_joins"))
    unhinted_vars = ("--vars", "{cdc_keys_per_partition: 3, cdc_broadcast_max_rows: 0}")
    arrivals = [{**WAVES[0], **WAVES[1]}, *WAVES[2:]]
    unhinted_snapshots = run_waves(unhinted, arrivals, *unhinted_vars, *BUILD_WITHOUT_TESTS)
    compiled = compiled_hinted_sql(unhinted)
    assert not [hint for hint in KEY_SET_HINTS if hint in compiled]
    # The same rows, but for the landing runs that wrote them (the quarantine names its own
    # landing files).
    for mart, facts in (("cdc_current", current_facts), ("cdc_history", history_facts)):
        assert facts(unhinted_snapshots[-1][mart]) == facts(snapshots[-1][mart]), mart
    # The same warehouse under the default limit: the hint is back.
    hinted_models = ("cdc_current", "cdc_history", "int_cdc__key_successions")
    assert unhinted.cdcw("dbt", "compile", "--select", *hinted_models, *DBT_VARS) == 0
    compiled = compiled_hinted_sql(unhinted)
    assert [hint for hint in KEY_SET_HINTS if hint in compiled]
    assert "broadcast(new_half_positions)" in compiled


def files_per_partition(pipeline: Pipeline, table: str) -> dict[int, int]:
    files = "count(distinct _metadata.file_path) as files"
    rows = pipeline.spark().sql(f"select key_cohort, {files} from {table} group by 1").collect()
    return {row.key_cohort: row.files for row in rows}


def test_a_full_refresh_equals_the_incremental_runs_and_writes_each_key_cohort_once(
    waves_run, monkeypatch
):
    """At scale the last shuffle before a write keeps its 64 tasks, each holding keys of every
    cohort; each cohort must still come out as one file, not one per task (22,528 small files
    at 50M events). Coalescing off makes these few rows spread over tasks the same way."""
    pipeline, snapshots = waves_run
    monkeypatch.setitem(SQL_CONF, "spark.sql.adaptive.coalescePartitions.enabled", "false")
    assert pipeline.cdcw("dbt", "build", "--full-refresh", *DBT_VARS) == 0
    refreshed = snapshot(pipeline)
    assert_same_marts(refreshed, snapshots[-1])
    for table in ("cdc_internal.int_cdc__change_log", "cdc_history", "cdc_current"):
        counts = files_per_partition(pipeline, table)
        assert len(counts) > 1, table
        assert set(counts.values()) == {1}, (table, counts)


def test_key_successions_of_an_earlier_version_gain_their_chains(java_available, tmp_path):
    """A warehouse built before chains were followed has int_cdc__key_successions without
    chain_depth: the next run reads it all as single changes and adds the column."""
    pipeline = Pipeline(tmp_path)
    spark = pipeline.spark()
    spark.sql("create database if not exists cdc_internal")
    spark.sql(
        """create table cdc_internal.int_cdc__key_successions (
             source_system string, source_name string, source_table string, key_json string,
             key_cohort int, predecessor_key_json string, predecessor_key_cohort int,
             sort_pos string, landing_run bigint)
           using delta"""
    )
    run_waves(pipeline, WAVES[:1], *DBT_VARS, *BUILD_WITHOUT_TESTS)
    assert "chain_depth" in pipeline.spark().table("cdc_internal.int_cdc__key_successions").columns
