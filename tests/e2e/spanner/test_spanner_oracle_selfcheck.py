"""Self-checks of the Spanner oracle on tiny inputs whose answer is written out by hand, and of
the bundled scenario's hand-derived facts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

from tests.e2e.oracle_core import BadInput

from .oracle import (
    canonical_numeric,
    expected_marts,
    expected_stream_status,
    timestamp_ns,
    timestamp_text,
    typed_value,
)
from .scenario import EXPECTED_STATUS, GSQL, PGSQL, build_scenario

DAY = "2024-06-03"
T = "t"
COLUMNS: dict[str, dict[str, Any]] = {"id": {"code": "INT64"}, "v": {"code": "STRING"}}


def _seconds(hms: str) -> str:
    return hms + ":00" if hms.count(":") == 1 else hms


def ts(hms: str) -> str:
    """A commit / heartbeat timestamp on DAY ('10:01' means 10:01:00)."""
    return f"{DAY}T{_seconds(hms)}Z"


def at(hms: str) -> datetime:
    """2024-06-03 at a wall-clock time (up to microseconds), UTC."""
    return datetime.fromisoformat(f"{DAY}T{_seconds(hms)}+00:00")


def data(
    token: str | None,
    hms: str,
    txn: str,
    mod_type: str,
    mods: list[tuple[dict[str, Any], dict[str, Any]] | tuple[dict, dict, dict]],
    *,
    seq: str = "0",
    records: int = 1,
    capture: str = "NEW_ROW",
    columns: dict[str, dict[str, Any]] | None = None,
    table: str = T,
) -> dict[str, Any]:
    """A PostgreSQL-shape data change record line; a mod is (keys, new_values[, old_values])."""
    columns = COLUMNS if columns is None else columns
    return {
        "partition_token": token,
        "data_change_record": {
            "commit_timestamp": hms if hms.startswith(DAY) else ts(hms),
            "record_sequence": seq,
            "server_transaction_id": txn,
            "is_last_record_in_transaction_in_partition": True,
            "table_name": table,
            "column_types": [
                {"name": name, "type": spec, "is_primary_key": name == "id", "ordinal_position": i}
                for i, (name, spec) in enumerate(columns.items(), start=1)
            ],
            "mods": [
                {"keys": m[0], "new_values": m[1], "old_values": m[2] if len(m) > 2 else {}}
                for m in mods
            ],
            "mod_type": mod_type,
            "value_capture_type": capture,
            "number_of_records_in_transaction": records,
            "number_of_partitions_in_transaction": 1,
            "transaction_tag": "",
            "is_system_transaction": False,
        },
    }


def hb(token: str, hms: str) -> dict[str, Any]:
    return {"partition_token": token, "heartbeat_record": {"timestamp": ts(hms)}}


def children(token: str | None, hms: str, *kids: tuple[str, list[str | None]]) -> dict[str, Any]:
    return {
        "partition_token": token,
        "child_partitions_record": {
            "start_timestamp": ts(hms),
            "record_sequence": "00000001",
            "child_partitions": [
                {"token": kid, "parent_partition_tokens": parents} for kid, parents in kids
            ],
        },
    }


def googlesql(line: dict[str, Any]) -> dict[str, Any]:
    """The same row in the GoogleSQL shape, JSON-typed fields as strings, INT64s as text."""
    [(kind, body)] = [(k, v) for k, v in line.items() if k != "partition_token"]
    body = json.loads(json.dumps(body))
    if kind == "data_change_record":
        for column in body["column_types"]:
            column["type"] = json.dumps(column["type"])
            column["ordinal_position"] = str(column["ordinal_position"])
        for mod in body["mods"]:
            for part in ("keys", "new_values", "old_values"):
                mod[part] = json.dumps(mod[part])
        for count in ("number_of_records_in_transaction", "number_of_partitions_in_transaction"):
            body[count] = str(body[count])
    struct: dict[str, Any] = {
        "data_change_record": [],
        "heartbeat_record": [],
        "child_partitions_record": [],
    }
    struct[kind] = [body]
    return {"partition_token": line["partition_token"], "ChangeRecord": [struct]}


def jsonl(*lines: dict[str, Any] | str) -> bytes:
    """JSON lines; a str is written as is (a malformed line)."""
    return ("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n").encode()


def files(stream: str = "s", **named: bytes) -> dict[str, bytes]:
    return {f"spanner/{stream}/{name}.jsonl": content for name, content in named.items()}


def snapshot_file(
    hms: str, *rows: dict[str, Any] | str, columns: dict[str, dict[str, Any]] | None = None
) -> bytes:
    """A snapshot file of table T read at ``hms``: its header, then a row per values object (a
    str is written as is)."""
    columns = COLUMNS if columns is None else columns
    header = {
        "snapshot": {
            "read_timestamp": ts(hms),
            "table": T,
            "column_types": [
                {"name": name, "type": spec, "is_primary_key": name == "id"}
                for name, spec in columns.items()
            ],
        }
    }
    return jsonl(header, *(r if isinstance(r, str) else {"values": r} for r in rows))


def history(marts: dict[str, Any], key: str | None = None) -> list[tuple[Any, ...]]:
    """History as (key_json, op, row_json, unavailable_columns, valid_from, valid_to)."""
    return [
        (h["key_json"], h["op"], h["row_json"], h["unavailable_columns"], h["valid_from"],
         h["valid_to"])
        for h in marts["cdc_history"]
        if key is None or h["key_json"] == key
    ]  # fmt: skip


def current(marts: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["key_json"]: c for c in marts["cdc_current"]}


def value_of(marts: dict[str, Any], key: str, column: str = "v") -> Any:
    return json.loads(current(marts)[key]["row_json"]).get(column, "<absent>")


def status(waves: list[dict[str, bytes]], stream: str = "s") -> tuple[Any, int, int]:
    [row] = [r for r in expected_stream_status(waves) if r["source_name"] == stream]
    return row["low_watermark"], row["open_partitions"], row["incomplete_transactions"]


def transaction_counts(waves: list[dict[str, bytes]], stream: str = "s") -> tuple[int, int]:
    [row] = [r for r in expected_stream_status(waves) if r["source_name"] == stream]
    return row["applied_transactions"], row["waiting_transactions"]


K1 = '{"id":1}'


# --------------------------------------------------------------------------------------------
# Partitions and the low watermark
# --------------------------------------------------------------------------------------------


def test_watermark_follows_split_merge_and_a_slow_parent() -> None:
    """Initial query -> a, b; a splits into a1, a2; a2 and b merge into m. The watermark is the
    minimum progress over open partitions; m's records wait until its slow parent a2 ends."""
    w1 = files(
        init=jsonl(children(None, "10:00:00", ("a", [None]), ("b", [None]))),
        a_1=jsonl(
            data("a", "10:01:00", "t1", "INSERT", [({"id": "1"}, {"v": "one"})]),
            data("a", "10:01:45", "t2", "UPDATE", [({"id": 1}, {"v": "two"})]),
            hb("a", "10:02:00"),
        ),
        b_1=jsonl(hb("b", "10:01:30")),
    )
    w2 = files(
        a_2=jsonl(children("a", "10:03:00", ("a1", ["a"]), ("a2", ["a"]))),
        a1_1=jsonl(hb("a1", "10:05:00")),
        b_2=jsonl(hb("b", "10:02:30")),
    )
    w3 = files(
        b_3=jsonl(children("b", "10:04:00", ("m", ["a2", "b"]))),
        a2_1=jsonl(hb("a2", "10:03:30")),
        m_1=jsonl(
            data("m", "10:04:30", "t3", "UPDATE", [({"id": 1}, {"v": "three"})]),
            hb("m", "10:06:00"),
        ),
    )
    w4 = files(a2_2=jsonl(children("a2", "10:04:00", ("m", ["a2", "b"]))))
    waves = [w1, w2, w3, w4]
    # a (10:02) and b (10:01:30, heartbeats only) are open; the null partition has ended
    assert status(waves[:1]) == (at("10:01:30"), 2, 0)
    assert value_of(expected_marts(waves[:1]), K1) == "one"
    # a has ended; a2 is announced without lines: it counts with its start (10:03); b holds
    assert status(waves[:2]) == (at("10:02:30"), 3, 0)
    assert value_of(expected_marts(waves[:2]), K1) == "two"
    # b has ended, m announced and already has records, but a2 is still open at 10:03:30
    assert status(waves[:3]) == (at("10:03:30"), 3, 0)
    assert value_of(expected_marts(waves[:3]), K1) == "two"
    # a2 has ended: a1 (10:05) and m (10:06) remain
    assert status(waves) == (at("10:05:00"), 2, 0)
    # t1 (10:01), t2 (10:01:45), t3 (10:04:30), each complete: applied once the watermark
    # reaches its commit, waiting until then
    assert [transaction_counts(waves[:n]) for n in range(1, 5)] == [(1, 1), (2, 0), (2, 1), (3, 0)]
    assert history(expected_marts(waves)) == [
        (K1, "insert", '{"id":1,"v":"one"}', [], at("10:01:00"), at("10:01:45")),
        (K1, "update", '{"id":1,"v":"two"}', [], at("10:01:45"), at("10:04:30")),
        (K1, "update", '{"id":1,"v":"three"}', [], at("10:04:30"), None),
    ]


