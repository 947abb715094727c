"""What every Datastream source's events share: the streams, the generic metadata in
Datastream's field order, the JSON writer, the files of a wave under
``datastream/<stream>/<object>/YYYY/MM/DD/HH/MM/``, and a source's table of the files it lands
(``File``: one row per event, turned into events by the source's builder, ``land``)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

DAY = "2024/05/01"
_STREAM_PREFIX = "projects/acme-data/locations/europe-west1/streams/"
_NS = uuid.UUID("5f0c2d8e-7a4b-4c1e-9d3f-2b6a8e1c0d47")

MYSQL = "mysql_shop"
ORACLE_DB = "oracle_erp"
POSTGRES = "postgres_crm"
SQLSERVER = "sqlserver_billing"
SPANNER = "spanner_catalog"
SALESFORCE = "salesforce_sales"
MONGODB = "mongodb_app"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _uid(label: str) -> str:
    """A deterministic uuid for an event label."""
    return str(uuid.uuid5(_NS, label))


def _instant(ts: str) -> datetime:
    """Parse one of the scenario's own timestamp strings (no zone means UTC)."""
    parsed = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)


def _ms(ts: str) -> int:
    """Epoch milliseconds of a scenario timestamp."""
    return int(_instant(ts).timestamp() * 1000)


def _read_ts(ts: str) -> str:
    """Datastream's read_timestamp: a little after the change, millisecond precision."""
    read = _instant(ts) + timedelta(seconds=2, milliseconds=250)
    return read.strftime("%Y-%m-%dT%H:%M:%S.") + f"{read.microsecond // 1000:03d}Z"


def _json(value: Any) -> str:
    """JSON text for a value; Decimals are written as JSON numbers with all their digits."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_json(v) for v in value) + "]"
    if isinstance(value, dict):
        items = [f"{json.dumps(k, ensure_ascii=False)}: {_json(v)}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}"
    raise TypeError(f"cannot write {value!r}")


def _event(
    stream: str,
    read_method: str,
    obj: str,
    uid: str,
    source_ts: str,
    sort_keys: list[Any],
    source_metadata: dict[str, Any],
    payload: dict[str, Any],
) -> dict[str, Any]:
    """A Datastream event with the generic metadata in Datastream's field order."""
    return {
        "stream_name": f"{_STREAM_PREFIX}{stream.replace('_', '-')}",
        "read_method": read_method,
        "object": obj,
        "schema_key": _uid(f"schema/{stream}/{obj}").replace("-", "")[:40],
        "uuid": uid,
        "read_timestamp": _read_ts(source_ts),
        "source_timestamp": source_ts,
        "sort_keys": sort_keys,
        "source_metadata": source_metadata,
        "payload": payload,
    }


class _Wave:
    """Files of one wave: relative path -> lines (or raw bytes)."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.lines: dict[str, list[str]] = {}
        self.raw: dict[str, bytes] = {}
        self.coverage: list[tuple[int, str, str]] = []

    def add(self, path: str, *events: dict[str, Any]) -> None:
        """Append events as JSON lines to a file."""
        self.lines.setdefault(path, []).extend(_json(e) for e in events)

    def add_line(self, path: str, line: str) -> None:
        """Append a raw text line to a file."""
        self.lines.setdefault(path, []).append(line)

    def put(self, path: str, data: bytes) -> None:
        """A file given as bytes (Avro, or a copy of an earlier file)."""
        self.raw[path] = data

    def note(self, path: str, trap: str) -> None:
        """Record what a file covers."""
        self.coverage.append((self.number, path, trap))

    def files(self) -> dict[str, bytes]:
        """The wave as relative path -> bytes."""
        out = {p: ("\n".join(lines) + "\n").encode("utf-8") for p, lines in self.lines.items()}
        out.update(self.raw)
        return dict(sorted(out.items()))


def _p(stream: str, obj: str, hhmm: str, name: str) -> str:
    """A Datastream-like relative path."""
    hh, mm = hhmm.split(":")
    return f"datastream/{stream}/{obj}/{DAY}/{hh}/{mm}/{name}"


# An event row (the arguments of its source's event builder), a ready event, or a raw text line.
Line = tuple[Any, ...] | dict[str, Any] | str


@dataclass(frozen=True)
class File:
    """A file one source lands: the wave it lands in, the minute folder and the name it lands
    under, its lines in order, which traps it covers, and the read method of its events if not
    the source's CDC one (a backfill's)."""

    wave: int
    hhmm: str
    name: str
    lines: tuple[Line, ...]
    notes: tuple[str, ...] = ()
    read_method: str | None = None


def land(
    w: _Wave, stream: str, obj: str, files: Iterable[File], event: Callable[..., dict[str, Any]]
) -> None:
    """Add the wave's files of one source object: an event row through ``event`` (given the
    file's read method, if it has one), a ready event or a raw line as it is; then the file's
    notes."""
    for file in files:
        if file.wave != w.number:
            continue
        path = _p(stream, obj, file.hhmm, file.name)
        method: dict[str, Any] = (
            {} if file.read_method is None else {"read_method": file.read_method}
        )
        for line in file.lines:
            if isinstance(line, str):
                w.add_line(path, line)
            else:
                w.add(path, line if isinstance(line, dict) else event(*line, **method))
        for trap in file.notes:
            w.note(path, trap)
