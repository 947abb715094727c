"""The steps `cdcw`'s commands, the benchmark and the Thrift server share: the warehouse's
lock, the session with the UDFs registered, landing, and the scheduled job's build (which
families, which rows its tests read, skipped when nothing changed)."""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_warehouse import build_record
from cdc_warehouse.settings import (
    ALWAYS_BUILD,
    PROJECT_DIR,
    Settings,
    WarehouseBusy,
)

if TYPE_CHECKING:
    from cdc_warehouse.landing import LandingReport
    from python_udfs.families import Family


def busy_message(settings: Settings, holder: str) -> str:
    if settings.embedded_metastore:
        return (
            f"another cdcw process (pid {holder}) is using the warehouse "
            f"{settings.warehouse_dir}; the embedded metastore allows one at a time"
        )
    return (
        f"another cdcw process (pid {holder}) is using {settings.warehouse_dir} (dbt target and "
        "logs), one at a time; give each concurrent run its own CDC_STATE_DIR"
    )


def shared_warehouse_message(settings: Settings, holder: str) -> str:
    return (
        f"another cdcw process ({holder}) is using the warehouse {settings.shared_warehouse_dir} "
        f"under the same schema prefix ({settings.schema_prefix or 'none'}) from another "
        "CDC_STATE_DIR; one run at a time per warehouse and prefix"
    )


@contextmanager
def warehouse_lock(settings: Settings) -> Iterator[None]:
    """The embedded Derby metastore admits one process; a second run stops at once with a
    clear message instead of a Derby stack trace, and touches nothing. With a shared metastore
    (or a Connect server) runs may overlap, each with its own local directory: dbt's target
    directory is still one process's. A warehouse directory apart from the installation's
    carries a lock of its own, per schema prefix: two installations (each with its own
    metastore, or one shared) never write the same tables at once."""
    pid = str(os.getpid())
    with _held_lock(
        settings.warehouse_dir / ".cdcw.lock", pid, lambda h: busy_message(settings, h)
    ):
        shared = settings.shared_warehouse_dir
        if shared is None:
            yield
            return
        lock = shared / f".cdcw-{settings.schema_prefix or 'tables'}.lock"
        owner = f"pid {pid}, CDC_STATE_DIR {settings.warehouse_dir}"
        with _held_lock(lock, owner, lambda h: shared_warehouse_message(settings, h)):
            yield


