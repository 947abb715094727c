"""`cdcw run` tests the rows its build rewrote, `cdcw dbt test` tests everything: a corrupt
history or current row of a key the run did not change, a typed row that does not fit its type,
a Spanner change applied before its parent partition finished and a key registered twice, all
from an earlier run, pass the first and fail the second. Typed column discovery follows the
same scope. A version with no valid_from and an unknown op never lands: Delta refuses it by the
mart's row rules, named with the row's values."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import functions as F

from cdc_warehouse import build_record
from cdc_warehouse.bench import table_reads
from tests.conftest import Pipeline

DBT_VARS = ("--vars", "{cdc_keys_per_partition: 2}")
# A partition of a row's own table that no key of the scenario reaches: runs never rewrite it,
# and the table's typed views read it (docs/decisions/017).
UNTOUCHED_COHORT = f"key_cohort - key_cohort % {table_reads.COHORTS_PER_TABLE} + 7"
# Set by cached_view (macros/utils/cached_view.sql) while it caches; Spark's default is false.
CACHED_PLAN_PARTITIONING = "spark.sql.optimizer.canChangeCachedPlanOutputPartitioning"


def mysql_event(position: int, payload: dict[str, Any], table: str = "items") -> str:
    return json.dumps(
        {
            "stream_name": "projects/p/locations/l/streams/mysql-shop",
            "read_method": "mysql-cdc-binlog",
            "object": f"shop_{table}",
            "uuid": f"u-{table}-{payload['id']}-{position}",
            "read_timestamp": "2024-05-01T10:00:00Z",
            "source_timestamp": f"2024-05-01T10:00:{position:02d}Z",
            "sort_keys": [1714557600000 + position * 1000, "mysql-bin.000001", position],
            "source_metadata": {
                "table": table,
                "database": "shop",
                "primary_keys": ["id"],
                "log_file": "mysql-bin.000001",
                "log_position": position,
                "change_type": "INSERT" if position < 10 else "UPDATE-INSERT",
                "is_deleted": False,
            },
            "payload": payload,
        }
    )


def item_event(item_id: int, name: str, position: int) -> str:
    return mysql_event(position, {"id": item_id, "name": name})


def land_wave(pipeline: Pipeline, name: str, lines: list[str]) -> None:
    target = pipeline.landing_root / "datastream" / "mysql_shop" / f"{name}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")


def insert_row(spark, table: str, **values: Any) -> None:
    """One row into a table, the columns not given NULL."""
    schema = spark.table(table).schema
    row = {field.name: values.pop(field.name, None) for field in schema.fields}
    assert not values, f"{table} has no columns {sorted(values)}"
    spark.createDataFrame([row], schema).write.insertInto(table)


def copy_of_product_101(spark, table: str, key_json: str, **changed: Any) -> None:
    """Product 101's row of `table` again under `key_json`, with the `changed` columns (Spark
    column expressions), in a partition of its table that no run rewrites."""
    copy = spark.table(table).where("source_table = 'shop.products' and key_json = '{\"id\":101}'")
    for column, value in {**changed, "key_json": F.lit(key_json)}.items():
        copy = copy.withColumn(column, value)
    copy = copy.withColumn("key_cohort", F.expr(UNTOUCHED_COHORT))
    assert copy.count() == 1
    copy.write.insertInto(table)


def copy_with_misfit_stock(spark, table: str) -> None:
    """Product 101's row again as product 102, its stock not an int and with a column no event
    brought."""
    misfit_row = F.regexp_replace("row_json", '"stock":5', '"legacy_code":"X1","stock":"many"')
    copy_of_product_101(spark, table, '{"id":102}', row_json=misfit_row)


def released_before_its_parent_finished(spark) -> None:
    """A Spanner change of landing run 1 in a child partition whose parent never finished, of a
    transaction with one of its two records landed."""
    stream = dict(source_name="spanner_fake", landing_run=1)
    insert_row(
        spark,
        "cdc_internal.int_spanner__partition_reports",
        partition_token="parent",
        has_finished=False,
        **stream,
    )
    insert_row(
        spark,
        "cdc_internal.int_spanner__partition_reports",
        partition_token="child",
        parent_tokens=["parent"],
        has_finished=False,
        **stream,
    )
    insert_row(
        spark,
        "cdc_internal.int_spanner__records",
        record_kind="data_change",
        partition_token="child",
        record_sequence="00000000",
        server_transaction_id="txn-1",
        records_in_transaction=2,
        event_id="event-1",
        **stream,
    )
    insert_row(
        spark,
        "cdc_internal.int_spanner__changes",
        source_table="Singers",
        key_json='{"SingerId":"1"}',
        op="INSERT",
        txn_id="txn-1",
        event_id="event-1",
        **stream,
    )


REGISTRY_UNIQUE = "one_registry_row_per_key"


def registered_again(spark, key_json: str, first_landing_run: int) -> None:
    """The key registry's row of a key, again, as if a run had first seen it."""
    registry = "cdc_internal.int_cdc__key_registry"
    again = (
        spark.table(registry)
        .where(F.col("key_json") == key_json)
        .withColumn("first_landing_run", F.lit(first_landing_run).cast("bigint"))
    )
    assert again.count() == 1
    again.write.insertInto(registry)


