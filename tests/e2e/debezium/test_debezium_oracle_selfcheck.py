"""Self-checks of the Debezium oracle on tiny inputs whose answer is written out by hand."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from .oracle import (
    PLACEHOLDER,
    PLACEHOLDER_BASE64,
    canonical_decimal,
    expected_marts,
    expected_pending,
    zoned_to_utc,
)
from .scenario import build_scenario, us

PH = PLACEHOLDER
PH64 = PLACEHOLDER_BASE64
ROOT = "debezium/s1/s1.public.t/partition=0"


def at(hms: str) -> datetime:
    """2024-06-03 at a wall-clock time, UTC."""
    return datetime.fromisoformat(f"2024-06-03T{hms}+00:00")


def micros(hms: str) -> int:
    return us(hms)


class Topic:
    """Builds kcat -J lines for one topic of server s1, without the schema envelope."""

    def __init__(self, table: str = "t", schema: str = "public") -> None:
        self.topic = f"s1.{schema}.{table}"
        self.schema = schema
        self.table = table
        self.offset = 0

    def line(self, key: Any, value: Any, offset: int | None = None) -> dict[str, Any]:
        if offset is None:
            offset = self.offset
            self.offset += 1
        return {
            "topic": self.topic,
            "partition": 0,
            "offset": offset,
            "ts": 1717400000000 + offset,
            "key": None if key is None else json.dumps(key),
            "payload": None if value is None else json.dumps(value),
        }

    def change(
        self,
        op: str,
        key: dict[str, Any] | None,
        lsn: int,
        tx: int,
        hms: str,
        after: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
        offset: int | None = None,
        processing_ms: int = 0,
    ) -> dict[str, Any]:
        ts = micros(hms)
        value = {
            "before": before,
            "after": after,
            "source": {
                "connector": "postgresql",
                "name": "s1",
                "ts_ms": ts // 1000,
                "snapshot": "true" if op == "r" else "false",
                "db": "db",
                "schema": self.schema,
                "table": self.table,
                "txId": tx,
                "lsn": lsn,
            },
            "op": op,
            "ts_ms": ts // 1000 + 500 + processing_ms,
        }
        return self.line(key, value, offset)


def jsonl(*records: dict[str, Any] | str) -> bytes:
    """JSON lines; a str is written as is (a malformed line)."""
    return ("\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n").encode()


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


def test_placeholder_fill_across_waves() -> None:
    """Text, bytes (base64 placeholder) and array ([placeholder]) take the latest earlier value,
    also when that value landed one or two waves earlier."""
    t = Topic()
    k = {"id": 1}
    full = {"id": 1, "title": "a", "body": "long", "bin": "AAE=", "tags": ["x", "y"]}
    w1 = {f"{ROOT}/1.jsonl": jsonl(t.change("r", k, 100, 1, "08:00:00", after=full))}
    w2 = {
        f"{ROOT}/2.jsonl": jsonl(
            t.change("u", k, 200, 2, "08:01:00",
                     after={"id": 1, "title": "b", "body": PH, "bin": PH64, "tags": ["z"]})
        )
    }  # fmt: skip
    w3 = {
        f"{ROOT}/3.jsonl": jsonl(
            t.change("u", k, 300, 3, "08:02:00",
                     after={"id": 1, "title": "c", "body": PH, "bin": PH64, "tags": [PH]})
        )
    }  # fmt: skip
    marts = expected_marts([w1, w2, w3])
    key = '{"id":1}'
    assert history(marts) == [
        (key, "snapshot", '{"bin":"AAE=","body":"long","id":1,"tags":["x","y"],"title":"a"}', [],
         at("08:00:00"), at("08:01:00")),
        (key, "update", '{"bin":"AAE=","body":"long","id":1,"tags":["z"],"title":"b"}', [],
         at("08:01:00"), at("08:02:00")),
        (key, "update", '{"bin":"AAE=","body":"long","id":1,"tags":["z"],"title":"c"}', [],
         at("08:02:00"), None),
    ]  # fmt: skip
    cur = current(marts)[key]
    assert cur["last_op"] == "update"
    assert cur["last_committed_at"] == at("08:02:00")
    assert cur["source_system"] == "debezium"
    assert cur["source_name"] == "s1"
    assert cur["source_table"] == "public.t"


def test_unknown_column_without_earlier_value() -> None:
    """No earlier value: the column is absent from row_json and listed (sorted); it becomes known
    once a real value comes; a late insert fills it retroactively."""
    t = Topic()
    k = {"id": 4}
    u1 = t.change("u", k, 200, 2, "08:01:00", after={"id": 4, "s": "a", "z": PH, "b": PH64})
    u2 = t.change("u", k, 300, 3, "08:02:00", after={"id": 4, "s": "a", "z": "zz", "b": PH64})
    w1 = {f"{ROOT}/1.jsonl": jsonl(u1, u2)}
    key = '{"id":4}'
    assert history(expected_marts([w1])) == [
        (key, "update", '{"id":4,"s":"a"}', ["b", "z"], at("08:01:00"), at("08:02:00")),
        (key, "update", '{"id":4,"s":"a","z":"zz"}', ["b"], at("08:02:00"), None),
    ]
    assert current(expected_marts([w1]))[key]["unavailable_columns"] == ["b"]
    late = t.change("c", k, 100, 1, "08:00:00", after={"id": 4, "s": "a", "z": "y", "b": "AA=="})
    marts = expected_marts([w1, {f"{ROOT}/2.jsonl": jsonl(late)}])
    assert history(marts) == [
        # the first update changes nothing once its placeholders are filled: no version, so the
        # insert stays open until the second update
        (key, "insert", '{"b":"AA==","id":4,"s":"a","z":"y"}', [], at("08:00:00"), at("08:02:00")),
        (key, "update", '{"b":"AA==","id":4,"s":"a","z":"zz"}', [], at("08:02:00"), None),
    ]


def test_primary_key_change_fill_and_halves_in_different_waves() -> None:
    """Delete of the old key + create of the new key at one lsn / txId: the create's
    placeholders take the old key's latest values; before the delete lands they are unknown."""
    t = Topic()
    r = t.change("r", {"id": 1}, 100, 1, "08:00:00", after={"id": 1, "s": "a", "body": "A"})
    u = t.change("u", {"id": 1}, 200, 2, "08:01:00", after={"id": 1, "s": "b", "body": "B"})
    c = t.change("c", {"id": 2}, 300, 3, "08:02:00", after={"id": 2, "s": "b", "body": PH})
    d = t.change("d", {"id": 1}, 300, 3, "08:02:00", before={"id": 1, "s": None, "body": None})
    tomb = t.line({"id": 1}, None)
    w1 = {f"{ROOT}/1.jsonl": jsonl(r, u, c)}
    w2 = {f"{ROOT}/2.jsonl": jsonl(d, tomb)}
    one = expected_marts([w1])
    assert history(one, '{"id":2}') == [
        ('{"id":2}', "insert", '{"id":2,"s":"b"}', ["body"], at("08:02:00"), None)
    ]
    assert set(current(one)) == {'{"id":1}', '{"id":2}'}
    two = expected_marts([w1, w2])
    assert history(two) == [
        ('{"id":1}', "snapshot", '{"body":"A","id":1,"s":"a"}', [], at("08:00:00"), at("08:01:00")),
        ('{"id":1}', "update", '{"body":"B","id":1,"s":"b"}', [], at("08:01:00"), at("08:02:00")),
        ('{"id":2}', "insert", '{"body":"B","id":2,"s":"b"}', [], at("08:02:00"), None),
    ]  # fmt: skip
    assert set(current(two)) == {'{"id":2}'}
    assert two["cdc_quarantine"] == []  # the tombstone is skipped, not quarantined


