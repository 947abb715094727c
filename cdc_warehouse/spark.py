"""The one SparkSession of a cdcw process: dbt's `session` method picks it up with
`getOrCreate()`, so the UDFs registered here are visible to every model.

Three ways to get it, chosen by the profile target (settings.py): `local` (an embedded Spark),
`cluster` (this process is the driver of an application on a cluster master) and `connect` (a
thin client of a Spark Connect server; no JVM here)."""

from __future__ import annotations

import hashlib
import os
import sys
import warnings
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyspark
from pyspark import SparkContext
from pyspark.sql import SparkSession

from cdc_warehouse import class_archive, table_format
from cdc_warehouse.class_archive import ArchivePlan
from cdc_warehouse.metastore_locks import open_shared_metastore
from cdc_warehouse.prereqs import java_executable
from cdc_warehouse.settings import CONNECT, Settings, SettingsError

STDERR = 2

# SQL settings every session gets, Connect sessions included (runtime settings only).
SQL_CONF = {
    "spark.sql.session.timeZone": "UTC",
    # Adaptive execution coalesces small shuffles into a few tasks, but cannot split large ones:
    # a shuffle starts with enough partitions that one task of a large build's last stage fits
    # the default driver heap (the benchmark's 10M-event build, docs/benchmarks.md).
    "spark.sql.shuffle.partitions": "64",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.adaptive.coalescePartitions.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.parquet.compression.codec": "zstd",
    # Parquet's own timestamp type, not Spark's legacy INT96 (deprecated by parquet): other
    # readers see UTC instants, and Spark pushes filters on timestamps (an as-of query's
    # valid_from / valid_to) down to row group statistics, which it cannot for INT96.
    "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",
    # Plan-time sizes come from compressed parquet, far below the hash table a broadcast
    # builds: the plan-time threshold stays small, so that a large table (the key registry) is
    # never broadcast into the driver's heap. Sizes known at run time (adaptive execution) are
    # uncompressed, so that threshold may be higher.
    "spark.sql.autoBroadcastJoinThreshold": "2MB",
    "spark.sql.adaptive.autoBroadcastJoinThreshold": "10MB",
    # Delta reads a table's log into this many partitions before each query and write: its
    # default (50) is meant for long logs; a few log files need a few tasks.
    "spark.databricks.delta.snapshotPartitions": "2",
    # VACUUM lists files with this many tasks (Spark's default, 10000, is meant for clusters).
    "spark.sql.sources.parallelPartitionDiscovery.parallelism": "16",
}


def sql_conf(settings: Settings) -> dict[str, str]:
    """The project's SQL settings with the installation's own (CDC_SQL_CONF) over them."""
    return {**SQL_CONF, **dict(settings.sql_conf)}


def metastore_conf(settings: Settings) -> dict[str, str]:
    """Where the Hive metastore is. Embedded: Derby in the local warehouse directory. JDBC: the
    driver's jar must be on the driver's classpath when its JVM starts (`spark.jars` loads it
    too late for DataNucleus: 'No suitable driver'). DataNucleus creates missing metastore
    tables itself unless told not to; `autoCreateAll` also creates foreign keys, which hangs on
    PostgreSQL, so tables and columns only."""
    metastore = settings.metastore
    if metastore is None:
        return {
            "spark.hadoop.javax.jdo.option.ConnectionURL": (
                f"jdbc:derby:;databaseName={settings.metastore_dir};create=true"
            )
        }
    if metastore.is_service:
        return {"spark.hadoop.hive.metastore.uris": metastore.url}
    conf = {
        "spark.hadoop.javax.jdo.option.ConnectionURL": metastore.url,
        "spark.hadoop.javax.jdo.option.ConnectionDriverName": metastore.driver_class or "",
        "spark.driver.extraClassPath": metastore.driver_jars or "",
    }
    if metastore.user:
        conf["spark.hadoop.javax.jdo.option.ConnectionUserName"] = metastore.user
    if metastore.password:
        conf["spark.hadoop.javax.jdo.option.ConnectionPassword"] = metastore.password
    if metastore.auto_create:
        conf |= {
            "spark.hadoop.datanucleus.schema.autoCreateAll": "false",
            "spark.hadoop.datanucleus.schema.autoCreateTables": "true",
            "spark.hadoop.datanucleus.schema.autoCreateColumns": "true",
            "spark.hadoop.datanucleus.schema.autoCreateConstraints": "false",
            "spark.hadoop.hive.metastore.schema.verification": "false",
        }
    return conf


