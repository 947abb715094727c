"""Fuzzing every family's decoder with damaged real lines: random bytes, truncations and bit
flips of the bundled sample lines, read as staging reads them (made valid UTF-8). A decoder must
answer every line with rows or an error of its own, never raise: a raise is caught by the UDF
wrapper (registry.guarded) but then names an internal error instead of what is wrong with the
line. The landing path of such lines is fuzzed end to end in
tests/e2e/test_bad_lines_quarantined.py."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from python_udfs import datastream
from python_udfs.decoding import DecodeSettings
from python_udfs.families import BY_NAME, Family
from python_udfs.pgoutput import snapshot as pgoutput_snapshots
from python_udfs.spanner import snapshot as spanner_snapshots
from tests.damaged_lines import NEW_KIND_FILES, SAMPLE, damage, sample_lines

# The settings the decoding models give: no declared key, Debezium's default placeholder.
SETTINGS = DecodeSettings(placeholders=("__debezium_unavailable_value",))
# What a first stage's unit holds beside the line, as the SQL may give it.
LINE_CONTEXT = {"in_stream": False}


def decoded_rows(family: Family, line: str, source_name: str) -> list[dict[str, Any]]:
    """Every decoding stage of the family in turn (python_udfs/families.py), a later stage fed
    with each row of the one before as its unit, without the SQL between them; a row with an
    error goes no further."""
    rows: list[dict[str, Any]] = [{"line": line, **LINE_CONTEXT}]
    for stage in family.stages:
        decoded: list[dict[str, Any]] = []
        for row in rows:
            if row.get("error"):
                decoded.append(row)
                continue
            unit = tuple(row.get(field) for field in stage.unit)
            decoded.extend(
                rows_of(stage.decode(unit[0] if len(unit) == 1 else unit, source_name, SETTINGS))
            )
        rows = decoded
    return rows


def rows_of(result: Any) -> list[dict[str, Any]]:
    return result if isinstance(result, list) else [result]


def check_never_raises(lines: list[bytes], decode: Callable[[str, str], Any]) -> None:
    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(st.sampled_from(lines), st.randoms(use_true_random=False))
    def check(line: bytes, rng) -> None:
        rows = rows_of(decode(damage(line, rng).decode("utf-8", "replace"), "fuzzed"))
        assert rows, "a line must leave a trace: rows or an error"
        for row in rows:
            assert isinstance(row, dict)
            error = row.get("error")
            assert error is None or isinstance(error, str)
            assert not (error or "").startswith(("internal error", "unexpected error")), error

    check()


@pytest.mark.parametrize("family", sorted(BY_NAME))
def test_a_damaged_line_decodes_to_rows_or_an_error_of_its_own(family):
    lines = sample_lines(family)
    assert len(lines) >= 10, "the sample data should give the fuzzer lines to damage"
    check_never_raises(lines, lambda line, source: decoded_rows(BY_NAME[family], line, source))


def snapshot_lines(module: Any, kind: str) -> Callable[[str, str], list[dict[str, Any]]]:
    """A damaged line read as its file's header, and as a row under the file's intact header;
    then the file's intact first row under what the damaged line made of the header (no
    header, or a damaged one that still parses)."""
    header_line, first_row, *_ = (line.decode() for line in NEW_KIND_FILES[kind])
    intact = module.snapshot_header(header_line, "sample")["header_json"]
    assert intact is not None

    def decode(line: str, source_name: str) -> list[dict[str, Any]]:
        header = module.snapshot_header(line, source_name)
        return [
            header,
            module.snapshot_row((line, intact), source_name),
            module.snapshot_row((first_row, header.get("header_json")), source_name),
        ]

    return decode


NEW_KIND_DECODERS: dict[str, Callable[[str, str], Any]] = {
    "pgoutput_snapshot": snapshot_lines(pgoutput_snapshots, "pgoutput_snapshot"),
    "spanner_snapshot": snapshot_lines(spanner_snapshots, "spanner_snapshot"),
    "spanner_snapshot_pg": snapshot_lines(spanner_snapshots, "spanner_snapshot_pg"),
}


@pytest.mark.parametrize("kind", sorted(NEW_KIND_FILES))
def test_a_damaged_snapshot_line_decodes_to_rows_or_an_error_of_its_own(kind):
    check_never_raises(NEW_KIND_FILES[kind], NEW_KIND_DECODERS[kind])


AVRO_SAMPLES = sorted(SAMPLE.rglob("*.avro"))


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(AVRO_SAMPLES), st.randoms(use_true_random=False))
def test_a_damaged_avro_file_yields_records_then_at_most_one_error(path, rng):
    """Landing reads Avro files record by record (datastream.avro_events): damage anywhere gives
    readable records, numbered from 1, and then at most one error that ends the file, or
    errors of single records; it never raises."""
    events = list(datastream.avro_events(io.BytesIO(damage(path.read_bytes(), rng))))
    for _, line, reason in events:
        assert (line is None) == (reason is not None)
        if line is not None:
            assert datastream.flatten_event(line, "fuzzed")
    numbers = [number for number, _, _ in events]
    # A cut at a block boundary leaves fewer records and no error: Avro cannot tell.
    assert numbers in ([0], list(range(1, len(events) + 1)))
