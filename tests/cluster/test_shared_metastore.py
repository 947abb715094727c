"""A shared Hive metastore on a real PostgreSQL 15: two `cdcw run`s at the same time, from an
empty metastore, into one warehouse URI. Each pipeline keeps to its own databases
(CDC_SCHEMA_PREFIX for the internal layers, CDC_SCHEMA for the marts) and its own local state
directory; both must succeed and each must hold exactly the embedded run's marts of its sources.
A psql session holds the start-up lock while both start, in place of another process opening
the metastore: both wait for it without touching the metastore, so they contend for it at once
when it is released, and the race they used to lose (both creating the metastore's tables) is
also checked directly: every table is created while a process holds the start-up lock. Then the
run lock of one pipeline's warehouse and prefix, held the same way as by a run of another
installation, stops the next command at once. One metastore and one pair of runs serve both
tests (the fixed cost of a run is most of their time)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from cdc_warehouse.metastore_locks import METASTORE_LOCKS, run_lock_name
from cdc_warehouse.settings import PROJECT_DIR, load_settings
from tests.conftest import BUILD_WITHOUT_TESTS, patched_env
from tests.postgres import LocalPostgres, ensure_jdbc_driver

from .harness import (
    SAMPLE_LANDING,
    CdcwProcess,
    Finished,
    base_env,
    cdcw,
    differences,
    mart_rows,
    only_systems,
)

pytestmark = pytest.mark.cluster

# Two pipelines: one per landing root, with the sources each one lands.
PIPELINES = {
    "alpha": ("datastream",),
    "beta": ("debezium", "pgoutput"),
}

# Every table created in the metastore database, and whether some session held an advisory lock
# (the start-up lock of metastore_locks.open_shared_metastore) at that time; not counting the
# psql session that holds the start-up lock while the runs start.
LOCK_HOLDER = "cdc_test_lock_holder"
RECORD_TABLE_CREATION = f"""
create table cdc_test_table_creation (table_name text, lock_held boolean);
create function cdc_test_record_table_creation() returns event_trigger
language plpgsql security definer as $$
begin
    insert into cdc_test_table_creation
    select
        (parse_ident(object_identity))[2],
        exists (
            select from pg_locks
            where locktype = 'advisory' and granted and database = (
                select oid from pg_database where datname = current_database()
            ) and pid not in (
                select pid from pg_stat_activity where application_name = '{LOCK_HOLDER}'
            )
        )
    from pg_event_trigger_ddl_commands()
    where command_tag = 'CREATE TABLE';
