"""Which files a landing run picks up, which of their lines it lands, which files it refuses
(changed since landed, named so that Spark cannot read them), by which URI Spark reads them, and
how record files stream (no Spark needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cdc_warehouse.landing import (
    FAMILIES,
    FINGERPRINT_BYTES,
    FileState,
    bytes_through_line,
    complete_lines,
    fingerprint,
    list_family_files,
    plan_landing,
    spark_file_uri,
    unread_files,
)
from python_udfs.registry import record_line_batches

DATASTREAM = next(family for family in FAMILIES if family.name == "datastream")


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")


def test_lists_jsonl_gzip_and_avro_under_each_stream_sorted_by_path(tmp_path):
    touch(tmp_path / "datastream/orders/2024/05/02/b.jsonl")
    touch(tmp_path / "datastream/orders/2024/05/02/c.jsonl.gz")
    touch(tmp_path / "datastream/orders/2024/05/01/a.avro")
    touch(tmp_path / "datastream/crm/x.jsonl")
    found = list_family_files(tmp_path, DATASTREAM)
    assert [(source, path.relative_to(tmp_path).as_posix()) for source, path in found] == [
        ("crm", "datastream/crm/x.jsonl"),
        ("orders", "datastream/orders/2024/05/01/a.avro"),
        ("orders", "datastream/orders/2024/05/02/b.jsonl"),
        ("orders", "datastream/orders/2024/05/02/c.jsonl.gz"),
    ]


def test_skips_files_being_written_and_other_suffixes(tmp_path):
    touch(tmp_path / "datastream/orders/.part-1.jsonl")
    touch(tmp_path / "datastream/orders/_tmp/part-2.jsonl")
    touch(tmp_path / "datastream/orders/notes.txt")
    touch(tmp_path / "datastream/orders/data.jsonl.crc")
    touch(tmp_path / "datastream/stray.jsonl")
    assert list_family_files(tmp_path, DATASTREAM) == []


def test_missing_family_directory_lists_nothing(tmp_path):
    assert list_family_files(tmp_path / "nowhere", DATASTREAM) == []


def test_every_file_landing_does_not_read_is_named(tmp_path):
    for read in ("datastream/orders/a.jsonl", "datastream/orders/b.avro", "spanner/s/c.jsonl.gz"):
        touch(tmp_path / read)
    unread = [
        "datastream/orders/notes.txt",
        "datastream/orders/d.json",
        "datastream/stray.jsonl",
        "debezium/srv/e.jsonl.zst",
        "unknownfamily/slot/a.jsonl",
    ]
    for path in unread:
        touch(tmp_path / path)
    touch(tmp_path / "datastream/orders/.being-written.jsonl")
    touch(tmp_path / "datastream/_tmp/f.json")
    assert unread_files(tmp_path) == sorted(tmp_path / path for path in unread)
    assert unread_files(tmp_path / "nowhere") == []


def test_record_files_stream_through_in_bounded_single_file_batches_keeping_their_numbers():
    lengths = {"a.avro": 9, "b.avro": 0, "c.avro": 4}
    consumed: list[str] = []

    def read(path: str):
        for number in range(1, lengths[path] + 1):
            consumed.append(path)
            yield number, f"{path}#{number}", None
        if path == "b.avro":
            yield 0, None, "unreadable Avro header"

    files = [("s1", "a.avro"), ("s2", "b.avro"), ("s1", "c.avro")]
    batches = record_line_batches(files, read, batch_rows=4)
    first = next(batches)
    # The first batch leaves before the file is read to its end: nothing holds a whole file.
    assert first.num_rows == 4 and len(consumed) <= 5
    batches = [first, *batches]
    # A batch never mixes files nor exceeds the limit.
    assert [(b.num_rows, set(b.column("file_path").to_pylist())) for b in batches] == [
        (4, {"a.avro"}),
        (4, {"a.avro"}),
        (1, {"a.avro"}),
        (1, {"b.avro"}),
        (4, {"c.avro"}),
    ]
    rows = [row for batch in batches for row in batch.to_pylist()]
    expected = [
        {
            "source_name": source,
            "file_path": path,
            "line_number": n,
            "line": f"{path}#{n}",
            "load_error": None,
        }
        for source, path in files
        for n in range(1, lengths[path] + 1)
    ]
    expected.insert(
        9,
        {
            "source_name": "s2",
            "file_path": "b.avro",
            "line_number": 0,
            "line": None,
            "load_error": "unreadable Avro header",
        },
    )
    assert rows == expected


def spark_line_positions(data: bytes) -> int:
    """Line positions as Spark's text reader numbers them: one per newline, and one for a last
    line without its own."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


@pytest.mark.parametrize(
    "data",
    [b"", b"a\n", b"a\nb", b"a\n\n\nb\n", b"\n", b"a\r\nb\r\n", b"x" * 100 + b"\ny"],
)
def test_complete_lines_count_as_spark_numbers_and_stop_before_a_line_being_written(tmp_path, data):
    path = tmp_path / "f.jsonl"
    path.write_bytes(data)
    complete = data[: data.rfind(b"\n") + 1]
    assert complete_lines(path, 0, len(data), 0, False) == (
        len(complete),
        spark_line_positions(complete),
    )
    assert complete_lines(path, 0, len(data), 0, True) == (len(data), spark_line_positions(data))
    # Read on from a landed prefix, the count goes on from its positions.
    cut = len(complete)
    assert complete_lines(path, cut, len(data), 7, True) == (
        len(data),
        7 + spark_line_positions(data[cut:]),
    )


