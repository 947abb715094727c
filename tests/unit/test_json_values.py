"""Contract value typing, instant parsing and sortable position encoding."""

from __future__ import annotations

import datetime as dt
import json
import random
import uuid
from decimal import Decimal

import pytest

from python_udfs.json_values import (
    canonical_json,
    format_instant_micros,
    line_object,
    loads,
    loads_exact,
    normalize,
    parse_instant_ns,
    parse_json_document,
    pos_instant,
    pos_int64,
    pos_join,
    pos_text,
    pos_uint,
)

RNG_SEED = 20240229


def reparse(value):
    """What flatten_event would see if the canonical text were landed again."""
    return json.loads(canonical_json(value), parse_float=Decimal)


# --- normalize ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (True, True),
        (False, False),
        (None, None),
        ("text", "text"),
        (0, 0),
        (2**53, 2**53),
        (-(2**53), -(2**53)),
        (2**53 + 1, "9007199254740993"),
        (-(2**53) - 1, "-9007199254740993"),
        (2**63 - 1, "9223372036854775807"),
    ],
)
def test_normalize_scalars_and_integer_limits(value, expected):
    result = normalize(value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("0.1"), 0.1),
        (Decimal("1.10"), 1.1),
        (Decimal("-2.5"), -2.5),
        (Decimal("5.00"), 5),
        (Decimal("-0"), 0),
        (Decimal("1E+2"), 100),
        (Decimal("1E-30"), 1e-30),
        (Decimal("100000000000000000000"), "100000000000000000000"),
        (Decimal("1E+20"), "100000000000000000000"),
        (Decimal("12345678901234567890.00"), "12345678901234567890"),
        (Decimal("12345678901234567890.5"), "12345678901234567890.5"),
        (Decimal("0.10000000000000000000000001"), "0.10000000000000000000000001"),
        (Decimal("1.2345678901234567890123E-5"), "0.000012345678901234567890123"),
        (Decimal("-123456789.123456789123"), "-123456789.123456789123"),
        (Decimal("NaN"), "NaN"),
        (Decimal("Infinity"), "Infinity"),
        (Decimal("-Infinity"), "-Infinity"),
    ],
)
def test_normalize_decimals_keep_numbers_only_where_a_double_is_exact(value, expected):
    result = normalize(value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.1, 0.1),
        (3.0, 3.0),
        (-0.0, -0.0),
        (1e20, 1e20),
        (1.7976931348623157e308, 1.7976931348623157e308),
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_normalize_keeps_doubles_as_numbers(value, expected):
    """A double loses no digits as a JSON number; only JSON's missing NaN/Infinity need text."""
    result = normalize(value)
    assert result == expected
    assert type(result) is type(expected)


def test_normalize_fractional_double_and_json_decimal_spellings_agree():
    # Avro gives a float, JSON a Decimal: the same fractional value must come out the same.
    for number in (0.1, 2.5, 1e-7, 123456.789):
        assert normalize(number) == normalize(Decimal(repr(number)))


def test_json_document_is_kept_as_the_value_itself():
    document = parse_json_document('{"b": [1, 2.50], "a": {"n": 12345678901234567890}}')
    assert canonical_json(document) == '{"a":{"n":12345678901234567890},"b":[1,2.5]}'


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "1e400", "{bad"])
def test_json_document_rejects_what_json_is_not(text):
    with pytest.raises(ValueError):
        parse_json_document(text)


def _outcome(loads, text):
    try:
        # repr, not ==: 1 == 1.0 == Decimal("1.0"), and Decimal("1.10") == Decimal("1.1")
        return "value", repr(loads(text))
    except Exception as exc:  # the error itself is what is compared
        return type(exc), str(exc)


