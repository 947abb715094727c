"""What a query of one source table reads of a mart: the files Spark opens for it, beside the
files that hold the table's rows and all the mart's files (docs/decisions/017).

A mart's partitions hold keys of one source table each (its streams together), and a typed view
keeps only its table's partitions by a predicate on the partition column alone
(macros/utils/table_cohorts.sql; `table_cohorts` here is its twin, tied by a unit test), so
Delta opens no file of another table."""

from __future__ import annotations

from typing import Any

# The macros' constants (macros/utils/cohorts_per_table.sql, macros/utils/table_bucket.sql).
COHORTS_PER_TABLE = 2048
TABLE_BUCKETS = 1048575


def table_cohorts(source_system: str, source_table: str, cohort_column: str = "key_cohort") -> str:
    """The predicate that keeps one source table's partitions."""
    return (
        f"{cohort_column} div {COHORTS_PER_TABLE} = "
        f"pmod(xxhash64('{source_system}', '{source_table}'), {TABLE_BUCKETS})"
    )


def _file_scans(spark, sql: str) -> list[Any]:
    """The file scans of `sql`'s executed plan once it ran (adaptive query stages included)."""
    frame = spark.sql(sql)
    frame.collect()
    plan = frame._jdf.queryExecution().executedPlan()
    if plan.getClass().getSimpleName() == "AdaptiveSparkPlanExec":
        plan = plan.finalPhysicalPlan()
    scans, pending = [], [plan]
    while pending:
        node = pending.pop()
        name = node.getClass().getSimpleName()
        if name == "FileSourceScanExec":
            scans.append(node)
        if name.endswith("QueryStageExec"):
            pending.append(node.plan())
        children = node.children().iterator()
        while children.hasNext():
            pending.append(children.next())
    return scans


def files_read(spark, sql: str) -> int:
    """Files the scans of `sql` opened, from their metrics."""
    return sum(scan.metrics().apply("numFiles").value() for scan in _file_scans(spark, sql))


def partition_filters(spark, sql: str) -> list[str]:
    """The predicates by which the scans of `sql` pruned partitions, before any file's
    statistics were read."""
    return [scan.partitionFilters().mkString(" and ") for scan in _file_scans(spark, sql)]


def one_table_reads(spark, mart: str, source_system: str, source_table: str) -> dict[str, Any]:
    """Files read by a typed view's query of one table of `mart`, the files holding that
    table's rows, and all the mart's files."""
    of_table = f"source_system = '{source_system}' and source_table = '{source_table}'"
    return {
        "files_read": files_read(
            spark,
            f"select count(*) from {mart} "
            f"where {of_table} and {table_cohorts(source_system, source_table)}",
        ),
        "table_files": spark.sql(
            f"select count(distinct _metadata.file_path) from {mart} where {of_table}"
        ).first()[0],
        "mart_files": spark.sql(f"describe detail {mart}").first()["numFiles"],
    }
