"""pgoutput's wire format: each message of PostgreSQL's "Logical Replication Message Formats"
(protocol versions 1 to 4) decoded from its bytes, without PostgreSQL. Where PostgreSQL's own
subscriber rejects a message (unknown flags), so does this decoder: such input goes to
quarantine rather than being guessed at."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

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
