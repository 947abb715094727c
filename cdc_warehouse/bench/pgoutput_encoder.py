"""pgoutput messages built byte by byte (PostgreSQL "Logical Replication Message Formats").

The encoding counterpart of `python_udfs.pgoutput.decode_message`, used by the workload
generator (`cdc_warehouse.bench.workload`) and by the unit tests, so there is one copy of the wire
layout. Integers are big-endian; `xid` arguments are the transaction id that messages inside a
Stream Start .. Stream Stop block carry first (None outside a stream). Timestamps are Unix
epoch microseconds and are converted to PostgreSQL's 2000-01-01 epoch here.
"""

from __future__ import annotations

import base64
import json
import struct
from collections.abc import Sequence

PG_EPOCH_OFFSET_MICROS = 946_684_800_000_000

# A TupleData column: kind 't' (text), 'b' (binary), 'n' (NULL), 'u' (unchanged TOAST) and
# its raw value (None for 'n' and 'u').
Column = tuple[str, bytes | None]
# A Relation column: (flags, name, type oid, type modifier); flags 1 = part of the key.
RelationColumn = tuple[int, str, int, int]

_U8 = struct.Struct(">B")
_U16 = struct.Struct(">H")
_U32 = struct.Struct(">I")
_I32 = struct.Struct(">i")
_U64 = struct.Struct(">Q")
_I64 = struct.Struct(">q")


def u8(n: int) -> bytes:
    return _U8.pack(n)


def u16(n: int) -> bytes:
    return _U16.pack(n)


def u32(n: int) -> bytes:
    return _U32.pack(n)


def i32(n: int) -> bytes:
    return _I32.pack(n)


def u64(n: int) -> bytes:
    return _U64.pack(n)


def i64(n: int) -> bytes:
    return _I64.pack(n)


def cstr(s: str) -> bytes:
    return s.encode() + b"\0"


def pg_ts(unix_micros: int) -> bytes:
    """A TimestampTz on the wire: microseconds since 2000-01-01 UTC, signed."""
    return i64(unix_micros - PG_EPOCH_OFFSET_MICROS)


def streamed(xid: int | None) -> bytes:
    """The xid that messages inside a stream block carry first."""
    return b"" if xid is None else u32(xid)


def tuple_data(*columns: Column) -> bytes:
    out = [u16(len(columns))]
    for kind, value in columns:
        out.append(kind.encode())
        if value is not None:
            out.append(i32(len(value)))
            out.append(value)
    return b"".join(out)


def begin(final_lsn: int, commit_ts: int, xid: int) -> bytes:
    return b"B" + u64(final_lsn) + pg_ts(commit_ts) + u32(xid)


def commit(commit_lsn: int, end_lsn: int, commit_ts: int, flags: int = 0) -> bytes:
    return b"C" + u8(flags) + u64(commit_lsn) + u64(end_lsn) + pg_ts(commit_ts)


def origin(origin_lsn: int, name: str) -> bytes:
    return b"O" + u64(origin_lsn) + cstr(name)


def relation(
    oid: int,
    namespace: str,
    name: str,
    columns: Sequence[RelationColumn],
    replica_identity: str = "d",
    xid: int | None = None,
) -> bytes:
    out = [b"R", streamed(xid), u32(oid), cstr(namespace), cstr(name), replica_identity.encode()]
    out.append(u16(len(columns)))
    for flags, column, type_oid, typmod in columns:
        out.append(u8(flags) + cstr(column) + u32(type_oid) + i32(typmod))
    return b"".join(out)


def type_message(oid: int, namespace: str, name: str, xid: int | None = None) -> bytes:
    return b"Y" + streamed(xid) + u32(oid) + cstr(namespace) + cstr(name)


def insert(oid: int, new: bytes, xid: int | None = None) -> bytes:
    """`new` is encoded TupleData (see `tuple_data`)."""
    return b"I" + streamed(xid) + u32(oid) + b"N" + new


