"""Thin Spark wrappers around the pure functions, registered once per SparkSession before dbt's
first query. Batches cross the JVM boundary as Arrow (Arrow UDFs: no pandas in between); the
per-line work stays in plain, unit-tested Python."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import repeat
from pathlib import Path
from typing import Any

import pyarrow as pa
from pyspark.sql import SparkSession
from pyspark.sql.functions import arrow_udf
from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
from pyspark.sql.types import DataType, LongType, StringType, StructField, StructType

from python_udfs.decoding import DecodeSettings
from python_udfs.families import FAMILIES, DecodeStage, RecordReader
from python_udfs.table_settings import declared_key_lookup, parse_table_settings


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


def decoding_udf(stage: DecodeStage, settings: DecodeSettings) -> Callable[..., Any]:
    """An Arrow UDF that calls the stage's decoder once per row, guarded: on the row's unit
    (its first columns), its source name (the next column) and `settings`, with the fields the
    SQL passes after those (`stage.sql_settings`, literals: read from each batch's first row).
    Its result is one column of the stage's schema."""
    result_type = _arrow_type(stage.schema)
    decode = guarded_list(stage.decode) if stage.many else guarded(stage.decode)
    width, given = len(stage.unit), stage.sql_settings

    # The eval type comes from the type hints; pyspark's stubs know only the forms that name it.
    @arrow_udf(stage.schema)  # type: ignore[call-overload]
    def apply(*columns: pa.Array) -> pa.Array:
        values = [column.to_pylist() for column in columns[:width]]
        units = values[0] if width == 1 else zip(*values, strict=True)
        sources = columns[width].to_pylist()
        batch = _with_sql_settings(settings, given, columns[width + 1 :])
        return _column(map(decode, units, sources, repeat(batch)), result_type)

    return apply


def _with_sql_settings(
    settings: DecodeSettings, names: tuple[str, ...], columns: Sequence[pa.Array]
) -> DecodeSettings:
    """`settings` with the fields the SQL passes, from the batch's first row: once a batch,
    not once a row."""
    if not names or not len(columns[0]):
        return settings
    given: dict[str, Any] = {}
    for name, column in zip(names, columns, strict=True):
        value = column[0].as_py()
        given[name] = tuple(value) if isinstance(value, list) else value
    return replace(settings, **given)


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
    """Every decoding stage of every family (python_udfs/families.py) as its UDF, with the keys
    the table settings file declares."""
    entries = parse_table_settings(tables_file.read_text()) if tables_file.exists() else []
    settings = DecodeSettings(declared_keys=declared_key_lookup(entries))
    for family in FAMILIES:
        for stage in family.all_stages:
            spark.udf.register(stage.udf, decoding_udf(stage, settings))
