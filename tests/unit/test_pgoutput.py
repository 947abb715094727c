"""Raw pgoutput messages built byte by byte, decoded; TupleData text values typed by OID."""

from __future__ import annotations

import base64
import json
import struct

import pytest

from cdc_warehouse.bench import pgoutput_encoder as enc
from cdc_warehouse.bench.pgoutput_encoder import (
    PG_EPOCH_OFFSET_MICROS,
    cstr,
    i32,
    tuple_data,
    u8,
    u16,
    u32,
    u64,
)
from python_udfs.decoding import DecodeSettings
from python_udfs.pgoutput import change_rows, decode_message, message_row, parse_lsn, typed_value

# 2024-05-01T10:00:00Z as Unix epoch microseconds, and as PostgreSQL's TimestampTz (2000 epoch).
UNIX_TS = 1_714_557_600_000_000
PG_TS = UNIX_TS - 946_684_800_000_000
XID = 0x8000_0001  # above 2**31: xids are unsigned
OID = 16_385
LSN = 0x1_6B37_4D48  # 1/6B374D48
BIG_LSN = 0xFFFF_FFFF_0000_0001  # LSNs are unsigned 64-bit


def begin(final_lsn: int = LSN, ts: int = PG_TS, xid: int = XID) -> bytes:
    return enc.begin(final_lsn, ts + PG_EPOCH_OFFSET_MICROS, xid)


def commit(flags: int = 0) -> bytes:
    return enc.commit(LSN, LSN + 40, UNIX_TS, flags)


def relation(xid: int | None = None, namespace: str = "public") -> bytes:
    columns = [(1, "id", 23, -1), (0, "name", 1043, 68), (3, "blob", 17, -1)]
    return enc.relation(OID, namespace, "users", columns, "d", xid)


def insert(xid: int | None = None) -> bytes:
    return enc.insert(
        OID, tuple_data(("t", b"1"), ("n", None), ("u", None), ("b", b"\x00\x01")), xid
    )


def update(old: str | None, xid: int | None = None) -> bytes:
    old_tuple = None if old is None else tuple_data(("t", b"1"), ("n", None))
    new_tuple = tuple_data(("t", b"2"), ("u", None))
    return enc.update(OID, new_tuple, old_tuple, old or "K", xid)


def delete(old: str, xid: int | None = None) -> bytes:
    return enc.delete(OID, tuple_data(("t", b"1")), old, xid)


def truncate(flags: int, xid: int | None = None) -> bytes:
    return enc.truncate([OID, OID + 1], flags, xid)


def message(flags: int, xid: int | None = None) -> bytes:
    return enc.message(flags, LSN, "app", b"a\0b", xid)


def type_message(xid: int | None = None) -> bytes:
    return enc.type_message(OID, "public", "mood", xid)


def origin() -> bytes:
    return enc.origin(LSN, "node_a")


def stream_start(first: int) -> bytes:
    return b"S" + u32(XID) + u8(first)


def stream_commit(flags: int = 0) -> bytes:
    return enc.stream_commit(XID, LSN, LSN + 40, UNIX_TS, flags)


def stream_abort(subxid: int, abort_info: bool) -> bytes:
    if abort_info:
        return enc.stream_abort(XID, subxid, LSN, UNIX_TS)
    return enc.stream_abort(XID, subxid)


def begin_prepare() -> bytes:
    return enc.begin_prepare(LSN, LSN + 40, UNIX_TS, XID, "gid-1")


def prepare(tag: bytes, flags: int = 0) -> bytes:
    return enc.prepare(LSN, LSN + 40, UNIX_TS, XID, "gid-1", flags, tag)


def commit_prepared(flags: int = 0) -> bytes:
    return enc.commit_prepared(LSN, LSN + 40, UNIX_TS, XID, "gid-1", flags)


def rollback_prepared(flags: int = 0) -> bytes:
    return enc.rollback_prepared(LSN, LSN + 40, UNIX_TS, UNIX_TS + 5, XID, "gid-1", flags)


# --- transaction control ------------------------------------------------------------------------


def test_begin():
    assert decode_message(begin(final_lsn=BIG_LSN), False) == {
        "kind": "begin",
        "final_lsn": BIG_LSN,
        "commit_ts": UNIX_TS,
        "xid": XID,
    }


def test_timestamps_before_2000_are_negative_on_the_wire():
    assert decode_message(begin(ts=-1), False)["commit_ts"] == 946_684_799_999_999


def test_commit():
    assert decode_message(commit(), False) == {
        "kind": "commit",
        "commit_lsn": LSN,
        "end_lsn": LSN + 40,
        "commit_ts": UNIX_TS,
    }


def test_origin():
    assert decode_message(origin(), False) == {
        "kind": "origin",
        "origin_lsn": LSN,
        "origin_name": "node_a",
    }


