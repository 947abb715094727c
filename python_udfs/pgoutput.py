"""Raw pgoutput messages and their TupleData text values, decoded without PostgreSQL.

Message layouts follow PostgreSQL's "Logical Replication Message Formats" (protocol versions 1
to 4); value texts follow each type's output function under DateStyle ISO and bytea_output hex
(the server defaults). Where PostgreSQL's own subscriber rejects a message (unknown flags), so
does this decoder: CONTRACT.md §2 sends such input to quarantine rather than guessing.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import functools
import json
import math
import re
import struct
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from python_udfs.change_log import CHANGE_COLUMNS
from python_udfs.json_values import JsonDocument, canonical_json, loads, parse_json_document
from python_udfs.source_types import column_types_json, pg_column_type
from python_udfs.table_settings import KeyLookup

# TimestampTz counts microseconds from 2000-01-01; the warehouse counts from 1970-01-01.
_PG_EPOCH_OFFSET_MICROS = 946_684_800_000_000

# Inside a Stream Start .. Stream Stop block these carry the streamed transaction's xid first.
_XID_IN_STREAM = frozenset("RYIUDTM")

_TRUNCATE_CASCADE = 1
_TRUNCATE_RESTART_IDENTITY = 2
_MESSAGE_TRANSACTIONAL = 1
_COLUMN_IS_KEY = 1

TupleData = list[tuple[str, bytes | None]]


class _Reader:
    """A cursor over one message: every read checks bounds, so truncation is always caught."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def remaining(self) -> int:
        return len(self._data) - self._pos

    def take(self, n: int) -> bytes:
        if n < 0:
            raise ValueError(f"negative length {n}")
        if n > self.remaining():
            raise ValueError("truncated message")
        chunk = self._data[self._pos : self._pos + n]
        self._pos += n
        return chunk

    def _unpack(self, fmt: str) -> int:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def byte(self) -> str:
        return chr(self._unpack(">B"))

    def u8(self) -> int:
        return self._unpack(">B")

    def u16(self) -> int:
        return self._unpack(">H")

    def u32(self) -> int:
        return self._unpack(">I")

    def i32(self) -> int:
        return self._unpack(">i")

    def lsn(self) -> int:
        return self._unpack(">Q")

    def timestamp(self) -> int:
        """A TimestampTz as Unix epoch microseconds."""
        return self._unpack(">q") + _PG_EPOCH_OFFSET_MICROS

    def string(self) -> str:
        end = self._data.find(b"\0", self._pos)
        if end < 0:
            raise ValueError("truncated message: unterminated string")
        raw = self.take(end - self._pos)
        self._pos += 1
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("string is not UTF-8") from None

    def unused_flags(self, what: str) -> None:
        """Flags documented as 'currently unused': PostgreSQL's subscriber rejects others."""
        flags = self.u8()
        if flags:
            raise ValueError(f"unknown flags {flags} in {what}")

    def finish(self) -> None:
        if self.remaining():
            raise ValueError(f"{self.remaining()} trailing bytes after the message")


