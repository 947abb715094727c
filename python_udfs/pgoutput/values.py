"""TupleData values: each type's text output (DateStyle ISO, bytea_output hex: the server
defaults) or binary form, as the JSON value the warehouse keeps."""

from __future__ import annotations

import datetime as dt
import math
import re
import struct
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from python_udfs.json_values import JsonDocument, canonical_json, parse_json_document


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


# Each converter returns a value that canonical_json serialises with the canonical typing
# (docs/decisions/001, "Canonical values").
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
