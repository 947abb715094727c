"""Thin Spark wrappers around the pure functions, registered once per SparkSession before dbt's
first query. Batches cross the JVM boundary as Arrow (Arrow UDFs: no pandas in between); the
per-line work stays in plain, unit-tested Python."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
from pyspark.sql.types import DataType, LongType, StringType, StructField, StructType

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


def _arrow_type(schema: str) -> pa.DataType:
    """Spark's own Arrow form of a UDF's DDL result type. Parsing DDL needs the session, so the
    UDFs are built on the driver and carry the type to the workers."""
    return to_arrow_type(DataType.fromDDL(schema))


def _column(results: Iterable[Any], arrow_type: pa.DataType) -> pa.Array:
    """pyarrow builds the result column from the parsers' dicts in C: a missing field is null,
    so an error-only row needs no padding, and no pandas frame is built per batch."""
    return pa.array(results, type=arrow_type)


def datastream_flatten_udf(declared_keys: KeyLookup):
    flatten = guarded(datastream.flatten_event)
    result_type = _arrow_type(DATASTREAM_CHANGE)

    @arrow_udf(DATASTREAM_CHANGE)
    def datastream_flatten(lines: pa.Array, source_names: pa.Array) -> pa.Array:
        return _column(
            (
                flatten(line, source, declared_keys)
                for line, source in zip(lines.to_pylist(), source_names.to_pylist(), strict=True)
            ),
            result_type,
        )

    return datastream_flatten


def debezium_flatten_udf(declared_keys: KeyLookup):
    flatten = guarded(debezium.flatten_record)
    result_type = _arrow_type(CHANGE)

    @arrow_udf(CHANGE)
    def debezium_flatten(
        lines: pa.Array, source_names: pa.Array, placeholders: pa.Array
    ) -> pa.Array:
        return _column(
            (
                flatten(line, source, tuple(marks), declared_keys)
                for line, source, marks in zip(
                    lines.to_pylist(),
                    source_names.to_pylist(),
                    placeholders.to_pylist(),
                    strict=True,
                )
            ),
            result_type,
        )

    return debezium_flatten


def pgoutput_message_udf():
    decode = guarded(pgoutput.message_row)
    result_type = _arrow_type(PGOUTPUT_MESSAGE)

    @arrow_udf(PGOUTPUT_MESSAGE)
    def pgoutput_message(lines: pa.Array, in_stream: pa.Array) -> pa.Array:
        return _column(
            (
                decode(line, bool(flag))
                for line, flag in zip(lines.to_pylist(), in_stream.to_pylist(), strict=True)
            ),
            result_type,
        )

    return pgoutput_message


def pgoutput_changes_udf(declared_keys: KeyLookup):
    """One message may make two changes (a primary key change), so each row gets a list."""
    rows = guarded_list(pgoutput.change_rows)
    result_type = _arrow_type(PGOUTPUT_CHANGES)

    @arrow_udf(PGOUTPUT_CHANGES)
    def pgoutput_changes(
        relations: pa.Array,
        kinds: pa.Array,
        old_kinds: pa.Array,
        old_tuples: pa.Array,
        new_tuples: pa.Array,
        source_names: pa.Array,
    ) -> pa.Array:
        columns = (relations, kinds, old_kinds, old_tuples, new_tuples, source_names)
        return _column(
            (
                rows(*args, declared_keys)
                for args in zip(*(column.to_pylist() for column in columns), strict=True)
            ),
            result_type,
        )

    return pgoutput_changes


def spanner_flatten_udf(declared_keys: KeyLookup):
    """One line holds one record, which may make many rows (one per mod or child partition)."""
    flatten = guarded_list(spanner.flatten_line)
    result_type = _arrow_type(SPANNER_ROWS)

    @arrow_udf(SPANNER_ROWS)
    def spanner_flatten(lines: pa.Array, source_names: pa.Array) -> pa.Array:
        return _column(
            (
                flatten(line, source, declared_keys)
                for line, source in zip(lines.to_pylist(), source_names.to_pylist(), strict=True)
            ),
            result_type,
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
