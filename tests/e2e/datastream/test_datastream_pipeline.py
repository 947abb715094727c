"""Datastream end to end: realistic files landed in three waves, the real `cdcw run` after each
(the other families' waves beside them, tests/e2e/families.py), and the Datastream rows of all
three marts compared with what the independent oracle (tests/e2e/datastream/oracle.py) derives."""

from __future__ import annotations

import base64
import json
import re
from decimal import Decimal

import pytest

from tests.e2e.families import DBT_VARS, FAMILY_WAVES, RUNS
from tests.e2e.marts import (
    as_mart_text,
    assert_same,
    current_facts,
    history_facts,
    quarantine_facts,
    snapshot,
)

from .oracle import expected_marts
from .scenario import declared_keys

WAVES = FAMILY_WAVES["datastream"]


def expected(wave_count: int):
    return as_mart_text(expected_marts(WAVES[:wave_count], declared_keys()))


@pytest.fixture(scope="module")
def waves_run(families_run):
    """The Datastream rows after each wave."""
    return families_run.pipeline, families_run.family_snapshots("datastream")


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


def test_a_run_without_new_files_skips_the_build(waves_run, capsys):
    pipeline, _ = waves_run
    invocations = pipeline.dbt_invocations()
    capsys.readouterr()
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    assert pipeline.dbt_invocations() == invocations
    assert "the marts are current, dbt not run" in capsys.readouterr().err


# The models whose rows are rare (macros/utils/landing_runs_processed.sql), under
# models/intermediate or models/marts.
RARE_ROW_MODELS = (
    "intermediate/cdc/int_cdc__truncates",
    "intermediate/spanner/int_spanner__snapshot_headers",
    "intermediate/spanner/int_spanner__snapshot_rows",
    "intermediate/pgoutput/int_pgoutput__snapshot_headers",
    "intermediate/pgoutput/int_pgoutput__snapshot_rows",
    "marts/cdc_quarantine",
)


def test_a_forced_run_without_new_files_changes_nothing(families_run, monkeypatch):
    """Forced, with the arguments of the last build: the models whose rows are rare read only
    the lines after that build's landing run, however old their newest row."""
    pipeline = families_run.pipeline
    monkeypatch.setenv("CDC_ALWAYS_BUILD", "1")
    invocations = pipeline.dbt_invocations()
    newest_rows = {
        model: pipeline.spark().sql(f"select max(landing_run) from {table}").first()[0]
        for model, table in (
            ("truncates", "cdc_internal.int_cdc__truncates"),
            ("pgoutput snapshot headers", "cdc_internal.int_pgoutput__snapshot_headers"),
        )
    }
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    assert pipeline.dbt_invocations() == invocations + 1
    assert snapshot(pipeline) == families_run.snapshots[-1]
    compiled = pipeline.warehouse_dir / "_dbt" / "target" / "compiled" / "cdc_warehouse" / "models"
    reads = {
        model: set(re.findall(r"landing_run > (-?\d+)", (compiled / f"{model}.sql").read_text()))
        for model in RARE_ROW_MODELS
    }
    assert reads == {model: {str(RUNS)} for model in RARE_ROW_MODELS}
    # Their own newest rows are older (pgoutput's: none in this warehouse): without the last
    # build's landing run they would read every line since.
    assert all((newest or -1) < RUNS for newest in newest_rows.values()), newest_rows


def test_typed_models_give_real_columns_of_the_declared_or_the_source_type(waves_run):
    pipeline, _ = waves_run
    spark = pipeline.spark()
    types = dict(spark.table("shop_products_current").dtypes)
    assert types["barcode"] == "bigint"
    assert types["cost_precise"] == "decimal(32,12)"
    assert types["released"] == "date"
    assert types["thumbnail"] == "binary"
    # Declared types win over the Avro files' (long, decimal(38,12)); the columns the yml does
    # not declare take the type their source names (cdc_source_columns).
    assert types["stock"] == "int"
    assert (types["updated_at"], types["weight_kg"]) == ("timestamp", "double")


