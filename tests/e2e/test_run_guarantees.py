"""Atomic runs and snapshot reads (Delta Lake): `cdcw run` killed with SIGKILL while it lands,
and while it writes the change log, history or current state, leaves every table as it was or
as the finished run would leave it; the next run completes the work, and the
marts, the raw lines and the quarantine then equal those of runs never interrupted. A reader in
another process, checksumming cdc_current and cdc_history in a loop all the while, only ever
sees the state before or after those runs, and the marts as of each landing run (time travel)
are the states it saw.

The bundled sample data (every family) is cut into three waves, of which the first two arrive;
the second holds only Debezium and PostgreSQL lines, so its runs build only those families and
what they feed. The reference pipeline runs the waves in this process; the interrupted one
runs `cdcw` as child processes, the second wave's killed at each point in turn. `cdcw
maintain` changes no row, and a parquet warehouse of an earlier version becomes Delta without
landing its files again, its full refresh equal to the reference's incremental runs."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline
from tests.e2e.delta_reader import CHECKSUM
from tests.e2e.marts import current_facts, history_facts

SAMPLE = PROJECT_DIR / "sample_data" / "landing"
WAVES = 3
# Families with no lines in the second wave (their second slice comes with the third).
IDLE_IN_SECOND_WAVE = ("spanner", "datastream")
MARTS = ("cdc_current", "cdc_history")
RAW_TABLES = ("spanner_lines", "datastream_lines", "debezium_lines", "pgoutput_lines")
CDCW = Path(sys.executable).parent / "cdcw"
READER = Path(__file__).parent / "delta_reader.py"
# The raw tables and the manifest as versions before Delta Lake created them.
PARQUET_RAW_TABLES = [
    f"""create table cdc_raw.{table} (
          source_name string, file_path string, line_number bigint, line string,
          load_error string, landed_at timestamp, landing_run bigint)
        using parquet partitioned by (landing_run)"""
    for table in RAW_TABLES
] + [
    """create table cdc_raw.landed_files (
         family string, source_name string, file_path string, size_bytes bigint,
         landed_at timestamp, landing_run bigint)
       using parquet"""
]
KILL_TIMEOUT_SECONDS = 600


def sample_waves() -> list[list[Path]]:
    """Each source directory's files in path order, cut into three consecutive slices: a slot's
    or a partition's files keep their order across waves."""
    waves: list[list[Path]] = [[] for _ in range(WAVES)]
    for family in sorted(SAMPLE.iterdir()):
        for source in sorted(family.iterdir()):
            files = sorted(path for path in source.rglob("*") if path.is_file())
            for index, path in enumerate(files):
                wave = index * WAVES // len(files)
                if wave == 1 and family.name in IDLE_IN_SECOND_WAVE:
                    wave = 2
                waves[wave].append(path)
    return waves


def last_dbt_results(pipeline: Pipeline) -> dict[str, Any]:
    return json.loads((pipeline.warehouse_dir / "_dbt/target/run_results.json").read_text())


def first_tested_run(pipeline: Pipeline) -> int | None:
    """The first landing run whose rows the last build's tests of cdc_current read (None: all),
    from the test as dbt ran it."""
    compiled = pipeline.warehouse_dir / (
        "_dbt/target/run/cdc_warehouse/models/marts/_marts.yml/one_current_row_per_key_cdc_current_.sql"
    )
    scope = re.search(r"last_landing_run >= (\d+)", compiled.read_text())
    return int(scope.group(1)) if scope else None


def models_that_asked_their_rows(pipeline: Pipeline) -> set[str]:
    """The models that asked their own table's rows for their newest landing run (a
    compile-time `select max(...)`) in the last dbt command, from its log."""
    last_command = pipeline.last_dbt_log()
    asked = re.findall(
        r"On model\.\w+\.(\w+): /\*[^\n]*\*/\s+select max\(\w+\) from \w+\.(\w+)\s",
        last_command,
    )
    return {model for model, table in asked if model == table}


# The family models that hold one row per line they decode.
LINE_DECODERS = ("int_debezium__events", "int_pgoutput__messages")


def lines_decoded_twice(pipeline: Pipeline) -> dict[str, int]:
    """For each of LINE_DECODERS, how many landed lines it holds more than once."""
    return {
        model: pipeline.spark()
        .sql(
            f"select count(*) from (select 1 from cdc_internal.{model}"
            " group by file_path, line_number, landing_run having count(*) > 1)"
        )
        .first()[0]
        for model in LINE_DECODERS
    }


