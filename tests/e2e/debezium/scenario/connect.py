"""What both connectors' dumps share: Kafka Connect schemas, a server and a table, the
JsonConverter's value encodings, Debezium's change event and kcat -J record, the offsets of
each topic partition, and the files of a wave."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

DAY = "2024-06-03"
PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_BASE64 = base64.b64encode(PLACEHOLDER.encode("utf-8")).decode("ascii")
PH_ARRAY = [PLACEHOLDER]

MAIN = "pg_main"
LITE = "pg_lite"
TXN = "pg_txn"


# --------------------------------------------------------------------------------------------
# Kafka Connect schemas
# --------------------------------------------------------------------------------------------


def _t(kind: str, name: str | None = None, **extra: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": kind}
    if name is not None:
        spec["name"] = name
        spec["version"] = 1
    spec.update(extra)
    return spec


INT32 = _t("int32")
INT64 = _t("int64")
STRING = _t("string")
BYTES = _t("bytes")
BOOLEAN = _t("boolean")
DOUBLE = _t("double")
DATE_T = _t("int32", "io.debezium.time.Date")
MICRO_T = _t("int64", "io.debezium.time.MicroTimestamp")
ZONED_T = _t("string", "io.debezium.time.ZonedTimestamp")
JSON_T = _t("string", "io.debezium.data.Json")
VSD_T = _t(
    "struct",
    "io.debezium.data.VariableScaleDecimal",
    fields=[
        {"type": "int32", "optional": False, "field": "scale"},
        {"type": "bytes", "optional": False, "field": "value"},
    ],
    doc="Variable scaled decimal",
)


def _decimal_t(scale: int, precision: int) -> dict[str, Any]:
    return _t(
        "bytes",
        "org.apache.kafka.connect.data.Decimal",
        parameters={"scale": str(scale), "connect.decimal.precision": str(precision)},
    )


def _array_t(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": {**items, "optional": True}}


@dataclass(frozen=True)
class _Server:
    name: str
    enveloped: bool
    version: str
    db: str


@dataclass(frozen=True)
class _Table:
    server: _Server
    schema: str
    name: str
    key: tuple[str, ...]
    columns: tuple[tuple[str, dict[str, Any]], ...]

    @property
    def topic(self) -> str:
        return f"{self.server.name}.{self.schema}.{self.name}"

    def _field(self, column: str, spec: dict[str, Any]) -> dict[str, Any]:
        return {**spec, "optional": column not in self.key, "field": column}

    def key_schema(self) -> dict[str, Any]:
        return {
            "type": "struct",
            "fields": [self._field(c, s) for c, s in self.columns if c in self.key],
            "optional": False,
            "name": f"{self.topic}.Key",
        }

    def value_schema(self) -> dict[str, Any]:
        row = {
            "type": "struct",
            "fields": [self._field(c, s) for c, s in self.columns],
            "optional": True,
            "name": f"{self.topic}.Value",
        }
        return {
            "type": "struct",
            "fields": [
                {**row, "field": "before"},
                {**row, "field": "after"},
                {**_SOURCE_SCHEMA, "field": "source"},
                {**_TRANSACTION_SCHEMA, "field": "transaction"},
                {"type": "string", "optional": False, "field": "op"},
                {"type": "int64", "optional": True, "field": "ts_ms"},
                {"type": "int64", "optional": True, "field": "ts_us"},
                {"type": "int64", "optional": True, "field": "ts_ns"},
            ],
            "optional": False,
            "name": f"{self.topic}.Envelope",
            "version": 2,
        }


@dataclass(frozen=True)
class _TransactionTopic:
    """A server's transaction topic (provide.transaction.metadata): its BEGIN and END records."""

    server: _Server

    @property
    def topic(self) -> str:
        return f"{self.server.name}.transaction"