# --- relation, type -----------------------------------------------------------------------------


def test_relation_outside_a_stream():
    assert decode_message(relation(), False) == {
        "kind": "relation",
        "xid": None,
        "relation_oid": OID,
        "namespace": "public",
        "relation_name": "users",
        "replica_identity": "d",
        "columns": [
            {"name": "id", "is_key": True, "type_oid": 23, "type_modifier": -1},
            {"name": "name", "is_key": False, "type_oid": 1043, "type_modifier": 68},
            {"name": "blob", "is_key": True, "type_oid": 17, "type_modifier": -1},
        ],
    }


def test_relation_in_a_stream_carries_the_xid():
    decoded = decode_message(relation(xid=XID), True)
    assert decoded["xid"] == XID
    assert decoded["relation_oid"] == OID


def test_empty_namespace_means_pg_catalog():
    assert decode_message(relation(namespace=""), False)["namespace"] == "pg_catalog"


def test_type_message():
    expected = {
        "kind": "type",
        "xid": None,
        "type_oid": OID,
        "namespace": "public",
        "type_name": "mood",
    }
    assert decode_message(type_message(), False) == expected
    assert decode_message(type_message(XID), True) == {**expected, "xid": XID}


# --- row changes --------------------------------------------------------------------------------


def test_insert_keeps_every_tuple_data_kind():
    assert decode_message(insert(), False) == {
        "kind": "insert",
        "xid": None,
        "relation_oid": OID,
        "new_tuple": [("t", b"1"), ("n", None), ("u", None), ("b", b"\x00\x01")],
    }


def test_insert_in_a_stream():
    decoded = decode_message(insert(XID), True)
    assert (decoded["xid"], decoded["relation_oid"]) == (XID, OID)


def test_update_without_old_tuple():
    assert decode_message(update(None), False) == {
        "kind": "update",
        "xid": None,
        "relation_oid": OID,
        "old_kind": None,
        "old_tuple": None,
        "new_tuple": [("t", b"2"), ("u", None)],
    }


@pytest.mark.parametrize("old", ["K", "O"])
def test_update_with_old_key_or_old_tuple(old):
    decoded = decode_message(update(old, XID), True)
    assert decoded["xid"] == XID
    assert decoded["old_kind"] == old
    assert decoded["old_tuple"] == [("t", b"1"), ("n", None)]
    assert decoded["new_tuple"] == [("t", b"2"), ("u", None)]


@pytest.mark.parametrize("old", ["K", "O"])
def test_delete(old):
    assert decode_message(delete(old), False) == {
        "kind": "delete",
        "xid": None,
        "relation_oid": OID,
        "old_kind": old,
        "old_tuple": [("t", b"1")],
    }
    assert decode_message(delete(old, XID), True)["xid"] == XID


@pytest.mark.parametrize(
    ("flags", "cascade", "restart"),
    [(0, False, False), (1, True, False), (2, False, True), (3, True, True)],
)
def test_truncate(flags, cascade, restart):
    assert decode_message(truncate(flags), False) == {
        "kind": "truncate",
        "xid": None,
        "cascade": cascade,
        "restart_identity": restart,
        "relation_oids": [OID, OID + 1],
    }


def test_truncate_in_a_stream():
    assert decode_message(truncate(0, XID), True)["xid"] == XID


@pytest.mark.parametrize(("flags", "transactional"), [(0, False), (1, True)])
def test_logical_decoding_message(flags, transactional):
    assert decode_message(message(flags), False) == {
        "kind": "message",
        "xid": None,
        "transactional": transactional,
        "lsn": LSN,
        "prefix": "app",
        "content": b"a\0b",
    }


def test_logical_decoding_message_in_a_stream():
    assert decode_message(message(1, XID), True)["xid"] == XID


def test_a_streamed_change_read_as_unstreamed_is_an_error():
    """Only the caller knows whether the xid is there: the wrong guess must not pass silently."""
    with pytest.raises(ValueError, match="insert without a new tuple"):
        decode_message(insert(XID), False)


# --- streaming ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("flag", "first"), [(1, True), (0, False)])
def test_stream_start(flag, first):
    decoded = decode_message(stream_start(flag), False)
    assert decoded == {"kind": "stream_start", "xid": XID, "first_segment": first}
    assert decode_message(stream_start(flag), True) == decoded


def test_stream_stop():
    assert decode_message(b"E", True) == {"kind": "stream_stop"}


def test_stream_commit():
    assert decode_message(stream_commit(), False) == {
        "kind": "stream_commit",
        "xid": XID,
        "commit_lsn": LSN,
        "end_lsn": LSN + 40,
        "commit_ts": UNIX_TS,
    }


