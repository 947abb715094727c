"""`cdcw bench` end to end at a tiny scale: the floor, a full build and a run of one small file on
the kept full build; the JSON holds every field, and the marts built from the generated data
agree with the generator (no timing assertions). The plain-MERGE peer's job on generated
Debezium files, in this process: its phase (two processes of its own) would cost minutes of the
suite's budget, and its bookkeeping is tested in tests/unit/test_benchmark.py."""

from __future__ import annotations

import json
import time

import numpy as np

from cdc_warehouse.bench import benchmark, peer, workload
from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import Pipeline

STAGE_FIELDS = {"seconds", "events_per_second", "vs_floor"}
RSS_FIELDS = {"driver", "driver_python", "jvm", "jvm_largest", "jvm_hwm", "workers", "tree"}


def assert_phase_fields(result: dict) -> None:
    """Every field of an incremental or full phase."""
    assert result["dbt_success"] is True
    assert set(result["stages"]) == set(benchmark.STAGES)
    for values in result["stages"].values():
        assert set(values) == STAGE_FIELDS
    assert set(result["rss_peak_bytes"]) >= RSS_FIELDS
    assert result["rss_peak_bytes"]["jvm"] > 0
    assert result["events"] > 0
    assert result["events_per_second"] == round(result["events"] / result["seconds"], 1)
    assert result["sanity"]["quarantine_rows"] == 0
    # A typed view's query of one table opens that table's files and no other's.
    reads = result["one_table_reads"]
    assert set(reads) == {"nearest_one_percent", "smallest"}
    for table in reads.values():
        for mart in ("cdc_current", "cdc_history"):
            read = table[mart]
            assert 0 < read["files_read"] == read["table_files"] < read["mart_files"], table


def assert_marts_agree_with_generator(result: dict) -> None:
    sanity = result["sanity"]
    # cdc_current holds exactly the keys the generator left alive, family by family.
    assert sanity["current_matches_live_keys"], sanity
    assert sanity["current_rows"] == {
        family: count for family, count in sanity["expected_live_keys"].items()
    }
    assert sanity["history_rows"] >= sum(sanity["current_rows"].values())
    # ... and the values the generator expects for a sample of keys in every family (TOAST
    # columns completed, primary key changes, truncates, backfills, Avro, split partitions).
    content = sanity["current_content"]
    assert set(content) == set(sanity["expected_live_keys"]), content
    for family, report in content.items():
        assert report["sample_size"] > 0, family
        assert report["mismatches"] == 0, (family, report["examples"])
    assert sanity["current_matches_expected_rows"] is True