def test_announced_partition_without_lines_holds_the_watermark_at_its_start() -> None:
    """A child with no line yet counts with its start_timestamp; a change exactly at the
    watermark applies (<=)."""
    base = files(
        init=jsonl(children(None, "10:00:00", ("a", [None]), ("b", [None]))),
        a=jsonl(
            data("a", "10:00:10", "t1", "INSERT", [({"id": 1}, {"v": "x"})]), hb("a", "10:01:00")
        ),
    )
    assert status([base]) == (at("10:00:00"), 2, 0)
    assert expected_marts([base])["cdc_history"] == []
    early = files(b_1=jsonl(hb("b", "10:00:09")))
    assert status([base, early]) == (at("10:00:09"), 2, 0)
    assert expected_marts([base, early])["cdc_current"] == []
    exact = files(b_2=jsonl(hb("b", "10:00:10")))
    assert status([base, early, exact]) == (at("10:00:10"), 2, 0)
    assert value_of(expected_marts([base, early, exact]), K1) == "x"


def test_no_open_partition_means_everything_landed_counts() -> None:
    wave = files(
        init=jsonl(children(None, "10:00:00", ("a", [None]))),
        a=jsonl(
            data("a", "10:01:00", "t1", "INSERT", [({"id": 1}, {"v": "x"})]),
            children("a", "10:02:00"),  # ends without children
        ),
    )
    assert status([wave]) == (None, 0, 0)
    assert value_of(expected_marts([wave]), K1) == "x"


# --------------------------------------------------------------------------------------------
# Transactions
# --------------------------------------------------------------------------------------------


def test_a_transaction_waits_for_all_its_records_even_below_the_watermark() -> None:
    """tx has two records in two partitions. b's later file lands first, so the watermark passes
    tx before its b record lands; a re-delivered copy of its a record does not complete it."""
    a_file = jsonl(
        data("a", "10:01:00", "tx", "INSERT", [({"id": 1}, {"v": "a-side"})], seq="1", records=2),
        data("a", "10:01:30", "ty", "INSERT", [({"id": 3}, {"v": "alone"})]),
        hb("a", "10:02:00"),
    )
    w1 = files(
        init=jsonl(children(None, "10:00:00", ("a", [None]), ("b", [None]))),
        a_1=a_file,
        b_2=jsonl(hb("b", "10:03:00")),
    )
    w2 = files(a_1_again=a_file)
    w3 = files(
        b_1=jsonl(
            data("b", "10:01:00", "tx", "INSERT", [({"id": 2}, {"v": "b-side"})], seq="2",
                 records=2),
            hb("b", "10:01:50"),
        )
    )  # fmt: skip
    for waves in ([w1], [w1, w2]):
        assert status(waves) == (at("10:02:00"), 2, 1)
        assert set(current(expected_marts(waves))) == {'{"id":3}'}
    marts = expected_marts([w1, w2, w3])
    assert status([w1, w2, w3]) == (at("10:02:00"), 2, 0)
    assert {k: c["last_committed_at"] for k, c in current(marts).items()} == {
        '{"id":1}': at("10:01:00"),
        '{"id":2}': at("10:01:00"),
        '{"id":3}': at("10:01:30"),
    }
    assert marts["cdc_quarantine"] == []


