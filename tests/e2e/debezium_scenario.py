"""Deterministic Debezium landing files, delivered in waves, for the end-to-end test.

Two Debezium PostgreSQL connectors, each landing ``kcat -J`` dumps of its table topics under
``debezium/<server>/<topic>/partition=<p>/<topic>+<p>+<first offset>.jsonl``:

- ``pg_main``: JsonConverter with schemas (every key and value in the ``schema`` / ``payload``
  envelope), Debezium 2.7 (source.ts_us present). Tables ``public.documents`` (TOASTed text,
  bytea, text[] and jsonb columns, default replica identity, two partitions),
  ``inventory.products`` (typed columns: Date, MicroTimestamp, ZonedTimestamp, Decimal,
  VariableScaleDecimal, Json, int64 beyond 2**53, bytes, int[], boolean, double) and
  ``public.accounts`` (REPLICA IDENTITY FULL: before images on updates and deletes).
- ``pg_lite``: JsonConverter without schemas, Debezium 2.3 (source.ts_ms only),
  decimal.handling.mode=double. Tables ``sales.order_lines`` (composite key, truncated) and
  ``public.profiles`` (TOASTed columns, a primary key change whose halves land in different
  waves).

The events follow the documented Debezium change event shape (before, after, source with
lsn / txId / ts_ms / ts_us, op, ts_ms; tombstones after deletes; truncate with no key) and are
built to exercise the contract's traps; ``build_scenario()`` gives the waves and which trap sits in
which wave and file.

Usage: ``python -m tests.e2e.debezium_scenario write-sample <landing root>`` writes all waves.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from tests.e2e.waves import Scenario, scenario_main

DAY = "2024-06-03"
PLACEHOLDER = "__debezium_unavailable_value"
PLACEHOLDER_BASE64 = base64.b64encode(PLACEHOLDER.encode("utf-8")).decode("ascii")
PH_ARRAY = [PLACEHOLDER]

MAIN = "pg_main"
LITE = "pg_lite"


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
# Servers and tables
# --------------------------------------------------------------------------------------------

PG_MAIN = _Server(MAIN, True, "2.7.3.Final", "appdb")
PG_LITE = _Server(LITE, False, "2.3.4.Final", "shopdb")

DOCUMENTS = _Table(
    PG_MAIN,
    "public",
    "documents",
    ("id",),
    (
        ("id", INT32),
        ("title", STRING),
        ("body", STRING),
        ("attachment", BYTES),
        ("tags", _array_t(STRING)),
        ("meta", JSON_T),
        ("updated_at", ZONED_T),
    ),
)
PRODUCTS = _Table(
    PG_MAIN,
    "inventory",
    "products",
    ("id",),
    (
        ("id", INT64),
        ("name", STRING),
        ("price", _decimal_t(2, 20)),
        ("weight_kg", VSD_T),
        ("released", DATE_T),
        ("restocked_at", MICRO_T),
        ("listed_at", ZONED_T),
        ("barcode", INT64),
        ("specs", JSON_T),
        ("thumbnail", BYTES),
        ("dims", _array_t(INT32)),
        ("in_stock", BOOLEAN),
        ("rating", DOUBLE),
    ),
)
ACCOUNTS = _Table(
    PG_MAIN,
    "public",
    "accounts",
    ("id",),
    (
        ("id", INT32),
        ("email", STRING),
        ("balance", _decimal_t(2, 12)),
        ("notes", STRING),
        ("status", STRING),
    ),
)
ORDER_LINES = _Table(
    PG_LITE,
    "sales",
    "order_lines",
    ("order_id", "line_no"),
    (
        ("order_id", INT32),
        ("line_no", INT32),
        ("sku", STRING),
        ("qty", INT32),
        ("unit_price", DOUBLE),
        ("big_ref", INT64),
        ("created_at", ZONED_T),
        ("note", STRING),
    ),
)
PROFILES = _Table(
    PG_LITE,
    "public",
    "profiles",
    ("id",),
    (
        ("id", INT32),
        ("handle", STRING),
        ("bio", STRING),
        ("avatar", BYTES),
        ("aliases", _array_t(STRING)),
    ),
)


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


def _doc(
    doc_id: int,
    title: str,
    body: str | None,
    attachment: str | None,
    tags: list[str] | None,
    meta: str | None,
    updated_at: str | None,
) -> dict[str, Any]:
    """A public.documents row; attachment already base64 (or its placeholder)."""
    return {
        "id": doc_id,
        "title": title,
        "body": body,
        "attachment": attachment,
        "tags": tags,
        "meta": meta,
        "updated_at": updated_at,
    }


def _toasted(doc_id: int, title: str, updated_at: str, **real: Any) -> dict[str, Any]:
    """A documents update image whose TOASTable columns are unchanged unless given."""
    row = _doc(doc_id, title, PLACEHOLDER, PLACEHOLDER_BASE64, PH_ARRAY, PLACEHOLDER, updated_at)
    row.update(real)
    return row


def _product(
    pid: int,
    name: str,
    price: str | None,
    weight: str | None,
    released: str | None,
    restocked: str | None,
    listed: str | None,
    barcode: int | None,
    specs: str | None,
    thumbnail: bytes | None,
    dims: list[int] | None,
    in_stock: bool | None,
    rating: float | None,
) -> dict[str, Any]:
    """An inventory.products row as the JsonConverter encodes it."""
    return {
        "id": pid,
        "name": name,
        "price": _decimal(price, 2),
        "weight_kg": _vsd(weight),
        "released": _days(released),
        "restocked_at": _micros(restocked),
        "listed_at": listed,
        "barcode": barcode,
        "specs": specs,
        "thumbnail": _b64(thumbnail),
        "dims": dims,
        "in_stock": in_stock,
        "rating": rating,
    }


def _account(aid: int, email: str, balance: str, notes: str, status: str) -> dict[str, Any]:
    return {
        "id": aid,
        "email": email,
        "balance": _decimal(balance, 2),
        "notes": notes,
        "status": status,
    }


def _line(order_id: int, line_no: int, sku: str, qty: int, price: float) -> dict[str, Any]:
    """A sales.order_lines row (no schemas: plain JSON; numeric as double)."""
    return {
        "order_id": order_id,
        "line_no": line_no,
        "sku": sku,
        "qty": qty,
        "unit_price": price,
        "big_ref": 9007199254740995 + 10 * order_id + line_no,
        "created_at": "2024-06-03T07:55:00Z",
        "note": None,
    }


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

    def file(self, table: _Table, partition: int, start: int | None = None, tag: str = "") -> str:
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
    ) -> dict[str, Any]:
        """A change event (op c/u/d/r) with Debezium's source block."""
        value = _value(table, op, before, after, lsn, tx, ts, snapshot)
        return self.record(path, table, partition, key, value, ts // 1000 + 350)

    def tombstone(self, path: str, table: _Table, partition: int, key: dict[str, Any], ts: int):
        """The tombstone Debezium writes after a delete (same key, null value)."""
        return self.record(path, table, partition, key, None, ts // 1000 + 351)

    def truncate(self, path: str, table: _Table, partition: int, *, lsn: int, tx: int, ts: int):
        """A truncate event: no key, no before / after."""
        value = _value(table, "t", None, None, lsn, tx, ts, "false")
        return self.record(path, table, partition, None, value, ts // 1000 + 350)

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
            "transaction": None,
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
        "transaction": None,
    }


# --------------------------------------------------------------------------------------------
# The story
# --------------------------------------------------------------------------------------------

SNAPSHOT_MAIN = 24_000_000  # pg_main's snapshot lsn (txId 900)
SNAPSHOT_LITE = 9_800_000  # pg_lite's snapshot lsn (txId 5000)
TRUNCATE_LSN = 10_200_000

DOC1 = _doc(
    1,
    "Onboarding guide",
    "Welcome aboard! " * 40,
    _b64(PDF),
    ["guide", "hr"],
    '{"pages": 12, "lang": "en"}',
    "2024-06-01T09:15:00.123456Z",
)
DOC2 = _doc(
    2,
    "Release notes 2.0",
    "Highlights: incremental marts, TOAST-aware CDC. " * 30,
    _b64(PDF + b"2.0"),
    ["release"],
    '{"version": "2.0", "breaking": true}',
    "2024-06-02T16:00:00Z",
)
DOC3 = _doc(
    3,
    "Runbook",
    "Step 1: page the on-call. " * 50,
    _b64(JPEG),
    ["ops", "runbook"],
    '{"owner": "sre", "rev": 7}',
    "2024-05-30T11:11:11.5+02:00",
)
DOC5 = _doc(
    5,
    "Quarterly report Q2",
    "Revenue grew in every region; details follow. " * 25,
    _b64(PDF + b"Q2"),
    ["finance", "report"],
    '{"quarter": "Q2", "draft": true}',
    "2024-06-03T08:44:59.000001Z",
)

P101 = _product(
    101,
    "Espresso beans 1kg",
    "18.90",
    "1.000",
    "2023-05-23",
    "2024-06-02T17:45:00.123456",
    "2024-06-01T07:30:00Z",
    4006381333931,
    '{"origin": "Colombia", "roast": "medium", "tags": ["fair-trade", "organic"]}',
    PNG,
    [10, 20, 30],
    True,
    4.5,
)
P102 = _product(
    102,
    "Grinder Pro",
    "12345678901234567.89",
    "12345678901234567890.123456789",
    "1969-01-01",
    "1969-12-31T23:59:59.999999",
    "2024-06-01T09:30:00.5+02:00",
    9007199254740993,
    '{"name": "Mühle", "made_in": "日本", "certs": null}',
    JPEG,
    [],
    False,
    None,
)
P103 = _product(
    103,
    "Tamper 58mm",
    "10.00",
    "7",
    "2024-02-29",
    None,
    "2024-05-31T23:59:59.999999Z",
    9223372036854775807,
    '{"b": [1, {"y": 2, "x": 1}], "a": true}',
    b"\x00\x01\x02\xff",
    [1, 2, 3],
    True,
    3.75,
)
P104 = _product(
    104,
    "Sampler tea",
    "0.10",
    "0.250",
    "2000-01-01",
    "2024-06-01T00:00:00",
    "2024-06-02T12:00:00.000001Z",
    -9007199254740993,
    '"loose leaf"',
    None,
    None,
    True,
    0.25,
)

A1 = _account(1, "ann@example.com", "1500.00", "VIP since 2019; prefers email. " * 20, "active")
A2 = _account(2, "bob@example.com", "250.75", "Net-30 terms. " * 30, "active")
A3 = _account(3, "cy@example.com", "0.00", "Prefers phone calls. " * 25, "active")

PROFILE7 = {
    "id": 7,
    "handle": "ada",
    "bio": "Mathematician and writer, known for notes on the Analytical Engine. " * 10,
    "avatar": _b64(PNG + b"ada"),
    "aliases": ["Countess of Lovelace", "A.A.L."],
}
PROFILE8 = {
    "id": 8,
    "handle": "grace",
    "bio": "Computer scientist and rear admiral; popularised the term 'debugging'. " * 10,
    "avatar": _b64(PNG + b"grace"),
    "aliases": ["Amazing Grace"],
}


def _profile_toasted(pid: int, handle: str, **real: Any) -> dict[str, Any]:
    row = {
        "id": pid,
        "handle": handle,
        "bio": PLACEHOLDER,
        "avatar": PLACEHOLDER_BASE64,
        "aliases": PH_ARRAY,
    }
    row.update(real)
    return row


def _k(**key: Any) -> dict[str, Any]:
    return dict(key)


def _wave1(offsets: _Offsets) -> _Wave:
    """Both snapshots and the first streaming changes."""
    w = _Wave(1, offsets)
    snap = {"lsn": SNAPSHOT_MAIN, "tx": 900}

    # ---- pg_main snapshot: accounts, documents, products (one snapshot, one lsn) ----------
    acc = w.file(ACCOUNTS, 0)
    w.change(
        acc, ACCOUNTS, 0, "r", _k(id=1), after=A1, ts=us("08:00:00.050"), snapshot="first", **snap
    )
    w.change(
        acc, ACCOUNTS, 0, "r", _k(id=2), after=A2, ts=us("08:00:00.060"), snapshot="true", **snap
    )
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=1),
        before=A1,
        after={**A1, "balance": _decimal("1250.50", 2), "notes": PLACEHOLDER},
        lsn=24_150_000,
        tx=9005,
        ts=us("08:07:30"),
    )
    w.note(acc, "REPLICA IDENTITY FULL update: before image present, after carries a placeholder")

    d0 = w.file(DOCUMENTS, 0)
    d1 = w.file(DOCUMENTS, 1)
    w.change(d1, DOCUMENTS, 1, "r", _k(id=1), after=DOC1, ts=us("08:00:00.500"), **snap)
    w.change(d0, DOCUMENTS, 0, "r", _k(id=2), after=DOC2, ts=us("08:00:00.510"), **snap)
    w.change(d1, DOCUMENTS, 1, "r", _k(id=3), after=DOC3, ts=us("08:00:00.520"), **snap)
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=1),
        after=_toasted(1, "Onboarding guide (2024)", "2024-06-03T08:05:00.250111Z"),
        lsn=24_100_000,
        tx=9003,
        ts=us("08:05:00.250111"),
    )
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=3),
        after=_toasted(3, "Runbook", "2024-06-03T08:10:00.0005Z", body="Runbook v2. " * 60),
        lsn=24_200_000,
        tx=9006,
        ts=us("08:10:00.000500"),
    )
    w.note(
        d1,
        "snapshot (op r) of documents; placeholders (text, bytea base64, text[] [ph], "
        "jsonb) filled from the snapshot in the same wave",
    )
    w.note(d1, "source.ts_us finer than source.ts_ms (08:05:00.250111)")
    w.named["documents/1"] = d1

    prod = w.file(PRODUCTS, 0)
    w.change(prod, PRODUCTS, 0, "r", _k(id=101), after=P101, ts=us("08:00:00.900"), **snap)
    w.change(prod, PRODUCTS, 0, "r", _k(id=102), after=P102, ts=us("08:00:00.910"), **snap)
    w.add_line(prod, '{"topic":"pg_main.inventory.products","partition":0,"offset":')
    w.change(prod, PRODUCTS, 0, "r", _k(id=103), after=P103, ts=us("08:00:00.920"), **snap)
    w.change(
        prod,
        PRODUCTS,
        0,
        "r",
        _k(id=104),
        after=P104,
        ts=us("08:00:03.000"),
        snapshot="last",
        **snap,
    )
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=104),
        after={**P104, "price": _decimal("0.15", 2)},
        lsn=24_010_000,
        tx=9001,
        ts=us("08:00:01.250"),
    )
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=101),
        after={**P101, "price": _decimal("19.50", 2)},
        lsn=24_050_000,
        tx=9002,
        ts=us("08:02:00.000100"),
    )
    w.note(
        prod,
        "typed columns: Decimal, VariableScaleDecimal, Date (pre-1970 too), "
        "MicroTimestamp (pre-1970 too), ZonedTimestamp with offset, Json (object, scalar "
        "string, unicode), int64 beyond 2**53, bytes, int[]",
    )
    w.note(prod, "malformed JSON line (line 3) between good records")
    w.named["products"] = prod
    w.note(
        prod,
        "snapshot row read at 08:00:03 but changed at lsn > snapshot at 08:00:01.25: "
        "snapshot version's valid_from clipped",
    )

    # ---- pg_lite snapshot and streaming ---------------------------------------------------
    lsnap = {"lsn": SNAPSHOT_LITE, "tx": 5000}
    ol0 = w.file(ORDER_LINES, 0)
    ol1 = w.file(ORDER_LINES, 1)
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "r",
        _k(order_id=1, line_no=1),
        after=_line(1, 1, "ESP-1KG", 2, 19.99),
        ts=us("08:00:00.700"),
        snapshot="first",
        **lsnap,
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "r",
        _k(order_id=1, line_no=2),
        after=_line(1, 2, "TMP-58", 1, 24.5),
        ts=us("08:00:00.710"),
        **lsnap,
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "r",
        _k(order_id=2, line_no=1),
        after=_line(2, 1, "GRD-PRO", 5, 0.75),
        ts=us("08:00:00.720"),
        **lsnap,
    )
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "u",
        _k(order_id=1, line_no=1),
        after=_line(1, 1, "ESP-1KG", 3, 19.99),
        lsn=9_900_000,
        tx=5001,
        ts=us("08:10:00.123"),
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "u",
        _k(order_id=1, line_no=2),
        after=_line(1, 2, "TMP-58", 4, 24.5),
        lsn=9_950_000,
        tx=5002,
        ts=us("08:11:00"),
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "c",
        _k(order_id=3, line_no=1),
        after=_line(3, 1, "TEA-S", 1, 3.25),
        lsn=10_400_000,
        tx=5011,
        ts=us("08:40:00"),
    )
    w.note(
        ol0,
        "no envelope; composite key; int beyond 2**53 as a JSON number; "
        "ZonedTimestamp text kept as sent (plain JSON)",
    )
    w.note(ol1, "insert at lsn above the truncate lands a wave before the truncate: stays live")

    pr0 = w.file(PROFILES, 0)
    pr1 = w.file(PROFILES, 1)
    w.change(pr1, PROFILES, 1, "r", _k(id=7), after=PROFILE7, ts=us("08:00:00.800"), **lsnap)
    w.change(
        pr0,
        PROFILES,
        0,
        "r",
        _k(id=8),
        after=PROFILE8,
        ts=us("08:00:00.810"),
        snapshot="last",
        **lsnap,
    )
    w.change(
        pr0,
        PROFILES,
        0,
        "u",
        _k(id=8),
        after=_profile_toasted(8, "grace.hopper"),
        lsn=9_960_000,
        tx=5003,
        ts=us("08:12:00.456"),
    )
    w.note(
        pr0,
        "no envelope: placeholders (text, base64 bytes, [placeholder]) filled from the snapshot",
    )
    return w


