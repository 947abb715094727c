"""`cdcw`: one process that owns the SparkSession, registers the UDFs and runs dbt in it.

cdcw [-v] COMMAND [ARGS...]    -v, --verbose: Spark's and the JVM's own output on the terminal
                               (else in <warehouse>/_dbt/logs/spark.log)

cdcw run [--every DURATION] [DBT BUILD ARGS...]
                               land new files, then `dbt build` of the families with new
                               lines and what they feed (the scheduled job; the marts' tests
                               check the rows this build rewrote, CDC_TEST_SCOPE=all: all);
                               no build when nothing landed since its last successful one and
                               nothing else changed (CDC_ALWAYS_BUILD=1: build anyway); each
                               run a row of cdc_raw.cdc_runs; --every 30s, 5m, 1h: one warm
                               process that runs whenever new files arrived, until stopped
cdcw status                    the latest runs and each source's freshness
cdcw land                      land new files only
cdcw dbt ARGS...               any dbt command, arguments passed through unchanged
cdcw maintain                  compact every table's small files and remove the files older
                               than CDC_RETENTION_HOURS that no kept version needs
cdcw upgrade                   turn a parquet warehouse of an earlier version into Delta: the
                               landed lines in place, then every model rebuilt from them
cdcw generate-typed-models [--project-dir DIR]
                               write typed models (views and yml, types from each source's
                               schema, cdc_source_columns) for every source table without one,
                               into models/marts/typed/generated/
cdcw pg-snapshot CONNINFO SLOT PUBLICATION[,...] [LANDING_ROOT]
                               create a pgoutput slot with an exported snapshot and write its
                               snapshot files, with psql alone (docs/sources/pgoutput.md)
cdcw bench --scale N [--out F] generate a workload and measure the pipeline against its floor
                               (its own landing root and warehouse; see docs/benchmarks.md)

`cdcw COMMAND --help` describes one command; `cdcw dbt build --help` lists dbt's own options.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cdc_warehouse import build_record, prereqs, run_log, run_summary
from cdc_warehouse.settings import (
    CONNECT,
    LOCAL,
    PROJECT_DIR,
    JarsMissing,
    RebuildNeeded,
    Settings,
    SettingsError,
    WarehouseBusy,
    load_settings,
)
from cdc_warehouse.steps import (
    build_new_landings,
    land_files,
    landed_through,
    run_dbt,
    start_spark,
    warehouse_lock,
)

USAGE = __doc__ or ""
GENERATE_TYPED_MODELS = "generate-typed-models"
PG_SNAPSHOT = "pg-snapshot"
# Each command's own --help: what it does, and for a pass-through one what it passes on.
COMMANDS = {
    "run": (
        "land new files, then `dbt build` of the families with new lines and what they feed; "
        "the arguments after the command's own go to `dbt build` unchanged (`cdcw dbt build "
        "--help` lists them)"
    ),
    "status": (
        "the latest runs (cdc_raw.cdc_runs) and each source's freshness (cdc_source_freshness), "
        "as tables"
    ),
    "land": "land new files only",
    "dbt": (
        "any dbt command in this process's Spark session, arguments passed through unchanged; "
        "`cdcw dbt COMMAND --help` gives dbt's help for COMMAND (without starting Spark)"
    ),
    "maintain": (
        "compact every table's small files and remove the files older than "
        "CDC_RETENTION_HOURS that no kept version needs"
    ),
    "upgrade": (
        "turn a parquet warehouse of an earlier version into Delta: the landed lines in place, "
        "then every model rebuilt from them"
    ),
    GENERATE_TYPED_MODELS: (
        "write typed models (views and yml, types from each source's schema) for every source "
        "table without one, into models/marts/typed/generated/"
    ),
    PG_SNAPSHOT: (
        "create a pgoutput slot with an exported snapshot and write its tables' snapshot files "
        "under the landing root, with psql alone (docs/sources/pgoutput.md)"
    ),
    "bench": (
        "generate a workload and measure the pipeline against its floor (see docs/benchmarks.md)"
    ),
}
# Commands whose further arguments go to dbt (or the benchmark's or pg-snapshot's own parser)
# unchanged.
PASS_THROUGH = ("run", "dbt", "bench", PG_SNAPSHOT)
# Commands whose every argument is passed on: their own help is asked for before any of them.
PASSED_WHOLE = ("dbt", "bench", PG_SNAPSHOT)
HELP_FLAGS = ("-h", "--help")
DBT_USAGE = "cdcw [-v] dbt DBT_COMMAND [DBT ARGS...]"
VERBOSE_HELP = (
    "show Spark's and the JVM's own output (start-up warnings, Spark's log) on the terminal "
    "instead of <warehouse>/_dbt/logs/spark.log"
)


@dataclass(frozen=True)
class Command:
    name: str
    # What follows a pass-through command, in order.
    passed_on: list[str]
    project_dir: Path = PROJECT_DIR
    # -v/--verbose: Spark's own output on the terminal, not in its log file.
    verbose: bool = False
    # `cdcw run --every`: seconds between the listings of a continuous process.
    every: int | None = None


def command_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdcw",
        description=USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
        usage="cdcw [-h] [-v] COMMAND [ARGS...]",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help=VERBOSE_HELP)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, description in COMMANDS.items():
        # The benchmark's and pg-snapshot's -h are their parsers'; dbt's is printed by `execute`.
        command = commands.add_parser(
            name,
            prog=f"cdcw {name}",
            help=description,
            description=description,
            add_help=name not in PASSED_WHOLE,
            allow_abbrev=False,
        )
        if name == "dbt":
            command.usage = DBT_USAGE
        if name in PASSED_WHOLE:
            continue
        # SUPPRESS: a subcommand without -v leaves `cdcw -v COMMAND`'s flag as it is.
        command.add_argument(
            "-v", "--verbose", action="store_true", default=argparse.SUPPRESS, help=VERBOSE_HELP
        )
        if name == "run":
            command.usage = "cdcw run [-h] [-v] [--every DURATION] [DBT BUILD ARGS...]"
            command.add_argument(
                "--every",
                type=duration_seconds,
                metavar="DURATION",
                help=(
                    "keep running: one process (its Spark session and dbt's parse of the "
                    "project kept warm) that lists the landing root at this interval (30s, 5m, "
                    "1h) and runs whenever new files arrived, or again after a failed run; "
                    "SIGTERM or Ctrl-C stops it once its current run has ended"
                ),
            )
        if name == GENERATE_TYPED_MODELS:
            command.add_argument("--project-dir", type=Path, default=PROJECT_DIR)
    return parser


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(text: str) -> int:
    """`30s`, `5m`, `1h` as seconds."""
    match = re.fullmatch(r"(\d+)([smh])", text.strip())
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(
            f"a duration is a whole number of seconds, minutes or hours, e.g. 30s, 5m or 1h, "
            f"not {text!r}"
        )
    return int(match.group(1)) * DURATION_UNITS[match.group(2)]


class UsageError(Exception):
    """Arguments no command takes; the message says why (exit 2)."""


def parse_command(argv: Sequence[str]) -> Command:
    """The command and what it passes on; UsageError for arguments it does not take. Help
    (`-h`, `--help`) is printed here and ends with SystemExit(0)."""
    name = next((arg for arg in argv if not arg.startswith("-")), None)
    if name is not None and name not in COMMANDS:
        raise UsageError(f"unknown command {name!r}")
    parser = command_parser()
    error = io.StringIO()
    try:
        with contextlib.redirect_stderr(error):
            options, extra = parser.parse_known_args(list(argv))
    except SystemExit as stop:
        if stop.code == 0:  # --help, printed
            raise
        raise UsageError(error.getvalue().strip().splitlines()[-1]) from None
    if options.command is None:
        raise UsageError("a command is needed")
    if extra and options.command not in PASS_THROUGH:
        raise UsageError(f"`cdcw {options.command}` takes no {' '.join(extra)}")
    if options.command == "dbt" and (not extra or extra[0] in HELP_FLAGS):
        if not extra:
            raise UsageError("`cdcw dbt` needs a dbt command, e.g. `cdcw dbt build`")
        print(f"usage: {DBT_USAGE}\n\n{COMMANDS['dbt']}")
        raise SystemExit(0)
    return Command(
        options.command,
        extra,
        getattr(options, "project_dir", PROJECT_DIR),
        verbose=options.verbose,
        every=getattr(options, "every", None),
    )


def dbt_help(args: Sequence[str], settings: Settings) -> int:
    """dbt's own help for a command, under the name it is run by here; no Spark, no work."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        ok = run_dbt(args, settings)
    print(printed.getvalue().replace("Usage: cli ", "Usage: cdcw dbt ", 1), end="")
    return 0 if ok else 2


