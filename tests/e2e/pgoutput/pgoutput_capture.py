"""Read a logical replication slot through the SQL interface and keep pgoutput's raw bytes.

Every line is one row of `pg_logical_slot_get_binary_changes(...)`, in the contract's landing
format: {"lsn": "X/Y", "xid": <int or null>, "data": "<base64 of the pgoutput message>"}.
A read consumes what it returned (the slot's confirmed position moves to the end of the WAL it
decoded), but the next read restarts decoding at the slot's restart_lsn, so transactions still
open or prepared are decoded again (see the contract's log rule).

What PostgreSQL 15.18 accepts and does (checked by tests/e2e/pgoutput/test_harness_smoke.py):
- proto_version 1, 2, 3 only: 4 fails ("client sent proto_version=4 but we only support protocol 3
  or lower"); streaming must be a boolean ('parallel' and proto 4 are PostgreSQL 16).
  streaming 'on' needs proto_version >= 2, two_phase 'on' needs proto_version >= 3.
- pgoutput sends Message ('M') only with 'messages' 'on', which read_slot passes by default.
- two_phase: reading ANY slot once with 'two_phase' 'on' turns two-phase on for that slot for
  good (pg_replication_slots.two_phase becomes true); from then on, and for a slot created with
  two-phase enabled, every read emits Begin Prepare / Prepare / Commit Prepared / Rollback
  Prepared, even with proto_version 1 or 2 and without the option. Keep one slot per flavour.
- An open transaction is sent again by the next read from its start (Stream Start with
  first_segment = 1, same changes at the same lsn, minus a subtransaction rolled back meanwhile,
  with no Stream Abort for it). A prepared transaction is NOT sent again as such: the next read
  brings only its Commit Prepared, unless memory pressure makes the decoder stream its changes
  again (Stream Start first_segment = 1 ... Stream Stop, without a new Stream Prepare).
- The xid column: the top-level xid for every line of a transaction (changes of a subtransaction
  carry the subxid inside the message), 0 for a non-transactional message; never NULL.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.postgres import LocalPostgres

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")


def _literal(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def create_slot(
    pg: LocalPostgres, slot: str, publication: str | None = None, *, two_phase: bool = False
) -> str:
    """Create a pgoutput slot (two-phase decoding enabled if asked); returns its start LSN.

    `publication`, if given and missing, is created FOR ALL TABLES.
    """
    if publication is not None and not _NAME.match(publication):
        raise ValueError(f"publication name {publication!r} must be a plain lowercase identifier")
    if publication is not None and not pg.sql(
        f"select 1 from pg_publication where pubname = {_literal(publication)}"
    ):
        pg.sql(f"create publication {publication} for all tables")
    rows = pg.sql(
        "select lsn from pg_create_logical_replication_slot("
        f"{_literal(slot)}, 'pgoutput', false, {'true' if two_phase else 'false'})"
    )
    return rows[0][0]


def slot_query(
    slot: str,
    publication: str,
    *,
    proto_version: int = 2,
    two_phase: bool = False,
    streaming: str | None = "on",
    messages: bool = True,
    function: str = "pg_logical_slot_get_binary_changes",
) -> str:
    options = [("proto_version", str(proto_version)), ("publication_names", publication)]
    if streaming is not None:
        options.append(("streaming", streaming))
    if two_phase:
        options.append(("two_phase", "on"))
    if messages:
        options.append(("messages", "on"))
    option_sql = ", ".join(f"{_literal(name)}, {_literal(value)}" for name, value in options)
    return (
        f"select lsn, xid, encode(data, 'base64') from {function}("
        f"{_literal(slot)}, NULL, NULL, {option_sql})"
    )


def read_slot(
    pg: LocalPostgres,
    slot: str,
    publication: str,
    proto_version: int = 2,
    two_phase: bool = False,
    *,
    streaming: str | None = "on",
    messages: bool = True,
    peek: bool = False,
) -> list[dict[str, Any]]:
    """One slot read (a new decoding session): the landing lines, in the order returned."""
    function = (
        "pg_logical_slot_peek_binary_changes" if peek else "pg_logical_slot_get_binary_changes"
    )
    rows = pg.sql(
        slot_query(
            slot,
            publication,
            proto_version=proto_version,
            two_phase=two_phase,
            streaming=streaming,
            messages=messages,
            function=function,
        )
    )
    return [
        {
            "lsn": lsn,
            "xid": None if xid is None else int(xid),
            # encode(..., 'base64') wraps at 76 characters; the landing line holds one string.
            "data": "".join((data or "").split()),
        }
        for lsn, xid, data in rows
    ]


def landing_bytes(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines).encode()


def write_landing_file(root: Path | str, slot: str, name: str, lines: list[dict[str, Any]]) -> Path:
    """Write `<root>/pgoutput/<slot>/<name>.jsonl` (one landing line per change row)."""
    path = Path(root) / "pgoutput" / slot / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(landing_bytes(lines))
    return path


# -- a small, independent pgoutput decoder (protocol versions 1-3), for the harness's own checks --

_EPOCH_2000_MICROS = 946_684_800_000_000


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, size: int) -> bytes:
        chunk = self.data[self.pos : self.pos + size]
        if len(chunk) != size:
            raise ValueError(f"pgoutput message truncated at byte {self.pos}")
        self.pos += size
        return chunk

    def int(self, size: int, signed: bool = False) -> int:
        return int.from_bytes(self.take(size), "big", signed=signed)

    def lsn(self) -> str:
        value = self.int(8)
        return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"

    def string(self) -> str:
        end = self.data.index(b"\0", self.pos)
        text = self.data[self.pos : end].decode()
        self.pos = end + 1
        return text

    def tuple(self) -> list[tuple[str, bytes | None]]:
        columns = []
        for _ in range(self.int(2)):
            kind = chr(self.int(1))
            if kind in "tb":
                columns.append((kind, self.take(self.int(4))))
            else:  # 'n' NULL, 'u' unchanged TOASTed value
                columns.append((kind, None))
        return columns


def decode_message(data: bytes, in_stream: bool = False) -> dict[str, Any]:
    """One pgoutput message -> dict with "type" and its fields (tuples as [(kind, bytes)])."""
    reader = _Reader(data)
    kind = chr(reader.int(1))
    message: dict[str, Any] = {"type": kind}
    if kind in "RYIUDTM" and in_stream:
        message["xid"] = reader.int(4)
    if kind == "B":
        message.update(final_lsn=reader.lsn(), commit_ts=reader.int(8, True), xid=reader.int(4))
    elif kind == "C":
        message.update(
            flags=reader.int(1),
            commit_lsn=reader.lsn(),
            end_lsn=reader.lsn(),
            commit_ts=reader.int(8, True),
        )
    elif kind == "O":
        message.update(origin_lsn=reader.lsn(), origin=reader.string())
    elif kind == "R":
        message.update(
            relid=reader.int(4),
            namespace=reader.string(),
            relation=reader.string(),
            replica_identity=chr(reader.int(1)),
        )
        message["columns"] = [
            {
                "flags": reader.int(1),
                "name": reader.string(),
                "type_oid": reader.int(4),
                "typmod": reader.int(4, True),
            }
            for _ in range(reader.int(2))
        ]
    elif kind == "Y":
        message.update(type_oid=reader.int(4), namespace=reader.string(), name=reader.string())
    elif kind == "I":
        message["relid"] = reader.int(4)
        assert chr(reader.int(1)) == "N"
        message["new"] = reader.tuple()
    elif kind == "U":
        message["relid"] = reader.int(4)
        marker = chr(reader.int(1))
        if marker in "KO":
            message["old_kind"] = marker
            message["old"] = reader.tuple()
            marker = chr(reader.int(1))
        assert marker == "N"
        message["new"] = reader.tuple()
    elif kind == "D":
        message["relid"] = reader.int(4)
        message["old_kind"] = chr(reader.int(1))
        message["old"] = reader.tuple()
    elif kind == "T":
        count = reader.int(4)
        message["options"] = reader.int(1)
        message["relids"] = [reader.int(4) for _ in range(count)]
    elif kind == "M":
        message.update(flags=reader.int(1), lsn=reader.lsn(), prefix=reader.string())
        message["content"] = reader.take(reader.int(4))
    elif kind == "S":
        message.update(xid=reader.int(4), first_segment=reader.int(1))
    elif kind == "E":
        pass
    elif kind == "c":
        message.update(
            xid=reader.int(4),
            flags=reader.int(1),
            commit_lsn=reader.lsn(),
            end_lsn=reader.lsn(),
            commit_ts=reader.int(8, True),
        )
    elif kind == "A":
        message.update(xid=reader.int(4), subxid=reader.int(4))
    elif kind == "b":
        message.update(
            prepare_lsn=reader.lsn(),
            end_lsn=reader.lsn(),
            prepare_ts=reader.int(8, True),
            xid=reader.int(4),
            gid=reader.string(),
        )
    elif kind in "PpK":
        message.update(
            flags=reader.int(1),
            lsn=reader.lsn(),
            end_lsn=reader.lsn(),
            ts=reader.int(8, True),
            xid=reader.int(4),
            gid=reader.string(),
        )
    elif kind == "r":
        message.update(
            flags=reader.int(1),
            prepare_end_lsn=reader.lsn(),
            rollback_end_lsn=reader.lsn(),
            prepare_ts=reader.int(8, True),
            rollback_ts=reader.int(8, True),
            xid=reader.int(4),
            gid=reader.string(),
        )
    else:
        raise ValueError(f"unknown pgoutput message type {kind!r}")
    if reader.pos != len(data):
        raise ValueError(f"{len(data) - reader.pos} unread bytes after pgoutput message {kind!r}")
    return message


def decode_lines(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Decode the landing lines of one slot read, in order (tracks Stream Start/Stop blocks).

    Each result also carries the line's "lsn" as "line_lsn" and its "xid" as "line_xid".
    """
    import base64

    decoded = []
    in_stream = False
    for line in lines:
        message = decode_message(base64.b64decode(line["data"]), in_stream)
        if message["type"] == "S":
            in_stream = True
        elif message["type"] == "E":
            in_stream = False
        message["line_lsn"] = line["lsn"]
        message["line_xid"] = line["xid"]
        decoded.append(message)
    return decoded


def parse_landing_bytes(content: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in content.decode().splitlines() if line.strip()]