def test_stream_abort_of_a_subtransaction():
    assert decode_message(stream_abort(XID + 1, abort_info=False), False) == {
        "kind": "stream_abort",
        "xid": XID,
        "subxid": XID + 1,
        "abort_lsn": None,
        "abort_ts": None,
    }


def test_stream_abort_with_protocol_4_abort_lsn_and_time():
    assert decode_message(stream_abort(XID, abort_info=True), False) == {
        "kind": "stream_abort",
        "xid": XID,
        "subxid": XID,
        "abort_lsn": LSN,
        "abort_ts": UNIX_TS,
    }


# --- two-phase ----------------------------------------------------------------------------------


def test_begin_prepare():
    assert decode_message(begin_prepare(), False) == {
        "kind": "begin_prepare",
        "prepare_lsn": LSN,
        "end_lsn": LSN + 40,
        "prepare_ts": UNIX_TS,
        "xid": XID,
        "gid": "gid-1",
    }


@pytest.mark.parametrize(("tag", "kind"), [(b"P", "prepare"), (b"p", "stream_prepare")])
def test_prepare_and_stream_prepare(tag, kind):
    assert decode_message(prepare(tag), False) == {
        "kind": kind,
        "prepare_lsn": LSN,
        "end_lsn": LSN + 40,
        "prepare_ts": UNIX_TS,
        "xid": XID,
        "gid": "gid-1",
    }


def test_commit_prepared():
    assert decode_message(commit_prepared(), False) == {
        "kind": "commit_prepared",
        "commit_lsn": LSN,
        "end_lsn": LSN + 40,
        "commit_ts": UNIX_TS,
        "xid": XID,
        "gid": "gid-1",
    }


def test_rollback_prepared():
    assert decode_message(rollback_prepared(), False) == {
        "kind": "rollback_prepared",
        "prepare_end_lsn": LSN,
        "rollback_end_lsn": LSN + 40,
        "prepare_ts": UNIX_TS,
        "rollback_ts": UNIX_TS + 5,
        "xid": XID,
        "gid": "gid-1",
    }


# --- malformed messages -------------------------------------------------------------------------

# Every valid message, with the in_stream it was built for.
VALID = [
    (begin(), False),
    (commit(), False),
    (origin(), False),
    (relation(), False),
    (relation(XID), True),
    (type_message(), False),
    (type_message(XID), True),
    (insert(), False),
    (insert(XID), True),
    (update(None), False),
    (update("K"), False),
    (update("O", XID), True),
    (delete("K"), False),
    (delete("O", XID), True),
    (truncate(3), False),
    (truncate(0, XID), True),
    (message(1), False),
    (message(0, XID), True),
    (stream_start(1), False),
    (b"E", True),
    (stream_commit(), False),
    (begin_prepare(), False),
    (prepare(b"P"), False),
    (prepare(b"p"), False),
    (commit_prepared(), False),
    (rollback_prepared(), False),
]


@pytest.mark.parametrize(("data", "in_stream"), VALID)
def test_every_truncation_is_an_error(data, in_stream):
    decode_message(data, in_stream)
    for end in range(len(data)):
        with pytest.raises(ValueError):
            decode_message(data[:end], in_stream)


@pytest.mark.parametrize(("data", "in_stream"), VALID)
def test_trailing_garbage_is_an_error(data, in_stream):
    with pytest.raises(ValueError, match="trailing"):
        decode_message(data + b"\x00", in_stream)


def test_stream_abort_is_either_the_short_or_the_protocol_4_form():
    """Its length tells the forms apart, so anything between them is truncated."""
    short = stream_abort(XID, abort_info=False)
    full = stream_abort(XID, abort_info=True)
    for end in [*range(len(short)), *range(len(short) + 1, len(full))]:
        with pytest.raises(ValueError, match=r"truncated|empty"):
            decode_message(full[:end], False)
    with pytest.raises(ValueError, match="trailing"):
        decode_message(full + b"\x00", False)


@pytest.mark.parametrize("wrap", [bytearray, memoryview])
def test_bytearray_and_memoryview_are_accepted(wrap):
    """Spark hands binary columns over as bytearray; fields still come back as bytes."""
    data = message(1)
    decoded = decode_message(wrap(data), False)
    assert decoded == decode_message(data, False)
    assert type(decoded["content"]) is bytes


