"""`cdcw bench`: the pipeline measured against its physical floor, on one generated workload.

    cdcw bench --scale 1000000 --out bench/results-1m.json [--work bench/1m]

In one run, on the same generated files (cdc_warehouse.bench.workload):

floor        Spark reads the landed files once and writes the same number of rows as parquet
full         land every base wave (one landing run each, as files arrive) + one `dbt build`,
             from an empty warehouse
realistic    from the full build's warehouse: land 1% more events (new keys, recent keys, a
             few late changes of old keys) + `dbt build`
adversarial  the same, the 1% spread over random live keys of all ages
small        from the full build's warehouse: land one small file (at most 1,000 events of one
             family) + the build `cdcw run` makes of it; then the next run, which finds no new
             file: `seconds_over_noop` is how much longer the first process took than the second
             (each whole, JVM start included)
warm         from the full build's warehouse: one `cdcw run --every` process fed one small file
             per cycle (cdc_warehouse.bench.warm): seconds from a file's landing to cdc_current,
             p50 and p95, and the driver's RSS after the first, the 10th and the last cycle; not
             in the default phases
peer         the plain-MERGE peer (cdc_warehouse.bench.peer) on the Debezium files: the base
             waves from empty, then the realistic top-up in a second process; beside the
             project's full and realistic phases when they built Debezium alone
             (`--families debezium`); not in the default phases

Every build is the one `cdcw run` makes: the families with new lines and what they feed.

Each phase runs in its own Python process (its own driver JVM) while this process samples
the resident memory of its process tree (/proc): the driver's Python process, its JVM and
the Python UDF workers, separately and in total; the child also reports its own and its
JVM's peak (VmHWM). Per stage times come from dbt's run_results.json. Times exclude JVM
start-up (reported apart); ratios are to the floor measured in the same run, so results
compare across noisy machines. A sanity check compares cdc_current's rows per source system
with the generator's count of live keys.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from cdc_warehouse.bench import peer, table_reads, warm, workload
from cdc_warehouse.bench.memory import TreeSampler, own_high_water_marks
from cdc_warehouse.cli import duration_seconds
from cdc_warehouse.files import replace_text
from cdc_warehouse.run_log import DBT_STAGES, MARKER, runs_table, stage_of
from cdc_warehouse.settings import PROJECT_DIR, load_settings
from python_udfs.families import FAMILIES
from python_udfs.json_values import canonical_json

# The phases that land on a copy of the full build: the two top-ups, then the small file.
INCREMENTAL_PHASES = (*workload.TOPUP_MODES, workload.SMALL_FILE)
# The `cdcw run` after the small file's, which finds nothing new (part of the small phase).
IDLE_RUN = "idle"
# The content check and run log rows of the warm phase, once its continuous process stopped.
WARM_CHECK = "warm-check"
# The plain-MERGE peer: its base waves, then (a process of its own, as each of the project's
# phases) the top-up it shares with the project's phase of that name. The realistic one, whose
# +1% the target compares (#56); at 1M Debezium events it is as large as `fixed`.
PEER = "peer"
PEER_TOPUP = "peer-topup"
PEER_TOPUP_MODE = "realistic"
PEER_FAMILY = "debezium"
DEFAULT_PHASES = ("floor", "full", *INCREMENTAL_PHASES)
PHASES = (*DEFAULT_PHASES, warm.WARM, PEER)
STAGES = ("land", "staging", "change_log", "history", "current", "tests", "other", "dbt_overhead")
# What landing lands, in its order (python_udfs/families.py).
LANDED_FAMILIES = tuple(family.name for family in FAMILIES)
TARGETS = {
    "full_vs_floor": 2.5,
    "driver_peak_rss_gb": 4.0,
    "realistic_vs_full": 0.05,
    "realistic_vs_floor": 1.5,
    "adversarial_vs_floor": 2.5,
    "small_over_noop_seconds": 15.0,
    "warm_p95_seconds": 10.0,
    "warm_rss_last_vs_baseline": 1.1,
    # The project's Debezium-only top-up faster than the plain-MERGE peer's on the same files.
    "project_vs_peer_topup": 1.0,
}


# --------------------------------------------------------------------------------------------
# Child side: one phase in a fresh process
# --------------------------------------------------------------------------------------------


def dbt_timings(run_results: Path) -> dict[str, Any]:
    """Seconds per node and per stage from dbt's run_results.json."""
    document = json.loads(run_results.read_text())
    nodes = {}
    stages = dict.fromkeys(DBT_STAGES, 0.0)
    for node in document.get("results", []):
        seconds = float(node.get("execution_time") or 0.0)
        name = node["unique_id"].split(".")[-1]
        if node["unique_id"].startswith("test."):
            name = "test." + name
        nodes[name] = {"seconds": round(seconds, 3), "status": node.get("status")}
        stages[stage_of(node["unique_id"])] += seconds
    return {
        "elapsed": float(document.get("elapsed_time") or 0.0),
        "nodes": nodes,
        "stages": {k: round(v, 3) for k, v in stages.items()},
    }


