"""Which files a landing run picks up, and how record files stream (no Spark needed)."""

from __future__ import annotations

from cdc_warehouse.landing import FAMILIES, list_family_files, unread_files
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
