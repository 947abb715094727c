"""Continuous mode and the run log: a `cdcw run --every 1s` process is fed a source's files while
it runs. After the first wave, the second comes with poison files (a name Spark cannot read a
file by, garbage bytes as JSONL and as gzip) while the warehouse's manifest is unreachable:
runs fail, are recorded and retried without ending the process until it is back; then one run
lands the wave and quarantines the poison, and the process is killed with SIGKILL while it
builds. A process started again on the same warehouse records the killed run with its first,
which finishes the work; it is fed the third wave, in which the poison is not quarantined
again, and SIGTERM during that wave's build stops it once the run has ended, exit 0. The marts
and the landed lines then equal those of one single run over all the files, and a single run
after it finds nothing new. Every run is one row of cdc_raw.cdc_runs, and the metrics file
parses as Prometheus text.

Kept cheap (the suite's time budget): one Debezium server's files, the dbt tests left out (the
comparison with the single run is the check), the reference run in this process while the
continuous one starts in its own."""

from __future__ import annotations

import random
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from cdc_warehouse.run_log import STAGE_COLUMNS
from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline
from tests.e2e.marts import current_facts, history_facts, quarantine_facts
from tests.e2e.test_run_guarantees import CDCW, SAMPLE, child_env, land_wave, started

SERVER = SAMPLE / "debezium" / "pg_lite"
WAIT_SECONDS = 600
# Beside the server's topics.
POISON_DIR = Path("debezium") / "pg_lite" / "poison"
GARBAGE = random.Random(57).randbytes(4096)
POISON = {
    # A good file but for its name: Hadoop reads what precedes the ':' as a URI scheme (every
    # run failed while it was there).
    "bad:name.jsonl": min(SERVER.rglob("*.jsonl")).read_bytes(),
    # Its last line ended: else it waits as being written (CDC_PARTIAL_LINE_WAIT_SECONDS).
    "garbage.jsonl": GARBAGE + b"\n",
    "garbage.jsonl.gz": GARBAGE,
}
# The files quarantined whole (line 0), with the start of the reason.
REFUSED = {
    "bad:name.jsonl": "the file's name holds ':'",
    "garbage.jsonl.gz": "Spark cannot read the file as gzip (java.io.IOException: not a gzip file)",
}
STARTED_CURRENT = "START sql incremental model default.cdc_current"
HISTORY = "sql incremental model default.cdc_history"


def server_waves() -> tuple[list[Path], list[Path], list[Path]]:
    """Each partition's first file, its second, then the rest (a partition's files keep their
    order)."""
    waves: tuple[list[Path], list[Path], list[Path]] = ([], [], [])
    for partition in sorted(path for path in SERVER.rglob("partition=*") if path.is_dir()):
        for index, path in enumerate(sorted(partition.glob("*.jsonl"))):
            waves[min(index, 2)].append(path)
    return waves


def land_poison(pipeline: Pipeline) -> None:
    poison_dir = pipeline.landing_root / POISON_DIR
    poison_dir.mkdir(parents=True)
    for name, content in POISON.items():
        (poison_dir / name).write_bytes(content)


def land_at_once(pipeline: Pipeline, files: list[Path]) -> None:
    """The files appear together (a listing between two copies would land part of them): each
    is copied under a name landing passes by (.name), then renamed into place."""
    staged = []
    for path in files:
        target = pipeline.landing_root / path.relative_to(SAMPLE)
        target.parent.mkdir(parents=True, exist_ok=True)
        hidden = target.with_name(f".{target.name}")
        shutil.copyfile(path, hidden)
        staged.append((hidden, target))
    for hidden, target in staged:
        hidden.rename(target)


@contextmanager
def manifest_unreachable(pipeline: Pipeline) -> Iterator[None]:
    """The storage of the manifest gone for a while (a file in place of its directory: the
    permissions of a directory do not stop root): every run fails at its first read of the
    warehouse, having written nothing, until it is back."""
    table = pipeline.warehouse_dir / "cdc_raw.db" / "landed_files"
    aside = table.with_name("landed_files.unreachable")
    table.rename(aside)
    table.write_text("")
    try:
        yield
    finally:
        table.unlink()
        aside.rename(table)


def start_continuous(pipeline: Pipeline, log: Path, metrics: Path) -> subprocess.Popen:
    with log.open("w") as output:
        return subprocess.Popen(
            [str(CDCW), "run", "--every", "1s", *BUILD_WITHOUT_TESTS],
            # Unbuffered: dbt's lines reach the log as they are printed (the signals' cue).
            env={**child_env(pipeline), "CDC_METRICS_FILE": str(metrics), "PYTHONUNBUFFERED": "1"},
            stdout=output,
            stderr=subprocess.STDOUT,
        )