def decode_message(data: bytes, in_stream: bool) -> dict[str, Any]:
    """Decode one raw pgoutput message into a plain dict with 'kind' and its fields.

    `in_stream` must say whether the message lies inside a Stream Start .. Stream Stop block:
    the wire format does not say whether a leading xid is present, only the position does.
    LSNs are ints, timestamps Unix epoch microseconds, tuples lists of (kind, bytes or None).
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ValueError(f"message is not bytes: {type(data).__name__}")
    reader = _Reader(bytes(data))
    if not reader.remaining():
        raise ValueError("empty message")
    tag = reader.byte()
    entry = _DECODERS.get(tag)
    if entry is None:
        raise ValueError(f"unknown message kind {tag!r}")
    kind, decode = entry
    fields: dict[str, Any] = {"kind": kind}
    if tag in _XID_IN_STREAM:
        fields["xid"] = reader.u32() if in_stream else None
    fields.update(decode(reader))
    reader.finish()
    return fields


def _begin(r: _Reader) -> dict[str, Any]:
    return {"final_lsn": r.lsn(), "commit_ts": r.timestamp(), "xid": r.u32()}


def _commit(r: _Reader) -> dict[str, Any]:
    r.unused_flags("commit")
    return {"commit_lsn": r.lsn(), "end_lsn": r.lsn(), "commit_ts": r.timestamp()}


def _origin(r: _Reader) -> dict[str, Any]:
    return {"origin_lsn": r.lsn(), "origin_name": r.string()}


def _namespace(r: _Reader) -> str:
    """PostgreSQL sends an empty namespace for pg_catalog, to save space."""
    return r.string() or "pg_catalog"


def _relation(r: _Reader) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "relation_oid": r.u32(),
        "namespace": _namespace(r),
        "relation_name": r.string(),
        "replica_identity": r.byte(),
    }
    columns = []
    for _ in range(r.u16()):
        flags = r.u8()
        columns.append(
            {
                "name": r.string(),
                "is_key": bool(flags & _COLUMN_IS_KEY),
                "type_oid": r.u32(),
                "type_modifier": r.i32(),
            }
        )
    fields["columns"] = columns
    return fields


def _type(r: _Reader) -> dict[str, Any]:
    return {"type_oid": r.u32(), "namespace": _namespace(r), "type_name": r.string()}


def _tuple(r: _Reader) -> TupleData:
    columns: TupleData = []
    for _ in range(r.u16()):
        kind = r.byte()
        if kind in ("n", "u"):
            columns.append((kind, None))
        elif kind in ("t", "b"):
            columns.append((kind, r.take(r.i32())))
        else:
            raise ValueError(f"unknown tuple data kind {kind!r}")
    return columns


def _insert(r: _Reader) -> dict[str, Any]:
    relation_oid = r.u32()
    if r.byte() != "N":
        raise ValueError("insert without a new tuple")
    return {"relation_oid": relation_oid, "new_tuple": _tuple(r)}


def _update(r: _Reader) -> dict[str, Any]:
    fields: dict[str, Any] = {"relation_oid": r.u32(), "old_kind": None, "old_tuple": None}
    marker = r.byte()
    if marker in ("K", "O"):
        fields["old_kind"] = marker
        fields["old_tuple"] = _tuple(r)
        marker = r.byte()
    if marker != "N":
        raise ValueError(f"update expects a new tuple, got {marker!r}")
    fields["new_tuple"] = _tuple(r)
    return fields


def _delete(r: _Reader) -> dict[str, Any]:
    relation_oid = r.u32()
    marker = r.byte()
    if marker not in ("K", "O"):
        raise ValueError(f"delete expects an old key or tuple, got {marker!r}")
    return {"relation_oid": relation_oid, "old_kind": marker, "old_tuple": _tuple(r)}


def _truncate(r: _Reader) -> dict[str, Any]:
    count = r.u32()
    flags = r.u8()
    return {
        "cascade": bool(flags & _TRUNCATE_CASCADE),
        "restart_identity": bool(flags & _TRUNCATE_RESTART_IDENTITY),
        "relation_oids": [r.u32() for _ in range(count)],
    }


def _message(r: _Reader) -> dict[str, Any]:
    flags = r.u8()
    return {
        "transactional": bool(flags & _MESSAGE_TRANSACTIONAL),
        "lsn": r.lsn(),
        "prefix": r.string(),
        "content": r.take(r.i32()),
    }


def _stream_start(r: _Reader) -> dict[str, Any]:
    return {"xid": r.u32(), "first_segment": r.u8() == 1}


def _stream_stop(r: _Reader) -> dict[str, Any]:
    return {}


def _stream_commit(r: _Reader) -> dict[str, Any]:
    """Unlike Commit, Stream Commit leads with the xid, before its flags."""
    xid = r.u32()
    r.unused_flags("stream commit")
    return {"xid": xid, "commit_lsn": r.lsn(), "end_lsn": r.lsn(), "commit_ts": r.timestamp()}


def _stream_abort(r: _Reader) -> dict[str, Any]:
    """Protocol 4 appends the abort LSN and time when streaming = parallel; the length tells."""
    fields: dict[str, Any] = {
        "xid": r.u32(),
        "subxid": r.u32(),
        "abort_lsn": None,
        "abort_ts": None,
    }
    if r.remaining():
        fields["abort_lsn"] = r.lsn()
        fields["abort_ts"] = r.timestamp()
    return fields


def _begin_prepare(r: _Reader) -> dict[str, Any]:
    return {
        "prepare_lsn": r.lsn(),
        "end_lsn": r.lsn(),
        "prepare_ts": r.timestamp(),
        "xid": r.u32(),
        "gid": r.string(),
    }


def _prepare(what: str) -> Callable[[_Reader], dict[str, Any]]:
    """Prepare and Stream Prepare: Begin Prepare's fields after an unused flags byte."""

    def decode(r: _Reader) -> dict[str, Any]:
        r.unused_flags(what)
        return _begin_prepare(r)

    return decode