def test_one_version_per_transaction_in_record_sequence_order() -> None:
    """Records '9' and '10' of one transaction, landed in reverse: numeric order, one version
    (the state after the last change, its op); two mods of one key in one record: the later
    position wins."""
    w = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]))),
        p=jsonl(
            data("p", "10:01:00", "t9", "UPDATE", [({"id": 1}, {"v": "ten"})], seq="10",
                 records=2, capture="NEW_VALUES"),
            data("p", "10:01:00", "t9", "INSERT", [({"id": 1}, {"v": "nine"})], seq="9",
                 records=2),
            data("p", "10:02:00", "t10", "UPDATE",
                 [({"id": 1}, {"v": "first"}), ({"id": 1}, {"v": "second"})]),
            hb("p", "10:05:00"),
        ),
    )  # fmt: skip
    assert history(expected_marts([w])) == [
        (K1, "update", '{"id":1,"v":"ten"}', [], at("10:01:00"), at("10:02:00")),
        (K1, "update", '{"id":1,"v":"second"}', [], at("10:02:00"), None),
    ]


def test_order_is_by_instant_then_transaction_id() -> None:
    """Commit timestamps with 0, 3, 6 and 9 fractional digits sort as instants (text order is
    wrong here); at one commit timestamp the server_transaction_id breaks the tie."""
    lines = [
        data("p", "10:00:05", "t3", "UPDATE", [({"id": 1}, {"v": "c"})]),
        data("p", f"{DAY}T10:00:04.999999999Z", "t2", "UPDATE", [({"id": 1}, {"v": "b"})]),
        data("p", "10:00:05.000001", "t4", "UPDATE", [({"id": 1}, {"v": "d"})]),
        data("p", "10:00:04.999", "t1", "INSERT", [({"id": 1}, {"v": "a"})]),
        data("p", "10:01:00", "b-2", "UPDATE", [({"id": 2}, {"v": "second"})]),
        data("p", "10:01:00", "a-1", "INSERT", [({"id": 2}, {"v": "first"})]),
        hb("p", "10:05:00"),
    ]
    w = files(init=jsonl(children(None, "10:00:00", ("p", [None]))), p=jsonl(*lines))
    marts = expected_marts([w])
    assert [(h[2], h[4], h[5]) for h in history(marts, K1)] == [
        ('{"id":1,"v":"a"}', at("10:00:04.999"), at("10:00:04.999999")),
        ('{"id":1,"v":"b"}', at("10:00:04.999999"), at("10:00:05")),
        ('{"id":1,"v":"c"}', at("10:00:05"), at("10:00:05.000001")),
        ('{"id":1,"v":"d"}', at("10:00:05.000001"), None),
    ]
    assert [(h[1], h[2], h[4], h[5]) for h in history(marts, '{"id":2}')] == [
        ("insert", '{"id":2,"v":"first"}', at("10:01:00"), at("10:01:00")),
        ("update", '{"id":2,"v":"second"}', at("10:01:00"), None),
    ]
    assert current(marts)['{"id":2}']["last_op"] == "update"


# --------------------------------------------------------------------------------------------
# Value capture types and completion
# --------------------------------------------------------------------------------------------

ABC = {
    "id": {"code": "INT64"},
    "a": {"code": "STRING"},
    "b": {"code": "STRING"},
    "c": {"code": "INT64"},
}


def only(*names: str) -> dict[str, dict[str, Any]]:
    return {n: ABC[n] for n in ("id", *names)}


def test_value_capture_types_and_unknown_columns() -> None:
    p = "p"
    w = files(
        init=jsonl(children(None, "10:00:00", (p, [None]))),
        p=jsonl(
            data(p, "10:01", "t1", "INSERT", [({"id": 1}, {"a": "a1", "b": "b1", "c": 1})],
                 capture="NEW_VALUES", columns=ABC),
            data(p, "10:02", "t2", "UPDATE", [({"id": 1}, {"a": "a2"}, {"a": "a1"})],
                 capture="OLD_AND_NEW_VALUES", columns=only("a")),
            data(p, "10:03", "t3", "UPDATE", [({"id": 1}, {"c": "2"})],
                 capture="NEW_VALUES", columns=only("c")),
            data(p, "10:04", "t4", "UPDATE", [({"id": 1}, {"a": "a3", "b": "b3", "c": 3})],
                 capture="NEW_ROW", columns=ABC),
            data(p, "10:05", "t5", "UPDATE",
                 [({"id": 1}, {"a": "a3", "b": "b3", "c": 3}, {"b": "b3"})],
                 capture="NEW_ROW_AND_OLD_VALUES", columns=ABC),
            data(p, "10:06", "t6", "UPDATE", [({"id": 2}, {"b": "x"})],
                 capture="NEW_VALUES", columns=only("b")),
            data(p, "10:07", "t7", "UPDATE", [({"id": 2}, {"a": None}, {"a": "old"})],
                 capture="OLD_AND_NEW_VALUES", columns=only("a")),
            data(p, "10:08", "t8", "UPDATE", [({"id": 2}, {"a": None, "b": "x", "c": 5},
                                               {"c": 4})],
                 capture="NEW_ROW_AND_OLD_VALUES", columns=ABC),
            data(p, "10:09", "t9", "DELETE", [({"id": 3}, {})], columns=ABC),
            hb(p, "10:10"),
        ),
    )  # fmt: skip
    marts = expected_marts([w])
    assert history(marts) == [
        (K1, "insert", '{"a":"a1","b":"b1","c":1,"id":1}', [], at("10:01"), at("10:02")),
        (K1, "update", '{"a":"a2","b":"b1","c":1,"id":1}', [], at("10:02"), at("10:03")),
        (K1, "update", '{"a":"a2","b":"b1","c":2,"id":1}', [], at("10:03"), at("10:04")),
        # the NEW_ROW_AND_OLD_VALUES update at 10:05 writes the same values: no version
        (K1, "update", '{"a":"a3","b":"b3","c":3,"id":1}', [], at("10:04"), None),
        # first seen through partial updates: unknown columns are absent and listed; NULL is
        # a known value
        ('{"id":2}', "update", '{"b":"x","id":2}', ["a", "c"], at("10:06"), at("10:07")),
        ('{"id":2}', "update", '{"a":null,"b":"x","id":2}', ["c"], at("10:07"), at("10:08")),
        ('{"id":2}', "update", '{"a":null,"b":"x","c":5,"id":2}', [], at("10:08"), None),
    ]
    # the delete of a key never seen opens and closes nothing
    assert set(current(marts)) == {K1, '{"id":2}'}
    assert current(marts)[K1]["last_committed_at"] == at("10:04")