@pytest.mark.parametrize(
    "text",
    [
        '{"n": 1.10, "i": 12345678901234567890, "s": "\u00e9", "l": [0.1, -2e-3]}',
        b'{"n": 1.10, "s": "\xc3\xa9"}',
        '{"a": 1.5}'.encode("utf-16"),
        "\ufeff{}",
        "{bad",
        '{"a": 1} trailing',
        "",
        "NaN",
        None,
        # msgspec decodes these: the same values, types and key order as json
        '{"b": 1, "a": [1.0, 1E2, 1e400, -0, -0.0, 0e0, 5e-324, 1.7976931348623157e308]}',
        "[18446744073709551616, -9223372036854775809, 123456789012345678901234567890]",
        '{"a": 1, "a": 2}',
        '"\\ud83d\\ude00 \\u0000 \\/ \u2028"',
        " \t[true, false, null]\r\n",
        "[" * 900 + "]" * 900,
        # msgspec refuses these, json takes them: json's value
        '"\\ud800"',
        "[Infinity, -Infinity, NaN]",
        # both refuse: json's error
        "\ud800",
        '"a\nb"',
        "[1,]",
        "01",
        "1.",
        "[" * 5000 + "]" * 5000,
    ],
)
@pytest.mark.parametrize(
    ("fast", "reference"),
    [
        (loads_exact, lambda text: json.loads(text, parse_float=Decimal)),
        (loads, json.loads),
    ],
    ids=["loads_exact", "loads"],
)
def test_fast_loads_behave_as_json_loads(text, fast, reference):
    # msgspec first, json for what it refuses; bytes, a BOM and every error must still come out
    # as json.loads has them, because error messages reach the quarantine.
    assert _outcome(fast, text) == _outcome(reference, text)


def test_loads_exact_keeps_fractions_exact():
    document = loads_exact('{"n": 1.10, "x": 0.1}')
    assert [str(document["n"]), str(document["x"])] == ["1.10", "0.1"]


def test_normalize_temporal_bytes_uuid_and_containers():
    paris = dt.timezone(dt.timedelta(hours=2))
    value = {
        "aware": dt.datetime(2024, 2, 29, 12, 30, 1, 5, tzinfo=paris),
        "naive": dt.datetime(2024, 2, 29, 12, 30, 1),
        "old": dt.datetime(5, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        "day": dt.date(2024, 2, 29),
        "clock": dt.time(7, 8, 9, 10),
        "blob": b"\x00\xffhi",
        "id": uuid.UUID("12345678-1234-5678-1234-567812345678"),
        "list": [1, Decimal("0.5"), [2**60]],
        7: "non-string key",
    }
    assert normalize(value) == {
        "aware": "2024-02-29T10:30:01.000005Z",
        "naive": "2024-02-29T12:30:01.000000",
        "old": "0005-01-02T03:04:05.000000Z",
        "day": "2024-02-29",
        "clock": "07:08:09.000010",
        "blob": "AP9oaQ==",
        "id": "12345678-1234-5678-1234-567812345678",
        "list": [1, 0.5, ["1152921504606846976"]],
        "7": "non-string key",
    }


def test_normalize_rejects_types_without_a_json_form():
    with pytest.raises(TypeError):
        normalize(object())


# --- canonical_json ----------------------------------------------------------------------


def test_canonical_json_sorts_keys_compacts_and_keeps_unicode():
    text = canonical_json({"b": [1, {"z": None, "a": "é"}], "a": Decimal("0.25")})
    assert text == '{"a":0.25,"b":[1,{"a":"é","z":null}]}'


@pytest.mark.parametrize(
    "value",
    [
        {"n": 2**60, "d": Decimal("12345678901234567890.5"), "f": 0.1, "i": 5},
        [float("nan"), float("-inf"), Decimal("1E+20"), 1e-7],
        {"t": dt.datetime(2024, 1, 1, tzinfo=dt.UTC), "b": b"\x01"},
    ],
)
def test_canonical_json_is_stable_when_landed_again(value):
    first = canonical_json(value)
    assert canonical_json(reparse(value)) == first


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        False,
        0,
        -(2**53),
        2**53 + 1,
        0.1,
        -0.0,
        1e-7,
        1.5e300,
        Decimal("2.50"),
        Decimal("1E+2"),
        float("inf"),
        "",
        'quote " back \\ slash',
        "tab\tnewline\ncontrol\x01 del\x7f",
        "é ü 中文 😀",
        "lone \ud800 surrogate",
        dt.date(2024, 2, 29),
        b"\x00\xff",
    ],
)
def test_canonical_json_spells_a_scalar_as_inside_a_document(value):
    assert canonical_json(value) == canonical_json([value])[1:-1]


# --- instants ----------------------------------------------------------------------------

NOON_NS = 1_709_208_000 * 10**9  # 2024-02-29T12:00:00Z


