"""Landing streams files line by line and still numbers every line exactly: blank lines keep
their numbers, CRLF endings are stripped, a last line without a newline lands once its file is
finished, gzip-compressed files land as the lines they hold, and many files of one run share
output files without mixing up their numbering. A file Spark cannot read (a ':' in its name, a
gzip file that is not one) is quarantined whole, once, and the run goes on; names with glob
characters land as they are. A file that grows lands its new lines, one whose landed bytes
change is reported once. A landing cut short is finished by the next run
under the same run number, no line landed twice."""

from __future__ import annotations

import gzip
import io
import os
import random
import time
from pathlib import Path

import pyarrow
import pyarrow.parquet
import pytest

from cdc_warehouse import landing
from python_udfs.datastream import avro_events
from tests.conftest import Pipeline
from tests.unit.test_datastream import avro_file, avro_record


def write_bytes(pipeline: Pipeline, relative: str, content: bytes) -> str:
    target = pipeline.landing_root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return str(target)


def test_every_line_lands_once_with_its_exact_file_and_number(
    java_available, tmp_path, capsys, monkeypatch
):
    # Finished files: a last line without its newline lands.
    monkeypatch.setenv("CDC_PARTIAL_LINE_WAIT_SECONDS", "0")
    pipeline = Pipeline(tmp_path)
    expected = set()
    # More files than output files and cores, of very different sizes, in two sources.
    for number in range(9):
        lines = [f'{{"file": {number}, "line": {line}}}' for line in range(1, number * 700 + 2)]
        path = write_bytes(
            pipeline, f"datastream/s{number % 2}/f{number}.jsonl", "\n".join(lines).encode()
        )
        expected |= {(f"s{number % 2}", path, line, text) for line, text in enumerate(lines, 1)}
    crlf = write_bytes(
        pipeline, "datastream/s0/crlf.jsonl", b'{"a": 1}\r\n\r\n  \n{"b": "\xc3\xa9"}\r\n'
    )
    expected |= {("s0", crlf, 1, '{"a": 1}'), ("s0", crlf, 4, '{"b": "\u00e9"}')}
    # Kafka-style names keep their '+'; spaces and '%' survive the URI round trip.
    kafka = write_bytes(pipeline, "datastream/s1/topic+0+0000042 copy%20.jsonl", b'{"c": 3}\n')
    expected.add(("s1", kafka, 1, '{"c": 3}'))
    # Datastream may write gzip-compressed JSON files.
    zipped_lines = [f'{{"z": {line}}}' for line in range(1, 1201)]
    zipped = write_bytes(
        pipeline, "datastream/s1/z.jsonl.gz", gzip.compress("\n".join(zipped_lines).encode())
    )
    expected |= {("s1", zipped, line, text) for line, text in enumerate(zipped_lines, 1)}
    # Files landing does not read are named, in the output and in a table.
    unread = [
        write_bytes(pipeline, "datastream/s0/notes.txt", b"hello\n"),
        write_bytes(pipeline, "newfamily/x/a.jsonl", b"{}\n"),
    ]

    assert pipeline.cdcw("land") == 0
    said = capsys.readouterr().err
    assert "2 files not read" in said and "datastream/s0/notes.txt" in said, said
    assert sorted(row["file_path"] for row in pipeline.rows("cdc_raw.unread_files")) == unread

    landed = [
        (row["source_name"], row["file_path"], row["line_number"], row["line"])
        for row in pipeline.rows("cdc_raw.datastream_lines")
    ]
    assert len(landed) == len(set(landed))
    assert set(landed) == expected

    # A second run lands nothing again.
    assert pipeline.cdcw("land") == 0
    assert len(pipeline.rows("cdc_raw.datastream_lines")) == len(expected)

    # Timestamps are written as parquet's own type, not the legacy INT96.
    files = list((pipeline.warehouse_dir / "cdc_raw.db" / "datastream_lines").rglob("*.parquet"))
    assert files
    for file in files:
        landed_at = pyarrow.parquet.ParquetFile(file).schema_arrow.field("landed_at")
        assert landed_at.type == pyarrow.timestamp("us", tz="UTC")


