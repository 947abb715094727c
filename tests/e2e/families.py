"""The Spanner, Datastream and Debezium scenarios in one warehouse, run wave by wave: the i-th
`cdcw run` comes after the i-th wave of every family that has one. Each family's module checks
its own rows against its oracle after each of its waves (the families share no source, so each
one's marts are what its oracle derives from its files alone). One build serves three families:
the fixed cost of a build is most of an end-to-end test's time (docs/benchmarks/journal.md).

The third run joins the keys it recomputes without broadcast hints (`cdc_broadcast_max_rows`
0), as a large backfill does; the others take the hinted path. The last run also runs the dbt
tests (on its own rows); the full refresh in tests/e2e/test_all_families.py tests every row."""

from __future__ import annotations

import contextlib
import io
import re
from dataclasses import dataclass
from typing import Any

from python_udfs.families import FAMILIES
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline

from .datastream import scenario as datastream_scenario
from .debezium import scenario as debezium_scenario
from .marts import snapshot
from .spanner import scenario as spanner_scenario
from .waves import write_wave

# The scenario of each family that has one here (pgoutput's is a real PostgreSQL:
# tests/e2e/pgoutput/).
SCENARIOS = {
    "spanner": spanner_scenario,
    "datastream": datastream_scenario,
    "debezium": debezium_scenario,
}
FAMILY_WAVES = {
    family.name: SCENARIOS[family.name].build_scenario().waves
    for family in FAMILIES
    if family.name in SCENARIOS
}
RUNS = max(len(waves) for waves in FAMILY_WAVES.values())
# Small key partitions, so that a run touches some partitions and not others.
KEYS_PER_PARTITION = 3
DBT_VARS = ("--vars", f"{{cdc_keys_per_partition: {KEYS_PER_PARTITION}}}")
# The run that joins as a large backfill does: no broadcast, no key list in the MERGE.
UNHINTED_RUN = 3
UNHINTED_VARS = (
    "--vars",
    f"{{cdc_keys_per_partition: {KEYS_PER_PARTITION}, cdc_broadcast_max_rows: 0,"
    " cdc_merge_key_list_max_keys: 0}",
)
SPANNER_STATUS = "cdc_spanner_streams"
FRESHNESS = "cdc_source_freshness"
# The models that join by what a run changed, and the hints on the joins whose build side is a
# run's recomputed keys or new changes (`broadcast_hint`); cdc_history's per-table list of
# unknown columns is bounded by the schema and always broadcast.
HINTED_MODELS = ("cdc_current", "cdc_history", "int_cdc__key_successions")
KEY_SET_HINTS = tuple(
    f"broadcast({relation})"
    for relation in ("changed_keys", "key_successions", "recomputed_versions", "new_half_positions")
)


def compiled_hinted_sql(pipeline: Pipeline) -> str:
    """The SQL the last dbt command compiled for HINTED_MODELS, and the queries it cached for
    them at compile time (`cached_view`: dbt logs those, its compiled files hold the models' own
    SQL only)."""
    compiled = pipeline.warehouse_dir / "_dbt" / "target" / "compiled" / "cdc_warehouse" / "models"
    last_command = pipeline.last_dbt_log()
    return "".join(
        [
            *(
                (compiled / folder / f"{model}.sql").read_text()
                for folder, model in (
                    ("marts", "cdc_current"),
                    ("marts", "cdc_history"),
                    ("intermediate/cdc", "int_cdc__key_successions"),
                )
            ),
            *re.findall(
                r"cache table int_cdc__key_successions__links .*?(?=\n\S*\d\d:\d\d:\d\d\.\d+ \[)",
                last_command,
                re.S,
            ),
        ]
    )


def read_status(pipeline: Pipeline) -> list[dict[str, Any]] | str:
    """The Spanner operator view's rows by stream, or why it could not be read (kept so that a
    missing model fails its own tests, not the mart comparisons)."""
    try:
        return sorted(pipeline.rows(SPANNER_STATUS), key=lambda row: row["source_name"])
    except Exception as exc:  # the model may not exist yet
        return f"{SPANNER_STATUS} could not be read: {exc}"


def of_system(marts: dict[str, list[dict[str, Any]]], system: str) -> dict[str, list[dict]]:
    return {
        mart: [row for row in rows if row["source_system"] == system]
        for mart, rows in marts.items()
    }


@dataclass
class FamiliesRun:
    pipeline: Pipeline
    # The marts, the Spanner status view and the operator view of every source after each run.
    snapshots: list[dict[str, list[dict[str, Any]]]]
    statuses: list[list[dict[str, Any]] | str]
    freshness: list[list[dict[str, Any]]]
    # What each run said on stderr.
    outputs: list[str]
    # What the unhinted run compiled for HINTED_MODELS.
    unhinted_sql: str
    # The statements each run wrote each mart with (dbt's run files: a MERGE once incremental).
    mart_writes: list[dict[str, str]]

    def family_snapshots(self, system: str) -> list[dict[str, list[dict[str, Any]]]]:
        """The family's rows after each of its own waves."""
        return [of_system(marts, system) for marts in self.snapshots[: len(FAMILY_WAVES[system])]]


def run_families(pipeline: Pipeline) -> FamiliesRun:
    snapshots, statuses, freshness, outputs, unhinted_sql = [], [], [], [], ""
    mart_writes = []
    for number in range(1, RUNS + 1):
        for waves in FAMILY_WAVES.values():
            if number <= len(waves):
                write_wave(pipeline.landing_root, waves[number - 1])
        dbt_vars = UNHINTED_VARS if number == UNHINTED_RUN else DBT_VARS
        tests = () if number == RUNS else BUILD_WITHOUT_TESTS
        said = io.StringIO()
        with contextlib.redirect_stderr(said):
            code = pipeline.cdcw("run", *dbt_vars, *tests)
        assert code == 0, f"cdcw run {number} failed:\n{said.getvalue()[-3000:]}"
        outputs.append(said.getvalue())
        if number == UNHINTED_RUN:
            unhinted_sql = compiled_hinted_sql(pipeline)
        snapshots.append(snapshot(pipeline))
        statuses.append(read_status(pipeline))
        freshness.append(pipeline.rows(FRESHNESS))
        mart_writes.append(written_marts(pipeline))
    return FamiliesRun(pipeline, snapshots, statuses, freshness, outputs, unhinted_sql, mart_writes)


def written_marts(pipeline: Pipeline) -> dict[str, str]:
    """The statements the last run wrote cdc_history and cdc_current with."""
    run_dir = pipeline.warehouse_dir / "_dbt/target/run/cdc_warehouse/models/marts"
    return {mart: (run_dir / f"{mart}.sql").read_text() for mart in ("cdc_history", "cdc_current")}
