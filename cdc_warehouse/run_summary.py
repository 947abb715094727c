"""What `cdcw run` says it did: a line per family as it lands, and the line it ends with, what
the run landed, quarantined and wrote. The marts' counts come from the operation metrics of the
Delta commits the build made (no scan of the tables), so a run costs the same however large the
marts are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cdc_warehouse.landing import FamilyLanded, LandingReport

# The marts whose rows the line counts: versions written, keys changed.
SUMMARISED_MARTS = ("cdc_history", "cdc_current")

# Operations that write a table's rows whole: their output rows are what they wrote.
WHOLE_WRITES = (
    "WRITE",
    "CREATE TABLE AS SELECT",
    "CREATE OR REPLACE TABLE AS SELECT",
    "REPLACE TABLE AS SELECT",
)


@dataclass(frozen=True)
class RowsWritten:
    """Rows a set of commits inserted, updated (a rewritten row counts once) and deleted."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0

    def __add__(self, other: RowsWritten) -> RowsWritten:
        return RowsWritten(
            self.inserted + other.inserted,
            self.updated + other.updated,
            self.deleted + other.deleted,
        )


def commit_rows(operation: str, metrics: dict[str, Any]) -> RowsWritten:
    """What one commit did to the table's rows, from Delta's operationMetrics (string values).
    A MERGE copies untouched rows of the files it rewrites: those are not counted."""

    def metric(name: str) -> int:
        return int(metrics.get(name) or 0)

    if operation == "MERGE":
        return RowsWritten(
            metric("numTargetRowsInserted"),
            metric("numTargetRowsUpdated"),
            metric("numTargetRowsDeleted"),
        )
    if operation in WHOLE_WRITES:
        return RowsWritten(inserted=metric("numOutputRows"))
    if operation == "DELETE":
        return RowsWritten(deleted=metric("numDeletedRows"))
    return RowsWritten()


def table_version(spark, table: str) -> int:
    """The table's newest Delta version (-1 when it does not exist yet)."""
    if not spark.catalog.tableExists(table):
        return -1
    return spark.sql(f"describe history {table} limit 1").first()["version"]


# A build makes a few commits per mart: one read of the newest commits usually covers them.
NEWEST_COMMITS_READ = 20


def rows_written_since(spark, table: str, version: int) -> RowsWritten:
    """What the commits after `version` did to the table's rows (the newest commits only: a
    table's log reaches back weeks)."""
    if not spark.catalog.tableExists(table):
        return RowsWritten()
    limit = NEWEST_COMMITS_READ
    while True:
        commits = spark.sql(f"describe history {table} limit {limit}").collect()
        if len(commits) < limit or min(commit["version"] for commit in commits) <= version + 1:
            break
        limit *= 4
    total = RowsWritten()
    for commit in commits:
        if commit["version"] > version:
            total += commit_rows(commit["operation"], commit["operationMetrics"] or {})
    return total


def quarantined_in_run(spark, quarantine_table: str, landing_run: int) -> int:
    if not spark.catalog.tableExists(quarantine_table):
        return 0
    return spark.table(quarantine_table).where(f"landing_run = {landing_run}").count()


def mart_versions(spark, mart_schema: str) -> dict[str, int]:
    """Each summarised mart's version before a build."""
    return {mart: table_version(spark, f"{mart_schema}.{mart}") for mart in SUMMARISED_MARTS}


@dataclass(frozen=True)
class RunCounts:
    """What a run's build quarantined and wrote to the marts."""

    quarantined: int
    history: RowsWritten
    current: RowsWritten


def run_counts(
    spark, mart_schema: str, report: LandingReport, versions_before: dict[str, int]
) -> RunCounts:
    """Counted once the run's build has succeeded."""
    written = {
        mart: rows_written_since(spark, f"{mart_schema}.{mart}", version)
        for mart, version in versions_before.items()
    }
    return RunCounts(
        quarantined_in_run(spark, f"{mart_schema}.cdc_quarantine", report.landing_run),
        history=written["cdc_history"],
        current=written["cdc_current"],
    )


def summary(report: LandingReport, counts: RunCounts) -> str:
    """The run's line."""
    return summary_line(
        report.landing_run,
        report.files,
        report.lines,
        counts.quarantined,
        counts.history,
        counts.current,
    )


def summary_line(
    landing_run: int,
    files: int,
    lines: int,
    quarantined: int,
    history: RowsWritten,
    current: RowsWritten,
) -> str:
    """A recomputed key's rows count as written even where their values came out the same."""
    return (
        f"cdcw: landing run {landing_run} done: {files} files, {lines} lines landed, "
        f"{quarantined} quarantined; cdc_history: {history.inserted + history.updated} versions "
        f"written, {history.deleted} removed; cdc_current: {current.inserted + current.updated} "
        f"keys written, {current.deleted} deleted"
    )


BYTE_UNITS = ("KiB", "MiB", "GiB", "TiB")


def byte_size(count: int) -> str:
    """A size as a person reads it at a glance: 812 bytes, 64.0 KiB, 1.2 GiB."""
    size, unit = float(count), ""
    for larger in BYTE_UNITS:
        if size < 1024:
            break
        size, unit = size / 1024, larger
    return f"{size:.1f} {unit}" if unit else f"{count} bytes"


def landing_progress_line(landed: FamilyLanded) -> str:
    """A family's line, printed as soon as its lines are committed: a long landing shows where
    it is, and which family took the time."""
    return (
        f"cdcw: landing run {landed.landing_run}: {landed.family}: {landed.files} files, "
        f"{landed.lines} lines, {byte_size(landed.bytes)} in {landed.seconds:.1f} s"
    )
