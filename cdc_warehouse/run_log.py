"""The run log: every `cdcw run`, single or one cycle of `--every`, is one row of the Delta table
`cdc_runs` in the raw schema (append-only), whether it succeeded, failed or was killed.

A run writes its row as "killed" into a marker file in the state directory before it does any
work, and again, finished, just before it appends it with one small Delta write at its end; the
marker is removed after that write. A run killed (or whose append failed) leaves the marker: the
next run appends that row with its own, killed (no end time) unless it had finished. A run
killed between its append and the marker's removal is not appended twice: the next run leaves
out the rows the table already holds.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cdc_warehouse.files import replace_text
from cdc_warehouse.settings import Settings

SUCCEEDED, FAILED, KILLED = "succeeded", "failed", "killed"
# dbt's nodes grouped into the stages of a run (the benchmark reports the same stages).
DBT_STAGES = ("staging", "change_log", "history", "current", "tests", "other")
# The run log's column of each stage's seconds.
STAGE_COLUMNS = {
    "land": "landing_seconds",
    "staging": "decoding_seconds",
    "change_log": "change_log_seconds",
    "history": "history_seconds",
    "current": "current_seconds",
    "tests": "tests_seconds",
    "other": "other_seconds",
}
RUN_COLUMNS = (
    "run_id string, landing_run bigint, started_at timestamp, ended_at timestamp, "
    "status string, error string, files_landed bigint, lines_landed bigint, "
    "lines_quarantined bigint, versions_written bigint, versions_removed bigint, "
    "keys_written bigint, keys_deleted bigint, "
    + ", ".join(f"{column} double" for column in STAGE_COLUMNS.values())
)
# How much of an exception's first line a sentence quotes (Spark's run to pages).
QUOTED_CHARS = 300
MARKER = "run-in-progress.json"


def exception_sentence(exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0]
    if len(first_line) > QUOTED_CHARS:
        first_line = first_line[:QUOTED_CHARS] + "..."
    return f"{type(exc).__name__}: {first_line}"


def stage_of(unique_id: str) -> str:
    """The stage of a dbt node, by its kind and model name."""
    kind, name = unique_id.split(".")[0], unique_id.split(".")[-1]
    if kind == "test":
        return "tests"
    if kind != "model":
        return "other"
    if name.startswith("stg_"):
        return "staging"
    if name.startswith("int_cdc__"):
        return "change_log"
    if name.startswith("int_"):
        return "staging"  # a family's decoding into the one change-log shape
    if name == "cdc_history":
        return "history"
    if name == "cdc_current":
        return "current"
    return "other"


@dataclass
class RunRow:
    """One row of cdc_runs. Counts a run did not reach stay None; a stage's seconds are the sum
    of its nodes' execution times (None: no dbt build in this run)."""

    run_id: str
    started_at: str
    status: str = KILLED
    ended_at: str | None = None
    landing_run: int | None = None
    error: str | None = None
    files_landed: int | None = None
    lines_landed: int | None = None
    lines_quarantined: int | None = None
    versions_written: int | None = None
    versions_removed: int | None = None
    keys_written: int | None = None
    keys_deleted: int | None = None
    stage_seconds: dict[str, float] = field(default_factory=dict)

    def values(self) -> tuple[Any, ...]:
        return (
            self.run_id,
            self.landing_run,
            _timestamp(self.started_at),
            _timestamp(self.ended_at),
            self.status,
            self.error,
            self.files_landed,
            self.lines_landed,
            self.lines_quarantined,
            self.versions_written,
            self.versions_removed,
            self.keys_written,
            self.keys_deleted,
            *(self.stage_seconds.get(stage) for stage in STAGE_COLUMNS),
        )

    @property
    def seconds(self) -> float | None:
        if self.ended_at is None:
            return None
        ended, started = (
            datetime.fromisoformat(self.ended_at),
            datetime.fromisoformat(self.started_at),
        )
        return (ended - started).total_seconds()


