"""Shared end-to-end harness: a pipeline = one landing root + one warehouse + one table settings
file, driven through the real `cdcw` entry point in this process (one JVM for the whole test
session; switching warehouse starts a new SparkSession in it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling

from cdc_warehouse.steps import INTERPRETED_EXECUTION

# The suite's JVMs (one per worker, the benchmark's children) neither write a class archive into
# the user's cache nor map one from there; tests/e2e/test_class_archive.py sets its own.
os.environ["CDC_CLASS_ARCHIVE"] = "off"
# The suite's tables hold a few thousand rows: Spark runs its plans without whole-stage code
# generation and interprets its expressions, which costs the suite's JVMs (and their JIT
# compilers) less CPU per build than generating and compiling code per query and per task
# (docs/benchmarks/journal.md); the settings a `cdcw run` of few new lines builds with
# (steps.INTERPRETED_EXECUTION, docs/decisions/018), so every scenario proves them. Their
# shuffles start with 4 partitions, not the project's 64 (sized for a large build's last stage):
# on 2 cores a small build's every shuffle otherwise writes and reads 64 map outputs per task
# before adaptive execution coalesces them. Tests of what the 64 guard keep it
# (test_all_families.py). The benchmark keeps the project's settings.
SUITE_SHUFFLE_PARTITIONS = "spark.sql.shuffle.partitions=4"
os.environ["CDC_SQL_CONF"] = ";".join(
    [*(f"{key}={value}" for key, value in INTERPRETED_EXECUTION.items()), SUITE_SHUFFLE_PARTITIONS]
)
# Most of the suite's JVMs live for one small run (the killed and resumed runs, the cluster
# modes, the benchmark's phases): their C2 compiler takes a method only once it has been called
# or looped tens of thousands of times (each Tier4 threshold 4-33 times its default), since a
# short process spends more on C2's compilations than their code saves it, and C1's code
# carries the rest. Every JVM the suite starts, its workers' included, inherits this; the
# benchmark keeps the JVM's defaults.
os.environ["JDK_JAVA_OPTIONS"] = " ".join(
    [
        os.environ.get("JDK_JAVA_OPTIONS", ""),
        "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=20000",
        "-XX:Tier4CompileThreshold=60000 -XX:Tier4BackEdgeThreshold=400000",
    ]
).strip()

TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
# `cdcw run` arguments for a run whose marts are compared with a reference run in which the
# dbt tests ran: the comparison is the check, and the tests are a fifth of a small build.
BUILD_WITHOUT_TESTS = ("--exclude-resource-type", "test")


# The modules that take longest, started first so that no worker is left alone with one at the
# end (docs/benchmarks/journal.md gives the suite's per-module times).
LONGEST_MODULES = (
    "tests/e2e/test_run_guarantees.py",
    "tests/e2e/spanner/test_spanner_pipeline.py",
    "tests/e2e/datastream/test_datastream_pipeline.py",
    "tests/e2e/debezium/test_debezium_pipeline.py",
    "tests/e2e/test_all_families.py",
)
# The modules that check one warehouse built by every family's waves (tests/e2e/families.py):
# on one worker, so that it is built once.
FAMILY_MODULES = LONGEST_MODULES[1:]


class ModuleScheduling(LoadScopeScheduling):
    """`make test` spreads the tests over worker processes (pytest-xdist), one test module at a
    time, in collection order (the longest modules first, then the Spark-heavy directories): a
    module's tests share one pipeline run through all its waves; the family modules, kept
    together, one run of every family's waves; the PostgreSQL modules, kept together, one
    server and workload (tests/e2e/pgoutput/conftest.py); and the cluster modules, kept
    together, one embedded reference run. Not `--dist loadgroup`: with pytest 9.2 its groups are
    silently ignored (pytest-dev/pytest-xdist#1386)."""

    def _split_scope(self, nodeid: str) -> str:
        module = nodeid.split("::", 1)[0]
        if module in FAMILY_MODULES:
            return "tests/e2e families"
        for package in ("tests/e2e/pgoutput", "tests/cluster"):
            if module.startswith(f"{package}/"):
                return package
        return module


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        module = item.nodeid.split("::", 1)[0]
        return LONGEST_MODULES.index(module) if module in LONGEST_MODULES else len(LONGEST_MODULES)

    items.sort(key=rank)  # stable: each module keeps its own order


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> ModuleScheduling | None:
    if config.getvalue("dist") not in ("load", "loadscope"):
        return None
    return ModuleScheduling(config, log)


@contextmanager
def patched_env(values: dict[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def utc_text(value: datetime | None) -> str | None:
    """Oracle datetimes in the format the marts are read back in (see Pipeline.rows)."""
    if value is None:
        return None
    return value.astimezone(UTC).strftime(TIMESTAMP_FORMAT)


class Pipeline:
    def __init__(self, root: Path, tables_yaml: str = "tables: []\n") -> None:
        self.root = root
        self.landing_root = root / "landing"
        self.warehouse_dir = root / "warehouse"
        self.tables_file = root / "cdc_tables.yml"
        self.landing_root.mkdir(parents=True, exist_ok=True)
        self.tables_file.write_text(tables_yaml)

    def env(self) -> dict[str, str]:
        return {
            "CDC_LANDING_ROOT": str(self.landing_root),
            "CDC_WAREHOUSE_DIR": str(self.warehouse_dir),
            "CDC_TABLES": str(self.tables_file),
        }

    def cdcw(self, *args: str) -> int:
        from cdc_warehouse.cli import main

        with patched_env(self.env()):
            return main(list(args))

    def last_dbt_log(self) -> str:
        """The dbt log of the last dbt command on this warehouse, from its start line on."""
        log = (self.warehouse_dir / "_dbt" / "logs" / "dbt.log").read_text(errors="replace")
        return log[log.rindex("Running with dbt=") :]

    def dbt_invocations(self) -> int:
        """How many dbt commands have run on this warehouse (each logs its start)."""
        log = self.warehouse_dir / "_dbt" / "logs" / "dbt.log"
        return log.read_text(errors="replace").count("Running with dbt=") if log.exists() else 0

    def spark(self):
        from cdc_warehouse.settings import load_settings
        from cdc_warehouse.spark import build_session

        with patched_env(self.env()):
            return build_session(load_settings())

    def rows(self, table: str) -> list[dict[str, Any]]:
        """All rows, timestamps rendered in UTC so no local time zone gets involved."""
        frame = self.spark().table(table)
        columns = [
            f"date_format({field.name}, 'yyyy-MM-dd HH:mm:ss.SSSSSS') as {field.name}"
            if field.dataType.typeName() == "timestamp"
            else field.name
            for field in frame.schema.fields
        ]
        return [row.asDict(recursive=True) for row in frame.selectExpr(*columns).collect()]


@pytest.fixture(scope="session")
def java_available() -> None:
    from cdc_warehouse.prereqs import java_problem

    problem = java_problem()
    if problem:
        pytest.fail(problem)
