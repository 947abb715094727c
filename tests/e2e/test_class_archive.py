"""The driver JVM's class archive with real JVMs: the first `cdcw` process writes it when its
JVM exits, the next one maps it. Each session runs in a process of its own, as `cdcw` does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SESSION = """
import os
from pyspark import SparkContext
from cdc_warehouse.settings import load_settings
from cdc_warehouse.spark import build_session

spark = build_session(load_settings())
assert spark.sql("select 41 + 1").first()[0] == 42
maps = open(f"/proc/{SparkContext._gateway.proc.pid}/maps").read()
print("mapped" if os.environ["CDC_CLASS_ARCHIVE"] in maps else "not mapped", flush=True)
"""


def start_session(tmp_path: Path, archives: Path) -> str:
    env = {
        **os.environ,
        "CDC_CLASS_ARCHIVE": str(archives),
        "CDC_WAREHOUSE_DIR": str(tmp_path / "warehouse"),
    }
    done = subprocess.run(
        [sys.executable, "-c", SESSION], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip()


def test_the_first_jvm_writes_the_archive_and_the_next_maps_it(tmp_path, java_available):
    archives = tmp_path / "archives"
    assert start_session(tmp_path, archives) == "not mapped"
    written = list(archives.iterdir())
    assert len(written) == 1, written
    archive = written[0]
    assert archive.name.startswith("spark-driver-") and archive.suffix == ".jsa"
    # Spark SQL's classes, not a stub: the JVM archives what it loaded.
    assert archive.stat().st_size > 50_000_000
    made = archive.stat().st_mtime_ns

    assert start_session(tmp_path, archives) == "mapped"
    assert list(archives.iterdir()) == [archive]
    assert archive.stat().st_mtime_ns == made
