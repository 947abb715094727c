"""The benchmark's bookkeeping (no Spark): stages from dbt's run_results, memory sampling."""

from __future__ import annotations

import json
import os
import subprocess

from cdc_warehouse.bench import benchmark, memory, workload


def node(unique_id: str, seconds: float) -> dict:
    return {"unique_id": unique_id, "execution_time": seconds, "status": "success"}


def test_dbt_nodes_are_grouped_into_stages(tmp_path):
    run_results = tmp_path / "run_results.json"
    run_results.write_text(
        json.dumps(
            {
                "elapsed_time": 20.0,
                "results": [
                    node("model.cdc_warehouse.stg_debezium__lines", 0.5),
                    node("model.cdc_warehouse.int_debezium__events", 4.0),
                    node("model.cdc_warehouse.int_cdc__change_log", 3.0),
                    node("model.cdc_warehouse.int_cdc__key_registry", 1.0),
                    node("model.cdc_warehouse.cdc_history", 6.0),
                    node("model.cdc_warehouse.cdc_current", 2.0),
                    node("model.cdc_warehouse.cdc_quarantine", 0.25),
                    node("test.cdc_warehouse.one_current_row_per_key_cdc_current_.abc", 1.5),
                ],
            }
        )
    )
    timings = benchmark.dbt_timings(run_results)
    assert timings["stages"] == {
        "staging": 4.5,
        "change_log": 4.0,
        "history": 6.0,
        "current": 2.0,
        "tests": 1.5,
        "other": 0.25,
    }
    assert timings["nodes"]["cdc_history"]["seconds"] == 6.0
    assert timings["elapsed"] == 20.0


def test_tree_sampler_sees_this_process():
    sampler = memory.TreeSampler(os.getpid())
    sampler.start()
    peaks = sampler.stop()
    assert peaks["driver_python"] > 10 * 2**20
    assert peaks["driver"] >= peaks["driver_python"]
    assert peaks["tree"] >= peaks["driver"]


def test_cli_knows_the_bench_command():
    from cdc_warehouse.cli import USAGE

    assert "cdcw bench" in USAGE


def test_a_discarded_wave_makes_the_next_run_generate_the_workload_again(tmp_path):
    spec = workload.Spec(scale=3_000, seed=5, waves=2, jobs=1)
    root, landing = tmp_path / "workload", tmp_path / "landing"
    first = benchmark._workload(spec, root, regenerate=False)
    assert benchmark._workload(spec, root, regenerate=False) == first

    workload.stage(root, "wave-0000", landing)
    workload.discard(root, "wave-0000", landing)
    assert not (root / "wave-0000").exists()
    assert not [p for p in landing.rglob("*") if p.is_file()]
    assert (root / "wave-0001").is_dir() and (root / "topup-realistic").is_dir()
    assert not workload.is_complete(root, first)

    again = benchmark._workload(spec, root, regenerate=False)
    assert workload.is_complete(root, again)
    assert again["deliveries"] == first["deliveries"]


def test_a_result_names_the_commit_it_measured_and_whether_files_differed(tmp_path):
    assert benchmark.code_revision(tmp_path) is None
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    (tmp_path / "model.sql").write_text("select 1\n")
    subprocess.run([*git, "add", "model.sql"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "one"], check=True)
    head = subprocess.run(
        [*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert benchmark.code_revision(tmp_path) == {"commit": head, "changed_files": False}
    (tmp_path / "model.sql").write_text("select 2\n")
    assert benchmark.code_revision(tmp_path) == {"commit": head, "changed_files": True}


def test_content_check_reports_absent_keys_other_values_and_unavailable_columns():
    sample = {
        "debezium": [
            {
                "source_name": "s",
                "source_table": "t.a",
                "key": {"id": 1},
                "row": {"id": 1, "x": 1.5},
            },
            {
                "source_name": "s",
                "source_table": "t.a",
                "key": {"id": 2},
                "row": {"id": 2, "x": "b"},
            },
            {
                "source_name": "s",
                "source_table": "t.a",
                "key": {"id": 3},
                "row": {"id": 3, "x": None},
            },
            {"source_name": "s", "source_table": "t.a", "key": {"id": 4}, "row": {"id": 4}},
        ],
        "spanner": [
            {"source_name": "o", "source_table": "T", "key": {"K": 9}, "row": {"K": 9, "v": [1]}},
        ],
        "pgoutput": [],
    }
    found = {
        ("debezium", "s", "t.a", '{"id":1}'): ('{"id":1,"x":1.5}', []),
        ("debezium", "s", "t.a", '{"id":2}'): ('{"id":2,"x":"c"}', []),
        ("debezium", "s", "t.a", '{"id":3}'): ('{"id":3}', ["x"]),
        ("spanner", "o", "T", '{"K":9}'): ('{"v":[1],"K":9}', None),
    }
    report = benchmark.compare_content(sample, found)
    assert report["spanner"] == {"sample_size": 1, "mismatches": 0, "examples": [], "matches": True}
    assert report["pgoutput"]["matches"] is False  # an empty sample proves nothing
    debezium = report["debezium"]
    assert (debezium["sample_size"], debezium["mismatches"], debezium["matches"]) == (4, 3, False)
    other, unavailable, absent = debezium["examples"]
    assert (other["columns"], other["expected"], other["found"]) == (["x"], {"x": "b"}, {"x": "c"})
    assert unavailable["columns"] == ["x"] and unavailable["unavailable_columns"] == ["x"]
    assert absent == {"key": ("s", "t.a", '{"id":4}'), "expected": {"id": 4}, "found": None}