def test_truncate() -> None:
    """A truncate deletes every key of the table live at its lsn, including keys whose events
    land later; keys inserted above its lsn (landed earlier or later) live."""
    t = Topic()
    other = Topic(table="other")
    w1 = {
        f"{ROOT}/1.jsonl": jsonl(
            t.change("r", {"id": 1}, 100, 1, "08:00:00", after={"id": 1, "v": 1}),
            t.change("r", {"id": 2}, 100, 1, "08:00:00", after={"id": 2, "v": 2}),
            t.change("c", {"id": 3}, 600, 6, "08:06:00", after={"id": 3, "v": 3}),
            other.change("c", {"id": 1}, 150, 9, "08:00:30", after={"id": 1, "v": 9}),
        )
    }
    truncate = t.change("t", None, 500, 5, "08:05:00")
    w2 = {
        f"{ROOT}/2.jsonl": jsonl(
            truncate,
            t.change("c", {"id": 1}, 700, 7, "08:07:00", after={"id": 1, "v": 10}),
        ),
        "debezium/s1/late.jsonl": jsonl(
            t.change("c", {"id": 4}, 400, 4, "08:04:00", after={"id": 4, "v": 4}),
            {**truncate, "offset": 99},  # re-sent at a new offset
        ),
    }
    marts = expected_marts([w1, w2])
    assert [(h[0], h[1], h[4], h[5]) for h in history(marts)] == [
        ('{"id":1}', "insert", at("08:00:30"), None),  # the other table
        ('{"id":1}', "snapshot", at("08:00:00"), at("08:05:00")),
        ('{"id":1}', "insert", at("08:07:00"), None),
        ('{"id":2}', "snapshot", at("08:00:00"), at("08:05:00")),
        ('{"id":3}', "insert", at("08:06:00"), None),
        ('{"id":4}', "insert", at("08:04:00"), at("08:05:00")),
    ]
    live = sorted((c["source_table"], c["key_json"]) for c in marts["cdc_current"])
    assert live == [
        ("public.other", '{"id":1}'),
        ("public.t", '{"id":1}'),
        ("public.t", '{"id":3}'),
    ]


