"""Continuous mode and the run log: one `cdcw run --every 1s` process is fed a source's files in
two waves while it runs, a run that fails between them (a file landing cannot read) is recorded
and retried without ending the process, and SIGTERM during the second wave's build stops the
process once that run has ended, exit 0. Its marts then equal those of one single run over both
waves; a restarted single run finds nothing new. Every run is one row of cdc_raw.cdc_runs, and
the last run's metrics file parses as Prometheus text.

Kept cheap (the suite's time budget): one Debezium server's files, the dbt tests left out (the
comparison with the single run is the check), the reference run in this process while the
continuous one starts in its own."""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cdc_warehouse.run_log import STAGE_COLUMNS
from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline
from tests.e2e.marts import current_facts, history_facts, quarantine_facts
from tests.e2e.test_run_guarantees import CDCW, SAMPLE, child_env, land_wave

SERVER = SAMPLE / "debezium" / "pg_lite"
WAIT_SECONDS = 600
# Hadoop cannot read a file whose name holds a colon: landing it fails the run.
UNREADABLE_NAME = "bad:name.jsonl"
DBT_STARTED_CURRENT = "START sql incremental model default.cdc_current"


def server_waves() -> tuple[list[Path], list[Path]]:
    """Each partition's first file, then the rest (a partition's files keep their order)."""
    first: list[Path] = []
    rest: list[Path] = []
    for partition in sorted(path for path in SERVER.rglob("partition=*") if path.is_dir()):
        files = sorted(partition.glob("*.jsonl"))
        first.append(files[0])
        rest.extend(files[1:])
    return first, rest


def wait_for(log: Path, child: subprocess.Popen, reached: Callable[[str], bool]) -> str:
    deadline = time.monotonic() + WAIT_SECONDS
    while not reached(output := log.read_text(errors="replace")):
        assert child.poll() is None, "the process ended early:\n" + output[-3000:]
        assert time.monotonic() < deadline, "never reached:\n" + output[-3000:]
        time.sleep(0.2)
    return output


def facts(pipeline: Pipeline) -> dict[str, list[tuple]]:
    return {
        "current": current_facts(pipeline.rows("cdc_current")),
        "history": history_facts(pipeline.rows("cdc_history")),
        "quarantine": quarantine_facts(pipeline.rows("cdc_quarantine"), pipeline.landing_root),
    }


