"""A shared Hive metastore on a real PostgreSQL 15: two `cdcw run`s at the same time, from an
empty metastore, into one warehouse URI. Each pipeline keeps to its own databases
(CDC_SCHEMA_PREFIX for the internal layers, CDC_SCHEMA for the marts) and its own local state
directory; both must succeed and each must hold exactly the embedded run's marts of its sources."""

from __future__ import annotations

import shutil

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from tests.pg.postgres import LocalPostgres, ensure_jdbc_driver

from .harness import (
    BUILD_WITHOUT_TESTS,
    SAMPLE_LANDING,
    CdcwProcess,
    base_env,
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


def test_two_concurrent_runs_share_a_postgresql_metastore(tmp_path, embedded_reference):
    pipeline, expected = embedded_reference
    jar = ensure_jdbc_driver()
    warehouse = tmp_path / "warehouse"
    for name, families in PIPELINES.items():
        for family in families:
            shutil.copytree(SAMPLE_LANDING / family, tmp_path / name / "landing" / family)
    with LocalPostgres(tmp_path / "postgres") as pg:
        pg.sql(
            "create role hive login password 'hive-secret'; create database metastore owner hive;"
        )
        runs = {}
        try:
            for name in PIPELINES:
                env = base_env(
                    CDC_TARGET="local",
                    CDC_METASTORE_URL=f"jdbc:postgresql://127.0.0.1:{pg.port}/metastore",
                    CDC_METASTORE_USER="hive",
                    CDC_METASTORE_PASSWORD="hive-secret",
                    CDC_METASTORE_JARS=str(jar),
                    CDC_WAREHOUSE_DIR=warehouse.as_uri(),
                    CDC_STATE_DIR=str(tmp_path / name / "state"),
                    CDC_SCHEMA_PREFIX=f"{name}_",
                    CDC_SCHEMA=f"{name}_marts",
                    CDC_LANDING_ROOT=str(tmp_path / name / "landing"),
                    CDC_TABLES=str(PROJECT_DIR / "cdc_tables.yml"),
                    CDC_DRIVER_MEMORY="1g",
                    CDC_SPARK_MASTER="local[1]",
                )
                runs[name] = CdcwProcess(["run", *BUILD_WITHOUT_TESTS], env, tmp_path, name)
            finished = {name: run.wait() for name, run in runs.items()}
        finally:
            for run in runs.values():
                run.kill()
        pg.database = "metastore"
        databases = dict(pg.sql('select "NAME", "DB_LOCATION_URI" from "DBS"'))

    for name, result in finished.items():
        assert result.returncode == 0, f"{name}: {result.explain()}"
    # Both ran at once: each started before the other finished.
    assert runs["alpha"].started < runs["beta"].started + finished["beta"].seconds
    assert runs["beta"].started < runs["alpha"].started + finished["alpha"].seconds
    # One metastore holds both pipelines' databases, located in the shared warehouse.
    for name in PIPELINES:
        for database in (f"{name}_cdc_raw", f"{name}_cdc_staging", f"{name}_cdc_internal"):
            assert databases[database] == f"file:{warehouse}/{database}.db"
        assert databases[f"{name}_marts"] == f"file:{warehouse}/{name}_marts.db"
        assert not (tmp_path / name / "state" / "metastore_db").exists()

    spark = pipeline.spark()
    for name, families in PIPELINES.items():
        actual = mart_rows(spark, warehouse, f"{name}_marts", tmp_path / name / "landing")
        assert all(actual.values()), name
        assert differences(actual, only_systems(expected, set(families))) == "", name