def _sample_identity(family: str, row: dict[str, Any]) -> tuple[str, str, str, str]:
    """(source_system, source_name, source_table, key_json) of an expected row: cdc_current's
    unique key, key_json in its canonical text."""
    return family, row["source_name"], row["source_table"], canonical_json(row["key"])


def compare_content(
    sample: dict[str, list[dict[str, Any]]],
    found: dict[tuple[str, str, str, str], tuple[str | None, Any]],
) -> dict[str, Any]:
    """Per family: the sample's size, its mismatches (a key absent, a column's value other
    than expected, an unavailable column) with a few examples, and whether all matched.
    `found`: identity -> (row_json, unavailable_columns) of cdc_current's rows. Values are
    compared as JSON values: both sides are in the warehouse's value encoding (the expected rows
    were written through `json_values.normalize`)."""
    report: dict[str, Any] = {}
    for family, rows in sample.items():
        mismatches = []
        for row in rows:
            identity = _sample_identity(family, row)
            want = json.loads(json.dumps(row["row"]))
            if identity not in found:
                mismatches.append({"key": identity[1:], "expected": want, "found": None})
                continue
            row_json, unavailable = found[identity]
            got = json.loads(row_json) if row_json is not None else {}
            if got != want or unavailable:
                columns = sorted(
                    c for c in set(want) | set(got) if got.get(c, ...) != want.get(c, ...)
                )
                mismatches.append(
                    {
                        "key": identity[1:],
                        "columns": columns,
                        "expected": {c: want.get(c) for c in columns},
                        "found": {c: got.get(c) for c in columns},
                        "unavailable_columns": list(unavailable or []),
                        "why": row.get("why"),
                    }
                )
        report[family] = {
            "sample_size": len(rows),
            "mismatches": len(mismatches),
            "examples": mismatches[:3],
            "matches": not mismatches and bool(rows),
        }
    return report


