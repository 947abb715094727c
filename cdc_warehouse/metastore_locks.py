"""Locks in a shared metastore's database (PostgreSQL, MySQL/MariaDB), held over JDBC through
the driver JVM: one process at a time opens an empty metastore, and one command at a time runs
per warehouse and schema prefix, from any machine. Session-level locks: the database releases
them when their connection closes, also when the process dies."""

from __future__ import annotations

import hashlib
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pyspark
from py4j.protocol import Py4JJavaError
from pyspark.sql import SparkSession

from cdc_warehouse.settings import Metastore, Settings, WarehouseBusy, by_url_prefix


def _jvm(spark: SparkSession) -> Any:
    """The driver JVM (a Connect client has none, and never takes these locks)."""
    jvm = spark.sparkContext._jvm
    if jvm is None:
        raise RuntimeError("the metastore locks need the driver JVM")
    return jvm


@contextmanager
def _connection(spark: SparkSession, metastore: Metastore) -> Iterator[Any]:
    """A JDBC connection to the metastore's database, closed on leaving (its locks with it)."""
    connection = _jvm(spark).java.sql.DriverManager.getConnection(
        metastore.url, metastore.user, metastore.password
    )
    try:
        yield connection
    finally:
        connection.close()


# The start-up lock, waited for: MySQL/MariaDB's GET_LOCK returns 0 after its timeout;
# PostgreSQL raises after lock_timeout.
METASTORE_LOCK_WAIT_SECONDS = 600
POSTGRES_LOCK_NOT_AVAILABLE = "55P03"
MYSQL_LOCK = f"select get_lock('cdc_warehouse metastore', {METASTORE_LOCK_WAIT_SECONDS})"
METASTORE_LOCKS = {
    "jdbc:postgresql:": (
        f"set lock_timeout = '{METASTORE_LOCK_WAIT_SECONDS}s'",
        "select pg_advisory_lock(hashtext('cdc_warehouse metastore'))",
    ),
    "jdbc:mysql:": ("", MYSQL_LOCK),
    "jdbc:mariadb:": ("", MYSQL_LOCK),
}


def open_shared_metastore(spark: SparkSession, metastore: Metastore) -> None:
    """Open the metastore under a lock in its database, so that one process at a time creates
    what is missing. Spark's Hive client creates its tables (DataNucleus, when auto-create is
    on), the `default` database and the admin roles on first use, each after checking that it
    is missing: two runs starting at once on an empty metastore both created table "CDS" (one
    failed: 'Unable to instantiate SessionHiveMetaStoreClient'), and without the unique indexes
    auto-create leaves out they could both insert `default`. Other databases than PostgreSQL
    and MySQL/MariaDB get no lock: start the first run alone, or create the schema with Hive's
    schematool."""
    statements = by_url_prefix(METASTORE_LOCKS, metastore.url)
    if statements is None:
        return
    prepare, lock = statements
    with _connection(spark, metastore) as connection:
        statement = connection.createStatement()
        if prepare:
            statement.execute(prepare)
        try:
            acquired = statement.executeQuery(lock)
        except Py4JJavaError as error:
            if error.java_exception.getSQLState() == POSTGRES_LOCK_NOT_AVAILABLE:
                raise WarehouseBusy(_busy_message(metastore)) from None
            raise
        if acquired.next() and acquired.getString(1) == "0":
            raise WarehouseBusy(_busy_message(metastore))
        if metastore.auto_create:
            _create_metastore_tables(spark)
        spark.catalog.databaseExists("default")


# A lock held for a whole command, per warehouse and schema prefix, in the shared metastore's
# database: installations on other machines (another CDC_STATE_DIR, a remote warehouse URI) see
# it where no file lock reaches. Not waited for; released when the connection closes.
RUN_LOCKS = {
    "jdbc:postgresql:": "select pg_try_advisory_lock(hashtext(?))",
    "jdbc:mysql:": "select get_lock(?, 0)",
    "jdbc:mariadb:": "select get_lock(?, 0)",
}


def run_lock_name(settings: Settings) -> str:
    """The lock's name: the warehouse location and the schema prefix, digested (MySQL's lock
    names take 64 characters)."""
    place = f"{settings.spark_warehouse}\0{settings.schema_prefix}"
    return "cdcw run " + hashlib.sha256(place.encode()).hexdigest()[:32]


@contextmanager
def metastore_run_lock(spark: SparkSession, settings: Settings) -> Iterator[None]:
    """With a shared metastore in PostgreSQL or MySQL/MariaDB, one command at a time per
    warehouse and prefix: a second stops at once (WarehouseBusy) instead of landing the same
    files again into the same tables."""
    metastore = settings.metastore
    if metastore is None or metastore.is_service:
        yield
        return
    query = by_url_prefix(RUN_LOCKS, metastore.url)
    if query is None:
        yield
        return
    with _connection(spark, metastore) as connection:
        statement = connection.prepareStatement(query)
        statement.setString(1, run_lock_name(settings))
        acquired = statement.executeQuery()
        if not (acquired.next() and acquired.getString(1) in ("t", "true", "1")):
            with_prefix = (
                f" with schema prefix {settings.schema_prefix!r}" if settings.schema_prefix else ""
            )
            database = metastore.url.split("?")[0]
            raise WarehouseBusy(
                f"another cdcw command is running on the warehouse {settings.spark_warehouse}"
                f"{with_prefix} (a lock in the metastore {database}); one at a time per "
                "warehouse and prefix"
            )
        yield


def metastore_model_classes() -> list[str]:
    """The classes of Hive's metastore mapping (`package.jdo` in Spark's hive-metastore jar)
    that have a table of their own."""
    jar = next((Path(pyspark.__file__).parent / "jars").glob("hive-metastore-*.jar"))
    with zipfile.ZipFile(jar) as archive:
        mapping = ElementTree.fromstring(archive.read("package.jdo"))
    return [
        f"{package.get('name')}.{model.get('name')}"
        for package in mapping.iter("package")
        for model in package.iter("class")
        if model.get("embedded-only") != "true"
    ]


def _create_metastore_tables(spark: SparkSession) -> None:
    """DataNucleus creates a table when its class is first used, not when the client starts:
    TBL_PRIVS appeared only when a run dropped its first table, outside the lock. Query every
    mapped class once, through Hive's own persistence layer, so the lock covers them all. Done
    before the client starts: the client then replaces this persistence factory (its settings
    differ) while still under the lock, instead of after it."""
    jvm = _jvm(spark)
    hive_conf = jvm.org.apache.hadoop.hive.conf.HiveConf(
        spark._jsc.hadoopConfiguration(),
        jvm.java.lang.Class.forName("org.apache.hadoop.hive.conf.HiveConf"),
    )
    store = jvm.org.apache.hadoop.hive.metastore.ObjectStore()
    store.setConf(hive_conf)
    manager = store.getPersistenceManager()
    try:
        for name in metastore_model_classes():
            query = manager.newQuery(jvm.java.lang.Class.forName(name))
            query.setRange(0, 1)
            query.execute()
            query.closeAll()
    finally:
        manager.close()
        store.shutdown()


def _busy_message(metastore: Metastore) -> str:
    return (
        f"the metastore {metastore.url.split('?')[0]} was being opened by another process for "
        f"over {METASTORE_LOCK_WAIT_SECONDS} s (its start-up lock); try again, or look for a "
        "process stuck while starting"
    )
