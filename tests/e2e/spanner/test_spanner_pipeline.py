"""Spanner end to end: change stream rows of two streams (GoogleSQL and PostgreSQL dialect)
landed in four waves, the real `cdcw run` after each (the other families' waves beside them,
tests/e2e/families.py), and the Spanner rows of all three marts plus the operator view
``cdc_spanner_streams`` compared with the independent oracle: partition splits and merges,
heartbeat-only and stalled partitions holding the low watermark, transactions spread over
partitions and waves, all four value capture types, duplicates, bad lines."""

from __future__ import annotations

from typing import Any

import pytest

from cdc_warehouse.bench import pgoutput_encoder as enc
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline, utc_text
from tests.e2e.families import FAMILY_WAVES, SPANNER_STATUS, of_system
from tests.e2e.marts import MARTS, as_mart_text, assert_marts_match, assert_same_marts, snapshot
from tests.e2e.waves import write_wave

from .oracle import expected_marts, expected_stream_status
from .test_spanner_oracle_selfcheck import children, data, files, hb, jsonl, snapshot_file

# Not applied_transactions: the mart counts a released transaction whose change was quarantined
# for a value that does not fit, and the oracle drops such a record with its line.
STATUS_COLUMNS = (
    "low_watermark",
    "open_partitions",
    "incomplete_transactions",
    "waiting_transactions",
    "waiting_snapshot_rows",
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
            row["waiting_snapshot_rows"],
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


# Small inputs of their own, landed in two runs of one pipeline (a build's fixed cost is most of
# a test's time): a column first seen a run after a partial update, a stream whose last waiting
# transaction the second run releases, and snapshots landed before, between and after the log
# files of their period.
NARROW = {"id": {"code": "INT64"}, "v": {"code": "STRING"}}
WIDE = {**NARROW, "w": {"code": "STRING"}}
COLUMN_WAVES = [
    files(
        init=jsonl(children(None, "10:00:00", ("a", [None]))),
        a_1=jsonl(
            data("a", "10:01:00", "t1", "INSERT", [({"id": 1}, {"v": "one"})], columns=NARROW),
            data(
                "a",
                "10:02:00",
                "t2",
                "UPDATE",
                [({"id": 1}, {"v": "uno"})],
                capture="NEW_VALUES",
                columns=NARROW,
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
                columns=WIDE,
            ),
            hb("a", "10:05:00"),
        )
    ),
]


# Stream `released`: t1 waits after the first run, b reporting only up to 10:00:30; in the
# second b reports past t1's commit, the watermark reaches a's 10:02 and releases t1.
RELEASED = "released"
RELEASE_WAVES = [
    files(
        RELEASED,
        init=jsonl(children(None, "10:00:00", ("a", [None]), ("b", [None]))),
        a_1=jsonl(
            data("a", "10:01:00", "t1", "INSERT", [({"id": 1}, {"v": "one"})]),
            hb("a", "10:02:00"),
        ),
        b_1=jsonl(hb("b", "10:00:30")),
    ),
    files(RELEASED, b_2=jsonl(hb("b", "10:03:00"))),
]


def spanner_snapshot_order(stream: str, order: str) -> list[dict[str, bytes]]:
    """One stream's files in two runs: its snapshot read at 10:00:30 (key 1 with w known only
    there, key 2), log A (changes of key 1 at and before it) and log B (a NEW_VALUES update of
    key 1 and the delete of key 2 after it), the snapshot landing `first` (alone: the stream
    has no watermark yet), `between` A and B, or `after` both."""
    snapshot = snapshot_file(
        "10:00:30", {"id": 1, "v": "one", "w": "kept"}, {"id": 2, "v": "two", "w": "gone"},
        columns=WIDE,
    )  # fmt: skip
    new_values = {"capture": "NEW_VALUES", "columns": NARROW}
    log_a = jsonl(
        children(None, "10:00:00", ("p", [None])),
        data("p", "10:00:20", "a1", "UPDATE", [({"id": 1}, {"v": "early"})], **new_values),
        data("p", "10:00:30", "a2", "UPDATE", [({"id": 1}, {"v": "one"})], **new_values),
        hb("p", "10:00:40"),
    )
    log_b = jsonl(
        data("p", "10:01:00", "b1", "UPDATE", [({"id": 1}, {"v": "after"})], **new_values),
        data("p", "10:01:10", "b2", "DELETE", [({"id": 2}, {})], columns=NARROW),
        hb("p", "10:02:00"),
    )
    named = {"snapshot/t": snapshot, "log_a": log_a, "log_b": log_b}
    runs = {"first": (["snapshot/t"], ["log_a", "log_b"]),
            "between": (["log_a", "snapshot/t"], ["log_b"]),
            "after": (["log_a", "log_b"], ["snapshot/t"])}[order]  # fmt: skip
    return [files(stream, **{name: named[name] for name in run}) for run in runs]


PG_TABLE_OID = 16_385
CONSISTENT_POINT = 0x1_0000


def pgoutput_snapshot_order(slot: str, order: str) -> list[dict[str, bytes]]:
    """One slot's files in two runs: its snapshot at the consistent point (keys 1 and 2), and a
    log whose first transaction commits exactly at it (an update of key 1 leaving its TOASTed
    body unchanged, 'u': not in the snapshot, so after it) and a later one deleting key 2; the
    snapshot landing `first` or `after` the log."""
    lsn, micros = CONSISTENT_POINT, 1_717_408_860_000_000  # 2024-06-03T10:01:00Z
    columns = [(1, "id", 23, -1), (0, "body", 25, -1), (0, "n", 23, -1)]
    header = {
        "snapshot": {
            "lsn": enc.format_lsn(lsn),
            "table": "public.docs",
            "columns": [
                {"name": name, "type_oid": oid, "type_modifier": modifier, "key": bool(flags)}
                for flags, name, oid, modifier in columns
            ],
        }
    }
    snapshot = jsonl(header, {"values": ["1", "a long body", "1"]}, {"values": ["2", "x", "1"]})
    relation = enc.relation(PG_TABLE_OID, "public", "docs", columns)
    key = enc.tuple_data(("t", b"2"), ("n", None), ("n", None))
    messages = [
        (lsn - 0x30, 700, enc.begin(lsn, micros, 700)),
        (lsn - 0x28, 700, relation),
        (lsn - 0x20, 700, enc.update(PG_TABLE_OID, enc.tuple_data(("t", b"1"), ("u", None),
                                                                  ("t", b"2")))),
        (lsn + 0x8, 700, enc.commit(lsn, lsn + 0x8, micros)),
        (lsn + 0x10, 701, enc.begin(lsn + 0x40, micros + 10_000_000, 701)),
        (lsn + 0x18, 701, relation),
        (lsn + 0x20, 701, enc.delete(PG_TABLE_OID, key)),
        (lsn + 0x48, 701, enc.commit(lsn + 0x40, lsn + 0x48, micros + 10_000_000)),
    ]  # fmt: skip
    log = "".join(enc.slot_line(at, xid, data) + "\n" for at, xid, data in messages).encode()
    named = {f"pgoutput/{slot}/snapshot/public.docs.jsonl": snapshot,
             f"pgoutput/{slot}/0001.jsonl": log}  # fmt: skip
    first, second = sorted(named, reverse=order == "first")
    return [{first: named[first]}, {second: named[second]}]


ORDERS = ("first", "between", "after")
PG_ORDERS = ("first", "after")


def snapshot_waves() -> list[dict[str, bytes]]:
    """Every order's files, run by run: streams s_<order>, slots slot_<order>."""
    runs: list[dict[str, bytes]] = [{}, {}]
    for order in ORDERS:
        for run, wave in zip(runs, spanner_snapshot_order(f"s_{order}", order), strict=True):
            run.update(wave)
    for order in PG_ORDERS:
        for run, wave in zip(runs, pgoutput_snapshot_order(f"slot_{order}", order), strict=True):
            run.update(wave)
    return runs


SNAPSHOT_WAVES = snapshot_waves()


@pytest.fixture(scope="module")
def small_runs(java_available, tmp_path_factory):
    """The small inputs' two runs: the marts and the operator views after each, then the marts
    after a full refresh."""
    pipeline = Pipeline(tmp_path_factory.mktemp("small_inputs"))
    waves = [{**COLUMN_WAVES[i], **RELEASE_WAVES[i], **SNAPSHOT_WAVES[i]} for i in range(2)]
    after_runs = []
    for wave in waves:
        write_wave(pipeline.landing_root, wave)
        assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
        after_runs.append(
            {
                **snapshot(pipeline),
                SPANNER_STATUS: pipeline.rows(SPANNER_STATUS),
                "cdc_source_freshness": pipeline.rows("cdc_source_freshness"),
            }
        )
    assert pipeline.cdcw("dbt", "run", "--full-refresh") == 0
    return pipeline, waves, after_runs, snapshot(pipeline)


def of_source(marts: dict[str, list[dict]], source: str) -> dict[str, list[dict]]:
    """The current and history rows of one source, without what tells the landing orders
    apart (its name, the runs and key partitions)."""
    return {
        mart: sorted(
            repr({**row, "source_name": "", "key_cohort": 0, "last_landing_run": 0})
            for row in rows
            if row["source_name"] == source
        )
        for mart, rows in marts.items()
        if mart in ("cdc_current", "cdc_history")
    }


def test_a_column_first_seen_after_a_partial_update_counts_in_it_as_after_a_full_refresh(
    small_runs,
):
    """A NEW_VALUES update names only the columns it changed; the table's other columns are
    those known when the history is built. A column first seen a run later is unknown in the
    earlier update's version too: the incremental runs give what a full refresh gives, and what
    the oracle gives (the small inputs' other streams' too)."""
    pipeline, waves, after_runs, refreshed = small_runs
    incremental = {mart: after_runs[-1][mart] for mart in MARTS}
    spanner = of_system(incremental, "spanner")
    [update] = [row for row in spanner["cdc_history"] if row["source_name"] == "s" and
                row["op"] == "update"]  # fmt: skip
    assert update["unavailable_columns"] == ["w"]
    assert_marts_match(spanner, as_mart_text(expected_marts(waves)), pipeline.landing_root, "")
    assert_same_marts(refreshed, incremental)


def test_a_snapshot_landed_first_between_or_after_its_log_gives_the_same_marts(small_runs):
    """Spanner: a snapshot landed before any log file of its stream waits (the stream has no
    watermark yet); landed before, between or after the log files of its period, it gives the
    same marts in the end, its rows completing the NEW_VALUES updates after it. pgoutput: the
    same snapshot landed before or after the slot's log; the transaction committed exactly at
    the consistent point is not in it and applies after it, its unchanged TOASTed body taken
    from it. Neither family counts a snapshot row as a commit applied."""
    _, _, after_runs, _ = small_runs
    first_run, last_run = after_runs
    assert not [row for row in first_run["cdc_history"] if row["source_name"] == "s_first"]
    [waiting] = [row for row in first_run[SPANNER_STATUS] if row["source_name"] == "s_first"]
    assert (waiting["low_watermark"], waiting["waiting_snapshot_rows"]) == (None, 2)
    freshness = {row["source_name"]: row for row in first_run["cdc_source_freshness"]}
    assert freshness["slot_first"]["newest_commit_applied"] is None
    assert freshness["s_first"]["newest_commit_applied"] is None
    # Before its snapshot lands, the update's unchanged TOASTed body is unknown.
    [early] = [row for row in first_run["cdc_current"] if row["source_name"] == "slot_after"]
    assert early["unavailable_columns"] == ["body"]

    marts = {mart: last_run[mart] for mart in MARTS}
    spanner = {order: of_source(marts, f"s_{order}") for order in ORDERS}
    assert spanner["first"] == spanner["between"] == spanner["after"]
    [s_current] = [row for row in last_run["cdc_current"] if row["source_name"] == "s_first"]
    assert s_current["row_json"] == '{"id":1,"v":"after","w":"kept"}'
    assert of_source(marts, "slot_first") == of_source(marts, "slot_after")
    versions = sorted(
        (row["key_json"], row["op"], row["row_json"], row["valid_from"])
        for row in last_run["cdc_history"]
        if row["source_name"] == "slot_first"
    )
    epoch, update_at = "1970-01-01 00:00:00.000000", "2024-06-03 10:01:00.000000"
    assert versions == [
        ('{"id":1}', "snapshot", '{"body":"a long body","id":1,"n":1}', epoch),
        ('{"id":1}', "update", '{"body":"a long body","id":1,"n":2}', update_at),
        ('{"id":2}', "snapshot", '{"body":"x","id":2,"n":1}', epoch),
    ]
    [slot_current] = [row for row in last_run["cdc_current"] if row["source_name"] == "slot_first"]
    assert slot_current["key_json"] == '{"id":1}'


def test_a_run_that_releases_every_waiting_transaction_shows_none(small_runs):
    """When a run releases the last pending transaction, the view counts none waiting, not the
    set kept for the run before (an empty set still marks its run): stream `released`'s one
    transaction waits after the first run, and the second releases it and leaves no stream of
    the small inputs anything pending."""
    _, _, after_runs, _ = small_runs
    counted = ("applied_transactions", "waiting_transactions", "incomplete_transactions")
    counts = []
    for after_run in after_runs:
        [row] = [row for row in after_run[SPANNER_STATUS] if row["source_name"] == RELEASED]
        counts.append(tuple(row[column] for column in counted))
    assert counts == [(0, 1, 0), (1, 0, 0)]
    # Guards the scenario: the set the second run keeps is empty.
    pending = ("waiting_transactions", "incomplete_transactions", "waiting_snapshot_rows")
    assert {row[column] for row in after_runs[-1][SPANNER_STATUS] for column in pending} == {0}


def test_the_sql_rules_dbt_unit_tests_prove_hold(small_runs):
    """The dbt unit tests (`unit_tests:` in the models' yml), on the small pipeline's warehouse:
    a snapshot batch released by the watermark, a snapshot row no commit applied."""
    pipeline = small_runs[0]
    assert pipeline.cdcw("dbt", "test", "--select", "test_type:unit") == 0
