"""`cdcw maintain` vacuums a table only when VACUUM has something to delete: a file outside the
table's current version, older than the retention window (a removed file, or one a killed write
left behind). The guarantees module runs it on a whole warehouse; this one on one small table
whose files' ages the test sets."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from cdc_warehouse.maintenance import vacuum_is_due
from tests.conftest import Pipeline

TABLE = "cdc_raw.upkeep_probe"
DAY_SECONDS = 24 * 3600


def data_files(table_dir: Path) -> set[Path]:
    return {
        path
        for path in table_dir.rglob("*.parquet")
        if not any(part.startswith(("_", ".")) for part in path.relative_to(table_dir).parts)
    }


def age(path: Path, days: int) -> None:
    then = time.time() - days * DAY_SECONDS
    os.utime(path, (then, then))


@pytest.fixture
def probe(java_available, tmp_path):
    """A Delta table written three times and then replaced: its first files are removed but
    still on disk, and younger than any retention window."""
    pipeline = Pipeline(tmp_path)
    spark = pipeline.spark()
    spark.sql("create database if not exists cdc_raw")
    spark.sql(f"create table {TABLE} (id int) using delta")
    for value in (1, 2, 3):
        spark.sql(f"insert into {TABLE} values ({value})")
    table_dir = Path(spark.sql(f"describe detail {TABLE}").first().location.removeprefix("file:"))
    removed = data_files(table_dir)
    spark.sql(f"insert overwrite {TABLE} values (4)")
    return pipeline, table_dir, removed


def test_vacuum_is_due_only_for_files_outside_the_version_older_than_the_window(probe):
    pipeline, table_dir, removed = probe
    spark = pipeline.spark()
    assert len(removed) == 3
    assert not vacuum_is_due(spark, TABLE, 168), "nothing is a week old"
    assert vacuum_is_due(spark, TABLE, 0), "the replaced files are older than no window"
    # The current version's file, however old, is never VACUUM's to delete.
    [live] = data_files(table_dir) - removed
    age(live, 30)
    assert not vacuum_is_due(spark, TABLE, 168)
    # A removed file older than the window is.
    age(sorted(removed)[0], 8)
    assert vacuum_is_due(spark, TABLE, 168)


def test_maintain_vacuums_what_a_killed_write_left_and_skips_a_table_with_nothing_old(
    probe, capsys
):
    pipeline, table_dir, removed = probe
    stray = table_dir / "part-00000-left-by-a-killed-write.snappy.parquet"
    stray.write_bytes(next(iter(removed)).read_bytes())
    age(stray, 8)

    assert pipeline.cdcw("maintain") == 0
    said = capsys.readouterr().err
    assert f"{TABLE}: 0 small files compacted, files older than 168 h vacuumed" in said, said
    assert not stray.exists()
    assert removed <= data_files(table_dir), "younger than the window, the removed files stay"
    assert pipeline.spark().table(TABLE).collect()[0].id == 4

    assert pipeline.cdcw("maintain") == 0
    said = capsys.readouterr().err
    assert f"{TABLE}: 0 small files compacted, no file older than 168 h to vacuum" in said, said
