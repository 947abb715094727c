"""Spanner change stream rows (one landed JSON line each) to rows of the unified change log.

The output shape is docs/decisions/001-unified-change-log.md plus the Spanner columns below; the
rules are docs/sources/spanner.md and docs/architecture.md (and docs/decisions/004), each
promise with its tests in docs/guarantees.md. Field names and value encodings follow Google's
documented change stream record formats (data change, heartbeat and child partitions records)
in both dialects: GoogleSQL wraps a record as `ChangeRecord[0].<kind>[0]`, PostgreSQL puts it
under its kind directly.

Spanner's consistency rules (complete transactions only, the low watermark, children after
parents) need every record, not just its changes, so each row also says which record it came
from; the SQL counts records per transaction and tracks partitions from these columns.
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from python_udfs.change_log import CHANGE_COLUMNS
from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import (
    NON_FINITE_FLOAT_TEXTS,
    JsonDocument,
    canonical_json,
    format_instant_micros,
    line_object,
    loads_exact,
    normalize,
    parse_instant_ns,
    parse_json_document,
    pos_instant,
    pos_join,
    pos_text,
    pos_uint,
)
from python_udfs.source_types import STRING, column_types_json
from python_udfs.spanner.column_types import spanner_column_type
from python_udfs.table_settings import KeyLookup

# The version of the encoding of `sort_pos`, `txn_id` and `event_id` this decoder and its
# snapshot rows (snapshot.py, `snapshot_sort_pos`) give: raise it with any change to them, then
# pin the new digest in tests/unit/test_sort_key_pins.py. The warehouse records the version it
# was built with and `cdcw run` refuses to mix encodings until a full refresh
# (docs/decisions/013).
SORT_KEY_VERSION = 1

EXTRA_COLUMNS: tuple[tuple[str, str], ...] = (
    ("record_kind", "string"),  # 'data_change' | 'heartbeat' | 'child_partitions'
    ("partition_token", "string"),  # token the line was read from; None for the initial query
    ("record_ts", "bigint"),  # epoch micros: commit / heartbeat / child start timestamp
    ("record_sequence", "string"),  # raw text as given
    ("server_transaction_id", "string"),
    ("records_in_transaction", "bigint"),  # number_of_records_in_transaction
    ("partitions_in_transaction", "bigint"),  # number_of_partitions_in_transaction
    ("value_capture_type", "string"),
    ("mod_index", "int"),  # position in mods (0-based)
    ("column_names", "array<string>"),  # names in this record's column_types
    ("column_types", "string"),  # column_types.py: column -> [Spanner, Spark type]
    ("child_token", "string"),  # one row per child partition
    ("parent_tokens", "array<string>"),  # may contain None (initial query's children)
)
COLUMNS = CHANGE_COLUMNS + EXTRA_COLUMNS
FIELDS: tuple[str, ...] = tuple(name for name, _ in COLUMNS)

_RECORD_KINDS = {
    "data_change_record": "data_change",
    "heartbeat_record": "heartbeat",
    "child_partitions_record": "child_partitions",
}
# GoogleSQL's one column; a PostgreSQL export may keep its JSON column under the same name.
_CHANGE_RECORD = "ChangeRecord"
_OPS = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
# Updates under NEW_ROW and NEW_ROW_AND_OLD_VALUES carry every tracked column, under the others
# only the changed ones (cdc_history completes the rest).
_CAPTURE_TYPES = frozenset(
    {"NEW_ROW", "NEW_ROW_AND_OLD_VALUES", "OLD_AND_NEW_VALUES", "NEW_VALUES"}
)

_DIGITS = re.compile(r"[0-9]+")
_INT64 = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_BARE_TYPE_CODE = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_SEQUENCE_DIGITS = 20
_MOD_INDEX_DIGITS = 10


class _BadLine(Exception):
    """A line that yields no record; the message is the quarantine reason."""


def flatten_line(
    line: str, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> list[dict[str, Any]]:
    """Turn one landed change stream row into change-log rows, each with every field of COLUMNS
    (python_udfs/decoding.py's `Decoder`).

    A data change record gives one row per mod (one row without op if it has no mods, so its
    transaction can still be counted complete), a heartbeat one row, a child partitions record
    one row per child. Never raises: a line that cannot be read is one row with `error` set; a
    mod that cannot be read is its row with `error` set that still names its record, since the
    record has landed and its transaction's completeness depends on it.
    """
    token = None
    try:
        document = _line_document(line)
        if "partition_token" not in document:
            raise _BadLine("missing field: partition_token")
        raw_token = document["partition_token"]
        if raw_token is not None and not isinstance(raw_token, str):
            raise _BadLine(f"bad partition_token: {_shown(raw_token)}")
        token = raw_token
        kind, record = _unwrap(document)
        if kind == "heartbeat":
            ns = _instant_ns(record, "timestamp")
            return [_row(record_kind=kind, partition_token=token, record_ts=ns // 1000)]
        if kind == "child_partitions":
            return _child_rows(record, token)
        return _data_change_rows(record, token, source_name, settings.declared_keys)
    except _BadLine as exc:
        return [_row(error=str(exc), partition_token=token)]
    except Exception as exc:  # a UDF must not fail the run on input it did not foresee
        return [_row(error=f"unexpected error: {type(exc).__name__}: {exc}", partition_token=token)]


def _row(**fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(FIELDS)
    row.update(fields)
    return row


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _line_document(line: Any) -> dict[str, Any]:
    try:
        # Decimal keeps NUMERIC values written as JSON numbers exact.
        return line_object(line, loads_exact)
    except ValueError as exc:
        raise _BadLine(str(exc)) from None


def _present(fields: dict[str, Any], skip: str = "") -> dict[str, Any]:
    """Fields that hold something: the dialects leave the other record kinds null or empty."""
    return {
        name: value
        for name, value in fields.items()
        if name != skip and value is not None and value != [] and value != {}
    }


def _unwrap(document: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(record kind, record) of either dialect's shape; exactly one record must be present."""
    present = _present(document, skip="partition_token")
    if set(present) == {_CHANGE_RECORD}:
        outer = present[_CHANGE_RECORD]
        if isinstance(outer, list) and len(outer) == 1 and isinstance(outer[0], dict):
            present = _present(outer[0])
        elif isinstance(outer, dict):
            present = _present(outer)
        else:
            raise _BadLine("ChangeRecord must hold exactly one record struct")
    if not present:
        raise _BadLine("no change record in the line")
    if len(present) > 1:
        raise _BadLine(f"several record kinds in one line: {', '.join(sorted(present))}")
    ((name, record),) = present.items()
    kind = _RECORD_KINDS.get(name)
    if kind is None:
        raise _BadLine(f"unknown record kind {name!r}")
    # GoogleSQL holds the record in a one-element array, PostgreSQL as the object itself.
    if isinstance(record, list) and len(record) == 1:
        record = record[0]
    if not isinstance(record, dict):
        raise _BadLine(f"{name} must hold exactly one record object")
    return kind, record


def _instant_ns(record: dict[str, Any], field: str) -> int:
    value = record.get(field)
    if value is None:
        raise _BadLine(f"missing field: {field}")
    if not isinstance(value, str):
        raise _BadLine(f"bad {field}: {_shown(value)}")
    try:
        return parse_instant_ns(value)
    except ValueError as exc:
        raise _BadLine(f"bad {field}: {exc}") from None


def _text(record: dict[str, Any], field: str) -> str:
    value = record.get(field)
    if value is None or value == "":
        raise _BadLine(f"missing field: {field}")
    if not isinstance(value, str):
        raise _BadLine(f"bad {field}: {_shown(value)}")
    return value


def _sequence(record: dict[str, Any]) -> str:
    """record_sequence is a STRING; an export that wrote it as a number still names it."""
    value = record.get("record_sequence")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return str(value)
    return _text(record, "record_sequence")


def _count(record: dict[str, Any], field: str, minimum: int, required: bool) -> int | None:
    """An INT64 field: Spanner's JSON encoding writes INT64 as a string, others as a number."""
    value = record.get(field)
    if value is None:
        if required:
            raise _BadLine(f"missing field: {field}")
        return None
    if isinstance(value, str) and _DIGITS.fullmatch(value):
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise _BadLine(f"bad {field}: {_shown(value)}")
    if not minimum <= number < 2**63:
        raise _BadLine(f"bad {field}: {_shown(value)}")
    return number


def _choice(record: dict[str, Any], field: str, allowed: Any) -> str:
    value = record.get(field)
    if value is None:
        raise _BadLine(f"missing field: {field}")
    if not isinstance(value, str) or value.upper() not in allowed:
        raise _BadLine(f"unknown {field} {_shown(value)}")
    return value.upper()


def _child_rows(record: dict[str, Any], token: str | None) -> list[dict[str, Any]]:
    start_ns = _instant_ns(record, "start_timestamp")
    common = {
        "record_kind": "child_partitions",
        "partition_token": token,
        "record_ts": start_ns // 1000,
        "record_sequence": _sequence(record),
    }
    children = record.get("child_partitions")
    if children is None:
        raise _BadLine("missing field: child_partitions")
    if not isinstance(children, list):
        raise _BadLine("child_partitions is not an array")
    rows = []
    for child in children:
        if not isinstance(child, dict):
            raise _BadLine("child partition is not an object")
        child_token = child.get("token")
        if not isinstance(child_token, str) or not child_token:
            raise _BadLine(f"child partition without token: {_shown(child_token)}")
        parents = child.get("parent_partition_tokens")
        # The initial query's children have the parent [null]: no parent partition to wait for.
        if not isinstance(parents, list) or not all(
            parent is None or isinstance(parent, str) for parent in parents
        ):
            raise _BadLine(f"child partition {child_token!r}: bad parent_partition_tokens")
        rows.append(_row(**common, child_token=child_token, parent_tokens=list(parents)))
    return rows or [_row(**common)]


def _sequence_part(sequence: str) -> str:
    """record_sequence orders a transaction's records. Spanner writes decimal digits, not
    always of one width (its documentation shows '00000000' and '1000012389'), so digits
    compare as numbers ('9' before '10'). Any other text compares as text, after every number,
    so two records compare the same way whatever forms their sequences take; a number with more
    than 20 significant digits lands there too, and it is larger than every number before it.
    """
    significant = sequence.lstrip("0") or "0"
    if _DIGITS.fullmatch(sequence) and len(significant) <= _SEQUENCE_DIGITS:
        return "0" + pos_uint(int(significant), _SEQUENCE_DIGITS)
    return "1" + pos_text(sequence)


def _event_id(
    token: str | None, commit_ns: int, transaction: str, sequence: str, mod_index: int | None
) -> str:
    """The record's identity in its partition plus the mod's place in it, as JSON text: fields
    cannot run into each other, null (the initial query) is no token's text, and the commit
    time in nanoseconds makes every spelling of one instant one id."""
    identity = [token, commit_ns, transaction, sequence, mod_index]
    return json.dumps(identity, separators=(",", ":"), ensure_ascii=False)


def _data_change_rows(
    record: dict[str, Any],
    token: str | None,
    source_name: str,
    declared_keys: KeyLookup | None,
) -> list[dict[str, Any]]:
    commit_ns = _instant_ns(record, "commit_timestamp")
    transaction = _text(record, "server_transaction_id")
    sequence = _sequence(record)
    identity: dict[str, Any] = {
        "record_kind": "data_change",
        "partition_token": token,
        "record_ts": commit_ns // 1000,
        "record_sequence": sequence,
        "server_transaction_id": transaction,
        "records_in_transaction": _count(
            record, "number_of_records_in_transaction", minimum=1, required=True
        ),
        "partitions_in_transaction": _count(
            record, "number_of_partitions_in_transaction", minimum=0, required=False
        ),
        "source_table": _text(record, "table_name"),
        "committed_at": commit_ns // 1000,
        "txn_id": transaction,
    }
    op = _OPS[_choice(record, "mod_type", _OPS)]
    capture = _choice(record, "value_capture_type", _CAPTURE_TYPES)
    types, primary_key, names = _column_types(record.get("column_types"))
    mods = record.get("mods")
    if mods is None:
        raise _BadLine("missing field: mods")
    if not isinstance(mods, list):
        raise _BadLine("mods is not an array")
    identity.update(
        value_capture_type=capture, column_names=names, column_types=_source_types(types)
    )
    position = (pos_instant(commit_ns), pos_text(transaction), _sequence_part(sequence))
    if not mods:
        return [
            _row(
                **identity,
                sort_pos=pos_join(*position),
                event_id=_event_id(token, commit_ns, transaction, sequence, None),
            )
        ]

    def declared() -> list[str] | None:
        if declared_keys is None:
            return None
        try:
            return declared_keys("spanner", source_name, identity["source_table"])
        except Exception as exc:  # a settings lookup failure is reported with the mod
            raise ValueError(f"declared_keys failed: {type(exc).__name__}: {exc}") from None

    rows = []
    for index, mod in enumerate(mods):
        row = _row(
            **identity,
            mod_index=index,
            sort_pos=pos_join(*position, pos_uint(index, _MOD_INDEX_DIGITS)),
            event_id=_event_id(token, commit_ns, transaction, sequence, index),
        )
        try:
            key, image = _mod_change(mod, op, types, primary_key, declared)
        except (ValueError, TypeError, OverflowError) as exc:
            row["error"] = f"mod {index}: {exc}"
        except Exception as exc:  # one unforeseen mod must not cost its record's other mods
            row["error"] = f"mod {index}: unexpected error: {type(exc).__name__}: {exc}"
        else:
            row.update(
                key_json=canonical_json(key),
                op=op,
                row_image={column: canonical_json(value) for column, value in image.items()},
                is_backfill=False,
            )
        rows.append(row)
    return rows


def _column_types(raw: Any) -> tuple[dict[str, dict[str, Any] | None], list[str], list[str]]:
    """(type by column, primary key columns, column names in order). A column whose type cannot
    be read has type None: only a mod that carries a value for it fails."""
    if raw is None:
        raise _BadLine("missing field: column_types")
    if not isinstance(raw, list):
        raise _BadLine("column_types is not an array")
    types: dict[str, dict[str, Any] | None] = {}
    primary_key, names = [], []
    for entry in raw:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise _BadLine(f"column_types entry without a name: {_shown(entry)}")
        name = entry["name"]
        types[name] = _type_of(entry.get("type"))
        names.append(name)
        if entry.get("is_primary_key") is True:
            primary_key.append(name)
    return types, primary_key, names


def _source_types(types: dict[str, dict[str, Any] | None]) -> str:
    """The record's column types as `cdc_source_columns` collects them (an unreadable type is
    named as unknown and read as text)."""
    return column_types_json(
        {
            name: spanner_column_type(type_json) if type_json is not None else (None, STRING)
            for name, type_json in types.items()
        }
    )


def _type_of(raw: Any) -> dict[str, Any] | None:
    """The Spanner Type object; GoogleSQL's column is JSON, which exports may write as text."""
    if isinstance(raw, str):
        if _BARE_TYPE_CODE.fullmatch(raw):
            return {"code": raw}
        try:
            raw = json.loads(raw)
        except ValueError:
            return None
    return raw if isinstance(raw, dict) and raw.get("code") is not None else None


def _mod_change(
    mod: Any,
    op: str,
    types: dict[str, dict[str, Any] | None],
    primary_key: list[str],
    declared: Callable[[], list[str] | None],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(key, row image) of one mod, values typed; ValueError naming what does not fit."""
    if not isinstance(mod, dict):
        raise ValueError("mod is not an object")
    if mod.get("keys") is None:
        raise ValueError("mod without keys")
    keys = _typed_values(mod["keys"], "keys", types)
    new = _typed_values(mod.get("new_values"), "new_values", types)
    old = _typed_values(mod.get("old_values"), "old_values", types)
    # A delete's last state is its old values; an insert's or update's, its new values.
    image = {**(old if op == "delete" else new), **keys}
    declared_columns = declared()
    if declared_columns:
        known = {**(new if op == "delete" else old), **image}
        missing = [column for column in declared_columns if column not in known]
        if missing:
            raise ValueError(f"declared key column {missing[0]!r} missing from the mod")
        return {column: known[column] for column in declared_columns}, image
    # Without is_primary_key flags, the mod's keys are the primary key.
    key_columns = primary_key or list(keys)
    if not key_columns:
        raise ValueError("no primary key: keys is empty and no column is_primary_key")
    missing = [column for column in key_columns if column not in keys]
    if missing:
        raise ValueError(f"key column {missing[0]!r} missing from keys")
    return {column: keys[column] for column in key_columns}, image


def _typed_values(raw: Any, what: str, types: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):  # a JSON column, written as text by some exports
        try:
            raw = loads_exact(raw)
        except ValueError:
            raise ValueError(f"{what} is not JSON: {_shown(raw)}") from None
    if not isinstance(raw, dict):
        raise ValueError(f"{what} is not an object")
    values = {}
    for column, value in raw.items():
        spanner_type = types.get(column)
        if spanner_type is None:
            raise ValueError(f"{what} column {column!r} has no type in column_types")
        try:
            values[column] = _typed(spanner_type, value)
        except (ValueError, TypeError, OverflowError) as exc:
            raise ValueError(f"{what} column {column!r}: {exc}") from None
    return values


def _typed(spanner_type: Any, value: Any) -> Any:
    """A value in Spanner's JSON encoding as the canonical value; ValueError if it does not fit.
    Unknown type codes (ENUM, PROTO, newer ones) keep the value as the JSON holds it."""
    if value is None:
        return None
    if not isinstance(spanner_type, dict) or spanner_type.get("code") is None:
        raise ValueError(f"type without a code: {_shown(spanner_type)}")
    code = spanner_type["code"]
    convert = _CONVERTERS.get(code.upper() if isinstance(code, str) else code)
    return normalize(value) if convert is None else convert(spanner_type, value)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal)) and not isinstance(value, bool)


def _int64(spanner_type: dict[str, Any], value: Any) -> int:
    if isinstance(value, str) and _INT64.fullmatch(value):
        number = int(value)
    elif isinstance(value, int) and not isinstance(value, bool):
        number = value
    else:
        raise ValueError(f"INT64 expects an integer, got {_shown(value)}")
    if not -(2**63) <= number < 2**63:
        raise ValueError(f"INT64 out of range: {_shown(value)}")
    return number


def _float(spanner_type: dict[str, Any], value: Any) -> float | str:
    if isinstance(value, str) and value in NON_FINITE_FLOAT_TEXTS:
        return value
    if not _is_number(value):
        raise ValueError(f"{spanner_type['code']} expects a number, got {_shown(value)}")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    # A bare NaN or Infinity token is already a float; only a finite number can overflow.
    if math.isinf(number) and not isinstance(value, float):
        raise ValueError(f"{spanner_type['code']} out of range: {_shown(value)}")
    return number


def _numeric(spanner_type: dict[str, Any], value: Any) -> Decimal | str:
    """A decimal string; PostgreSQL-dialect numeric (PG_NUMERIC) also has NaN."""
    if isinstance(value, str):
        if value == "NaN" and spanner_type.get("type_annotation") == "PG_NUMERIC":
            return value
        if _DECIMAL.fullmatch(value):
            return Decimal(value)
    elif isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return Decimal(value)
    raise ValueError(f"NUMERIC expects a decimal string, got {_shown(value)}")


def _bool(spanner_type: dict[str, Any], value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"BOOL expects true or false, got {_shown(value)}")
    return value


def _string(spanner_type: dict[str, Any], value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"STRING expects a string, got {_shown(value)}")
    return value


def _bytes(spanner_type: dict[str, Any], value: Any) -> bytes:
    """Decoded, so that normalize re-encodes one spelling per byte string."""
    if not isinstance(value, str):
        raise ValueError(f"BYTES expects base64 text, got {_shown(value)}")
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise ValueError(f"BYTES expects base64 text, got {_shown(value)}") from None


def _date(spanner_type: dict[str, Any], value: Any) -> dt.date:
    match = _DATE.fullmatch(value) if isinstance(value, str) else None
    try:
        if match is None:
            raise ValueError
        return dt.date(*(int(part) for part in match.groups()))
    except ValueError:
        raise ValueError(f"DATE expects YYYY-MM-DD, got {_shown(value)}") from None


def _timestamp(spanner_type: dict[str, Any], value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"TIMESTAMP expects RFC 3339 text, got {_shown(value)}")
    return format_instant_micros(parse_instant_ns(value) // 1000)


def _json(spanner_type: dict[str, Any], value: Any) -> JsonDocument:
    """The JSON value itself. Spanner writes it as text; a value already parsed into the line
    (as a PostgreSQL-dialect export may leave jsonb) is taken as it is."""
    if isinstance(value, str):
        try:
            return parse_json_document(value)
        except ValueError as exc:
            raise ValueError(f"JSON expects JSON text: {exc}") from None
    return JsonDocument(_plain_json(value))


def _plain_json(value: Any) -> Any:
    """Numbers of a parsed document as parse_json_document gives them: floats, not Decimals."""
    if isinstance(value, (Decimal, float)):
        number = float(value)
        if not math.isfinite(number):
            raise ValueError(f"JSON has no {_shown(value)}")
        return number
    if isinstance(value, list):
        return [_plain_json(item) for item in value]
    if isinstance(value, dict):
        return {name: _plain_json(item) for name, item in value.items()}
    return value


def _array(spanner_type: dict[str, Any], value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"ARRAY expects an array, got {_shown(value)}")
    element_type = spanner_type.get("array_element_type")
    if element_type is None:
        raise ValueError("ARRAY type without array_element_type")
    return [_typed(element_type, item) for item in value]


def _struct(spanner_type: dict[str, Any], value: Any) -> Any:
    """Typed field by field where struct_type names them; the value keeps its own shape
    (Spanner's JSON writes a struct as an array of field values, in field order)."""
    fields = (spanner_type.get("struct_type") or {}).get("fields")
    if not isinstance(fields, list) or not all(isinstance(f, dict) for f in fields):
        return normalize(value)
    if isinstance(value, list):
        if len(value) != len(fields):
            raise ValueError(f"STRUCT of {len(fields)} fields got {len(value)} values")
        return [_typed(f.get("type"), item) for f, item in zip(fields, value, strict=True)]
    if isinstance(value, dict):
        by_name = {f.get("name"): f.get("type") for f in fields}
        return {
            name: _typed(by_name[name], item) if name in by_name else normalize(item)
            for name, item in value.items()
        }
    raise ValueError(f"STRUCT expects an array or object, got {_shown(value)}")


_CONVERTERS: dict[Any, Callable[[dict[str, Any], Any], Any]] = {
    "INT64": _int64,
    "INT": _int64,  # as Google's own AccountBalance example spells it
    "FLOAT64": _float,
    "FLOAT32": _float,
    "NUMERIC": _numeric,
    "BOOL": _bool,
    "STRING": _string,
    "BYTES": _bytes,
    "DATE": _date,
    "TIMESTAMP": _timestamp,
    "JSON": _json,
    "ARRAY": _array,
    "STRUCT": _struct,
}