def execute(argv: Sequence[str], settings: Settings) -> int:
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        command = parse_command(argv)
    except UsageError as problem:
        print(f"cdcw: {problem}\n\n{USAGE}", file=sys.stderr)
        return 2
    except SystemExit as stop:  # --help
        return int(stop.code or 0)
    if command.name == "bench":
        from cdc_warehouse.bench import benchmark

        try:
            return benchmark.main(command.passed_on)
        except SystemExit as stop:  # its own parser's help or usage error
            return int(stop.code or 0)
    if command.name == PG_SNAPSHOT:
        from cdc_warehouse import pg_snapshot

        try:
            return pg_snapshot.main(
                command.passed_on,
                prog=f"cdcw {PG_SNAPSHOT}",
                default_landing_root=settings.landing_root,
            )
        except SystemExit as stop:  # its own parser's help or usage error
            return int(stop.code or 0)
    if command.name == "dbt" and any(arg in HELP_FLAGS for arg in command.passed_on):
        return dbt_help(command.passed_on, settings)
    with warehouse_lock(settings):
        from cdc_warehouse.metastore_locks import metastore_run_lock
        from cdc_warehouse.warehouse_lease import warehouse_lease

        spark = start_spark(settings, verbose=command.verbose)
        try:
            with metastore_run_lock(spark, settings), warehouse_lease(spark, settings):
                return run_command(spark, command, settings)
        finally:
            if settings.target != LOCAL:
                # End the cluster application (or Connect session) in order, rather than at
                # interpreter exit, when a standalone master may still relaunch executors.
                spark.stop()


