"""Reading the marts back and comparing them with an oracle's expected rows, for every source
family's end-to-end test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline, utc_text
from tests.e2e.waves import write_wave

MARTS = ("cdc_current", "cdc_history", "cdc_quarantine")


def snapshot(pipeline: Pipeline) -> dict[str, list[dict[str, Any]]]:
    return {mart: pipeline.rows(mart) for mart in MARTS}


def run_waves(
    pipeline: Pipeline, waves: list[dict[str, bytes]], *args: str, views: tuple[str, ...] = ()
) -> list[dict[str, list[dict[str, Any]]]]:
    """Land wave after wave, `cdcw run` after each, and keep the marts (and `views`) after every
    run. Only the last run runs the dbt tests (on its own rows): the oracle checks each wave's
    marts, and each module's full refresh (`dbt build`) tests every row."""
    snapshots = []
    for number, wave in enumerate(waves, start=1):
        write_wave(pipeline.landing_root, wave)
        tests = () if number == len(waves) else BUILD_WITHOUT_TESTS
        assert pipeline.cdcw("run", *args, *tests) == 0, "cdcw run (land + dbt build) failed"
        snapshots.append({**snapshot(pipeline), **{view: pipeline.rows(view) for view in views}})
    return snapshots


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
    """Oracles give paths relative to the landing root; the marts hold absolute paths."""

    def relative(path: str) -> str:
        return str(Path(path).relative_to(landing_root)) if landing_root else path

    return sorted(
        (row["source_name"], relative(row["file_path"]), row["line_number"]) for row in rows
    )


def as_mart_text(oracle: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Oracle datetimes rendered as the marts are read back."""
    for row in oracle["cdc_current"]:
        row["last_committed_at"] = utc_text(row["last_committed_at"])
    for row in oracle["cdc_history"]:
        row["valid_from"] = utc_text(row["valid_from"])
        row["valid_to"] = utc_text(row["valid_to"])
    return oracle


def assert_same_marts(
    actual: dict[str, list[dict[str, Any]]],
    expected: dict[str, list[dict[str, Any]]],
    marts: tuple[str, ...] = MARTS,
) -> None:
    """Two snapshots hold the same rows in each mart, in any order (a rebuild may reorder)."""
    for mart in marts:
        assert sorted(map(repr, actual[mart])) == sorted(map(repr, expected[mart])), mart


def assert_same(actual: list[tuple], wanted: list[tuple], what: str) -> None:
    missing = [row for row in wanted if row not in actual]
    unexpected = [row for row in actual if row not in wanted]
    assert not missing and not unexpected, (
        f"{what}: missing {json.dumps(missing, indent=1, default=str)}\n"
        f"unexpected {json.dumps(unexpected, indent=1, default=str)}"
    )


def assert_marts_match(
    snapshot_rows: dict[str, list[dict[str, Any]]],
    oracle: dict[str, list[dict[str, Any]]],
    landing_root: Path,
    what: str,
) -> None:
    assert_same(
        current_facts(snapshot_rows["cdc_current"]),
        current_facts(oracle["cdc_current"]),
        f"cdc_current {what}",
    )
    assert_same(
        history_facts(snapshot_rows["cdc_history"]),
        history_facts(oracle["cdc_history"]),
        f"cdc_history {what}",
    )
    assert all(row["reason"] for row in snapshot_rows["cdc_quarantine"])
    assert_same(
        quarantine_facts(snapshot_rows["cdc_quarantine"], landing_root),
        quarantine_facts(oracle["cdc_quarantine"], None),
        f"cdc_quarantine {what}",
    )
