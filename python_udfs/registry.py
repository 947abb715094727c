"""Thin Spark wrappers around the pure functions, registered once per SparkSession before dbt's
first query. Batches cross the JVM boundary as Arrow (pandas UDFs); the per-line work stays in
plain, unit-tested Python."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf

from python_udfs import datastream, debezium, pgoutput, spanner
from python_udfs.change_log import CHANGE_COLUMNS, spark_schema
from python_udfs.table_settings import KeyLookup, declared_key_lookup, parse_table_settings

CHANGE = spark_schema(CHANGE_COLUMNS)
DATASTREAM_CHANGE = spark_schema(CHANGE_COLUMNS + datastream.EXTRA_COLUMNS)
SPANNER_ROWS = f"array<struct<{spark_schema(spanner.COLUMNS)}>>"
PGOUTPUT_MESSAGE = (
    "error string, kind string, lsn bigint, txn_xid bigint, sub_xid bigint, "
    "first_segment boolean, commit_lsn bigint, commit_ts bigint, gid string, "
    "relation_oid bigint, relation_json string, old_kind string, old_tuple_json string, "
    "new_tuple_json string, truncate_oids array<bigint>"
)


def guarded(parse: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A parser bug must quarantine the line it failed on, not stop the run."""

    def call(*args: Any) -> dict[str, Any]:
        try:
            return parse(*args)
        except Exception as exc:  # the boundary between data and the run
            return {"error": f"internal error: {type(exc).__name__}: {exc}"}

    return call


def guarded_list(
    parse: Callable[..., list[dict[str, Any]]],
) -> Callable[..., list[dict[str, Any]]]:
    single = guarded(lambda *args: {"rows": parse(*args)})

    def call(*args: Any) -> list[dict[str, Any]]:
        result = single(*args)
        return result.get("rows", [result])

    return call


def _frame(records: Iterable[dict[str, Any]], schema: str) -> pd.DataFrame:
    """Object columns keep a missing field as None: pandas would make it NaN, which Arrow
    cannot turn into an array (an error-only row would fail its whole batch)."""
    names = [field.split()[0] for field in schema.split(", ")]
    return pd.DataFrame(
        [[record.get(name) for name in names] for record in records], columns=names, dtype=object
    )


def datastream_flatten_udf(declared_keys: KeyLookup):
    flatten = guarded(datastream.flatten_event)

    @pandas_udf(DATASTREAM_CHANGE)
    def datastream_flatten(lines: pd.Series, source_names: pd.Series) -> pd.DataFrame:
        return _frame(
            (
                flatten(line, source, declared_keys)
                for line, source in zip(lines, source_names, strict=True)
            ),
            DATASTREAM_CHANGE,
        )

    return datastream_flatten


def debezium_flatten_udf(declared_keys: KeyLookup):
    flatten = guarded(debezium.flatten_record)

    @pandas_udf(CHANGE)
    def debezium_flatten(
        lines: pd.Series, source_names: pd.Series, placeholders: pd.Series
    ) -> pd.DataFrame:
        return _frame(
            (
                flatten(line, source, tuple(marks), declared_keys)
                for line, source, marks in zip(lines, source_names, placeholders, strict=True)
            ),
            CHANGE,
        )

    return debezium_flatten


def pgoutput_message_udf():
    decode = guarded(pgoutput.message_row)

    @pandas_udf(PGOUTPUT_MESSAGE)
    def pgoutput_message(lines: pd.Series, in_stream: pd.Series) -> pd.DataFrame:
        return _frame(
            (decode(line, bool(flag)) for line, flag in zip(lines, in_stream, strict=True)),
            PGOUTPUT_MESSAGE,
        )

    return pgoutput_message


def pgoutput_changes_udf(declared_keys: KeyLookup):
    """Returns JSON text (parsed with from_json in SQL): one message may make two changes."""
    rows = guarded_list(pgoutput.change_rows)

    @pandas_udf("string")
    def pgoutput_changes(
        relations: pd.Series,
        kinds: pd.Series,
        old_kinds: pd.Series,
        old_tuples: pd.Series,
        new_tuples: pd.Series,
        source_names: pd.Series,
    ) -> pd.Series:
        return pd.Series(
            [
                json.dumps(rows(*args, declared_keys), ensure_ascii=False)
                for args in zip(
                    relations, kinds, old_kinds, old_tuples, new_tuples, source_names, strict=True
                )
            ]
        )

    return pgoutput_changes


def spanner_flatten_udf(declared_keys: KeyLookup):
    """One line holds one record, which may make many rows (one per mod or child partition)."""
    flatten = guarded_list(spanner.flatten_line)
    names = [name for name, _ in spanner.COLUMNS]

    @pandas_udf(SPANNER_ROWS)
    def spanner_flatten(lines: pd.Series, source_names: pd.Series) -> pd.Series:
        return pd.Series(
            [
                [
                    {name: row.get(name) for name in names}
                    for row in flatten(line, source, declared_keys)
                ]
                for line, source in zip(lines, source_names, strict=True)
            ]
        )

    return spanner_flatten


def register_all(spark: SparkSession, tables_file: Path) -> None:
    entries = parse_table_settings(tables_file.read_text()) if tables_file.exists() else []
    declared_keys = declared_key_lookup(entries)
    spark.udf.register("datastream_flatten", datastream_flatten_udf(declared_keys))
    spark.udf.register("debezium_flatten", debezium_flatten_udf(declared_keys))
    spark.udf.register("pgoutput_message", pgoutput_message_udf())
    spark.udf.register("pgoutput_changes", pgoutput_changes_udf(declared_keys))
    spark.udf.register("spanner_flatten", spanner_flatten_udf(declared_keys))