@contextmanager
def _held_lock(lock_path: Path, owner: str, busy: Callable[[str], str]) -> Iterator[None]:
    """An exclusive lock on `lock_path` that names its owner; WarehouseBusy if held."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "unknown"
            raise WarehouseBusy(busy(holder)) from None
        handle.seek(0)
        handle.truncate()
        handle.write(owner)
        handle.flush()
        try:
            yield
        finally:
            handle.seek(0)
            handle.truncate()
            fcntl.flock(handle, fcntl.LOCK_UN)


def dbt_args(args: Sequence[str], settings: Settings) -> list[str]:
    """Point dbt at this project and its profile unless the caller already did."""
    full = list(args)
    if "--project-dir" not in full:
        full += ["--project-dir", str(PROJECT_DIR)]
    if "--profiles-dir" not in full:
        full += ["--profiles-dir", str(PROJECT_DIR / "profiles")]
    return full


# dbt's parse of the project, kept by a process that builds again and again (`cdcw run --every`)
# for every dbt command it runs, with the digest of the project it was parsed from; empty: each
# command parses the project (from dbt's partial-parse cache).
_kept_parse: dict[str, Any] = {}


def keep_parsed_project(settings: Settings) -> None:
    """Parse the project now, unless the kept parse is of the project as it is; later dbt
    commands of this process reuse it."""
    from dbt.cli.main import dbtRunner

    digest = build_fingerprint((), settings)
    if _kept_parse.get("digest") == digest:
        return
    _kept_parse.clear()
    _dbt_paths(settings)
    result = dbtRunner().invoke(dbt_args(["parse"], settings))
    if result.success:
        _kept_parse.update(digest=digest, manifest=result.result)


def _dbt_paths(settings: Settings) -> None:
    os.environ["DBT_TARGET_PATH"] = str(settings.dbt_dir / "target")
    os.environ["DBT_LOG_PATH"] = str(settings.dbt_dir / "logs")


def run_dbt(args: Sequence[str], settings: Settings) -> bool:
    from dbt.cli.main import dbtRunner

    _dbt_paths(settings)
    result = dbtRunner(manifest=_kept_parse.get("manifest")).invoke(dbt_args(args, settings))
    if result.exception is not None:
        print(f"cdcw: dbt failed: {result.exception}", file=sys.stderr)
    return bool(result.success)


def start_spark(settings: Settings, verbose: bool = False):
    """The session with the UDFs registered; `verbose`: Spark's start-up output on the terminal
    (spark.build_session)."""
    from cdc_warehouse.spark import build_session, ship_python_udfs
    from python_udfs.registry import register_all

    spark = build_session(settings, verbose=verbose)
    ship_python_udfs(spark, settings)
    register_all(spark, settings.tables_file)
    return spark


def landed_through(spark, settings: Settings) -> int:
    """The newest landing run in the warehouse (0 before the first)."""
    from cdc_warehouse.landing import RawTables, newest_landing_run

    tables = RawTables(settings.raw_schema)
    return newest_landing_run(spark, tables) if spark.catalog.tableExists(tables.manifest) else 0


# How many unread files a run names in its output (the table holds them all).
UNREAD_FILES_SHOWN = 10


def land_files(spark, settings: Settings) -> LandingReport:
    from cdc_warehouse.landing import RawTables, land
    from cdc_warehouse.run_summary import landing_progress_line

    tables = RawTables(settings.raw_schema)
    report = land(
        spark,
        tables,
        settings.landing_root,
        settings.partial_line_wait_seconds,
        progress=lambda landed: print(landing_progress_line(landed), file=sys.stderr),
    )
    root = settings.landing_root
    landed = (
        f"landing run {report.landing_run}: {report.files} new or grown files, {report.lines} "
        f"lines from {root}"
        if report.files
        else f"no new files in {root} (the newest landing run is {report.newest_run})"
    )
    print(f"cdcw: {landed}", file=sys.stderr)
    for path, reason in report.refused:
        print(
            f"cdcw: warning: {path.relative_to(root)}: {reason}; a row in cdc_quarantine names it",
            file=sys.stderr,
        )
    if report.unread:
        shown = [str(path.relative_to(root)) for path in report.unread[:UNREAD_FILES_SHOWN]]
        more = len(report.unread) - len(shown)
        print(
            f"cdcw: {len(report.unread)} files not read (a kind or a place this version does "
            f"not read), left in place: {', '.join(shown)}"
            + (f" and {more} more" if more else "")
            + f"; all of them in {tables.unread}",
            file=sys.stderr,
        )
    return report


# The session setting through which `cdcw run` tells the marts' tests which rows its build wrote
# (macros/marts/tested_from_landing_run.sql): a setting rather than a dbt var, so that dbt's
# parse of the project stays valid from one run to the next.
TEST_SCOPE_SETTING = "cdc.test_from_landing_run"


def tested_from_run(
    built_through: int | None, dbt_build_args: Sequence[str], test_every_row: bool = False
) -> int | None:
    """`cdcw run` tests only what its build rewrites (macros/marts/tested_from_landing_run.sql):
    rows of landing runs after `built_through`, the newest run cdc_history reflected before the
    build. A full refresh rewrites everything, so it tests everything; so does
    CDC_TEST_SCOPE=all (`test_every_row`). None: every row."""
    if built_through is None or "--full-refresh" in dbt_build_args or test_every_row:
        return None
    return built_through + 1


def set_session_setting(spark, name: str, value: str | None) -> None:
    """What `cdcw run` tells its build's macros through a session setting, unset for None."""
    if value is None:
        spark.conf.unset(name)
    else:
        spark.conf.set(name, value)


# The session setting through which `cdcw run` tells the models that union every family's rows
# since their watermark which families its build processes (macros/utils/families_in_build.sql):
# the other families have no line after the last successful build, which read all of theirs.
BUILD_FAMILIES_SETTING = "cdc.build_families"

# The session setting through which `cdcw run` tells the models whose rows are rare the landing
# run through which its last successful build of the same project and arguments went
# (macros/utils/landing_runs_processed.sql): that build's models read every line through it.
BUILT_THROUGH_SETTING = "cdc.built_through"


def processed_floor(
    last: build_record.BuildRecord | None, digest: str, dbt_build_args: Sequence[str]
) -> int | None:
    """The landing run through which every model has processed the lines, whatever its own
    newest row: the last successful build's, when this build builds the same project with the
    same arguments (a forced one too). None for a full refresh or without such a build. A
    failed or killed build writes no record, so this is never past what a model holds."""
    if last is None or last.fingerprint != digest or "--full-refresh" in dbt_build_args:
        return None
    return last.landing_run


def history_built_through(spark, settings: Settings) -> int | None:
    """The newest landing run cdc_history has processed: the watermark its last MERGE recorded,
    else its rows' newest (a scan)."""
    from cdc_warehouse.table_format import recorded_watermark

    history = f"{settings.mart_schema}.cdc_history"
    if not spark.catalog.tableExists(history):
        return None
    recorded = recorded_watermark(spark, history)
    if recorded is not None:
        return recorded
    return spark.sql(f"select max(last_landing_run) from {history}").first()[0]


