"""A run's metrics in Prometheus' text format, for node_exporter's textfile collector: written
after each run (single or a cycle of `--every`) to CDC_METRICS_FILE, beside and renamed into
place, so the collector never reads half a file."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from cdc_warehouse.files import replace_text
from cdc_warehouse.run_log import FAILED, KILLED, SUCCEEDED, RunRow
from cdc_warehouse.settings import Settings

if TYPE_CHECKING:
    from pathlib import Path

RUN_STATUSES = (SUCCEEDED, FAILED, KILLED)
# Each source's ages in cdc_source_freshness (column: metric, help).
SOURCE_AGES = {
    "seconds_since_landing": (
        "cdcw_source_landing_age_seconds",
        "seconds since the source's newest file landed",
    ),
    "commit_lag_seconds": (
        "cdcw_source_commit_lag_seconds",
        "seconds since the commit of the source's newest change in the marts",
    ),
}


def _label_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _gauge(name: str, help_text: str, samples: Iterable[tuple[dict[str, str], float]]) -> str:
    lines = [f"# HELP {name} {help_text}", f"# TYPE {name} gauge"]
    for labels, value in samples:
        label_text = ",".join(f'{key}="{_label_value(text)}"' for key, text in labels.items())
        lines.append(f"{name}{{{label_text}}} {value}" if labels else f"{name} {value}")
    return "\n".join(lines)


def metrics_text(run: RunRow, sources: list[tuple[str, str, int | None, int | None]]) -> str:
    """The run's metrics and, per source (source_system, source_name, seconds since landing,
    commit lag seconds), its ages; an age not known yet is left out."""
    families = [
        _gauge("cdcw_run_duration_seconds", "seconds the last run took", [({}, run.seconds or 0)]),
        _gauge(
            "cdcw_run_status",
            "the last run's status: 1 for the one it ended with",
            [({"status": status}, int(run.status == status)) for status in RUN_STATUSES],
        ),
        _gauge("cdcw_run_files_landed", "files the last run landed", [({}, run.files_landed or 0)]),
        _gauge("cdcw_run_lines_landed", "lines the last run landed", [({}, run.lines_landed or 0)]),
        _gauge(
            "cdcw_run_lines_quarantined",
            "lines of the last run's landing quarantined",
            [({}, run.lines_quarantined or 0)],
        ),
    ]
    for index, (metric, help_text) in enumerate(SOURCE_AGES.values()):
        samples = []
        for system, name, *ages in sources:
            age = ages[index]
            if age is not None:
                samples.append(({"source_system": system, "source_name": name}, float(age)))
        families.append(_gauge(metric, help_text, samples))
    return "\n".join(families) + "\n"


def source_ages(spark, settings: Settings) -> list[tuple[str, str, int | None, int | None]]:
    view = f"{settings.mart_schema}.cdc_source_freshness"
    if not spark.catalog.tableExists(view):
        return []
    rows = spark.sql(
        f"select source_system, source_name, {', '.join(SOURCE_AGES)} from {view}"
    ).collect()
    return [tuple(row) for row in rows]


def write(spark, settings: Settings, run: RunRow, path: Path) -> None:
    """The run's metrics, also when the sources' ages cannot be read (the warehouse's storage
    unreachable, most likely what failed the run): then without them, so that an alert on the
    run's status still sees the failure."""
    try:
        sources = source_ages(spark, settings)
    except Exception:  # any error of the read: the run's own metrics matter more
        sources = []
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_text(path, metrics_text(run, sources))