def wait_for(log: Path, child: subprocess.Popen, reached: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + WAIT_SECONDS
    while not reached(output := log.read_text(errors="replace")):
        assert child.poll() is None, "the process ended early:\n" + output[-3000:]
        assert time.monotonic() < deadline, "never reached:\n" + output[-3000:]
        time.sleep(0.2)
    return output


def after(marker: str, reached: Callable[[str], bool]) -> Callable[[str], bool]:
    """`reached` on the output after the last `marker` only (none before it)."""
    return lambda output: marker in output and reached(output.split(marker)[-1])


def facts(pipeline: Pipeline) -> dict[str, list[tuple]]:
    root = pipeline.landing_root
    return {
        "current": current_facts(pipeline.rows("cdc_current")),
        "history": history_facts(pipeline.rows("cdc_history")),
        "quarantine": quarantine_facts(pipeline.rows("cdc_quarantine"), root),
        "landed lines": sorted(
            (str(Path(row["file_path"]).relative_to(root)), row["line_number"])
            for row in pipeline.rows("cdc_raw.debezium_lines")
        ),
    }


@pytest.fixture(scope="module")
def continuous(java_available, tmp_path_factory) -> dict[str, Any]:
    first, second, third = server_waves()
    pipeline = Pipeline(tmp_path_factory.mktemp("continuous"))
    metrics = pipeline.root / "metrics" / "cdcw.prom"
    land_wave(pipeline, first)
    log = pipeline.root / "continuous.log"
    child = start_continuous(pipeline, log, metrics)
    try:
        reference = Pipeline(tmp_path_factory.mktemp("single"))
        land_wave(reference, first + second + third)
        land_poison(reference)
        assert reference.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
        reference_facts = facts(reference)

        wait_for(log, child, lambda out: "landing run 1 done" in out)
        with manifest_unreachable(pipeline):
            land_wave(pipeline, second)
            land_poison(pipeline)
            wait_for(log, child, lambda out: "cdcw: failed with" in out)
        wait_for(log, child, after("landing run 2:", started(HISTORY, 0.5)))
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()

    # Started again on the same warehouse: its first run finishes the killed one's work.
    restarted_log = pipeline.root / "restarted.log"
    restarted = start_continuous(pipeline, restarted_log, metrics)
    try:
        wait_for(restarted_log, restarted, lambda out: "Completed successfully" in out)
        land_at_once(pipeline, third)
        wait_for(restarted_log, restarted, after("landing run 3:", lambda o: STARTED_CURRENT in o))
        restarted.send_signal(signal.SIGTERM)
        code = restarted.wait(timeout=WAIT_SECONDS)
    finally:
        if restarted.poll() is None:
            restarted.kill()
            restarted.wait()
    continuous_facts = facts(pipeline)
    assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    spark = pipeline.spark()
    runs = [
        row.asDict()
        for row in spark.sql("select * from cdc_raw.cdc_runs order by started_at").collect()
    ]
    manifest = spark.sql("select file_path, landing_run from cdc_raw.landed_files").collect()
    return {
        "pipeline": pipeline,
        "waves": (first, second, third),
        "code": code,
        "output": log.read_text(errors="replace"),
        "restarted output": restarted_log.read_text(errors="replace"),
        "facts": continuous_facts,
        "facts after restart": facts(pipeline),
        "reference": reference_facts,
        "runs": runs,
        "landing runs": {Path(row.file_path): row.landing_run for row in manifest},
        "manifest rows": Counter(Path(row.file_path) for row in manifest),
        "metrics": metrics.read_text(),
    }


def test_sigterm_during_a_run_stops_the_process_after_it_exit_0(continuous):
    assert continuous["code"] == 0
    output = continuous["restarted output"]
    assert output.index("landing run 3 done") < output.index("cdcw: stopped")


def test_the_marts_equal_those_of_one_single_run(continuous):
    assert continuous["reference"]["quarantine"], "the server's files should quarantine a line"
    assert continuous["facts"] == continuous["reference"]
    assert continuous["facts after restart"] == continuous["reference"]


def test_a_poison_file_is_quarantined_once_and_later_cycles_land_new_files(continuous):
    pipeline, output = continuous["pipeline"], continuous["output"]
    poison_run = output[output.rindex("landing run 2:") :]
    quarantined = Counter(
        (Path(row["file_path"]).name, row["line_number"], row["reason"])
        for row in pipeline.rows("cdc_quarantine")
        if Path(row["file_path"]).parent.name == POISON_DIR.name
    )
    for name, reason in REFUSED.items():
        assert f"warning: {POISON_DIR / name}: {reason}" in poison_run, poison_run
        [(line, said)] = [(line, said) for file, line, said in quarantined if file == name]
        assert line == 0 and said.startswith(reason)
    # Garbage lines quarantined line by line, each once.
    assert any(file == "garbage.jsonl" for file, _, _ in quarantined)
    assert set(quarantined.values()) == {1}
    # One run landed them, and no later one again, while later cycles landed their waves.
    landing_runs = continuous["landing runs"]
    poison = [pipeline.landing_root / POISON_DIR / name for name in POISON]
    assert {landing_runs[path] for path in poison} == {2}
    assert {continuous["manifest rows"][path] for path in poison} == {1}
    _, second, third = continuous["waves"]
    landed = {path.relative_to(pipeline.landing_root): run for path, run in landing_runs.items()}
    assert {landed[path.relative_to(SAMPLE)] for path in second} == {2}
    assert {landed[path.relative_to(SAMPLE)] for path in third} == {3}


def test_a_killed_continuous_process_is_recorded_by_the_next_start(continuous):
    assert "landing run 2 done" not in continuous["output"]
    killed = [run for run in continuous["runs"] if run["status"] == "killed"]
    assert len(killed) == 1 and killed[0]["ended_at"] is None
    # The next start's first run follows it: it landed nothing and built what the killed run
    # had landed.
    recovery = continuous["runs"][continuous["runs"].index(killed[0]) + 1]
    assert recovery["status"] == "succeeded"
    assert (recovery["landing_run"], recovery["files_landed"]) == (2, 0)
    assert recovery["history_seconds"] is not None
    assert continuous["restarted output"].index("(the newest landing run is 2)") < (
        continuous["restarted output"].index("Completed successfully")
    )


def test_every_run_is_one_row_of_cdc_runs_the_failed_ones_included(continuous):
    first, _, third = continuous["waves"]
    runs = continuous["runs"]
    failures = continuous["output"].count("cdcw: failed with")
    assert [run["status"] for run in runs] == (
        ["succeeded"] + ["failed"] * failures + ["killed"] + ["succeeded"] * 3
    )
    assert len({run["run_id"] for run in runs}) == len(runs)
    wave_1, *failed, _, recovery, wave_3, restart = runs
    assert (wave_1["landing_run"], wave_1["files_landed"]) == (1, len(first))
    assert (wave_3["landing_run"], wave_3["files_landed"]) == (3, len(third))
    assert (restart["landing_run"], restart["files_landed"]) == (3, 0)
    for run in failed:
        assert "DELTA_TABLE_NOT_FOUND" in run["error"], run["error"]
        assert run["ended_at"] is not None and run["files_landed"] is None
    for run in (wave_1, wave_3):
        assert run["lines_landed"] > 0 and run["lines_quarantined"] is not None
        assert run["versions_written"] > 0 and run["keys_written"] > 0
        assert run["landing_seconds"] > 0 and run["history_seconds"] > 0
        assert run["tests_seconds"] == 0
        assert run["ended_at"] > run["started_at"]
    # A run that landed nothing counts no build, whether it built (after the kill) or not.
    assert recovery["versions_written"] is None and recovery["history_seconds"] > 0
    assert restart["history_seconds"] is None and restart["versions_written"] is None


def test_the_readmes_operator_queries_answer_from_the_run_log(continuous):
    readme = (PROJECT_DIR / "docs" / "operations.md").read_text()
    block = readme[readme.index("-- the last day's runs") :]
    queries = [query for query in block[: block.index("```")].split(";") if query.strip()]
    spark = continuous["pipeline"].spark()
    last_day, slowest, failed = (spark.sql(query).collect() for query in queries)
    assert len(last_day) == len(continuous["runs"])
    built = [run for run in continuous["runs"] if run["decoding_seconds"] is not None]
    assert len(built) == 3  # the first and third waves', the run after the kill
    assert sorted(row.seconds for row in slowest) == sorted(
        max(run[column] for column in STAGE_COLUMNS.values()) for run in built
    )
    assert {row.status for row in failed} == {"failed", "killed"}


def test_the_metrics_file_is_prometheus_text_of_the_last_run(continuous):
    from prometheus_client.parser import text_string_to_metric_families

    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(continuous["metrics"])
        for sample in family.samples
    }
    assert samples[("cdcw_run_status", (("status", "succeeded"),))] == 1
    assert samples[("cdcw_run_files_landed", ())] == len(continuous["waves"][2])
    assert samples[("cdcw_run_duration_seconds", ())] > 0
    source = (("source_name", "pg_lite"), ("source_system", "debezium"))
    assert samples[("cdcw_source_landing_age_seconds", source)] >= 0
    assert re.search(r"^cdcw_source_commit_lag_seconds\{", continuous["metrics"], re.MULTILINE)