def test_table_columns_come_from_every_landed_record_of_the_table() -> None:
    """A partial update names only its own columns; the table's other columns are known from
    another key's record of the same table, even one still waiting above the watermark, and
    never from another table."""
    w = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]), ("q", [None]))),
        p=jsonl(
            data("p", "10:01", "t1", "UPDATE", [({"id": 7}, {"b": "x"})], capture="NEW_VALUES",
                 columns=only("b")),
            hb("p", "10:02"),
        ),
        q=jsonl(
            data("q", "10:01:30", "t2", "INSERT", [({"id": 9}, {"a": "z", "d": True})],
                 columns={"id": ABC["id"], "a": ABC["a"], "d": {"code": "BOOL"}},
                 table="other"),
            data("q", "10:03", "t3", "INSERT", [({"id": 8}, {"a": "", "b": "", "c": 0})],
                 columns=ABC),
        ),
    )  # fmt: skip
    assert status([w]) == (at("10:02"), 2, 0)
    marts = expected_marts([w])
    assert [(h["source_table"], h["key_json"], h["row_json"], h["unavailable_columns"])
            for h in marts["cdc_history"]] == [
        ("other", '{"id":9}', '{"a":"z","d":true,"id":9}', []),
        (T, '{"id":7}', '{"b":"x","id":7}', ["a", "c"]),
    ]  # fmt: skip


def test_delete_closes_and_a_reinsert_opens_a_new_version() -> None:
    w = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]))),
        p=jsonl(
            data("p", "10:01", "t1", "INSERT", [({"id": 1}, {"v": "x"})]),
            data("p", "10:02", "t2", "DELETE", [({"id": 1}, {}, {"v": "x"})],
                 capture="OLD_AND_NEW_VALUES"),
            data("p", "10:03", "t3", "DELETE", [({"id": 1}, {})]),
            hb("p", "10:04"),
        ),
    )  # fmt: skip
    assert history(expected_marts([w])) == [
        (K1, "insert", '{"id":1,"v":"x"}', [], at("10:01"), at("10:02")),
    ]
    assert expected_marts([w])["cdc_current"] == []
    again = files(
        p_2=jsonl(data("p", "10:05", "t4", "INSERT", [({"id": 1}, {"v": "x"})]), hb("p", "10:06"))
    )
    assert history(expected_marts([w, again])) == [
        (K1, "insert", '{"id":1,"v":"x"}', [], at("10:01"), at("10:02")),
        (K1, "insert", '{"id":1,"v":"x"}', [], at("10:05"), None),
    ]


# --------------------------------------------------------------------------------------------
# Values, shapes, bad lines
# --------------------------------------------------------------------------------------------

TYPED = {
    "id": {"code": "INT64"},
    "i": {"code": "INT64"},
    "i2": {"code": "INT64"},
    "f": {"code": "FLOAT64"},
    "f2": {"code": "FLOAT64"},
    "f3": {"code": "FLOAT64"},
    "f4": {"code": "FLOAT64"},
    "n": {"code": "NUMERIC"},
    "n2": {"code": "NUMERIC", "type_annotation": "PG_NUMERIC"},
    "n3": {"code": "NUMERIC"},
    "n4": {"code": "NUMERIC"},
    "bo": {"code": "BOOL"},
    "s": {"code": "STRING"},
    "by": {"code": "BYTES"},
    "d": {"code": "DATE"},
    "t": {"code": "TIMESTAMP"},
    "t2": {"code": "TIMESTAMP"},
    "j": {"code": "JSON"},
    "j2": {"code": "JSON", "type_annotation": "PG_JSONB"},
    "ai": {"code": "ARRAY", "array_element_type": {"code": "INT64"}},
    "af": {"code": "ARRAY", "array_element_type": {"code": "FLOAT64"}},
    "at": {"code": "ARRAY", "array_element_type": {"code": "TIMESTAMP"}},
    "nul": {"code": "STRING"},
}
RAW_ROW = {
    "i": 9007199254740992,
    "i2": "-7",
    "f": "NaN",
    "f2": "Infinity",
    "f3": "-Infinity",
    "f4": 0.1,
    "n": "12.50",
    "n2": "10.000",
    "n3": "12345678901234567890.123456789",
    "n4": "9007199254740993",
    "bo": False,
    "s": "ü ✓",
    "by": "AAEC/w==",
    "d": "2024-02-29",
    "t": "2024-06-03T12:00:00.123456789+02:00",
    "t2": "2024-06-03T10:00:00Z",
    "j": '{"b": [1, 2.5, null], "a": {"z": 12345678901234567891, "y": "ü"}}',
    "j2": '"text"',
    "ai": ["1", 2, None, "9007199254740993"],
    "af": ["NaN", 1.5],
    "at": ["2024-06-03T10:00:00.5Z"],
    "nul": None,
}


def only_typed(*names: str) -> dict[str, dict[str, Any]]:
    return {n: TYPED[n] for n in ("id", *names)}