@pytest.mark.parametrize(
    ("text", "extra_ns"),
    [
        ("2024-02-29T12:00:00Z", 0),
        ("2024-02-29T12:00:00", 0),
        ("2024-02-29 12:00:00", 0),
        ("2024-02-29t12:00:00z", 0),
        ("2024-02-29T12:00:00.5Z", 500_000_000),
        ("2024-02-29T12:00:00.123Z", 123_000_000),
        ("2024-02-29T12:00:00.123456Z", 123_456_000),
        ("2024-02-29T12:00:00.123456789Z", 123_456_789),
        ("2024-02-29T14:00:00+02:00", 0),
        ("2024-02-29T14:00:00+0200", 0),
        ("2024-02-29T06:30:00.000001-05:30", 1_000),
        ("2024-02-29T12:00:00+00:00", 0),
    ],
)
def test_parse_instant_ns_text_forms(text, extra_ns):
    assert parse_instant_ns(text) == NOON_NS + extra_ns


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1_709_208_000_000, NOON_NS),
        (0, 0),
        (-1, -1_000_000),
        (Decimal("1709208000000.5"), NOON_NS + 500_000),
        (1709208000000.25, NOON_NS + 250_000),
    ],
)
def test_parse_instant_ns_epoch_millis(value, expected):
    assert parse_instant_ns(value) == expected


def test_parse_instant_ns_compares_instants_not_text():
    earlier_later = [
        # as text '.' < 'Z', so the later instant would sort first
        ("2024-02-29T12:00:00Z", "2024-02-29T12:00:00.001Z"),
        # 13:00+02:00 is 11:00Z, although its text sorts after "12:00"
        ("2024-02-29T13:00:00+02:00", "2024-02-29T12:00:00Z"),
        ("2024-02-29T12:00:00.9", "2024-02-29T12:00:01"),
        ("2024-02-29T12:00:00.123456789Z", "2024-02-29T12:00:00.12345679Z"),
        ("2024-02-29T23:59:59-01:00", "2024-03-01T00:59:59.000000001Z"),
    ]
    for earlier, later in earlier_later:
        assert parse_instant_ns(earlier) < parse_instant_ns(later), (earlier, later)


def test_parse_instant_ns_agrees_with_datetime_arithmetic():
    rng = random.Random(7)
    for _ in range(2000):
        wall = dt.datetime(1, 1, 2) + dt.timedelta(
            seconds=rng.randrange(315_000_000_000), microseconds=rng.randrange(10**6)
        )
        nanos = rng.randrange(1000)
        offset_minutes = rng.randrange(-23 * 60, 23 * 60 + 1)
        text = (
            f"{wall.year:04d}-{wall.month:02d}-{wall.day:02d}T{wall.hour:02d}:{wall.minute:02d}:"
            f"{wall.second:02d}.{wall.microsecond:06d}{nanos:03d}"
            f"{'-' if offset_minutes < 0 else '+'}"
            f"{abs(offset_minutes) // 60:02d}:{abs(offset_minutes) % 60:02d}"
        )
        utc = wall - dt.timedelta(minutes=offset_minutes)
        expected_micros = (utc - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
        assert parse_instant_ns(text) == expected_micros * 1000 + nanos, text


@pytest.mark.parametrize(
    "value",
    [
        "",
        "yesterday",
        "2024-02-29",
        "2024-02-30T00:00:00Z",
        "2023-02-29T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T23:60:00Z",
        "2024-01-01T23:59:60Z",
        "0000-01-01T00:00:00Z",
        "2024-01-01T00:00:00.Z",
        "2024-01-01T00:00:00.1234567890Z",
        "2024-01-01T00:00:00+25:00",
        "2024-01-01T00:00:00+01:60",
        "2024-01-01T00:00:00 UTC",
        "0001-01-01T00:00:00+01:00",
        True,
        None,
        [2024],
        float("nan"),
        float("inf"),
        Decimal("NaN"),
        10**30,
    ],
)
def test_parse_instant_ns_rejects(value):
    with pytest.raises(ValueError):
        parse_instant_ns(value)


@pytest.mark.parametrize(
    ("micros", "text"),
    [
        (0, "1970-01-01T00:00:00.000000Z"),
        (-1, "1969-12-31T23:59:59.999999Z"),
        (1_709_208_000_123_456, "2024-02-29T12:00:00.123456Z"),
    ],
)
def test_format_instant_micros(micros, text):
    assert format_instant_micros(micros) == text
    assert parse_instant_ns(text) == micros * 1000


# --- positions ---------------------------------------------------------------------------


def test_pos_uint_pads_and_refuses_what_does_not_fit():
    assert pos_uint(42, 5) == "00042"
    assert pos_uint(99999, 5) == "99999"
    with pytest.raises(ValueError):
        pos_uint(100000, 5)
    with pytest.raises(ValueError):
        pos_uint(-1, 5)


def test_pos_int64_bounds():
    assert pos_int64(-(2**63)) == "0" * 20
    assert pos_int64(0) == "0" + str(2**63)
    assert pos_int64(2**63 - 1) == str(2**64 - 1)
    with pytest.raises(ValueError):
        pos_int64(2**63)
    with pytest.raises(ValueError):
        pos_int64(-(2**63) - 1)


def test_pos_instant_and_text_shapes():
    assert pos_instant(0) == "1" + "0" * 20
    assert len(pos_instant(parse_instant_ns("0001-01-01T00:00:00Z"))) == 21
    assert len(pos_instant(parse_instant_ns("9999-12-31T23:59:59.999999999Z"))) == 21
    assert pos_text("a.b") == "612e62!"
    assert pos_text("") == "!"
    assert pos_join("1", "2!", "3") == "1.2!.3"


def _random_text(rng: random.Random) -> str:
    alphabet = ["a", "b", "!", ".", "0", "~", "é", "\u00ff", "\u4e2d", "\U0001f600", "\x00"]
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 4)))