def test_snapshot_overlapping_streaming() -> None:
    """A streaming change below the snapshot's lsn, landing after it, goes before it in history
    and does not override current; one above overrides. A snapshot row read after a change with
    a higher lsn gets its valid_from clipped."""
    t = Topic()
    snap = {f"{ROOT}/1.jsonl": jsonl(
        t.change("r", {"id": 1}, 1000, 50, "08:00:00", after={"id": 1, "v": "snap"}),
        t.change("r", {"id": 2}, 1000, 50, "08:00:05", after={"id": 2, "v": "snap"}),
    )}  # fmt: skip
    late = {f"{ROOT}/2.jsonl": jsonl(
        t.change("u", {"id": 1}, 900, 40, "07:59:00", after={"id": 1, "v": "old"}),
        t.change("u", {"id": 2}, 1100, 60, "08:00:02", after={"id": 2, "v": "new"}),
    )}  # fmt: skip
    marts = expected_marts([snap, late])
    assert [(h[0], h[1], h[2], h[4], h[5]) for h in history(marts)] == [
        ('{"id":1}', "update", '{"id":1,"v":"old"}', at("07:59:00"), at("08:00:00")),
        ('{"id":1}', "snapshot", '{"id":1,"v":"snap"}', at("08:00:00"), None),
        ('{"id":2}', "snapshot", '{"id":2,"v":"snap"}', at("08:00:02"), at("08:00:02")),
        ('{"id":2}', "update", '{"id":2,"v":"new"}', at("08:00:02"), None),
    ]
    cur = current(marts)
    assert cur['{"id":1}']["last_op"] == "snapshot"
    assert cur['{"id":1}']["last_committed_at"] == at("08:00:00")
    assert json.loads(cur['{"id":2}']["row_json"])["v"] == "new"


