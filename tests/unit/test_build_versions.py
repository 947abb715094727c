"""The versions a warehouse was built with against the code's (cdc_warehouse/build_versions.py):
which builds refuse, with what sentence, and when the record is written."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from cdc_warehouse import build_versions
from cdc_warehouse.build_versions import (
    LAYOUT,
    LAYOUT_VERSION,
    Mismatch,
    code_versions,
    mismatches,
    rebuilds_everything,
    refusal,
)
from cdc_warehouse.settings import RebuildNeeded, Settings
from python_udfs.families import FAMILIES

SETTINGS = Settings(
    landing_root=Path("landing"),
    warehouse_dir=Path("warehouse"),
    tables_file=Path("cdc_tables.yml"),
    spark_master="local[1]",
    driver_memory="1g",
)


def test_the_code_names_its_layout_and_every_family_s_sort_key_version():
    assert code_versions() == {
        LAYOUT: LAYOUT_VERSION,
        **{family.name: family.sort_key_version for family in FAMILIES},
    }


def test_the_same_versions_match():
    assert mismatches(code_versions(), code_versions()) == []


def test_a_family_whose_version_changed_is_named_with_both_versions():
    code = code_versions() | {"spanner": 7}
    assert mismatches(code_versions(), code) == [Mismatch("spanner", 1, 7)]


def test_a_family_the_record_does_not_name_is_new_and_matches():
    built = {part: version for part, version in code_versions().items() if part != "debezium"}
    assert mismatches(built, code_versions()) == []


def test_a_warehouse_from_before_the_record_has_the_first_layout():
    assert mismatches(build_versions.UNRECORDED_LAYOUT, {LAYOUT: 2}) == [Mismatch(LAYOUT, 1, 2)]


def test_the_refusal_is_one_sentence_naming_each_part_its_versions_and_the_command():
    sentence = refusal([Mismatch("spanner", 1, 2), Mismatch(LAYOUT, 1, 2)])
    assert sentence == (
        "the warehouse was built with spanner's sort-key encoding version 1 (this code writes "
        "version 2) and the stored tables' layout version 1 (this code writes version 2); run "
        "`cdcw run --full-refresh` to rebuild every model from the landed lines"
    )


@pytest.mark.parametrize(
    ("args", "everything"),
    [
        ([], False),
        (["--full-refresh"], True),
        (["--exclude-resource-type", "test", "--full-refresh"], True),
        (["--full-refresh", "--select", "cdc_history"], False),
        (["--select=cdc_history", "--full-refresh"], False),
        (["-s", "stg_spanner__lines+"], False),
    ],
)
def test_only_an_unselected_full_refresh_rebuilds_everything(args, everything):
    assert rebuilds_everything(args) is everything


class FakeSpark:
    """The catalog calls build_versions makes: tables that exist, the record's rows, and the
    statements it runs."""

    def __init__(self, tables: dict[str, list[dict[str, object]]]) -> None:
        self.tables = tables
        self.statements: list[str] = []
        self.catalog = SimpleNamespace(tableExists=lambda name: name in self.tables)

    def table(self, name: str) -> SimpleNamespace:
        rows = [SimpleNamespace(**row) for row in self.tables[name]]
        return SimpleNamespace(collect=lambda: rows)

    def sql(self, statement: str) -> None:
        self.statements.append(statement)

    @property
    def recorded(self) -> str:
        (statement,) = [s for s in self.statements if "build_versions" in s]
        return statement


RECORD = "cdc_raw.build_versions"
CHANGE_LOG = "cdc_internal.int_cdc__change_log"


def rows(versions: dict[str, int]) -> list[dict[str, object]]:
    return [{"part": part, "version": version} for part, version in versions.items()]


def test_a_new_warehouse_records_the_code_s_versions_at_its_first_build():
    spark = FakeSpark({})
    build_versions.check(spark, SETTINGS, [])
    assert "create or replace table cdc_raw.build_versions" in spark.recorded
    for part, version in code_versions().items():
        assert f"('{part}', {version})" in spark.recorded


def test_a_warehouse_built_before_the_record_refuses_once_the_layout_changed(monkeypatch):
    monkeypatch.setattr(build_versions, "LAYOUT_VERSION", 2)
    spark = FakeSpark({CHANGE_LOG: []})
    with pytest.raises(RebuildNeeded, match=r"layout version 1 \(this code writes version 2\)"):
        build_versions.check(spark, SETTINGS, [])
    assert spark.statements == []


def test_a_changed_sort_key_version_refuses_until_a_full_refresh_records_the_new_one():
    spark = FakeSpark({CHANGE_LOG: [], RECORD: rows(code_versions() | {"pgoutput": 0})})
    with pytest.raises(RebuildNeeded, match="pgoutput's sort-key encoding version 0"):
        build_versions.check(spark, SETTINGS, ["--select", "stg_pgoutput__lines+"])
    build_versions.check(spark, SETTINGS, ["--full-refresh"])
    assert spark.statements == []
    build_versions.record_rebuild(spark, SETTINGS, ["--full-refresh"])
    assert "('pgoutput', 1)" in spark.recorded


def test_matching_versions_build_without_writing():
    spark = FakeSpark({CHANGE_LOG: [], RECORD: rows(code_versions())})
    build_versions.check(spark, SETTINGS, [])
    build_versions.record_rebuild(spark, SETTINGS, [])
    assert spark.statements == []


def test_a_family_new_to_the_record_is_added():
    built = {part: version for part, version in code_versions().items() if part != "spanner"}
    spark = FakeSpark({CHANGE_LOG: [], RECORD: rows(built)})
    build_versions.check(spark, SETTINGS, [])
    assert "('spanner', 1)" in spark.recorded