def _commit_prepared(r: _Reader) -> dict[str, Any]:
    r.unused_flags("commit prepared")
    return {
        "commit_lsn": r.lsn(),
        "end_lsn": r.lsn(),
        "commit_ts": r.timestamp(),
        "xid": r.u32(),
        "gid": r.string(),
    }


def _rollback_prepared(r: _Reader) -> dict[str, Any]:
    r.unused_flags("rollback prepared")
    return {
        "prepare_end_lsn": r.lsn(),
        "rollback_end_lsn": r.lsn(),
        "prepare_ts": r.timestamp(),
        "rollback_ts": r.timestamp(),
        "xid": r.u32(),
        "gid": r.string(),
    }


_DECODERS: dict[str, tuple[str, Callable[[_Reader], dict[str, Any]]]] = {
    "B": ("begin", _begin),
    "C": ("commit", _commit),
    "O": ("origin", _origin),
    "R": ("relation", _relation),
    "Y": ("type", _type),
    "I": ("insert", _insert),
    "U": ("update", _update),
    "D": ("delete", _delete),
    "T": ("truncate", _truncate),
    "M": ("message", _message),
    "S": ("stream_start", _stream_start),
    "E": ("stream_stop", _stream_stop),
    "c": ("stream_commit", _stream_commit),
    "A": ("stream_abort", _stream_abort),
    "b": ("begin_prepare", _begin_prepare),
    "P": ("prepare", _prepare("prepare")),
    "K": ("commit_prepared", _commit_prepared),
    "r": ("rollback_prepared", _rollback_prepared),
    "p": ("stream_prepare", _prepare("stream prepare")),
}


# --- TupleData values --------------------------------------------------------------------------


def typed_value(kind: str, raw: bytes | None, type_oid: int) -> tuple[bool, str | None]:
    """(known, canonical JSON text) of one TupleData column, typed by its column's type OID.

    An unchanged TOASTed column ('u') is not NULL but unknown: (False, None), to be completed
    from the key's earlier value. Types without a rule here keep their output text as a string.
    """
    if kind == "n":
        return True, "null"
    if kind == "u":
        return False, None
    if kind == "b":
        if raw is None:
            raise ValueError("binary tuple data without a value")
        return True, canonical_json(_binary_value(bytes(raw), type_oid))
    if kind != "t":
        raise ValueError(f"unknown tuple data kind {kind!r}")
    if raw is None:
        raise ValueError("text tuple data without a value")
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("text value is not UTF-8") from None
    element_oid = _ARRAY_ELEMENTS.get(type_oid)
    if element_oid is not None:
        return True, canonical_json(_array(text, _SCALARS[element_oid]))
    return True, canonical_json(_SCALARS.get(type_oid, _text)(text))


_PG_EPOCH_DATE = dt.date(2000, 1, 1)
_PG_EPOCH = dt.datetime(2000, 1, 1)
_NUMERIC_SIGNS = {0x0000: "", 0x4000: "-"}
_NUMERIC_SPECIALS = {0xC000: "NaN", 0xD000: "Infinity", 0xF000: "-Infinity"}


