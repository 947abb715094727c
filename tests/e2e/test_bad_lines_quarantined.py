"""Bad input of every family, including lines whose decoder raises, goes to cdc_quarantine
with file, line and reason; the run still succeeds and the good lines around them apply."""

from __future__ import annotations

import json

from pyspark.sql import SparkSession

from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline

GOOD_SPANNER_HEARTBEAT = json.dumps(
    {"partition_token": "p1", "heartbeat_record": {"timestamp": "2024-01-01T00:00:00Z"}}
)
BAD_LINES = {
    "spanner/s1/a.jsonl": [GOOD_SPANNER_HEARTBEAT, "{not json", '{"partition_token": "p1"}'],
    "datastream/d1/a.jsonl": ["[1, 2]", '{"uuid": "u1"}'],
    "debezium/srv/a.jsonl": ['{"topic": "srv.public.t"}', "nope"],
    # Invalid base64 makes the pgoutput decoder raise; a single bad line once failed its
    # whole Arrow batch.
    "pgoutput/slot/a.jsonl": ['{"lsn": "0/1", "xid": 1, "data": "zz"}', '{"lsn": "0/2"}'],
}


def test_every_bad_line_is_quarantined_with_file_line_and_reason(java_available, tmp_path):
    pipeline = Pipeline(tmp_path)
    for relative, lines in BAD_LINES.items():
        target = pipeline.landing_root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines) + "\n")

    assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    # The decoding models split their scans finer for their own statements only: the session
    # dbt ran in is back to Spark's default splits.
    dbt_session = SparkSession.getActiveSession()
    assert dbt_session.conf.get("spark.sql.files.minPartitionNum", None) is None

    quarantined = {
        (row["source_system"], row["file_path"].split("/landing/")[1], row["line_number"])
        for row in pipeline.rows("cdc_quarantine")
        if row["reason"]
    }
    expected = {
        (relative.split("/")[0], relative, number)
        for relative, lines in BAD_LINES.items()
        for number, line in enumerate(lines, start=1)
        if line != GOOD_SPANNER_HEARTBEAT
    }
    assert quarantined == expected
    [stream] = pipeline.rows("cdc_spanner_streams")
    assert stream["low_watermark"] == "2024-01-01 00:00:00.000000"