@pytest.mark.parametrize(
    ("data", "in_stream", "reason"),
    [
        (b"", False, "empty message"),
        (b"Z", False, "unknown message kind 'Z'"),
        (b"\xff", False, "unknown message kind"),
        (commit(flags=1), False, "unknown flags 1 in commit"),
        (stream_commit(flags=2), False, "unknown flags 2 in stream commit"),
        (prepare(b"P", flags=1), False, "unknown flags 1 in prepare"),
        (prepare(b"p", flags=1), False, "unknown flags 1 in stream prepare"),
        (commit_prepared(flags=1), False, "unknown flags 1 in commit prepared"),
        (rollback_prepared(flags=1), False, "unknown flags 1 in rollback prepared"),
        (b"I" + u32(OID) + b"X" + tuple_data(), False, "insert without a new tuple"),
        (b"U" + u32(OID) + b"X" + tuple_data(), False, "update expects a new tuple, got 'X'"),
        (b"U" + u32(OID) + b"K" + tuple_data() + b"K", False, "update expects a new tuple"),
        (b"D" + u32(OID) + b"N" + tuple_data(), False, "delete expects an old key or tuple"),
        (b"I" + u32(OID) + b"N" + u16(1) + b"x", False, "unknown tuple data kind 'x'"),
        (b"I" + u32(OID) + b"N" + u16(1) + b"t" + i32(-1), False, "negative length -1"),
        (b"I" + u32(OID) + b"N" + u16(1) + b"t" + i32(5) + b"ab", False, "truncated"),
        (b"O" + u64(LSN) + b"node", False, "unterminated string"),
        (b"O" + u64(LSN) + b"\xff\0", False, "string is not UTF-8"),
        (b"M" + u8(0) + u64(LSN) + cstr("p") + i32(-2), False, "negative length"),
        (insert(), True, "insert without a new tuple"),  # unstreamed, read as streamed
    ],
)
def test_malformed_messages(data, in_stream, reason):
    with pytest.raises(ValueError, match=reason):
        decode_message(data, in_stream)


def test_non_bytes_are_rejected():
    with pytest.raises(ValueError, match="message is not bytes: str"):
        decode_message("B", False)  # type: ignore[arg-type]


# --- typed_value: kinds -------------------------------------------------------------------------


def test_null_is_known_and_null():
    assert typed_value("n", None, 23) == (True, "null")


def test_unchanged_toast_is_unknown():
    assert typed_value("u", None, 25) == (False, None)


def pg_numeric(sign: int, weight: int, dscale: int, *digits: int) -> bytes:
    return struct.pack(f">hhHh{len(digits)}h", len(digits), weight, sign, dscale, *digits)


@pytest.mark.parametrize(
    ("raw", "type_oid", "text"),
    [
        (b"\x01", 16, "t"),
        (struct.pack(">h", -7), 21, "-7"),
        (struct.pack(">i", 2147483647), 23, "2147483647"),
        (struct.pack(">q", 2**53 + 1), 20, str(2**53 + 1)),
        (struct.pack(">d", 0.1), 701, "0.1"),
        (struct.pack(">d", float("nan")), 701, "NaN"),
        ("Zoë".encode(), 25, "Zoë"),
        (b"\x00\xff", 17, "\\x00ff"),
        (struct.pack(">i", 8825), 1082, "2024-02-29"),
        (struct.pack(">q", 762_528_615_654_321), 1184, "2024-02-29 13:30:15.654321+00"),
        (struct.pack(">q", 762_528_615_654_321), 1114, "2024-02-29 13:30:15.654321"),
        (struct.pack(">q", 45_015_000_001), 1083, "12:30:15.000001"),
        (bytes(range(16)), 2950, "00010203-0405-0607-0809-0a0b0c0d0e0f"),
        (b'{"a": 12345678901234567890}', 114, '{"a": 12345678901234567890}'),
        (b'\x01{"b": [1, 2.5]}', 3802, '{"b": [1, 2.5]}'),
        (pg_numeric(0x0000, 1, 3, 12, 3456, 7800), 1700, "123456.780"),
        (pg_numeric(0x4000, -1, 4, 5), 1700, "-0.0005"),
        (pg_numeric(0x0000, 4, 0, 1234, 5678, 9012, 3456, 7890), 1700, "12345678901234567890"),
        (pg_numeric(0xC000, 0, 0), 1700, "NaN"),
    ],
)
def test_binary_values_equal_their_text_form(raw, type_oid, text):
    assert typed_value("b", raw, type_oid) == typed_value("t", text.encode(), type_oid)


@pytest.mark.parametrize(
    ("raw", "type_oid", "reason"),
    [
        (b"\x00\x01", 23, "not a valid binary value of type 23"),
        (b"\x02{}", 3802, "jsonb binary version"),
        (b"\x00\x00\x00\x00", 1007, "type 1007 not supported"),
        (pg_numeric(0x1234, 0, 0), 1700, "not a valid binary numeric"),
    ],
)
def test_binary_values_that_cannot_be_typed(raw, type_oid, reason):
    with pytest.raises(ValueError, match=reason):
        typed_value("b", raw, type_oid)


