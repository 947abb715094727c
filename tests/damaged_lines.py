"""Damaged copies of the bundled sample lines, for the decoder fuzz test (tests/unit) and the
landing-path one (tests/e2e): what a torn write, a flipped bit or a foreign byte sequence makes
of a real line. Most damaged lines are no longer UTF-8."""

from __future__ import annotations

import json
import random

from cdc_warehouse.settings import PROJECT_DIR
from python_udfs.families import FAMILIES as SOURCE_FAMILIES

SAMPLE = PROJECT_DIR / "sample_data" / "landing"
FAMILIES = tuple(sorted(family.name for family in SOURCE_FAMILIES))


def every_sample_line(family: str) -> list[str]:
    """Every non-blank line of the family's JSONL sample files, in path order."""
    return [
        line
        for path in sorted((SAMPLE / family).rglob("*.jsonl"))
        for line in path.read_text().splitlines()
        if line.strip()
    ]


def sample_lines(family: str, per_file: int = 3, limit: int = 60) -> list[bytes]:
    """The first lines of each of the family's JSONL sample files, in path order."""
    lines: list[bytes] = []
    for path in sorted((SAMPLE / family).rglob("*.jsonl")):
        lines.extend(line for line in path.read_bytes().splitlines()[:per_file] if line.strip())
    return lines[:limit]


def _lines(*documents: object) -> list[bytes]:
    return [json.dumps(document).encode() for document in documents]


# Files of the line kinds issue 59 adds, which the bundled sample data does not hold yet: a
# snapshot file (its header, then rows) per raw log family and dialect. (The sample's Debezium
# server pg_txn holds the transaction records.)
NEW_KIND_FILES: dict[str, list[bytes]] = {
    "pgoutput_snapshot": _lines(
        {
            "snapshot": {
                "lsn": "1/6B374D48",
                "table": "public.documents",
                "columns": [
                    {"name": "id", "type_oid": 20, "type_modifier": -1, "key": True},
                    {"name": "body", "type_oid": 25, "type_modifier": -1, "key": False},
                    {"name": "tags", "type_oid": 1009, "type_modifier": -1, "key": False},
                    {"name": "price", "type_oid": 1700, "type_modifier": 655366, "key": False},
                    {"name": "seen", "type_oid": 1184, "type_modifier": -1, "key": False},
                    {"name": "blob", "type_oid": 17, "type_modifier": -1, "key": False},
                    {"name": "doc", "type_oid": 3802, "type_modifier": -1, "key": False},
                ],
            }
        },
        {
            "values": [
                "9007199254740993",
                "long text",
                '{a,"b c",NULL}',
                "12.50",
                "2024-05-01 10:00:00.5+02",
                "\\x00ff",
                '{"b": 1, "a": [2.5]}',
            ]
        },
        {"values": ["2", None, "{}", "NaN", "infinity", "\\x", "null"]},
    ),
    "spanner_snapshot": _lines(
        {
            "snapshot": {
                "read_timestamp": "2024-06-03T10:00:00.123456Z",
                "table": "Products",
                "column_types": [
                    {"name": "Id", "type": '{"code":"INT64"}', "is_primary_key": True},
                    {"name": "Price", "type": {"code": "NUMERIC"}, "is_primary_key": False},
                    {
                        "name": "Tags",
                        "type": {"code": "ARRAY", "array_element_type": {"code": "STRING"}},
                    },
                    {"name": "Thumb", "type": {"code": "BYTES"}},
                    {"name": "Attrs", "type": {"code": "JSON"}},
                ],
            }
        },
        {"values": {"Id": "4", "Price": "12.50", "Tags": ["a"], "Thumb": "AP8=", "Attrs": "{}"}},
        {"values": {"Id": 5, "Price": None, "Tags": [], "Thumb": None, "Attrs": '{"a":[1]}'}},
    ),
    "spanner_snapshot_pg": _lines(
        {
            "snapshot": {
                "read_timestamp": "2024-06-03T10:00:00Z",
                "table": "accounts",
                "column_types": [
                    {"name": "id", "type": {"code": "STRING"}, "is_primary_key": True},
                    {
                        "name": "balance",
                        "type": {"code": "NUMERIC", "type_annotation": "PG_NUMERIC"},
                    },
                    {"name": "opened", "type": {"code": "DATE"}, "is_primary_key": False},
                ],
            }
        },
        {"values": {"id": "acc-1", "balance": "NaN", "opened": "2024-01-31"}},
    ),
}


def damage(line: bytes, rng: random.Random) -> bytes:
    """One of: cut short, a few bits flipped, random bytes inserted, or replaced by random
    bytes. Never a newline: the damaged line stays one line."""
    kind = rng.choice(("truncate", "flip", "insert", "random"))
    if kind == "truncate":
        damaged = line[: rng.randrange(len(line))]
    elif kind == "flip":
        flipped = bytearray(line)
        for _ in range(rng.randint(1, 8)):
            flipped[rng.randrange(len(flipped))] ^= 1 << rng.randrange(8)
        damaged = bytes(flipped)
    elif kind == "insert":
        at = rng.randint(0, len(line))
        damaged = line[:at] + rng.randbytes(rng.randint(1, 16)) + line[at:]
    else:
        damaged = rng.randbytes(rng.randint(1, 200))
    return damaged.replace(b"\n", b" ").replace(b"\r", b" ")
