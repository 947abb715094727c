"""PostgreSQL logical decoding (pgoutput) for the warehouse, in the two stages of
python_udfs/decoding.py: a landed slot line as the flat message row `int_pgoutput__messages`
stores (`message_row`), then, once the SQL has applied the slot-log rule, a change message of a
committed transaction as change-log rows (`change_rows`). The wire format is decoded in `wire`,
the values in `values`."""

from __future__ import annotations

import base64
import binascii
import functools
import json
import re
from typing import Any

from python_udfs.change_log import CHANGE_COLUMNS
from python_udfs.decoding import NO_SETTINGS, DecodeSettings
from python_udfs.json_values import canonical_json, line_object, loads
from python_udfs.pgoutput.column_types import pg_column_type
from python_udfs.pgoutput.values import typed_value
from python_udfs.pgoutput.wire import TupleData, decode_message
from python_udfs.source_types import column_types_json

# The version of the encoding of `sort_pos`, `txn_id` and `event_id` of pgoutput's changes
# (built in SQL, models/intermediate/pgoutput/int_pgoutput__changes.sql) and snapshot rows
# (snapshot.py, `snapshot_sort_pos`): raise it with any change to them, then pin the new
# digest in tests/unit/test_sort_key_pins.py. The warehouse records the version it was built
# with and `cdcw run` refuses to mix encodings until a full refresh (docs/decisions/013).
SORT_KEY_VERSION = 1

__all__ = [
    "CHANGE_ROW_COLUMNS",
    "MESSAGE_COLUMNS",
    "ChangeMessage",
    "SlotLine",
    "change_rows",
    "decode_message",
    "message_row",
    "parse_lsn",
    "typed_value",
]


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


# The fields of a message row (`message_row`), as int_pgoutput__messages stores them.
MESSAGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("error", "string"),
    ("kind", "string"),
    ("lsn", "bigint"),
    ("txn_xid", "bigint"),
    ("sub_xid", "bigint"),
    ("first_segment", "boolean"),
    ("commit_lsn", "bigint"),
    ("commit_ts", "bigint"),
    ("gid", "string"),
    ("relation_oid", "bigint"),
    ("relation_json", "string"),
    ("column_types", "string"),
    ("old_kind", "string"),
    ("old_tuple_json", "string"),
    ("new_tuple_json", "string"),
    ("truncate_oids", "array<bigint>"),
)
# The first stage's unit: a landed slot line and whether it lies inside a Stream Start .. Stream
# Stop block (its layout depends on it, and only its place in the slot's log tells).
SlotLine = tuple[str, bool]


def message_row(
    unit: SlotLine, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> dict[str, Any]:
    """One landed slot line ({"lsn", "xid", "data"}) as the flat row the warehouse stores:
    which transaction and subtransaction it belongs to, its kind, and its payload as text.
    A message is the same whichever slot sent it and needs no setting. Never raises: a line
    that cannot be decoded comes back with `error` set."""
    line, in_stream = unit
    try:
        entry = line_object(line)
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


# The second stage's unit: one Insert, Update, Delete or Truncate message of a committed
# transaction, as (the Relation message in force at it, kind, old_kind, old_tuple_json,
# new_tuple_json) of `int_pgoutput__messages`.
ChangeMessage = tuple[str | None, str, str | None, str | None, str | None]


def change_rows(
    unit: ChangeMessage, source_name: str, settings: DecodeSettings = NO_SETTINGS
) -> list[dict[str, Any]]:
    """The change-log rows of one Insert, Update, Delete or Truncate of a committed transaction.

    An Update whose old key differs from its new key is a primary key change: a delete of the
    old key and an update that brings the new one, at the same position, so the new key's
    unchanged TOAST columns ('u') can take the old key's values downstream. Never raises:
    errors come back as one row with `error` set."""
    relation_json, kind, old_kind, old_tuple_json, new_tuple_json = unit
    declared_keys = settings.declared_keys
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