def _content_check(spark, sample: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """`compare_content` of cdc_current's rows of the generator's sampled keys."""
    identities = [_sample_identity(family, row) for family, rows in sample.items() for row in rows]
    spark.createDataFrame(
        identities or [("", "", "", "")],
        "source_system string, source_name string, source_table string, key_json string",
    ).createOrReplaceTempView("bench_expected_keys")
    found = {
        (r[0], r[1], r[2], r[3]): (r[4], r[5])
        for r in spark.sql(
            "select c.source_system, c.source_name, c.source_table, c.key_json, c.row_json, "
            "c.unavailable_columns from cdc_current as c inner join bench_expected_keys as e "
            "on c.source_system = e.source_system and c.source_name = e.source_name "
            "and c.source_table = e.source_table and c.key_json = e.key_json"
        ).collect()
    }
    return compare_content(sample, found)


def _sanity(spark, sample: dict[str, list[dict[str, Any]]] | None = None) -> dict[str, Any]:
    """Counts of cdc_current, cdc_history and the quarantine; with the generator's `sample`
    (the full build), cdc_current's values of the sampled keys too."""
    current = {
        row[0]: row[1]
        for row in spark.sql(
            "select source_system, count(*) from cdc_current group by source_system"
        ).collect()
    }
    return {
        "current_rows": current,
        "history_rows": spark.sql("select count(*) from cdc_history").first()[0],
        "quarantine_rows": spark.sql("select count(*) from cdc_quarantine").first()[0],
        # The layout's cost driver: key partitions that the last landing run touched.
        "key_partitions": spark.sql(
            "select count(distinct key_cohort) from cdc_internal.int_cdc__key_registry"
        ).first()[0],
        "key_partitions_touched_by_last_run": spark.sql(
            "select count(distinct key_cohort) from cdc_internal.int_cdc__change_log "
            "where landing_run = (select max(landing_run) from cdc_internal.int_cdc__change_log)"
        ).first()[0],
        **(_content_result(_content_check(spark, sample)) if sample is not None else {}),
    }


def _one_table_reads(spark) -> dict[str, Any]:
    """What a typed view of one source table reads of cdc_current and cdc_history
    (table_reads): the table whose share of cdc_current's rows is nearest 1%, and the smallest."""
    rows = spark.sql(
        "select source_system, source_table, count(*) as keys from cdc_current group by 1, 2"
    ).collect()
    if not rows:
        return {}
    total = sum(row.keys for row in rows)
    chosen = {
        "nearest_one_percent": min(rows, key=lambda row: abs(row.keys / total - 0.01)),
        "smallest": min(rows, key=lambda row: row.keys),
    }
    return {
        name: {
            "source_system": row.source_system,
            "source_table": row.source_table,
            "share_of_current_rows": round(row.keys / total, 5),
            **{
                mart: table_reads.one_table_reads(spark, mart, row.source_system, row.source_table)
                for mart in ("cdc_current", "cdc_history")
            },
        }
        for name, row in chosen.items()
    }


def _content_result(content: dict[str, Any]) -> dict[str, Any]:
    return {
        "current_content": content,
        "current_matches_expected_rows": all(f["matches"] for f in content.values()),
    }


def _expected_sample(work: Path, families: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The generator's expected rows of its sampled keys, of the landed families."""
    return {
        family: rows
        for family, rows in workload.load_expected_sample(work / "workload").items()
        if family in families
    }


def _warm_check(spark, work: Path, families: Sequence[str]) -> dict[str, Any]:
    """After the warm phase's cycles: the counts, the expected values of the sampled keys that
    no cycle changed (the sample's values are those after the base waves), and the run log's
    rows of the cycles' runs."""
    settings = load_settings()
    landing_runs = sorted(
        {c["landing_run"] for c in json.loads((work / warm.CYCLES_FILE).read_text())["cycles"]}
    )
    changed = {
        tuple(row)
        for row in spark.sql(
            "select distinct source_system, source_name, source_table, key_json "
            f"from {settings.internal_schema}.int_cdc__change_log "
            f"where landing_run >= {landing_runs[0]}"
        ).collect()
    }
    sample, unchanged = _expected_sample(work, families), {}
    for family, rows in sample.items():
        kept = [row for row in rows if _sample_identity(family, row) not in changed]
        if kept:  # an empty sample proves nothing (compare_content)
            unchanged[family] = kept
    runs = spark.sql(
        "select landing_run, status, files_landed, lines_landed, "
        "cast(started_at as double) as started, cast(ended_at as double) as ended "
        f"from {runs_table(settings)} "
        f"where files_landed > 0 and landing_run in ({', '.join(map(str, landing_runs))})"
    )
    return {
        "sample_keys_changed_by_cycles": {
            family: len(rows) - len(unchanged.get(family, [])) for family, rows in sample.items()
        },
        "sanity": _sanity(spark, unchanged),
        "run_log": [row.asDict() for row in runs.collect()],
    }


def run_phase(phase: str, work: Path, result_path: Path, discard_landed: bool = False) -> int:
    """One phase, in this (fresh) process; writes its measurements to `result_path`.
    `discard_landed`: delete each delivery's generated files once landed."""
    from cdc_warehouse.landing import RawTables, land
    from cdc_warehouse.steps import build_new_landings, start_spark, warehouse_lock

    manifest = workload.load_manifest(work / "workload")
    families = LANDED_FAMILIES
    settings = load_settings()
    raw_tables = RawTables(settings.raw_schema)
    result: dict[str, Any] = {"phase": phase}
    started = time.perf_counter()
    if phase == "floor":
        from cdc_warehouse.spark import build_session

        spark = build_session(settings)
        result["startup_seconds"] = round(time.perf_counter() - started, 3)
        paths = _jsonl_files(work, manifest["waves"], families, settings.landing_root)
        t0 = time.perf_counter()
        frame = spark.read.text(paths)
        frame.write.mode("overwrite").parquet(str(work / "floor-output"))
        result["seconds"] = round(time.perf_counter() - t0, 3)
        result["rows"] = spark.read.parquet(str(work / "floor-output")).count()
        result["files"] = len(paths)
    elif phase in (PEER, PEER_TOPUP):
        from cdc_warehouse.spark import build_session

        spark = build_session(settings)
        result["startup_seconds"] = round(time.perf_counter() - started, 3)
        deliveries = manifest["waves"] if phase == PEER else [manifest["topups"][PEER_TOPUP_MODE]]
        # The generated files themselves: a kept full build's run starts from an empty landing
        # root (--reuse-full).
        result |= peer.run(
            spark, _jsonl_files(work, deliveries, [PEER_FAMILY]), settings.warehouse_dir
        )
    else:
        with warehouse_lock(settings):
            spark = start_spark(settings)
            result["startup_seconds"] = round(time.perf_counter() - started, 3)
            if phase == WARM_CHECK:
                result |= _warm_check(spark, work, families)
            elif phase == IDLE_RUN:
                # The run after the small file's: nothing new to land, so no build.
                t0 = time.perf_counter()
                build_new_landings(
                    spark,
                    land(
                        spark, raw_tables, settings.landing_root, settings.partial_line_wait_seconds
                    ),
                    [],
                    settings,
                )
                result["seconds"] = round(time.perf_counter() - t0, 3)
            else:
                deliveries = manifest["waves"] if phase == "full" else [f"topup-{phase}"]
                land_seconds = []
                for name in deliveries:
                    workload.stage(work / "workload", name, settings.landing_root)
                    t0 = time.perf_counter()
                    report = land(
                        spark, raw_tables, settings.landing_root, settings.partial_line_wait_seconds
                    )
                    land_seconds.append(round(time.perf_counter() - t0, 3))
                    print(f"bench: {name}: {report.files} files, {report.lines} lines", flush=True)
                    if discard_landed:
                        workload.discard(work / "workload", name, settings.landing_root)
                t0 = time.perf_counter()
                # As `cdcw run` builds: what the new lines feed, on the previous phase's build.
                ok = build_new_landings(spark, report, [], settings)
                dbt_seconds = time.perf_counter() - t0
                result["land_seconds"] = round(sum(land_seconds), 3)
                result["land_seconds_per_run"] = land_seconds
                result["dbt_seconds"] = round(dbt_seconds, 3)
                result["seconds"] = round(sum(land_seconds) + dbt_seconds, 3)
                result["dbt_success"] = ok
                result["dbt"] = dbt_timings(settings.dbt_dir / "target" / "run_results.json")
                # The generator's expected rows are those after the base waves.
                sample = _expected_sample(work, families) if phase == "full" else None
                result["sanity"] = _sanity(spark, sample)
                result["one_table_reads"] = _one_table_reads(spark)
    result.update(own_high_water_marks())
    replace_text(result_path, json.dumps(result, indent=2) + "\n")
    return 0


def _jsonl_files(
    work: Path, deliveries: Sequence[str], families: Sequence[str], root: Path | None = None
) -> list[str]:
    """The `.jsonl` files of `families` in `deliveries`: where they were landed under `root`,
    else in each delivery's directory of the workload."""
    return [
        str((root or work / "workload" / name) / relative)
        for name in deliveries
        for relative in workload.delivery_files(work / "workload", name)
        if relative.parts[0] in families and relative.suffix == ".jsonl"
    ]


# --------------------------------------------------------------------------------------------
# Parent side: the whole benchmark
# --------------------------------------------------------------------------------------------

# Each phase's warehouse directory; the others' is the project's, `warehouse`.
WAREHOUSES = {"floor": "floor-warehouse", PEER: "peer-warehouse", PEER_TOPUP: "peer-warehouse"}


def _phase_env(work: Path, phase: str) -> dict[str, str]:
    env = dict(os.environ)
    warehouse = work / WAREHOUSES.get(phase, "warehouse")
    env.update(
        CDC_LANDING_ROOT=str(work / "landing"),
        CDC_WAREHOUSE_DIR=str(warehouse),
        PYTHONUNBUFFERED="1",
    )
    return env


def _run_child(phase: str, work: Path, discard_landed: bool = False) -> dict[str, Any]:
    result_path = work / f"result-{phase}.json"
    result_path.unlink(missing_ok=True)
    log = work / f"{phase}.log"
    with log.open("w") as handle:
        wall_started = time.perf_counter()
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cdc_warehouse.bench.benchmark",
                "_phase",
                phase,
                str(work),
                *(["--discard-landed-waves"] if discard_landed else []),
            ],
            env=_phase_env(work, phase),
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
        sampler = TreeSampler(child.pid)
        sampler.start()
        code = child.wait()
        peaks = sampler.stop()
        wall = time.perf_counter() - wall_started
    if code != 0 or not result_path.exists():
        tail = "".join(log.read_text().splitlines(keepends=True)[-30:])
        raise RuntimeError(f"benchmark phase {phase} failed (exit {code}); log {log}:\n{tail}")
    result = json.loads(result_path.read_text())
    result["process_seconds"] = round(wall, 3)
    result["rss_peak_bytes"] = {
        **peaks,
        **{k: result.pop(k) for k in list(result) if k.endswith("_hwm")},
    }
    result["rss_samples"] = sampler.samples
    # Complete, so that a later --reuse-full run reports this phase as measured here.
    replace_text(result_path, json.dumps(result, indent=2) + "\n")
    return result


def _run_warm(
    work: Path, manifest: dict[str, Any], families: Sequence[str], cycles: int, every: str
) -> dict[str, Any]:
    """The warm phase on a copy of the full build's warehouse: its cycles, then the check
    (`_warm_check`) in a process of its own once the continuous one has stopped."""
    env, log = _phase_env(work, warm.WARM), work / f"{warm.WARM}.log"
    marker = load_settings(env).dbt_dir / MARKER
    result = warm.run_cycles(work / "workload", work / "landing", marker, env, log, cycles, every)
    replace_text(work / warm.CYCLES_FILE, json.dumps(result, indent=2) + "\n")
    if result["exit_code"] != 0:
        raise RuntimeError(
            f"the warm phase's `cdcw run --every` exited {result['exit_code']} on SIGTERM; "
            f"log {log}"
        )
    check = _run_child(WARM_CHECK, work)
    result["runs_match_cycles"] = warm.add_run_log(result["cycles"], check["run_log"])
    result |= warm.summarize(result["cycles"])
    sanity = check["sanity"]
    sanity["sample_keys_changed_by_cycles"] = check["sample_keys_changed_by_cycles"]
    # The top-up's live keys for its family once every line of it has landed, else unknown.
    sanity["expected_live_keys"] = None
    sanity["current_matches_live_keys"] = None
    if result["covers_source"]:
        sanity["expected_live_keys"] = {
            family: manifest["families"][family]["live_keys"][
                warm.SOURCE_TOPUP if family == result["family"] else "base"
            ]
            for family in families
            if family in manifest["families"]
        }
        sanity["current_matches_live_keys"] = all(
            sanity["current_rows"].get(family, 0) == count
            for family, count in sanity["expected_live_keys"].items()
        )
    result["sanity"] = sanity
    return result


def _run_peer(work: Path, manifest: dict[str, Any], keep: bool) -> dict[str, Any]:
    """The peer's base waves from empty, then its top-up on the tables they left, each in a
    process of its own (`peer_result`)."""
    _reset(work / WAREHOUSES[PEER])
    full = _run_child(PEER, work)
    topup = _run_child(PEER_TOPUP, work)
    if not keep:
        _reset(work / WAREHOUSES[PEER])
    return peer_result(full, topup, manifest["families"][PEER_FAMILY])


def peer_result(
    full: dict[str, Any], topup: dict[str, Any], facts: dict[str, Any]
) -> dict[str, Any]:
    """`phases.peer`: the two runs' seconds and events, the runs themselves, and the sanity
    check: peer_current's rows against the generator's live keys (`peer.expected_current_rows`).
    `facts`: the manifest's facts of the peer's family."""
    expected = {
        "full": peer.expected_current_rows(facts, "base"),
        "topup": peer.expected_current_rows(facts, PEER_TOPUP_MODE),
    }
    found = {"full": full["current_rows"], "topup": topup["current_rows"]}
    return {
        "family": PEER_FAMILY,
        "topup_mode": PEER_TOPUP_MODE,
        "full_seconds": full["seconds"],
        "topup_seconds": topup["seconds"],
        "events": {
            "full": facts["base_events"],
            "topup": facts["topup_events"][PEER_TOPUP_MODE],
        },
        "full": full,
        "topup": topup,
        "sanity": {
            "expected_current_rows": expected,
            "current_rows": found,
            "current_matches_live_keys": found == expected,
        },
    }


def project_vs_peer(results: dict[str, Any], landed: Sequence[str]) -> dict[str, float] | None:
    """The project's seconds over the peer's: its full build over the peer's, its top-up of the
    peer's mode over the peer's top-up (when that phase ran). None unless the project's phases
    built the peer's family alone (`--families debezium`): else they built other files too."""
    if PEER not in results or list(landed) != [PEER_FAMILY]:
        return None
    project_phases = {"full": "full", "topup": PEER_TOPUP_MODE}
    return {
        name: round(results[phase]["seconds"] / results[PEER][f"{name}_seconds"], 3)
        for name, phase in project_phases.items()
        if phase in results
    }


def _reset(path: Path) -> None:
    if path.exists():
        shutil.rmtree(path)


def _workload(spec: workload.Spec, root: Path, regenerate: bool) -> dict[str, Any]:
    if not regenerate and (root / "manifest.json").exists():
        manifest = workload.load_manifest(root)
        wanted = {**asdict(spec), "families": list(spec.families)}
        wanted.pop("jobs")
        held = dict(manifest["spec"])
        held.pop("jobs", None)
        if held == wanted and workload.is_complete(root, manifest):
            return manifest
    return workload.generate(spec, root)


def _events(manifest: dict[str, Any], families: Sequence[str], key: str, mode: str = "") -> int:
    total = 0
    for family in families:
        facts = manifest["families"].get(family)
        if facts:
            total += facts["base_events"] if key == "base" else facts["topup_events"][mode]
    return total


def _summary(results: dict[str, Any], manifest: dict[str, Any], families: Sequence[str]):
    floor = results["floor"]["seconds"]
    base_events = _events(manifest, families, "base")
    out: dict[str, Any] = {}
    for phase in ("full", *INCREMENTAL_PHASES):
        if phase not in results:
            continue
        result = results[phase]
        if phase == workload.SMALL_FILE:
            events = result["small_file"]["events"]
        elif phase == "full":
            events = base_events
        else:
            events = _events(manifest, families, "topup", phase)
        nodes_total = sum(result["dbt"]["stages"].values())
        stages = {
            "land": result["land_seconds"],
            **result["dbt"]["stages"],
            # parsing, compile-time queries, hooks: dbt's time outside its nodes
            "dbt_overhead": max(0.0, result["dbt_seconds"] - nodes_total),
        }
        result["events"] = events
        result["events_per_second"] = round(events / max(result["seconds"], 1e-9), 1)
        result["stages"] = {
            name: {
                "seconds": round(seconds, 3),
                "events_per_second": round(events / seconds, 1) if seconds > 0 else None,
                "vs_floor": round(seconds / floor, 3),
            }
            for name, seconds in stages.items()
        }
        result["vs_floor"] = round(result["seconds"] / floor, 3)
        out[phase] = result
        if phase == workload.SMALL_FILE:
            # A cut of a top-up: the generator did not plan which keys it leaves alive.
            result["sanity"]["expected_live_keys"] = None
            result["sanity"]["current_matches_live_keys"] = None
            continue
        expected = {
            family: manifest["families"][family]["live_keys"]["base" if phase == "full" else phase]
            for family in families
            if family in manifest["families"]
        }
        result["sanity"]["expected_live_keys"] = expected
        result["sanity"]["current_matches_live_keys"] = all(
            result["sanity"]["current_rows"].get(family, 0) == count
            for family, count in expected.items()
        )
    full = results.get("full", {}).get("seconds")
    ratios = {"full_vs_floor": out["full"]["vs_floor"]} if "full" in out else {}
    for mode in workload.TOPUP_MODES:
        if mode in out and full:
            ratios[f"{mode}_vs_full"] = round(out[mode]["seconds"] / full, 4)
            ratios[f"{mode}_vs_floor"] = out[mode]["vs_floor"]
    if workload.SMALL_FILE in out:
        ratios["small_over_noop_seconds"] = out[workload.SMALL_FILE]["seconds_over_noop"]
    # Each process's own high-water mark (VmHWM, exact), summed: an upper bound of the
    # driver's peak; the sampled peak (at one instant) is reported beside it.
    peak = max(
        (r["rss_peak_bytes"]["driver_python_hwm"] + r["rss_peak_bytes"]["jvm_hwm"])
        for r in out.values()
    )
    ratios["driver_peak_rss_gb"] = round(peak / 2**30, 3)
    sampled = max(r["rss_peak_bytes"]["driver"] for r in out.values())
    ratios["driver_peak_rss_sampled_gb"] = round(sampled / 2**30, 3)
    for name, ratio in (results.get(PEER, {}).get("project_vs_peer") or {}).items():
        ratios[f"project_vs_peer_{name}"] = ratio
    if warm.WARM in results:
        ratios["warm_p95_seconds"] = results[warm.WARM]["latency_seconds"]["p95"]
        last_vs_baseline = results[warm.WARM]["driver_rss_bytes"]["last_vs_baseline"]
        if last_vs_baseline is not None:
            ratios["warm_rss_last_vs_baseline"] = last_vs_baseline
    return ratios


def run_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    families = tuple(f for f in args.families.split(",") if f)
    spec = workload.Spec(args.scale, args.seed, args.waves, families, args.chunk_events)
    t0 = time.perf_counter()
    manifest = _workload(spec, work / "workload", args.regenerate)
    generate_seconds = time.perf_counter() - t0
    landed = [f for f in families if f in LANDED_FAMILIES]
    results: dict[str, Any] = {}
    phases = [p for p in PHASES if p in args.phases.split(",")]
    reuse = args.reuse_full and _reusable_full_build(work)
    if reuse:
        # The floor and full build of an earlier run on these files (kept with --keep).
        print("bench: reusing the kept full build", file=sys.stderr, flush=True)
        for phase in ("floor", "full"):
            results[phase] = json.loads((work / f"result-{phase}.json").read_text())
        _reset(work / "landing")
        (work / "landing").mkdir()
    else:
        for path in ("landing", "warehouse", "floor-warehouse", "floor-output", "warehouse.base"):
            _reset(work / path)
        (work / "landing").mkdir()
        for name in manifest["waves"]:
            workload.stage(work / "workload", name, work / "landing")
        if "floor" in phases:
            print(f"bench: floor ({args.scale} events)", file=sys.stderr, flush=True)
            results["floor"] = _run_child("floor", work)
            _reset(work / "floor-output")
            _reset(work / "floor-warehouse")
        # The full build lands wave by wave: start from an empty landing root.
        _reset(work / "landing")
        (work / "landing").mkdir()
        print("bench: full build", file=sys.stderr, flush=True)
        results["full"] = _run_child("full", work, args.discard_landed_waves)
        shutil.copytree(work / "warehouse", work / "warehouse.base")
    for mode in INCREMENTAL_PHASES:
        if mode not in phases:
            continue
        print(f"bench: incremental ({mode})", file=sys.stderr, flush=True)
        _reset(work / "warehouse")
        shutil.copytree(work / "warehouse.base", work / "warehouse")
        results[mode] = _run_child(mode, work)
        if mode == workload.SMALL_FILE:
            # Both runs whole, as an operator times `cdcw run`: a process, its JVM, its work.
            idle = _run_child(IDLE_RUN, work)
            results[mode]["small_file"] = manifest["small_file"]
            results[mode]["noop_seconds"] = idle["process_seconds"]
            results[mode]["seconds_over_noop"] = round(
                results[mode]["process_seconds"] - idle["process_seconds"], 3
            )
        workload.unstage(work / "workload", f"topup-{mode}", work / "landing")
    if warm.WARM in phases:
        print(
            f"bench: warm ({args.warm_cycles} cycles, `cdcw run --every {args.warm_every}`)",
            file=sys.stderr,
            flush=True,
        )
        _reset(work / "warehouse")
        shutil.copytree(work / "warehouse.base", work / "warehouse")
        results[warm.WARM] = _run_warm(work, manifest, landed, args.warm_cycles, args.warm_every)
    if PEER in phases:
        print(f"bench: the plain-MERGE peer ({PEER_FAMILY})", file=sys.stderr, flush=True)
        results[PEER] = _run_peer(work, manifest, args.keep)
        results[PEER]["project_vs_peer"] = project_vs_peer(results, landed)
    ratios = _summary(results, manifest, landed) if "floor" in results else {}
    settings = load_settings()
    document = {
        "command": " ".join(["cdcw", "bench", *args.argv]),
        "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "code": code_revision(PROJECT_DIR),
        "scale": args.scale,
        "seed": args.seed,
        "waves": args.waves,
        "families_generated": list(families),
        "families_landed": landed,
        "machine": {
            "cpus": os.cpu_count(),
            "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
            "python": platform.python_version(),
            "load_average_at_end": os.getloadavg(),
            "spark_master": settings.spark_master,
            "driver_memory": settings.driver_memory,
        },
        "workload": {
            "generate_seconds": round(generate_seconds, 2),
            "generator_seconds_reported": manifest["generate_seconds"],
            "deliveries": manifest["deliveries"],
            "families": manifest["families"],
        },
        "phases": results,
        "ratios": ratios,
        "targets": TARGETS,
    }
    document["reused_full_build"] = bool(reuse)
    if not (args.keep or reuse):
        _reset(work / "warehouse.base")
    return document


def code_revision(project_dir: Path) -> dict[str, Any] | None:
    """The commit the benchmark ran, and whether files differed from it, so that a result names
    the code it measured; None outside a git checkout (or without git)."""

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", "-C", str(project_dir), *args],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except OSError:
            return None
        return done.stdout.strip() if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None
    changed = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "changed_files": changed != ""}