def update(
    oid: int,
    new: bytes,
    old: bytes | None = None,
    old_kind: str = "K",
    xid: int | None = None,
) -> bytes:
    """`old_kind` 'K' (old key: replica identity changed) or 'O' (REPLICA IDENTITY FULL)."""
    head = b"U" + streamed(xid) + u32(oid)
    if old is not None:
        head += old_kind.encode() + old
    return head + b"N" + new


def delete(oid: int, old: bytes, old_kind: str = "K", xid: int | None = None) -> bytes:
    return b"D" + streamed(xid) + u32(oid) + old_kind.encode() + old


def truncate(oids: Sequence[int], flags: int = 0, xid: int | None = None) -> bytes:
    return b"T" + streamed(xid) + u32(len(oids)) + u8(flags) + b"".join(u32(o) for o in oids)


def message(flags: int, lsn: int, prefix: str, content: bytes, xid: int | None = None) -> bytes:
    return b"M" + streamed(xid) + u8(flags) + u64(lsn) + cstr(prefix) + i32(len(content)) + content


def stream_start(xid: int, first_segment: bool) -> bytes:
    return b"S" + u32(xid) + u8(1 if first_segment else 0)


def stream_stop() -> bytes:
    return b"E"


def stream_commit(xid: int, commit_lsn: int, end_lsn: int, commit_ts: int, flags: int = 0):
    return b"c" + u32(xid) + u8(flags) + u64(commit_lsn) + u64(end_lsn) + pg_ts(commit_ts)


def stream_abort(
    xid: int, subxid: int, abort_lsn: int | None = None, abort_ts: int | None = None
) -> bytes:
    """Protocol 4 adds the abort LSN and time; earlier protocols send the two xids only."""
    out = b"A" + u32(xid) + u32(subxid)
    if abort_lsn is not None:
        out += u64(abort_lsn) + pg_ts(abort_ts or 0)
    return out


def begin_prepare(prepare_lsn: int, end_lsn: int, prepare_ts: int, xid: int, gid: str) -> bytes:
    return b"b" + u64(prepare_lsn) + u64(end_lsn) + pg_ts(prepare_ts) + u32(xid) + cstr(gid)


def prepare(
    prepare_lsn: int,
    end_lsn: int,
    prepare_ts: int,
    xid: int,
    gid: str,
    flags: int = 0,
    tag: bytes = b"P",
) -> bytes:
    """Prepare (tag 'P') or Stream Prepare (tag 'p')."""
    return (
        tag + u8(flags) + u64(prepare_lsn) + u64(end_lsn) + pg_ts(prepare_ts) + u32(xid) + cstr(gid)
    )


def commit_prepared(
    commit_lsn: int, end_lsn: int, commit_ts: int, xid: int, gid: str, flags: int = 0
) -> bytes:
    return (
        b"K" + u8(flags) + u64(commit_lsn) + u64(end_lsn) + pg_ts(commit_ts) + u32(xid) + cstr(gid)
    )


def rollback_prepared(
    prepare_end_lsn: int,
    rollback_end_lsn: int,
    prepare_ts: int,
    rollback_ts: int,
    xid: int,
    gid: str,
    flags: int = 0,
) -> bytes:
    return (
        b"r"
        + u8(flags)
        + u64(prepare_end_lsn)
        + u64(rollback_end_lsn)
        + pg_ts(prepare_ts)
        + pg_ts(rollback_ts)
        + u32(xid)
        + cstr(gid)
    )


def format_lsn(lsn: int) -> str:
    """The 'X/Y' text form PostgreSQL prints."""
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def slot_line(lsn: int, xid: int | None, data: bytes) -> str:
    """One row of pg_logical_slot_get_binary_changes as the landing line
    `{"lsn": "X/Y", "xid": n, "data": "<base64>"}`."""
    payload = base64.b64encode(data).decode("ascii")
    return f'{{"lsn":"{format_lsn(lsn)}","xid":{json.dumps(xid)},"data":"{payload}"}}'
