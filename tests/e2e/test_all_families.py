"""The Spanner, Datastream and Debezium scenarios together: a full refresh of the warehouse their
modules check wave by wave (tests/e2e/families.py) gives the marts of the incremental runs, and
every wave landed before a single `cdcw run` gives each family the marts its oracle derives from
all the waves. One build for the three families each time: the fixed cost of a build is most of
a test's time. `cdc_as_of` gives the state the oracles' histories held at moments between and at
their changes. Each run ends with what it wrote, and the operator view cdc_source_freshness names
every source with where it stands. Tables an earlier version created, there before that single
run, gain the columns added since."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from cdc_warehouse import typed_models
from cdc_warehouse.bench import table_reads
from cdc_warehouse.build_versions import LAYOUT_VERSION
from cdc_warehouse.settings import PROJECT_DIR
from cdc_warehouse.spark import SQL_CONF
from python_udfs.spanner.column_types import spanner_column_type
from tests.conftest import SUITE_SHUFFLE_PARTITIONS, Pipeline
from tests.e2e.test_test_scope import insert_row

from .datastream import oracle as datastream_oracle
from .datastream import scenario as datastream_scenario
from .debezium import oracle as debezium_oracle
from .families import DBT_VARS, FAMILY_WAVES, KEYS_PER_PARTITION, of_system, read_status
from .marts import as_mart_text, assert_marts_match, assert_same, assert_same_marts, snapshot
from .spanner import oracle as spanner_oracle
from .spanner import scenario as spanner_scenario
from .waves import write_wave

# The transaction tables' rules about single rows, Delta CHECK constraints
# (macros/utils/row_rules_constraint.sql): each table, its rule, the values a row breaking it
# holds (the other columns NULL).
TRANSACTION_ROW_RULES = {
    "cdc_internal.int_debezium__transactions_seen": (
        "seen_transactions_name_their_server_and_key",
        {"source_name": "pg_txn"},
    ),
    "cdc_internal.int_debezium__transactions": (
        "debezium_releases_name_their_transaction",
        {"source_name": "pg_txn"},
    ),
    "cdc_internal.int_spanner__transactions": (
        "spanner_releases_name_their_transaction",
        {"source_name": "shop_gsql"},
    ),
}


def pending_of(freshness: list[dict[str, Any]]) -> list[tuple]:
    """What waits, per source, in cdc_source_freshness (its other columns age as it is read)."""
    return sorted(
        (
            row["source_system"],
            row["source_name"],
            row["pending_transactions"],
            row["overdue_transactions"],
            row["oldest_pending_landed_at"],
        )
        for row in freshness
    )


def files_per_cohort(pipeline: Pipeline, table: str) -> dict[int, int]:
    files = "count(distinct _metadata.file_path) as files"
    rows = pipeline.spark().sql(f"select key_cohort, {files} from {table} group by 1").collect()
    return {row.key_cohort: row.files for row in rows}


def test_each_table_numbers_its_keys_once_across_runs_into_its_own_partitions(families_run):
    """After the wave-by-wave runs, each source table's keys are numbered 1..n without a gap or
    a repeat, though tables gained keys in several runs, and each key's partition is its table's
    bucket and its number's group (docs/decisions/017)."""
    per_table, buckets = table_reads.COHORTS_PER_TABLE, table_reads.TABLE_BUCKETS
    expected_cohort = (
        f"cast(pmod(xxhash64(source_system, source_table), {buckets}) * {per_table}"
        f" + least(floor((key_seq - 1) / {KEYS_PER_PARTITION}), {per_table} - 1) as int)"
    )
    spark = families_run.pipeline.spark()
    registry = spark.sql(
        "select source_system, source_table, sort_array(collect_list(key_seq)) as numbers, "
        "count(distinct first_landing_run) as runs, "
        f"count_if(key_cohort != {expected_cohort}) as misplaced "
        "from cdc_internal.int_cdc__key_registry group by source_system, source_table"
    ).collect()
    assert max(row.runs for row in registry) > 1
    for row in registry:
        assert row.numbers == list(range(1, len(row.numbers) + 1)), row
        assert row.misplaced == 0, row


