"""The sample pipeline on a real Spark cluster: `local-cluster[1,2,1024]` starts a standalone
master and a worker in the driver and an executor JVM with two cores beside it; its Python
workers cannot import this project (they get the shipped `python_udfs`). The marts must be
exactly the embedded run's. Meanwhile a second `cdcw` on the same (Derby) warehouse must stop
at once."""

from __future__ import annotations

import time

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import BUILD_WITHOUT_TESTS

from .harness import (
    PYSPARK_HOME,
    SAMPLE_LANDING,
    CdcwProcess,
    base_env,
    cdcw,
    differences,
    local_cluster_work_dirs_removed,
    mart_rows,
)

pytestmark = pytest.mark.cluster


def wait_for_lock_holder(lock_file, pid: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if lock_file.exists() and lock_file.read_text().strip() == str(pid):
            return
        time.sleep(0.2)
    raise AssertionError(f"cdcw (pid {pid}) never took the lock {lock_file}")


def test_sample_pipeline_on_local_cluster_equals_the_embedded_run(
    tmp_path, embedded_reference, worker_python
):
    pipeline, expected = embedded_reference
    state = tmp_path / "state"
    warehouse = tmp_path / "warehouse"
    env = base_env(
        CDC_TARGET="cluster",
        CDC_SPARK_MASTER="local-cluster[1,2,1024]",
        CDC_WAREHOUSE_DIR=warehouse.as_uri(),  # a URI, as on shared storage
        CDC_STATE_DIR=str(state),
        CDC_LANDING_ROOT=str(SAMPLE_LANDING),
        CDC_TABLES=str(PROJECT_DIR / "cdc_tables.yml"),
        CDC_DRIVER_MEMORY="1g",
        PYSPARK_PYTHON=str(worker_python),
    )
    with local_cluster_work_dirs_removed():
        work = PYSPARK_HOME / "work"
        apps_before = set(work.iterdir()) if work.is_dir() else set()
        first = CdcwProcess(["run", *BUILD_WITHOUT_TESTS], env, tmp_path, "cluster-run")
        try:
            wait_for_lock_holder(state / ".cdcw.lock", first.process.pid)
            second = cdcw(["run"], env, tmp_path, "second-run")
            finished = first.wait()
        finally:
            first.kill()
        apps = sorted(set(work.iterdir()) - apps_before)
        executor_logs = {
            executor.name: (executor / "stderr").read_text(errors="replace")
            for app in apps
            for executor in app.iterdir()
        }

    # Derby admits one process: the second run stopped at once, with one clear sentence.
    assert second.returncode == 3, second.explain()
    assert second.seconds < 30, second.explain()
    assert f"pid {first.process.pid}" in second.stderr
    assert "the embedded metastore allows one at a time" in second.stderr
    assert "Traceback" not in second.stderr and "Exception" not in second.stderr

    assert finished.returncode == 0, finished.explain()
    # The executor JVM did the work, with the UDF package it fetched.
    assert len(apps) == 1, apps
    assert set(executor_logs) == {"0"}, sorted(executor_logs)
    assert "python_udfs-" in executor_logs["0"]
    assert "Finished task" in executor_logs["0"]
    # The warehouse URI holds the tables; the state directory the metastore and dbt.
    assert (warehouse / "cdc_current").is_dir() and not (warehouse / "metastore_db").exists()
    assert (state / "metastore_db").is_dir()

    actual = mart_rows(pipeline.spark(), warehouse, "default", SAMPLE_LANDING)
    assert differences(actual, expected) == ""
