"""Landing streams files line by line and still numbers every line exactly: blank lines keep
their numbers, CRLF endings are stripped, a last line without a newline lands, and many files
of one run share output files without mixing up their numbering."""

from __future__ import annotations

from tests.conftest import Pipeline


def write_bytes(pipeline: Pipeline, relative: str, content: bytes) -> str:
    target = pipeline.landing_root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return str(target)


def test_every_line_lands_once_with_its_exact_file_and_number(java_available, tmp_path):
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

    assert pipeline.cdcw("land") == 0

    landed = [
        (row["source_name"], row["file_path"], row["line_number"], row["line"])
        for row in pipeline.rows("cdc_raw.datastream_lines")
    ]
    assert len(landed) == len(set(landed))
    assert set(landed) == expected

    # A second run lands nothing again.
    assert pipeline.cdcw("land") == 0
    assert len(pipeline.rows("cdc_raw.datastream_lines")) == len(expected)