def test_dedupe_and_bad_lines() -> None:
    """Same topic/partition/offset, or the same change (key, lsn, op) at a new offset with a later
    envelope ts_ms, counts once; bad lines are quarantined with 1-based line numbers."""
    t = Topic()
    ins = t.change("c", {"id": 1}, 100, 1, "08:00:00", after={"id": 1, "v": "a"})
    upd = t.change("u", {"id": 1}, 200, 2, "08:01:00", after={"id": 1, "v": "b"})
    resent = t.change("u", {"id": 1}, 200, 2, "08:01:00", after={"id": 1, "v": "b"},
                      processing_ms=60_000)  # fmt: skip
    assert resent["offset"] != upd["offset"] and resent["payload"] != upd["payload"]
    not_json = {**upd, "offset": 50, "payload": '{"before":null,"after":{"id":1'}
    unknown_op = t.change("x", {"id": 1}, 300, 3, "08:02:00", after={"id": 1, "v": "q"})
    no_lsn = t.change("u", {"id": 1}, 310, 3, "08:02:00", after={"id": 1, "v": "q"})
    no_lsn["payload"] = no_lsn["payload"].replace('"lsn": 310', '"lsn": "0/136"')
    tomb = t.line({"id": 1}, None)
    wave = {
        f"{ROOT}/a.jsonl": jsonl(ins, ins, "{broken", upd, not_json),
        f"{ROOT}/b.jsonl": jsonl(upd, resent, unknown_op, tomb, no_lsn),
    }
    marts = expected_marts([wave])
    assert [(h[1], h[2]) for h in history(marts)] == [
        ("insert", '{"id":1,"v":"a"}'),
        ("update", '{"id":1,"v":"b"}'),
    ]
    assert [(q["file_path"].split("/")[-1], q["line_number"]) for q in marts["cdc_quarantine"]] == [
        ("a.jsonl", 3),
        ("a.jsonl", 5),
        ("b.jsonl", 3),
        ("b.jsonl", 5),
    ]
    assert all(q["reason"] and q["source_name"] == "s1" for q in marts["cdc_quarantine"])


def test_transaction_grouping_and_no_op() -> None:
    """Several changes of one key in one txId make one version (state after the last, filled
    from the earlier changes of the same transaction); a state equal to the open version makes
    none; at an equal lsn a delete sorts before an insert."""
    t = Topic()
    wave = {
        f"{ROOT}/a.jsonl": jsonl(
            t.change("r", {"id": 2}, 100, 1, "08:00:00", after={"id": 2, "s": "a", "b": "x"}),
            t.change("u", {"id": 2}, 400, 7, "08:03:00", after={"id": 2, "s": "c", "b": PH}),
            t.change("u", {"id": 2}, 300, 7, "08:03:00", after={"id": 2, "s": "b", "b": "y"}),
            t.change("u", {"id": 2}, 500, 8, "08:04:00", after={"id": 2, "s": "c", "b": PH}),
            # same lsn: insert landed first, delete second; the delete goes first
            t.change("c", {"id": 3}, 600, 9, "08:05:00", after={"id": 3, "s": "new"}),
            t.change("d", {"id": 3}, 600, 10, "08:05:00", before={"id": 3, "s": None}),
        )
    }
    marts = expected_marts([wave])
    assert history(marts) == [
        ('{"id":2}', "snapshot", '{"b":"x","id":2,"s":"a"}', [], at("08:00:00"), at("08:03:00")),
        ('{"id":2}', "update", '{"b":"y","id":2,"s":"c"}', [], at("08:03:00"), None),
        ('{"id":3}', "insert", '{"id":3,"s":"new"}', [], at("08:05:00"), None),
    ]  # fmt: skip


def test_before_image_of_replica_identity_full() -> None:
    """An update's before image (REPLICA IDENTITY FULL) is the latest earlier value."""
    t = Topic()
    wave = {
        f"{ROOT}/a.jsonl": jsonl(
            t.change("r", {"id": 1}, 100, 1, "08:00:00", after={"id": 1, "n": "old", "s": "a"}),
            t.change("u", {"id": 1}, 300, 3, "08:02:00",
                     before={"id": 1, "n": "newer", "s": "a"}, after={"id": 1, "n": PH, "s": "b"}),
            t.change("u", {"id": 5}, 300, 4, "08:02:00",
                     before={"id": 5, "n": PH, "s": "a"}, after={"id": 5, "n": PH, "s": "b"}),
        )
    }  # fmt: skip
    cur = current(expected_marts([wave]))
    assert cur['{"id":1}']["row_json"] == '{"id":1,"n":"newer","s":"b"}'
    assert cur['{"id":5}']["row_json"] == '{"id":5,"s":"b"}'
    assert cur['{"id":5}']["unavailable_columns"] == ["n"]


