"""The one SparkSession of a cdcw process: dbt's `session` method picks it up with
`getOrCreate()`, so the UDFs registered here are visible to every model."""

from __future__ import annotations

import os
import sys

from pyspark.sql import SparkSession

from cdc_warehouse.settings import Settings


def build_session(settings: Settings) -> SparkSession:
    """Embedded Spark with its Derby metastore and parquet warehouse under one directory,
    sized for a small (2-core) machine."""
    settings.warehouse_dir.mkdir(parents=True, exist_ok=True)
    # Python workers must run the interpreter that has this project installed.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None and active.conf.get("spark.sql.warehouse.dir") != str(
        settings.warehouse_dir
    ):
        # Warehouse and metastore are fixed when a session starts: another warehouse needs a
        # new session (the JVM stays).
        active.stop()
    metastore_url = f"jdbc:derby:;databaseName={settings.metastore_dir};create=true"
    builder = (
        SparkSession.builder.appName("cdc-warehouse")
        .master(settings.spark_master)
        .enableHiveSupport()
        .config("spark.sql.warehouse.dir", str(settings.warehouse_dir))
        .config("spark.hadoop.javax.jdo.option.ConnectionURL", metastore_url)
        .config("spark.driver.extraJavaOptions", f"-Dderby.system.home={settings.warehouse_dir}")
        .config("spark.driver.memory", settings.driver_memory)
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "8")
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.adaptive.coalescePartitions.enabled", "true")
        .config("spark.sql.sources.partitionOverwriteMode", "dynamic")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.parquet.compression.codec", "zstd")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
    )
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