def test_bench_command_writes_every_field_and_sane_marts(tmp_path, java_available):
    """The floor and the full build in a first run, the small file on the kept full build in a
    second (`--reuse-full`). Not the top-up phases: they take the small file's code path
    (`run_benchmark`'s loop over `INCREMENTAL_PHASES`) with other files, and what each top-up
    holds is tested in tests/unit/test_workload.py."""
    out = tmp_path / "results.json"
    workload_args = ["--scale", "2000", "--waves", "2", "--work", str(tmp_path / "work")]
    run = [*workload_args, "--phases", "floor,full", "--out", str(out), "--keep"]
    assert benchmark.main([*run, "--discard-landed-waves"]) == 0
    document = json.loads(out.read_text())
    # Each base wave's files were deleted once landed; the top-ups are still there.
    generated = tmp_path / "work" / "workload"
    assert not list(generated.glob("wave-*"))
    assert {p.name for p in generated.glob("topup-*")} == {
        f"topup-{mode}" for mode in benchmark.INCREMENTAL_PHASES
    }
    assert document["scale"] == 2000
    assert document["code"] == benchmark.code_revision(PROJECT_DIR)
    assert len(document["code"]["commit"]) == 40
    assert time.strptime(document["finished_at"], "%Y-%m-%dT%H:%M:%SZ")
    assert set(document["phases"]) == {"floor", "full"}
    floor = document["phases"]["floor"]
    assert floor["seconds"] > 0 and floor["rows"] > 2000
    landed = document["families_landed"]
    assert {"datastream", "debezium", "pgoutput"} <= set(landed)
    assert_phase_fields(document["phases"]["full"])
    assert_marts_agree_with_generator(document["phases"]["full"])
    assert set(document["ratios"]) == {
        "full_vs_floor",
        "driver_peak_rss_gb",
        "driver_peak_rss_sampled_gb",
    }
    assert document["workload"]["families"]["spanner"]["base_events"] > 0

    # The kept full build serves a second run of an incremental phase only.
    again = tmp_path / "again.json"
    phases = ["--phases", workload.SMALL_FILE, "--reuse-full"]
    assert benchmark.main([*workload_args, *phases, "--out", str(again)]) == 0
    second = json.loads(again.read_text())
    assert second["reused_full_build"] is True
    assert set(second["phases"]) == {"floor", "full", "small"}
    assert second["phases"]["full"]["seconds"] == document["phases"]["full"]["seconds"]
    assert {"full_vs_floor", "small_over_noop_seconds"} <= set(second["ratios"])

    # One Datastream file: `cdcw run` builds that family and what it feeds, then finds nothing.
    small = second["phases"]["small"]
    assert_phase_fields(small)
    assert small["small_file"]["family"] == "datastream"
    assert 0 < small["events"] <= workload.SMALL_FILE_EVENTS
    assert small["noop_seconds"] > 0
    assert small["seconds_over_noop"] == round(small["process_seconds"] - small["noop_seconds"], 3)
    built = set(small["dbt"]["nodes"])
    assert {"int_datastream__events", "cdc_history", "cdc_current"} <= built
    assert not built & {"int_spanner__records", "int_debezium__events", "int_pgoutput__messages"}
    # The workload, incomplete after the discarding run, was generated again.
    assert len(list(generated.glob("wave-*"))) == 2


def test_the_peer_job_leaves_the_generators_live_keys_current(tmp_path, java_available):
    """The peer's base waves from empty, then the realistic top-up on its tables: peer_current
    holds the generator's live keys (and the rows a truncate emptied), one open version each in
    peer_history, and the top-up's deletes removed their keys."""
    spec = workload.Spec(scale=2000, waves=2, families=(benchmark.PEER_FAMILY,), jobs=1)
    manifest = workload.generate(spec, tmp_path / "workload")
    facts = manifest["families"][benchmark.PEER_FAMILY]
    pipeline = Pipeline(tmp_path)
    spark = pipeline.spark()
    runs = {}
    for name, deliveries in (
        ("base", manifest["waves"]),
        (benchmark.PEER_TOPUP_MODE, [manifest["topups"][benchmark.PEER_TOPUP_MODE]]),
    ):
        files = benchmark._jsonl_files(tmp_path, deliveries, [benchmark.PEER_FAMILY])
        runs[name] = result = peer.run(spark, files, pipeline.warehouse_dir)
        assert set(result["stages"]) == {"create", "read", "current", "history"}
        assert result["seconds"] == round(sum(result["stages"].values()), 3)
        assert result["files"] == len(files) and result["changes"] > 0
        assert result["current_rows"] == peer.expected_current_rows(facts, name)
        assert result["open_versions"] == result["current_rows"]
        assert result["history_rows"] > result["current_rows"]
    base = workload.plan_base(spec, benchmark.PEER_FAMILY, facts["base_events"])
    topup = workload.plan_topup(spec, base, benchmark.PEER_TOPUP_MODE)
    deletes = int(np.sum(topup.op == workload.OP_DELETE))
    assert deletes > 0
    merged = runs[benchmark.PEER_TOPUP_MODE]["merges"]
    assert merged["current"]["numTargetRowsDeleted"] == deletes
    # Each key the top-up changed that was live had its open version closed.
    changed_live = np.unique(topup.key[np.isin(topup.key, base.live)])
    assert merged["history"]["numTargetRowsUpdated"] == len(changed_live) > 0