def test_a_transaction_row_without_its_key_never_lands(families_run):
    """Delta refuses the write by the table's row rules, naming them: no dbt test reads the
    transaction tables for such rows."""
    spark = families_run.pipeline.spark()
    for table, (rule, values) in TRANSACTION_ROW_RULES.items():
        rows = spark.table(table).count()
        assert rows > 0, table
        with pytest.raises(Exception, match=rule):
            insert_row(spark, table, **values)
        assert spark.table(table).count() == rows, table


def test_a_full_refresh_equals_the_incremental_runs_and_writes_each_key_cohort_once(
    families_run, monkeypatch
):
    """The full refresh (`dbt build`: every row tested) gives the marts, the Spanner status view
    and what waits (cdc_source_freshness) of the wave-by-wave runs. At scale the last shuffle
    before a write keeps its 64 tasks, each holding keys of every cohort; each cohort must still
    come out as one file, not one per task (22,528 small files at 50M events). Coalescing off
    makes these few rows spread over tasks the same way, and the project's 64 partitions replace
    the suite's 4."""
    pipeline = families_run.pipeline
    monkeypatch.setitem(SQL_CONF, "spark.sql.adaptive.coalescePartitions.enabled", "false")
    monkeypatch.setenv(
        "CDC_SQL_CONF",
        os.environ["CDC_SQL_CONF"].replace(
            SUITE_SHUFFLE_PARTITIONS,
            f"spark.sql.shuffle.partitions={SQL_CONF['spark.sql.shuffle.partitions']}",
        ),
    )
    assert pipeline.cdcw("dbt", "build", "--full-refresh", *DBT_VARS) == 0
    assert_same_marts(snapshot(pipeline), families_run.snapshots[-1])
    assert read_status(pipeline) == families_run.statuses[-1]
    assert pending_of(pipeline.rows("cdc_source_freshness")) == pending_of(
        families_run.freshness[-1]
    )
    for table in ("cdc_internal.int_cdc__change_log", "cdc_history", "cdc_current"):
        counts = files_per_cohort(pipeline, table)
        assert len(counts) > 1, table
        assert set(counts.values()) == {1}, (table, counts)


def oracles_of_all_waves() -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Each family's expected marts after all its waves (datetimes as the oracles give them)."""
    return {
        "spanner": spanner_oracle.expected_marts(FAMILY_WAVES["spanner"]),
        "datastream": datastream_oracle.expected_marts(
            FAMILY_WAVES["datastream"], datastream_scenario.declared_keys()
        ),
        "debezium": debezium_oracle.expected_marts(FAMILY_WAVES["debezium"]),
    }


# Tables as an earlier version created them, before a column was added to their model.
EARLIER_VERSION_TABLES = (
    """create table cdc_internal.int_cdc__key_successions (
         source_system string, source_name string, source_table string, key_json string,
         key_cohort int, predecessor_key_json string, predecessor_key_cohort int,
         sort_pos string, landing_run bigint)
       using delta""",
    """create table cdc_internal.int_datastream__events (
         source_name string, file_path string, line_number bigint, source_table string,
         key_json string, op string, row_image map<string, string>, is_backfill boolean,
         order_ts bigint, sort_pos string, txn_id string, event_id string,
         source_type string, read_method string, landed_at timestamp, landing_run bigint,
         committed_at timestamp, error string, raw_line string)
       using delta partitioned by (landing_run)""",
    """create table cdc_internal.int_debezium__pending_transactions (
         source_name string, transaction_key string, first_landed_at timestamp,
         first_landing_run bigint, committed_at timestamp, landed_events bigint,
         event_count bigint, missing_events bigint, newest_released_commit_at timestamp,
         is_overdue boolean, as_of_landing_run bigint)
       using delta partitioned by (as_of_landing_run)""",
)


