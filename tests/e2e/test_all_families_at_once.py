"""Every wave of the Spanner, Datastream and Debezium scenarios landed before a single `cdcw run`
(with the dbt tests): each family's marts are those its oracle derives from all the waves, as
after the wave-by-wave runs of each family's own module. One build for the three families: the
fixed cost of a build is most of a test's time."""

from __future__ import annotations

from typing import Any

from tests.conftest import Pipeline

from . import (
    datastream_oracle,
    datastream_scenario,
    debezium_oracle,
    debezium_scenario,
    spanner_oracle,
    spanner_scenario,
)
from .marts import as_mart_text, assert_marts_match, snapshot
from .waves import write_wave

# Small key partitions, as in the families' own modules.
DBT_VARS = ("--vars", "{cdc_keys_per_partition: 3}")


def of_family(marts: dict[str, list[dict[str, Any]]], system: str) -> dict[str, list[dict]]:
    return {
        mart: [row for row in rows if row["source_system"] == system]
        for mart, rows in marts.items()
    }


def test_all_waves_landed_at_once_give_each_family_its_oracles_marts(java_available, tmp_path):
    spanner_waves = spanner_scenario.build_waves()
    datastream_waves = datastream_scenario.build_waves()
    debezium_waves = debezium_scenario.build_waves()
    pipeline = Pipeline(tmp_path, datastream_scenario.declared_tables_yaml())
    for wave in (*spanner_waves, *datastream_waves, *debezium_waves):
        write_wave(pipeline.landing_root, wave)
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    marts = snapshot(pipeline)
    expected = {
        "spanner": spanner_oracle.expected_marts(spanner_waves),
        "datastream": datastream_oracle.expected_marts(
            datastream_waves, datastream_scenario.declared_keys()
        ),
        "debezium": debezium_oracle.expected_marts(debezium_waves),
    }
    assert {row["source_system"] for row in marts["cdc_current"]} == set(expected)
    for system, oracle in expected.items():
        assert_marts_match(
            of_family(marts, system),
            as_mart_text(oracle),
            pipeline.landing_root,
            f"of {system} with every wave landed before one run",
        )