def test_avro_files_land_record_by_record_in_batches_beside_text_files(java_available, tmp_path):
    """Avro files are decoded by Spark's Python workers in bounded batches: a file larger than
    one batch keeps its record numbers, a damaged one lands as its error, the text file of the
    same run is unaffected."""
    pipeline = Pipeline(tmp_path)
    big = avro_file([avro_record(f"u-{n}", n) for n in range(1, 25_002)], codec="deflate")
    files = {
        write_bytes(pipeline, "datastream/s0/big.avro", big): "s0",
        write_bytes(pipeline, "datastream/s1/small.avro", avro_file([avro_record("v", 1)])): "s1",
        write_bytes(pipeline, "datastream/s1/cut.avro", big[: len(big) // 2]): "s1",
        write_bytes(pipeline, "datastream/s1/bad.avro", b"not avro"): "s1",
    }
    expected = {
        (source, path, number, line, error)
        for path, source in files.items()
        for number, line, error in avro_events(io.BytesIO(Path(path).read_bytes()))
    }
    text = write_bytes(pipeline, "datastream/s0/t.jsonl", b'{"a": 1}\n')
    expected.add(("s0", text, 1, '{"a": 1}', None))

    assert pipeline.cdcw("land") == 0

    landed = [
        (row["source_name"], row["file_path"], row["line_number"], row["line"], row["load_error"])
        for row in pipeline.rows("cdc_raw.datastream_lines")
    ]
    assert len(landed) == len(set(landed)) == len(expected)
    assert set(landed) == expected
    by_file = {path: sorted(n for _, p, n, _, _ in landed if p == path) for path in files}
    assert by_file[next(iter(files))] == list(range(1, 25_002))
    cut = [row for row in landed if row[1].endswith("cut.avro")]
    assert any(row[4] is None for row in cut)
    assert max(cut, key=lambda row: row[2])[4].startswith("unreadable Avro record: ")
    [bad] = [row for row in landed if row[1].endswith("bad.avro")]
    assert bad[2:4] == (0, None) and bad[4].startswith("unreadable Avro header: ")


def test_a_file_spark_cannot_read_is_quarantined_whole_once_and_the_others_land(
    java_available, tmp_path, capsys
):
    """Each of these files once failed every landing run while it was there: a ':' in a name
    (Hadoop reads a scheme), gzip files that are not gzip, cut short or padded, and names Hadoop
    reads as glob patterns ("c*.jsonl" also read "cx.jsonl", landing its lines twice)."""
    pipeline = Pipeline(tmp_path)
    lines = b'{"a": 1}\n{"b": 2}\n'
    refused = {
        write_bytes(pipeline, "debezium/srv/bad:name.jsonl", lines): "the file's name holds ':'",
        write_bytes(pipeline, "debezium/srv/garbage.jsonl.gz", random.Random(7).randbytes(4096)): (
            "Spark cannot read the file as gzip (java.io.IOException: not a gzip file)"
        ),
        write_bytes(pipeline, "debezium/srv/cut.jsonl.gz", gzip.compress(lines * 50)[:-30]): (
            "Spark cannot read the file as gzip (java.io.EOFException"
        ),
        write_bytes(pipeline, "debezium/srv/padded.jsonl.gz", gzip.compress(lines) + bytes(8)): (
            "Spark cannot read the file as gzip"
        ),
    }
    landing = [
        write_bytes(pipeline, f"debezium/srv/{name}", lines)
        for name in ("a[1].jsonl", "b{x}.jsonl", "c*.jsonl", "cx.jsonl", "e\\f.jsonl")
    ]
    landing.append(write_bytes(pipeline, "debezium/srv/good.jsonl.gz", gzip.compress(lines)))

    assert pipeline.cdcw("land") == 0
    said = capsys.readouterr().err
    rows = pipeline.rows("cdc_raw.debezium_lines")
    quarantined = {row["file_path"]: row for row in rows if row["line_number"] == 0}
    assert quarantined.keys() == refused.keys()
    for path, reason in refused.items():
        assert quarantined[path]["line"] is None
        assert quarantined[path]["load_error"].startswith(reason), quarantined[path]
        assert f"warning: {Path(path).relative_to(pipeline.landing_root)}: {reason}" in said, said
    assert sorted((row["file_path"], row["line_number"]) for row in rows if row["line_number"]) == [
        (path, number) for path in sorted(landing) for number in (1, 2)
    ]
    assert "landing run 1: debezium: 10 files, 16 lines, " in said, said

    # Reported once: a later run passes them by.
    assert pipeline.cdcw("land") == 0
    assert "no new files" in capsys.readouterr().err
    assert len(pipeline.rows("cdc_raw.debezium_lines")) == len(rows)


def landed_lines(pipeline: Pipeline, name: str) -> list[tuple[int, str | None, str | None, int]]:
    """(line number, line, load error, landing run) of one file's landed lines, in order."""
    return sorted(
        (row["line_number"], row["line"], row["load_error"], row["landing_run"])
        for row in pipeline.rows("cdc_raw.datastream_lines")
        if row["file_path"].endswith(f"/{name}")
    )


def age(path: str, seconds: int) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_growing_file_lands_its_new_lines_and_a_changed_one_is_reported_once(
    java_available, tmp_path, capsys
):
    pipeline = Pipeline(tmp_path)
    grows = write_bytes(pipeline, "datastream/s/grows.jsonl", b'{"n": 1}\n{"n": 2}\n{"n": 3')
    rewritten = write_bytes(pipeline, "datastream/s/rewritten.jsonl", b'{"r": 1}\n{"r": 2}\n')
    cut = write_bytes(pipeline, "datastream/s/cut.jsonl", b'{"c": 1}\n{"c": 2}\n')
    write_bytes(pipeline, "datastream/s/z.jsonl.gz", gzip.compress(b'{"z": 1}\n'))
    assert pipeline.cdcw("land") == 0
    # The line still being written waits.
    assert landed_lines(pipeline, "grows.jsonl") == [
        (1, '{"n": 1}', None, 1),
        (2, '{"n": 2}', None, 1),
    ]

    # Appended: the rest of line 3, a blank line, line 5, and line 6 being written.
    with open(grows, "ab") as handle:
        handle.write(b'}\n\n{"n": 5}\n{"n": 6')
    # Same size, other bytes; shorter; a gzip file written again.
    write_bytes(pipeline, "datastream/s/rewritten.jsonl", b'{"r": 1}\n{"R": 2}\n')
    write_bytes(pipeline, "datastream/s/cut.jsonl", b'{"c": 1}\n')
    write_bytes(pipeline, "datastream/s/z.jsonl.gz", gzip.compress(b'{"z": 1}\n{"z": 2}\n'))
    capsys.readouterr()
    assert pipeline.cdcw("land") == 0
    said = capsys.readouterr().err
    assert landed_lines(pipeline, "grows.jsonl")[2:] == [
        (3, '{"n": 3}', None, 2),
        (5, '{"n": 5}', None, 2),
    ]
    for path, now in ((rewritten, "changed, now 18 bytes"), (cut, "cut to 9 bytes")):
        name = Path(path).name
        assert f"warning: datastream/s/{name}: the file changed after it was landed" in said, said
        assert landed_lines(pipeline, name)[0] == (
            0,
            None,
            f"the file changed after it was landed (18 bytes landed, {now}): what changed is "
            "not landed",
            2,
        )
    # A gzip file is written whole: any change is one.
    conflict, first = landed_lines(pipeline, "z.jsonl.gz")
    assert first == (1, '{"z": 1}', None, 1)
    assert conflict[:2] == (0, None) and conflict[3] == 2
    assert conflict[2].startswith("the file changed after it was landed (")
    assert "warning: datastream/s/z.jsonl.gz: the file changed" in said
    before = pipeline.rows("cdc_raw.datastream_lines")

    # Nothing changed since: nothing lands, nothing is reported again, line 6 still waits.
    assert pipeline.cdcw("land") == 0
    assert "warning" not in capsys.readouterr().err
    assert len(pipeline.rows("cdc_raw.datastream_lines")) == len(before)

    # Unchanged for longer than the wait, the file is finished: its last line lands as it is.
    age(grows, 301)
    assert pipeline.cdcw("land") == 0
    assert landed_lines(pipeline, "grows.jsonl")[4:] == [(6, '{"n": 6', None, 3)]
    assert len(pipeline.rows("cdc_raw.datastream_lines")) == len(before) + 1
    assert pipeline.cdcw("land") == 0
    assert len(pipeline.rows("cdc_raw.datastream_lines")) == len(before) + 1


class Killed(BaseException):
    """Stands for the process dying at that point (no handler of cdcw's sees it)."""


@pytest.mark.parametrize("cut", ["after the first family", "before the manifest"])
def test_a_landing_cut_short_is_finished_by_the_next_run_without_landing_twice(
    java_available, tmp_path, monkeypatch, capsys, cut
):
    pipeline = Pipeline(tmp_path)
    files = {
        "datastream/s/a.jsonl": ['{"a": 1}', '{"a": 2}', '{"a": 3}'],
        "debezium/srv/b.jsonl": ['{"b": 1}', '{"b": 2}'],
        "pgoutput/slot/c.jsonl": ['{"c": 1}'],
    }
    for relative, lines in files.items():
        write_bytes(pipeline, relative, ("\n".join(lines) + "\n").encode())

    def killed(*_: object) -> None:
        raise Killed

    append_lines = landing._append_lines

    def killed_after_append(*args: object) -> None:
        append_lines(*args)  # type: ignore[arg-type]
        raise Killed

    if cut == "after the first family":
        monkeypatch.setattr(landing, "_append_lines", killed_after_append)
    else:
        monkeypatch.setattr(landing, "_record_manifest", killed)
    with pytest.raises(Killed):
        pipeline.cdcw("land")
    monkeypatch.undo()
    committed = {
        family: len(pipeline.rows(f"cdc_raw.{family}_lines"))
        for family in ("datastream", "debezium", "pgoutput")
    }
    first_only = cut == "after the first family"
    assert committed == {
        "datastream": 3,
        "debezium": 0 if first_only else 2,
        "pgoutput": 0 if first_only else 1,
    }
    assert pipeline.rows("cdc_raw.landed_files") == []
    if not first_only:
        # A build in between sees none of the lines of a run the manifest does not list.
        assert pipeline.cdcw("dbt", "run", "--select", "stg_datastream__lines") == 0
        assert pipeline.rows("cdc_staging.stg_datastream__lines") == []
    # A file that arrives before the next run lands in the same run.
    files["datastream/s/d.jsonl"] = ['{"d": 1}']
    write_bytes(pipeline, "datastream/s/d.jsonl", b'{"d": 1}\n')
    capsys.readouterr()

    assert pipeline.cdcw("land") == 0
    # The run's count holds the lines the cut run committed as well as its own.
    assert "landing run 1: 4 new or grown files, 7 lines from" in capsys.readouterr().err

    for family in ("datastream", "debezium", "pgoutput"):
        landed = [
            (Path(row["file_path"]).relative_to(pipeline.landing_root).as_posix(), row["line"])
            for row in pipeline.rows(f"cdc_raw.{family}_lines")
        ]
        expected = [
            (relative, line)
            for relative, lines in files.items()
            if relative.startswith(family)
            for line in lines
        ]
        assert sorted(landed) == sorted(expected), family
        assert {row["landing_run"] for row in pipeline.rows(f"cdc_raw.{family}_lines")} == {1}
    manifest = pipeline.rows("cdc_raw.landed_files")
    assert sorted(
        Path(row["file_path"]).relative_to(pipeline.landing_root).as_posix() for row in manifest
    ) == sorted(files)
    assert {row["landing_run"] for row in manifest} == {1}
    if not first_only:
        assert len(pipeline.rows("cdc_staging.stg_datastream__lines")) == 4
