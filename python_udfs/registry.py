"""Thin Spark wrappers around the pure functions, registered once per SparkSession before dbt's
first query. Batches cross the JVM boundary as Arrow (pandas UDFs); the per-line work stays in
plain, unit-tested Python."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import LongType, StringType, StructField, StructType

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
PGOUTPUT_CHANGES = f"array<struct<{spark_schema(pgoutput.CHANGE_ROW_COLUMNS)}>>"


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
    """One message may make two changes (a primary key change), so each row gets a list."""
    rows = guarded_list(pgoutput.change_rows)
    names = [name for name, _ in pgoutput.CHANGE_ROW_COLUMNS]

    @pandas_udf(PGOUTPUT_CHANGES)
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
                [{name: row.get(name) for name in names} for row in rows(*args, declared_keys)]
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


# A landed line of a record file, before landing adds its run and time.
RECORD_LINE = StructType(
    [
        StructField("source_name", StringType()),
        StructField("file_path", StringType()),
        StructField("line_number", LongType()),
        StructField("line", StringType()),
        StructField("load_error", StringType()),
    ]
)
RECORD_LINE_ARROW = to_arrow_schema(RECORD_LINE)
RecordReader = Callable[[str], Iterator[tuple[int, str | None, str | None]]]


def record_line_batches(
    files: Iterable[tuple[str, str]], read: RecordReader, batch_rows: int
) -> Iterator[pa.RecordBatch]:
    """The lines `read` decodes from each (source_name, file_path), as Arrow batches of at most
    `batch_rows` rows: a file streams through, so memory does not grow with its size."""
    for source_name, file_path in files:
        pending: list[tuple[int, str | None, str | None]] = []
        for record in read(file_path):
            pending.append(record)
            if len(pending) == batch_rows:
                yield _record_line_batch(source_name, file_path, pending)
                pending = []
        if pending:
            yield _record_line_batch(source_name, file_path, pending)


def _record_line_batch(
    source_name: str, file_path: str, records: list[tuple[int, str | None, str | None]]
) -> pa.RecordBatch:
    numbers, lines, errors = zip(*records, strict=True)
    return pa.RecordBatch.from_arrays(
        [
            pa.array([source_name] * len(records), pa.string()),
            pa.array([file_path] * len(records), pa.string()),
            pa.array(numbers, pa.int64()),
            pa.array(lines, pa.string()),
            pa.array(errors, pa.string()),
        ],
        schema=RECORD_LINE_ARROW,
    )


def record_lines_mapper(
    read: RecordReader, batch_rows: int = 10_000
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    """For `DataFrame.mapInArrow` over (source_name, file_path) rows: record files are decoded
    by the Python workers next to the data, never collected on the driver."""

    def decode_files(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        for batch in batches:
            files = zip(
                batch.column("source_name").to_pylist(),
                batch.column("file_path").to_pylist(),
                strict=True,
            )
            yield from record_line_batches(files, read, batch_rows)

    return decode_files


def register_all(spark: SparkSession, tables_file: Path) -> None:
    entries = parse_table_settings(tables_file.read_text()) if tables_file.exists() else []
    declared_keys = declared_key_lookup(entries)
    spark.udf.register("datastream_flatten", datastream_flatten_udf(declared_keys))
    spark.udf.register("debezium_flatten", debezium_flatten_udf(declared_keys))
    spark.udf.register("pgoutput_message", pgoutput_message_udf())
    spark.udf.register("pgoutput_changes", pgoutput_changes_udf(declared_keys))
    spark.udf.register("spanner_flatten", spanner_flatten_udf(declared_keys))