def test_binary_columns_travel_through_the_warehouse_row():
    line = slot_line(b"I" + u32(OID) + b"N" + tuple_data(("b", struct.pack(">i", 42))))
    row = message_row((line, False), "s")
    relation = json.dumps(
        {
            "namespace": "public",
            "name": "t",
            "columns": [{"name": "id", "is_key": True, "type_oid": 23}],
        }
    )
    [change] = change_rows((relation, "insert", None, None, row["new_tuple_json"]), "s")
    assert change["row_image"] == {"id": "42"}


@pytest.mark.parametrize(
    ("kind", "raw", "reason"),
    [
        ("x", b"1", "unknown tuple data kind 'x'"),
        ("t", None, "text tuple data without a value"),
        ("t", b"\xff", "text value is not UTF-8"),
    ],
)
def test_bad_tuple_data(kind, raw, reason):
    with pytest.raises(ValueError, match=reason):
        typed_value(kind, raw, 25)


def typed(text: str, type_oid: int) -> str:
    known, value = typed_value("t", text.encode(), type_oid)
    assert known
    assert value is not None
    return value


# --- typed_value: scalars -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "type_oid", "expected"),
    [
        ("t", 16, "true"),
        ("f", 16, "false"),
        ("-32768", 21, "-32768"),
        ("32767", 21, "32767"),
        ("-2147483648", 23, "-2147483648"),
        ("2147483647", 23, "2147483647"),
        ("9007199254740992", 20, "9007199254740992"),
        ("-9007199254740992", 20, "-9007199254740992"),
        ("9007199254740993", 20, '"9007199254740993"'),
        ("-9007199254740993", 20, '"-9007199254740993"'),
        ("9223372036854775807", 20, '"9223372036854775807"'),
        ("-9223372036854775808", 20, '"-9223372036854775808"'),
        ("0", 26, "0"),
        ("4294967295", 26, "4294967295"),
        ("1.5", 701, "1.5"),
        ("0.1", 701, "0.1"),
        ("0.30000000000000001", 701, "0.3"),  # float text is a double, not a decimal
        ("-0", 701, "-0.0"),
        ("1e+100", 701, "1e+100"),  # a double stays a JSON number, however large
        ("1.5e-07", 701, "1.5e-07"),
        ("NaN", 701, '"NaN"'),
        ("Infinity", 701, '"Infinity"'),
        ("-Infinity", 700, '"-Infinity"'),
        ("1.1", 700, "1.1"),
        ("3.4028235e+38", 700, "3.4028235e+38"),
        ("123.4500", 1700, "123.45"),
        ("0.1", 1700, "0.1"),
        ("-42", 1700, "-42"),
        ("9007199254740993", 1700, '"9007199254740993"'),
        ("12345678901234567890.123", 1700, '"12345678901234567890.123"'),
        ("0.30000000000000000001", 1700, '"0.30000000000000000001"'),
        ("NaN", 1700, '"NaN"'),
        ("Infinity", 1700, '"Infinity"'),
        ("-Infinity", 1700, '"-Infinity"'),
        ('say "hi" ✓', 25, '"say \\"hi\\" ✓"'),
        ("abc", 1043, '"abc"'),
        ("ab  ", 1042, '"ab  "'),
        ("pg_class", 19, '"pg_class"'),
        ("x", 18, '"x"'),
        ("1 day 02:00:00", 1186, '"1 day 02:00:00"'),  # interval: no rule, kept as text
        ("\\x0102ff", 17, '"AQL/"'),
        ("\\x", 17, '""'),
        ("\\xDEADbeef", 17, '"3q2+7w=="'),
        ("2024-05-01", 1082, '"2024-05-01"'),
        ("0001-01-01", 1082, '"0001-01-01"'),
        ("infinity", 1082, '"infinity"'),
        ("-infinity", 1082, '"-infinity"'),
        ("2024-05-01 10:00:00", 1114, '"2024-05-01T10:00:00.000000"'),
        ("2024-05-01 10:00:00.5", 1114, '"2024-05-01T10:00:00.500000"'),
        ("2024-05-01 10:00:00.123456", 1114, '"2024-05-01T10:00:00.123456"'),
        ("infinity", 1114, '"infinity"'),
        ("2024-05-01 10:00:00.5+00", 1184, '"2024-05-01T10:00:00.500000Z"'),
        ("2024-05-01 10:00:00+05:30", 1184, '"2024-05-01T04:30:00.000000Z"'),
        ("2024-05-01 01:00:00+05:30", 1184, '"2024-04-30T19:30:00.000000Z"'),
        ("2024-12-31 22:00:00-03", 1184, '"2025-01-01T01:00:00.000000Z"'),
        ("1900-01-01 00:00:00+01:39:49", 1184, '"1899-12-31T22:20:11.000000Z"'),
        ("2024-05-01 10:00:00.000001-00:30", 1184, '"2024-05-01T10:30:00.000001Z"'),
        ("-infinity", 1184, '"-infinity"'),
        ("10:00:00", 1083, '"10:00:00.000000"'),
        ("23:59:59.999999", 1083, '"23:59:59.999999"'),
        ("00:00:00.5", 1083, '"00:00:00.500000"'),
        ("24:00:00", 1083, '"24:00:00.000000"'),
        (
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            2950,
            '"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"',
        ),
        ('{"b": [1, 2.5, null], "a": true}', 114, '{"a":true,"b":[1,2.5,null]}'),
        # json/jsonb: the JSON value itself, its numbers not re-typed.
        ('{"a": 12345678901234567890, "b": 0.1}', 3802, '{"a":12345678901234567890,"b":0.1}'),
        ('"just a string"', 3802, '"just a string"'),
        ("null", 3802, "null"),
    ],
)
def test_scalar_values(text, type_oid, expected):
    assert typed(text, type_oid) == expected


