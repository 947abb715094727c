"""Which files a landing run picks up (no Spark needed for the listing)."""

from __future__ import annotations

from cdc_warehouse.landing import FAMILIES, count_unsupported_files, list_family_files

DATASTREAM = next(family for family in FAMILIES if family.name == "datastream")


def touch(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")


def test_lists_jsonl_and_avro_under_each_stream_sorted_by_path(tmp_path):
    touch(tmp_path / "datastream/orders/2024/05/02/b.jsonl")
    touch(tmp_path / "datastream/orders/2024/05/01/a.avro")
    touch(tmp_path / "datastream/crm/x.jsonl")
    found = list_family_files(tmp_path, DATASTREAM)
    assert [(source, path.relative_to(tmp_path).as_posix()) for source, path in found] == [
        ("crm", "datastream/crm/x.jsonl"),
        ("orders", "datastream/orders/2024/05/01/a.avro"),
        ("orders", "datastream/orders/2024/05/02/b.jsonl"),
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


def test_files_of_families_not_processed_yet_are_counted(tmp_path):
    touch(tmp_path / "datastream/orders/a.jsonl")
    touch(tmp_path / "unknownfamily/slot/a.jsonl")
    assert count_unsupported_files(tmp_path) == 1