end;
$$;
create event trigger cdc_test_table_creation on ddl_command_end
when tag in ('CREATE TABLE') execute function cdc_test_record_table_creation();
"""
# The metastore's own tables (not the record above).
METASTORE_TABLES = (
    "select count(*) from information_schema.tables where table_schema = 'public'"
    " and table_name <> 'cdc_test_table_creation'"
)
WAITING_FOR_ADVISORY_LOCKS = (
    "select count(*) from pg_locks where locktype = 'advisory' and not granted"
)


@dataclass
class SharedMetastoreRuns:
    root: Path
    warehouse: Path
    runs: dict[str, CdcwProcess]
    finished: dict[str, Finished]
    # Whether both runs were seen waiting for the start-up lock, and the metastore's tables then.
    waited: bool
    tables_while_waiting: str | None
    # The metastore after both runs: its databases, tables and the record of their creation.
    databases: dict[str | None, str | None]
    defaults: str | None
    tables: str | None
    raw_tables: str | None
    created: list[tuple[str | None, ...]]
    # A `cdcw land` of alpha's warehouse and prefix while its run lock is held.
    refused: Finished


@pytest.fixture(scope="module")
def shared_metastore_runs(tmp_path_factory, java_available) -> SharedMetastoreRuns:
    root = tmp_path_factory.mktemp("shared_metastore")
    jar = ensure_jdbc_driver()
    warehouse = root / "warehouse"
    for name, families in PIPELINES.items():
        for family in families:
            shutil.copytree(SAMPLE_LANDING / family, root / name / "landing" / family)
    with LocalPostgres(root / "postgres") as pg:
        _create_empty_metastore(pg)
        pg.sql(RECORD_TABLE_CREATION)
        envs = {
            name: _metastore_env(
                pg,
                jar,
                CDC_WAREHOUSE_DIR=warehouse.as_uri(),
                CDC_STATE_DIR=str(root / name / "state"),
                CDC_SCHEMA_PREFIX=f"{name}_",
                CDC_SCHEMA=f"{name}_marts",
                CDC_LANDING_ROOT=str(root / name / "landing"),
            )
            for name in PIPELINES
        }
        runs: dict[str, CdcwProcess] = {}
        try:
            with pg.session() as holder:
                _, take_lock = METASTORE_LOCKS["jdbc:postgresql:"]
                holder.run(f"set application_name = '{LOCK_HOLDER}'; {take_lock};")
                for name, env in envs.items():
                    runs[name] = CdcwProcess(["run", *BUILD_WITHOUT_TESTS], env, root, name)
                waited = _wait_for(
                    lambda: pg.value(WAITING_FOR_ADVISORY_LOCKS) == str(len(runs)),
                    alive=lambda: all(run.process.poll() is None for run in runs.values()),
                )
                tables_while_waiting = pg.value(METASTORE_TABLES)
            finished = {name: run.wait() for name, run in runs.items()}
        finally:
            for run in runs.values():
                run.kill()
        databases = dict(pg.sql('select "NAME", "DB_LOCATION_URI" from "DBS"'))
        defaults = pg.value("""select count(*) from "DBS" where "NAME" = 'default'""")
        tables = pg.value(METASTORE_TABLES)
        raw_tables = pg.value("""select count(*) from "TBLS" """)
        created = pg.sql("select table_name, lock_held from cdc_test_table_creation")
        with patched_env(envs["alpha"]):
            lock_name = run_lock_name(load_settings())
        with pg.session() as holder:
            holder.run(f"select pg_advisory_lock(hashtext('{lock_name}'));")
            refused = cdcw(["land"], envs["alpha"], root, "refused")
    return SharedMetastoreRuns(
        root, warehouse, runs, finished, waited, tables_while_waiting, databases, defaults,
        tables, raw_tables, created, refused,
    )  # fmt: skip


def test_two_concurrent_runs_share_a_postgresql_metastore(
    shared_metastore_runs, embedded_reference
):
    shared = shared_metastore_runs
    pipeline, expected = embedded_reference
    runs, finished = shared.runs, shared.finished
    for name, result in finished.items():
        assert result.returncode == 0, f"{name}: {result.explain()}"
    # The metastore's tables were created, each under the lock; one `default` database.
    assert {"DBS", "TBLS", "SDS", "CDS", "PARTITIONS"} <= {table for table, _ in shared.created}
    assert [table for table, lock_held in shared.created if lock_held != "t"] == []
    assert shared.defaults == "1"
    # Both ran at once: each started before the other finished.
    assert runs["alpha"].started < runs["beta"].started + finished["beta"].seconds
    assert runs["beta"].started < runs["alpha"].started + finished["alpha"].seconds
    # One metastore holds both pipelines' databases, located in the shared warehouse.
    warehouse = shared.warehouse
    for name in PIPELINES:
        for database in (f"{name}_cdc_raw", f"{name}_cdc_staging", f"{name}_cdc_internal"):
            assert shared.databases[database] == f"file:{warehouse}/{database}.db"
        assert shared.databases[f"{name}_marts"] == f"file:{warehouse}/{name}_marts.db"
        assert not (shared.root / name / "state" / "metastore_db").exists()

    spark = pipeline.spark()
    for name, families in PIPELINES.items():
        actual = mart_rows(spark, warehouse, f"{name}_marts", shared.root / name / "landing")
        assert all(actual.values()), name
        assert differences(actual, only_systems(expected, set(families))) == "", name


def test_a_run_waits_while_another_process_opens_the_metastore(shared_metastore_runs):
    """The start-up lock, held by a psql session in place of another process: the runs wait
    for it without touching the metastore, then create the schema and land their files. The
    run lock of a warehouse and prefix, held the same way as by a run of another installation:
    the next command stops at once with exit 3."""
    shared = shared_metastore_runs
    explained = {name: result.explain() for name, result in shared.finished.items()}
    assert shared.waited, f"the runs never both waited for the lock: {explained}"
    assert shared.tables_while_waiting == "0"
    for name, result in shared.finished.items():
        assert result.returncode == 0, f"{name}: {result.explain()}"
    assert int(shared.tables or 0) > 20 and int(shared.raw_tables or 0) > 0
    refused = shared.refused
    assert refused.returncode == 3, refused.explain()
    assert "another cdcw command is running on the warehouse" in refused.stderr
    assert "Traceback" not in refused.stderr


def _create_empty_metastore(pg: LocalPostgres) -> None:
    """The metastore's role and empty database; `pg` then connects to that database."""
    pg.sql("create role hive login password 'hive-secret'; create database metastore owner hive;")
    pg.database = "metastore"


def _metastore_env(pg: LocalPostgres, jar: Path, **values: str) -> dict[str, str]:
    """A `cdcw` environment on the metastore database of `pg`, one core and a small heap."""
    return base_env(
        CDC_TARGET="local",
        CDC_METASTORE_URL=f"jdbc:postgresql://127.0.0.1:{pg.port}/metastore",
        CDC_METASTORE_USER="hive",
        CDC_METASTORE_PASSWORD="hive-secret",
        CDC_METASTORE_JARS=str(jar),
        CDC_TABLES=str(PROJECT_DIR / "cdc_tables.yml"),
        CDC_DRIVER_MEMORY="1g",
        CDC_SPARK_MASTER="local[1]",
        **values,
    )


def _wait_for(
    condition: Callable[[], bool], alive: Callable[[], bool], timeout: float = 300
) -> bool:
    """True once `condition()` holds; False if `alive()` stops holding first or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and alive():
        if condition():
            return True
        time.sleep(0.5)
    return False
