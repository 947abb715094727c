"""Debezium end to end: kcat -J records of three servers (with and without the schema envelope,
one with transaction metadata) landed in three waves, the real `cdcw run` after each (the other
families' waves beside them, tests/e2e/families.py), and the Debezium rows of all three marts
compared with the independent oracle: TOAST placeholders filled across runs and across primary
key changes, truncates, snapshot overlap, duplicates, bad lines, and transactions applied only
once their END and every event it counts have landed, the others pending in
cdc_source_freshness."""

from __future__ import annotations

import contextlib
import io
import json
import re

import pytest

from tests.e2e.families import (
    DBT_VARS,
    FAMILY_WAVES,
    HINTED_MODELS,
    KEY_SET_HINTS,
    UNHINTED_RUN,
    compiled_hinted_sql,
)
from tests.e2e.marts import as_mart_text, assert_marts_match, current_facts

from .oracle import expected_marts, expected_pending

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
    large backfill does (cdc_broadcast_max_rows 0); under the default limit the hints are back.
    The run before it broadcast each mart's MERGE source (macros/utils/broadcast_merge_source.sql)
    and named cdc_history's recomputed keys in its MERGE (macros/utils/merge_only_into_keys.sql);
    the unhinted one did neither."""
    assert len(WAVES) == UNHINTED_RUN
    assert not [hint for hint in KEY_SET_HINTS if hint in families_run.unhinted_sql]
    for number, hinted in ((UNHINTED_RUN - 1, True), (UNHINTED_RUN, False)):
        for mart, statement in families_run.mart_writes[number - 1].items():
            assert f"merge into default.{mart} as target" in statement, (number, mart)
            assert ("broadcast(merge_source)" in statement) == hinted, (number, mart)
            keys_listed = "and target.key_json in (" in statement
            assert keys_listed == (hinted and mart == "cdc_history"), (number, mart)
    pipeline = families_run.pipeline
    assert pipeline.cdcw("dbt", "compile", "--select", *HINTED_MODELS, *DBT_VARS) == 0
    compiled = compiled_hinted_sql(pipeline)
    assert [hint for hint in KEY_SET_HINTS if hint in compiled]
    assert "broadcast(new_half_positions)" in compiled


# Keys whose text holds what a Spark string literal escapes or a SQL comment ends at: a quote,
# backslashes (doubled, and before a double quote, as in JSON), line breaks. SQL without double
# quotes, so that it fits in a Jinja string.
AWKWARD_KEYS = (
    "concat('O', char(39), 'Brien')",
    "concat('C:', char(92), char(92), 'tmp', char(92), char(34), 'x')",
    "concat('line', char(10), 'break', char(13), 'return')",
    "'id 7'",
)


def test_a_merge_key_list_matches_exactly_the_keys_it_lists(families_run):
    """merge_only_into_keys writes the keys of a relation as literals on one comment line, and
    merged_target_keys reads them back as a predicate: applied to the same keys, it keeps those
    listed and drops the one left out, whatever characters the keys hold."""
    keys = f"(select explode(array({', '.join(AWKWARD_KEYS)})) as key_json)"
    listed = f"key_json != {AWKWARD_KEYS[-1]}"
    query = (
        "{% set comment = merge_only_into_keys('key_json', \"" + keys + '", "' + listed + '", 4) %}'
        "select key_json from "
        + keys
        + " where {{ merged_target_keys(comment)[0] | replace('target.', '') }}"
    )
    shown = io.StringIO()
    with contextlib.redirect_stdout(shown):
        code = families_run.pipeline.cdcw(
            "dbt", "show", "--inline", query, "--output", "json", "--quiet"
        )
    printed = shown.getvalue()
    assert code == 0, printed[-3000:]
    rows = json.loads(printed[printed.index("{") :])["show"]
    expected = families_run.pipeline.spark().sql(f"select key_json from {keys} where {listed}")
    assert sorted(row["key_json"] for row in rows) == sorted(
        row.key_json for row in expected.collect()
    )
    assert len(rows) == len(AWKWARD_KEYS) - 1


TXN = "pg_txn"


def current_of(snapshot: dict[str, list[dict]], table: str) -> dict[str, dict]:
    """pg_txn's current rows of one table, by key."""
    return {
        row["key_json"]: json.loads(row["row_json"])
        for row in snapshot["cdc_current"]
        if (row["source_name"], row["source_table"]) == (TXN, table)
    }