def registry_test_scoped_from(
    pipeline: Pipeline, landing_run: int, broadcast_max_rows: int = 500000
) -> int:
    """The key registry's test as a build that processes landing runs from `landing_run` on."""
    scoped_vars = (
        f"{{cdc_keys_per_partition: 2, cdc_test_from_landing_run: {landing_run}, "
        f"cdc_broadcast_max_rows: {broadcast_max_rows}}}"
    )
    return pipeline.cdcw("dbt", "test", "--select", "int_cdc__key_registry", "--vars", scoped_vars)


def failing_rows(pipeline: Pipeline) -> dict[str, int]:
    """The failed tests of the last dbt command, by name, with the rows each returned."""
    results = json.loads(Path(pipeline.warehouse_dir, "_dbt/target/run_results.json").read_text())
    return {
        result["unique_id"].split(".")[2]: result["failures"]
        for result in results["results"]
        if result["status"] == "fail"
    }


def failed_tests(pipeline: Pipeline) -> set[str]:
    return set(failing_rows(pipeline))


def version_breaking_row_rules(spark) -> None:
    """Product 101's version again as product 103 with no valid_from and an op no source
    makes."""
    copy_of_product_101(
        spark,
        "cdc_history",
        '{"id":103}',
        op=F.lit("upsert"),
        valid_from=F.lit(None).cast("timestamp"),
    )


def merged_partitions(pipeline: Pipeline, mart: str) -> set[int]:
    """The key cohorts the last MERGE into `mart` named
    (macros/utils/merge_only_into_partitions.sql)."""
    run_sql = pipeline.warehouse_dir / "_dbt/target/run/cdc_warehouse/models/marts" / f"{mart}.sql"
    named = re.search(r"and target\.key_cohort in \(([0-9, ]+)\)", run_sql.read_text())
    assert named, f"the MERGE into {mart} names no partitions"
    return {int(value) for value in named.group(1).split(",")}


