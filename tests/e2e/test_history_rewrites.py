"""A run rewrites only the versions its changes reach: a version reflects its key's changes up to
the one that ends it, so an update in source order rewrites the key's open version and adds the
new one, and a late change rewrites the versions from the one it now ends; the older versions
keep the landing run that wrote them. A run whose lines change no key (here one the decoder
rejects) rewrites none, runs no MERGE, and looks for no primary key change. A full refresh gives
every version the same landing run as the incremental runs did.

Every run has the same arguments, as a scheduled job's: after the first, each builds only the
family with new lines (docs/decisions/009). The full refresh rebuilds `cdc_history` alone from
the change log: the rule under test is that model's."""

from __future__ import annotations

import re

from tests.conftest import Pipeline
from tests.e2e.test_test_scope import item_event, land_wave

WRITTEN = re.compile(r"cdc_history: (\d+) versions written, (\d+) removed")
# The statement each table that skips its write when it has nothing to write runs otherwise.
WRITES = {
    "cdc_history": "merge into default.cdc_history as target",
    "cdc_current": "merge into default.cdc_current as target",
    "int_cdc__key_successions": "insert into table cdc_internal.int_cdc__key_successions",
}


def runs_by_position(pipeline: Pipeline, key_json: str) -> list[tuple[str, int]]:
    """The key's versions in source order: its name, the landing run it reflects."""
    versions = sorted(
        (row for row in pipeline.rows("cdc_history") if row["key_json"] == key_json),
        key=lambda row: row["sort_key"],
    )
    return [(row["row_json"], row["last_landing_run"]) for row in versions]


def run_writing(pipeline: Pipeline, capsys) -> tuple[int, int]:
    """`cdcw run` (its dbt tests scoped to the rows it rewrote); the versions it wrote and
    removed."""
    capsys.readouterr()
    assert pipeline.cdcw("run") == 0
    (counts,) = WRITTEN.findall(capsys.readouterr().err)
    return int(counts[0]), int(counts[1])


def written_by_last_build(pipeline: Pipeline) -> set[str]:
    """The tables of WRITES into which the last dbt command ran its write, from its log."""
    last = pipeline.last_dbt_log()
    return {table for table, statement in WRITES.items() if statement in last}


def name(value: str) -> str:
    return f'{{"id":1,"name":"{value}"}}'


def test_a_run_rewrites_only_the_versions_its_changes_reach(java_available, tmp_path, capsys):
    pipeline = Pipeline(tmp_path)
    land_wave(
        pipeline,
        "wave-1",
        [
            item_event(1, "a", 5),
            item_event(1, "b", 20),
            item_event(1, "c", 30),
            item_event(2, "other", 6),
        ],
    )
    assert run_writing(pipeline, capsys) == (4, 0)

    # In source order: the open version is closed, the new one added, the others left.
    land_wave(pipeline, "wave-2", [item_event(1, "d", 40)])
    assert run_writing(pipeline, capsys) == (2, 0)
    assert runs_by_position(pipeline, '{"id":1}') == [
        (name("a"), 1),
        (name("b"), 1),
        (name("c"), 2),
        (name("d"), 2),
    ]
    assert written_by_last_build(pipeline) == set(WRITES)

    # A line that changes no key: quarantined; neither mart runs its MERGE, and the key
    # successions neither look for a new one nor append.
    history_before = sorted(map(repr, pipeline.rows("cdc_history")))
    current_before = sorted(map(repr, pipeline.rows("cdc_current")))
    land_wave(pipeline, "wave-2-rejected", ["not an event"])
    assert run_writing(pipeline, capsys) == (0, 0)
    assert written_by_last_build(pipeline) == set()
    # A build of Datastream alone (the run before had the same arguments) does not ask for
    # Spanner columns seen since the last one.
    assert "from cdc_internal.int_spanner__table_columns where" not in pipeline.last_dbt_log()
    quarantined = [row["file_path"] for row in pipeline.rows("cdc_quarantine")]
    assert [path for path in quarantined if path.endswith("wave-2-rejected.jsonl")], quarantined
    assert sorted(map(repr, pipeline.rows("cdc_history"))) == history_before
    assert sorted(map(repr, pipeline.rows("cdc_current"))) == current_before

    # Late: it ends "b" now, so "b" and every later version reflect this run; "a" does not. The
    # run that merged nothing left the marts' watermarks where the MERGE before it had put them.
    land_wave(pipeline, "wave-3", [item_event(1, "late", 25)])
    assert run_writing(pipeline, capsys) == (4, 0)
    incremental = runs_by_position(pipeline, '{"id":1}')
    assert incremental == [
        (name("a"), 1),
        (name("b"), 4),
        (name("late"), 4),
        (name("c"), 4),
        (name("d"), 4),
    ]
    current = {row["key_json"]: row["row_json"] for row in pipeline.rows("cdc_current")}
    assert current == {'{"id":1}': name("d"), '{"id":2}': '{"id":2,"name":"other"}'}
    assert runs_by_position(pipeline, '{"id":2}') == [('{"id":2,"name":"other"}', 1)]

    history_before = sorted(map(repr, pipeline.rows("cdc_history")))
    assert pipeline.cdcw("dbt", "run", "--full-refresh", "--select", "cdc_history") == 0
    assert sorted(map(repr, pipeline.rows("cdc_history"))) == history_before