def test_every_type_code_is_typed_per_contract() -> None:
    line = data("p", "10:01", "t1", "INSERT", [({"id": "9007199254740993"}, RAW_ROW)],
                columns=TYPED)  # fmt: skip
    w = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]))), p=jsonl(line, hb("p", "10:02"))
    )
    [cur] = expected_marts([w])["cdc_current"]
    assert cur["key_json"] == '{"id":"9007199254740993"}'
    assert json.loads(cur["row_json"]) == {
        "id": "9007199254740993",
        "i": 9007199254740992,
        "i2": -7,
        "f": "NaN",
        "f2": "Infinity",
        "f3": "-Infinity",
        "f4": 0.1,
        "n": 12.5,
        "n2": 10,
        "n3": "12345678901234567890.123456789",
        "n4": "9007199254740993",
        "bo": False,
        "s": "ü ✓",
        "by": "AAEC/w==",
        "d": "2024-02-29",
        "t": "2024-06-03T10:00:00.123456Z",
        "t2": "2024-06-03T10:00:00.000000Z",
        "j": {"a": {"y": "ü", "z": 12345678901234567891}, "b": [1, 2.5, None]},
        "j2": "text",
        "ai": [1, 2, None, "9007199254740993"],
        "af": ["NaN", 1.5],
        "at": ["2024-06-03T10:00:00.500000Z"],
        "nul": None,
    }
    # exact spellings: integral NUMERIC as an integer, keys sorted inside JSON columns
    for text in ('"n2":10,', '"n":12.5,', '"j":{"a":{"y":"ü","z":12345678901234567891},'):
        assert text in cur["row_json"]
    assert cur["source_system"] == "spanner" and cur["source_table"] == T


def test_value_helpers() -> None:
    assert canonical_numeric(Decimal("18.90")) == 18.9
    assert canonical_numeric(Decimal("-0.5")) == -0.5
    assert canonical_numeric(Decimal("12345678901234567.890")) == "12345678901234567.89"
    assert canonical_numeric(Decimal("9007199254740992")) == 9007199254740992
    assert timestamp_ns("2024-06-03T10:00:04.999999999Z") > timestamp_ns("2024-06-03T10:00:04.999Z")
    assert timestamp_ns("1970-01-01T00:00:01Z") == 1_000_000_000
    assert timestamp_text(timestamp_ns("2024-06-03T00:30:00.0000019-01:00")) == (
        "2024-06-03T01:30:00.000001Z"
    )
    for value, code in [
        ("9223372036854775808", "INT64"),
        (1.5, "INT64"),
        ("1.5", "FLOAT64"),
        (True, "STRING"),
        ("2024-06-31", "DATE"),
        ("2024-06-03 10:00:00", "TIMESTAMP"),
        ("not base64!", "BYTES"),
        (12.5, "NUMERIC"),
        ("[1,", "JSON"),
        ("NaN", "JSON"),
        ("yes", "BOOL"),
    ]:
        with pytest.raises(BadInput):
            typed_value(value, {"code": code}, "x")


def test_googlesql_shape_with_json_strings_reads_like_postgresql_shape() -> None:
    lines = [
        children(None, "10:00:00", ("p", [None])),
        data("p", "10:01", "t1", "INSERT", [({"id": "9007199254740993"}, RAW_ROW)], columns=TYPED),
        data("p", "10:02", "t2", "UPDATE", [({"id": "9007199254740993"}, {"s": "new"})],
             capture="NEW_VALUES", columns=only_typed("s")),
        hb("p", "10:03"),
    ]  # fmt: skip
    pg = expected_marts([files("pg", a=jsonl(*lines))])
    gsql = expected_marts([files("gsql", a=jsonl(*map(googlesql, lines)))])
    assert gsql["cdc_quarantine"] == pg["cdc_quarantine"] == []
    for mart in ("cdc_current", "cdc_history"):
        assert [{**r, "source_name": "-"} for r in gsql[mart]] == [
            {**r, "source_name": "-"} for r in pg[mart]
        ]
    assert len(pg["cdc_history"]) == 2


def test_bad_lines_are_quarantined_and_good_ones_around_them_apply() -> None:
    cols = {"id": {"code": "INT64"}, "v": {"code": "STRING"}, "d": {"code": "DATE"},
            "by": {"code": "BYTES"}, "f": {"code": "FLOAT64"}, "j": {"code": "JSON"}}  # fmt: skip

    def insert(new: dict[str, Any], **extra: Any) -> dict[str, Any]:
        return data("p", "10:01:30", "tb", "INSERT", [({"id": 2}, new)], columns=cols, **extra)

    two_kinds = googlesql(hb("p", "10:30"))
    two_kinds["ChangeRecord"][0]["data_change_record"] = [
        googlesql(insert({"v": "x"}))["ChangeRecord"][0]["data_change_record"][0]
    ]
    no_token = insert({"v": "x"})
    del no_token["partition_token"]
    lines = [
        data("p", "10:01", "t1", "INSERT", [({"id": 1}, {"v": "a"})]),  # 1 good
        '{"partition_token": "p", "heartbeat_record": {"timestamp": "2024-06-03T10:3',  # 2
        {"partition_token": "p", "partition_end_record": {"end_timestamp": ts("10:30")}},  # 3
        two_kinds,  # 4: two records in one ChangeRecord
        insert({"v": "x", "d": "2024-13-01"}),  # 5
        insert({"v": "x", "by": "not base64!"}),  # 6
        insert({"v": "x", "f": "fast"}),  # 7
        insert({"v": "x", "j": "{bad"}),  # 8
        insert({"v": "x", "extra": 1}),  # 9: no type for this column
        data("p", "10:01:30", "tb", "UPSERT", [({"id": 2}, {"v": "x"})]),  # 10
        no_token,  # 11
        data("p", "10:01:30", "tb", "INSERT", [({"id": "2x"}, {"v": "x"})]),  # 12: bad key
        {"partition_token": "p", "heartbeat_record": {"timestamp": "2024-06-03T10:30:00"}},  # 13
        data("p", "10:02", "t2", "UPDATE", [({"id": 1}, {"v": "b"})]),  # 14 good
        hb("p", "10:03"),  # 15 good
    ]
    w = files(init=jsonl(children(None, "10:00:00", ("p", [None]))), p=jsonl(*lines))
    marts = expected_marts([w])
    assert [(q["file_path"], q["line_number"]) for q in marts["cdc_quarantine"]] == [
        ("spanner/s/p.jsonl", n) for n in range(2, 14)
    ]
    assert all(q["reason"] and q["source_name"] == "s" for q in marts["cdc_quarantine"])
    # bad lines report no progress: the watermark is the good heartbeat's, not 10:30
    assert status([w]) == (at("10:03"), 1, 0)
    assert [(h[1], h[2]) for h in history(marts)] == [
        ("insert", '{"id":1,"v":"a"}'),
        ("update", '{"id":1,"v":"b"}'),
    ]


# --------------------------------------------------------------------------------------------
# Initial snapshots
# --------------------------------------------------------------------------------------------