def _reusable_full_build(work: Path) -> bool:
    kept = [work / "warehouse.base", work / "result-floor.json", work / "result-full.json"]
    missing = [str(path) for path in kept if not path.exists()]
    if missing:
        print(f"bench: nothing to reuse ({', '.join(missing)} missing)", file=sys.stderr)
    return not missing


def format_table(document: dict[str, Any]) -> str:
    phases = document["phases"]
    floor = phases.get("floor", {})
    lines = [
        f"scale {document['scale']} events, families landed: "
        f"{', '.join(document['families_landed'])}",
        f"floor: {floor.get('seconds', '?')} s for {floor.get('rows', '?')} rows "
        f"({floor.get('files', '?')} files)",
        "",
        f"{'phase':<12} {'stage':<11} {'seconds':>9} {'events/s':>10} {'x floor':>8}",
    ]
    for phase in ("full", *INCREMENTAL_PHASES):
        result = phases.get(phase)
        if not result or "stages" not in result:
            continue
        for stage, values in result["stages"].items():
            eps = values["events_per_second"]
            lines.append(
                f"{phase:<12} {stage:<11} {values['seconds']:>9.2f} "
                f"{'' if eps is None else f'{eps:>10.0f}':>10} {values['vs_floor']:>8.2f}"
            )
        lines.append(
            f"{phase:<12} {'TOTAL':<11} {result['seconds']:>9.2f} "
            f"{result['events_per_second']:>10.0f} {result['vs_floor']:>8.2f}"
        )
        rss = result["rss_peak_bytes"]
        lines.append(
            f"{'':<12} peak RSS: driver {rss['driver'] / 2**30:.2f} GB "
            f"(python {rss['driver_python'] / 2**30:.2f} GB, "
            f"JVM {rss['jvm'] / 2**30:.2f} GB, JVM HWM {rss['jvm_hwm'] / 2**30:.2f} GB), "
            f"UDF workers {rss['workers'] / 2**30:.2f} GB; "
            f"sane: {result['sanity']['current_matches_live_keys']}"
            + (
                f", values of sampled keys: {result['sanity']['current_matches_expected_rows']}"
                if "current_matches_expected_rows" in result["sanity"]
                else ""
            )
        )
    if warm.WARM in phases:
        result = phases[warm.WARM]
        lines.append(
            warm.summary_line(result)
            + f"; sane: {result['sanity']['current_matches_live_keys']}, values of sampled keys: "
            f"{result['sanity']['current_matches_expected_rows']}, run log rows: "
            f"{result['runs_match_cycles']}"
        )
    if PEER in phases:
        lines.append(peer_line(phases[PEER]))
    lines.append("")
    for name, value in document["ratios"].items():
        target = document["targets"].get(name)
        lines.append(f"{name:<24} {value:>10}" + (f"   (target <= {target})" if target else ""))
    return "\n".join(lines)