def _compare(a, b) -> int:
    return (a > b) - (a < b)


@pytest.mark.parametrize(
    ("encode", "draw"),
    [
        (lambda n: pos_uint(n, 12), lambda rng: rng.choice([0, 9, 10, rng.randrange(10**12)])),
        (pos_int64, lambda rng: rng.choice([-(2**63), -1, 0, 1, rng.randrange(-(2**63), 2**63)])),
        (pos_instant, lambda rng: rng.randrange(-(6 * 10**19), 25 * 10**19)),
        (pos_text, _random_text),
    ],
    ids=["uint", "int64", "instant", "text"],
)
def test_single_part_encoding_preserves_order(encode, draw):
    rng = random.Random(RNG_SEED)
    for _ in range(3000):
        a, b = draw(rng), draw(rng)
        assert _compare(encode(a), encode(b)) == _compare(a, b), (a, b)


def test_text_order_is_code_point_order_for_prefixes():
    assert pos_text("ab") < pos_text("ab\x00") < pos_text("ab0") < pos_text("abc")
    assert pos_join(pos_text("a"), pos_uint(9, 2)) < pos_join(pos_text("a!"), pos_uint(0, 2))
    assert pos_join(pos_text("a"), pos_uint(9, 2)) < pos_join(pos_text("a."), pos_uint(0, 2))


def test_joined_tuples_compare_part_by_part():
    """Tuples of (text, uint, int64, instant) of varying lengths, like sort_keys positions."""
    rng = random.Random(RNG_SEED + 1)

    def draw():
        length = rng.randint(0, 4)
        return (
            _random_text(rng),
            rng.choice([0, 5, 10, rng.randrange(10**20)]),
            rng.choice([-1, 0, 1, rng.randrange(-(2**63), 2**63)]),
            rng.choice([-1, 0, rng.randrange(-(10**20), 8 * 10**20)]),
        )[:length]

    def encode(values):
        encoders = (pos_text, lambda n: pos_uint(n, 20), pos_int64, pos_instant)
        return pos_join(*(f(v) for f, v in zip(encoders, values, strict=False)))

    for _ in range(5000):
        a, b = draw(), draw()
        assert _compare(encode(a), encode(b)) == _compare(a, b), (a, b)


@pytest.mark.parametrize("load", [loads, loads_exact])
def test_a_line_nested_deeper_than_the_parser_recurses_is_malformed_json(load):
    """json recurses once per level: a line of 100,000 brackets is bad input, not a crash."""
    with pytest.raises(ValueError, match="malformed line JSON: maximum recursion depth"):
        line_object('{"values": ' + "[" * 100_000 + "]" * 100_000 + "}", load)
