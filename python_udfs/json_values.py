"""Canonical JSON values, instants and sortable positions shared by every source family.

Every family must type values the same way and encode its source order so that plain string
comparison is source order (docs/decisions/001-unified-change-log.md, "Canonical values" and
"Sort positions"); keeping both here makes the families agree by construction.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import json
import math
import re
import uuid
from collections.abc import Callable
from decimal import ROUND_FLOOR, Decimal, InvalidOperation
from typing import Any

import msgspec

_MAX_EXACT_INT = 2**53
_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_ORDINAL = _EPOCH.toordinal()
_NS_PER_S = 10**9
# datetime's range: instants outside it could not be formatted back, so they are rejected early.
_MIN_NS = (dt.datetime.min - _EPOCH) // dt.timedelta(microseconds=1) * 1000
_MAX_NS = (dt.datetime.max - _EPOCH) // dt.timedelta(microseconds=1) * 1000 + 999

# How sources spell the doubles JSON has no number for; normalize writes them the same way.
NON_FINITE_FLOAT_TEXTS = frozenset({"NaN", "Infinity", "-Infinity"})

_INSTANT = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))?"
)


class JsonDocument:
    """A JSON column's value. It is kept as the JSON value itself, so its numbers are
    not re-typed (a big integer inside stays a number); only its keys get sorted."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value


def _finite_json_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"number out of double range: {text}")
    return value


def _no_json_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# Source lines are parsed with msgspec, the faster parser (docs/decisions/010), which, like
# json's parse_float, hands a float literal's text to its hook. It is stricter: it
# refuses NaN, lone surrogates and some nesting json takes. Whatever it refuses goes to json, so
# every text gets json's value or json's error, as before.
_MSGSPEC_REFUSALS = (msgspec.DecodeError, UnicodeEncodeError, RecursionError)


def _loads_with(
    first: msgspec.json.Decoder | None = None, **options: Any
) -> Callable[[str | bytes], Any]:
    """json.loads(text, **options) with one decoder: json.loads builds a new one on every call
    that passes options, a measurable share of a short line's decoding. With `first`, msgspec
    tries the text before json does."""
    decoder = json.JSONDecoder(**options)

    def loads(text: str | bytes) -> Any:
        if isinstance(text, str) and not text.startswith("\ufeff"):
            if first is not None:
                try:
                    return first.decode(text)
                except _MSGSPEC_REFUSALS:
                    pass
            return decoder.decode(text)
        # bytes (encoding detection) and a leading BOM (its own error) as json.loads has them
        return json.loads(text, **options)

    return loads


# json.loads(text): the line envelopes.
loads = _loads_with(msgspec.json.Decoder())
# json.loads(text, parse_float=Decimal): NUMERIC values written as JSON numbers stay exact.
loads_exact = _loads_with(msgspec.json.Decoder(float_hook=Decimal), parse_float=Decimal)


def line_object(line: Any, load: Callable[[str | bytes], Any] = loads) -> dict[str, Any]:
    """A landed line's JSON object. Anything else raises ValueError whose message is the
    quarantine reason, in the same words for every family."""
    if not isinstance(line, (str, bytes)):
        raise ValueError("malformed line JSON: no text")
    try:
        document = load(line)
    except (ValueError, RecursionError) as exc:  # json recurses once per level of nesting
        raise ValueError(f"malformed line JSON: {exc}") from None
    if not isinstance(document, dict):
        raise ValueError("malformed line JSON: not an object")
    return document


_loads_document = _loads_with(parse_float=_finite_json_float, parse_constant=_no_json_constant)


def parse_json_document(text: str) -> JsonDocument:
    """Parse a JSON column's text; ValueError for anything that is not JSON (NaN included)."""
    return JsonDocument(_loads_document(text))