def _binary_numeric(raw: bytes) -> Any:
    """numeric_send: base-10000 digits with a weight (exponent of the first digit) and a sign."""
    ndigits, weight, sign, _dscale = struct.unpack(">hhHh", raw[:8])
    if sign in _NUMERIC_SPECIALS:
        return _NUMERIC_SPECIALS[sign]
    if sign not in _NUMERIC_SIGNS or len(raw) != 8 + 2 * ndigits:
        raise ValueError("not a valid binary numeric")
    digits = struct.unpack(f">{ndigits}h", raw[8:])
    unscaled = 0
    for digit in digits:
        unscaled = unscaled * 10000 + digit
    exponent = 4 * (weight - ndigits + 1)
    return Decimal(f"{_NUMERIC_SIGNS[sign]}{unscaled}E{exponent}")


def _binary_value(raw: bytes, type_oid: int) -> Any:
    """One column in PostgreSQL's binary send format (TupleData 'b'), for the scalar types;
    the subscriber's 'binary' option is off by default, so arrays and others are refused."""
    fixed = {16: ">?", 21: ">h", 23: ">i", 20: ">q", 26: ">I", 700: ">f", 701: ">d"}
    try:
        if type_oid in fixed:
            (value,) = struct.unpack(fixed[type_oid], raw)
            if type_oid in (700, 701) and not math.isfinite(value):
                return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return value
        if type_oid in (25, 1043, 1042, 19, 18, 114):
            text = raw.decode("utf-8")
            return parse_json_document(text) if type_oid == 114 else text
        if type_oid == 3802:
            if raw[:1] != b"\x01":
                raise ValueError("unknown jsonb binary version")
            return parse_json_document(raw[1:].decode("utf-8"))
        if type_oid == 17:
            return raw
        if type_oid == 2950 and len(raw) == 16:
            return str(uuid.UUID(bytes=raw))
        if type_oid == 1082:
            (days,) = struct.unpack(">i", raw)
            return _PG_EPOCH_DATE + dt.timedelta(days=days)
        if type_oid in (1114, 1184):
            (micros,) = struct.unpack(">q", raw)
            moment = _PG_EPOCH + dt.timedelta(microseconds=micros)
            return moment.replace(tzinfo=dt.UTC) if type_oid == 1184 else moment
        if type_oid == 1083:
            (micros,) = struct.unpack(">q", raw)
            return (dt.datetime.min + dt.timedelta(microseconds=micros)).time()
        if type_oid == 1700:
            return _binary_numeric(raw)
    except (struct.error, UnicodeDecodeError, OverflowError) as exc:
        raise ValueError(f"not a valid binary value of type {type_oid}: {exc}") from None
    raise ValueError(f"binary tuple data of type {type_oid} not supported")


def _bad(type_name: str, text: str) -> ValueError:
    shown = text if len(text) <= 60 else text[:57] + "..."
    return ValueError(f"not a valid {type_name}: {shown!r}")


_INTEGER = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NUMERIC = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_SPECIAL_NUMBERS = frozenset({"NaN", "Infinity", "-Infinity"})
# date, timestamp and timestamptz 'infinity' fit no calendar: they keep PostgreSQL's spelling.
_INFINITE = frozenset({"infinity", "-infinity"})
_DATE = r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
_CLOCK = r"([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,6}))?"
_DATE_ONLY = re.compile(_DATE)
_TIME_ONLY = re.compile(_CLOCK)
_TIMESTAMP = re.compile(f"{_DATE} {_CLOCK}")
# Offsets have seconds for historical local mean times, e.g. '+01:39:49'.
_TIMESTAMPTZ = re.compile(f"{_DATE} {_CLOCK}([+-])([0-9]{{2}})(?::([0-9]{{2}}))?(?::([0-9]{{2}}))?")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_BYTEA_HEX = re.compile(r"\\x((?:[0-9a-fA-F]{2})*)")


def _text(text: str) -> str:
    return text


def _boolean(text: str) -> bool:
    if text not in ("t", "f"):
        raise _bad("boolean", text)
    return text == "t"


def _integer(type_name: str, bits: int, signed: bool = True) -> Callable[[str], int]:
    low, high = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2**bits - 1)

    def convert(text: str) -> int:
        if not _INTEGER.fullmatch(text) or not low <= int(text) <= high:
            raise _bad(type_name, text)
        return int(text)

    return convert


def _float(type_name: str) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        if text in _SPECIAL_NUMBERS:
            return text
        if not _FLOAT.fullmatch(text) or math.isinf(float(text)):
            raise _bad(type_name, text)
        return float(text)

    return convert


