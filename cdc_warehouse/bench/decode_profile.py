"""Each family's pure decoding timed per line over a generated workload, without Spark: what the
decoding models' Python costs before any UDF or Arrow overhead (docs/benchmarks/journal.md).

    python -m cdc_warehouse.bench.decode_profile WORKLOAD_DIR [FAMILY ...]

prints, per family, the lines of the base waves, the seconds and microseconds per line, and how
many decoded to an error. Under `py-spy record -- python -m cdc_warehouse.bench.decode_profile
...` it shows which functions the time goes to. pgoutput is timed through its first stage
(`message_row`), as `int_pgoutput__messages` calls it."""

from __future__ import annotations

import base64
import binascii
import json
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from python_udfs import datastream, debezium, pgoutput, spanner

FAMILIES = ("datastream", "debezium", "spanner", "pgoutput")
PLACEHOLDERS = ("__debezium_unavailable_value",)
_STREAM_START, _STREAM_STOP = ord("S"), ord("E")


def base_wave_files(workload_dir: Path, family: str) -> Iterator[tuple[str, Path, str]]:
    """(wave, file, source name) of the family's files in the base waves, in landing order."""
    for wave in sorted(workload_dir.glob("wave-*")):
        for path in sorted((wave / family).rglob("*")):
            if path.is_file():
                yield wave.name, path, path.relative_to(wave / family).parts[0]


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


def _pgoutput_arguments(lines: list[tuple[str, str, str]]) -> list[tuple[str, bool]]:
    """(line, in_stream) as int_pgoutput__messages computes in_stream: after a Stream Start
    and before the next Stream Stop among the earlier lines of the source's landing run (each
    base wave lands as its own run)."""
    arguments, in_stream, run = [], False, None
    for wave, source, line in lines:
        if (wave, source) != run:
            run, in_stream = (wave, source), False
        arguments.append((line, in_stream))
        tag = _stream_tag(line)
        if tag in (_STREAM_START, _STREAM_STOP):
            in_stream = tag == _STREAM_START
    return arguments


def _decoder(family: str) -> Callable[..., bool]:
    """A function of a line's UDF arguments that decodes as the family's UDF does and says
    whether the line decoded to an error."""
    if family == "datastream":
        return lambda line, source: datastream.flatten_event(line, source)["error"] is not None
    if family == "debezium":
        return lambda line, source: (
            debezium.flatten_record(line, source, PLACEHOLDERS)["error"] is not None
        )
    if family == "spanner":
        return lambda line, source: any(
            row["error"] is not None for row in spanner.flatten_line(line, source)
        )
    return lambda line, in_stream: pgoutput.message_row(line, in_stream)["error"] is not None


def profile(workload_dir: Path, family: str) -> dict[str, float | int | str]:
    """The family's lines read and their UDF arguments made first, then decoded in one timed
    loop."""
    lines = list(family_lines(workload_dir, family))
    arguments: Sequence[tuple[str, Any]]
    if family == "pgoutput":
        arguments = _pgoutput_arguments(lines)
    else:
        arguments = [(line, source) for _, source, line in lines]
    decode = _decoder(family)
    started = time.perf_counter()
    errors = sum(decode(*call) for call in arguments)
    seconds = time.perf_counter() - started
    return {
        "family": family,
        "lines": len(arguments),
        "seconds": round(seconds, 3),
        "us_per_line": round(seconds / len(arguments) * 1e6, 1) if arguments else 0.0,
        "errors": errors,
    }


def main(argv: Sequence[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    workload_dir, families = Path(argv[0]), list(argv[1:]) or list(FAMILIES)
    for family in families:
        if family not in FAMILIES:
            print(f"unknown family {family!r}; one of {', '.join(FAMILIES)}", file=sys.stderr)
            return 2
        print(json.dumps(profile(workload_dir, family)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