def built_nodes(pipeline: Pipeline) -> set[str]:
    """The names of the nodes the last dbt command ran."""
    return {result["unique_id"].split(".")[2] for result in last_dbt_results(pipeline)["results"]}


def land_wave(pipeline: Pipeline, files: list[Path]) -> None:
    for path in files:
        target = pipeline.landing_root / path.relative_to(SAMPLE)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def child_env(pipeline: Pipeline) -> dict[str, str]:
    """The children share one class archive (the first run writes it): cold JVMs, started
    often."""
    archive = pipeline.root.parent / "class-archive"
    return {**os.environ, **pipeline.env(), "CDC_CLASS_ARCHIVE": str(archive)}


def delta_commits(table_dir: Path) -> int:
    return len(list((table_dir / "_delta_log").glob("*.json")))


def raw_dir(pipeline: Pipeline, table: str) -> Path:
    return pipeline.warehouse_dir / "cdc_raw.db" / table


def run_killed(pipeline: Pipeline, reached: Callable[[str], bool], *args: str) -> str:
    """`cdcw run` in a child process, killed with SIGKILL as soon as `reached(output so far)`;
    returns its output. Fails if the run ended before reaching that point."""
    log = pipeline.root / "killed-run.log"
    with log.open("w") as output:
        child = subprocess.Popen(
            [str(CDCW), "run", *args],
            env=child_env(pipeline),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + KILL_TIMEOUT_SECONDS
    try:
        while not reached(log.read_text(errors="replace")):
            assert child.poll() is None, (
                "the run ended before the kill point:\n" + log.read_text(errors="replace")[-3000:]
            )
            assert time.monotonic() < deadline, "the kill point never came"
            time.sleep(0.05)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    return log.read_text(errors="replace")


def started(node: str, then_seconds: float = 0.0) -> Callable[[str], bool]:
    """The point `then_seconds` after dbt started `node` (a model or test name)."""
    seen_at: list[float] = []

    def reached(output: str) -> bool:
        if not seen_at and f"START {node}" in output:
            seen_at.append(time.monotonic())
        return bool(seen_at) and time.monotonic() - seen_at[0] >= then_seconds

    return reached


def run_to_end(pipeline: Pipeline, *args: str) -> None:
    """`cdcw run ARGS` in a child process, which must succeed."""
    done = subprocess.run(
        [str(CDCW), "run", *args],
        env=child_env(pipeline),
        capture_output=True,
        text=True,
        timeout=KILL_TIMEOUT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


def warehouse_facts(pipeline: Pipeline) -> dict[str, Any]:
    """What must not differ from an uninterrupted run: the marts' rows, each landed line (a
    line landed twice counts twice) with its run, and each quarantine row."""
    spark = pipeline.spark()
    quarantine = Counter(
        (
            str(Path(row.file_path).relative_to(pipeline.landing_root)),
            row.line_number,
            row.reason,
        )
        for row in spark.table("cdc_quarantine").collect()
    )
    return {
        **mart_facts(pipeline, "cdc_current", "cdc_history"),
        "quarantine": quarantine,
        **warehouse_facts_of_lines(pipeline),
    }


def warehouse_facts_of_lines(pipeline: Pipeline) -> dict[str, Any]:
    """Each landed line (a line landed twice counts twice) with its run, and the manifest."""
    spark = pipeline.spark()
    lines = Counter()
    for table in RAW_TABLES:
        for row in spark.table(f"cdc_raw.{table}").collect():
            relative = Path(row.file_path).relative_to(pipeline.landing_root)
            lines[(table, str(relative), row.line_number, row.landing_run)] += 1
    manifest = sorted(
        (str(Path(row.file_path).relative_to(pipeline.landing_root)), row.landing_run)
        for row in spark.table("cdc_raw.landed_files").collect()
    )
    return {"lines": lines, "manifest": manifest}


def mart_facts(pipeline: Pipeline, current: str, history: str) -> dict[str, list[tuple]]:
    return {
        "current": current_facts(pipeline.rows(current)),
        "history": history_facts(pipeline.rows(history)),
    }


def table_format(pipeline: Pipeline, table: str) -> str:
    return pipeline.spark().sql(f"describe detail {table}").first().format


@pytest.fixture(scope="module")
def reference(java_available, tmp_path_factory) -> dict[str, Any]:
    """The facts after the second wave, and the nodes its run built."""
    pipeline = Pipeline(tmp_path_factory.mktemp("uninterrupted"))
    first, second, _ = sample_waves()
    land_wave(pipeline, first)
    assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    land_wave(pipeline, second)
    assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    return {
        **warehouse_facts(pipeline),
        "built": built_nodes(pipeline),
        "asked_their_rows": models_that_asked_their_rows(pipeline),
        "union_reads": {
            model: tables_read(pipeline, f"marts/{model}.sql")
            for model in ("cdc_quarantine", "cdc_source_columns")
        },
        "new_changes": {
            model: new_changes_filter(pipeline, f"intermediate/cdc/{model}.sql")
            for model in ("int_cdc__key_registry", "int_cdc__change_log")
        },
        "pipeline": pipeline,
    }


def tables_read(pipeline: Pipeline, model: str) -> set[str]:
    """The warehouse tables `model` (its path under models/) read as the last build compiled
    it."""
    compiled = pipeline.warehouse_dir / "_dbt/target/compiled/cdc_warehouse/models" / model
    return set(re.findall(r"cdc_internal\.(\w+)", compiled.read_text()))


def new_changes_filter(pipeline: Pipeline, model: str) -> str:
    """The condition on `model`'s read of every family's changes, as the last build compiled
    it."""
    compiled = pipeline.warehouse_dir / "_dbt/target/compiled/cdc_warehouse/models" / model
    read = re.search(
        r"from cdc_internal\.int_cdc__source_changes\s+where (.*)", compiled.read_text()
    )
    assert read, model
    return read.group(1).strip()


def start_reader(pipeline: Pipeline) -> tuple[subprocess.Popen, Path, Path]:
    """The reader in its own process, once it has read each mart a first time."""
    reads = pipeline.root / "reads.jsonl"
    stop = pipeline.root / "reader.stop"
    reader = subprocess.Popen(
        [
            sys.executable,
            str(READER),
            *(str(pipeline.warehouse_dir / mart) for mart in MARTS),
            str(reads),
            str(stop),
        ],
        env=child_env(pipeline),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 300
    while not reads.exists() or len(reads.read_text().splitlines()) < len(MARTS):
        assert reader.poll() is None, "the reader stopped before its first read"
        assert time.monotonic() < deadline, "the reader never read"
        time.sleep(0.5)
    return reader, reads, stop


@pytest.fixture(scope="module")
def interrupted(reference, tmp_path_factory) -> dict[str, Any]:
    """The second wave's run killed at each point in turn, each next run resuming, the reader
    watching all of it."""
    pipeline = Pipeline(tmp_path_factory.mktemp("interrupted"))
    first, second, _ = sample_waves()
    land_wave(pipeline, first)
    # Every run with the same arguments, as a scheduled job's: the first wave's build record
    # then stays through the killed runs.
    run_to_end(pipeline)

    reader, reads, stop = start_reader(pipeline)
    try:
        land_wave(pipeline, second)
        kills = {}
        # Landing: after one family's lines committed, before the next family's and the
        # manifest.
        debezium_before = delta_commits(raw_dir(pipeline, "debezium_lines"))
        manifest_before = delta_commits(raw_dir(pipeline, "landed_files"))
        run_killed(
            pipeline,
            lambda _: delta_commits(raw_dir(pipeline, "debezium_lines")) > debezium_before,
        )
        kills["landing"] = delta_commits(raw_dir(pipeline, "landed_files")) == manifest_before
        model = "sql incremental model"
        for point, node in [
            ("change log", started(f"{model} cdc_internal.int_cdc__change_log", 1)),
            ("history", started(f"{model} default.cdc_history", 2)),
            ("current", started(f"{model} default.cdc_current", 0.5)),
        ]:
            kills[point] = "Completed successfully" not in run_killed(pipeline, node)
        # The run that finishes the wave, in this process: a JVM that has not opened this
        # warehouse yet, as a scheduler's next run would be.
        assert pipeline.cdcw("run") == 0
        recovered = built_nodes(pipeline)
        asked_their_rows = models_that_asked_their_rows(pipeline)
        recovery_scope = first_tested_run(pipeline)
    finally:
        stop.touch()
        reader.wait(timeout=300)
    return {
        "pipeline": pipeline,
        "kills": kills,
        "recovered": recovered,
        "asked_their_rows": asked_their_rows,
        "decoded_twice": lines_decoded_twice(pipeline),
        "recovery_scope": recovery_scope,
        "as_of": marts_as_of_runs(pipeline, (1, 2)),
        "facts": warehouse_facts(pipeline),
        "reads": [json.loads(line) for line in reads.read_text().splitlines()],
    }


def marts_as_of_runs(pipeline: Pipeline, runs: tuple[int, ...]) -> dict[str, str]:
    """The checksum of each mart as of each run, by `cdcw dbt show` (in this process, once the
    runs and the reader are done with the warehouse); keys `mart@run`."""
    query = " union all ".join(
        CHECKSUM.format(relation=f"{{{{ cdc_as_of_run('{mart}', {run}) }}}}").replace(
            "select ", f"select '{mart}@{run}' as asked, ", 1
        )
        for mart in MARTS
        for run in runs
    )
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        code = pipeline.cdcw("dbt", "show", "--inline", query, "--output", "json", "--quiet")
    printed = shown.getvalue()
    assert code == 0, printed[-3000:]
    rows = json.loads(printed[printed.index("{") :])["show"]
    return {row["asked"]: row["checksum"] for row in rows}


def checksums_read(interrupted: dict[str, Any], mart: str) -> list[str]:
    return [read["checksum"] for read in interrupted["reads"] if read["table"] == mart]


def test_every_kill_landed_where_it_was_aimed(interrupted):
    assert interrupted["kills"] == {
        "landing": True,
        "change log": True,
        "history": True,
        "current": True,
    }


def test_the_run_after_killed_ones_tests_every_row_they_wrote(interrupted):
    """The killed runs left the first wave's build record: the run that finishes the wave tests
    the rows of every landing run after the first (macros/marts/tested_from_landing_run.sql), the
    killed runs' included."""
    assert interrupted["recovery_scope"] == 2


def test_no_line_is_landed_twice_or_lost(reference, interrupted):
    assert interrupted["facts"]["lines"] == reference["lines"]
    assert max(reference["lines"].values()) == 1
    assert interrupted["facts"]["manifest"] == reference["manifest"]


def test_no_quarantine_row_is_lost_or_doubled(reference, interrupted):
    assert reference["quarantine"], "the sample data should quarantine some lines"
    assert interrupted["facts"]["quarantine"] == reference["quarantine"]


def test_the_marts_equal_those_of_uninterrupted_runs(reference, interrupted):
    assert interrupted["facts"]["current"] == reference["current"]
    assert interrupted["facts"]["history"] == reference["history"]


# The sample's typed models (models/marts/typed/_typed.yml) are all of Datastream tables.
DATASTREAM_TYPED_MODELS = (
    "shop_products_current",
    "shop_products_history",
    "public_accounts_current",
    "public_accounts_history",
)


@pytest.mark.parametrize("run", ["uninterrupted", "after killed runs"])
def test_a_run_builds_only_the_families_with_new_lines(reference, interrupted, run):
    """The second wave's run, and the run that finishes it after the killed ones (they leave
    the first wave's build record in place, behind their landing runs)."""
    built = reference["built"] if run == "uninterrupted" else interrupted["recovered"]
    assert {"int_debezium__events", "int_pgoutput__messages", "cdc_history", "cdc_current"} <= built
    assert not built & {"int_spanner__records", "int_datastream__events", "cdc_spanner_streams"}
    # The typed models of Datastream's tables (models/marts/typed/_typed.yml), though they read
    # cdc_current and cdc_history, and their tests: the build wrote none of those tables' rows.
    assert not built & {
        *DATASTREAM_TYPED_MODELS,
        *(f"typed_values_fit_{model}_" for model in DATASTREAM_TYPED_MODELS),
    }


# Models that read the lines (or rows) after the last successful build's landing run when
# their newest write belongs to that build (macros/utils/landing_runs_processed.sql), built in
# the second wave's runs.
LINE_READERS = ("int_debezium__events", "int_pgoutput__messages", "int_cdc__change_log")


def test_a_build_after_a_successful_one_does_not_ask_the_models_rows(reference):
    """After the first wave's build, the models' newest commits name its landing run: the
    second wave's build reads the lines after it without a query of their rows."""
    assert {"int_debezium__events", "int_cdc__change_log"} <= reference["built"]
    assert not reference["asked_their_rows"] & set(LINE_READERS)


def test_the_run_after_killed_ones_asks_the_rows_of_the_models_they_wrote(interrupted):
    """The killed runs wrote the family models and the change log before they died: those
    commits name the second landing run, after the build record's, so the run that finishes
    the wave asks their rows (else it would read the second wave's lines again)."""
    assert {"int_debezium__events", "int_cdc__change_log"} <= interrupted["asked_their_rows"]


def test_no_line_is_decoded_twice_after_killed_runs(interrupted):
    """The marts would not show it (they deduplicate events), the family models would: each
    holds its lines once."""
    assert interrupted["decoded_twice"] == dict.fromkeys(LINE_DECODERS, 0)


@pytest.mark.parametrize("model", ["cdc_quarantine", "cdc_source_columns"])
def test_the_models_that_union_families_read_only_those_with_new_lines(reference, model):
    """The others' rows were all read by the build before (their marts equal those of a full
    refresh: test_a_parquet_warehouse_becomes_delta_without_landing_again)."""
    reads = reference["union_reads"][model]
    assert {"int_debezium__events", "int_pgoutput__messages"} <= reads
    assert not {name for name in reads if name.startswith(("int_spanner", "int_datastream"))}


@pytest.mark.parametrize("model", ["int_cdc__key_registry", "int_cdc__change_log"])
def test_the_change_log_reads_only_the_families_with_new_lines(reference, model):
    """On the view of every family's changes, the filter leaves the other families' branches
    out of the plan, so their tables are not read."""
    condition = reference["new_changes"][model]
    assert condition.endswith("and source_system in ('debezium', 'pgoutput')")
    plan = (
        reference["pipeline"]
        .spark()
        .sql(f"explain select * from cdc_internal.int_cdc__source_changes where {condition}")
        .first()[0]
    )
    scanned = set(re.findall(r"Scan \S+ spark_catalog\.cdc_internal\.(\w+)", plan))
    assert {"int_debezium__changes", "int_pgoutput__changes"} <= scanned
    assert not {name for name in scanned if name.startswith(("int_spanner", "int_datastream"))}


def test_a_reader_sees_the_state_before_or_after_a_run_never_a_mix(interrupted):
    assert not [read for read in interrupted["reads"] if read.get("error")]
    for mart in MARTS:
        checksums = checksums_read(interrupted, mart)
        before, after = checksums[0], checksums[-1]
        assert before != after, f"the second wave should change {mart}"
        assert set(checksums) <= {before, after}
        assert len(checksums) >= 4, f"too few reads of {mart} to have watched the runs"


def test_the_marts_as_of_each_landing_run_are_the_states_readers_saw(interrupted):
    """`cdc_as_of_run` (macros/marts/cdc_as_of_run.sql), asked through `cdcw dbt show` as an analyst
    would, returns for each landing run the state the reader saw after it."""
    for mart in MARTS:
        checksums = checksums_read(interrupted, mart)
        assert interrupted["as_of"][f"{mart}@1"] == checksums[0]
        assert interrupted["as_of"][f"{mart}@2"] == checksums[-1]


def test_maintenance_compacts_small_files_and_changes_no_row(interrupted, capsys):
    pipeline = interrupted["pipeline"]
    assert pipeline.cdcw("maintain") == 0
    said = capsys.readouterr().err
    assert "cdc_internal.int_cdc__change_log:" in said
    assert "default.cdc_history:" in said
    assert any(
        int(line.split(": ")[2].split()[0]) > 0 for line in said.splitlines() if "compacted" in line
    ), said
    assert warehouse_facts(pipeline) == interrupted["facts"]


def test_a_parquet_warehouse_becomes_delta_without_landing_again(reference, tmp_path):
    pipeline = Pipeline(tmp_path)
    for files in sample_waves()[:2]:
        land_wave(pipeline, files)
    spark = pipeline.spark()
    spark.sql("create database cdc_raw")
    for statement in PARQUET_RAW_TABLES:
        spark.sql(statement)
    assert pipeline.cdcw("land") == 0
    assert table_format(pipeline, "cdc_raw.debezium_lines") == "parquet"
    landed = warehouse_facts_of_lines(pipeline)

    assert pipeline.cdcw("upgrade") == 0

    for table in [*RAW_TABLES, "landed_files"]:
        assert table_format(pipeline, f"cdc_raw.{table}") == "delta"
    assert table_format(pipeline, "cdc_history") == "delta"
    assert warehouse_facts_of_lines(pipeline) == landed
    facts = warehouse_facts(pipeline)
    for mart in ("current", "history", "quarantine"):
        assert facts[mart] == reference[mart], mart