def _numeric(text: str) -> Any:
    if text in _SPECIAL_NUMBERS:
        return text
    if not _NUMERIC.fullmatch(text):
        raise _bad("numeric", text)
    return Decimal(text)


def _bytea(text: str) -> bytes:
    match = _BYTEA_HEX.fullmatch(text)
    if match is None:
        raise _bad("bytea in hex format", text)
    return bytes.fromhex(match.group(1))


def _date(text: str) -> dt.date | str:
    if text in _INFINITE:
        return text
    match = _DATE_ONLY.fullmatch(text)
    try:
        if match is None:
            raise ValueError
        return dt.date(*(int(g) for g in match.groups()))
    except ValueError:
        raise _bad("date (years 1-9999)", text) from None


def _wall_clock(groups: tuple[str | None, ...]) -> dt.datetime:
    """The datetime of regex groups year, month, day, hour, minute, second, fraction."""
    *fields, fraction = groups
    year, month, day, hour, minute, second = (int(field or "0") for field in fields)
    microsecond = int((fraction or "").ljust(6, "0"))
    return dt.datetime(year, month, day, hour, minute, second, microsecond)


def _timestamp(text: str) -> dt.datetime | str:
    if text in _INFINITE:
        return text
    match = _TIMESTAMP.fullmatch(text)
    try:
        if match is None:
            raise ValueError
        return _wall_clock(match.groups())
    except ValueError:
        raise _bad("timestamp (years 1-9999)", text) from None


def _timestamptz(text: str) -> dt.datetime | str:
    if text in _INFINITE:
        return text
    match = _TIMESTAMPTZ.fullmatch(text)
    try:
        if match is None:
            raise ValueError
        sign, hours, minutes, seconds = match.groups()[7:]
        offset = dt.timedelta(
            hours=int(hours), minutes=int(minutes or 0), seconds=int(seconds or 0)
        )
        zone = dt.timezone(-offset if sign == "-" else offset)
        return _wall_clock(match.groups()[:7]).replace(tzinfo=zone).astimezone(dt.UTC)
    except (ValueError, OverflowError):
        raise _bad("timestamptz (years 1-9999)", text) from None


def _time(text: str) -> str:
    """PostgreSQL allows 24:00:00, which no datetime.time holds, so the text is rebuilt."""
    match = _TIME_ONLY.fullmatch(text)
    if match is None:
        raise _bad("time", text)
    hour, minute, second = (int(g) for g in match.groups()[:3])
    micros = int((match.group(4) or "").ljust(6, "0"))
    in_day = hour < 24 or (hour, minute, second, micros) == (24, 0, 0, 0)
    if minute > 59 or second > 59 or not in_day:
        raise _bad("time", text)
    return f"{hour:02d}:{minute:02d}:{second:02d}.{micros:06d}"


def _uuid(text: str) -> str:
    if not _UUID.fullmatch(text):
        raise _bad("uuid", text)
    return text


def _json(text: str) -> JsonDocument:
    """The JSON value itself; NaN and Infinity are not JSON, though Python's parser takes them."""
    try:
        return parse_json_document(text)
    except ValueError:
        raise _bad("json", text) from None


# Each converter returns a value that canonical_json serialises with the contract's typing.
_SCALARS: dict[int, Callable[[str], Any]] = {
    16: _boolean,
    17: _bytea,
    18: _text,  # "char"
    19: _text,  # name
    20: _integer("int8", 64),
    21: _integer("int2", 16),
    23: _integer("int4", 32),
    25: _text,
    26: _integer("oid", 32, signed=False),
    114: _json,
    700: _float("float4"),
    701: _float("float8"),
    1042: _text,  # bpchar keeps its blank padding, as PostgreSQL outputs it
    1043: _text,
    1082: _date,
    1083: _time,
    1114: _timestamp,
    1184: _timestamptz,
    1700: _numeric,
    2950: _uuid,
    3802: _json,
}

