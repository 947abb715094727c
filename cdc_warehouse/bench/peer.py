"""The plain-MERGE peer (#56 item 6): what a Spark engineer writes in an afternoon to turn
Debezium's `kcat -J` lines into a current-state table and an SCD2 history, run by `cdcw bench
--phases ...,peer` on the Debezium files of the benchmark's workload, so that the project's own
Debezium-only build can be judged beside it, in the same run, on the same files.

Plain PySpark and Delta Lake: no dbt, none of the project's UDFs or models. One batch of files:

1. read the lines (`spark.read.text`), parse them with Spark's own `from_json` and
   `get_json_object`: `key` and `payload` are JSON text, with or without the `{"schema",
   "payload"}` envelope;
2. drop tombstones and records without a change op (truncates, transaction markers), drop
   duplicates by (topic, partition, offset), and keep per change: op, `source.lsn`,
   `source.ts_ms`, the key's JSON text and the after image's (the before image's for a delete);
3. order each key's changes by lsn, at an equal lsn the delete before the create;
4. MERGE the latest change per key into `peer_current`: upsert it, delete the key on a delete,
   leave a row with a higher lsn alone;
5. MERGE into `peer_history` in one statement: the open version of each key with new changes
   is closed (valid_to = the first new change's source time, is_current = false), and every
   new change but a delete is appended as a version (valid_to = the next change's time).

What it deliberately does not do, and the project does (docs/sources/debezium.md,
docs/guarantees.md), so its times are a floor for a real pipeline, not an equal's:
- TOAST: unchanged TOASTed columns keep Debezium's placeholder; nothing fills them from the
  key's earlier values, across a primary key change neither (no key-change chains: the old key
  is deleted and the new one created, unrelated);
- no unknown vs NULL: a placeholder is a value like any other;
- late events: a change older than a key's open version is appended after it in history, and
  history is not reordered (peer_current only refuses to go back to a lower lsn);
- truncates (op `t`) are skipped: the truncated table's rows stay in peer_current;
- a change re-sent at a new offset is a second change (a version of no duration in history);
  the changes of one transaction are one version each, not one per transaction;
- no quarantine: a line `from_json` cannot read, or a record without a key or an lsn, is
  dropped without a word;
- no tests, no run log, no exactly-once landing of files, no layout for other readers.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CURRENT_TABLE = "peer_current"
HISTORY_TABLE = "peer_history"

# A `kcat -J` line, its key and payload as JSON text.
RECORD_SCHEMA = "topic string, partition int, offset bigint, key string, payload string"
# A change event's fields the peer reads; with the envelope they sit under `payload`.
EVENT_FIELDS = "op string, before string, after string, source struct<lsn: bigint, ts_ms: bigint>"
VALUE_SCHEMA = f"payload struct<{EVENT_FIELDS}>, {EVENT_FIELDS}"
CHANGE_OPS = ("c", "u", "d", "r")

CURRENT_COLUMNS = (
    "topic string, key_json string, op string, lsn bigint, ts_ms bigint, row_json string"
)
HISTORY_COLUMNS = (
    "topic string, key_json string, op string, lsn bigint, row_json string, "
    "valid_from timestamp, valid_to timestamp, is_current boolean"
)
# What the phase reports of each MERGE (Delta's operationMetrics of its commit).
MERGE_METRICS = (
    "numSourceRows",
    "numTargetRowsInserted",
    "numTargetRowsUpdated",
    "numTargetRowsDeleted",
    "numTargetFilesAdded",
    "numTargetFilesRemoved",
)


def expected_current_rows(facts: dict[str, Any], delivery: str) -> int:
    """peer_current's rows once the peer has read the base waves (`delivery` "base") or a
    top-up on top of them (its mode): the generator's live Debezium keys, plus the side table's
    rows that a truncate emptied, which the peer keeps since it skips truncates. `facts`: the
    manifest's facts of the Debezium family."""
    side = facts["side_table"]
    inserted = side["events"] - side["truncates"]
    return int(facts["live_keys"][delivery]) - int(side["live_keys"]) + int(inserted)


def _changes(spark, paths: Sequence[str]):
    """One row per change read from the files: topic, partition, offset, key_json, op, lsn,
    ts_ms, row_json."""
    from pyspark.sql import functions as F

    record = F.from_json("value", RECORD_SCHEMA)
    value = F.from_json("payload", VALUE_SCHEMA)
    records = (
        spark.read.text(list(paths))
        .select(record.alias("r"))
        .select("r.*")
        .where(F.col("payload").isNotNull())  # a tombstone
        .select(
            "topic",
            "partition",
            "offset",
            # With the envelope the key's columns are its payload.
            F.coalesce(F.get_json_object("key", "$.payload"), F.col("key")).alias("key_json"),
            value.alias("v"),
        )
    )
    event = F.coalesce(
        F.col("v.payload"), F.struct("v.op", "v.before", "v.after", "v.source")
    ).alias("e")
    return (
        records.select("topic", "partition", "offset", "key_json", event)
        .where(F.col("e.op").isin(*CHANGE_OPS))
        .where(F.col("key_json").isNotNull() & F.col("e.source.lsn").isNotNull())
        .dropDuplicates(["topic", "partition", "offset"])
        .select(
            "topic",
            "partition",
            "offset",
            "key_json",
            F.col("e.op").alias("op"),
            F.col("e.source.lsn").alias("lsn"),
            F.col("e.source.ts_ms").alias("ts_ms"),
            F.when(F.col("e.op") == "d", F.col("e.before"))
            .otherwise(F.col("e.after"))
            .alias("row_json"),
        )
    )


