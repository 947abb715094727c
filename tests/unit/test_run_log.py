"""The run log's parts that need no Spark: stages from dbt's run results, the failure sentence,
the terminal table, the metrics file."""

from __future__ import annotations

import json

from cdc_warehouse.run_log import (
    RunRow,
    dbt_failure,
    dbt_stage_seconds,
    exception_sentence,
    text_table,
)
from cdc_warehouse.settings import load_settings


def write_results(path, generated_at, results):
    path.write_text(json.dumps({"metadata": {"generated_at": generated_at}, "results": results}))


def test_stage_seconds_come_from_the_build_this_run_made(tmp_path):
    results = tmp_path / "run_results.json"
    write_results(
        results,
        "2026-01-02T10:00:30.5Z",
        [
            {"unique_id": "model.cdc_warehouse.stg_debezium__lines", "execution_time": 1.0},
            {"unique_id": "model.cdc_warehouse.int_debezium__events", "execution_time": 2.5},
            {"unique_id": "model.cdc_warehouse.int_cdc__change_log", "execution_time": 3.0},
            {"unique_id": "model.cdc_warehouse.cdc_history", "execution_time": 4.0},
            {"unique_id": "model.cdc_warehouse.cdc_current", "execution_time": 2.0},
            {"unique_id": "test.cdc_warehouse.unique_x.abc", "execution_time": 0.5},
            {"unique_id": "model.cdc_warehouse.cdc_quarantine", "execution_time": 0.25},
        ],
    )
    assert dbt_stage_seconds(results, "2026-01-02T10:00:00+00:00") == {
        "staging": 3.5,
        "change_log": 3.0,
        "history": 4.0,
        "current": 2.0,
        "tests": 0.5,
        "other": 0.25,
    }
    # Results of an earlier run's build: this run built nothing.
    assert dbt_stage_seconds(results, "2026-01-02T10:01:00+00:00") == {}
    assert dbt_stage_seconds(tmp_path / "none.json", "2026-01-02T10:00:00+00:00") == {}


def test_a_failed_build_is_named_by_its_first_failing_node(tmp_path):
    results = tmp_path / "run_results.json"
    write_results(
        results,
        "2026-01-02T10:00:30Z",
        [
            {"unique_id": "model.cdc_warehouse.stg_x", "status": "success", "message": "OK"},
            {
                "unique_id": "model.cdc_warehouse.cdc_history",
                "status": "error",
                "message": "Runtime Error\n  [UNRESOLVED_COLUMN] ...",
            },
        ],
    )
    assert dbt_failure(results) == "dbt build failed at cdc_history: Runtime Error"
    assert dbt_failure(tmp_path / "none.json") == "dbt build failed"


def test_an_exception_is_one_sentence_of_its_first_line():
    assert exception_sentence(OSError("disk full\nat line 3")) == "OSError: disk full"
    assert len(exception_sentence(ValueError("x" * 1000))) < 320


def test_a_row_knows_its_duration_once_ended():
    row = RunRow("r1", "2026-01-02T10:00:00+00:00")
    assert row.seconds is None
    row.ended_at = "2026-01-02T10:00:42.5+00:00"
    assert row.seconds == 42.5


def test_the_terminal_table_aligns_columns_and_shows_none_as_empty():
    assert text_table(["a", "status"], [(1, "succeeded"), (None, "x" * 70)]).splitlines() == [
        "a  status",
        "-  " + "-" * 63,
        "1  succeeded",
        "   " + "x" * 60 + "...",
    ]


def test_the_metrics_file_is_prometheus_text(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    from cdc_warehouse.metrics import metrics_text

    run = RunRow("r1", "2026-01-02T10:00:00+00:00", status="failed")
    run.ended_at = "2026-01-02T10:01:30+00:00"
    run.files_landed, run.lines_landed, run.lines_quarantined = 3, 120, 2
    text = metrics_text(run, [("debezium", 'pg "main"', 12, 3600), ("spanner", "orders", 40, None)])
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    assert samples == {
        ("cdcw_run_duration_seconds", ()): 90.0,
        ("cdcw_run_status", (("status", "succeeded"),)): 0.0,
        ("cdcw_run_status", (("status", "failed"),)): 1.0,
        ("cdcw_run_status", (("status", "killed"),)): 0.0,
        ("cdcw_run_files_landed", ()): 3.0,
        ("cdcw_run_lines_landed", ()): 120.0,
        ("cdcw_run_lines_quarantined", ()): 2.0,
        (
            "cdcw_source_landing_age_seconds",
            (("source_name", 'pg "main"'), ("source_system", "debezium")),
        ): 12.0,
        (
            "cdcw_source_landing_age_seconds",
            (("source_name", "orders"), ("source_system", "spanner")),
        ): 40.0,
        (
            "cdcw_source_commit_lag_seconds",
            (("source_name", 'pg "main"'), ("source_system", "debezium")),
        ): 3600.0,
    }


def test_a_run_writes_its_metrics_when_the_sources_cannot_be_read(tmp_path):
    from prometheus_client.parser import text_string_to_metric_families

    from cdc_warehouse.metrics import write

    class UnreachableCatalog:
        def tableExists(self, table: str) -> bool:
            raise RuntimeError(f"[DELTA_TABLE_NOT_FOUND] {table}")

    class UnreachableWarehouse:
        catalog = UnreachableCatalog()

    run = RunRow("r1", "2026-01-02T10:00:00+00:00", status="failed")
    path = tmp_path / "metrics" / "cdcw.prom"
    write(UnreachableWarehouse(), load_settings({}), run, path)
    statuses = {
        sample.labels["status"]: sample.value
        for family in text_string_to_metric_families(path.read_text())
        for sample in family.samples
        if sample.name == "cdcw_run_status"
    }
    assert statuses == {"succeeded": 0, "failed": 1, "killed": 0}