class _Transaction:
    """One source transaction of a server that sends transaction metadata: the block each of
    its change events carries (its place among all its events and among its table's), and its
    BEGIN and END records. Debezium's PostgreSQL connector names a transaction `<txid>:<lsn>`,
    the lsn part not the same in all its records."""

    def __init__(self, tx: int, lsn: int, ts: int) -> None:
        self.tx, self.lsn, self.ts = tx, lsn, ts
        self.counts: dict[str, int] = {}

    @property
    def id(self) -> str:
        return f"{self.tx}:{self.lsn}"

    def block(self, table: _Table) -> dict[str, Any]:
        """The next event's block, counted for the END."""
        collection = f"{table.schema}.{table.name}"
        self.counts[collection] = self.counts.get(collection, 0) + 1
        return {
            "id": self.id,
            "total_order": sum(self.counts.values()),
            "data_collection_order": self.counts[collection],
        }

    def begin(self) -> dict[str, Any]:
        return {
            "status": "BEGIN",
            "id": f"{self.tx}:{self.lsn - 8}",
            "event_count": None,
            "data_collections": None,
            "ts_ms": self.ts // 1000,
        }

    def end(self, counts: dict[str, int] | None = None) -> dict[str, Any]:
        """The END record: the events counted so far, or `counts` in their place."""
        counted = self.counts if counts is None else counts
        return {
            "status": "END",
            "id": self.id,
            "event_count": sum(counted.values()),
            "data_collections": [
                {"data_collection": name, "event_count": n} for name, n in counted.items()
            ],
            "ts_ms": self.ts // 1000,
        }


_SOURCE_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "version"},
        {"type": "string", "optional": False, "field": "connector"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
        {
            "type": "string",
            "optional": True,
            "name": "io.debezium.data.Enum",
            "version": 1,
            "parameters": {
                "allowed": "true,first,first_in_data_collection,last_in_data_collection,"
                "last,false,incremental"
            },
            "default": "false",
            "field": "snapshot",
        },
        {"type": "string", "optional": False, "field": "db"},
        {"type": "string", "optional": True, "field": "sequence"},
        {"type": "int64", "optional": True, "field": "ts_us"},
        {"type": "int64", "optional": True, "field": "ts_ns"},
        {"type": "string", "optional": False, "field": "schema"},
        {"type": "string", "optional": False, "field": "table"},
        {"type": "int64", "optional": True, "field": "txId"},
        {"type": "int64", "optional": True, "field": "lsn"},
        {"type": "int64", "optional": True, "field": "xmin"},
    ],
    "optional": False,
    "name": "io.debezium.connector.postgresql.Source",
}

_TRANSACTION_SCHEMA: dict[str, Any] = {
    "type": "struct",
    "fields": [
        {"type": "string", "optional": False, "field": "id"},
        {"type": "int64", "optional": False, "field": "total_order"},
        {"type": "int64", "optional": False, "field": "data_collection_order"},
    ],
    "optional": True,
    "name": "event.block",
    "version": 1,
}


# --------------------------------------------------------------------------------------------
# Value encodings (what the JsonConverter writes)
# --------------------------------------------------------------------------------------------