def _timestamp(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _now() -> str:
    return datetime.now(UTC).isoformat()


def dbt_stage_seconds(run_results: Path, since: str) -> dict[str, float]:
    """Seconds per stage of the dbt build whose run_results.json dbt wrote after `since` (an
    ISO time); empty when the run made none."""
    if not run_results.exists():
        return {}
    document = json.loads(run_results.read_text())
    generated = datetime.fromisoformat(document["metadata"]["generated_at"].replace("Z", "+00:00"))
    if generated < datetime.fromisoformat(since):
        return {}
    stages = dict.fromkeys(DBT_STAGES, 0.0)
    for node in document.get("results", []):
        stages[stage_of(node["unique_id"])] += float(node.get("execution_time") or 0.0)
    return {stage: round(seconds, 3) for stage, seconds in stages.items()}


def dbt_failure(run_results: Path) -> str:
    """The first node a failed build stopped at, as a sentence."""
    if run_results.exists():
        for node in json.loads(run_results.read_text()).get("results", []):
            if node.get("status") in ("error", "fail"):
                message = (str(node.get("message") or "").strip().splitlines() or [""])[0]
                name = node["unique_id"].split(".")[-1]
                return f"dbt build failed at {name}: {message[:QUOTED_CHARS]}"
    return "dbt build failed"


def runs_table(settings: Settings) -> str:
    return f"{settings.raw_schema}.cdc_runs"


def _read_marker(marker: Path) -> list[RunRow]:
    if not marker.exists():
        return []
    return [RunRow(**row) for row in json.loads(marker.read_text())]


def _write_marker(marker: Path, rows: list[RunRow]) -> None:
    marker.parent.mkdir(parents=True, exist_ok=True)
    replace_text(marker, json.dumps([asdict(row) for row in rows]))


def append(spark, settings: Settings, rows: list[RunRow]) -> None:
    """One Delta append of `rows`, leaving out those the table already holds."""
    table = runs_table(settings)
    spark.sql(f"create database if not exists {settings.raw_schema}")
    spark.sql(f"create table if not exists {table} ({RUN_COLUMNS}) using delta")
    earlier = [row.run_id for row in rows[:-1]]
    if earlier:
        ids = ", ".join(f"'{run_id}'" for run_id in earlier)
        query = f"select run_id from {table} where run_id in ({ids})"
        held = {row.run_id for row in spark.sql(query).collect()}
        rows = [row for row in rows if row.run_id not in held]
    spark.createDataFrame([row.values() for row in rows], RUN_COLUMNS).write.format("delta").mode(
        "append"
    ).saveAsTable(table)


@contextmanager
def recorded(
    spark, settings: Settings, then: Callable[[RunRow], None] | None = None
) -> Iterator[RunRow]:
    """The row of the run inside the block, which fills in what it did (a build that failed
    sets FAILED and its error); appended when the block ends: failed when it raised (the
    exception goes on), killed when interrupted, else succeeded; `then` is given the row
    once appended."""
    marker = settings.dbt_dir / MARKER
    unrecorded = _read_marker(marker)
    row = RunRow(run_id=uuid.uuid4().hex, started_at=_now())
    _write_marker(marker, [*unrecorded, row])
    try:
        yield row
    except KeyboardInterrupt:
        row.status = KILLED
        raise
    except BaseException as exc:
        row.status, row.error = FAILED, exception_sentence(exc)
        raise
    else:
        if row.status == KILLED:
            row.status = SUCCEEDED
    finally:
        row.ended_at = _now()
        # Should the append fail (Spark gone), the next run appends the finished row.
        _write_marker(marker, [*unrecorded, row])
        append(spark, settings, [*unrecorded, row])
        marker.unlink()
        if then is not None:
            then(row)


# What `cdcw status` shows.
RUNS_SHOWN = 10
STATUS_RUN_COLUMNS = (
    "started_at",
    "status",
    "landing_run",
    "files_landed",
    "lines_landed",
    "lines_quarantined",
    "round(unix_timestamp(ended_at) - unix_timestamp(started_at)) as seconds",
    "error",
)
FRESHNESS_COLUMNS = (
    "source_system",
    "source_name",
    "last_landed_at",
    "last_landing_run",
    "seconds_since_landing",
    "commit_lag_seconds",
    "pending_transactions",
    "overdue_transactions",
    "quarantined_in_last_run",
)
# A cell wider than this is cut (an error sentence, a long file name).
CELL_CHARS = 60


def text_table(headers: list[str], rows: list[tuple[Any, ...]]) -> str:
    """Rows as aligned columns under their headers; None as empty."""
    cells = [headers] + [
        [
            ""
            if value is None
            else str(value)[:CELL_CHARS] + ("..." if len(str(value)) > CELL_CHARS else "")
            for value in row
        ]
        for row in rows
    ]
    widths = [max(len(line[index]) for line in cells) for index in range(len(headers))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        for line in cells
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def status(spark, settings: Settings) -> str:
    """The latest runs, newest first, and each source's freshness."""
    parts = []
    table = runs_table(settings)
    if spark.catalog.tableExists(table):
        runs = spark.sql(
            f"select {', '.join(STATUS_RUN_COLUMNS)} from {table} "
            f"order by started_at desc limit {RUNS_SHOWN}"
        )
        parts.append(
            f"latest runs ({table}):\n"
            + text_table(runs.columns, [tuple(r) for r in runs.collect()])
        )
    else:
        parts.append(f"no run recorded yet ({table} does not exist)")
    freshness = f"{settings.mart_schema}.cdc_source_freshness"
    if spark.catalog.tableExists(freshness):
        sources = spark.sql(f"select {', '.join(FRESHNESS_COLUMNS)} from {freshness} order by 1, 2")
        parts.append(
            f"sources ({freshness}):\n"
            + text_table(sources.columns, [tuple(r) for r in sources.collect()])
        )
    else:
        parts.append(f"no source built yet ({freshness} does not exist)")
    return "\n\n".join(parts)
