"""Each family's pure decoding timed per line over a generated workload, without Spark: what the
decoding models' Python costs before any UDF or Arrow overhead (docs/benchmarks/journal.md).

    python -m cdc_warehouse.bench.decode_profile WORKLOAD_DIR [FAMILY ...]

prints, per family, the lines of the base waves, the seconds and microseconds per line, and how
many decoded to an error. Under `py-spy record -- python -m cdc_warehouse.bench.decode_profile
...` it shows which functions the time goes to. Each family is timed through its first decoding
stage (python_udfs/families.py), as its decoding model calls it: pgoutput's `message_row`, as
`int_pgoutput__messages` calls it; snapshot files are no part of the log and are left out."""

from __future__ import annotations

import base64
import binascii
import json
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from python_udfs import datastream
from python_udfs.decoding import DecodeSettings
from python_udfs.families import BY_NAME, FAMILIES, SNAPSHOT_DIRECTORY, DecodeStage

# The settings the decoding models give: no declared key, Debezium's default placeholder.
SETTINGS = DecodeSettings(placeholders=("__debezium_unavailable_value",))
_STREAM_START, _STREAM_STOP = ord("S"), ord("E")


def base_wave_files(workload_dir: Path, family: str) -> Iterator[tuple[str, Path, str]]:
    """(wave, file, source name) of the family's log files in the base waves, in landing
    order."""
    for wave in sorted(workload_dir.glob("wave-*")):
        for path in sorted((wave / family).rglob("*")):
            source, *below = path.relative_to(wave / family).parts
            if path.is_file() and below[0] != SNAPSHOT_DIRECTORY:
                yield wave.name, path, source


def family_lines(workload_dir: Path, family: str) -> Iterator[tuple[str, str, str]]:
    """(wave, source name, line) of every landed line of the family's base waves; an Avro
    file's records as the JSON lines landing makes of them."""
    for wave, path, source in base_wave_files(workload_dir, family):
        if path.suffix == ".avro":
            for _, line, _ in datastream.avro_file_events(str(path)):
                if line is not None:
                    yield wave, source, line
        else:
            for line in path.read_text().splitlines():
                yield wave, source, line


def _stream_tag(line: str) -> int | None:
    """The pgoutput message's first byte, or None where the line cannot tell."""
    try:
        data = json.loads(line)["data"]
        return base64.b64decode(data[:4])[0]
    except (ValueError, KeyError, TypeError, IndexError, binascii.Error):
        return None


def _slot_line_units(lines: list[tuple[str, str, str]]) -> list[tuple[tuple[str, bool], str]]:
    """((line, in_stream), source name) as int_pgoutput__messages computes in_stream: after a
    Stream Start and before the next Stream Stop among the earlier lines of the source's
    landing run (each base wave lands as its own run)."""
    units, in_stream, run = [], False, None
    for wave, source, line in lines:
        if (wave, source) != run:
            run, in_stream = (wave, source), False
        units.append(((line, in_stream), source))
        tag = _stream_tag(line)
        if tag in (_STREAM_START, _STREAM_STOP):
            in_stream = tag == _STREAM_START
    return units


def _units(stage: DecodeStage, lines: list[tuple[str, str, str]]) -> Sequence[tuple[Any, str]]:
    """(unit, source name) of each line, as the stage's UDF is given them."""
    if stage.unit == ("line", "in_stream"):
        return _slot_line_units(lines)
    return [(line, source) for _, source, line in lines]


def _has_error(rows: Any) -> bool:
    return any(row.get("error") is not None for row in (rows if isinstance(rows, list) else [rows]))


def profile(workload_dir: Path, family: str) -> dict[str, float | int | str]:
    """The family's lines read and their units made first, then decoded in one timed loop."""
    stage = BY_NAME[family].stages[0]
    calls = _units(stage, list(family_lines(workload_dir, family)))
    decode = stage.decode
    started = time.perf_counter()
    errors = sum(_has_error(decode(unit, source, SETTINGS)) for unit, source in calls)
    seconds = time.perf_counter() - started
    return {
        "family": family,
        "lines": len(calls),
        "seconds": round(seconds, 3),
        "us_per_line": round(seconds / len(calls) * 1e6, 1) if calls else 0.0,
        "errors": errors,
    }


def main(argv: Sequence[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    workload_dir = Path(argv[0])
    families = list(argv[1:]) or [family.name for family in FAMILIES]
    for family in families:
        if family not in BY_NAME:
            print(f"unknown family {family!r}; one of {', '.join(BY_NAME)}", file=sys.stderr)
            return 2
        print(json.dumps(profile(workload_dir, family)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
