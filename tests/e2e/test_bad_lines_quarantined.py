"""Bad input of every family, including lines whose decoder raises, lines that are not UTF-8 and
damaged copies of real lines (tests/damaged_lines.py), goes to cdc_quarantine with file, line and
reason; the run still succeeds and the good lines around them apply."""

from __future__ import annotations

import json
import random

from pyspark.sql import SparkSession

from python_udfs.families import BY_NAME, SNAPSHOT_DIRECTORY
from tests.conftest import BUILD_WITHOUT_TESTS, Pipeline
from tests.damaged_lines import FAMILIES, SAMPLE, damage, sample_lines

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
# Snapshot files: a header that is missing or does not fit takes every row of its file to
# quarantine; a row with more or fewer values than its header's columns, or a value that does
# not fit its type, goes alone.
PG_COLUMNS = [
    {"name": "id", "type_oid": 23, "type_modifier": -1, "key": True},
    {"name": "note", "type_oid": 25, "type_modifier": -1, "key": False},
]
PG_HEADER = json.dumps(
    {"snapshot": {"lsn": "0/16B3748", "table": "public.notes", "columns": PG_COLUMNS}}
)
PG_ROW = json.dumps({"values": ["1", "fits"]})
SPANNER_COLUMNS = [
    {"name": "id", "type": {"code": "INT64"}, "is_primary_key": True},
    {"name": "note", "type": {"code": "STRING"}, "is_primary_key": False},
]
SPANNER_HEADER = json.dumps(
    {
        "snapshot": {
            "read_timestamp": "2023-12-31T00:00:00Z",
            "table": "notes",
            "column_types": SPANNER_COLUMNS,
        }
    }
)
SPANNER_ROW = json.dumps({"values": {"id": "1", "note": "fits"}})
BAD_SNAPSHOT_LINES: dict[str, list[str | bytes]] = {
    "pgoutput/slot/snapshot/rows.jsonl": [
        PG_HEADER,
        json.dumps({"values": ["2", "one", "too many"]}),
        json.dumps({"values": ["3"]}),
        json.dumps({"values": ["four", "not an int4"]}),
        PG_ROW,
        NOT_UTF8,
    ],
    "pgoutput/slot/snapshot/no_header.jsonl": [PG_ROW, PG_ROW],
    "pgoutput/slot/snapshot/bad_header.jsonl": [
        json.dumps({"snapshot": {"lsn": "16B3748", "table": "public.notes"}}),
        PG_ROW,
    ],
    "spanner/s1/snapshot/rows.jsonl": [
        SPANNER_HEADER,
        json.dumps({"values": {"id": "2", "note": "one", "extra": "too many"}}),
        json.dumps({"values": {"id": "3"}}),
        json.dumps({"values": {"id": "4x", "note": "not an INT64"}}),
        SPANNER_ROW,
    ],
    "spanner/s1/snapshot/no_header.jsonl": ["{not json", SPANNER_ROW],
}
GOOD_LINES = (GOOD_SPANNER_HEARTBEAT, PG_HEADER, SPANNER_HEADER)
# The good rows of files with a valid header (the same rows of the others are quarantined).
GOOD_ROWS = {("pgoutput/slot/snapshot/rows.jsonl", 5), ("spanner/s1/snapshot/rows.jsonl", 5)}


DAMAGED_PER_FAMILY = 80


def as_bytes(line: str | bytes) -> bytes:
    return line if isinstance(line, bytes) else line.encode()


def damaged_files() -> dict[str, list[bytes]]:
    """Per family, one file of damaged sample lines (seeded: the same lines every run), in a
    stream of its own; for a family with snapshot files, one more: its largest sample snapshot
    file's header, then damaged copies of its rows. Blank lines are left out: they carry no
    event and are not landed."""
    files = {}
    for family in FAMILIES:
        rng = random.Random(f"{family} damaged")
        lines = sample_lines(family)
        files[f"{family}/damaged/a.jsonl"] = damaged_lines(lines, rng)
        if BY_NAME[family].snapshots is not None:
            snapshots = sorted((SAMPLE / family).rglob(f"{SNAPSHOT_DIRECTORY}/**/*.jsonl"))
            snapshot = max(snapshots, key=lambda path: path.stat().st_size)
            header, *rows = snapshot.read_bytes().splitlines()
            relative = f"{family}/damaged/{SNAPSHOT_DIRECTORY}/a.jsonl"
            files[relative] = [header, *damaged_lines(rows, rng)]
    return files


def damaged_lines(lines: list[bytes], rng: random.Random) -> list[bytes]:
    damaged = (damage(rng.choice(lines), rng) for _ in range(DAMAGED_PER_FAMILY * 2))
    return [line for line in damaged if line.strip(b" ")][:DAMAGED_PER_FAMILY]


def is_json_object(line: bytes) -> bool:
    try:
        return isinstance(json.loads(line.decode("utf-8")), dict)
    except ValueError:  # UnicodeDecodeError included
        return False


def test_every_bad_line_is_quarantined_with_file_line_and_reason(java_available, tmp_path):
    pipeline = Pipeline(tmp_path)
    damaged = damaged_files()
    for relative, lines in {**BAD_LINES, **BAD_SNAPSHOT_LINES, **damaged}.items():
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
        for relative, lines in {**BAD_LINES, **BAD_SNAPSHOT_LINES}.items()
        for number, line in enumerate(lines, start=1)
        if line not in GOOD_LINES and (relative, number) not in GOOD_ROWS
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
    # The good snapshot rows around the bad ones apply.
    applied = {
        (row["source_system"], row["key_json"])
        for row in pipeline.rows("cdc_current")
        if row["last_op"] == "snapshot" and row["source_name"] in ("slot", "s1")
    }
    assert applied == {("pgoutput", '{"id":1}'), ("spanner", '{"id":1}')}
