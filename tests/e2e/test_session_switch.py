"""One JVM, one warehouse at a time: a session moved to another warehouse (the suite's pipelines,
`cdcw` commands run in one process) leaves nothing of the old warehouse's Delta tables in the
JVM's cache of table logs, which would otherwise keep each table's last snapshot and the plans
that read it for an hour after its last use."""

from __future__ import annotations

from tests.conftest import Pipeline


def delta_logs_cached(spark) -> int:
    """How many tables' logs Delta's JVM-wide cache holds."""
    delta_log = getattr(spark.sparkContext._jvm.org.apache.spark.sql.delta, "DeltaLog$")
    return delta_log.__getattr__("MODULE$").cacheSize()


def test_a_session_moved_to_another_warehouse_forgets_the_old_ones_tables(java_available, tmp_path):
    first = Pipeline(tmp_path / "first").spark()
    first.sql("create table first_table (a int) using delta")
    first.sql("insert into first_table values (1)")
    assert first.table("first_table").count() == 1
    assert delta_logs_cached(first) >= 1

    second = Pipeline(tmp_path / "second").spark()
    assert delta_logs_cached(second) == 0
    second.sql("create table second_table (a int) using delta")
    assert second.table("second_table").count() == 0
    assert delta_logs_cached(second) >= 1
