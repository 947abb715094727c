"""What the UDF wrappers hand back to Spark: the parsers' dicts as one Arrow column, a parser
bug as an error row of its own line, never as a failed batch."""

from __future__ import annotations

import pyarrow as pa

from python_udfs import debezium, registry

CHANGE_SUBSET = pa.struct(
    [
        ("error", pa.string()),
        ("key_json", pa.string()),
        ("row_image", pa.map_(pa.string(), pa.string())),
        ("order_ts", pa.int64()),
    ]
)


def failing_parser(line: str) -> dict[str, object]:
    if line == "bad":
        raise ValueError("boom")
    return {"key_json": '{"id":1}', "row_image": {"id": "1", "note": None}, "order_ts": 7}


def test_a_parser_bug_becomes_an_error_row_beside_the_good_rows():
    parse = registry.guarded(failing_parser)
    column = registry._column((parse(line) for line in ["ok", "bad"]), CHANGE_SUBSET)
    assert column.type == CHANGE_SUBSET
    assert column.to_pylist() == [
        {
            "error": None,
            "key_json": '{"id":1}',
            "row_image": [("id", "1"), ("note", None)],
            "order_ts": 7,
        },
        {
            "error": "internal error: ValueError: boom",
            "key_json": None,
            "row_image": None,
            "order_ts": None,
        },
    ]


def test_a_list_parser_bug_becomes_a_one_row_list():
    rows = registry.guarded_list(lambda line: [failing_parser(line)] * 2)
    column = registry._column([rows("ok"), rows("bad")], pa.list_(CHANGE_SUBSET))
    assert [len(row) for row in column.to_pylist()] == [2, 1]
    assert column.to_pylist()[1][0]["error"] == "internal error: ValueError: boom"


def test_a_real_parser_error_keeps_the_other_fields_null():
    result = debezium.flatten_record("not json", "pg")
    (row,) = registry._column([result], CHANGE_SUBSET).to_pylist()
    assert row["error"]
    assert row["key_json"] is None
    assert row["row_image"] is None