@pytest.mark.parametrize(
    ("text", "type_oid"),
    [
        ("true", 16),
        ("1", 16),
        ("abc", 23),
        ("+1", 23),
        ("1.0", 23),
        (" 1", 23),
        ("", 23),
        ("32768", 21),
        ("-32769", 21),
        ("2147483648", 23),
        ("-2147483649", 23),
        ("9223372036854775808", 20),
        ("-9223372036854775809", 20),
        ("-1", 26),
        ("4294967296", 26),
        ("nan", 701),
        ("inf", 701),
        ("1e999", 701),
        ("-1e999", 700),
        ("1_0", 701),
        ("abc", 701),
        ("1e5", 1700),
        ("sNaN", 1700),
        (".5", 1700),
        ("abc", 1700),
        ("0102", 17),
        ("\\x010", 17),
        ("\\xzz", 17),
        ("\\001\\002", 17),  # bytea_output = escape
        ("2024-02-30", 1082),
        ("0044-03-15 BC", 1082),
        ("10000-01-01", 1082),
        ("2024-5-1", 1082),
        ("2024-05-01T10:00:00", 1114),
        ("2024-05-01 25:00:00", 1114),
        ("2024-05-01 10:00:00.1234567", 1114),
        ("2024-05-01 10:00:00+00", 1114),
        ("2024-05-01 10:00:00", 1184),
        ("2024-05-01 10:00:00Z", 1184),
        ("2024-05-01 10:00:00+24", 1184),
        ("0001-01-01 00:00:00+01", 1184),  # before year 1 in UTC
        ("9999-12-31 23:00:00-02", 1184),  # after year 9999 in UTC
        ("24:00:01", 1083),
        ("24:00:00.000001", 1083),
        ("25:00:00", 1083),
        ("10:60:00", 1083),
        ("10:00:60", 1083),
        ("10:00", 1083),
        ("1:00:00", 1083),
        ("A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11", 2950),
        ("a0eebc999c0b4ef8bb6d6bb9bd380a11", 2950),
        ("{bad json", 114),
        ('{"a": NaN}', 3802),
        ("Infinity", 114),
    ],
)
def test_text_that_does_not_fit_its_type(text, type_oid):
    with pytest.raises(ValueError, match="not a valid"):
        typed_value("t", text.encode(), type_oid)


def test_error_shows_a_shortened_value():
    with pytest.raises(ValueError, match=r"not a valid int4: 'x{57}\.\.\.'$"):
        typed_value("t", b"x" * 100, 23)


