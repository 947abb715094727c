"""Spark's Thrift server for BI users, started from a PySpark driver that registered the UDFs
(`python -m cdc_warehouse.thrift_server`): separate JDBC connections (beeline) call a UDF, whose
Python workers cannot import this project. It holds the warehouse like `cdcw` does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from .harness import PYSPARK_HOME, base_env, cdcw, free_port

pytestmark = pytest.mark.cluster


def beeline(url: str, sql: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            str(PYSPARK_HOME / "bin" / "beeline"),
            "-u",
            url,
            "--silent=true",
            "--outputformat=csv2",
            "-e",
            sql,
        ],
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_bi_connections_call_the_udfs_through_the_thrift_server(tmp_path, worker_python):
    port = free_port()
    env = base_env(
        CDC_WAREHOUSE_DIR=str(tmp_path / "warehouse"),
        CDC_DRIVER_MEMORY="1g",
        PYSPARK_PYTHON=str(worker_python),
    )
    log = tmp_path / "thrift.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            [sys.executable, "-m", "cdc_warehouse.thrift_server", str(port)],
            env=env,
            cwd=tmp_path,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        url = f"jdbc:hive2://127.0.0.1:{port}/default"
        deadline = time.monotonic() + 240
        while f"cdcw thrift server: {url}" not in log.read_text(errors="replace"):
            assert server.poll() is None, log.read_text(errors="replace")[-4000:]
            assert time.monotonic() < deadline, "the Thrift server did not start"
            time.sleep(1)
        # Two connections, two sessions on the client side; one SparkSession on the server.
        for line, reason in (
            ("{", "malformed line JSON"),
            ("[]", "malformed line JSON: not an object"),
        ):
            answer = beeline(url, f"select datastream_flatten('{line}', 'shop').error as e")
            assert answer.returncode == 0, answer.stdout + answer.stderr
            assert reason in answer.stdout, answer.stdout
        # With the embedded metastore, a scheduled run waits for its turn.
        busy = cdcw(["land"], env, tmp_path, "land-while-serving")
        assert busy.returncode == 3, busy.explain()
        assert f"pid {server.pid}" in busy.stderr
        server.send_signal(signal.SIGTERM)  # the driver stops Spark and exits
        assert server.wait(timeout=120) == 0
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
