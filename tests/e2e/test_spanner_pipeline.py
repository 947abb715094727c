"""Spanner end to end: change stream rows of two streams (GoogleSQL and PostgreSQL dialect)
landed in four waves, the real `cdcw run` after each (the other families' waves beside them,
tests/e2e/families.py), and the Spanner rows of all three marts plus the operator view
``cdc_spanner_streams`` compared with the independent oracle: partition splits and merges,
heartbeat-only and stalled partitions holding the low watermark, transactions spread over
partitions and waves, all four value capture types, duplicates, bad lines."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline, utc_text

from .families import FAMILY_WAVES, SPANNER_STATUS
from .marts import as_mart_text, assert_marts_match, assert_same_marts, snapshot
from .spanner_oracle import expected_marts, expected_stream_status
from .test_spanner_oracle_selfcheck import children, data, files, hb, jsonl
from .waves import write_wave

# Not applied_transactions: the mart counts a released transaction whose change was quarantined
# for a value that does not fit, and the oracle drops such a record with its line.
STATUS_COLUMNS = (
    "low_watermark",
    "open_partitions",
    "incomplete_transactions",
    "waiting_transactions",
)
WAVES = FAMILY_WAVES["spanner"]


def status_facts(rows: list[dict[str, Any]]) -> dict[str, tuple[Any, ...]]:
    return {row["source_name"]: tuple(row[c] for c in STATUS_COLUMNS) for row in rows}


def expected_status(wave_count: int) -> dict[str, tuple[Any, ...]]:
    return {
        row["source_name"]: (
            utc_text(row["low_watermark"]),
            row["open_partitions"],
            row["incomplete_transactions"],
            row["waiting_transactions"],
        )
        for row in expected_stream_status(WAVES[:wave_count])
    }


@pytest.fixture(scope="module")
def waves_run(families_run):
    """The Spanner rows after each wave, and the status view (Spanner's alone) after each."""
    return (
        families_run.pipeline,
        families_run.family_snapshots("spanner"),
        families_run.statuses[: len(WAVES)],
    )


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_marts_match_oracle_after_each_wave(waves_run, wave_count):
    pipeline, snapshots, _ = waves_run
    assert_marts_match(
        snapshots[wave_count - 1],
        as_mart_text(expected_marts(WAVES[:wave_count])),
        pipeline.landing_root,
        f"after wave {wave_count}",
    )


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_stream_status_matches_oracle_after_each_wave(waves_run, wave_count):
    _, _, statuses = waves_run
    rows = statuses[wave_count - 1]
    assert not isinstance(rows, str), rows
    assert len(rows) == len({row["source_name"] for row in rows}), "one row per stream"
    assert status_facts(rows) == expected_status(wave_count)


def test_stream_status_columns_are_typed(waves_run):
    pipeline, _, statuses = waves_run
    assert not isinstance(statuses[-1], str), statuses[-1]
    types = dict(pipeline.spark().table(SPANNER_STATUS).dtypes)
    assert types["source_name"] == "string"
    assert types["low_watermark"] == "timestamp"
    assert types["open_partitions"] in ("int", "bigint")
    assert types["incomplete_transactions"] in ("int", "bigint")


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_nothing_above_the_low_watermark_is_applied(waves_run, wave_count):
    """Every applied change is at or below its stream's low watermark (as the oracle computes
    it from the landed files, independently of the status view)."""
    _, snapshots, _ = waves_run
    watermark = {name: status[0] for name, status in expected_status(wave_count).items()}
    assert None not in watermark.values(), "the scenario always has an open partition"
    marts = snapshots[wave_count - 1]
    current = [r for r in marts["cdc_current"] if r["source_system"] == "spanner"]
    history = [r for r in marts["cdc_history"] if r["source_system"] == "spanner"]
    assert current and history
    for row in current:
        assert row["last_committed_at"] <= watermark[row["source_name"]], row
    for row in history:
        assert row["valid_from"] <= watermark[row["source_name"]], row
        assert row["valid_to"] is None or row["valid_to"] <= watermark[row["source_name"]], row


def test_some_values_stay_unknown_rather_than_null(waves_run):
    """Guards the scenario: a key first seen through a partial update must be exercised."""
    _, snapshots, _ = waves_run
    assert any(row["unavailable_columns"] for row in snapshots[1]["cdc_current"])
    assert any(row["unavailable_columns"] for row in snapshots[-1]["cdc_history"])


def test_history_has_versions_from_several_key_partitions(waves_run):
    """Guards the test itself: the keys must spread over several key partitions, or the
    incremental partition logic would go unexercised."""
    _, snapshots, _ = waves_run
    assert len({row["key_cohort"] for row in snapshots[-1]["cdc_history"]}) >= 4


def test_a_run_that_releases_every_waiting_transaction_shows_none(java_available, tmp_path):
    """When a run releases the last pending transaction, the view counts none waiting, not the
    set kept for the run before (an empty set still marks its run). Only the view and what
    feeds it are built: the rule lives there."""
    first = files(
        init=jsonl(children(None, "10:00:00", ("a", [None]), ("b", [None]))),
        a_1=jsonl(
            data("a", "10:01:00", "t1", "INSERT", [({"id": 1}, {"v": "one"})]),
            hb("a", "10:02:00"),
        ),
        b_1=jsonl(hb("b", "10:00:30")),
    )
    # b reports past t1's commit: the watermark reaches a's 10:02 and releases t1
    second = files(b_2=jsonl(hb("b", "10:03:00")))
    pipeline = Pipeline(tmp_path)
    counted = ("applied_transactions", "waiting_transactions", "incomplete_transactions")
    counts = []
    for wave in (first, second):
        write_wave(pipeline.landing_root, wave)
        assert pipeline.cdcw("run", "--select", f"+{SPANNER_STATUS}", *BUILD_WITHOUT_TESTS) == 0
        [row] = pipeline.rows(SPANNER_STATUS)
        counts.append(tuple(row[column] for column in counted))
    assert counts == [(0, 1, 0), (1, 0, 0)]


def test_a_column_first_seen_after_a_partial_update_counts_in_it_as_after_a_full_refresh(
    java_available, tmp_path
):
    """A NEW_VALUES update names only the columns it changed; the table's other columns are
    those known when the history is built. A column first seen a run later is unknown in the
    earlier update's version too: the incremental runs give what a full refresh gives, and what
    the oracle gives."""
    narrow = {"id": {"code": "INT64"}, "v": {"code": "STRING"}}
    wide = {**narrow, "w": {"code": "STRING"}}
    waves = [
        files(
            init=jsonl(children(None, "10:00:00", ("a", [None]))),
            a_1=jsonl(
                data("a", "10:01:00", "t1", "INSERT", [({"id": 1}, {"v": "one"})], columns=narrow),
                data(
                    "a",
                    "10:02:00",
                    "t2",
                    "UPDATE",
                    [({"id": 1}, {"v": "uno"})],
                    capture="NEW_VALUES",
                    columns=narrow,
                ),
                hb("a", "10:03:00"),
            ),
        ),
        files(
            a_2=jsonl(
                data(
                    "a",
                    "10:04:00",
                    "t3",
                    "INSERT",
                    [({"id": 2}, {"v": "two", "w": "zwei"})],
                    columns=wide,
                ),
                hb("a", "10:05:00"),
            )
        ),
    ]
    pipeline = Pipeline(tmp_path)
    for wave in waves:
        write_wave(pipeline.landing_root, wave)
        assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    incremental = snapshot(pipeline)
    [update] = [row for row in incremental["cdc_history"] if row["op"] == "update"]
    assert update["unavailable_columns"] == ["w"]
    assert_marts_match(
        incremental, as_mart_text(expected_marts(waves)), pipeline.landing_root, "incremental"
    )
    assert pipeline.cdcw("dbt", "run", "--full-refresh") == 0
    assert_same_marts(snapshot(pipeline), incremental)