# --- typed_value: arrays ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "type_oid", "expected"),
    [
        ("{}", 1007, []),
        ("{1,NULL,-3}", 1007, [1, None, -3]),
        ("{{1,2},{3,4}}", 1005, [[1, 2], [3, 4]]),
        ("{{{1}},{{2}}}", 1007, [[[1]], [[2]]]),
        ("[0:1]={7,8}", 1007, [7, 8]),
        ("[1:1][-1:0]={{7,8}}", 1007, [[7, 8]]),
        ("{ 1 , 2 }", 1007, [1, 2]),
        ("{a b, c }", 1009, ["a b", "c"]),
        ("{t,f,NULL}", 1000, [True, False, None]),
        ("{9007199254740993,1}", 1016, ["9007199254740993", 1]),
        ("{1.5,NaN,-Infinity,1.5e-07}", 1022, [1.5, "NaN", "-Infinity", 1.5e-07]),
        ("{0.5}", 1021, [0.5]),
        ("{1.10,12345678901234567890.5}", 1231, [1.1, "12345678901234567890.5"]),
        (
            '{plain,"a b","a,b","say \\"hi\\"","back\\\\slash","NULL",null,""}',
            1009,
            ["plain", "a b", "a,b", 'say "hi"', "back\\slash", "NULL", None, ""],
        ),
        ("{\\NULL,a\\,b,x\\ }", 1009, ["NULL", "a,b", "x "]),
        ('{"a  ","{}"}', 1015, ["a  ", "{}"]),
        ('{"x  "}', 1014, ["x  "]),
        ("{pg_class}", 1003, ["pg_class"]),
        ("{a}", 1002, ["a"]),
        ("{1,4294967295}", 1028, [1, 4294967295]),
        ("{2024-05-01,NULL,infinity}", 1182, ["2024-05-01", None, "infinity"]),
        ('{"2024-05-01 10:00:00"}', 1115, ["2024-05-01T10:00:00.000000"]),
        (
            '{"2024-05-01 10:00:00+05:30","2024-05-01 10:00:00.5+00"}',
            1185,
            ["2024-05-01T04:30:00.000000Z", "2024-05-01T10:00:00.500000Z"],
        ),
        ("{10:00:00,24:00:00}", 1183, ["10:00:00.000000", "24:00:00.000000"]),
        (
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            2951,
            ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"],
        ),
        ('{"{\\"a\\": 1}","[1, 2]",NULL}', 199, [{"a": 1}, [1, 2], None]),
        ('{"{\\"a\\": 1}",3}', 3807, [{"a": 1}, 3]),
        ('{"\\\\x0102","\\\\x"}', 1001, ["AQI=", ""]),
    ],
)
def test_array_values(text, type_oid, expected):
    assert json.loads(typed(text, type_oid)) == expected


def test_array_value_is_canonical_json():
    assert typed('{"a b",NULL}', 1009) == '["a b",null]'


@pytest.mark.parametrize(
    "text",
    [
        "",
        "1,2",
        "{1,2",
        "{1,2}x",
        "{1,,2}",
        "{,}",
        '{"a}',
        '{"a\\',
        "{a\\",
        '{a"b"}',
        "{a{b}}",
        "{1,{2}}",
        "{{1},2}",
        '{"a"xb}',
        "{{1}x{2}}",
        "[0:1]{1,2}",
    ],
)
def test_malformed_arrays(text):
    with pytest.raises(ValueError, match="not a valid array"):
        typed_value("t", text.encode(), 1009)


@pytest.mark.parametrize(
    ("text", "type_oid", "reason"),
    [
        ("{1,abc}", 1007, "int4: 'abc'"),
        ("{40000}", 1005, "int2: '40000'"),
        ("{2024-02-30}", 1182, "date"),
        ("{A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11}", 2951, "uuid"),
        ('{"2024-05-01 10:00:00"}', 1185, "timestamptz"),
        ("{1e5}", 1231, "numeric"),
    ],
)
def test_array_elements_must_fit_the_element_type(text, type_oid, reason):
    with pytest.raises(ValueError, match=f"not a valid {reason}"):
        typed_value("t", text.encode(), type_oid)


# --- warehouse rows: landed slot lines and the changes of one message ------------------------


def slot_line(data: bytes, lsn: str = "0/16B3748", xid: int | None = XID) -> str:
    return json.dumps({"lsn": lsn, "xid": xid, "data": base64.b64encode(data).decode()})


def test_parse_lsn_reads_both_hex_halves():
    assert parse_lsn("0/16B3748") == 0x16B3748
    assert parse_lsn("1/0") == 1 << 32
    assert parse_lsn("0/FFFFFFFF") < parse_lsn("1/0")
    with pytest.raises(ValueError):
        parse_lsn("16B3748")


def test_message_row_of_a_streamed_insert_names_its_subtransaction():
    row = message_row((slot_line(insert(xid=XID + 1), xid=XID), True), "s")
    assert row["error"] is None
    assert (row["kind"], row["txn_xid"], row["sub_xid"]) == ("insert", XID, XID + 1)
    assert row["lsn"] == 0x16B3748
    assert json.loads(row["new_tuple_json"])[0] == ["t", "1"]


def test_message_row_of_a_stream_abort_names_the_aborted_subtransaction():
    row = message_row((slot_line(stream_abort(subxid=XID + 7, abort_info=False)), False), "s")
    assert (row["kind"], row["txn_xid"], row["sub_xid"]) == ("stream_abort", XID, XID + 7)