# What a key without a real one stands on, as the run's warning says it.
KEYLESS_BASIS_TEXT = {
    "row_id": "its Oracle ROWID, which changes when the row moves",
    "whole_row": "the whole row, so an update leaves the old row live",
}


def tables_without_a_real_key(spark, settings: Settings, after_run: int) -> list[tuple[str, ...]]:
    """(source_name, source_table, key_basis) of the Datastream tables whose events of landing
    runs after `after_run` had neither a declared key nor one the source named."""
    from python_udfs.datastream import KEYLESS_BASES

    events = f"{settings.internal_schema}.int_datastream__events"
    if not spark.catalog.tableExists(events) or "key_basis" not in spark.table(events).columns:
        return []
    bases = ", ".join(f"'{basis}'" for basis in KEYLESS_BASES)
    rows = spark.sql(
        f"select distinct source_name, source_table, key_basis from {events} "
        f"where landing_run > {after_run} and key_basis in ({bases}) order by 1, 2, 3"
    ).collect()
    return [tuple(row) for row in rows]


def keyless_tables_warning(tables: list[tuple[str, ...]], tables_file: Path) -> str:
    named = "; ".join(
        f"{source_name} {source_table} (keyed by {KEYLESS_BASIS_TEXT[basis]})"
        for source_name, source_table, basis in tables
    )
    count = f"{len(tables)} Datastream table" + ("s" if len(tables) > 1 else "")
    return (
        f"cdcw: warning: {count} without a real key: {named}; declare their keys in {tables_file}"
    )


def tested_through(spark, settings: Settings, last: build_record.BuildRecord | None) -> int | None:
    """The newest landing run whose rows a successful build has tested: cdc_history's newest
    run, unless a build that wrote it was interrupted or failed (then `last`, the record of the
    last successful build, is older or gone, and those rows are tested again)."""
    built = history_built_through(spark, settings)
    if last is None or built is None:
        return None
    return min(built, last.landing_run)


# dbt's unit tests prove the SQL's rules on inputs of their own, not the landed data: the
# scheduled job's build leaves them out unless its caller chose the resource types itself
# (`cdcw dbt test --select test_type:unit` runs them).
RESOURCE_TYPE_CHOICES = ("--resource-type", "--resource-types")


def without_unit_tests(build_args: Sequence[str]) -> list[str]:
    if any(arg.split("=", 1)[0] in RESOURCE_TYPE_CHOICES for arg in build_args):
        return list(build_args)
    return [*build_args, "--exclude-resource-type", "unit_test"]


# Spark's settings for a build of few rows: expressions interpreted, no code generated and
# compiled for each query (docs/decisions/018).
INTERPRETED_EXECUTION = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}


def builds_few_lines(
    last: build_record.BuildRecord | None,
    digest: str,
    report: LandingReport,
    build_args: Sequence[str],
    settings: Settings,
) -> bool:
    """Whether the build reads no more than the run's new lines, and those are few: its last
    successful build, of the same project and arguments (so no model is new), went through the
    landing run before this one. Not for a full refresh, nor when CDC_SQL_CONF sets code
    generation itself."""
    return (
        last is not None
        and last.fingerprint == digest
        and last.landing_run >= report.landing_run - 1
        and "--full-refresh" not in build_args
        and settings.interpreted_max_lines > 0
        and report.lines <= settings.interpreted_max_lines
        and not any(key in INTERPRETED_EXECUTION for key, _ in settings.sql_conf)
    )


def build(
    spark,
    build_args: Sequence[str],
    settings: Settings,
    tested_through_run: int | None,
    families: Sequence[Family] | None = None,
    processed_through: int | None = None,
    interpreted: bool = False,
) -> bool:
    """`dbt build` as the scheduled job runs it; the marts' tests read the rows of landing runs
    after `tested_through_run` (None: every row), the models that union the families read those
    of `families` (None: all), the models whose rows are rare read lines after
    `processed_through` at most (None: after their newest row); `interpreted`: with
    INTERPRETED_EXECUTION."""
    from_run = tested_from_run(tested_through_run, build_args, settings.test_every_row)
    chosen = None if families is None else ",".join(family.name for family in families)
    settings_told: dict[str, str | None] = {
        TEST_SCOPE_SETTING: None if from_run is None else str(from_run),
        BUILD_FAMILIES_SETTING: chosen,
        BUILT_THROUGH_SETTING: None if processed_through is None else str(processed_through),
    }
    if interpreted:
        settings_told.update(INTERPRETED_EXECUTION)
    for name, value in settings_told.items():
        set_session_setting(spark, name, value)
    try:
        return run_dbt(["build", *without_unit_tests(build_args)], settings)
    finally:
        for name in settings_told:
            set_session_setting(spark, name, None)


# dbt arguments that choose the nodes a build makes.
NODE_SELECTIONS = ("--select", "-s", "--models", "-m", "--exclude", "--selector")
# ... with which the caller chose the nodes itself (or asked for all of them).
NODE_CHOICES = (*NODE_SELECTIONS, "--full-refresh")