def run_command(spark, command: Command, settings: Settings) -> int:
    """A command's work, once its session has started under the warehouse's locks."""
    from cdc_warehouse import build_versions, maintenance
    from cdc_warehouse.table_format import tag_commits

    if command.name == "maintain":
        maintenance.report(maintenance.maintain(spark, settings), settings)
        return 0
    if command.name == GENERATE_TYPED_MODELS:
        return generate_typed_models(spark, command.project_dir, settings)
    if command.name == "upgrade":
        for table in maintenance.convert_landed_lines(spark, settings):
            print(f"cdcw: {table} is a Delta table now", file=sys.stderr)
        build_record.forget(settings.dbt_dir)
        tag_commits(spark, landed_through(spark, settings))
        if not run_dbt(UPGRADE_BUILD, settings):
            return 1
        build_versions.record_rebuild(spark, settings, UPGRADE_BUILD)
        return 0
    if command.name == "dbt":
        # A build or run adds to the stored tables as `cdcw run` does (build_versions).
        dbt_command, *dbt_args = command.passed_on
        builds = dbt_command in DBT_BUILDS
        if builds:
            build_versions.check(spark, settings, dbt_args)
        build_record.forget(settings.dbt_dir)
        tag_commits(spark, landed_through(spark, settings))
        if not run_dbt(command.passed_on, settings):
            return 1
        if builds:
            build_versions.record_rebuild(spark, settings, dbt_args)
        return 0
    if command.name == "status":
        print(run_log.status(spark, settings))
        return 0
    if command.name == "land":
        land_files(spark, settings)
        return 0
    if command.every is not None:
        return run_every(spark, command.passed_on, command.every, settings)
    return recorded_run(spark, command.passed_on, settings)


# `cdcw upgrade`'s rebuild of every model.
UPGRADE_BUILD = ("build", "--full-refresh")
# The dbt commands that write models.
DBT_BUILDS = ("build", "run")


def recorded_run(spark, build_args: list[str], settings: Settings) -> int:
    """One scheduled run, its row appended to the run log (and its metrics written)."""
    with run_log.recorded(spark, settings, then=run_metrics_writer(spark, settings)) as run:
        return 0 if scheduled_run(spark, build_args, settings, run) else 1


STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def run_every(spark, build_args: list[str], every: int, settings: Settings) -> int:
    """Continuous mode: one run whenever the landing root's listing changed since the last run,
    the last run failed, or the partial-line wait has passed since it (a held-back last line
    lands on time); at most one per interval. A stop signal ends the wait at once, or the
    current run once it has ended (its commits are never cut); the exit code is then 0."""
    from cdc_warehouse.landing import landing_listing
    from cdc_warehouse.steps import keep_parsed_project

    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in STOP_SIGNALS}
    print(
        f"cdcw: running every {every}s on {settings.landing_root}; SIGTERM or Ctrl-C stops",
        file=sys.stderr,
    )
    try:
        listed: frozenset | None = None
        failed = False
        last_run = float("-inf")
        while not stop.is_set():
            tick = time.monotonic()
            listing = landing_listing(settings.landing_root)
            waited = tick - last_run >= settings.partial_line_wait_seconds
            if listing != listed or failed or waited:
                listed, last_run = listing, tick
                keep_parsed_project(settings)
                try:
                    failed = recorded_run(spark, build_args, settings) != 0
                except RebuildNeeded:  # no later interval can build: the process stops
                    raise
                except Exception as exc:  # recorded as failed; retried at the next interval
                    print(f"cdcw: {failure_sentence(exc, settings)}", file=sys.stderr)
                    failed = True
            stop.wait(max(0.0, tick + every - time.monotonic()))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("cdcw: stopped", file=sys.stderr)
    return 0