def session_conf(settings: Settings) -> dict[str, str]:
    """Everything a `local` or `cluster` session is started with (before its JVM starts)."""
    conf = {
        "spark.app.name": "cdc-warehouse",
        "spark.master": settings.spark_master or "",
        "spark.sql.catalogImplementation": "hive",
        "spark.sql.warehouse.dir": settings.spark_warehouse,
        # Derby (embedded metastore) writes derby.log into its system home.
        "spark.driver.extraJavaOptions": f"-Dderby.system.home={settings.warehouse_dir}",
        "spark.driver.memory": settings.driver_memory,
        # On the driver's and every executor's classpath; the Connect server names them itself.
        "spark.jars": table_format.session_jars(),
        **table_format.SESSION_CONF,
        **metastore_conf(settings),
        **sql_conf(settings),
        # Most written columns are JSON text of high cardinality, where a dictionary encoding
        # costs time and space and saves nothing: parquet writes them plain.
        "spark.hadoop.parquet.enable.dictionary": "false",
        "spark.ui.enabled": str(settings.spark_ui).lower(),
        "spark.ui.port": str(settings.spark_ui_port),
        "spark.ui.showConsoleProgress": "false",
    }
    conf["spark.driver.extraClassPath"] = os.pathsep.join(
        path
        for path in (table_format.driver_class_path(), conf.get("spark.driver.extraClassPath"))
        if path
    )
    if settings.executor_memory:
        conf["spark.executor.memory"] = settings.executor_memory
    return conf


def spark_log(settings: Settings) -> Path:
    """Where the driver JVM's own output goes (start-up warnings, Spark's log) unless asked for
    on the terminal."""
    return settings.dbt_dir / "logs" / "spark.log"


@contextmanager
def jvm_output_to(log: Path | None) -> Iterator[None]:
    """A JVM started inside this block writes its standard error (the launcher's notes, log4j,
    Spark's warnings) to `log`, appended, for as long as it lives; this process's own standard
    error is back where it was after the block. None: left on the terminal."""
    if log is None:
        yield
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    terminal = os.dup(STDERR)
    try:
        with log.open("ab") as target:
            os.dup2(target.fileno(), STDERR)
            yield
    finally:
        sys.stderr.flush()
        os.dup2(terminal, STDERR)
        os.close(terminal)


def build_session(settings: Settings, verbose: bool = False) -> SparkSession:
    """Embedded Spark with its Derby metastore and parquet warehouse under one directory,
    sized for a small (2-core) machine; or the driver of a cluster application; or a Spark
    Connect client. The driver JVM's own output goes to `spark_log` unless `verbose`."""
    settings.warehouse_dir.mkdir(parents=True, exist_ok=True)
    if settings.target == CONNECT:
        return _connect_session(settings)
    # Python workers must run the interpreter that has this project's dependencies; on a
    # cluster set PYSPARK_PYTHON to the workers' interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    active = SparkSession.getActiveSession()
    if active is not None and active.conf.get("spark.sql.warehouse.dir") != (
        settings.spark_warehouse
    ):
        # Warehouse and metastore are fixed when a session starts: another warehouse needs a
        # new session (the JVM stays).
        active.stop()
    conf = session_conf(settings)
    archive = class_archive_plan(settings, conf)
    if archive is not None:
        conf["spark.driver.extraJavaOptions"] += f" {archive.java_options}"
    builder = SparkSession.builder
    for key, value in conf.items():
        builder = builder.config(key, value)
    # Only a JVM's start decides where its output goes.
    starts_jvm = SparkContext._gateway is None
    if starts_jvm and settings.spark_ui:
        # The UI binds to the address the JVM finds in SPARK_LOCAL_IP (else every interface),
        # as the driver does.
        os.environ["SPARK_LOCAL_IP"] = settings.spark_ui_host
    with jvm_output_to(spark_log(settings) if starts_jvm and not verbose else None):
        spark = builder.getOrCreate()
    if archive is not None and archive.dump_to is not None:
        class_archive.finish_at_exit(spark, archive)
    spark.sparkContext.setLogLevel("ERROR")
    if settings.spark_ui:
        print(f"cdcw: the Spark UI is at {spark.sparkContext.uiWebUrl}", file=sys.stderr)
    if settings.metastore is not None and not settings.metastore.is_service:
        open_shared_metastore(spark, settings.metastore)
    return spark


