"""The Spanner, Datastream and Debezium scenarios together: a full refresh of the warehouse their
modules check wave by wave (tests/e2e/families.py) gives the marts of the incremental runs, and
every wave landed before a single `cdcw run` gives each family the marts its oracle derives from
all the waves. One build for the three families each time: the fixed cost of a build is most of
a test's time. Tables an earlier version created gain the columns added since."""

from __future__ import annotations

from cdc_warehouse.spark import SQL_CONF
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline

from . import datastream_oracle, datastream_scenario, debezium_oracle, spanner_oracle
from .families import DBT_VARS, FAMILY_WAVES, of_system, read_status
from .marts import as_mart_text, assert_marts_match, assert_same_marts, snapshot
from .waves import write_wave


def files_per_cohort(pipeline: Pipeline, table: str) -> dict[int, int]:
    files = "count(distinct _metadata.file_path) as files"
    rows = pipeline.spark().sql(f"select key_cohort, {files} from {table} group by 1").collect()
    return {row.key_cohort: row.files for row in rows}


def test_a_full_refresh_equals_the_incremental_runs_and_writes_each_key_cohort_once(
    families_run, monkeypatch
):
    """The full refresh (`dbt build`: every row tested) gives the marts and the Spanner status
    view of the wave-by-wave runs. At scale the last shuffle before a write keeps its 64 tasks,
    each holding keys of every cohort; each cohort must still come out as one file, not one per
    task (22,528 small files at 50M events). Coalescing off makes these few rows spread over
    tasks the same way."""
    pipeline = families_run.pipeline
    monkeypatch.setitem(SQL_CONF, "spark.sql.adaptive.coalescePartitions.enabled", "false")
    assert pipeline.cdcw("dbt", "build", "--full-refresh", *DBT_VARS) == 0
    assert_same_marts(snapshot(pipeline), families_run.snapshots[-1])
    assert read_status(pipeline) == families_run.statuses[-1]
    for table in ("cdc_internal.int_cdc__change_log", "cdc_history", "cdc_current"):
        counts = files_per_cohort(pipeline, table)
        assert len(counts) > 1, table
        assert set(counts.values()) == {1}, (table, counts)


def test_all_waves_landed_at_once_give_each_family_its_oracles_marts(java_available, tmp_path):
    spanner_waves = FAMILY_WAVES["spanner"]
    datastream_waves = FAMILY_WAVES["datastream"]
    debezium_waves = FAMILY_WAVES["debezium"]
    pipeline = Pipeline(tmp_path, datastream_scenario.declared_tables_yaml())
    for wave in (*spanner_waves, *datastream_waves, *debezium_waves):
        write_wave(pipeline.landing_root, wave)
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    marts = snapshot(pipeline)
    expected = {
        "spanner": spanner_oracle.expected_marts(spanner_waves),
        "datastream": datastream_oracle.expected_marts(
            datastream_waves, datastream_scenario.declared_keys()
        ),
        "debezium": debezium_oracle.expected_marts(debezium_waves),
    }
    assert {row["source_system"] for row in marts["cdc_current"]} == set(expected)
    for system, oracle in expected.items():
        assert_marts_match(
            of_system(marts, system),
            as_mart_text(oracle),
            pipeline.landing_root,
            f"of {system} with every wave landed before one run",
        )


# Tables as an earlier version created them, before a column was added to their model.
EARLIER_VERSION_TABLES = (
    """create table cdc_internal.int_cdc__key_successions (
         source_system string, source_name string, source_table string, key_json string,
         key_cohort int, predecessor_key_json string, predecessor_key_cohort int,
         sort_pos string, landing_run bigint)
       using delta""",
    """create table cdc_internal.int_datastream__events (
         source_name string, file_path string, line_number bigint, source_table string,
         key_json string, op string, row_image map<string, string>, is_full_image boolean,
         is_backfill boolean, order_ts bigint, sort_pos string, txn_id string, event_id string,
         source_type string, read_method string, landed_at timestamp, landing_run bigint,
         committed_at timestamp, error string, raw_line string)
       using delta partitioned by (landing_run)""",
)


def test_tables_of_an_earlier_version_gain_their_new_columns(java_available, tmp_path, capsys):
    """int_cdc__key_successions without chain_depth is read as single changes, and
    int_datastream__events without key_basis gains it: the first run adds both columns and
    already names the table without a real key among its lines."""
    pipeline = Pipeline(tmp_path, datastream_scenario.declared_tables_yaml())
    spark = pipeline.spark()
    spark.sql("create database if not exists cdc_internal")
    for statement in EARLIER_VERSION_TABLES:
        spark.sql(statement)
    for family in ("datastream", "debezium"):
        write_wave(pipeline.landing_root, FAMILY_WAVES[family][0])
    capsys.readouterr()
    assert pipeline.cdcw("run", *DBT_VARS, *BUILD_WITHOUT_TESTS) == 0
    said = capsys.readouterr().err
    spark = pipeline.spark()
    assert "chain_depth" in spark.table("cdc_internal.int_cdc__key_successions").columns
    assert "key_basis" in spark.table("cdc_internal.int_datastream__events").columns
    assert "1 Datastream table without a real key: mysql_shop shop.audit_log" in said