def us(hms: str) -> int:
    """Epoch microseconds of a wall-clock time on DAY, UTC ('08:05:00.250111')."""
    moment = datetime.fromisoformat(f"{DAY}T{hms}+00:00")
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _b64(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def _unscaled(text: str) -> tuple[int, int]:
    """(unscaled, scale) of a decimal literal, exactly."""
    sign, digits, exponent = Decimal(text).as_tuple()
    assert isinstance(exponent, int)
    unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
    return unscaled, -exponent


def _twos_complement(n: int) -> bytes:
    return n.to_bytes((n.bit_length() + 8) // 8, "big", signed=True)


def _decimal(text: str | None, scale: int) -> str | None:
    """org.apache.kafka.connect.data.Decimal: base64 of the big-endian unscaled value."""
    if text is None:
        return None
    unscaled, own = _unscaled(text)
    assert own == scale, (text, scale)
    return _b64(_twos_complement(unscaled))


def _vsd(text: str | None) -> dict[str, Any] | None:
    """io.debezium.data.VariableScaleDecimal."""
    if text is None:
        return None
    unscaled, scale = _unscaled(text)
    return {"scale": scale, "value": _b64(_twos_complement(unscaled))}


def _days(iso: str | None) -> int | None:
    """io.debezium.time.Date: days since the epoch."""
    return None if iso is None else (date.fromisoformat(iso) - date(1970, 1, 1)).days


def _micros(iso: str | None) -> int | None:
    """io.debezium.time.MicroTimestamp: a local date-time as microseconds since the epoch."""
    if iso is None:
        return None
    delta = datetime.fromisoformat(iso) - datetime(1970, 1, 1)
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------

PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x02"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00\xff\xd9"


def _key_only(table: _Table, key: dict[str, Any]) -> dict[str, Any]:
    """A delete's before image under the default replica identity: key columns, rest null."""
    return {c: key.get(c) for c, _ in table.columns}


# --------------------------------------------------------------------------------------------
# Records and waves
# --------------------------------------------------------------------------------------------


class _Offsets:
    """Next offset per (topic, partition), shared by all waves."""

    def __init__(self) -> None:
        self.next: dict[tuple[str, int], int] = {}

    def peek(self, topic: str, partition: int) -> int:
        return self.next.get((topic, partition), 0)

    def take(self, topic: str, partition: int) -> int:
        offset = self.peek(topic, partition)
        self.next[(topic, partition)] = offset + 1
        return offset


class _Wave:
    """Files of one wave: relative path -> lines."""

    def __init__(self, number: int, offsets: _Offsets) -> None:
        self.number = number
        self.offsets = offsets
        self.lines: dict[str, list[str]] = {}
        self.raw: dict[str, bytes] = {}
        self.named: dict[str, str] = {}  # a file's role -> its path, for later waves
        self.coverage: list[tuple[int, str, str]] = []

    # ---- files ---------------------------------------------------------------------------

    def file(
        self,
        table: _Table | _TransactionTopic,
        partition: int,
        start: int | None = None,
        tag: str = "",
    ) -> str:
        """A dump file named after its first offset (the next one unless ``start`` is given)."""
        first = self.offsets.peek(table.topic, partition) if start is None else start
        topic = table.topic
        return (
            f"debezium/{table.server.name}/{topic}/partition={partition}/"
            f"{topic}+{partition}+{first:010d}{tag}.jsonl"
        )

    def note(self, path: str, trap: str) -> None:
        self.coverage.append((self.number, path, trap))

    def put(self, path: str, data: bytes) -> None:
        self.raw[path] = data

    def add_line(self, path: str, line: str) -> None:
        self.lines.setdefault(path, []).append(line)

    def files(self) -> dict[str, bytes]:
        out = {p: ("\n".join(lines) + "\n").encode("utf-8") for p, lines in self.lines.items()}
        out.update(self.raw)
        return dict(sorted(out.items()))

    # ---- records -------------------------------------------------------------------------

    def record(
        self,
        path: str,
        table: _Table,
        partition: int,
        key: dict[str, Any] | None,
        value: dict[str, Any] | None,
        kafka_ts_ms: int,
    ) -> dict[str, Any]:
        """Append one kcat -J record (a new offset) and return it."""
        server = table.server
        key_text = None
        if key is not None:
            key_obj = {"schema": table.key_schema(), "payload": key} if server.enveloped else key
            key_text = _compact(key_obj)
        payload_text = None
        if value is not None:
            value_obj = (
                {"schema": table.value_schema(), "payload": value} if server.enveloped else value
            )
            payload_text = _compact(value_obj)
        rec = {
            "topic": table.topic,
            "partition": partition,
            "offset": self.offsets.take(table.topic, partition),
            "tstype": "create",
            "ts": kafka_ts_ms,
            "broker": 1,
            "key": key_text,
            "payload": payload_text,
        }
        self.add_line(path, _compact(rec))
        return rec

    def change(
        self,
        path: str,
        table: _Table,
        partition: int,
        op: str,
        key: dict[str, Any],
        *,
        before: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
        lsn: int,
        tx: int,
        ts: int,
        snapshot: str = "false",
        block: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A change event (op c/u/d/r) with Debezium's source block, and its transaction's
        block (`_Transaction.block`) where the server sends transaction metadata."""
        value = _value(table, op, before, after, lsn, tx, ts, snapshot, block)
        return self.record(path, table, partition, key, value, ts // 1000 + 350)

    def tombstone(self, path: str, table: _Table, partition: int, key: dict[str, Any], ts: int):
        """The tombstone Debezium writes after a delete (same key, null value)."""
        return self.record(path, table, partition, key, None, ts // 1000 + 351)

    def truncate(
        self,
        path: str,
        table: _Table,
        partition: int,
        *,
        lsn: int,
        tx: int,
        ts: int,
        block: dict[str, Any] | None = None,
    ):
        """A truncate event: no key, no before / after."""
        value = _value(table, "t", None, None, lsn, tx, ts, "false", block)
        return self.record(path, table, partition, None, value, ts // 1000 + 350)

    def transaction_record(
        self, path: str, topic: _TransactionTopic, value: dict[str, Any]
    ) -> dict[str, Any]:
        """A BEGIN or END record of the server's transaction topic (one partition, keyed by the
        transaction id; JsonConverter without schemas)."""
        assert not topic.server.enveloped
        rec = {
            "topic": topic.topic,
            "partition": 0,
            "offset": self.offsets.take(topic.topic, 0),
            "tstype": "create",
            "ts": value["ts_ms"] + 350,
            "broker": 1,
            "key": _compact({"id": value["id"]}),
            "payload": _compact(value),
        }
        self.add_line(path, _compact(rec))
        return rec

    def again(self, path: str, rec: dict[str, Any]) -> None:
        """The same record (same topic/partition/offset) once more."""
        self.add_line(path, _compact(rec))

    def resend(self, path: str, rec: dict[str, Any], later_ms: int) -> dict[str, Any]:
        """The same change re-sent after a connector restart: a new offset, a later processing
        time (envelope ts_ms / ts_us / ts_ns), the same source block, key and images."""
        value = json.loads(rec["payload"])
        body = value["payload"] if "schema" in value else value
        body["ts_ms"] += later_ms
        if "ts_us" in body:
            body["ts_us"] += later_ms * 1000
            body["ts_ns"] += later_ms * 1_000_000
        topic, partition = rec["topic"], rec["partition"]
        new = {
            **rec,
            "offset": self.offsets.take(topic, partition),
            "ts": rec["ts"] + later_ms,
            "payload": _compact(value),
        }
        self.add_line(path, _compact(new))
        return new


def _value(
    table: _Table,
    op: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
    lsn: int,
    tx: int,
    ts: int,
    snapshot: str,
    block: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The Debezium value payload (without the schema envelope)."""
    server = table.server
    processing_ms = ts // 1000 + 350
    source: dict[str, Any] = {
        "version": server.version,
        "connector": "postgresql",
        "name": server.name,
        "ts_ms": ts // 1000,
        "snapshot": snapshot,
        "db": server.db,
        "sequence": None if op == "r" else _compact([str(lsn - 4096), str(lsn)]),
    }
    if server.enveloped:
        source["ts_us"] = ts
        source["ts_ns"] = ts * 1000
    source.update(
        {"schema": table.schema, "table": table.name, "txId": tx, "lsn": lsn, "xmin": None}
    )
    if server.enveloped:
        return {
            "before": before,
            "after": after,
            "source": source,
            "transaction": block,
            "op": op,
            "ts_ms": processing_ms,
            "ts_us": processing_ms * 1000,
            "ts_ns": processing_ms * 1_000_000,
        }
    return {
        "before": before,
        "after": after,
        "source": source,
        "op": op,
        "ts_ms": processing_ms,
        "transaction": block,
    }


def _k(**key: Any) -> dict[str, Any]:
    return dict(key)