def test_bytes_through_line_finds_the_end_of_a_line(tmp_path):
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"a\n\nccc\nd")
    assert [bytes_through_line(path, line) for line in (1, 2, 3, 4, 9)] == [2, 3, 7, 8, 8]


def test_the_fingerprint_sees_the_first_and_last_landed_bytes_only(tmp_path):
    path = tmp_path / "f.jsonl"
    data = bytearray(b"x" * (3 * FINGERPRINT_BYTES))
    path.write_bytes(data)
    size = len(data)
    before = fingerprint(path, size)
    assert fingerprint(path, size - 1) != before
    for offset, changed in ((0, True), (size - 1, True), (FINGERPRINT_BYTES + 5, False)):
        altered = bytearray(data)
        altered[offset] = ord("y")
        path.write_bytes(altered)
        assert (fingerprint(path, size) != before) is changed, offset
    # Bytes appended after the landed ones do not count.
    path.write_bytes(bytes(data) + b"more\n")
    assert fingerprint(path, size) == before


NOW_US = 2_000_000_000 * 1_000_000


def planned(tmp_path, files: dict[str, bytes], landed: dict[str, FileState], wait: int = 300):
    written = []
    for name, data in files.items():
        path = tmp_path / "datastream" / "s" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        os.utime(path, ns=(NOW_US * 1000, NOW_US * 1000))
        written.append(("s", path))
    return plan_landing(written, landed, wait, NOW_US + 10_000_000)


def test_the_landing_plan_lands_new_and_grown_lines_and_reports_changed_files(tmp_path):
    def state(name: str, data: bytes, lines: int | None) -> FileState:
        path = tmp_path / "datastream" / "s" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return FileState(len(data), lines, NOW_US - 1, fingerprint(path, len(data)))

    landed = {
        str(tmp_path / "datastream/s" / name): state(name, data, lines)
        for name, data, lines in (
            ("grown.jsonl", b"1\n2\n", 2),
            ("same.jsonl", b"1\n", 1),
            ("rewritten.jsonl", b"1\n2\n", 2),
            ("cut.jsonl", b"1\n2\n", 2),
            ("z.jsonl.gz", b"gz", None),
        )
    }
    # Landed by an earlier version: its size only.
    landed[str(tmp_path / "datastream/s/old.jsonl")] = FileState(4)
    arrivals, conflicts = planned(
        tmp_path,
        {
            "new.jsonl": b"a\nb\nc",
            "grown.jsonl": b"1\n2\n\n4\n5",
            "same.jsonl": b"1\n",
            "rewritten.jsonl": b"1\nX\n",
            "cut.jsonl": b"1\n",
            "z.jsonl.gz": b"gz2",
            "old.jsonl": b"1\n2\n3\n",
            "new.avro": b"avro",
        },
        landed,
    )
    assert {a.path.name: (a.after_line, a.through_line, a.state.size_bytes) for a in arrivals} == {
        "new.jsonl": (0, 2, 4),
        "grown.jsonl": (2, 4, 7),
        "old.jsonl": (2, 3, 6),
        "new.avro": (0, None, 4),
    }
    assert {c.path.name: c.reason.split("(")[1].split(")")[0] for c in conflicts} == {
        "rewritten.jsonl": "4 bytes landed, changed, now 4 bytes",
        "cut.jsonl": "4 bytes landed, cut to 2 bytes",
        "z.jsonl.gz": "2 bytes landed, changed, now 3 bytes",
    }
    # A conflict records the file as it is now, so that it is reported once.
    rewritten = next(c for c in conflicts if c.path.name == "rewritten.jsonl")
    assert rewritten.state.size_bytes == 4 and rewritten.state.line_count == 2
    # Past the wait, a last line without its newline lands as it is.
    arrivals, _ = planned(tmp_path, {"late.jsonl": b"a\nb"}, {}, wait=5)
    assert [(a.after_line, a.through_line) for a in arrivals] == [(0, 2)]
    # A file holding only a line being written has nothing to land yet.
    assert planned(tmp_path, {"started.jsonl": b'{"a"'}, {}) == ([], [])


def test_a_text_file_spark_cannot_read_by_its_name_is_refused_once_as_it_is(tmp_path):
    arrivals, refusals = planned(
        tmp_path, {"bad:name.jsonl": b'{"a": 1}\n{"a": 2', "ok:name.avro": b"avro"}, {}
    )
    # Python reads Avro files, whatever their names.
    assert [a.path.name for a in arrivals] == ["ok:name.avro"]
    [refused] = refusals
    assert refused.path.name == "bad:name.jsonl" and "':'" in refused.reason
    # Recorded whole as it is now, so the next run passes it by ...
    assert (refused.state.size_bytes, refused.state.line_count) == (16, None)
    landed = {str(refused.path): refused.state}
    assert planned(tmp_path, {"bad:name.jsonl": b'{"a": 1}\n{"a": 2'}, landed) == ([], [])
    # ... until it changes: then refused again, never landed.
    arrivals, refusals = planned(tmp_path, {"bad:name.jsonl": b'{"a": 1}\n{"a": 2}\n'}, landed)
    assert arrivals == [] and [r.state.size_bytes for r in refusals] == [18]


def test_spark_reads_a_file_by_a_uri_that_names_it_and_no_other():
    assert spark_file_uri(Path("/l/a[1] {x}*?.jsonl")) == r"file:///l/a\[1\] \{x\}\*\?.jsonl"
    assert spark_file_uri(Path("/l/back\\slash+0%20.jsonl")) == r"file:///l/back\\slash+0%20.jsonl"