@pytest.fixture(scope="module")
def all_waves_at_once(java_available, tmp_path_factory) -> tuple[Pipeline, str]:
    """Every wave of every family landed before a single `cdcw run` (its dbt tests too), in a
    warehouse that holds, empty, the tables EARLIER_VERSION_TABLES as an earlier version created
    them: one build for both the oracles' marts and the upgrade. The pipeline, and what the run
    said on stderr."""
    pipeline = Pipeline(
        tmp_path_factory.mktemp("all_waves_at_once"), datastream_scenario.declared_tables_yaml()
    )
    spark = pipeline.spark()
    spark.sql("create database if not exists cdc_internal")
    for statement in EARLIER_VERSION_TABLES:
        spark.sql(statement)
    for waves in FAMILY_WAVES.values():
        for wave in waves:
            write_wave(pipeline.landing_root, wave)
    said = io.StringIO()
    with contextlib.redirect_stderr(said):
        code = pipeline.cdcw("run", *DBT_VARS)
    assert code == 0, f"cdcw run failed:\n{said.getvalue()[-3000:]}"
    return pipeline, said.getvalue()


def test_all_waves_landed_at_once_give_each_family_its_oracles_marts(all_waves_at_once):
    pipeline, _ = all_waves_at_once
    marts = snapshot(pipeline)
    expected = oracles_of_all_waves()
    assert {row["source_system"] for row in marts["cdc_current"]} == set(expected)
    for system, oracle in expected.items():
        assert_marts_match(
            of_system(marts, system),
            as_mart_text(oracle),
            pipeline.landing_root,
            f"of {system} with every wave landed before one run",
        )


# Moments per family: at this many of its changes, a microsecond before each, halfway to the next.
AS_OF_CHANGES = 6
MICROSECOND = timedelta(microseconds=1)