_ARRAY_ELEMENTS: dict[int, int] = {
    1000: 16,
    1001: 17,
    1002: 18,
    1003: 19,
    1005: 21,
    1007: 23,
    1009: 25,
    1014: 1042,
    1015: 1043,
    1016: 20,
    1021: 700,
    1022: 701,
    1028: 26,
    1115: 1114,
    1182: 1082,
    1183: 1083,
    1185: 1184,
    1231: 1700,
    199: 114,
    2951: 2950,
    3807: 3802,
}

# --- array text syntax -------------------------------------------------------------------------

# Lower bounds other than 1 are printed as a '[lo:hi]...=' prefix; JSON arrays have none.
_ARRAY_BOUNDS = re.compile(r"(?:\[-?[0-9]+:-?[0-9]+\])+=")
_ARRAY_SPACE = " \t\n\r\v\f"

_Items = list[Any]  # nested lists of str (element text) or None (NULL)


def _array(text: str, convert: Callable[[str], Any]) -> list[Any]:
    """A JSON array from PostgreSQL's array output ({a,"b c",NULL,{nested}}), typed by element."""
    bounds = _ARRAY_BOUNDS.match(text)
    items, pos = _array_items(text, bounds.end() if bounds else 0)
    if _skip_space(text, pos) != len(text):
        raise _bad("array", text)
    return _typed_items(items, convert, text)


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _ARRAY_SPACE:
        pos += 1
    return pos


def _array_items(text: str, pos: int) -> tuple[_Items, int]:
    """Parse the '{...}' at `pos`; return its items and the position after its '}'."""
    pos = _skip_space(text, pos)
    if text[pos : pos + 1] != "{":
        raise _bad("array", text)
    items: _Items = []
    pos = _skip_space(text, pos + 1)
    if text[pos : pos + 1] == "}":
        return items, pos + 1
    while True:
        pos = _skip_space(text, pos)
        opener = text[pos : pos + 1]
        item: _Items | str | None
        if opener == "{":
            item, pos = _array_items(text, pos)
        elif opener == '"':
            item, pos = _quoted_element(text, pos + 1)
        else:
            item, pos = _unquoted_element(text, pos)
        items.append(item)
        pos = _skip_space(text, pos)
        separator = text[pos : pos + 1]
        if separator == "}":
            return items, pos + 1
        if separator != ",":
            raise _bad("array", text)
        pos += 1


def _quoted_element(text: str, pos: int) -> tuple[str, int]:
    """A double-quoted element from just after its quote; backslash escapes the next char."""
    chars: list[str] = []
    while pos < len(text):
        char = text[pos]
        if char == '"':
            return "".join(chars), pos + 1
        if char == "\\":
            pos += 1
            if pos == len(text):
                break
            char = text[pos]
        chars.append(char)
        pos += 1
    raise _bad("array", text)


def _unquoted_element(text: str, pos: int) -> tuple[str | None, int]:
    """An unquoted element: trailing blanks are not part of it, unquoted NULL is NULL."""
    chars: list[str] = []
    kept = 0  # length without trailing unescaped blanks
    escaped = False
    while pos < len(text) and text[pos] not in ",}":
        char = text[pos]
        if char in '{"':
            raise _bad("array", text)
        if char == "\\":
            pos += 1
            if pos == len(text):
                raise _bad("array", text)
            escaped = True
            chars.append(text[pos])
            kept = len(chars)
        else:
            chars.append(char)
            if char not in _ARRAY_SPACE:
                kept = len(chars)
        pos += 1
    element = "".join(chars[:kept])
    if not element:
        raise _bad("array", text)
    if not escaped and element.upper() == "NULL":
        return None, pos
    return element, pos


def _typed_items(items: _Items, convert: Callable[[str], Any], text: str) -> list[Any]:
    """Type each element; a level holds either sub-arrays only or elements only."""
    nested = [isinstance(item, list) for item in items]
    if any(nested) and not all(nested):
        raise _bad("array", text)
    typed: list[Any] = []
    for item in items:
        if isinstance(item, list):
            typed.append(_typed_items(item, convert, text))
        else:
            typed.append(None if item is None else convert(item))
    return typed


# --- Rows for the warehouse: a landed slot line, and the changes of one message ------------