def _field(name: str, kind: str, logical: str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": kind, "optional": True, "field": name, **extra}
    if logical:
        spec["name"] = logical
    return spec


def test_enveloped_typed_values() -> None:
    """Values typed by the Kafka Connect schema of the envelope."""
    fields = [
        {"type": "int64", "optional": False, "field": "id"},
        _field("d", "int32", "io.debezium.time.Date"),
        _field("mt", "int64", "io.debezium.time.MicroTimestamp"),
        _field("zt", "string", "io.debezium.time.ZonedTimestamp"),
        _field("p", "bytes", "org.apache.kafka.connect.data.Decimal",
               parameters={"scale": "2", "connect.decimal.precision": "10"}),
        _field("q", "bytes", "org.apache.kafka.connect.data.Decimal", parameters={"scale": "2"}),
        _field("v", "struct", "io.debezium.data.VariableScaleDecimal", fields=[]),
        _field("j", "string", "io.debezium.data.Json"),
        _field("big", "int64"),
        _field("b", "bytes"),
        _field("arr", "array", items={"type": "int32", "optional": True}),
        _field("f", "double"),
        _field("txt", "string"),
    ]  # fmt: skip
    row_schema = {"type": "struct", "fields": fields, "optional": True, "name": "s1.public.t.Value"}
    value_schema = {
        "type": "struct",
        "fields": [{**row_schema, "field": "before"}, {**row_schema, "field": "after"}],
        "name": "s1.public.t.Envelope",
    }
    after = {
        "id": 2**53 + 1,
        "d": -1,
        "mt": -1,
        "zt": "2024-06-03T10:00:00.5+02:00",
        "p": "/fM=",  # -525 -> -5.25
        "q": "AYag",  # 100000 -> 1000.00 -> 1000
        "v": {"scale": 3, "value": "AeJA"},  # 123456 -> 123.456
        "j": '{"b": [1, {"y": null, "x": "ü"}], "a": 1.5}',
        "big": -(2**63),
        "b": "AAEC/w==",
        "arr": [1, None, 3],
        "f": 0.25,
        "txt": PH64,  # the base64 form counts as the placeholder in any column
    }
    source = {"ts_ms": 1717408800123, "ts_us": 1717408800123456, "txId": 1, "lsn": 10}
    payload = {"before": None, "after": after, "source": source, "op": "c", "ts_ms": 1}
    key_schema = {"type": "struct", "fields": [fields[0]], "optional": False}
    rec = {
        "topic": "s1.public.t",
        "partition": 0,
        "offset": 0,
        "ts": 0,
        "key": json.dumps({"schema": key_schema, "payload": {"id": 2**53 + 1}}),
        "payload": json.dumps({"schema": value_schema, "payload": payload}),
    }
    marts = expected_marts([{f"{ROOT}/a.jsonl": jsonl(rec)}])
    [cur] = marts["cdc_current"]
    assert cur["key_json"] == '{"id":"9007199254740993"}'
    assert json.loads(cur["row_json"]) == {
        "id": "9007199254740993",
        "d": "1969-12-31",
        "mt": "1969-12-31T23:59:59.999999",
        "zt": "2024-06-03T08:00:00.500000Z",
        "p": -5.25,
        "q": 1000,
        "v": 123.456,
        "j": {"a": 1.5, "b": [1, {"x": "ü", "y": None}]},
        "big": "-9223372036854775808",
        "b": "AAEC/w==",
        "arr": [1, None, 3],
        "f": 0.25,
    }
    assert '"j":{"a":1.5,"b":[1,{"x":"ü","y":null}]}' in cur["row_json"]
    assert cur["unavailable_columns"] == ["txt"]
    assert cur["last_committed_at"] == datetime(2024, 6, 3, 10, 0, 0, 123456, tzinfo=UTC)
    # the same record with a Decimal that is not base64 is quarantined
    bad = {**rec, "offset": 1, "payload": rec["payload"].replace('"/fM="', '"12,5"')}
    marts = expected_marts([{f"{ROOT}/a.jsonl": jsonl(bad)}])
    assert marts["cdc_current"] == [] and len(marts["cdc_quarantine"]) == 1


def test_canonical_numbers_and_times() -> None:
    assert canonical_decimal(Decimal("18.90")) == 18.9
    assert canonical_decimal(Decimal("10.00")) == 10
    assert isinstance(canonical_decimal(Decimal("10.00")), int)
    assert canonical_decimal(Decimal("12345678901234567.89")) == "12345678901234567.89"
    assert canonical_decimal(Decimal("12345678901234567890.123456789")) == (
        "12345678901234567890.123456789"
    )
    assert canonical_decimal(Decimal("9007199254740993")) == "9007199254740993"
    assert zoned_to_utc("2024-06-01T09:30:00.5+02:00") == "2024-06-01T07:30:00.500000Z"
    assert zoned_to_utc("2024-05-31T23:59:59Z") == "2024-05-31T23:59:59.000000Z"


# Hand-verified facts of the bundled scenario, wave by wave: the marts after waves 1..3 and one
# test per rule.

WAVES = build_scenario().waves
MARTS = [expected_marts(WAVES[:n]) for n in range(1, len(WAVES) + 1)]
DOCS = ("pg_main", "public.documents")
PRODS = ("pg_main", "inventory.products")
ACCS = ("pg_main", "public.accounts")
LINES = ("pg_lite", "sales.order_lines")
PROFS = ("pg_lite", "public.profiles")


def row(wave: int, server: str, table: str, key: str) -> dict[str, Any] | None:
    """The current row of a key after ``wave``."""
    for c in MARTS[wave - 1]["cdc_current"]:
        if (c["source_name"], c["source_table"], c["key_json"]) == (server, table, key):
            return c
    return None


def col(wave: int, server: str, table: str, key: str, column: str) -> Any:
    found = row(wave, server, table, key)
    assert found is not None, (server, table, key)
    return json.loads(found["row_json"]).get(column, "<absent>")


def test_scenario_is_deterministic() -> None:
    assert build_scenario().waves == WAVES
    assert len(WAVES) >= 3


def test_scenario_quarantines_its_bad_lines_wave_by_wave() -> None:
    assert [len(m["cdc_quarantine"]) for m in MARTS] == [1, 4, 7]


def test_scenario_placeholders_fill_from_earlier_waves() -> None:
    # placeholders filled from one and two waves earlier
    for wave in (1, 2, 3):
        assert col(wave, *DOCS, '{"id":1}', "body") == "Welcome aboard! " * 40
        assert col(wave, *DOCS, '{"id":1}', "meta") == {"lang": "en", "pages": 12}
    assert col(3, *DOCS, '{"id":1}', "tags") == ["guide", "hr", "onboarding"]


def test_scenario_changes_in_one_transaction_make_one_version() -> None:
    # three changes in one transaction: one version, body from the middle change
    doc2 = [h for h in MARTS[1]["cdc_history"] if h["key_json"] == '{"id":2}' and h["source_name"]
            == "pg_main" and h["source_table"] == "public.documents"]  # fmt: skip
    assert [h["op"] for h in doc2] == ["snapshot", "update"]
    assert json.loads(doc2[1]["row_json"])["body"] == "Release notes 2.0.1: fixes the ingest stall."
    assert row(3, *DOCS, '{"id":2}') is None


def test_scenario_key_change_fills_from_the_old_keys_latest_values() -> None:
    # key change 3 -> 30 fills from the old key's latest values
    assert col(2, *DOCS, '{"id":30}', "body") == "Runbook v2. " * 60
    assert col(2, *DOCS, '{"id":30}', "tags") == ["ops", "runbook"]
    assert row(2, *DOCS, '{"id":3}') is None
    assert len([h for h in MARTS[2]["cdc_history"] if h["key_json"] == '{"id":30}']) == 1
    # ... and 30 -> 300 a wave later continues the chain: 3's values, which 30 took over
    assert row(3, *DOCS, '{"id":30}') is None
    assert col(3, *DOCS, '{"id":300}', "body") == "Runbook v2. " * 60
    assert col(3, *DOCS, '{"id":300}', "tags") == ["ops", "runbook"]
    assert col(3, *DOCS, '{"id":300}', "meta") == {"archived": True, "by": "ops"}
    assert row(3, *DOCS, '{"id":300}')["unavailable_columns"] == []


def test_scenario_unknown_columns() -> None:
    # unknown columns
    assert row(2, *DOCS, '{"id":4}')["unavailable_columns"] == ["attachment", "body", "tags"]
    assert row(3, *DOCS, '{"id":4}')["unavailable_columns"] == ["attachment", "tags"]
    assert row(2, *DOCS, '{"id":5}')["unavailable_columns"] == [
        "attachment", "body", "meta", "tags"
    ]  # fmt: skip
    assert row(3, *DOCS, '{"id":5}')["unavailable_columns"] == []


def test_scenario_snapshot_overlap() -> None:
    # snapshot overlap
    assert col(2, *PRODS, '{"id":102}', "price") == "12345678901234567.89"
    assert row(2, *PRODS, '{"id":102}')["last_op"] == "snapshot"
    assert col(2, *PRODS, '{"id":103}', "price") == 11
    p104 = [h for h in MARTS[0]["cdc_history"] if h["key_json"] == '{"id":104}']
    assert p104[0]["valid_from"] == p104[0]["valid_to"] == at("08:00:01.250")


def test_scenario_typed_values() -> None:
    # typed values
    p = json.loads(row(1, *PRODS, '{"id":102}')["row_json"])
    assert p["barcode"] == "9007199254740993"
    assert p["released"] == "1969-01-01"
    assert p["restocked_at"] == "1969-12-31T23:59:59.999999"
    assert p["listed_at"] == "2024-06-01T07:30:00.500000Z"
    assert p["weight_kg"] == "12345678901234567890.123456789"
    assert p["specs"] == {"certs": None, "made_in": "日本", "name": "Mühle"}
    assert col(1, *PRODS, '{"id":104}', "specs") == "loose leaf"
    assert col(3, *PRODS, '{"id":105}', "price") == -5.25


def test_scenario_replica_identity_full_before_images() -> None:
    # REPLICA IDENTITY FULL before images
    assert col(2, *ACCS, '{"id":3}', "notes") == "Prefers phone calls. " * 25
    assert col(2, *ACCS, '{"id":2}', "notes") == "Net-45 terms. " * 30
    assert len([h for h in MARTS[2]["cdc_history"] if h["source_table"] == "public.accounts"
                and h["key_json"] == '{"id":2}']) == 3  # fmt: skip


def test_scenario_truncate() -> None:
    # truncate
    live = sorted(c["key_json"] for c in MARTS[2]["cdc_current"] if c["source_table"] == LINES[1])
    assert live == ['{"line_no":1,"order_id":1}', '{"line_no":1,"order_id":3}']
    assert col(1, *LINES, '{"line_no":1,"order_id":1}', "big_ref") == "9007199254741006"
    assert col(1, *LINES, '{"line_no":1,"order_id":1}', "created_at") == "2024-06-03T07:55:00Z"


def test_scenario_key_change_whose_delete_lands_a_wave_late() -> None:
    # pg_lite key change with the delete one wave late
    assert row(2, *PROFS, '{"id":70}')["unavailable_columns"] == ["aliases", "avatar", "bio"]
    assert row(2, *PROFS, '{"id":7}') is not None
    assert row(3, *PROFS, '{"id":7}') is None
    # ... then 70 -> 700 -> 7000: aliases from 7, three keys back; bio from 70's own update
    assert [row(3, *PROFS, key) for key in ('{"id":70}', '{"id":700}')] == [None, None]
    assert col(3, *PROFS, '{"id":7000}', "aliases") == ["Countess of Lovelace", "A.A.L."]
    assert col(3, *PROFS, '{"id":7000}', "bio") == "First programmer. " * 30
    assert row(3, *PROFS, '{"id":7000}')["unavailable_columns"] == []
    assert col(3, *PROFS, '{"id":8}', "handle") == "rear.admiral.hopper"


def test_scenario_lands_every_connector() -> None:
    m3 = MARTS[2]
    assert {c["source_name"] for c in m3["cdc_current"]} == {"pg_main", "pg_lite", "pg_txn"}
    assert len({(h["source_table"], h["key_json"]) for h in m3["cdc_history"]}) >= 15


ORDERS = ("pg_txn", "shop.orders")
ITEMS = ("pg_txn", "shop.order_items")


def item(order_id: int, item_no: int) -> str:
    return json.dumps({"item_no": item_no, "order_id": order_id}, separators=(",", ":"))


def test_scenario_applies_a_transaction_only_once_it_is_whole() -> None:
    # 7011: its END and orders event in wave 1, its order_items event in wave 2
    assert row(1, *ORDERS, '{"id":2}') is None
    assert row(2, *ORDERS, '{"id":2}') is not None and row(2, *ITEMS, item(2, 1)) is not None
    # 7012 (END delivered twice): the update of order 1 waits for its order_items event
    assert col(1, *ORDERS, '{"id":1}', "status") == "new"
    assert col(2, *ORDERS, '{"id":1}', "status") == "paid"
    assert (col(1, *ITEMS, item(1, 1), "qty"), col(2, *ITEMS, item(1, 1), "qty")) == (2, 3)
    # without a transaction block (snapshot, before metadata was on): as they land
    assert col(1, *ORDERS, '{"id":10}', "status") == "shipped"
    # 7013, without END, never applies; 7014's truncate waits for its END in wave 3
    assert [row(wave, *ORDERS, '{"id":3}') for wave in (2, 3)] == [None, None]
    assert row(2, *ITEMS, item(10, 1)) is not None
    live = sorted(c["key_json"] for c in MARTS[2]["cdc_current"] if c["source_table"] == ITEMS[1])
    assert live == [item(1, 3)]


def test_scenario_pending_transactions_wave_by_wave() -> None:
    pending = [expected_pending(WAVES[:n])["pg_txn"] for n in range(1, len(WAVES) + 1)]
    assert pending == [
        {"pending": 2, "overdue": 0},
        {"pending": 2, "overdue": 0},
        {"pending": 1, "overdue": 1},
    ]
    assert set(expected_pending(WAVES)) == {"pg_txn"}


class Transactions:
    """kcat -J lines of server s1's transaction topic and of its table s1.public.t, with blocks."""

    def __init__(self) -> None:
        self.offset = 0

    def line(self, topic: str, value: dict[str, Any], key: Any = None) -> str:
        self.offset += 1
        return json.dumps(
            {
                "topic": topic,
                "partition": 0,
                "offset": self.offset,
                "key": None if key is None else json.dumps(key),
                "payload": json.dumps(value),
            }
        )

    def end(self, tx: str, **counts: int) -> str:
        collections = [{"data_collection": k, "event_count": n} for k, n in counts.items()]
        end = {"status": "END", "id": tx, "event_count": sum(counts.values())}
        return self.line("s1.transaction", {**end, "data_collections": collections, "ts_ms": 1})

    def event(self, key: int, lsn: int, tx: str | None, order: int = 1) -> str:
        block = (
            None if tx is None else {"id": tx, "total_order": order, "data_collection_order": order}
        )
        value = {
            "before": None,
            "after": {"id": key},
            "source": {"txId": 5, "lsn": lsn, "ts_ms": 1_717_401_600_000 + lsn},
            "op": "c",
            "transaction": block,
        }
        return self.line("s1.public.t", value, {"id": key})


def landed_keys(waves: list[dict[str, bytes]]) -> list[str]:
    return sorted(c["key_json"] for c in expected_marts(waves)["cdc_current"])


def file(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def test_events_wait_for_their_end_and_every_event_it_counts() -> None:
    t = Transactions()
    first = {f"{ROOT}/a.jsonl": file(t.event(1, 10, "5:10", 1), t.event(9, 11, None))}
    assert landed_keys([first]) == ['{"id":9}']
    with_end = {"debezium/s1/tx/a.jsonl": file(t.end("5:99", **{"public.t": 2}))}
    assert landed_keys([first, with_end]) == ['{"id":9}']
    rest = {f"{ROOT}/b.jsonl": file(t.event(1, 10, "5:10", 1), t.event(2, 12, "5:10", 2))}
    assert landed_keys([first, with_end, rest]) == ['{"id":1}', '{"id":2}', '{"id":9}']
    assert expected_pending([first, with_end])["s1"] == {"pending": 1, "overdue": 0}


def test_a_second_end_that_counts_otherwise_is_quarantined() -> None:
    t = Transactions()
    wave = {
        f"{ROOT}/a.jsonl": file(t.event(1, 10, "7", 1)),
        "debezium/s1/tx/a.jsonl": file(
            t.end("7", **{"public.t": 1}), t.end("7", **{"public.t": 1})
        ),
        "debezium/s1/tx/b.jsonl": file(t.end("7", **{"public.t": 2})),
    }
    marts = expected_marts([wave])
    assert [c["key_json"] for c in marts["cdc_current"]] == ['{"id":1}']
    assert [(q["file_path"], q["line_number"]) for q in marts["cdc_quarantine"]] == [
        ("debezium/s1/tx/b.jsonl", 1)
    ]