def peer_line(result: dict[str, Any]) -> str:
    """The printed table's lines of the plain-MERGE peer beside the project."""
    lines = []
    for run, what in (("full", "full"), ("topup", f"{result['topup_mode']} top-up")):
        stages = ", ".join(f"{name} {s:.2f}" for name, s in result[run]["stages"].items())
        lines.append(
            f"peer (plain MERGE, {result['family']}) {what}: {result[f'{run}_seconds']:.2f} s, "
            f"{result['events'][run]} events ({stages})"
        )
    comparison = result["project_vs_peer"]
    lines.append(
        f"peer sane: {result['sanity']['current_matches_live_keys']}; project / peer: "
        + (
            ", ".join(f"{name} {ratio:.2f}x" for name, ratio in comparison.items())
            if comparison is not None
            else f"not compared (the project built more than {result['family']}: "
            f"run with --families {result['family']})"
        )
    )
    return "\n".join(lines)


def _cycles(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"a number of cycles is a whole number >= 1, not {text!r}")
    return int(text)


def _duration(text: str) -> str:
    """A `cdcw run --every` interval, checked as that option checks it and passed on as given."""
    duration_seconds(text)
    return text


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="cdcw bench", description=__doc__.split("\n")[0])
    parser.add_argument("--scale", type=int, required=True, help="base change events")
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--work", type=Path, help="working directory (default bench/<scale>)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--waves", type=int, default=8)
    parser.add_argument("--families", default=",".join(workload.FAMILIES))
    parser.add_argument("--chunk-events", type=int, default=50_000)
    parser.add_argument(
        "--phases",
        default=",".join(DEFAULT_PHASES),
        help=f"of {','.join(PHASES)} (default: all but {warm.WARM} and {PEER})",
    )
    parser.add_argument(
        "--warm-cycles",
        type=_cycles,
        default=warm.DEFAULT_CYCLES,
        metavar="N",
        help="the warm phase's cycles, each a run that lands one small file",
    )
    parser.add_argument(
        "--warm-every",
        type=_duration,
        default=warm.DEFAULT_EVERY,
        metavar="DURATION",
        help="the warm phase's `cdcw run --every` interval (30s, 5m, 1h)",
    )
    parser.add_argument("--regenerate", action="store_true", help="generate even if present")
    parser.add_argument("--keep", action="store_true", help="keep the full build's warehouse copy")
    parser.add_argument(
        "--discard-landed-waves",
        action="store_true",
        help="delete each base wave's generated files once the full build has landed it, for a "
        "scale whose workload and build do not fit on the disk together (the next run "
        "generates the workload again)",
    )
    parser.add_argument(
        "--reuse-full",
        action="store_true",
        help="measure the incremental phases on the full build kept by an earlier --keep run "
        "on the same workload (its floor and full results are reported again)",
    )
    args = parser.parse_args(argv)
    if PEER in args.phases.split(","):
        if PEER_FAMILY not in args.families.split(","):
            parser.error(f"the {PEER} phase reads {PEER_FAMILY}'s files: --families has none")
        if args.discard_landed_waves:
            parser.error(
                f"the {PEER} phase reads the base waves' generated files, "
                "which --discard-landed-waves deletes"
            )
    args.argv = list(argv)
    if args.work is None:
        args.work = PROJECT_DIR / "bench" / str(args.scale)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["_phase"]:
        phase, work = argv[1], Path(argv[2])
        discard_landed = "--discard-landed-waves" in argv[3:]
        return run_phase(phase, work, work / f"result-{phase}.json", discard_landed)
    if argv[:1] == ["--summarize"]:
        # Recompute ratios and the table of a stored result (e.g. after a change of this
        # module's bookkeeping), without running anything.
        path = Path(argv[1])
        document = json.loads(path.read_text())
        manifest = {"families": document["workload"]["families"]}
        document["ratios"] = _summary(document["phases"], manifest, document["families_landed"])
        document["targets"] = TARGETS
        replace_text(path, json.dumps(document, indent=2) + "\n")
        print(format_table(document))
        return 0
    args = parse_args(argv)
    document = run_benchmark(args)
    print(format_table(document))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        replace_text(args.out, json.dumps(document, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