# The transaction a message belongs to is named in the message itself for these kinds; other
# messages take the xid column of the slot line.
_OWN_XID_KINDS = frozenset(
    {
        "begin",
        "stream_start",
        "stream_commit",
        "stream_abort",
        "begin_prepare",
        "prepare",
        "stream_prepare",
        "commit_prepared",
        "rollback_prepared",
    }
)
_CHANGE_KINDS = frozenset({"insert", "update", "delete"})


_LSN = re.compile(r"([0-9A-Fa-f]{1,8})/([0-9A-Fa-f]{1,8})")


def parse_lsn(text: Any) -> int:
    """'X/Y' (hex halves of at most 32 bits each) as the 64-bit position it names."""
    match = _LSN.fullmatch(text) if isinstance(text, str) else None
    if match is None:
        raise ValueError(f"bad lsn {text!r}")
    return (int(match.group(1), 16) << 32) + int(match.group(2), 16)


# json.dumps(..., ensure_ascii=False) with one encoder: json.dumps builds one per call given
# options, and every row message has one or two tuples.
_dumps = json.JSONEncoder(ensure_ascii=False).encode


def _tuple_json(tuple_data: TupleData | None) -> str | None:
    if tuple_data is None:
        return None

    def text(kind: str, raw: bytes | None) -> str | None:
        if raw is None:
            return None
        if kind == "b":
            return base64.b64encode(raw).decode("ascii")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:  # the slot sends text in the database's encoding
            raise ValueError(f"a column's text value is not UTF-8: {exc}") from None

    return _dumps([[kind, text(kind, raw)] for kind, raw in tuple_data])


def message_row(line: str, in_stream: bool) -> dict[str, Any]:
    """One landed slot line ({"lsn", "xid", "data"}) as the flat row the warehouse stores:
    which transaction and subtransaction it belongs to, its kind, and its payload as text.
    Never raises: a line that cannot be decoded comes back with `error` set."""
    try:
        entry = loads(line)
        if not isinstance(entry, dict):
            raise ValueError("line is not a JSON object")
        for field in ("lsn", "xid", "data"):
            if field not in entry:
                raise ValueError(f"missing field: {field}")
        lsn = parse_lsn(entry["lsn"])
        line_xid = entry["xid"]
        if line_xid is not None and (isinstance(line_xid, bool) or not isinstance(line_xid, int)):
            raise ValueError(f"xid is not an integer: {line_xid!r}")
        if not isinstance(entry["data"], str):
            raise ValueError(f"data is not base64 text: {entry['data']!r}"[:200])
        message = decode_message(base64.b64decode(entry["data"], validate=True), in_stream)
        old_tuple_json = _tuple_json(message.get("old_tuple"))
        new_tuple_json = _tuple_json(message.get("new_tuple"))
    except (ValueError, TypeError, binascii.Error) as exc:
        return {"error": str(exc) or type(exc).__name__}
    kind = message["kind"]
    own_xid = message.get("xid") if kind in _OWN_XID_KINDS else None
    relation = column_types = None
    if kind == "relation":
        columns = message["columns"]
        column_types = column_types_json(
            {c["name"]: pg_column_type(c["type_oid"], c["type_modifier"]) for c in columns}
        )
        relation = _dumps(
            {
                "namespace": message["namespace"],
                "name": message["relation_name"],
                "columns": [
                    {"name": c["name"], "is_key": c["is_key"], "type_oid": c["type_oid"]}
                    for c in message["columns"]
                ],
            }
        )
    return {
        "error": None,
        "kind": kind,
        "lsn": lsn,
        "txn_xid": own_xid if own_xid is not None else line_xid,
        # Inside a stream a change names its (sub)transaction; Stream Abort names the aborted one.
        "sub_xid": message.get("subxid") if kind == "stream_abort" else message.get("xid"),
        "first_segment": message.get("first_segment"),
        "commit_lsn": message.get("commit_lsn"),
        "commit_ts": message.get("commit_ts"),
        "gid": message.get("gid"),
        "relation_oid": message.get("relation_oid"),
        "relation_json": relation,
        "column_types": column_types,
        "old_kind": message.get("old_kind"),
        "old_tuple_json": old_tuple_json,
        "new_tuple_json": new_tuple_json,
        "truncate_oids": message.get("relation_oids"),
    }


# A Relation's columns as (name, is_key, type_oid).
RelationColumns = tuple[tuple[str, bool, int], ...]