def families_to_build(
    spark,
    settings: Settings,
    last: build_record.BuildRecord | None,
    digest: str,
    build_args: Sequence[str],
) -> list[Family] | None:
    """The families with lines after the last successful build, which alone a build needs to
    build with everything downstream of them (the shared change log, the marts, their tests): a
    family's models hold their own watermark, so one with nothing new has nothing to do, and
    that build read all its lines. None (every node) when there is no such build, anything else
    changed since (its fingerprint), the caller chose the nodes, or every family (or none) has
    new lines."""
    from cdc_warehouse.landing import RawTables, families_landed_after
    from python_udfs.families import FAMILIES

    if (
        last is None
        or last.fingerprint != digest
        or any(arg.split("=", 1)[0] in NODE_CHOICES for arg in build_args)
    ):
        return None
    families = families_landed_after(spark, RawTables(settings.raw_schema), last.landing_run)
    if not families or len(families) == len(FAMILIES):
        return None
    return families


# The typed models of one family's tables (meta.cdc_source in their yml, typed_table.sql).
TYPED_MODELS_OF = "config.meta.cdc_source.source_system:{family}"


def families_with_typed_models(manifest: Path) -> set[str]:
    """The families some typed model reads a table of, from the manifest dbt wrote (empty when
    there is none to read)."""
    try:
        nodes = json.loads(manifest.read_text())["nodes"].values()
    except (OSError, ValueError, KeyError, AttributeError):
        return set()
    typed = set()
    for node in nodes:
        source = (node.get("config") or {}).get("meta", {}).get("cdc_source")
        if node.get("resource_type") == "model" and isinstance(source, dict):
            typed.add(str(source.get("source_system")))
    return typed


def family_selection(families: Sequence[Family] | None, typed_families: set[str]) -> list[str]:
    """dbt arguments that build `families` and everything downstream of them, except the typed
    models of the other families' tables (of `typed_families`, the families that have any: a
    criterion that matches nothing is a dbt warning, an error under --warn-error): a build of
    `families` writes no row of those tables, so their views would compile to what they are and
    their tests would read no row."""
    from python_udfs.families import FAMILIES

    if families is None:
        return []
    selection = ["--select", " ".join(f"{family.models.staging}+" for family in families)]
    idle = [
        family.name
        for family in FAMILIES
        if family not in families and family.name in typed_families
    ]
    if idle:
        selection += ["--exclude", " ".join(TYPED_MODELS_OF.format(family=name) for name in idle)]
    return selection


def build_fingerprint(build_args: Sequence[str], settings: Settings) -> str:
    from dbt.version import __version__ as dbt_version

    return build_record.fingerprint(
        PROJECT_DIR, settings.tables_file, build_args, os.environ, dbt_version
    )


def build_new_landings(
    spark, report: LandingReport, build_args: Sequence[str], settings: Settings
) -> bool:
    """The scheduled job's build, skipped when the last one saw everything there is; refused
    (RebuildNeeded) when the warehouse was built with another encoding (build_versions)."""
    from cdc_warehouse import build_versions

    digest = build_fingerprint(build_args, settings)
    last = build_record.read(settings.dbt_dir)
    if last is not None and build_record.up_to_date(
        last, report.newest_run, report.files, digest, build_args, settings.always_build
    ):
        print(
            f"cdcw: nothing new since the build of {last.finished_at} (landing run "
            f"{last.landing_run}, same project and arguments): the marts are current, dbt not "
            f"run ({ALWAYS_BUILD}=1 builds anyway)",
            file=sys.stderr,
        )
        return True
    build_versions.check(spark, settings, build_args)
    if not build_record.outlives_build(last, digest, build_args, settings.always_build):
        build_record.forget(settings.dbt_dir)
    families = families_to_build(spark, settings, last, digest, build_args)
    # Read only for a build of some families, from the last build's manifest: of this project,
    # as the build record's fingerprint is this one's.
    typed_families = (
        set()
        if families is None
        else families_with_typed_models(settings.dbt_dir / "target" / "manifest.json")
    )
    chosen = [*build_args, *family_selection(families, typed_families)]
    floor = processed_floor(last, digest, build_args)
    interpreted = builds_few_lines(last, digest, report, build_args, settings)
    tested = tested_through(spark, settings, last)
    if not build(spark, chosen, settings, tested, families, floor, interpreted):
        return False
    build_versions.record_rebuild(spark, settings, build_args)
    build_record.write(settings.dbt_dir, report.newest_run, digest)
    keyless = tables_without_a_real_key(spark, settings, last.landing_run if last else 0)
    if keyless:
        print(keyless_tables_warning(keyless, settings.tables_file), file=sys.stderr)
    return True
