"""Bad input of every family, including lines whose decoder raises, lines that are not UTF-8 and
damaged copies of real lines (tests/damaged_lines.py), goes to cdc_quarantine with file, line and
reason; the run still succeeds and the good lines around them apply."""

from __future__ import annotations

import json
import random

from pyspark.sql import SparkSession

from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline
from tests.damaged_lines import FAMILIES, damage, sample_lines

GOOD_SPANNER_HEARTBEAT = json.dumps(
    {"partition_token": "p1", "heartbeat_record": {"timestamp": "2024-01-01T00:00:00Z"}}
)
# Invalid UTF-8 inside a JSON string: such a line once failed its decoder's whole Arrow batch,
# and with it the run (UnicodeDecodeError), for every family.
NOT_UTF8 = b'{"uuid": "u2", "name": "\xff\xfe\x80"}'
BAD_LINES: dict[str, list[str | bytes]] = {
    "spanner/s1/a.jsonl": [
        GOOD_SPANNER_HEARTBEAT,
        "{not json",
        '{"partition_token": "p1"}',
        NOT_UTF8,
    ],
    "datastream/d1/a.jsonl": ["[1, 2]", '{"uuid": "u1"}', NOT_UTF8],
    "debezium/srv/a.jsonl": ['{"topic": "srv.public.t"}', "nope", NOT_UTF8],
    # Invalid base64 makes the pgoutput decoder raise; a single bad line once failed its
    # whole Arrow batch.
    "pgoutput/slot/a.jsonl": ['{"lsn": "0/1", "xid": 1, "data": "zz"}', '{"lsn": "0/2"}', NOT_UTF8],
}


DAMAGED_PER_FAMILY = 80


def as_bytes(line: str | bytes) -> bytes:
    return line if isinstance(line, bytes) else line.encode()


def damaged_files() -> dict[str, list[bytes]]:
    """Per family, one file of damaged sample lines (seeded: the same lines every run), in a
    stream of its own. Blank lines are left out: they carry no event and are not landed."""
    files = {}
    for family in FAMILIES:
        rng = random.Random(f"{family} damaged")
        lines = sample_lines(family)
        damaged = (damage(rng.choice(lines), rng) for _ in range(DAMAGED_PER_FAMILY * 2))
        kept = [line for line in damaged if line.strip(b" ")]
        files[f"{family}/damaged/a.jsonl"] = kept[:DAMAGED_PER_FAMILY]
    return files


def is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line.decode("utf-8")), dict)
    except ValueError:  # UnicodeDecodeError included
        return False


def test_every_bad_line_is_quarantined_with_file_line_and_reason(java_available, tmp_path):
    pipeline = Pipeline(tmp_path)
    damaged = damaged_files()
    for relative, lines in {**BAD_LINES, **damaged}.items():
        target = pipeline.landing_root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\n".join(map(as_bytes, lines)) + b"\n")

    assert pipeline.cdcw("run", *BUILD_WITHOUT_TESTS) == 0
    # The decoding models split their scans finer for their own statements only: the session
    # dbt ran in is back to Spark's default splits.
    dbt_session = SparkSession.getActiveSession()
    assert dbt_session.conf.get("spark.sql.files.minPartitionNum", None) is None

    reasons = {
        (row["source_system"], row["file_path"].split("/landing/")[1], row["line_number"]): row[
            "reason"
        ]
        for row in pipeline.rows("cdc_quarantine")
        if row["reason"]
    }
    quarantined = {line for line in reasons if "/damaged/" not in line[1]}
    expected = {
        (relative.split("/")[0], relative, number)
        for relative, lines in BAD_LINES.items()
        for number, line in enumerate(lines, start=1)
        if line != GOOD_SPANNER_HEARTBEAT
    }
    assert quarantined == expected
    for relative, lines in BAD_LINES.items():
        number = lines.index(NOT_UTF8) + 1
        assert "UTF-8" in reasons[(relative.split("/")[0], relative, number)]
    # A damaged line that is no JSON object cannot be applied: it must be quarantined. Those
    # still JSON may apply (a flipped bit in a value).
    for relative, lines in damaged.items():
        for number, line in enumerate(lines, start=1):
            if not is_json_object(line):
                assert (relative.split("/")[0], relative, number) in reasons, (relative, line)
    [stream] = [row for row in pipeline.rows("cdc_spanner_streams") if row["source_name"] == "s1"]
    assert stream["low_watermark"] == "2024-01-01 00:00:00.000000"