def test_a_snapshot_waits_for_the_watermark_and_sits_between_the_changes_around_it() -> None:
    """Read at 10:02: after the change committed at 10:02 itself, before the one a nanosecond
    later; it applies once the watermark reaches 10:02, not before any partition is known."""
    snap = {"snapshot/t/0001": snapshot_file("10:02", {"id": 1, "v": "read"}, {"id": 2, "v": "x"})}
    alone = files(**snap)
    assert expected_marts([alone])["cdc_history"] == []
    assert expected_stream_status([alone])[0]["waiting_snapshot_rows"] == 2
    log = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]))),
        p=jsonl(data("p", "10:01", "t1", "INSERT", [({"id": 1}, {"v": "a"})]), hb("p", "10:01:30")),
    )
    assert history(expected_marts([alone, log])) == [
        (K1, "insert", '{"id":1,"v":"a"}', [], at("10:01"), None)
    ]
    later = files(
        p2=jsonl(
            data("p", "10:02", "t2", "UPDATE", [({"id": 1}, {"v": "at"})]),
            data("p", "2024-06-03T10:02:00.000000001Z", "t3", "UPDATE", [({"id": 1}, {"v": "z"})]),
            hb("p", "10:03"),
        )
    )
    marts = expected_marts([alone, log, later])
    assert history(marts, K1) == [
        (K1, "insert", '{"id":1,"v":"a"}', [], at("10:01"), at("10:02")),
        (K1, "update", '{"id":1,"v":"at"}', [], at("10:02"), at("10:02")),
        (K1, "snapshot", '{"id":1,"v":"read"}', [], at("10:02"), at("10:02")),
        (K1, "update", '{"id":1,"v":"z"}', [], at("10:02"), None),
    ]
    assert history(marts, '{"id":2}') == [
        ('{"id":2}', "snapshot", '{"id":2,"v":"x"}', [], at("10:02"), None)
    ]
    assert expected_stream_status([alone, log, later])[0]["waiting_snapshot_rows"] == 0


def test_a_snapshot_completes_partial_images_after_it_and_counts_once() -> None:
    """Every column of the snapshot row is known to the NEW_VALUES update after it; the same
    file landed again under another name adds nothing."""
    cols = {**COLUMNS, "w": {"code": "STRING"}}
    snapshot = snapshot_file("10:00:30", {"id": 1, "v": "a", "w": "kept"}, columns=cols)
    w = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]))),
        p=jsonl(
            data("p", "10:01", "t1", "UPDATE", [({"id": 1}, {"v": "b"})], capture="NEW_VALUES"),
            hb("p", "10:02"),
        ),
        **{"snapshot/0001": snapshot, "snapshot/0001.again": snapshot},
    )  # fmt: skip
    assert [(h[1], h[2], h[3]) for h in history(expected_marts([w]))] == [
        ("snapshot", '{"id":1,"v":"a","w":"kept"}', []),
        ("update", '{"id":1,"v":"b","w":"kept"}', []),
    ]


def test_a_snapshot_header_or_row_that_does_not_fit_is_quarantined() -> None:
    """A bad header takes every row of its file with it; a bad row goes alone."""
    bad_header = jsonl({"snapshot": {"read_timestamp": "10:00", "table": T}}, {"values": {}})
    rows = snapshot_file(
        "10:00:30",
        {"id": 1, "v": "a"},
        {"id": 2},  # 3: a column missing
        {"id": 3, "v": "c", "x": 1},  # 4: a column the header lacks
        {"id": "4x", "v": "d"},  # 5: a value that does not fit
        '{"values": ',  # 6
        {"id": 7, "v": "g"},
    )
    w = files(
        init=jsonl(children(None, "10:00:00", ("p", [None]))),
        p=jsonl(hb("p", "10:02")),
        **{"snapshot/bad": bad_header, "snapshot/rows": rows},
    )
    marts = expected_marts([w])
    assert [(q["file_path"], q["line_number"]) for q in marts["cdc_quarantine"]] == [
        ("spanner/s/snapshot/bad.jsonl", 1),
        ("spanner/s/snapshot/bad.jsonl", 2),
        *(("spanner/s/snapshot/rows.jsonl", n) for n in (3, 4, 5, 6)),
    ]
    assert [h[0] for h in history(marts)] == [K1, '{"id":7}']


# --------------------------------------------------------------------------------------------
# The bundled scenario
# --------------------------------------------------------------------------------------------

SCENARIO = build_scenario()
WAVES = SCENARIO.waves


@pytest.mark.parametrize("wave_count", range(1, len(WAVES) + 1))
def test_scenario_stream_status_matches_the_hand_derived_one(wave_count: int) -> None:
    got = {
        r["source_name"]: (r["low_watermark"], r["open_partitions"], r["incomplete_transactions"])
        for r in expected_stream_status(WAVES[:wave_count])
    }
    wanted = {}
    for stream, per_wave in EXPECTED_STATUS.items():
        text, open_partitions, incomplete = per_wave[wave_count - 1]
        wanted[stream] = (datetime.fromisoformat(text), open_partitions, incomplete)
    assert got == wanted


def test_scenario_is_deterministic_and_documented() -> None:
    assert build_scenario().waves == WAVES
    assert len(WAVES) == 4
    assert {wave for wave, _, _ in SCENARIO.coverage} == {1, 2, 3, 4}
    every_file = {path for wave in WAVES for path in wave}
    assert {path.split("/")[1] for path in every_file} == {GSQL, PGSQL}


def _scenario_records() -> list[tuple[str, dict[str, Any]]]:
    """(stream, data change record body) of every good-looking data line of the scenario."""
    out = []
    for wave in WAVES:
        for path, content in wave.items():
            for raw in content.decode().splitlines():
                try:
                    line = json.loads(raw)
                except ValueError:
                    continue
                body = line.get("data_change_record")
                if "ChangeRecord" in line:
                    found = line["ChangeRecord"][0].get("data_change_record")
                    body = found[0] if found else None
                if body:
                    out.append((path.split("/")[1], body))
    return out


