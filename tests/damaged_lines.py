"""Damaged copies of the bundled sample lines, for the decoder fuzz test (tests/unit) and the
landing-path one (tests/e2e): what a torn write, a flipped bit or a foreign byte sequence makes
of a real line. Most damaged lines are no longer UTF-8."""

from __future__ import annotations

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