def run_metrics_writer(spark, settings: Settings) -> Callable[[run_log.RunRow], None] | None:
    """What writes a run's metrics to CDC_METRICS_FILE, if set."""
    from cdc_warehouse import metrics

    path = settings.metrics_file
    if path is None:
        return None
    return lambda run: metrics.write(spark, settings, run, path)


def scheduled_run(spark, build_args: list[str], settings: Settings, run: run_log.RunRow) -> bool:
    """`cdcw run`'s work: land, build what the new lines feed, and say what it did, in `run`
    (its row of the run log) as well."""
    from cdc_warehouse.table_format import tag_commits

    landing_started = time.monotonic()
    report = land_files(spark, settings)
    run.stage_seconds["land"] = round(time.monotonic() - landing_started, 3)
    run.landing_run = report.newest_run
    run.files_landed, run.lines_landed = report.files, report.lines
    tag_commits(spark, report.newest_run)
    # Only a run that landed files reports what it wrote: a run that finds nothing new reads no
    # table history.
    versions_before = run_summary.mart_versions(spark, settings.mart_schema) if report.files else {}
    built = build_new_landings(spark, report, build_args, settings)
    run_results = settings.dbt_dir / "target" / "run_results.json"
    run.stage_seconds |= run_log.dbt_stage_seconds(run_results, run.started_at)
    if not built:
        run.status, run.error = run_log.FAILED, run_log.dbt_failure(run_results)
        return False
    if report.files:
        counts = run_summary.run_counts(spark, settings.mart_schema, report, versions_before)
        run.lines_quarantined = counts.quarantined
        run.versions_written = counts.history.inserted + counts.history.updated
        run.versions_removed = counts.history.deleted
        run.keys_written = counts.current.inserted + counts.current.updated
        run.keys_deleted = counts.current.deleted
        print(run_summary.summary(report, counts), file=sys.stderr)
    return True


def generate_typed_models(spark, project_dir: Path, settings: Settings) -> int:
    from cdc_warehouse import typed_models

    written = typed_models.generate(spark, settings.internal_schema, project_dir)
    for path in written:
        print(f"cdcw: wrote {path}", file=sys.stderr)
    if not written:
        print("cdcw: every source table has a typed model", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"cdcw: {exc}", file=sys.stderr)
        return 2
    # A Spark Connect client starts no JVM: Java is the server's business.
    problems = prereqs.problems(java=settings.target != CONNECT)
    if problems:
        for problem in problems:
            print(f"cdcw: {problem}", file=sys.stderr)
        return 1
    try:
        return execute(list(sys.argv[1:] if argv is None else argv), settings)
    except WarehouseBusy as exc:
        print(f"cdcw: {exc}", file=sys.stderr)
        return 3
    except JarsMissing as exc:
        print(f"cdcw: {exc}", file=sys.stderr)
        return 1
    except RebuildNeeded as exc:
        print(f"cdcw: {exc}", file=sys.stderr)
        return REBUILD_NEEDED
    except Exception as exc:  # anything else: one sentence here, the traceback in a file
        print(f"cdcw: {failure_sentence(exc, settings)}", file=sys.stderr)
        return UNEXPECTED_FAILURE


# Exit code of a failure no rule foresaw (a Spark or file system error, a bug).
UNEXPECTED_FAILURE = 4
# Exit code of a build refused because the warehouse holds another encoding (build_versions).
REBUILD_NEEDED = 5


def failure_sentence(exc: BaseException, settings: Settings) -> str:
    """What failed, in one sentence, and where its traceback was written (beside dbt's logs,
    replaced by the next failure)."""
    log = settings.dbt_dir / "logs" / "cdcw-failure.log"
    try:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text("".join(traceback.format_exception(exc)))
        where = f"the traceback is in {log}"
    except OSError:
        where = "its traceback could not be written"
    return f"failed with {run_log.exception_sentence(exc)} ({where})"


if __name__ == "__main__":
    sys.exit(main())