def test_scenario_exercises_the_traps() -> None:
    """Guards the scenario itself: the shapes, capture types, type codes and spellings the
    pipeline must handle are all there."""
    records = _scenario_records()
    captures = {body["value_capture_type"] for _, body in records}
    assert captures == {"OLD_AND_NEW_VALUES", "NEW_VALUES", "NEW_ROW", "NEW_ROW_AND_OLD_VALUES"}
    codes = set()
    for _, body in records:
        for column in body["column_types"]:
            spec = column["type"]
            spec = json.loads(spec) if isinstance(spec, str) else spec
            codes.add(spec["code"])
            if spec["code"] == "ARRAY":
                codes.add("ARRAY<" + spec["array_element_type"]["code"] + ">")
    assert codes >= {
        "INT64", "FLOAT64", "NUMERIC", "BOOL", "STRING", "BYTES", "DATE", "TIMESTAMP", "JSON",
        "ARRAY<STRING>", "ARRAY<INT64>", "ARRAY<FLOAT64>",
    }  # fmt: skip
    gsql = [body for stream, body in records if stream == GSQL]
    assert any(isinstance(b["mods"][0]["new_values"], str) for b in gsql)
    assert any(isinstance(b["mods"][0]["new_values"], dict) for b in gsql)
    assert any(b["number_of_records_in_transaction"] == "2" for b in gsql)
    fractions = {
        len(b["commit_timestamp"][20:-1]) if "." in b["commit_timestamp"] else 0 for _, b in records
    }
    assert {0, 3, 6, 9} <= fractions
    assert any(len(b["mods"]) > 1 for _, b in records)
    assert {b["record_sequence"] for _, b in records} >= {"9", "10"}


# Hand-verified facts of the bundled scenario, wave by wave: the marts after waves 1..4 and one
# test per rule.

MARTS = [expected_marts(WAVES[:n]) for n in range(1, len(WAVES) + 1)]
PRODUCTS = (GSQL, "Products")
ORDERS = (GSQL, "Orders")
ACCOUNTS = (PGSQL, "accounts")
TRANSFERS = (PGSQL, "transfers")


def row(wave: int, stream: str, table: str, key: str) -> dict[str, Any] | None:
    """The current row of a key after ``wave``."""
    for c in MARTS[wave - 1]["cdc_current"]:
        if (c["source_name"], c["source_table"], c["key_json"]) == (stream, table, key):
            return c
    return None


def col(wave: int, stream: str, table: str, key: str, column: str) -> Any:
    found = row(wave, stream, table, key)
    assert found is not None, (stream, table, key)
    return json.loads(found["row_json"]).get(column, "<absent>")


def versions(wave: int, stream: str, table: str, key: str) -> list[dict]:
    return [
        h
        for h in MARTS[wave - 1]["cdc_history"]
        if (h["source_name"], h["source_table"], h["key_json"]) == (stream, table, key)
    ]


def test_scenario_quarantines_its_bad_lines_wave_by_wave() -> None:
    assert [len(m["cdc_quarantine"]) for m in MARTS] == [1, 5, 6, 7]


def test_scenario_update_above_the_watermark_waits_for_a_heartbeat_only_partition() -> None:
    # wave 1: the 10:01:45.25 price update waits behind heartbeat-only g2 (10:01:30)
    assert col(1, *PRODUCTS, '{"ProductId":1}', "Price") == 249.99
    assert col(2, *PRODUCTS, '{"ProductId":1}', "Price") == 229.99


def test_scenario_values_keep_their_types() -> None:
    p1 = json.loads(row(1, *PRODUCTS, '{"ProductId":1}')["row_json"])
    assert p1["Views"] == "9007199254740993"
    assert p1["Ratings"] == [4.5, "NaN", None]
    assert p1["Attributes"]["sku"] == 12345678901234567891
    assert col(1, *PRODUCTS, '{"ProductId":2}', "Views") == 9007199254740992
    assert col(1, *PRODUCTS, '{"ProductId":2}', "UpdatedAt") == "2024-06-03T09:59:59.999999Z"
    assert col(1, *PRODUCTS, '{"ProductId":3}', "Price") == 10


def test_scenario_records_of_one_key_in_one_transaction_make_one_version() -> None:
    # transaction with records '9' and '10' of one key: one version, the state after '10'
    big = versions(1, *TRANSFERS, '{"transfer_id":"9007199254740993"}')
    assert [(h["op"], json.loads(h["row_json"])["memo"]) for h in big] == [
        ("update", "initial (corrected)")
    ]


def test_scenario_transaction_waits_for_its_records_in_every_partition() -> None:
    # same commit timestamp, two transactions: 7305118803 applies in wave 2, 7305118804 waits
    # for its p2 record (wave 3) although the watermark passed it in wave 2; the accounts
    # snapshot read at 10:02:30 (wave 2) already holds acc-002's balance after it
    assert col(1, *ACCOUNTS, '{"account_id":"acc-001"}', "balance") == 1250.5
    assert col(2, *ACCOUNTS, '{"account_id":"acc-001"}', "balance") == 1200.5
    acc2 = '{"account_id":"acc-002"}'
    balances = [
        (h["op"], json.loads(h["row_json"])["balance"]) for h in versions(2, *ACCOUNTS, acc2)
    ]
    assert balances == [
        ("insert", "99999999999999999999999999999.999999999"),
        ("update", "99999999999999999999999999999.999999999"),
        ("snapshot", "99999999999999999999999999899.999999999"),
    ]
    assert col(2, *ACCOUNTS, acc2, "owner") == "Rear Admiral Grace Hopper"
    assert row(2, *TRANSFERS, '{"transfer_id":42}') is None
    assert col(3, *ACCOUNTS, acc2, "balance") == "99999999999999999999999999899.999999999"
    assert col(3, *TRANSFERS, '{"transfer_id":42}', "fx_rate") == "-Infinity"
    assert [h["op"] for h in versions(3, *ACCOUNTS, acc2)] == ["insert", "update", "update"]


def test_scenario_commit_timestamps_of_any_precision_order_by_instant() -> None:
    # instant order of 0/3/6/9-digit commit timestamps
    kettle = versions(2, *PRODUCTS, '{"ProductId":2}')
    assert [json.loads(h["row_json"])["Name"] for h in kettle] == [
        "Tea Kettle", "Tea Kettle v1", "Tea Kettle v2", "Tea Kettle v3", "Tea Kettle v4",
    ]  # fmt: skip


