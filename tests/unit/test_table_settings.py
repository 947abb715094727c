"""Declared keys: validation and lookup precedence."""

from __future__ import annotations

import pytest

from python_udfs.table_settings import declared_key_lookup, parse_table_settings

SETTINGS = """
tables:
  - source_system: datastream
    source_table: ROOT.SAMPLE
    primary_key: [ID]
  - source_system: datastream
    source_name: erp_eu
    source_table: ROOT.SAMPLE
    primary_key: [ID, REGION]
  - source_system: pgoutput
    source_table: public.audit
"""


def test_entry_naming_the_source_beats_one_for_any_source():
    lookup = declared_key_lookup(parse_table_settings(SETTINGS))
    assert lookup("datastream", "erp_eu", "ROOT.SAMPLE") == ["ID", "REGION"]
    assert lookup("datastream", "erp_us", "ROOT.SAMPLE") == ["ID"]


def test_undeclared_tables_and_entries_without_a_key_give_none():
    lookup = declared_key_lookup(parse_table_settings(SETTINGS))
    assert lookup("datastream", "erp_us", "ROOT.OTHER") is None
    assert lookup("pgoutput", "slot", "public.audit") is None
    assert lookup("debezium", "erp_eu", "ROOT.SAMPLE") is None


def test_empty_document_declares_nothing():
    assert parse_table_settings("") == []
    assert parse_table_settings("tables: []") == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n- b\n", "must be a mapping"),
        ("tables: {a: 1}", "'tables' must be a list"),
        ("tables: [x]", "entry 1: must be a mapping"),
        ("tables: [{source_table: t}]", "'source_system' is required"),
        ("tables: [{source_system: s}]", "'source_table' is required"),
        ("tables: [{source_system: s, source_table: t, primary_key: []}]", "non-empty list"),
        ("tables: [{source_system: s, source_table: t, primary_key: id}]", "non-empty list"),
    ],
)
def test_invalid_settings_name_the_problem(text, message):
    with pytest.raises(ValueError, match=message):
        parse_table_settings(text)
