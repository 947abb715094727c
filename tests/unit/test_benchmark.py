"""The benchmark's bookkeeping (no Spark): stages from dbt's run_results, memory sampling, the
plain-MERGE peer's expected rows and its comparison with the project."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cdc_warehouse.bench import benchmark, memory, peer, workload


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


def test_the_peer_keeps_the_live_keys_and_every_row_a_truncate_emptied(tmp_path):
    """peer_current's expected rows: the generator's live Debezium keys (its plan's), plus every
    side table row ever inserted, since the peer skips truncates."""
    spec = workload.Spec(scale=3_000, seed=5, waves=4, families=("debezium",), jobs=1)
    facts = workload.generate(spec, tmp_path / "workload")["families"]["debezium"]
    plan = workload.plan_base(spec, "debezium", facts["base_events"])
    truncated_away = spec.waves * workload.SIDE_ROWS - len(workload.side_live_keys(spec.waves))
    assert truncated_away > 0
    assert (
        peer.expected_current_rows(facts, "base")
        == len(plan.live) + spec.waves * workload.SIDE_ROWS
    )
    topup = workload.plan_topup(spec, plan, benchmark.PEER_TOPUP_MODE)
    assert peer.expected_current_rows(facts, benchmark.PEER_TOPUP_MODE) == (
        len(topup.live) + spec.waves * workload.SIDE_ROWS
    )


def test_the_peer_reads_the_generated_jsonl_files_of_its_family_only(tmp_path):
    spec = workload.Spec(scale=3_000, seed=5, waves=2, jobs=1)
    manifest = benchmark._workload(spec, tmp_path / "workload", regenerate=False)
    files = benchmark._jsonl_files(tmp_path, manifest["waves"], [benchmark.PEER_FAMILY])
    assert files and all(path.endswith(".jsonl") for path in files)
    assert {Path(path).relative_to(tmp_path / "workload").parts[:2] for path in files} == {
        (wave, "debezium") for wave in manifest["waves"]
    }
    landed = benchmark._jsonl_files(tmp_path, ["wave-0000"], ["debezium"], tmp_path / "landing")
    assert all(Path(path).is_relative_to(tmp_path / "landing" / "debezium") for path in landed)


def peer_run(seconds: float, rows: int) -> dict:
    return {"seconds": seconds, "current_rows": rows, "stages": {"read": 1.0, "history": 2.0}}


FACTS = {
    "base_events": 1000,
    "topup_events": {"realistic": 10, "adversarial": 10, "fixed": 10},
    "live_keys": {"base": 300, "realistic": 303, "adversarial": 300, "fixed": 303},
    "side_table": {"events": 68, "truncates": 4, "live_keys": 8},
}


def test_the_peer_result_holds_its_seconds_events_and_sanity():
    result = benchmark.peer_result(peer_run(4.0, 356), peer_run(2.0, 359), FACTS)
    assert (result["full_seconds"], result["topup_seconds"]) == (4.0, 2.0)
    assert result["events"] == {"full": 1000, "topup": 10}
    assert result["sanity"]["expected_current_rows"] == {"full": 356, "topup": 359}
    assert result["sanity"]["current_matches_live_keys"] is True
    wrong = benchmark.peer_result(peer_run(4.0, 356), peer_run(2.0, 360), FACTS)
    assert wrong["sanity"]["current_matches_live_keys"] is False


def test_the_project_is_compared_with_the_peer_only_when_it_built_debezium_alone():
    results = {
        "full": {"seconds": 40.0},
        "realistic": {"seconds": 9.0},
        "peer": benchmark.peer_result(peer_run(8.0, 356), peer_run(3.0, 359), FACTS),
    }
    assert benchmark.project_vs_peer(results, ["debezium"]) == {"full": 5.0, "topup": 3.0}
    assert benchmark.project_vs_peer(results, ["datastream", "debezium"]) is None
    del results["realistic"]
    assert benchmark.project_vs_peer(results, ["debezium"]) == {"full": 5.0}


def test_the_peer_line_says_how_the_project_compares_or_why_it_does_not():
    result = benchmark.peer_result(peer_run(8.0, 356), peer_run(3.0, 359), FACTS)
    result["project_vs_peer"] = {"full": 5.0, "topup": 3.0}
    full, topup, verdict = benchmark.peer_line(result).splitlines()
    assert (
        full == "peer (plain MERGE, debezium) full: 8.00 s, 1000 events (read 1.00, history 2.00)"
    )
    assert topup.startswith("peer (plain MERGE, debezium) realistic top-up: 3.00 s, 10 events")
    assert verdict == "peer sane: True; project / peer: full 5.00x, topup 3.00x"
    result["project_vs_peer"] = None
    assert benchmark.peer_line(result).endswith("run with --families debezium)")


@pytest.mark.parametrize(
    "options",
    [
        ["--phases", "floor,full,peer", "--families", "datastream,pgoutput"],
        ["--phases", "floor,full,peer", "--discard-landed-waves"],
    ],
)
def test_the_peer_phase_needs_debezium_files_that_stay(options, capsys):
    with pytest.raises(SystemExit):
        benchmark.parse_args(["--scale", "1000", *options])
    assert "the peer phase reads" in capsys.readouterr().err