def class_archive_plan(settings: Settings, conf: dict[str, str]) -> ArchivePlan | None:
    """The class archive for the JVM this session starts; none when a JVM already runs in this
    process (its options are fixed) or the archive is off."""
    java = java_executable()
    if settings.class_archive_dir is None or SparkContext._gateway is not None or java is None:
        return None
    spark_home = os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent
    try:
        name = class_archive.archive_name(
            java,
            Path(spark_home) / "jars",
            conf.get("spark.driver.extraClassPath", "") + "\0" + conf.get("spark.jars", ""),
        )
    except OSError:
        # Not a standard installation: the JVM starts as it would without the archive.
        return None
    return class_archive.plan(settings.class_archive_dir, name, os.getpid())


def _connect_session(settings: Settings) -> SparkSession:
    """The server owns master, warehouse and metastore; only SQL settings are ours. dbt-spark's
    `SparkSession.builder.getOrCreate()` then finds this session (SPARK_REMOTE is set)."""
    # dbt-spark asks for Hive support on every query; a Connect session's catalog is the
    # server's, so pyspark warns that it cannot change it, once per query.
    warnings.filterwarnings(
        "ignore", message="Failed to set spark.sql.catalogImplementation", category=UserWarning
    )
    if settings.spark_remote is None:
        raise SettingsError("CDC_TARGET=connect needs SPARK_REMOTE (sc://host:port)")
    builder = SparkSession.builder.remote(settings.spark_remote)
    conf = sql_conf(settings)
    for key, value in conf.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    for key, value in conf.items():  # an existing session keeps its settings otherwise
        spark.conf.set(key, value)
    return spark


def udf_archive(directory: Path) -> Path:
    """The `python_udfs` package as a zip named by its content, written once per version."""
    import python_udfs

    package = Path(python_udfs.__file__).resolve().parent
    sources = sorted(package.rglob("*.py"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.relative_to(package).as_posix().encode() + b"\0")
        digest.update(source.read_bytes() + b"\0")
    archive = directory / f"python_udfs-{digest.hexdigest()[:16]}.zip"
    if not archive.exists():
        directory.mkdir(parents=True, exist_ok=True)
        partial = directory / f".{archive.name}.{os.getpid()}"
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as bundle:
            for source in sources:
                bundle.write(source, f"python_udfs/{source.relative_to(package).as_posix()}")
        partial.replace(archive)
    return archive


def _forget_removed_archives() -> None:
    """addPyFile also puts the shipped zip on the driver's sys.path, inside the SparkContext's
    temporary directory; once that context stops the zip is gone, and Python's zip importer
    then fails later imports with a KeyError. A new session in the same process (tests, a
    warehouse switch) must drop those entries first."""
    for entry in [path for path in sys.path if path.endswith(".zip") and not os.path.exists(path)]:
        sys.path.remove(entry)
        sys.path_importer_cache.pop(entry, None)


def ship_python_udfs(spark: SparkSession, settings: Settings) -> Path:
    """UDFs are pickled by reference to their module (`python_udfs.*`), so executors' Python
    workers must import it: ship the driver's copy with the application (cluster workers need
    only the project's dependencies, and always run the driver's version of the code)."""
    archive = udf_archive(settings.warehouse_dir / "_udfs")
    if settings.target == CONNECT:
        spark.addArtifacts(str(archive), pyfile=True)
    else:
        _forget_removed_archives()
        spark.sparkContext.addPyFile(str(archive))
    return archive
