"""Debezium end to end: kcat -J records of two servers (with and without the schema envelope)
landed in three waves, the real `cdcw run` after each (the other families' waves beside them,
tests/e2e/families.py), and the Debezium rows of all three marts compared with the independent
oracle: TOAST placeholders filled across runs and across primary key changes, truncates,
snapshot overlap, duplicates, bad lines."""

from __future__ import annotations

import pytest

from .debezium_oracle import expected_marts
from .families import (
    DBT_VARS,
    FAMILY_WAVES,
    HINTED_MODELS,
    KEY_SET_HINTS,
    UNHINTED_RUN,
    compiled_hinted_sql,
)
from .marts import as_mart_text, assert_marts_match

WAVES = FAMILY_WAVES["debezium"]


@pytest.fixture(scope="module")
def waves_run(families_run):
    """The Debezium rows after each wave."""
    return families_run.pipeline, families_run.family_snapshots("debezium")


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_marts_match_oracle_after_each_wave(waves_run, wave_count):
    pipeline, snapshots = waves_run
    assert_marts_match(
        snapshots[wave_count - 1],
        as_mart_text(expected_marts(WAVES[:wave_count])),
        pipeline.landing_root,
        f"after wave {wave_count}",
    )


def test_no_placeholder_reaches_the_marts(waves_run):
    _, snapshots = waves_run
    for mart in ("cdc_current", "cdc_history"):
        for row in snapshots[-1][mart]:
            assert "__debezium_unavailable_value" not in row["row_json"]
            assert "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ" not in row["row_json"]


def test_some_values_stay_unknown_rather_than_null(waves_run):
    """Guards the scenario: a placeholder with no earlier value must be exercised."""
    _, snapshots = waves_run
    assert any(row["unavailable_columns"] for row in snapshots[-1]["cdc_history"])


def test_the_unhinted_run_joined_without_broadcast_hints(families_run):
    """The run that gave the last wave's marts compared above joined the recomputed keys as a
    large backfill does (cdc_broadcast_max_rows 0); under the default limit the hints are back."""
    assert len(WAVES) == UNHINTED_RUN
    assert not [hint for hint in KEY_SET_HINTS if hint in families_run.unhinted_sql]
    pipeline = families_run.pipeline
    assert pipeline.cdcw("dbt", "compile", "--select", *HINTED_MODELS, *DBT_VARS) == 0
    compiled = compiled_hinted_sql(pipeline)
    assert [hint for hint in KEY_SET_HINTS if hint in compiled]
    assert "broadcast(new_half_positions)" in compiled