def _key_order(descending: bool = False):
    """A key's changes in source order: by lsn, at an equal lsn the delete before the create
    (a primary key change's two halves share their lsn), then as Kafka delivered them."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rank = F.when(F.col("op") == "d", 0).otherwise(1)
    columns = [F.col("lsn"), rank, F.col("offset")]
    return Window.partitionBy("topic", "key_json").orderBy(
        *[c.desc() for c in columns] if descending else columns
    )


def _merge_current(spark, changes, path: Path) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    latest = (
        changes.withColumn("newest", F.row_number().over(_key_order(descending=True)))
        .where("newest = 1")
        .select("topic", "key_json", "op", "lsn", "ts_ms", "row_json")
    )
    (
        DeltaTable.forPath(spark, str(path))
        .alias("t")
        .merge(latest.alias("s"), "t.topic = s.topic and t.key_json = s.key_json")
        .whenMatchedDelete(condition="s.op = 'd' and s.lsn >= t.lsn")
        .whenMatchedUpdateAll(condition="s.op != 'd' and s.lsn >= t.lsn")
        .whenNotMatchedInsertAll(condition="s.op != 'd'")
        .execute()
    )


def _merge_history(spark, changes, path: Path) -> None:
    """Close and append in one MERGE: a key's closing row matches its open version by key; the
    new versions carry no merge key, so they never match and are inserted."""
    from delta.tables import DeltaTable
    from pyspark.sql import functions as F

    order = _key_order()
    steps = changes.select(
        "*",
        F.lead("ts_ms").over(order).alias("next_ts_ms"),
        F.lead("lsn").over(order).alias("next_lsn"),
        F.row_number().over(order).alias("step"),
    )
    versions = steps.where("op != 'd'").select(
        "topic",
        F.lit(None).cast("string").alias("merge_key"),
        "key_json",
        "op",
        "lsn",
        "row_json",
        F.timestamp_millis("ts_ms").alias("valid_from"),
        F.timestamp_millis("next_ts_ms").alias("valid_to"),
        F.col("next_lsn").isNull().alias("is_current"),
    )
    closing = steps.where("step = 1").select(
        "topic",
        F.col("key_json").alias("merge_key"),
        "key_json",
        "op",
        "lsn",
        "row_json",
        F.timestamp_millis("ts_ms").alias("valid_from"),
        F.lit(None).cast("timestamp").alias("valid_to"),
        F.lit(False).alias("is_current"),
    )
    columns = [name.split()[0] for name in HISTORY_COLUMNS.split(", ")]
    (
        DeltaTable.forPath(spark, str(path))
        .alias("t")
        .merge(
            versions.unionByName(closing).alias("s"),
            "t.topic = s.topic and t.key_json = s.merge_key and t.is_current",
        )
        .whenMatchedUpdate(set={"valid_to": "s.valid_from", "is_current": "false"})
        .whenNotMatchedInsert(
            condition="s.merge_key is null", values={c: f"s.{c}" for c in columns}
        )
        .execute()
    )


def _create(spark, path: Path, columns: str) -> None:
    from delta.tables import DeltaTable
    from pyspark.sql.types import StructType

    schema = StructType.fromDDL(columns)
    assert isinstance(schema, StructType)  # a column list's DDL is a struct's
    DeltaTable.createIfNotExists(spark).location(str(path)).addColumns(schema).execute()


def _last_merge(spark, path: Path) -> dict[str, int]:
    from delta.tables import DeltaTable

    metrics = DeltaTable.forPath(spark, str(path)).history(1).collect()[0]["operationMetrics"]
    return {name: int(metrics[name]) for name in MERGE_METRICS if name in metrics}


def run(spark, paths: Sequence[str], warehouse: Path) -> dict[str, Any]:
    """One batch: `paths` merged into the peer's two tables under `warehouse`. Seconds per
    stage (`create`: the tables created when absent, their logs read when present, a cold
    JVM's first Delta commands either way; `read`: the lines read, parsed and deduplicated,
    kept on disk for the two MERGEs; `current`, `history`: the MERGEs), the changes read, each
    MERGE's metrics, and the tables' counts, read after the timing."""
    from pyspark import StorageLevel

    current, history = warehouse / CURRENT_TABLE, warehouse / HISTORY_TABLE
    started = time.perf_counter()
    _create(spark, current, CURRENT_COLUMNS)
    _create(spark, history, HISTORY_COLUMNS)
    created = time.perf_counter()
    # On disk: a full build's batch is the whole history, which the driver's heap need not hold.
    changes = _changes(spark, paths).persist(StorageLevel.DISK_ONLY)
    count = changes.count()
    read = time.perf_counter()
    _merge_current(spark, changes, current)
    merged_current = time.perf_counter()
    _merge_history(spark, changes, history)
    ended = time.perf_counter()
    changes.unpersist()
    counts = (
        spark.read.format("delta")
        .load(str(history))
        .selectExpr("count(*)", "count_if(is_current)")
        .collect()[0]
    )
    stages = {
        "create": round(created - started, 3),
        "read": round(read - created, 3),
        "current": round(merged_current - read, 3),
        "history": round(ended - merged_current, 3),
    }
    return {
        # The stages' sum, so that the reported parts add up to the reported whole.
        "seconds": round(sum(stages.values()), 3),
        "stages": stages,
        "files": len(paths),
        "changes": count,
        "merges": {"current": _last_merge(spark, current), "history": _last_merge(spark, history)},
        "current_rows": spark.read.format("delta").load(str(current)).count(),
        "history_rows": counts[0],
        "open_versions": counts[1],
    }