def normalize(value: Any) -> Any:
    """Return `value` with the canonical JSON typing, so equal values serialise identically.

    Integers and decimals keep their JSON number form only where a double holds them exactly;
    otherwise they become decimal strings, so no consumer silently loses digits. A float is a
    double already and stays a number (NaN and the infinities, which JSON lacks, become strings).
    """
    if isinstance(value, JsonDocument):
        return value.value
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value if -_MAX_EXACT_INT <= value <= _MAX_EXACT_INT else str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return value
    if isinstance(value, Decimal):
        return _normalize_decimal(value)
    if isinstance(value, dict):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [normalize(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            return _format_wall_clock(value)
        return _format_wall_clock(value.astimezone(dt.UTC).replace(tzinfo=None)) + "Z"
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
    if isinstance(value, dt.time):
        return f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    if isinstance(value, uuid.UUID):
        return str(value)
    raise TypeError(f"no JSON form for {type(value).__name__}")


# One encoder for every call: json.dumps with options builds a new JSONEncoder each time, and
# the flatten UDFs encode every cell.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
_encode_string = json.encoder.encode_basestring


def canonical_json(value: Any) -> str:
    """Serialise `value` canonically: equal values give equal text, so text can be compared.

    Most cells are scalars: they skip the encoder's per-call setup and are spelled as the
    encoder spells them."""
    normal = normalize(value)
    if isinstance(normal, str):
        return _encode_string(normal)
    if normal is None:
        return "null"
    if isinstance(normal, bool):
        return "true" if normal else "false"
    if isinstance(normal, int):
        return int.__repr__(normal)
    if isinstance(normal, float):
        return float.__repr__(normal)  # finite: normalize spells NaN and the infinities
    return _CANONICAL.encode(normal)


def parse_instant_ns(value: Any) -> int:
    """Epoch nanoseconds of an RFC 3339 / ISO-8601 instant or of a number of epoch milliseconds.

    Sources write instants with 0 to 9 fractional digits and various offsets, which do not sort
    as text; integers compare correctly. A string without a zone is UTC (Datastream writes
    source_timestamp that way).
    """
    if isinstance(value, bool):
        raise ValueError(f"not an instant: {value!r}")
    if isinstance(value, (int, float, Decimal)):
        ns = _millis_to_ns(value)
    elif isinstance(value, str):
        ns = _text_to_ns(value)
    else:
        raise ValueError(f"not an instant: {value!r}")
    if not _MIN_NS <= ns <= _MAX_NS:
        raise ValueError(f"instant out of range: {value!r}")
    return ns


def format_instant_micros(micros: int) -> str:
    """Format epoch microseconds as the canonical instant text, 'YYYY-MM-DDTHH:MM:SS.ffffffZ'."""
    return _format_wall_clock(_EPOCH + dt.timedelta(microseconds=micros)) + "Z"


def pos_uint(n: int, width: int) -> str:
    """Zero-padded unsigned position part: fixed width makes text order equal numeric order."""
    if n < 0 or n >= 10**width:
        raise ValueError(f"{n} does not fit {width} unsigned digits")
    return f"{n:0{width}d}"


def pos_int64(n: int) -> str:
    """Signed 64-bit position part, offset by 2**63 so that negatives sort first."""
    if not -(2**63) <= n < 2**63:
        raise ValueError(f"{n} is not a 64-bit integer")
    return pos_uint(n + 2**63, 20)


def pos_instant(ns: int) -> str:
    """Epoch-nanosecond position part; the offset keeps instants before 1970 in order."""
    return pos_uint(ns + 10**20, 21)


def pos_text(s: str) -> str:
    """Text position part: hex keeps '.' and '!' out of it, '!' ends it below any hex digit.

    UTF-8 byte order is code point order, and the terminator makes a prefix sort first.
    """
    return s.encode("utf-8").hex() + "!"


def pos_join(*parts: str) -> str:
    """Join position parts; '.' sorts below every digit, so a shorter tuple sorts first."""
    return ".".join(parts)


def _normalize_decimal(d: Decimal) -> int | float | str:
    """Integral decimals follow the integer rule; others stay numbers only if a double is exact."""
    if d.is_nan():
        return "NaN"
    if d.is_infinite():
        return "Infinity" if d > 0 else "-Infinity"
    if d == d.to_integral_value():
        return int(d) if abs(d) <= _MAX_EXACT_INT else _plain_decimal(d)
    if Decimal(repr(float(d))) == d:
        return float(d)
    return _plain_decimal(d)


def _plain_decimal(d: Decimal) -> str:
    """Decimal text without exponent or trailing fractional zeros: one spelling per value."""
    text = format(d, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _format_wall_clock(value: dt.datetime) -> str:
    """'YYYY-MM-DDTHH:MM:SS.ffffff' with a four-digit year, whatever the platform's strftime."""
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}T"
        f"{value.hour:02d}:{value.minute:02d}:{value.second:02d}.{value.microsecond:06d}"
    )


def _millis_to_ns(value: int | float | Decimal) -> int:
    """Epoch milliseconds (Datastream JSON may carry them) to nanoseconds, flooring sub-ns."""
    if isinstance(value, int):
        return value * 1_000_000
    try:
        millis = Decimal(repr(value)) if isinstance(value, float) else value
        if not millis.is_finite():
            raise ValueError(f"not an instant: {value!r}")
        return int(millis.scaleb(6).to_integral_value(rounding=ROUND_FLOOR))
    except InvalidOperation as exc:
        raise ValueError(f"not an instant: {value!r}") from exc


def _text_to_ns(text: str) -> int:
    """Parse the instant text exactly (nanoseconds), rejecting anything not ISO-8601 shaped."""
    match = _INSTANT.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not an ISO-8601 instant: {text!r}")
    year, month, day, hour, minute, second, fraction, zulu, sign, off_h, off_m = match.groups()
    hours, minutes, seconds = int(hour), int(minute), int(second)
    if hours > 23 or minutes > 59 or seconds > 59:
        raise ValueError(f"no such time of day in {text!r}")
    offset_s = 0
    if sign is not None and zulu is None:
        if int(off_h) > 23 or int(off_m) > 59:
            raise ValueError(f"bad UTC offset in {text!r}")
        offset_s = (int(off_h) * 3600 + int(off_m) * 60) * (1 if sign == "+" else -1)
    epoch_s = _epoch_day(year, month, day) * 86_400 + hours * 3600 + minutes * 60 + seconds
    return (epoch_s - offset_s) * _NS_PER_S + (int(fraction.ljust(9, "0")) if fraction else 0)


@functools.lru_cache(maxsize=4096)
def _epoch_day(year: str, month: str, day: str) -> int:
    """Days since 1970-01-01, the calendar validated; cached, as a stream's instants share
    few dates (half the cost of parsing an instant was building a datetime)."""
    return dt.date(int(year), int(month), int(day)).toordinal() - _EPOCH_ORDINAL