def moments_around_changes(history: list[dict[str, Any]]) -> list[datetime]:
    """Instants at, just before and between the moments a family's versions begin or end."""
    changes = sorted(
        {row["valid_from"] for row in history} | {row["valid_to"] for row in history} - {None}
    )
    step = max(1, len(changes) // AS_OF_CHANGES)
    moments = set()
    for index in range(0, len(changes), step):
        moments |= {changes[index], changes[index] - MICROSECOND}
        if index + 1 < len(changes):
            moments.add(changes[index] + (changes[index + 1] - changes[index]) / 2)
    return sorted(moments)


def moment_text(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def state_as_of(history: list[dict[str, Any]], moment: datetime) -> list[tuple]:
    """The oracle's versions valid at `moment`: begun at or before it, not yet ended."""
    return sorted(
        (
            row["source_system"],
            row["source_name"],
            row["source_table"],
            row["key_json"],
            row["row_json"],
        )
        for row in history
        if row["valid_from"] <= moment and (row["valid_to"] is None or row["valid_to"] > moment)
    )


def shown_as_of(pipeline: Pipeline, moments: list[datetime]) -> dict[str, list[tuple]]:
    """`cdc_as_of` at each moment, in one `cdcw dbt show`; keyed by the moment's text."""
    query = " union all ".join(
        f"select '{moment_text(moment)}' as moment, source_system, source_name, source_table,"
        f" key_json, row_json from {{{{ cdc_as_of('{moment_text(moment)}') }}}}"
        for moment in moments
    )
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        code = pipeline.cdcw(
            "dbt", "show", "--inline", query, "--limit", "-1", "--output", "json", "--quiet"
        )
    printed = shown.getvalue()
    assert code == 0, printed[-3000:]
    states: dict[str, list[tuple]] = {moment_text(moment): [] for moment in moments}
    for row in json.loads(printed[printed.index("{") :])["show"]:
        states[row["moment"]].append(
            (
                row["source_system"],
                row["source_name"],
                row["source_table"],
                row["key_json"],
                row["row_json"],
            )
        )
    return {moment: sorted(rows) for moment, rows in states.items()}


def test_the_state_as_of_moments_between_changes_is_the_oracles(families_run):
    """With every wave applied, `cdc_as_of` at a moment gives the versions the oracles'
    histories hold valid then: at a change its new version, a microsecond before it the old
    one, and between two changes the first one's."""
    histories = [
        {**row, "source_system": system}
        for system, oracle in oracles_of_all_waves().items()
        for row in oracle["cdc_history"]
    ]
    moments = sorted(
        {
            moment
            for system in FAMILY_WAVES
            for moment in moments_around_changes(
                [row for row in histories if row["source_system"] == system]
            )
        }
    )
    shown = shown_as_of(families_run.pipeline, moments)
    for moment in moments:
        assert_same(
            shown[moment_text(moment)],
            state_as_of(histories, moment),
            f"as of {moment_text(moment)}",
        )


SUMMARY = re.compile(
    r"landing run (\d+) done: \d+ files, \d+ lines landed, (\d+) quarantined; cdc_history: "
    r"(\d+) versions written, (\d+) removed; cdc_current: (\d+) keys written, (\d+) deleted"
)
HISTORY_KEY = ("source_system", "source_name", "source_table", "key_json", "sort_key")
CURRENT_KEY = ("source_system", "source_name", "source_table", "key_json")


def rows_by(rows: list[dict[str, Any]], key: tuple[str, ...]) -> dict[tuple, str]:
    return {tuple(row[column] for column in key): repr(row) for row in rows}


def test_each_run_ends_with_what_it_quarantined_and_wrote(families_run):
    """The first run writes every row; a later one at least the rows that changed, and removes
    exactly the versions and keys that are gone."""
    previous: dict[str, list[dict[str, Any]]] = {"cdc_history": [], "cdc_current": []}
    for run, (said, marts) in enumerate(
        zip(families_run.outputs, families_run.snapshots, strict=True), 1
    ):
        (summary,) = SUMMARY.findall(said)
        landing_run, quarantined, written, removed, keys_written, deleted = map(int, summary)
        assert landing_run == run
        assert quarantined == sum(row["landing_run"] == run for row in marts["cdc_quarantine"])
        for mart, key, counts in [
            ("cdc_history", HISTORY_KEY, (written, removed)),
            ("cdc_current", CURRENT_KEY, (keys_written, deleted)),
        ]:
            before, after = rows_by(previous[mart], key), rows_by(marts[mart], key)
            changed = {k for k, row in after.items() if before.get(k) != row}
            gone = before.keys() - after.keys()
            assert counts[1] == len(gone), (run, mart)
            assert counts[0] >= len(changed), (run, mart)
            if run == 1:
                assert counts[0] == len(after), mart
        previous = marts


def test_the_freshness_view_names_each_source_with_its_newest_applied_commit(families_run):
    """One row per stream, server or slot landed; its newest applied commit is at least its
    newest version's start or delete, and a Spanner stream's at most its low watermark, with the
    transactions that wait counted."""
    pipeline = families_run.pipeline
    freshness = {
        (row["source_system"], row["source_name"]): row
        for row in pipeline.rows("cdc_source_freshness")
    }
    landed = {
        (row.family, row.source_name)
        for row in pipeline.spark().table("cdc_raw.landed_files").collect()
    }
    assert freshness.keys() == landed
    newest_run = max(row["last_landing_run"] for row in freshness.values())
    marts = families_run.snapshots[-1]
    for (system, name), row in freshness.items():
        history = [
            r
            for r in marts["cdc_history"]
            if (r["source_system"], r["source_name"]) == (system, name)
        ]
        starts_and_deletes = [r["committed_at"] for r in history] + [
            r["valid_to"] for r in history if r["closed_by_delete"]
        ]
        if starts_and_deletes:
            assert row["newest_commit_applied"] >= max(starts_and_deletes), (system, name)
        assert row["quarantined_in_last_run"] == sum(
            (q["source_system"], q["source_name"], q["landing_run"]) == (system, name, newest_run)
            for q in marts["cdc_quarantine"]
        )
        assert row["seconds_since_landing"] >= 0
        assert row["commit_lag_seconds"] is None or row["commit_lag_seconds"] > 0
    statuses = {status["source_name"]: status for status in families_run.statuses[-1]}
    for name, status in statuses.items():
        row = freshness[("spanner", name)]
        assert row["newest_commit_applied"] <= status["low_watermark"], name
        assert row["spanner_low_watermark"] == status["low_watermark"]
        waiting = status["incomplete_transactions"] + status["waiting_transactions"]
        assert row["pending_transactions"] == waiting
    assert any(row["pending_transactions"] for row in freshness.values())
    # Datastream has no pending state, nor a Debezium server without transaction metadata.
    assert {
        row["pending_transactions"]
        for (system, name), row in freshness.items()
        if system == "datastream" or (system, name) in DEBEZIUM_WITHOUT_METADATA
    } == {None}


DEBEZIUM_WITHOUT_METADATA = {("debezium", "pg_main"), ("debezium", "pg_lite")}


def freshness_results(pipeline: Pipeline, *args: str) -> tuple[int, dict[str, dict[str, Any]]]:
    """`cdcw dbt source freshness ARGS`: its exit code and each source table's result."""
    code = pipeline.cdcw("dbt", "source", "freshness", *args)
    sources = json.loads((pipeline.warehouse_dir / "_dbt/target/sources.json").read_text())
    return code, {r["unique_id"].split(".", 2)[2]: r for r in sources["results"]}


def test_source_freshness_reports_each_family_by_landing_and_by_its_most_lagging_source(
    families_run,
):
    """By landing time, fresh (the files landed minutes ago); by commit time the most lagging
    source's newest applied commit, from 2024, is far past the default threshold, and within a
    threshold set by var. A family without a source is fresh."""
    pipeline = families_run.pipeline
    oldest_applied: dict[str, datetime] = {}
    for row in pipeline.rows("cdc_source_freshness"):
        applied = datetime.fromisoformat(row["newest_commit_applied"]).replace(tzinfo=UTC)
        family = row["source_system"]
        oldest_applied[family] = min(applied, oldest_applied.get(family, applied))
    code, results = freshness_results(pipeline)
    assert code == 1
    # No pgoutput slot here: a family not in use is fresh.
    assert results["cdc_raw.pgoutput_lines"]["status"] == "pass"
    assert results["cdc_applied.pgoutput"]["status"] == "pass"
    for family in FAMILY_WAVES:
        assert results[f"cdc_raw.{family}_lines"]["status"] == "pass", family
        applied = results[f"cdc_applied.{family}"]
        assert applied["status"] == "error", family
        assert datetime.fromisoformat(applied["max_loaded_at"]) == oldest_applied[family]
    years = "{cdc_freshness_warn_after_hours: 100000, cdc_freshness_error_after_hours: 200000}"
    code, results = freshness_results(pipeline, "--vars", years)
    assert code == 0
    assert {results[f"cdc_applied.{family}"]["status"] for family in FAMILY_WAVES} == {"pass"}


def test_tables_of_an_earlier_version_gain_their_new_columns(all_waves_at_once):
    """int_cdc__key_successions without chain_depth is read as single changes,
    int_datastream__events without key_basis gains it, and the Debezium pending set without what
    has landed of each transaction is rebuilt whole: the first run adds the columns, keeps what
    has landed of each waiting transaction and already names the table without a real key among
    its lines; that run's marts are the oracles' (the test of every wave landed at once)."""
    pipeline, said = all_waves_at_once
    spark = pipeline.spark()
    assert "chain_depth" in spark.table("cdc_internal.int_cdc__key_successions").columns
    assert "key_basis" in spark.table("cdc_internal.int_datastream__events").columns
    waiting = [
        row
        for row in pipeline.rows("cdc_internal.int_debezium__pending_transactions")
        if row["transaction_key"] is not None
    ]
    assert waiting and any(row["arrived_events"] for row in waiting)
    assert "1 Datastream table without a real key: mysql_shop shop.audit_log" in said


def test_a_warehouse_built_before_the_versions_were_recorded_refuses_to_build(
    java_available, tmp_path, capsys
):
    """A change log without a record of the versions it was built with is of layout 1, the one
    with is_full_image: the run lands its files, starts no dbt command, records its failure and
    says, with exit code 5, what to run (docs/decisions/013)."""
    pipeline = Pipeline(tmp_path)
    spark = pipeline.spark()
    spark.sql("create database if not exists cdc_internal")
    spark.sql("create table cdc_internal.int_cdc__change_log (is_full_image boolean) using delta")
    write_wave(pipeline.landing_root, FAMILY_WAVES["debezium"][0])
    capsys.readouterr()
    assert pipeline.cdcw("run") == 5
    said = capsys.readouterr().err
    assert (
        "cdcw: the warehouse was built with the stored tables' layout version 1 (this code "
        f"writes version {LAYOUT_VERSION}); run `cdcw run --full-refresh` to rebuild every model "
        "from the landed lines\n"
    ) in said
    assert pipeline.dbt_invocations() == 0
    (run,) = pipeline.rows("cdc_raw.cdc_runs")
    assert run["status"] == "failed" and "layout version 1" in run["error"]
    assert pipeline.rows("cdc_raw.debezium_lines")


def source_columns(pipeline: Pipeline) -> dict[tuple[str, str, str, str], list[dict[str, Any]]]:
    """cdc_source_columns' rows by (family, source, table, column)."""
    found: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
    for row in pipeline.rows("cdc_source_columns"):
        key = (row["source_system"], row["source_name"], row["source_table"], row["column_name"])
        found.setdefault(key, []).append(row)
    return found


def test_source_columns_hold_each_column_with_the_type_its_source_named(families_run):
    """Every column history holds is there; Spanner's with the types of the scenario's
    column_types, Debezium's enveloped server with its schema's, Datastream's with its Avro
    files' types beside a row without type for its JSON files; a column added mid-stream is
    first seen after its table."""
    pipeline = families_run.pipeline
    columns = source_columns(pipeline)
    for row in pipeline.rows("cdc_history"):
        for column in json.loads(row["row_json"]):
            key = (row["source_system"], row["source_name"], row["source_table"], column)
            assert key in columns, key
    types = {
        key: {(row["source_type"], row["spark_type"]) for row in rows}
        for key, rows in columns.items()
    }

    spanner_expected = {
        ("spanner", stream, table.name, name): {spanner_column_type(spec)}
        for stream, tables in (
            (spanner_scenario.GSQL, (spanner_scenario.PRODUCTS, spanner_scenario.ORDERS)),
            (spanner_scenario.PGSQL, (spanner_scenario.ACCOUNTS, spanner_scenario.TRANSFERS)),
        )
        for table in tables
        for name, spec in table.columns
    }
    assert {k: v for k, v in types.items() if k[0] == "spanner"} == spanner_expected
    assert {("PG_NUMERIC", "string")} in spanner_expected.values()
    assert {("INT64", "bigint")} in spanner_expected.values()

    debezium = {k: v for k, v in types.items() if k[0] == "debezium"}
    assert all(len(v) == 1 for v in debezium.values())
    assert {k[1] for k, v in debezium.items() if (None, "string") not in v} == {"pg_main"}
    assert {("io.debezium.time.MicroTimestamp", "timestamp_ntz")} in debezium.values()

    datastream = {k: v for k, v in types.items() if k[0] == "datastream"}
    avro_typed = {k for k, v in datastream.items() if len(v) == 2}
    assert {k[1:3] for k in avro_typed} == {("mysql_shop", "shop.products")}
    assert all(v == {(None, "string")} for k, v in datastream.items() if k not in avro_typed)
    assert ("decimal(10,2)", "decimal(10,2)") in datastream[
        ("datastream", "mysql_shop", "shop.products", "price")
    ]
    accounts = {
        k[3]: rows[0]
        for k, rows in columns.items()
        if k[1:3] == ("postgres_crm", "public.accounts")
    }
    table_first_seen = min(row["first_seen_landing_run"] for row in accounts.values())
    assert accounts["tier"]["first_seen_landing_run"] > table_first_seen


def project_copy(root: Path) -> Path:
    """The dbt project's files in a directory of their own, for models written into it."""
    for part in ("models", "macros", "seeds", "tests/dbt"):
        shutil.copytree(PROJECT_DIR / part, root / part)
    shutil.copy(PROJECT_DIR / "dbt_project.yml", root / "dbt_project.yml")
    return root


def test_generated_typed_models_cover_every_table_and_their_values_fit(families_run, tmp_path):
    """`cdcw generate-typed-models` writes models for every table without one, typed from its
    source; they build, each value fits its column's type (typed_values_fit), each opens only its
    table's files, and a second call writes nothing."""
    pipeline = families_run.pipeline
    project = project_copy(tmp_path / "project")
    assert pipeline.cdcw("generate-typed-models", "--project-dir", str(project)) == 0
    generated = project / typed_models.GENERATED_DIR
    document = yaml.safe_load((generated / typed_models.GENERATED_YML).read_text())
    models = {model["name"]: model for model in document["models"]}
    sources = {tuple(model["config"]["meta"]["cdc_source"].values()) for model in models.values()}
    every_table = {key[:3] for key in source_columns(pipeline)}
    hand_written = {
        (s.source_system, s.source_name, s.source_table)
        for s in typed_models.typed_sources(PROJECT_DIR / "models")
    }
    assert sources == every_table - hand_written
    assert len(models) == 2 * len(sources)
    assert {path.stem for path in generated.glob("*.sql")} == set(models)

    built = pipeline.cdcw(
        "dbt",
        "build",
        "--project-dir",
        str(project),
        "--select",
        f"path:{typed_models.GENERATED_DIR}",
    )
    assert built == 0
    results = json.loads((pipeline.warehouse_dir / "_dbt/target/run_results.json").read_text())
    assert sum(r["unique_id"].startswith("test.") for r in results["results"]) == len(models)
    products = pipeline.spark().table("shop_gsql__products_current")
    spark_types = {
        key[3]: rows[0]["spark_type"]
        for key, rows in source_columns(pipeline).items()
        if key[:3] == ("spanner", spanner_scenario.GSQL, "Products")
    }
    declared = {
        column["name"]: column["data_type"]
        for column in models["shop_gsql__products_current"]["columns"]
        if "data_type" in column
    }
    assert declared == spark_types
    view_types = dict(products.dtypes)
    assert {name: view_types[name] for name in declared} == declared

    # A typed view opens the files of its own table's partitions only (docs/decisions/017).
    spark = pipeline.spark()
    for name, model in models.items():
        source = model["config"]["meta"]["cdc_source"]
        mart = "cdc_current" if name.endswith("_current") else "cdc_history"
        of_table = (
            f"source_system = '{source['source_system']}' "
            f"and source_table = '{source['source_table']}'"
        )
        files = spark.sql(
            f"select _metadata.file_path, ({of_table}) as of_table from {mart}"
        ).distinct()
        table_files = files.where("of_table").count()
        mart_files = spark.sql(f"describe detail {mart}").first()["numFiles"]
        view = f"select * from {name}"
        read = table_reads.files_read(spark, view)
        assert 0 < read == table_files < mart_files, (name, read, table_files, mart_files)
        # Its files hold no other table's rows, and the view skips the other tables' files by
        # their partitions, not only by the statistics of each file.
        assert files.groupBy("file_path").count().where("count > 1").count() == 0, name
        pruned = table_reads.partition_filters(spark, view)
        assert pruned and all("key_cohort" in predicate for predicate in pruned), (name, pruned)

    assert pipeline.cdcw("generate-typed-models", "--project-dir", str(project)) == 0
    assert len(yaml.safe_load((generated / typed_models.GENERATED_YML).read_text())["models"]) == (
        len(models)
    )