def test_a_transaction_over_two_tables_applies_whole_in_the_run_its_last_event_lands(waves_run):
    """7011's END and orders event land in wave 1, its order_items event in wave 2; 7012 is the
    same with its END delivered twice. Nothing of either shows after the first run, all of
    both after the second."""
    _, snapshots = waves_run
    first, second = (
        (current_of(s, "shop.orders"), current_of(s, "shop.order_items")) for s in snapshots[:2]
    )
    orders, items = first
    assert '{"id":2}' not in orders and '{"item_no":1,"order_id":2}' not in items
    assert orders['{"id":1}']["status"] == "new" and items['{"item_no":1,"order_id":1}']["qty"] == 2
    orders, items = second
    assert orders['{"id":2}']["customer"] == "bob" and '{"item_no":1,"order_id":2}' in items
    assert (
        orders['{"id":1}']["status"] == "paid" and items['{"item_no":1,"order_id":1}']["qty"] == 3
    )
    assert current_facts(snapshots[0]["cdc_current"]) != current_facts(snapshots[1]["cdc_current"])


def test_pending_transactions_show_in_source_freshness_after_each_run(families_run):
    """pg_txn's transactions whose END or events are missing are pending, the one left without
    END overdue once a later one of its server is applied; servers without transaction metadata
    have nothing pending."""
    for wave_count, rows in enumerate(families_run.freshness[: len(WAVES)], start=1):
        debezium = {row["source_name"]: row for row in rows if row["source_system"] == "debezium"}
        expected = expected_pending(WAVES[:wave_count])
        assert set(expected) == {TXN}
        shown = debezium[TXN]
        assert {
            "pending": shown["pending_transactions"],
            "overdue": shown["overdue_transactions"],
        } == expected[TXN], f"after wave {wave_count}"
        assert shown["oldest_pending_landed_at"] <= shown["last_landed_at"]
        assert {debezium[name]["pending_transactions"] for name in ("pg_main", "pg_lite")} == {None}


def test_a_transaction_record_that_does_not_fit_is_quarantined_with_its_reason(waves_run):
    """A malformed END, and an END that counts otherwise than its transaction's first; the END
    delivered again with the same counts is no error."""
    _, snapshots = waves_run
    reasons = sorted(
        row["reason"]
        for row in snapshots[-1]["cdc_quarantine"]
        if row["source_name"] == TXN and "pg_txn.transaction" in row["file_path"]
    )
    conflicting, malformed = reasons
    assert malformed == "data_collections count 1 events, event_count says 2"
    assert conflicting.startswith('END of transaction 7010 counts {"shop.orders":2,')
    assert conflicting.endswith(": the first END counts")


def test_a_waiting_transaction_costs_no_read_of_the_runs_since_it_began(families_run):
    """The pending set keeps what has landed of each waiting transaction, so a run reads the
    Debezium events landed since the run before it: the transaction left without END, pending
    since an early run, does not pull the events read back to its first run."""
    pipeline = families_run.pipeline
    pending = [
        row
        for row in pipeline.rows("cdc_internal.int_debezium__pending_transactions")
        if row["transaction_key"] is not None
    ]
    assert pending and all(row["arrived_events"] for row in pending)
    # What the next run would read, compiled against the warehouse as it stands.
    select = ("--select", "int_debezium__pending_transactions")
    assert pipeline.cdcw("dbt", "compile", *select, "--quiet") == 0
    compiled = (
        pipeline.warehouse_dir
        / "_dbt/target/compiled/cdc_warehouse/models/intermediate/debezium"
        / "int_debezium__pending_transactions.sql"
    ).read_text()
    [events_from] = {int(run) for run in re.findall(r"events\.landing_run >= (\d+)", compiled)}
    assert min(row["first_landing_run"] for row in pending) < events_from
