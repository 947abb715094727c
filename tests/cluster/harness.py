"""Running `cdcw` as its own process (its own JVM, driver classpath, master and metastore), a
Python for Spark's workers that lacks this project, a Spark Connect server, and reading marts
back from their Delta tables."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark

from cdc_warehouse import table_format
from cdc_warehouse.settings import PROJECT_DIR

SAMPLE_LANDING = PROJECT_DIR / "sample_data" / "landing"
MARTS = ("cdc_current", "cdc_history", "cdc_quarantine")
PYSPARK_HOME = Path(pyspark.__file__).resolve().parent
# Variables of ours, or that would steer Spark, which the parent test process may carry.
INHERITED_OUT = ("CDC_", "SPARK_", "PYSPARK_", "PYTHONPATH", "JAVA_TOOL_OPTIONS")


def base_env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(INHERITED_OUT)}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"  # loopback only
    env["CDC_CLASS_ARCHIVE"] = "off"  # not the user's cache (tests/conftest.py)
    env.update(values)
    return env


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    def explain(self) -> str:
        return f"exit {self.returncode} after {self.seconds:.0f}s\n--- stderr ---\n" + (
            self.stderr[-6000:] + "\n--- stdout ---\n" + self.stdout[-4000:]
        )


class CdcwProcess:
    """`python -m cdc_warehouse.cli ARGS` in its own process, output kept in files."""

    def __init__(self, args: list[str], env: dict[str, str], log_dir: Path, name: str) -> None:
        log_dir.mkdir(parents=True, exist_ok=True)
        self.stdout_path = log_dir / f"{name}.out"
        self.stderr_path = log_dir / f"{name}.err"
        self.started = time.monotonic()
        with self.stdout_path.open("w") as out, self.stderr_path.open("w") as err:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "cdc_warehouse.cli", *args],
                env=env,
                cwd=log_dir,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )

    def wait(self, timeout: float = 900) -> Finished:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise
        return Finished(
            self.process.returncode,
            self.stdout_path.read_text(errors="replace"),
            self.stderr_path.read_text(errors="replace"),
            time.monotonic() - self.started,
        )

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)


def cdcw(args: list[str], env: dict[str, str], log_dir: Path, name: str) -> Finished:
    process = CdcwProcess(args, env, log_dir, name)
    try:
        return process.wait()
    finally:
        process.kill()


def make_worker_python(directory: Path) -> Path:
    """A Python for Spark's workers with the project's dependencies (pandas, pyarrow, ...)
    but not the project: a venv whose only site directory entry is this venv's site-packages,
    added by a .pth line, so the editable install's own .pth (the project) is not processed."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, timeout=120
    )
    python = directory / "bin" / "python"
    where = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    found = subprocess.run([str(python), "-c", where], check=True, capture_output=True, text=True)
    purelib = Path(found.stdout.strip())
    (purelib / "project-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def connect_server(directory: Path, worker_python: Path) -> Iterator[str]:
    """Spark's Connect server (its class, through pyspark's own spark-submit: the pyspark 4.2
    wheel has no sbin/start-connect-server.sh) in the foreground on loopback, with a Hive
    catalog (Derby metastore and warehouse under `directory`); always stopped again.
    Its Python workers run `worker_python`. Yields the sc:// URL."""
    port = free_port()
    directory.mkdir(parents=True, exist_ok=True)
    log = directory / "connect-server.log"
    env = base_env(
        SPARK_LOG_DIR=str(directory / "logs"),
        SPARK_PID_DIR=str(directory / "pids"),
        SPARK_IDENT_STRING=f"cdcw-test-{port}",
        PYSPARK_PYTHON=str(worker_python),
    )
    command = [
        str(PYSPARK_HOME / "bin" / "spark-submit"),
        "--class",
        "org.apache.spark.sql.connect.service.SparkConnectServer",
        "--name",
        "Spark Connect server",
        "--master",
        "local[2]",
        "--driver-memory",
        "2g",
        "--conf",
        "spark.connect.grpc.binding.address=127.0.0.1",
        "--conf",
        f"spark.connect.grpc.binding.port={port}",
        "--conf",
        "spark.sql.catalogImplementation=hive",
        "--conf",
        f"spark.sql.warehouse.dir={directory / 'warehouse'}",
        "--conf",
        "spark.hadoop.javax.jdo.option.ConnectionURL="
        f"jdbc:derby:;databaseName={directory / 'metastore_db'};create=true",
        "--conf",
        f"spark.driver.extraJavaOptions=-Dderby.system.home={directory}",
        "--conf",
        "spark.ui.enabled=false",
        *table_format.submit_options(),
        "spark-internal",
    ]
    with log.open("w") as output:
        server = subprocess.Popen(
            command,
            env=env,
            cwd=directory,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 240
        while "Spark Connect server started at" not in log.read_text(errors="replace"):
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(
                    f"Spark Connect server did not start (exit {server.poll()}):\n"
                    + log.read_text(errors="replace")[-4000:]
                )
            time.sleep(1)
        yield f"sc://127.0.0.1:{port}"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=30)


@contextmanager
def local_cluster_work_dirs_removed() -> Iterator[None]:
    """local-cluster executors work in $SPARK_HOME/work (pyspark's own directory: no setting
    moves it); remove the application directories a test made there."""
    work = PYSPARK_HOME / "work"
    before = set(work.iterdir()) if work.is_dir() else set()
    try:
        yield
    finally:
        if work.is_dir():
            for made in set(work.iterdir()) - before:
                shutil.rmtree(made, ignore_errors=True)


def table_dir(warehouse: Path, schema: str, table: str) -> Path:
    return warehouse / table if schema == "default" else warehouse / f"{schema}.db" / table


def mart_rows(
    spark, warehouse: Path, schema: str, landing_root: Path
) -> dict[str, list[tuple[tuple[str, Any], ...]]]:
    """Every row of the three marts, read from their Delta tables by path (no metastore needed):
    timestamps as UTC text, file paths relative to the landing root (in a quarantine reason that
    cites another line's file too), and the landing wall time (`landed_at`, different in every
    run) left out."""
    marts = {}
    for mart in MARTS:
        frame = spark.read.format("delta").load(str(table_dir(warehouse, schema, mart)))
        columns = [
            f"date_format({field.name}, 'yyyy-MM-dd HH:mm:ss.SSSSSS') as {field.name}"
            if field.dataType.typeName() == "timestamp"
            else field.name
            for field in frame.schema.fields
            if field.name != "landed_at"
        ]
        rows = []
        for row in frame.selectExpr(*columns).collect():
            values = row.asDict(recursive=True)
            if values.get("file_path"):
                values["file_path"] = str(Path(values["file_path"]).relative_to(landing_root))
            if values.get("reason"):
                values["reason"] = values["reason"].replace(f"{landing_root}/", "")
            values = {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}
            rows.append(tuple(sorted(values.items())))
        marts[mart] = sorted(rows, key=repr)
    return marts


def only_systems(marts: dict[str, list], systems: set[str]) -> dict[str, list]:
    return {
        mart: [row for row in rows if dict(row)["source_system"] in systems]
        for mart, rows in marts.items()
    }


def differences(actual: dict[str, list], expected: dict[str, list]) -> str:
    """'' when equal, else a short account of what differs."""
    lines = []
    for mart in MARTS:
        missing = [row for row in expected[mart] if row not in actual[mart]]
        unexpected = [row for row in actual[mart] if row not in expected[mart]]
        if missing or unexpected or len(actual[mart]) != len(expected[mart]):
            lines.append(
                f"{mart}: {len(actual[mart])} rows, expected {len(expected[mart])}; "
                f"missing {missing[:3]}; unexpected {unexpected[:3]}"
            )
    return "\n".join(lines)
