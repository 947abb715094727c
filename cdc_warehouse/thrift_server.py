"""A JDBC/ODBC endpoint for BI tools: Spark's Thrift server started inside a cdcw-style driver.

    python -m cdc_warehouse.thrift_server [PORT]     (default 10000; host CDC_THRIFT_HOST)

The UDFs are temporary functions of one SparkSession, so the server is started from a PySpark
driver that has registered them, with `singleSession` so that every JDBC connection shares that
session (otherwise views that call a UDF fail: routine not found). It takes the same lock as
`cdcw`: with the embedded Derby metastore, BI queries and runs take turns; with a shared
metastore run it anywhere next to the scheduled `cdcw run`. `local` and `cluster` targets only
(a Connect server has no Thrift endpoint of ours).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

from cdc_warehouse.settings import CONNECT, SettingsError, load_settings


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        settings = load_settings()
    except SettingsError as exc:
        print(f"cdcw thrift server: {exc}", file=sys.stderr)
        return 2
    if settings.target == CONNECT or len(args) > 1 or (args and not args[0].isdigit()):
        print(__doc__, file=sys.stderr)
        return 2
    port = args[0] if args else "10000"
    host = settings.thrift_host
    # Static settings: they must reach the JVM before it starts.
    os.environ["PYSPARK_SUBMIT_ARGS"] = (
        "--conf spark.sql.hive.thriftServer.singleSession=true "
        f"--conf spark.hadoop.hive.server2.thrift.port={port} "
        f"--conf spark.hadoop.hive.server2.thrift.bind.host={host} "
        + os.environ.get("PYSPARK_SUBMIT_ARGS", "pyspark-shell")
    )
    from cdc_warehouse.settings import WarehouseBusy
    from cdc_warehouse.steps import start_spark, warehouse_lock

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        with warehouse_lock(settings):
            spark = start_spark(settings)
            jvm = spark.sparkContext._jvm
            server = jvm.org.apache.spark.sql.hive.thriftserver.HiveThriftServer2
            server.startWithContext(spark._jsparkSession.sqlContext())
            print(f"cdcw thrift server: jdbc:hive2://{host}:{port}/default", flush=True)
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
            spark.stop()
    except WarehouseBusy as exc:
        print(f"cdcw thrift server: {exc}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
