"""What the last successful `cdcw run` built, so a scheduled run that finds nothing new skips dbt.

A build with no new landing run still costs a minute or more (each incremental model asks what
it holds, the tests run, `cdc_spanner_streams` is rebuilt) and changes nothing. The record is
written only after a build succeeded. It stays while a build catches up landing runs newer than
it (see `outlives_build`), and is removed before any other dbt command starts, so a failed or
interrupted build, or a `cdcw dbt ...` in between, makes the next run build. Anything else a
build depends on (the project's SQL, macros, tests and Python UDFs, the table settings, the
`CDC_*` environment, the dbt arguments, the dbt version) goes into a fingerprint: a change
builds once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from cdc_warehouse.class_archive import CLASS_ARCHIVE
from cdc_warehouse.files import replace_text
from cdc_warehouse.settings import (
    ALWAYS_BUILD,
    INTERPRETED_MAX_LINES,
    METRICS_FILE,
    SPARK_UI,
    SPARK_UI_HOST,
    SPARK_UI_PORT,
)

# Settings that change how a build runs or is watched, not what it writes.
RESULT_NEUTRAL = {
    ALWAYS_BUILD,
    CLASS_ARCHIVE,
    SPARK_UI,
    SPARK_UI_PORT,
    SPARK_UI_HOST,
    METRICS_FILE,
    INTERPRETED_MAX_LINES,
}
# What dbt reads from the project directory (dbt_project.yml's paths), and the UDFs' code.
PROJECT_INPUTS = (
    "dbt_project.yml",
    "models",
    "macros",
    "tests/dbt",
    "seeds",
    "profiles",
    "python_udfs",
)
RECORD_FILE = "last_build.json"


@dataclass(frozen=True)
class BuildRecord:
    landing_run: int
    fingerprint: str
    finished_at: str


def _project_files(project_dir: Path) -> list[Path]:
    files = []
    for name in PROJECT_INPUTS:
        path = project_dir / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files.extend(
                found
                for found in path.rglob("*")
                if found.is_file() and "__pycache__" not in found.parts
            )
    return sorted(files)


def fingerprint(
    project_dir: Path,
    tables_file: Path,
    dbt_build_args: Sequence[str],
    env: Mapping[str, str],
    dbt_version: str,
) -> str:
    """A digest of everything besides the landed data that a build's result depends on."""
    digest = hashlib.sha256()

    def add(label: str, data: bytes) -> None:
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)

    for path in _project_files(project_dir):
        add(str(path.relative_to(project_dir)), path.read_bytes())
    add("tables_file", tables_file.read_bytes() if tables_file.is_file() else b"")
    add("args", json.dumps(list(dbt_build_args)).encode())
    settings = {
        name: value
        for name, value in env.items()
        if (name.startswith("CDC_") and name not in RESULT_NEUTRAL) or name == "SPARK_REMOTE"
    }
    add("env", json.dumps(settings, sort_keys=True).encode())
    add("dbt", dbt_version.encode())
    return digest.hexdigest()


def read(dbt_dir: Path) -> BuildRecord | None:
    try:
        return BuildRecord(**json.loads((dbt_dir / RECORD_FILE).read_text()))
    except (OSError, ValueError, TypeError):
        # Missing, or unreadable (a crash mid-write, a hand edit): build.
        return None


def write(dbt_dir: Path, landing_run: int, digest: str) -> None:
    record = BuildRecord(landing_run, digest, datetime.now(UTC).isoformat(timespec="seconds"))
    dbt_dir.mkdir(parents=True, exist_ok=True)
    replace_text(dbt_dir / RECORD_FILE, json.dumps(asdict(record)))


def forget(dbt_dir: Path) -> None:
    (dbt_dir / RECORD_FILE).unlink(missing_ok=True)


def up_to_date(
    record: BuildRecord | None,
    newest_landing_run: int,
    files_landed: int,
    digest: str,
    dbt_build_args: Sequence[str],
    always_build: bool,
) -> bool:
    """True when this run may skip dbt: it landed nothing, the last successful build saw every
    landing run there is, and nothing it depends on changed. A full refresh always builds."""
    return (
        record is not None
        and files_landed == 0
        and record.landing_run == newest_landing_run
        and record.fingerprint == digest
        and "--full-refresh" not in dbt_build_args
        and not always_build
    )


def outlives_build(
    record: BuildRecord | None,
    digest: str,
    dbt_build_args: Sequence[str],
    always_build: bool,
) -> bool:
    """True when `record` may stay while a build that was not skipped runs: the build only
    catches up landing runs newer than the record (same fingerprint, no full refresh, not
    forced). If it fails or is killed, the next run still finds a landing run newer than the
    record, so it builds; it tests every row of those runs (the interrupted build's included);
    and it builds only the families with lines after the record, as the interrupted one did."""
    return (
        record is not None
        and record.fingerprint == digest
        and "--full-refresh" not in dbt_build_args
        and not always_build
    )
