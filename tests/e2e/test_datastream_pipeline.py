"""Datastream end to end: realistic files landed in three waves, the real `cdcw run` after each,
and all three marts compared with what the independent oracle derives from the contract."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Pipeline, utc_text

from .datastream_oracle import expected_marts
from .datastream_scenario import build_waves, declared_keys, declared_tables_yaml, write_wave

# Small key partitions so that a run touches some partitions and not others.
DBT_VARS = ("--vars", "{cdc_keys_per_partition: 4}")
WAVES = build_waves()
MARTS = ("cdc_current", "cdc_history", "cdc_quarantine")
BOOKKEEPING = {"last_landing_run", "key_cohort", "landing_run", "landed_at"}


def snapshot(pipeline: Pipeline) -> dict[str, list[dict[str, Any]]]:
    return {mart: pipeline.rows(mart) for mart in MARTS}


def current_facts(rows: list[dict[str, Any]]) -> list[tuple]:
    return sorted(
        (
            row["source_name"],
            row["source_table"],
            row["key_json"],
            row["row_json"],
            tuple(row["unavailable_columns"]),
            row["last_op"],
            row["last_committed_at"],
        )
        for row in rows
    )


def history_facts(rows: list[dict[str, Any]]) -> list[tuple]:
    return sorted(
        (
            row["source_name"],
            row["source_table"],
            row["key_json"],
            row["valid_from"],
            row["valid_to"] or "",
            row["row_json"],
            tuple(row["unavailable_columns"]),
            row["op"],
            row["is_current"],
        )
        for row in rows
    )


def quarantine_facts(rows: list[dict[str, Any]], landing_root: Path | None) -> list[tuple]:
    def relative(path: str) -> str:
        return str(Path(path).relative_to(landing_root)) if landing_root else path

    return sorted(
        (row["source_name"], relative(row["file_path"]), row["line_number"]) for row in rows
    )


def expected(wave_count: int) -> dict[str, list[dict[str, Any]]]:
    oracle = expected_marts(WAVES[:wave_count], declared_keys())
    for row in oracle["cdc_current"]:
        row["last_committed_at"] = utc_text(row["last_committed_at"])
    for row in oracle["cdc_history"]:
        row["valid_from"] = utc_text(row["valid_from"])
        row["valid_to"] = utc_text(row["valid_to"])
    return oracle


def assert_same(actual: list[tuple], wanted: list[tuple], what: str) -> None:
    missing = [row for row in wanted if row not in actual]
    unexpected = [row for row in actual if row not in wanted]
    assert not missing and not unexpected, (
        f"{what}: missing {json.dumps(missing, indent=1, default=str)}\n"
        f"unexpected {json.dumps(unexpected, indent=1, default=str)}"
    )


@pytest.fixture(scope="module")
def waves_run(tmp_path_factory, java_available) -> tuple[Pipeline, list[dict[str, list]]]:
    """Land wave after wave, `cdcw run` after each, and keep the marts after every run."""
    pipeline = Pipeline(tmp_path_factory.mktemp("datastream_waves"), declared_tables_yaml())
    snapshots = []
    for wave in WAVES:
        write_wave(pipeline.landing_root, wave)
        assert pipeline.cdcw("run", *DBT_VARS) == 0, "cdcw run (land + dbt build) failed"
        snapshots.append(snapshot(pipeline))
    return pipeline, snapshots


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_current_state_matches_oracle_after_each_wave(waves_run, wave_count):
    _, snapshots = waves_run
    assert_same(
        current_facts(snapshots[wave_count - 1]["cdc_current"]),
        current_facts(expected(wave_count)["cdc_current"]),
        f"cdc_current after wave {wave_count}",
    )


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_history_matches_oracle_after_each_wave(waves_run, wave_count):
    _, snapshots = waves_run
    assert_same(
        history_facts(snapshots[wave_count - 1]["cdc_history"]),
        history_facts(expected(wave_count)["cdc_history"]),
        f"cdc_history after wave {wave_count}",
    )


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_bad_lines_are_quarantined_with_file_line_and_reason(waves_run, wave_count):
    pipeline, snapshots = waves_run
    rows = snapshots[wave_count - 1]["cdc_quarantine"]
    assert all(row["reason"] for row in rows)
    assert_same(
        quarantine_facts(rows, pipeline.landing_root),
        quarantine_facts(expected(wave_count)["cdc_quarantine"], None),
        f"cdc_quarantine after wave {wave_count}",
    )


def test_history_has_versions_from_several_key_partitions(waves_run):
    """Guards the test itself: the scenario must spread keys over partitions, or the
    incremental partition logic above would go unexercised."""
    _, snapshots = waves_run
    assert len({row["key_cohort"] for row in snapshots[-1]["cdc_history"]}) >= 5


def test_a_run_without_new_files_changes_nothing(waves_run):
    pipeline, snapshots = waves_run
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    assert snapshot(pipeline) == snapshots[-1] | {}


def test_incremental_runs_equal_a_full_refresh(waves_run):
    pipeline, snapshots = waves_run
    assert pipeline.cdcw("dbt", "build", "--full-refresh", *DBT_VARS) == 0
    refreshed = snapshot(pipeline)
    for mart in MARTS:
        assert sorted(map(repr, refreshed[mart])) == sorted(map(repr, snapshots[-1][mart])), mart


def test_all_waves_landed_at_once_give_the_same_marts(waves_run, tmp_path):
    _, snapshots = waves_run
    single = Pipeline(tmp_path, declared_tables_yaml())
    for wave in WAVES:
        write_wave(single.landing_root, wave)
    assert single.cdcw("run", *DBT_VARS) == 0
    together = snapshot(single)
    assert current_facts(together["cdc_current"]) == current_facts(snapshots[-1]["cdc_current"])
    assert history_facts(together["cdc_history"]) == history_facts(snapshots[-1]["cdc_history"])
    assert quarantine_facts(together["cdc_quarantine"], single.landing_root) == (
        quarantine_facts(snapshots[-1]["cdc_quarantine"], waves_run[0].landing_root)
    )
