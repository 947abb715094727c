"""Thin Spark wrappers around the pure functions, registered once per SparkSession before dbt's
first query. Batches cross the JVM boundary as Arrow (pandas UDFs); the per-line work stays in
plain, unit-tested Python."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
from pyspark.sql import SparkSession
from pyspark.sql.functions import pandas_udf

from python_udfs import datastream
from python_udfs.table_settings import KeyLookup, declared_key_lookup, parse_table_settings

DATASTREAM_CHANGE = (
    "error string, source_type string, read_method string, source_table string, "
    "key_json string, op string, row_image map<string,string>, is_full_image boolean, "
    "is_backfill boolean, order_ts bigint, sort_pos string, committed_at bigint, "
    "txn_id string, event_id string"
)


def guarded(parse: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """A parser bug must quarantine the line it failed on, not stop the run."""

    def call(*args: Any) -> dict[str, Any]:
        try:
            return parse(*args)
        except Exception as exc:  # the boundary between data and the run
            return {"error": f"internal error: {type(exc).__name__}: {exc}"}

    return call


def datastream_flatten_udf(declared_keys: KeyLookup):
    flatten = guarded(datastream.flatten_event)

    @pandas_udf(DATASTREAM_CHANGE)
    def datastream_flatten(lines: pd.Series, source_names: pd.Series) -> pd.DataFrame:
        return pd.DataFrame.from_records(
            [
                flatten(line, source, declared_keys)
                for line, source in zip(lines, source_names, strict=True)
            ],
            columns=[field.split()[0] for field in DATASTREAM_CHANGE.split(", ")],
        )

    return datastream_flatten


def register_all(spark: SparkSession, tables_file: Path) -> None:
    entries = parse_table_settings(tables_file.read_text()) if tables_file.exists() else []
    declared_keys = declared_key_lookup(entries)
    spark.udf.register("datastream_flatten", datastream_flatten_udf(declared_keys))
