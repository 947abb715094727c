"""A source table's partitions (docs/decisions/017): the predicate a typed view keeps them by
is the same in the macros and in the benchmark's Python, and every partition number fits the
int column."""

from __future__ import annotations

import pytest

from cdc_warehouse.bench import table_reads
from tests.project_macros import render_macro

MACROS = ["utils/table_cohorts.sql", "utils/cohorts_per_table.sql", "utils/table_bucket.sql"]


@pytest.mark.parametrize(
    ("source_system", "source_table"),
    [("debezium", "public.documents"), ("spanner", "Orders"), ("datastream", "ROOT.SAMPLE")],
)
def test_the_macro_and_the_benchmark_keep_a_table_by_the_same_predicate(
    source_system, source_table
):
    source = f"{{'source_system': '{source_system}', 'source_table': '{source_table}'}}"
    call = f"table_cohorts({source})"
    rendered = " ".join(render_macro(MACROS, call).split())
    assert rendered == table_reads.table_cohorts(source_system, source_table)


def test_the_macros_constants_are_the_benchmarks():
    assert render_macro(MACROS, "cohorts_per_table()") == str(table_reads.COHORTS_PER_TABLE)
    bucket = render_macro(MACROS, "table_bucket('a', 'b')")
    assert bucket == f"pmod(xxhash64(a, b), {table_reads.TABLE_BUCKETS})"


def test_the_last_partition_of_the_last_bucket_fits_an_int():
    last_bucket = table_reads.TABLE_BUCKETS - 1
    largest = last_bucket * table_reads.COHORTS_PER_TABLE + table_reads.COHORTS_PER_TABLE - 1
    assert largest <= 2**31 - 1