def test_message_row_of_a_relation_keeps_names_keys_and_types():
    row = message_row((slot_line(relation()), False), "s")
    definition = json.loads(row["relation_json"])
    assert definition["namespace"] == "public" and definition["name"] == "users"
    assert [(c["name"], c["is_key"], c["type_oid"]) for c in definition["columns"]] == [
        ("id", True, 23),
        ("name", False, 1043),
        ("blob", True, 17),
    ]
    # The type modifier names varchar's length (68 = 64 + its 4-byte header).
    assert json.loads(row["column_types"]) == {
        "id": ["int4", "int"],
        "name": ["varchar(64)", "string"],
        "blob": ["bytea", "binary"],
    }
    assert message_row((slot_line(insert()), False), "s")["column_types"] is None


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("not json", "Expecting value"),
        (json.dumps({"lsn": "0/1", "xid": 1}), "missing field: data"),
        (json.dumps({"lsn": "01", "xid": 1, "data": "QQ=="}), "bad lsn"),
        (json.dumps({"lsn": "0/1", "xid": "7", "data": "QQ=="}), "xid is not an integer"),
        (json.dumps({"lsn": "0/1", "xid": 1, "data": "%%%"}), ""),
        (json.dumps({"lsn": "0/1", "xid": 1, "data": "eg=="}), "unknown message kind"),
    ],
)
def test_message_row_reports_what_cannot_be_decoded(line, reason):
    row = message_row((line, False), "s")
    assert row["error"] and reason in row["error"]


ACCOUNTS = json.dumps(
    {
        "namespace": "public",
        "name": "accounts",
        "columns": [
            {"name": "id", "is_key": True, "type_oid": 23},
            {"name": "body", "is_key": False, "type_oid": 25},
        ],
    }
)


def tuple_json(*columns: tuple[str, str | None]) -> str:
    return json.dumps([list(column) for column in columns])


def test_insert_becomes_one_typed_change():
    [row] = change_rows((ACCOUNTS, "insert", None, None, tuple_json(("t", "7"), ("t", "x"))), "s")
    assert row == {
        "error": None,
        "source_table": "public.accounts",
        "key_json": '{"id":7}',
        "op": "insert",
        "row_image": {"id": "7", "body": '"x"'},
    }


def test_unchanged_toast_is_unknown_not_null():
    [row] = change_rows((ACCOUNTS, "update", None, None, tuple_json(("t", "7"), ("u", None))), "s")
    assert row["row_image"] == {"id": "7", "body": None}
    [row] = change_rows((ACCOUNTS, "update", None, None, tuple_json(("t", "7"), ("n", None))), "s")
    assert row["row_image"] == {"id": "7", "body": "null"}


def test_update_changing_the_key_is_a_delete_and_an_update_of_the_new_key():
    old = tuple_json(("t", "7"), ("n", None))
    new = tuple_json(("t", "70"), ("u", None))
    deleted, updated = change_rows((ACCOUNTS, "update", "K", old, new), "s")
    assert (deleted["op"], deleted["key_json"], deleted["row_image"]) == ("delete", '{"id":7}', {})
    assert (updated["op"], updated["key_json"]) == ("update", '{"id":70}')
    assert updated["row_image"] == {"id": "70", "body": None}


def test_full_identity_old_row_fills_unchanged_toast():
    old = tuple_json(("t", "7"), ("t", "long text"))
    new = tuple_json(("t", "7"), ("u", None))
    [row] = change_rows((ACCOUNTS, "update", "O", old, new), "s")
    assert (row["op"], row["row_image"]) == ("update", {"id": "7", "body": '"long text"'})


def test_declared_key_beats_relation_key_flags():
    def declared(system, source, table):
        return ["body"] if (system, source, table) == ("pgoutput", "s", "public.accounts") else None

    new = tuple_json(("t", "7"), ("t", "x"))
    [row] = change_rows(
        (ACCOUNTS, "insert", None, None, new), "s", DecodeSettings(declared_keys=declared)
    )
    assert row["key_json"] == '{"body":"x"}'


def test_delete_and_truncate():
    [row] = change_rows((ACCOUNTS, "delete", "K", tuple_json(("t", "7"), ("n", None)), None), "s")
    assert (row["op"], row["key_json"], row["row_image"]) == ("delete", '{"id":7}', {})
    [row] = change_rows((ACCOUNTS, "truncate", None, None, None), "s")
    assert (row["op"], row["key_json"], row["source_table"]) == (
        "truncate",
        None,
        "public.accounts",
    )


@pytest.mark.parametrize(
    ("relation_json", "kind", "new", "reason"),
    [
        (None, "insert", tuple_json(("t", "1"), ("t", "x")), "no Relation message"),
        (ACCOUNTS, "insert", tuple_json(("t", "1")), "tuple has 1 columns, relation has 2"),
        (ACCOUNTS, "insert", tuple_json(("t", "one"), ("t", "x")), "column 'id'"),
        (ACCOUNTS, "insert", tuple_json(("u", None), ("t", "x")), "key column 'id' has no value"),
        (ACCOUNTS, "insert", None, "insert without a new tuple"),
        (ACCOUNTS, "delete", None, "delete without an old key"),
    ],
)
def test_changes_that_cannot_be_typed_are_errors(relation_json, kind, new, reason):
    [row] = change_rows((relation_json, kind, None, None, new), "s")
    assert row["error"] and reason in row["error"]