def test_typed_models_read_their_values_from_row_json(waves_run):
    pipeline, _ = waves_run
    spark = pipeline.spark()
    rows = spark.table("shop_products_current").collect()
    assert rows, "the scenario has live products"
    for row in rows:
        values = json.loads(row["row_json"], parse_float=Decimal)
        assert row["barcode"] == int(values["barcode"])
        assert row["cost_precise"] == Decimal(values["cost_precise"])
        assert row["released"].isoformat() == values["released"]
        assert base64.b64encode(row["thumbnail"]).decode() == values["thumbnail"]


def test_a_typed_model_holds_only_its_own_sources_rows(waves_run):
    pipeline, _ = waves_run
    spark = pipeline.spark()
    # The typed model's source (Debezium's sample has a public.accounts too).
    accounts = (
        "source_system = 'datastream' and source_name = 'postgres_crm'"
        " and source_table = 'public.accounts'"
    )
    history = spark.table("public_accounts_history").count()
    assert history == spark.sql(f"select count(*) from cdc_history where {accounts}").first()[0]


def test_a_column_added_mid_stream_appears_in_typed_models(waves_run):
    pipeline, _ = waves_run
    accounts = pipeline.spark().table("public_accounts_current")
    assert dict(accounts.dtypes)["tier"] == "string"
    tiers = {row["id"]: row["tier"] for row in accounts.collect()}
    assert tiers[3] == "gold"
    assert all(tier is None for account, tier in tiers.items() if account != 3)


def test_docs_generate_documents_marts_and_typed_models(waves_run):
    """One command makes the docs site as one file, its lineage graph included (README)."""
    pipeline, _ = waves_run
    assert pipeline.cdcw("dbt", "docs", "generate", "--static", *DBT_VARS) == 0
    target = pipeline.warehouse_dir / "_dbt" / "target"
    catalog = json.loads((target / "catalog.json").read_text())
    nodes = {node["metadata"]["name"]: node for node in catalog["nodes"].values()}
    assert {"cdc_current", "cdc_history", "cdc_quarantine", "cdc_source_freshness"} <= set(nodes)
    assert "cost_precise" in nodes["shop_products_current"]["columns"]
    site = (target / "static_index.html").read_text()
    # The manifest's lineage and the catalog, inline: the file opens without a server.
    assert '"parent_map"' in site and '"model.cdc_warehouse.cdc_source_freshness"' in site


def test_each_run_lists_the_tables_of_its_lines_without_a_real_key(families_run):
    """MySQL's shop.audit_log reports no primary key (keyed by its whole row) in the first two
    waves' files; Oracle's ROOT.SAMPLE has none either but a declared one. A run warns of the
    tables among its own new lines."""
    warning = "cdcw: warning: 1 Datastream table without a real key: mysql_shop shop.audit_log"
    with_audit_lines = [any("/shop_audit_log/" in path for path in wave) for wave in WAVES] + [
        False
    ] * (len(families_run.outputs) - len(WAVES))
    assert with_audit_lines[:3] == [True, True, False]
    assert [warning in said for said in families_run.outputs] == with_audit_lines


@pytest.mark.parametrize("mart", ["cdc_history", "cdc_current"])
def test_each_mart_records_what_it_processed_and_no_run_scans_it_for_that(waves_run, mart):
    """A mart with deletion vectors records the newest landing run it processed in its commit
    (docs/decisions/016): after every family's waves it is the newest its rows carry, and no
    build of these runs asked the mart's rows for it (a scan of the whole table)."""
    from cdc_warehouse.table_format import recorded_watermark

    pipeline, _ = waves_run
    spark = pipeline.spark()
    newest = spark.sql(f"select max(last_landing_run) from {mart}").first()[0]
    assert recorded_watermark(spark, f"default.{mart}") == newest
    builds = (pipeline.warehouse_dir / "_dbt" / "logs" / "dbt.log").read_text()
    assert "Running with dbt" in builds
    assert f"max(last_landing_run) from default.{mart}" not in builds