def test_scenario_key_first_seen_through_partial_updates_has_unavailable_columns() -> None:
    # first seen through partial updates
    p7 = '{"ProductId":7}'
    assert row(2, *PRODUCTS, p7)["unavailable_columns"] == [
        "Attributes", "Name", "Ratings", "Released", "Tags", "Thumbnail", "UpdatedAt", "Views",
        "Weight",
    ]  # fmt: skip
    assert row(3, *PRODUCTS, p7)["unavailable_columns"] != []  # NEW_ROW update still waits
    assert row(4, *PRODUCTS, p7)["unavailable_columns"] == []
    assert col(4, *PRODUCTS, p7, "Views") == 1200
    acc4 = '{"account_id":"acc-004"}'
    assert row(1, *ACCOUNTS, acc4) is None
    # the accounts snapshot read at 10:02:30 lands with the NEW_VALUES update at 10:02:40
    assert [(h["op"], h["unavailable_columns"]) for h in versions(2, *ACCOUNTS, acc4)] == [
        ("snapshot", []),
        ("update", []),
    ]
    assert col(2, *ACCOUNTS, acc4, "limits") == ["9007199254740993"]
    assert row(4, *ACCOUNTS, acc4)["unavailable_columns"] == []


def test_scenario_child_partition_waits_for_its_announced_sibling() -> None:
    # g1a's inserts wait for announced g1b (wave 2), apply in wave 3 with the delete of 5
    assert row(2, *PRODUCTS, '{"ProductId":4}') is None
    assert col(3, *PRODUCTS, '{"ProductId":4}', "UpdatedAt") == "2024-06-03T10:04:20.000001Z"
    assert row(3, *PRODUCTS, '{"ProductId":5}') is None
    assert len(versions(3, *PRODUCTS, '{"ProductId":5}')) == 1
    assert col(4, *PRODUCTS, '{"ProductId":5}', "Name") == "Coffee Scale (refurbished)"


def test_scenario_merged_partition_waits_for_its_parents_and_its_other_half() -> None:
    # merge: g23's record waits for g3 (wave 3), and for its g1b half (wave 4)
    bob = '{"CustomerId":"c-bob","OrderId":1002}'
    assert col(3, *ORDERS, bob, "Status") == "placed"
    assert col(3, *PRODUCTS, '{"ProductId":6}', "InStock") is True
    assert row(4, *ORDERS, bob) is None
    assert [json.loads(h["row_json"])["Status"] for h in versions(4, *ORDERS, bob)] == [
        "placed",
        "shipped",
    ]
    assert col(4, *PRODUCTS, '{"ProductId":6}', "InStock") is False
    ada = '{"CustomerId":"c-ada","OrderId":1001}'
    assert col(3, *ORDERS, ada, "Status") == "shipped"
    assert col(4, *ORDERS, ada, "Status") == "delivered"
    assert col(4, *ORDERS, '{"CustomerId":"c-cyd","OrderId":1003}', "Total") == (
        "1000000000000000000000.5"
    )


def test_scenario_key_seen_only_in_a_bad_line_and_a_snapshot_has_the_snapshots_row() -> None:
    # c-dan's only record is bad; the Orders snapshot read at the start lands in wave 3, and
    # again in wave 4
    dan = '{"CustomerId":"c-dan","OrderId":1004}'
    assert row(2, *ORDERS, dan) is None
    assert [(h["op"], h["valid_from"], h["valid_to"]) for h in versions(4, *ORDERS, dan)] == [
        ("snapshot", at("10:00:00"), None)
    ]


def test_scenario_snapshot_read_after_the_watermark_waits_and_agrees_with_the_log() -> None:
    # Products read at 10:06, landed in wave 1: it waits until wave 4, then every key's row is
    # what its changes up to 10:06 made, so no version comes of it
    shop = [{r["source_name"]: r for r in expected_stream_status(WAVES[:n])}[GSQL] for n in
            range(1, 5)]  # fmt: skip
    assert [status["waiting_snapshot_rows"] for status in shop] == [6, 6, 6, 0]
    assert not [h for h in MARTS[3]["cdc_history"] if h["op"] == "snapshot" and h[
        "source_table"] == "Products"]  # fmt: skip
    assert col(4, *PRODUCTS, '{"ProductId":6}', "InStock") is False  # 10:06:30, after it


def test_scenario_late_update_before_the_snapshot_overwrites_nothing() -> None:
    # acc-005: 10:02:20 (lands in wave 3), 10:02:25 (wave 2), snapshot read at 10:02:30 (wave 2)
    acc5 = '{"account_id":"acc-005"}'
    owners = [
        [(h["op"], json.loads(h["row_json"])["owner"]) for h in versions(n, *ACCOUNTS, acc5)]
        for n in (2, 3)
    ]
    assert owners == [
        [("insert", "Émilie du Châtelet"), ("update", "Gabrielle Émilie du Châtelet")],
        [
            ("insert", "Émilie du Châtelet"),
            ("update", "É. du Châtelet"),
            ("update", "Gabrielle Émilie du Châtelet"),
        ],
    ]


def test_scenario_no_op_update_makes_no_version_and_reinsert_after_delete_does() -> None:
    # no-op update makes no version; delete and re-insert
    assert len(versions(4, *ACCOUNTS, '{"account_id":"acc-001"}')) == 2
    acc3 = versions(4, *ACCOUNTS, '{"account_id":"acc-003"}')
    assert [(h["op"], h["valid_from"], h["valid_to"]) for h in acc3] == [
        ("insert", at("10:04:00"), at("10:05:20")),
        ("insert", at("10:07:00"), None),
    ]
    assert row(4, *TRANSFERS, '{"transfer_id":"9007199254740993"}') is None


def test_scenario_incomplete_transaction_above_the_watermark_waits() -> None:
    # 7305118814 (10:07:40) is incomplete and above the watermark
    assert col(4, *ACCOUNTS, '{"account_id":"acc-001"}', "balance") == 1200.5


def test_scenario_last_wave_has_every_key_in_utc() -> None:
    m4 = MARTS[3]
    assert (
        len({(h["source_name"], h["source_table"], h["key_json"]) for h in m4["cdc_history"]}) >= 15
    )
    assert all(c["last_committed_at"].tzinfo is UTC for c in m4["cdc_current"])