@functools.lru_cache(maxsize=1024)
def _relation_shape(relation_json: str) -> tuple[str, RelationColumns]:
    """A Relation message's table and columns. Every change of a relation carries the same
    text, so it is parsed once, not once per change."""
    relation = loads(relation_json)
    columns = tuple((c["name"], c["is_key"], c["type_oid"]) for c in relation["columns"])
    return f"{relation['namespace']}.{relation['name']}", columns


def _image(columns: RelationColumns, tuple_json: str) -> dict[str, str | None]:
    """Column -> canonical JSON text of its value; None where the value is unchanged TOAST."""
    values = loads(tuple_json)
    if len(values) != len(columns):
        raise ValueError(f"tuple has {len(values)} columns, relation has {len(columns)}")
    image: dict[str, str | None] = {}
    for (name, _, type_oid), (kind, text) in zip(columns, values, strict=True):
        if text is None:
            raw = None
        else:
            raw = base64.b64decode(text) if kind == "b" else text.encode("utf-8")
        try:
            known, value = typed_value(kind, raw, type_oid)
        except ValueError as exc:
            raise ValueError(f"column {name!r}: {exc}") from None
        image[name] = value if known else None
    return image


def _key_json(image: dict[str, str | None], key_columns: list[str]) -> str:
    parts = []
    for name in sorted(key_columns):
        value = image.get(name)
        if value is None:
            raise ValueError(f"key column {name!r} has no value")
        parts.append(f"{canonical_json(name)}:{value}")
    return "{" + ",".join(parts) + "}"


def change_rows(
    relation_json: str | None,
    kind: str,
    old_kind: str | None,
    old_tuple_json: str | None,
    new_tuple_json: str | None,
    source_name: str,
    declared_keys: KeyLookup | None = None,
) -> list[dict[str, Any]]:
    """The change-log rows of one Insert, Update, Delete or Truncate of a committed transaction.

    An Update whose old key differs from its new key is a primary key change: a delete of the
    old key and an update that brings the new one, at the same position, so the new key's
    unchanged TOAST columns ('u') can take the old key's values downstream. Never raises:
    errors come back as one row with `error` set."""
    try:
        if relation_json is None:
            raise ValueError("no Relation message for this relation before the change")
        table, columns = _relation_shape(relation_json)
        if kind == "truncate":
            return [_row(table, None, "truncate", {})]
        if kind not in _CHANGE_KINDS:
            raise ValueError(f"not a row change: {kind}")
        declared = declared_keys("pgoutput", source_name, table) if declared_keys else None
        key_columns = declared or [name for name, is_key, _ in columns if is_key]
        key_columns = key_columns or [name for name, _, _ in columns]
        old = _image(columns, old_tuple_json) if old_tuple_json else None
        if kind == "delete":
            if old is None:
                raise ValueError("delete without an old key or tuple")
            return [_row(table, _key_json(old, key_columns), "delete", {})]
        if new_tuple_json is None:
            raise ValueError(f"{kind} without a new tuple")
        new = _image(columns, new_tuple_json)
        if old is not None and old_kind == "O":
            # REPLICA IDENTITY FULL: the old row holds the unchanged TOAST values.
            new = {name: old.get(name) if value is None else value for name, value in new.items()}
        new_key = _key_json(new, key_columns)
        if kind == "update" and old is not None:
            old_key = _key_json(old, key_columns)
            if old_key != new_key:
                return [_row(table, old_key, "delete", {}), _row(table, new_key, "update", new)]
        return [_row(table, new_key, kind, new)]
    except (ValueError, KeyError, TypeError) as exc:
        return [{"error": str(exc) or type(exc).__name__}]


# The fields of a change row; an error row holds `error` only.
CHANGE_ROW_COLUMNS = tuple(
    (name, data_type)
    for name, data_type in CHANGE_COLUMNS
    if name in {"error", "source_table", "key_json", "op", "row_image"}
)


def _row(table: str, key_json: str | None, op: str, image: dict[str, str | None]) -> dict:
    return {
        "error": None,
        "source_table": table,
        "key_json": key_json,
        "op": op,
        "row_image": image,
    }