def test_run_checks_what_it_rewrote_and_dbt_test_checks_everything(
    java_available, tmp_path, monkeypatch
):
    monkeypatch.delenv("CDC_TEST_SCOPE", raising=False)
    pipeline = Pipeline(tmp_path)
    land_wave(
        pipeline,
        "wave-1",
        [item_event(i, f"item {i}", i) for i in range(1, 5)]
        + [mysql_event(5, {"id": 101, "stock": 5}, table="products")],
    )
    assert pipeline.cdcw("run", *DBT_VARS) == 0

    # Key 1's only version, twice: no longer one version per source event, nor contiguous.
    pipeline.spark().sql(
        "insert into cdc_history select * from cdc_history where key_json = '{\"id\":1}'"
    )
    assert len(pipeline.rows("cdc_history")) == 6
    # A current row of a key that has no history, in a partition no run rewrites: cdc_as_of
    # (from history) disagrees with cdc_current.
    pipeline.spark().sql(
        "insert into cdc_current select source_system, source_name, source_table, "
        "'{\"id\":99}', row_json, unavailable_columns, last_op, last_committed_at, sort_key, "
        f"last_landing_run, {UNTOUCHED_COHORT} from cdc_current where key_json = '{{\"id\":3}}'"
    )
    registered_again(pipeline.spark(), '{"id":3}', first_landing_run=1)
    copy_with_misfit_stock(pipeline.spark(), "cdc_history")
    copy_with_misfit_stock(pipeline.spark(), "cdc_current")
    released_before_its_parent_finished(pipeline.spark())

    # Wave 2 changes key 2, which shares key 1's partition, and key 4.
    land_wave(pipeline, "wave-2", [item_event(2, "renamed", 20), item_event(4, "renamed", 21)])
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    assert build_record.read(pipeline.warehouse_dir / "_dbt").landing_run == 2
    # The test scope travels as a session setting, not a dbt var: the second run's dbt reused
    # the project the first one parsed.
    assert "Nothing changed, skipping partial parsing" in pipeline.last_dbt_log()
    history = pipeline.rows("cdc_history")
    # Both MERGEs read only the partitions of the keys the run changed.
    changed_cohorts = {
        row["key_cohort"] for row in history if row["key_json"] in ('{"id":2}', '{"id":4}')
    }
    untouched = {
        row["key_cohort"] for row in pipeline.rows("cdc_current") if row["key_json"] == '{"id":99}'
    }
    assert len(untouched) == 1 and not untouched & changed_cohorts
    assert merged_partitions(pipeline, "cdc_history") == changed_cohorts
    assert merged_partitions(pipeline, "cdc_current") == changed_cohorts
    # The run's cached views changed Spark's setting for their cache statements only.
    assert pipeline.spark().conf.get(CACHED_PLAN_PARTITIONING) == "false"
    assert sorted(row["key_json"] for row in history if row["is_current"]) == [
        '{"id":101}',
        '{"id":102}',
        '{"id":1}',
        '{"id":1}',
        '{"id":2}',
        '{"id":3}',
        '{"id":4}',
    ]
    assert {row["row_json"] for row in history if row["key_json"] == '{"id":2}'} == {
        '{"id":2,"name":"item 2"}',
        '{"id":2,"name":"renamed"}',
    }
    # The run looked for new typed columns only in the rows it wrote.
    assert "legacy_code" not in pipeline.spark().table("shop_products_current").columns

    # A version with no valid_from and an op no source makes never lands: Delta refuses the write
    # by the mart's row rules (a CHECK constraint), naming them and the row's values.
    with pytest.raises(Exception, match="history_rows_hold_their_values") as refused:
        version_breaking_row_rules(pipeline.spark())
    assert "valid_from : null" in str(refused.value)
    assert "op : upsert" in str(refused.value)
    assert pipeline.cdcw("dbt", "test", *DBT_VARS) == 1
    # Any `cdcw dbt` command may change the marts: the next run must not trust the last build.
    assert build_record.read(pipeline.warehouse_dir / "_dbt") is None
    assert {
        "typed_values_fit_shop_products_current_",
        "typed_values_fit_shop_products_history_",
        "spanner_changes_wait_for_the_watermark",
        "spanner_children_after_their_parents",
        REGISTRY_UNIQUE,
    } <= failed_tests(pipeline)
    assert pipeline.cdcw("dbt", "run", "--select", "shop_products_current", *DBT_VARS) == 0
    assert "legacy_code" in pipeline.spark().table("shop_products_current").columns
    monkeypatch.setenv("CDC_TEST_SCOPE", "all")
    assert pipeline.cdcw("run", *DBT_VARS) == 1
    # A failed build records nothing: the same run again, with nothing new landed, builds (and
    # fails) instead of skipping as if the marts were current.
    registry_check = ("run", "--select", REGISTRY_UNIQUE, *DBT_VARS)
    assert pipeline.cdcw(*registry_check) == 1
    invocations = pipeline.dbt_invocations()
    assert pipeline.cdcw(*registry_check) == 1
    assert pipeline.dbt_invocations() == invocations + 1

    # A key registered again by a later build repeats a row of an earlier one: the scoped test
    # of that build compares its new rows with every row; a build after it checks nothing old.
    registered_again(pipeline.spark(), '{"id":4}', first_landing_run=5)
    assert registry_test_scoped_from(pipeline, 5) == 1
    assert failing_rows(pipeline) == {REGISTRY_UNIQUE: 1}
    assert registry_test_scoped_from(pipeline, 6) == 0
    # More appended rows than the broadcast limit admits: every row is checked, so key 3's old
    # duplicate fails beside key 4's.
    assert registry_test_scoped_from(pipeline, 5, broadcast_max_rows=0) == 1
    assert failing_rows(pipeline) == {REGISTRY_UNIQUE: 2}
