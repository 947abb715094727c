"""Scale-out tests: each runs `cdcw` in its own processes (a JVM's master, driver classpath and
metastore are fixed when it starts, and this test process already has one), against the marts
of one embedded run of the bundled sample data."""

from __future__ import annotations

import subprocess

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from tests.conftest import Pipeline

from .harness import SAMPLE_LANDING, make_worker_python, mart_rows


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "cluster: runs cdcw in separate processes on a Spark cluster, a Spark Connect server or "
        "a shared PostgreSQL metastore (each a few minutes)",
    )


@pytest.fixture(scope="session")
def worker_python(tmp_path_factory):
    """Spark's workers get a Python that cannot import this project, as on a cluster whose
    machines only have its dependencies installed: every UDF model must still run."""
    python = make_worker_python(tmp_path_factory.mktemp("worker-venv") / "venv")
    probe = (
        "import importlib.util as u, pandas, pyarrow, pyspark\n"
        "print(u.find_spec('python_udfs'), u.find_spec('cdc_warehouse'))\n"
    )
    seen = subprocess.run(
        [str(python), "-c", probe], cwd="/", capture_output=True, text=True, check=True
    )
    assert seen.stdout.split() == ["None", "None"], seen.stdout
    return python


@pytest.fixture(scope="session")
def embedded_reference(tmp_path_factory, java_available):
    """The bundled sample pipeline (`make run`'s data) built by the embedded default: local
    Spark, Derby metastore, `cdcw run` in this process. Returns (pipeline, marts)."""
    pipeline = Pipeline(
        tmp_path_factory.mktemp("embedded"), (PROJECT_DIR / "cdc_tables.yml").read_text()
    )
    pipeline.landing_root = SAMPLE_LANDING
    assert pipeline.cdcw("run") == 0, "the embedded run of the sample data failed"
    marts = mart_rows(pipeline.spark(), pipeline.warehouse_dir, "default", SAMPLE_LANDING)
    assert all(marts.values()), "the sample data must fill every mart"
    return pipeline, marts
