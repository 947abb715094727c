"""The sample pipeline through Spark Connect: a server started from pyspark's own
sbin/start-connect-server.sh (loopback, Hive catalog) whose Python workers cannot import this
project, and `cdcw` as a thin client on a machine without Java. UDF models included, the marts
must be exactly the embedded run's."""

from __future__ import annotations

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import BUILD_WITHOUT_TESTS

from .harness import (
    SAMPLE_LANDING,
    base_env,
    cdcw,
    connect_server,
    differences,
    mart_rows,
)

pytestmark = pytest.mark.cluster


def test_sample_pipeline_through_spark_connect_equals_the_embedded_run(
    tmp_path, embedded_reference, worker_python
):
    pipeline, expected = embedded_reference
    server_dir = tmp_path / "server"
    no_java = tmp_path / "empty-path"
    no_java.mkdir()
    with connect_server(server_dir, worker_python) as url:
        env = base_env(
            CDC_TARGET="connect",
            SPARK_REMOTE=url,
            CDC_STATE_DIR=str(tmp_path / "state"),
            CDC_LANDING_ROOT=str(SAMPLE_LANDING),
            CDC_TABLES=str(PROJECT_DIR / "cdc_tables.yml"),
            # No Java here: any attempt to start a local JVM would fail.
            PATH=str(no_java),
        )
        env.pop("JAVA_HOME", None)
        finished = cdcw(["run", *BUILD_WITHOUT_TESTS], env, tmp_path, "connect-run")
        assert finished.returncode == 0, finished.explain()

    # Tables were made by the server, in its warehouse and metastore; none on the client side.
    assert (server_dir / "metastore_db").is_dir()
    assert not (tmp_path / "state" / "metastore_db").exists()
    actual = mart_rows(pipeline.spark(), server_dir / "warehouse", "default", SAMPLE_LANDING)
    # Every UDF model fed the marts: each family's flatten/decode UDF ran on the server.
    assert {dict(row)["source_system"] for row in actual["cdc_current"]} == {
        "datastream",
        "debezium",
        "pgoutput",
        "spanner",
    }
    assert differences(actual, expected) == ""
