"""Table upkeep that Delta leaves to its operator: `cdcw maintain` compacts each table's small
files (OPTIMIZE) and removes the files that no version within the retention window needs
(VACUUM); time travel (`cdc_as_of_run`) reaches back as far as that window. `cdcw upgrade`
turns a parquet warehouse of an earlier version into Delta tables in place."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass

from pyspark.sql import SparkSession

from cdc_warehouse.settings import DEFAULT_RETENTION_HOURS, Settings

# Delta refuses a VACUUM that keeps less than its default week unless told the operator meant it.
RETENTION_CHECK = "spark.databricks.delta.retentionDurationCheck.enabled"


@dataclass(frozen=True)
class Upkeep:
    table: str
    files_compacted: int
    seconds: float


def delta_tables(spark: SparkSession, schemas: tuple[str, ...]) -> list[str]:
    """Every Delta table of these databases (views and other formats are left alone)."""
    return tables_in_format(spark, schemas, "delta")


def tables_in_format(spark: SparkSession, schemas: tuple[str, ...], file_format: str) -> list[str]:
    found = []
    for schema in schemas:
        if not spark.catalog.databaseExists(schema):
            continue
        for table in spark.catalog.listTables(schema):
            name = f"{schema}.{table.name}"
            if table.tableType == "VIEW" or table.isTemporary:
                continue
            detail = spark.sql(f"describe detail {name}").first()
            if detail is not None and detail.format == file_format:
                found.append(name)
    return found


def maintain(spark: SparkSession, settings: Settings) -> list[Upkeep]:
    spark.conf.set(
        RETENTION_CHECK, "false" if settings.retention_hours < DEFAULT_RETENTION_HOURS else "true"
    )
    done = []
    for table in delta_tables(spark, settings.table_schemas):
        started = time.perf_counter()
        metrics = spark.sql(f"optimize {table}").first().metrics
        spark.sql(f"vacuum {table} retain {settings.retention_hours} hours")
        done.append(Upkeep(table, metrics.numFilesRemoved, time.perf_counter() - started))
    return done


def report(done: list[Upkeep], settings: Settings) -> None:
    for upkeep in done:
        print(
            f"cdcw: {upkeep.table}: {upkeep.files_compacted} small files compacted, files older "
            f"than {settings.retention_hours} h vacuumed ({upkeep.seconds:.1f} s)",
            file=sys.stderr,
        )


def convert_landed_lines(spark: SparkSession, settings: Settings) -> list[str]:
    """The raw tables and the manifest of a parquet warehouse become Delta tables where they
    are (CONVERT TO DELTA writes a log over the existing files): nothing is landed again. The
    models are then rebuilt from them (`cdcw upgrade` runs a full refresh)."""
    raw_schema = settings.table_schemas[0]
    converted = tables_in_format(spark, (raw_schema,), "parquet")
    for table in converted:
        spark.sql(f"convert to delta {table}")
    return converted