@pytest.fixture(scope="module")
def continuous(java_available, tmp_path_factory) -> dict[str, Any]:
    first, rest = server_waves()
    pipeline = Pipeline(tmp_path_factory.mktemp("continuous"))
    metrics = pipeline.root / "metrics" / "cdcw.prom"
    land_wave(pipeline, first)
    log = pipeline.root / "continuous.log"
    with log.open("w") as output:
        child = subprocess.Popen(
            [str(CDCW), "run", "--every", "1s", *BUILD_WITHOUT_TESTS],
            # Unbuffered: dbt's lines reach the log as they are printed (the SIGTERM's cue).
            env={**child_env(pipeline), "CDC_METRICS_FILE": str(metrics), "PYTHONUNBUFFERED": "1"},
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        reference = Pipeline(tmp_path_factory.mktemp("single"))
        land_wave(reference, first + rest)
        assert reference.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
        reference_facts = facts(reference)

        wait_for(log, child, lambda out: "landing run 1 done" in out)
        unreadable = pipeline.landing_root / first[0].relative_to(SAMPLE).parent / UNREADABLE_NAME
        unreadable.write_bytes(first[0].read_bytes())
        wait_for(log, child, lambda out: "cdcw: failed with" in out)
        unreadable.unlink()
        land_wave(pipeline, rest)
        wait_for(log, child, lambda out: DBT_STARTED_CURRENT in out.split("landing run 2:")[-1])
        child.send_signal(signal.SIGTERM)
        code = child.wait(timeout=WAIT_SECONDS)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    output = log.read_text(errors="replace")
    continuous_facts = facts(pipeline)
    assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    runs = [
        row.asDict()
        for row in pipeline.spark()
        .sql("select * from cdc_raw.cdc_runs order by started_at")
        .collect()
    ]
    return {
        "pipeline": pipeline,
        "waves": (first, rest),
        "code": code,
        "output": output,
        "facts": continuous_facts,
        "facts after restart": facts(pipeline),
        "reference": reference_facts,
        "runs": runs,
        "metrics": metrics.read_text(),
    }


def test_sigterm_during_a_run_stops_the_process_after_it_exit_0(continuous):
    assert continuous["code"] == 0
    output = continuous["output"]
    assert output.index("landing run 2 done") < output.index("cdcw: stopped")


def test_the_marts_equal_those_of_one_single_run(continuous):
    assert continuous["reference"]["quarantine"], "the server's files should quarantine a line"
    assert continuous["facts"] == continuous["reference"]
    assert continuous["facts after restart"] == continuous["reference"]


def test_every_run_is_one_row_of_cdc_runs_the_failed_ones_included(continuous):
    first, rest = continuous["waves"]
    runs = continuous["runs"]
    failures = continuous["output"].count("cdcw: failed with")
    assert [run["status"] for run in runs] == (
        ["succeeded"] + ["failed"] * failures + ["succeeded", "succeeded"]
    )
    assert len({run["run_id"] for run in runs}) == len(runs)
    wave_1, *failed, wave_2, restart = runs
    assert (wave_1["landing_run"], wave_1["files_landed"]) == (1, len(first))
    assert (wave_2["landing_run"], wave_2["files_landed"]) == (2, len(rest))
    assert (restart["landing_run"], restart["files_landed"]) == (2, 0)
    for run in failed:
        assert run["error"].startswith("Py4JJavaError"), run["error"]
        assert run["ended_at"] is not None
    for run in (wave_1, wave_2):
        assert run["lines_landed"] > 0
        assert run["versions_written"] > 0 and run["keys_written"] > 0
        assert run["landing_seconds"] > 0 and run["history_seconds"] > 0
        assert run["tests_seconds"] == 0
        assert run["ended_at"] > run["started_at"]
    # The restart built nothing: no stage of dbt's, no counts of a build.
    assert restart["history_seconds"] is None and restart["versions_written"] is None


def test_the_readmes_operator_queries_answer_from_the_run_log(continuous):
    readme = (PROJECT_DIR / "README.md").read_text()
    block = readme[readme.index("-- the last day's runs") :]
    queries = [query for query in block[: block.index("```")].split(";") if query.strip()]
    spark = continuous["pipeline"].spark()
    last_day, slowest, failed = (spark.sql(query).collect() for query in queries)
    assert len(last_day) == len(continuous["runs"])
    built = [run for run in continuous["runs"] if run["decoding_seconds"] is not None]
    assert len(built) == 2  # the waves' runs
    assert sorted(row.seconds for row in slowest) == sorted(
        max(run[column] for column in STAGE_COLUMNS.values()) for run in built
    )
    assert [row.status for row in failed] == ["failed"] * len(failed) and failed


def test_the_metrics_file_is_prometheus_text_of_the_last_run(continuous):
    from prometheus_client.parser import text_string_to_metric_families

    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(continuous["metrics"])
        for sample in family.samples
    }
    assert samples[("cdcw_run_status", (("status", "succeeded"),))] == 1
    assert samples[("cdcw_run_files_landed", ())] == len(continuous["waves"][1])
    assert samples[("cdcw_run_duration_seconds", ())] > 0
    source = (("source_name", "pg_lite"), ("source_system", "debezium"))
    assert samples[("cdcw_source_landing_age_seconds", source)] >= 0
    assert re.search(r"^cdcw_source_commit_lag_seconds\{", continuous["metrics"], re.MULTILINE)