def _wave2(offsets: _Offsets, first: _Wave) -> _Wave:
    """Streaming: re-sends, a multi-change transaction, a primary key change, late and
    overlapping changes, a truncate, bad lines."""
    w = _Wave(2, offsets)

    # ---- documents -------------------------------------------------------------------------
    d1 = w.file(DOCUMENTS, 1)
    resent = [json.loads(line) for line in first.lines[first.named["documents/1"]]]
    for rec in resent[2:4]:  # u id1 @ 24_100_000 and u id3 @ 24_200_000
        w.resend(d1, rec, later_ms=40 * 60 * 1000)
    w.note(
        d1,
        "connector restart: two wave-1 changes re-sent at new offsets with a later "
        "envelope ts_ms (same lsn / key / op): count once",
    )
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=1),
        after=_toasted(
            1,
            "Onboarding guide (2024, rev 2)",
            "2024-06-03T08:20:00.000001Z",
            tags=["guide", "hr", "onboarding"],
        ),
        lsn=24_300_000,
        tx=9007,
        ts=us("08:20:00.000001"),
    )
    w.note(d1, "placeholders whose real values landed one wave earlier (snapshot, wave 1)")
    # primary key change 3 -> 30: delete (partition 1) and create (partition 0), one lsn / txId
    pk = {"lsn": 24_500_000, "tx": 9013, "ts": us("08:40:00.123456")}
    w.change(d1, DOCUMENTS, 1, "d", _k(id=3), before=_key_only(DOCUMENTS, {"id": 3}), **pk)
    w.tombstone(d1, DOCUMENTS, 1, _k(id=3), pk["ts"])
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=5),
        after=_toasted(5, "Quarterly report Q2 (final)", "2024-06-03T08:55:00.000008Z"),
        lsn=24_650_000,
        tx=9016,
        ts=us("08:55:00.000008"),
    )
    w.note(d1, "primary key change 3 -> 30: delete + tombstone of the old key")
    w.note(d1, "key 5: update with placeholders, its insert lands only in wave 3 (unknown until)")

    d0 = w.file(DOCUMENTS, 0)
    tx = {"tx": 9010, "ts": us("08:30:00.500")}
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=2),
        after=_toasted(2, "Release notes 2.0.1", "2024-06-03T08:30:00.5Z"),
        lsn=24_400_000,
        **tx,
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=2),
        after=_toasted(
            2,
            "Release notes 2.0.1",
            "2024-06-03T08:30:00.5Z",
            body="Release notes 2.0.1: fixes the ingest stall.",
        ),
        lsn=24_400_200,
        **tx,
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=2),
        after=_toasted(
            2, "Release notes 2.0.2", "2024-06-03T08:30:00.500001Z", tags=["release", "patch"]
        ),
        lsn=24_400_400,
        **tx,
    )
    w.note(
        d0,
        "three changes of key 2 in one txId: one version; the last change's body "
        "placeholder takes the value set by the second change of the same transaction",
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "c",
        _k(id=30),
        after=_toasted(
            30,
            "Runbook (archived)",
            "2024-06-03T08:40:00.123456Z",
            meta='{"archived": true, "by": "ops"}',
        ),
        **pk,
    )
    w.note(
        d0,
        "primary key change 3 -> 30: the create's placeholders take the OLD key's latest "
        "values (body from the wave-1 update, attachment / tags from the snapshot)",
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=4),
        after=_toasted(4, "Legal hold", "2024-06-03T08:50:00.000007Z", meta='{"hold": true}'),
        lsn=24_600_000,
        tx=9015,
        ts=us("08:50:00.000007"),
    )
    w.note(d0, "key 4: placeholders with no earlier value: unknown, listed in unavailable_columns")
    w.named["documents/0"] = d0

    # ---- products --------------------------------------------------------------------------
    prod = w.file(PRODUCTS, 0)
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=102),
        after={**P102, "name": "Grinder Pro (old)", "price": _decimal("999.99", 2)},
        lsn=23_990_000,
        tx=8990,
        ts=us("07:59:58.500"),
    )
    w.note(
        prod,
        "streaming change with lsn below the snapshot's, landing after the snapshot: "
        "goes before it in history, does not override current",
    )
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=103),
        after={**P103, "price": _decimal("11.00", 2), "listed_at": None},
        lsn=24_120_000,
        tx=9004,
        ts=us("08:06:00.000001"),
    )
    w.note(prod, "streaming change with lsn above the snapshot's: overrides it")
    w.change(
        prod,
        PRODUCTS,
        0,
        "u",
        _k(id=101),
        after={**P101, "price": _decimal("19.50", 2)},
        lsn=24_300_500,
        tx=9008,
        ts=us("08:21:00"),
    )
    # the Decimal's bytes are not base64
    lines = w.lines[prod]
    lines[-1] = lines[-1].replace(json.dumps(_decimal("19.50", 2))[1:-1], "12,50 EUR", 1)
    assert "12,50 EUR" in lines[-1]
    w.note(prod, "a Decimal whose bytes are not base64 (line 3): quarantined")

    # ---- accounts --------------------------------------------------------------------------
    acc = w.file(ACCOUNTS, 0)
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=3),
        before=A3,
        after={**A3, "status": "suspended", "notes": PLACEHOLDER},
        lsn=24_350_000,
        tx=9009,
        ts=us("08:25:00.000002"),
    )
    w.note(acc, "key 3 first seen in an update: its placeholder filled from the before image")
    a2_late = {**A2, "notes": "Net-45 terms. " * 30}
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=2),
        before=a2_late,
        after={**a2_late, "email": "robert@example.com", "notes": PLACEHOLDER},
        lsn=24_450_000,
        tx=9012,
        ts=us("08:35:00.000004"),
    )
    w.note(
        acc,
        "key 2: the before image's value (set by a change landing only in wave 3) wins "
        "over the older snapshot value",
    )

    # ---- pg_lite ---------------------------------------------------------------------------
    ol0 = w.file(ORDER_LINES, 0)
    w.truncate(ol0, ORDER_LINES, 0, lsn=TRUNCATE_LSN, tx=5007, ts=us("08:30:00"))
    w.named["order_lines/0"] = ol0
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "c",
        _k(order_id=1, line_no=1),
        after=_line(1, 1, "ESP-1KG", 1, 18.75),
        lsn=10_300_000,
        tx=5009,
        ts=us("08:35:00"),
    )
    w.note(
        ol0,
        "truncate (op t, null key): every key of sales.order_lines deleted at its lsn; "
        "the later insert of (1,1) lives again",
    )
    ol1 = w.file(ORDER_LINES, 1)
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "u",
        _k(order_id=1, line_no=2),
        after=_line(1, 2, "TMP-58", 6, 24.5),
        lsn=10_050_000,
        tx=5004,
        ts=us("08:15:00"),
    )
    w.note(
        ol1,
        "out-of-order files: this file sorts after the truncate's but holds an earlier "
        "lsn (10050000 < 10200000; also < 9950000 as text): (1,2) stays deleted",
    )

    pr0 = w.file(PROFILES, 0)
    w.change(
        pr0,
        PROFILES,
        0,
        "c",
        _k(id=70),
        after=_profile_toasted(70, "ada"),
        lsn=10_250_000,
        tx=5008,
        ts=us("08:32:00.250"),
    )
    w.record(pr0, PROFILES, 0, _k(id=9), None, us("08:33:00") // 1000)
    w.lines[pr0][-1] = w.lines[pr0][-1].replace(
        '"payload":null',
        '"payload":"{\\"before\\":null,\\"after\\":{\\"id\\":9,\\"handle\\":\\"tr"',
    )
    w.note(
        pr0,
        "primary key change 7 -> 70: only the create (with placeholders) has landed; "
        "its delete comes in wave 3, so the columns are unknown for now",
    )
    w.note(pr0, "payload that is not JSON (line 2): quarantined")
    return w


def _wave3(offsets: _Offsets, first: _Wave, second: _Wave) -> _Wave:
    """Late events, the second half of a primary key change, deletes with tombstones, a no-op
    update, overlapping dumps, a re-landed file, an unknown op."""
    w = _Wave(3, offsets)

    # ---- documents -------------------------------------------------------------------------
    last_of_d0 = json.loads(second.lines[second.named["documents/0"]][-1])
    d0 = w.file(DOCUMENTS, 0, start=last_of_d0["offset"])
    w.again(d0, last_of_d0)
    w.note(d0, "overlapping dump: starts with wave 2's last partition-0 record (same offset)")
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=30),
        after=_toasted(
            30,
            "Runbook (archived)",
            "2024-06-03T08:40:00.123456Z",
            meta='{"by": "ops", "archived": true}',
        ),
        lsn=24_750_000,
        tx=9018,
        ts=us("09:02:00"),
    )
    w.note(
        d0,
        "update of key 30 leaving the row as it is (placeholders filled, same JSON in "
        "another key order): no new version",
    )
    w.change(
        d0,
        DOCUMENTS,
        0,
        "u",
        _k(id=4),
        after=_toasted(
            4,
            "Legal hold",
            "2024-06-03T09:05:00.000009Z",
            meta='{"hold": true}',
            body="Hold notice: do not delete. " * 40,
        ),
        lsn=24_800_000,
        tx=9019,
        ts=us("09:05:00.000009"),
    )
    w.note(d0, "key 4: body becomes known; attachment and tags stay unknown")
    del_ts = us("09:10:00")
    w.change(
        d0,
        DOCUMENTS,
        0,
        "d",
        _k(id=2),
        before=_key_only(DOCUMENTS, {"id": 2}),
        lsn=24_900_000,
        tx=9022,
        ts=del_ts,
    )
    w.tombstone(d0, DOCUMENTS, 0, _k(id=2), del_ts)
    w.note(d0, "delete + tombstone (tombstone skipped, not quarantined)")

    d1 = w.file(DOCUMENTS, 1)
    w.change(
        d1,
        DOCUMENTS,
        1,
        "c",
        _k(id=5),
        after=DOC5,
        lsn=24_550_000,
        tx=9014,
        ts=us("08:45:00.000005"),
    )
    w.note(
        d1, "late insert of key 5 (lsn below its wave-2 update): fills that update's placeholders"
    )
    w.change(
        d1,
        DOCUMENTS,
        1,
        "u",
        _k(id=1),
        after=_toasted(1, "Onboarding guide (2024, rev 2)", "2024-06-03T09:00:00.999999Z"),
        lsn=24_700_000,
        tx=9017,
        ts=us("09:00:00.999999"),
    )
    w.note(
        d1,
        "placeholders whose real values landed two waves earlier (body, attachment, "
        "meta from the wave-1 snapshot; tags from wave 2)",
    )
    # primary key change 30 -> 300: a chain of two (3 -> 30 came in wave 2)
    pk = {"lsn": 24_760_000, "tx": 9030, "ts": us("09:03:00")}
    w.change(d1, DOCUMENTS, 1, "d", _k(id=30), before=_key_only(DOCUMENTS, {"id": 30}), **pk)
    w.tombstone(d1, DOCUMENTS, 1, _k(id=30), pk["ts"])
    w.change(
        d0,
        DOCUMENTS,
        0,
        "c",
        _k(id=300),
        after=_toasted(300, "Runbook (archived)", "2024-06-03T09:03:00Z"),
        **pk,
    )
    w.note(
        d0,
        "primary key change 30 -> 300, the second of a chain (3 -> 30 in wave 2): body, "
        "attachment and tags are 3's values, which 30 took over; meta is 30's own",
    )

    # ---- products --------------------------------------------------------------------------
    prod = w.file(PRODUCTS, 0)
    del_ts = us("09:06:00")
    w.change(
        prod,
        PRODUCTS,
        0,
        "d",
        _k(id=104),
        before=_key_only(PRODUCTS, {"id": 104}),
        lsn=24_800_500,
        tx=9020,
        ts=del_ts,
    )
    w.tombstone(prod, PRODUCTS, 0, _k(id=104), del_ts)
    w.change(
        prod,
        PRODUCTS,
        0,
        "c",
        _k(id=105),
        after=_product(
            105,
            "Return credit",
            "-5.25",
            None,
            "2024-06-03",
            "2024-06-03T09:07:00",
            "2024-06-03T09:07:00.000010Z",
            None,
            None,
            None,
            None,
            False,
            None,
        ),
        lsn=24_850_000,
        tx=9021,
        ts=us("09:07:00.000010"),
    )
    w.note(prod, "delete + tombstone; insert with a negative Decimal (two's complement)")
    copy_of = first.named["products"]
    again = copy_of.replace(".jsonl", ".redelivered.jsonl")
    w.put(again, first.files()[copy_of])
    w.note(
        again,
        "the wave-1 products file landed again under another name: its records count "
        "once, its malformed line is quarantined again",
    )

    # ---- accounts --------------------------------------------------------------------------
    acc = w.file(ACCOUNTS, 0)
    w.change(
        acc,
        ACCOUNTS,
        0,
        "u",
        _k(id=2),
        before=A2,
        after={**A2, "notes": "Net-45 terms. " * 30},
        lsn=24_420_000,
        tx=9011,
        ts=us("08:31:00.000003"),
    )
    w.note(acc, "late update of key 2 (lsn below its wave-2 update): a version in between")
    del_ts = us("09:12:00")
    a1_now = {**A1, "balance": _decimal("1250.50", 2)}
    w.change(acc, ACCOUNTS, 0, "d", _k(id=1), before=a1_now, lsn=24_950_000, tx=9023, ts=del_ts)
    w.tombstone(acc, ACCOUNTS, 0, _k(id=1), del_ts)
    w.note(acc, "REPLICA IDENTITY FULL delete (full before image) + tombstone")

    # ---- pg_lite ---------------------------------------------------------------------------
    ol0 = w.file(ORDER_LINES, 0)
    w.change(
        ol0,
        ORDER_LINES,
        0,
        "c",
        _k(order_id=4, line_no=1),
        after=_line(4, 1, "MUG-01", 2, 7.5),
        lsn=10_150_000,
        tx=5006,
        ts=us("08:25:00"),
    )
    truncate = json.loads(second.lines[second.named["order_lines/0"]][0])
    assert truncate["key"] is None
    w.resend(ol0, truncate, later_ms=15 * 60 * 1000)
    w.note(
        ol0,
        "late insert of (4,1) below the truncate's lsn: deleted by the truncate that "
        "landed a wave earlier",
    )
    w.note(ol0, "the truncate re-sent at a new offset: counts once")
    ol1 = w.file(ORDER_LINES, 1)
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "u",
        _k(order_id=2, line_no=1),
        after=_line(2, 1, "GRD-PRO", 7, 0.75),
        lsn=10_100_000,
        tx=5005,
        ts=us("08:20:00"),
    )
    w.change(
        ol1,
        ORDER_LINES,
        1,
        "x",
        _k(order_id=2, line_no=1),
        after=_line(2, 1, "GRD-PRO", 8, 0.75),
        lsn=10_600_000,
        tx=5012,
        ts=us("08:50:00"),
    )
    w.note(ol1, "late update of (2,1) below the truncate: a version closed by the truncate")
    w.note(ol1, "unknown op 'x' (line 2): quarantined")

    pr1 = w.file(PROFILES, 1)
    pk_ts = us("08:32:00.250")
    w.change(
        pr1,
        PROFILES,
        1,
        "d",
        _k(id=7),
        before=_key_only(PROFILES, {"id": 7}),
        lsn=10_250_000,
        tx=5008,
        ts=pk_ts,
    )
    w.tombstone(pr1, PROFILES, 1, _k(id=7), pk_ts)
    w.note(
        pr1,
        "the delete half of the 7 -> 70 key change lands a wave after the create: "
        "70's placeholders now take 7's values; 7 is closed",
    )
    pr0 = w.file(PROFILES, 0)
    w.change(
        pr0,
        PROFILES,
        0,
        "u",
        _k(id=8),
        after=_profile_toasted(8, "rear.admiral.hopper"),
        lsn=10_350_000,
        tx=5010,
        ts=us("08:36:00"),
    )
    w.change(
        pr0,
        PROFILES,
        0,
        "u",
        _k(id=70),
        after=_profile_toasted(70, "ada", bio="First programmer. " * 30),
        lsn=10_500_000,
        tx=5050,
        ts=us("08:45:00"),
    )
    w.note(pr0, "no envelope: placeholders filled from values two waves earlier (snapshot)")
    # primary key changes 70 -> 700 -> 7000: with 7 -> 70 (its delete just landed), a chain of
    # three, its last two changes in one run
    for old, new, lsn, tx, hms in (
        (70, 700, 10_550_000, 5060, "08:50:00"),
        (700, 7000, 10_560_000, 5061, "08:51:00"),
    ):
        pk = {"lsn": lsn, "tx": tx, "ts": us(hms)}
        w.change(pr1, PROFILES, 1, "d", _k(id=old), before=_key_only(PROFILES, {"id": old}), **pk)
        w.tombstone(pr1, PROFILES, 1, _k(id=old), pk["ts"])
        w.change(pr0, PROFILES, 0, "c", _k(id=new), after=_profile_toasted(new, "ada"), **pk)
    w.note(
        pr0,
        "primary key changes 70 -> 700 -> 7000 after 7 -> 70: 7000's bio is 70's (its wave-3 "
        "update), its avatar and aliases are 7's, three keys back",
    )
    return w


def build_scenario() -> Scenario:
    """The scenario's three waves and their coverage."""
    offsets = _Offsets()
    first = _wave1(offsets)
    second = _wave2(offsets, first)
    waves = (first, second, _wave3(offsets, first, second))
    return Scenario([w.files() for w in waves], [note for w in waves for note in w.coverage])


if __name__ == "__main__":
    scenario_main("python -m tests.e2e.debezium_scenario", build_scenario)
