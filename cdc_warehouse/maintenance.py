"""Table upkeep that Delta leaves to its operator: `cdcw maintain` compacts each table's small
files (OPTIMIZE) and removes the files that no version within the retention window needs
(VACUUM); time travel (`cdc_as_of_run`) reaches back as far as that window. `cdcw upgrade`
turns a parquet warehouse of an earlier version into Delta tables in place."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from cdc_warehouse.settings import DEFAULT_RETENTION_HOURS, Settings

# Delta refuses a VACUUM that keeps less than its default week unless told the operator meant it.
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@dataclass(frozen=True)
class Upkeep:
    table: str
    files_compacted: int
    vacuumed: bool
    seconds: float


def delta_tables(spark: SparkSession, schemas: tuple[str, ...]) -> list[str]:
    """Every Delta table of these databases (views and other formats are left alone)."""
    return tables_in_format(spark, schemas, "delta")


def tables_in_format(spark: SparkSession, schemas: tuple[str, ...], file_format: str) -> list[str]:
    found = []
    for schema in schemas:
        if not spark.catalog.databaseExists(schema):
            continue
        # SQL, not spark.catalog.listTables: with interpreted expressions (the test suite's
        # `spark.sql.codegen.factoryMode=NO_CODEGEN`) Spark cannot decode that list.
        views = {row.viewName for row in spark.sql(f"show views in {schema}").collect()}
        for table in spark.sql(f"show tables in {schema}").collect():
            name = f"{schema}.{table.tableName}"
            if table.isTemporary or table.tableName in views:
                continue
            detail = spark.sql(f"describe detail {name}").first()
            if detail is not None and detail.format == file_format:
                found.append(name)
    return found


def vacuum_is_due(spark: SparkSession, table: str, retention_hours: int) -> bool:
    """Whether VACUUM would delete anything: a file outside the table's current version (removed
    by a later version, or left by a write that never committed) last changed before the
    retention window. A removal is never older than the file it removes, so without such a file
    there is nothing VACUUM may delete, and the jobs and two log commits it spends finding that
    out are saved. Files and directories whose names start with `_` or `.` are not listed,
    as VACUUM leaves them alone too."""
    location = spark.sql(f"describe detail {table}").collect()[0].location
    cutoff = datetime.now(UTC) - timedelta(hours=retention_hours)
    old_files = (
        spark.read.format("binaryFile")
        .option("recursiveFileLookup", "true")
        .load(location)
        .where(F.col("modificationTime") < F.lit(cutoff))
        .select("path")
    )
    live_files = spark.createDataFrame(
        [(path,) for path in spark.table(table).inputFiles()], "path string"
    )
    return bool(old_files.join(live_files, "path", "left_anti").limit(1).count())


def maintain(spark: SparkSession, settings: Settings) -> list[Upkeep]:
    spark.conf.set(
        RETENTION_CHECK, "false" if settings.retention_hours < DEFAULT_RETENTION_HOURS else "true"
    )
    done = []
    for table in delta_tables(spark, settings.table_schemas):
        started = time.perf_counter()
        metrics = spark.sql(f"optimize {table}").collect()[0].metrics
        vacuumed = vacuum_is_due(spark, table, settings.retention_hours)
        if vacuumed:
            spark.sql(f"vacuum {table} retain {settings.retention_hours} hours")
        done.append(Upkeep(table, metrics.numFilesRemoved, vacuumed, time.perf_counter() - started))
    return done


def report(done: list[Upkeep], settings: Settings) -> None:
    for upkeep in done:
        vacuum = (
            f"files older than {settings.retention_hours} h vacuumed"
            if upkeep.vacuumed
            else f"no file older than {settings.retention_hours} h to vacuum"
        )
        print(
            f"cdcw: {upkeep.table}: {upkeep.files_compacted} small files compacted, {vacuum} "
            f"({upkeep.seconds:.1f} s)",
            file=sys.stderr,
        )


def convert_landed_lines(spark: SparkSession, settings: Settings) -> list[str]:
    """The raw tables and the manifest of a parquet warehouse become Delta tables where they
    are (CONVERT TO DELTA writes a log over the existing files): nothing is landed again. The
    models are then rebuilt from them (`cdcw upgrade` runs a full refresh)."""
    converted = tables_in_format(spark, (settings.raw_schema,), "parquet")
    for table in converted:
        spark.sql(f"convert to delta {table}")
    return converted
