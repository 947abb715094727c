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
from python_udfs.table_settings import declared_key_lookup, parse_table_settings

DEBEZIUM_CHANGE = spark_schema(debezium.COLUMNS)
DATASTREAM_CHANGE = spark_schema(CHANGE_COLUMNS + datastream.EXTRA_COLUMNS)
SPANNER_ROWS = f"array<struct<{spark_schema(spanner.COLUMNS)}>>"
PGOUTPUT_MESSAGE = (
    "error string, kind string, lsn bigint, txn_xid bigint, sub_xid bigint, "
    "first_segment boolean, commit_lsn bigint, commit_ts bigint, gid string, "
    "relation_oid bigint, relation_json string, column_types string, old_kind string, "
    "old_tuple_json string, new_tuple_json string, truncate_oids array<bigint>"
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


def per_row_udf(schema: str, parse: Callable[..., Any], *fixed_args: Any) -> Callable[..., Any]:
    """An Arrow UDF that calls `parse` on each row's values, then `fixed_args` (settings that
    are the same for every row, such as the declared keys), and returns its results as one
    column of Spark type `schema`."""
    result_type = _arrow_type(schema)

    # The eval type comes from the type hints; pyspark's stubs know only the forms that name it.
    @arrow_udf(schema)  # type: ignore[call-overload]
    def apply(*columns: pa.Array) -> pa.Array:
        rows = zip(*(column.to_pylist() for column in columns), strict=True)
        return _column((parse(*row, *fixed_args) for row in rows), result_type)

    return apply


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
    keys = (declared_key_lookup(entries),)
    # One pgoutput message may make two changes (a primary key change), and one Spanner record
    # many rows (one per mod or child partition): those UDFs return a list per input row.
    udfs = {
        "datastream_flatten": (DATASTREAM_CHANGE, guarded(datastream.flatten_event), keys),
        "debezium_flatten": (DEBEZIUM_CHANGE, guarded(debezium.flatten_record), keys),
        "pgoutput_message": (PGOUTPUT_MESSAGE, guarded(pgoutput.message_row), ()),
        "pgoutput_changes": (PGOUTPUT_CHANGES, guarded_list(pgoutput.change_rows), keys),
        "spanner_flatten": (SPANNER_ROWS, guarded_list(spanner.flatten_line), keys),
    }
    for name, (schema, parse, fixed_args) in udfs.items():
        spark.udf.register(name, per_row_udf(schema, parse, *fixed_args))
