"""`cdcw run` tests the rows its build rewrote, `cdcw dbt test` tests everything: a corrupt
history or current row of a key the run did not change passes the first and fails the second."""

from __future__ import annotations

import json

from tests.conftest import Pipeline

DBT_VARS = ("--vars", "{cdc_keys_per_partition: 2}")


def mysql_event(item_id: int, name: str, position: int) -> str:
    return json.dumps(
        {
            "stream_name": "projects/p/locations/l/streams/mysql-shop",
            "read_method": "mysql-cdc-binlog",
            "object": "shop_items",
            "uuid": f"u-{item_id}-{position}",
            "read_timestamp": "2024-05-01T10:00:00Z",
            "source_timestamp": f"2024-05-01T10:00:{position:02d}Z",
            "sort_keys": [1714557600000 + position * 1000, "mysql-bin.000001", position],
            "source_metadata": {
                "table": "items",
                "database": "shop",
                "primary_keys": ["id"],
                "log_file": "mysql-bin.000001",
                "log_position": position,
                "change_type": "INSERT" if position < 10 else "UPDATE-INSERT",
                "is_deleted": False,
            },
            "payload": {"id": item_id, "name": name},
        }
    )


def land_wave(pipeline: Pipeline, name: str, lines: list[str]) -> None:
    target = pipeline.landing_root / "datastream" / "mysql_shop" / f"{name}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("\n".join(lines) + "\n")


def test_run_checks_what_it_rewrote_and_dbt_test_checks_everything(
    java_available, tmp_path, monkeypatch
):
    monkeypatch.delenv("CDC_TEST_SCOPE", raising=False)
    pipeline = Pipeline(tmp_path)
    land_wave(pipeline, "wave-1", [mysql_event(i, f"item {i}", i) for i in range(1, 5)])
    assert pipeline.cdcw("run", *DBT_VARS) == 0

    # Key 1's only version, twice: no longer one version per source event, nor contiguous.
    spark = pipeline.spark()
    spark.sql("insert into cdc_history select * from cdc_history where key_json = '{\"id\":1}'")
    assert len(pipeline.rows("cdc_history")) == 5
    # A current row of a key that has no history, in a partition no run rewrites: cdc_as_of
    # (from history) disagrees with cdc_current.
    pipeline.spark().sql(
        "insert into cdc_current select source_system, source_name, source_table, "
        "'{\"id\":99}', row_json, unavailable_columns, last_op, last_committed_at, sort_key, "
        "last_landing_run, 7 from cdc_current where key_json = '{\"id\":3}'"
    )

    # Wave 2 changes key 2, which shares key 1's partition, and key 4.
    land_wave(pipeline, "wave-2", [mysql_event(2, "renamed", 20), mysql_event(4, "renamed", 21)])
    assert pipeline.cdcw("run", *DBT_VARS) == 0
    history = pipeline.rows("cdc_history")
    assert sorted(row["key_json"] for row in history if row["is_current"]) == [
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

    assert pipeline.cdcw("dbt", "test", *DBT_VARS) == 1
    monkeypatch.setenv("CDC_TEST_SCOPE", "all")
    assert pipeline.cdcw("run", *DBT_VARS) == 1
