"""Deterministic Datastream landing files, delivered in waves, for the end-to-end test.

Seven streams, one per Datastream source (MySQL, Oracle, PostgreSQL, SQL Server, Spanner,
Salesforce, MongoDB), each under ``datastream/<stream>/<object>/YYYY/MM/DD/HH/MM/``. The events
follow the documented Datastream event shape (generic metadata, source-specific
``source_metadata``, full-row ``payload``) and are built to exercise the contract's traps:
backfill interleaved with CDC, out-of-order and late arrival, position orders where string order
is wrong, duplicates at every level, transactions, no-op changes, value typing, Avro files and bad
input. ``build_scenario()`` gives the waves and which trap sits in which wave and file.

Usage: ``python -m tests.e2e.datastream_scenario write-sample <landing root>`` writes all waves.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from cdc_warehouse.bench.datastream_avro import avro_container, mysql_event_schema
from tests.e2e.waves import Scenario, scenario_main

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

# The Oracle table carries no primary key in its events: the test declares it.
ORACLE_DB_TABLE = "ROOT.SAMPLE"
ORACLE_DB_KEY = ["THIS_IS_MY_PK"]


def declared_tables_yaml() -> str:
    """Table settings file (README: `CDC_TABLES`) declaring the Oracle table's key."""
    return (
        "tables:\n"
        "  - source_system: datastream\n"
        f"    source_table: {ORACLE_DB_TABLE}\n"
        f"    primary_key: [{', '.join(ORACLE_DB_KEY)}]\n"
    )


def declared_keys() -> dict[tuple[str, str], list[str]]:
    """The same declaration as ``declared_tables_yaml``, for the oracle."""
    return {("datastream", ORACLE_DB_TABLE): list(ORACLE_DB_KEY)}


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


# --------------------------------------------------------------------------------------------
# Source-specific event builders
# --------------------------------------------------------------------------------------------


def _mysql(
    label: str,
    table: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    log_file: str = "",
    log_position: int = 0,
    *,
    read_method: str = "mysql-cdc-binlog",
    primary_keys: list[str] | None = None,
) -> dict[str, Any]:
    """A MySQL event of database ``shop``."""
    pks = ["order_id"] if primary_keys is None else primary_keys
    metadata = {
        "table": table,
        "database": "shop",
        "primary_keys": pks,
        "log_file": log_file,
        "log_position": log_position,
        "change_type": change_type,
        "is_deleted": change_type in ("DELETE", "UPDATE-DELETE"),
    }
    return _event(
        MYSQL,
        read_method,
        f"shop_{table}",
        _uid(label),
        ts,
        [_ms(ts), log_file, log_position],
        metadata,
        payload,
    )


def _order(
    order_id: int,
    status: str,
    *,
    customer_id: int = 501,
    amount: Decimal = Decimal("10.50"),
    ext_ref: int = 9007199254740991,
    paid: bool = False,
    note: str | None = None,
) -> dict[str, Any]:
    """A row of shop.orders."""
    return {
        "order_id": order_id,
        "customer_id": customer_id,
        "status": status,
        "amount": amount,
        "ext_ref": ext_ref,
        "paid": paid,
        "note": note,
    }


def _order10() -> dict[str, Any]:
    """Order 10: an int below -2**53, a BIGINT at 2**63-1, a 30-digit decimal, a NULL."""
    return _order(
        10,
        "new",
        customer_id=-9007199254740993,
        amount=Decimal("12345678901234567890.123456789"),
        ext_ref=9223372036854775807,
        paid=True,
        note=None,
    )


def _oracle_db(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    rs_id: str = "",
    ssn: int = 0,
    scn: int = 0,
    tx_id: str = "",
    row_id: str = "AAAPwRAALAAMzMBABD",
    read_method: str = "oracle-cdc-logminer",
) -> dict[str, Any]:
    """An event of the Oracle table ROOT.SAMPLE (shaped like the documentation's example)."""
    metadata = {
        "log_file": "" if read_method != "oracle-cdc-logminer" else "/u01/redo/redo02.log",
        "scn": scn,
        "row_id": row_id,
        "is_deleted": change_type == "DELETE",
        "database": "DB1",
        "schema": "ROOT",
        "table": "SAMPLE",
        "change_type": change_type,
        "tx_id": tx_id,
        "rs_id": rs_id,
        "ssn": ssn,
    }
    sort_keys = [_ms(ts), scn, rs_id, ssn]
    return _event(
        ORACLE_DB, read_method, "ROOT.SAMPLE", _uid(label), ts, sort_keys, metadata, payload
    )


def _sample(pk: str, field1: str | None, field2: str) -> dict[str, Any]:
    """A row of ROOT.SAMPLE."""
    return {"THIS_IS_MY_PK": pk, "FIELD1": field1, "FIELD2": field2}


def _postgres(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    lsn: str = "",
    tx_id: str = "",
    read_method: str = "postgres-cdc-wal",
) -> dict[str, Any]:
    """An event of the PostgreSQL table public.accounts."""
    metadata = {
        "schema": "public",
        "table": "accounts",
        "is_deleted": change_type == "DELETE",
        "change_type": change_type,
        "tx_id": tx_id,
        "lsn": lsn,
        "primary_keys": ["id"],
    }
    return _event(
        POSTGRES, read_method, "public_accounts", _uid(label), ts, [_ms(ts), lsn], metadata, payload
    )


def _account(
    account_id: int,
    email: str,
    balance: Decimal,
    *,
    counter: int = 7,
    active: bool = True,
    closed_at: str | None = None,
) -> dict[str, Any]:
    """A row of public.accounts."""
    return {
        "id": account_id,
        "email": email,
        "balance": balance,
        "lifetime_events": counter,
        "active": active,
        "closed_at": closed_at,
    }


def _sqlserver(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    lsn: str = "",
    tx_id: str = "",
    physical_location: list[int] | None = None,
    read_method: str = "sqlserver-cdc",
) -> dict[str, Any]:
    """An event of the SQL Server table dbo.invoices (no primary_keys: replication_index)."""
    metadata = {
        "table": "invoices",
        "database": "billing",
        "schema": "dbo",
        "is_deleted": change_type == "DELETE",
        "lsn": lsn,
        "tx_id": tx_id,
        "physical_location": physical_location or [1, 0, 0],
        "replication_index": ["invoice_id"],
        "change_type": change_type,
    }
    return _event(
        SQLSERVER, read_method, "dbo_invoices", _uid(label), ts, [_ms(ts), lsn], metadata, payload
    )


def _invoice(
    invoice_id: int,
    status: str,
    total: Decimal,
    *,
    customer: str = "ACME S.p.A.",
    tax_rate: Decimal = Decimal("0.2200"),
    due_date: str = "2024-06-01",
    paid: bool = False,
) -> dict[str, Any]:
    """A row of dbo.invoices."""
    return {
        "invoice_id": invoice_id,
        "customer": customer,
        "total": total,
        "tax_rate": tax_rate,
        "status": status,
        "due_date": due_date,
        "paid": paid,
    }


def _spanner(
    label: str,
    mod_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    commit_timestamp: str,
    server_transaction_id: str = "",
    record_sequence: str = "00000000",
    mod_index: str = "0",
    records_in_tx: int = 1,
    read_method: str = "spanner-cdc",
) -> dict[str, Any]:
    """An event of the Spanner table Items."""
    backfill = "-backfill" in read_method
    metadata = {
        "commit_timestamp": commit_timestamp,
        "snapshot": backfill,
        "project_id": "acme-data",
        "instance_id": "catalog-prod",
        "database_id": "catalog",
        "change_stream_name": "datastream_items",
        "table": "Items",
        "server_transaction_id": server_transaction_id,
        "record_sequence": record_sequence,
        "mod_index": mod_index,
        "transaction_tag": "",
        "system_transaction": "false",
        "number_of_records_in_transaction": records_in_tx,
        "value_capture_type": "NEW_ROW",
        "mod_type": mod_type,
        "primary_keys": ["ItemId"],
        "is_deleted": mod_type == "DELETE",
    }
    sort_keys = [_ms(ts), record_sequence, mod_index]
    return _event(SPANNER, read_method, "Items", _uid(label), ts, sort_keys, metadata, payload)


def _item(item_id: int, name: str, price: Decimal, qty: int) -> dict[str, Any]:
    """A row of Items."""
    return {
        "ItemId": item_id,
        "Name": name,
        "Price": price,
        "Qty": qty,
        "GlobalId": 1152921504606846976 + item_id,
    }


def _salesforce(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    read_method: str = "salesforce-cdc",
) -> dict[str, Any]:
    """An event of the Salesforce object Account."""
    metadata = {
        "object_name": "Account",
        "domain": "acme.my.salesforce.com",
        "is_deleted": change_type == "DELETE",
        "change_type": change_type,
        "primary_keys": ["Id"],
    }
    sort_keys = [_ms(ts), payload["Id"]]
    return _event(SALESFORCE, read_method, "Account", _uid(label), ts, sort_keys, metadata, payload)


def _sf_account(account_id: str, name: str, revenue: Decimal, employees: int) -> dict[str, Any]:
    """A row of Account."""
    return {
        "Id": account_id,
        "Name": name,
        "AnnualRevenue": revenue,
        "NumberOfEmployees": employees,
        "Website": None,
        "IsPartner": False,
    }


def _mongo(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    increment: int = 1,
    read_method: str = "mongodb-cdc",
) -> dict[str, Any]:
    """An event of the MongoDB collection app.users."""
    metadata = {
        "database": "app",
        "collection": "users",
        "change_type": change_type,
        "is_deleted": change_type == "DELETE",
        "primary_keys": ["_id"],
    }
    sort_keys = [_ms(ts), increment]
    return _event(MONGODB, read_method, "app_users", _uid(label), ts, sort_keys, metadata, payload)


def _user(
    oid: str, name: str, city: str, *, active: bool = True, score: Decimal = Decimal("4.5")
) -> dict[str, Any]:
    """A MongoDB document of app.users (nested objects and arrays)."""
    return {
        "_id": oid,
        "name": name,
        "profile": {"address": {"city": city, "zip": "20121"}, "langs": ["it", "en"]},
        "score": score,
        "active": active,
        "visits": 12,
    }


# --------------------------------------------------------------------------------------------
# Avro (MySQL shop.products)
# --------------------------------------------------------------------------------------------

_OPT = "null"

PRODUCTS_AVRO_SCHEMA = mysql_event_schema(
    "shop_products",
    [
        {"name": "sku", "type": [_OPT, "string"]},
        {
            "name": "price",
            "type": [
                _OPT,
                {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": 10,
                    "scale": 2,
                },
            ],
        },
        {
            "name": "cost_precise",
            "type": [
                _OPT,
                {
                    "type": "bytes",
                    "logicalType": "decimal",
                    "precision": 38,
                    "scale": 12,
                },
            ],
        },
        {"name": "weight_kg", "type": [_OPT, "double"]},
        {"name": "stock", "type": [_OPT, "long"]},
        {"name": "barcode", "type": [_OPT, "long"]},
        {"name": "active", "type": [_OPT, "boolean"]},
        {"name": "released", "type": [_OPT, {"type": "int", "logicalType": "date"}]},
        {
            "name": "updated_at",
            "type": [_OPT, {"type": "long", "logicalType": "timestamp-micros"}],
        },
        {
            "name": "local_dt",
            "type": [
                _OPT,
                {
                    "type": "record",
                    "name": "datetime",
                    "fields": [
                        {
                            "name": "date",
                            "type": {"type": "int", "logicalType": "date"},
                        },
                        {
                            "name": "time",
                            "type": {"type": "long", "logicalType": "time-micros"},
                        },
                    ],
                },
            ],
        },
        {"name": "thumbnail", "type": [_OPT, "bytes"]},
        {"name": "description", "type": [_OPT, "string"]},
    ],
)


def _product(
    sku: str,
    price: str,
    stock: int,
    *,
    active: bool = True,
    description: str | None = None,
    updated: str = "2024-05-01T09:59:59.123456",
) -> dict[str, Any]:
    """A shop.products row as the JSON format writes it (the canonical forms of Avro values)."""
    return {
        "sku": sku,
        "price": Decimal(price),
        "cost_precise": Decimal("12345678901234567890.123456789012"),
        "weight_kg": 0.5,
        "stock": stock,
        "barcode": 9007199254740993,
        "active": active,
        "released": "2024-04-30",
        "updated_at": updated + "Z",
        "local_dt": updated,
        "thumbnail": "AAEC/w==",
        "description": description,
    }


def _product_avro_payload(row: dict[str, Any]) -> dict[str, Any]:
    """The same row with Avro-native values (decimal, date, timestamp, datetime record, bytes)."""
    local = datetime.fromisoformat(row["local_dt"])
    return {
        **row,
        "released": date.fromisoformat(row["released"]),
        "updated_at": _instant(row["updated_at"]),
        "local_dt": {"date": local.date(), "time": local.time()},
        "thumbnail": bytes([0, 1, 2, 255]),
    }


def _avro_record(event: dict[str, Any]) -> dict[str, Any]:
    """A JSON-shaped MySQL products event as an Avro record."""
    return {
        **event,
        "read_timestamp": _instant(event["read_timestamp"]),
        "source_timestamp": _instant(event["source_timestamp"]),
        "payload": _product_avro_payload(event["payload"]),
    }


def _avro_file(events: list[dict[str, Any]], marker: str) -> bytes:
    """An Avro object container file of products events (deterministic sync marker)."""
    records = [_avro_record(e) for e in events]
    return avro_container(PRODUCTS_AVRO_SCHEMA, records, sync_marker=uuid.uuid5(_NS, marker).bytes)


def _products(
    label: str,
    change_type: str,
    row: dict[str, Any],
    ts: str,
    log_file: str = "",
    log_position: int = 0,
    *,
    read_method: str = "mysql-cdc-binlog",
) -> dict[str, Any]:
    """A MySQL shop.products event."""
    return _mysql(
        label,
        "products",
        change_type,
        row,
        ts,
        log_file,
        log_position,
        read_method=read_method,
        primary_keys=["sku"],
    )


# --------------------------------------------------------------------------------------------
# The waves
# --------------------------------------------------------------------------------------------

B9 = "mysql-bin.000009"
B10 = "mysql-bin.000010"


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


def _wave1() -> _Wave:
    """Initial backfills and the first CDC, one malformed line, Avro backfill + CDC."""
    w = _Wave(1)

    # ---- MySQL shop.orders --------------------------------------------------------------
    bf = _p(MYSQL, "shop_orders", "10:00", "3f9a1c_mysql-backfill-fulldump_0_0.jsonl")
    w.add(
        bf,
        _mysql(
            "ord1/bf1",
            "orders",
            "INSERT",
            _order(1, "new"),
            "2024-05-01T10:00:01.000000Z",
            read_method="mysql-backfill-fulldump",
        ),
        _mysql(
            "ord11/bf1",
            "orders",
            "INSERT",
            _order(11, "archived", amount=Decimal("0.1"), note="only ever backfilled"),
            "2024-05-01T10:00:01.000000Z",
            read_method="mysql-backfill-fulldump",
        ),
    )
    w.note(bf, "MySQL backfill (fulldump): order 1 before its CDC, order 11 backfill-only")

    a = _p(MYSQL, "shop_orders", "10:01", "7be2d0_mysql-cdc-binlog_1714557600_9_900.jsonl")
    dup_x = _mysql(
        "ord8/i", "orders", "INSERT", _order(8, "new"), "2024-05-01T10:00:12Z", B9, 10800
    )
    w.add(
        a,
        _mysql(
            "ord1/u1",
            "orders",
            "UPDATE",
            _order(1, "paid", paid=True),
            "2024-05-01T10:00:03.000Z",
            B9,
            900,
        ),
        _mysql("ord2/i", "orders", "INSERT", _order(2, "new"), "2024-05-01T10:00:04Z", B9, 1200),
    )
    w.add_line(
        a,
        '{"stream_name": "projects/acme-data/locations/europe-west1/streams/mysql-shop", '
        '"read_method": "mysql-cdc-binlog", "object": "shop_orders", "uuid": "',
    )
    w.add(
        a,
        _mysql(
            "ord3/i",
            "orders",
            "INSERT",
            _order(3, "new", note="gift"),
            "2024-05-01T10:00:06.250Z",
            B9,
            1500,
        ),
        dup_x,
        dup_x,
        _mysql("ord4/i", "orders", "INSERT", _order(4, "new"), "2024-05-01T10:00:14Z", B9, 11200),
        _mysql("ord6/i", "orders", "INSERT", _order(6, "new"), "2024-05-01T10:00:16Z", B9, 11600),
        _mysql("ord7/i", "orders", "INSERT", _order(7, "new"), "2024-05-01T10:00:18Z", B9, 12000),
        _mysql("ord9/i", "orders", "INSERT", _order(9, "new"), "2024-05-01T10:00:20Z", B9, 12400),
        _mysql(
            "ord10/i",
            "orders",
            "INSERT",
            _order10(),
            "2024-05-01T10:00:22Z",
            B9,
            12800,
        ),
    )
    w.note(a, "line 3 malformed JSON between good lines (quarantine)")
    w.note(a, "order 8 insert: same uuid twice in one file")
    w.note(a, "order 10: int beyond -2**53, bigint 2**63-1, 30-digit decimal, null, boolean")
    w.note(a, "order 1 update at mysql-bin.000009:900 (string order of 900 vs 10000 is wrong)")

    # file b's path sorts after a's but holds both earlier-in-file and later positions
    b = _p(MYSQL, "shop_orders", "10:02", "7be2d0_mysql-cdc-binlog_1714557660_10_300.jsonl")
    w.add(
        b,
        _mysql(
            "ord2/u", "orders", "UPDATE", _order(2, "shipped"), "2024-05-01T10:01:00.500Z", B10, 300
        ),
        _mysql(
            "ord3/d",
            "orders",
            "DELETE",
            _order(3, "new", note="gift"),
            "2024-05-01T10:00:10.123Z",
            B9,
            10400,
        ),
        _mysql(
            "ord1/u2",
            "orders",
            "UPDATE",
            _order(1, "shipped", paid=True),
            "2024-05-01T10:00:08Z",
            B9,
            10000,
        ),
    )
    w.note(
        b,
        "order 1 update at mysql-bin.000009:10000; order 2 update at mysql-bin.000010:300 "
        "(position smaller than in .000009); lines not in source order",
    )

    # ---- MySQL shop.audit_log (no primary key: the whole row is the key) -------------------
    audit = _p(MYSQL, "shop_audit_log", "10:01", "19ac44_mysql-cdc-binlog_1714557635_9_14000.jsonl")
    w.add(
        audit,
        _mysql(
            "audit/ann",
            "audit_log",
            "INSERT",
            {"event": "login", "user_name": "ann", "at": "2024-05-01T10:00:35"},
            "2024-05-01T10:00:35Z",
            B9,
            14000,
            primary_keys=[],
        ),
        _mysql(
            "audit/bob",
            "audit_log",
            "INSERT",
            {"event": "login", "user_name": "bob", "at": "2024-05-01T10:00:36"},
            "2024-05-01T10:00:36Z",
            B9,
            14100,
            primary_keys=[],
        ),
    )
    w.note(audit, "table without primary key (primary_keys []): whole row is the key")

    # ---- MySQL shop.products in Avro ----------------------------------------------------------
    pbf = _p(MYSQL, "shop_products", "10:00", "a41f02_mysql-backfill-fulldump_0_0.avro")
    w.put(
        pbf,
        _avro_file(
            [
                _products(
                    "sku1/bf",
                    "INSERT",
                    _product("SKU-1", "19.99", 100),
                    "2024-05-01T10:00:00.000Z",
                    read_method="mysql-backfill-fulldump",
                ),
                _products(
                    "sku2/bf",
                    "INSERT",
                    _product("SKU-2", "5.25", 7, description="Füße"),
                    "2024-05-01T10:00:00.000Z",
                    read_method="mysql-backfill-fulldump",
                ),
            ],
            "products-bf",
        ),
    )
    w.note(
        pbf,
        "Avro backfill: decimal, date, timestamp-micros, DATETIME record, bytes, double, "
        "long beyond 2**53, boolean, string, null",
    )
    sku3_i = _products(
        "sku3/i", "INSERT", _product("SKU-3", "1.10", 3), "2024-05-01T10:00:05Z", B9, 1300
    )
    pcdc = _p(MYSQL, "shop_products", "10:01", "a41f02_mysql-cdc-binlog_1714557605_9_1300.avro")
    w.put(
        pcdc,
        _avro_file(
            [
                sku3_i,
                _products(
                    "sku1/u1",
                    "UPDATE",
                    _product("SKU-1", "18.49", 95),
                    "2024-05-01T10:00:06Z",
                    B9,
                    1400,
                ),
                sku3_i,
            ],
            "products-cdc-1",
        ),
    )
    w.note(pcdc, "Avro CDC; the same uuid twice in one Avro file")

    # ---- Oracle ROOT.SAMPLE (no primary_keys: declared key THIS_IS_MY_PK) ------------------
    obf = _p(ORACLE_DB, "ROOT_SAMPLE", "10:00", "c0ffee_oracle-backfill_0_0.jsonl")
    w.add(
        obf,
        _oracle_db(
            "ora/53/bf",
            "INSERT",
            _sample("1231535353", "foo", "TLV"),
            "2024-05-01T10:00:00",
            read_method="oracle-backfill",
        ),
        _oracle_db(
            "ora/54/bf",
            "INSERT",
            _sample("1231535354", "Zoë", "TLV"),
            "2024-05-01T10:00:00",
            read_method="oracle-backfill",
            row_id="AAAPwRAALAAMzMBABE",
        ),
        _oracle_db(
            "ora/55/bf",
            "INSERT",
            _sample("1231535355", "東京", "TLV"),
            "2024-05-01T10:00:00",
            read_method="oracle-backfill",
            row_id="AAAPwRAALAAMzMBABF",
        ),
    )
    w.note(obf, "Oracle backfill, timestamps without fraction and without Z, non-ASCII values")
    ocdc = _p(ORACLE_DB, "ROOT_SAMPLE", "10:02", "c0ffee_oracle-cdc-logminer_1_0.jsonl")
    w.add(
        ocdc,
        # one transaction, two changes of the same key; ssn 10 after ssn 9 (string order wrong)
        _oracle_db(
            "ora/53/u-ssn10",
            "UPDATE",
            _sample("1231535353", None, "TLV"),
            "2024-05-01T10:02:00",
            rs_id=" 0x0000c1.00000a10.0010",
            ssn=10,
            scn=15869116216871,
            tx_id="7.12.1001",
        ),
        _oracle_db(
            "ora/53/u-ssn9",
            "UPDATE",
            _sample("1231535353", "bar", "TLV"),
            "2024-05-01T10:02:00",
            rs_id=" 0x0000c1.00000a10.0010",
            ssn=9,
            scn=15869116216871,
            tx_id="7.12.1001",
        ),
    )
    w.note(ocdc, "Oracle: two changes of one key in one tx_id (one version); ssn 9 < 10")

    # ---- PostgreSQL public.accounts ----------------------------------------------------------
    pgbf = _p(POSTGRES, "public_accounts", "10:00", "5e5e5e_postgresql-backfill_0_0.jsonl")
    w.add(
        pgbf,
        _postgres(
            "pg/1/bf",
            "INSERT",
            _account(1, "ann@example.com", Decimal("100.10")),
            "2024-05-01T10:00:00.000000Z",
            read_method="postgresql-backfill",
        ),
        _postgres(
            "pg/2/bf",
            "INSERT",
            _account(2, "bob@example.com", Decimal("250.75")),
            "2024-05-01T10:00:00.000000Z",
            read_method="postgresql-backfill",
        ),
    )
    w.note(pgbf, "PostgreSQL backfill")
    pgc = _p(POSTGRES, "public_accounts", "10:02", "5e5e5e_postgres-cdc-wal_0_9A8.jsonl")
    w.add(
        pgc,
        _postgres(
            "pg/1/u502",
            "UPDATE",
            _account(1, "ann@example.com", Decimal("99.75")),
            "2024-05-01T10:00:05Z",
            lsn="0/10A0",
            tx_id="502",
        ),
        _postgres(
            "pg/1/u501",
            "UPDATE",
            _account(1, "ann@example.com", Decimal("120.25")),
            "2024-05-01T10:00:05Z",
            lsn="0/9A8",
            tx_id="501",
        ),
        _postgres(
            "pg/3/i",
            "INSERT",
            _account(3, "cy@example.com", Decimal("1.05")),
            "2024-05-01T10:02:00.250Z",
            lsn="0/1F00",
            tx_id="600",
        ),
        _postgres(
            "pg/3/u1",
            "UPDATE",
            _account(3, "cy@example.com", Decimal("2.05")),
            "2024-05-01T10:02:00.250Z",
            lsn="0/1F40",
            tx_id="600",
        ),
        _postgres(
            "pg/3/u2",
            "UPDATE",
            _account(3, "cy@example.com", Decimal("3.30"), counter=9007199254740993),
            "2024-05-01T10:02:00.250Z",
            lsn="0/1F80",
            tx_id="600",
        ),
    )
    w.note(
        pgc,
        "PostgreSQL: equal source_timestamp ordered by lsn 0/9A8 < 0/10A0 (string order "
        "wrong); three changes of id 3 in tx 600 make one version",
    )

    # ---- SQL Server dbo.invoices ------------------------------------------------------------
    sbf = _p(SQLSERVER, "dbo_invoices", "10:00", "d1d1d1_sqlserver-backfill_0_0.jsonl")
    w.add(
        sbf,
        _sqlserver(
            "ss/1/bf",
            "INSERT",
            _invoice(1, "draft", Decimal("1234.5678")),
            "2024-05-01T10:00:00.000Z",
            read_method="sqlserver-backfill",
        ),
    )
    w.note(sbf, "SQL Server backfill; key from replication_index")
    sc = _p(SQLSERVER, "dbo_invoices", "10:04", "d1d1d1_sqlserver-cdc_0000002A_00000598.jsonl")
    w.add(
        sc,
        _sqlserver(
            "ss/1/u-paid",
            "UPDATE",
            _invoice(1, "paid", Decimal("1234.5678"), paid=True),
            "2024-05-01T10:04:00.000Z",
            lsn="0000002A:00000600:0001",
            tx_id="0x0000000000001A2C",
            physical_location=[1, 312, 4],
        ),
        _sqlserver(
            "ss/1/u-sent",
            "UPDATE",
            _invoice(1, "sent", Decimal("1234.5678")),
            "2024-05-01T10:04:00.000Z",
            lsn="0000002A:00000598:0003",
            tx_id="0x0000000000001A2B",
            physical_location=[1, 312, 9],
        ),
        _sqlserver(
            "ss/2/i",
            "INSERT",
            _invoice(2, "draft", Decimal("99999999999999999.99")),
            "2024-05-01T10:04:10.000Z",
            lsn="0000002A:00000610:0002",
            tx_id="0x0000000000001B00",
        ),
        _sqlserver(
            "ss/2/u",
            "UPDATE",
            _invoice(2, "sent", Decimal("99999999999999999.99")),
            "2024-05-01T10:04:10.000Z",
            lsn="0000002A:00000610:0005",
            tx_id="0x0000000000001B00",
        ),
        _sqlserver(
            "ss/3/i",
            "INSERT",
            _invoice(3, "draft", Decimal("42.42")),
            "2024-05-01T10:04:20Z",
            lsn="0000002A:00000620:0001",
            tx_id="0x0000000000001B10",
        ),
    )
    w.note(
        sc,
        "SQL Server: equal source_timestamp ordered by lsn; insert+update of invoice 2 "
        "in one tx_id; decimal too long for a double",
    )

    # ---- Spanner Items ------------------------------------------------------------------------
    spbf = _p(SPANNER, "Items", "10:00", "e7e7e7_spanner-backfill_0_0.jsonl")
    w.add(
        spbf,
        _spanner(
            "sp/1/bf",
            "INSERT",
            _item(1, "Widget", Decimal("9.99"), 10),
            "2024-05-01T10:00:00.000Z",
            commit_timestamp="2024-05-01T10:00:00Z",
            read_method="spanner-backfill",
        ),
        _spanner(
            "sp/2/bf",
            "INSERT",
            _item(2, "Gadget", Decimal("24.5"), 3),
            "2024-05-01T10:00:00.000Z",
            commit_timestamp="2024-05-01T10:00:00Z",
            read_method="spanner-backfill",
        ),
    )
    w.note(spbf, "Spanner backfill")
    spc = _p(SPANNER, "Items", "10:01", "e7e7e7_spanner-cdc_0_0.jsonl")
    w.add(
        spc,
        _spanner(
            "sp/1/u-b",
            "UPDATE",
            _item(1, "Widget v3", Decimal("10.49"), 10),
            "2024-05-01T10:00:07.000Z",
            commit_timestamp="2024-05-01T10:00:07.000500Z",
            server_transaction_id="MTIzNDU2Nzg5MA-b",
        ),
        _spanner(
            "sp/1/u-a",
            "UPDATE",
            _item(1, "Widget v2", Decimal("9.99"), 10),
            "2024-05-01T10:00:07.000Z",
            commit_timestamp="2024-05-01T10:00:07Z",
            server_transaction_id="MTIzNDU2Nzg5MA-a",
        ),
        _spanner(
            "sp/3/i",
            "INSERT",
            _item(3, "Doohickey", Decimal("0.35"), 1000),
            "2024-05-01T10:00:09.123Z",
            commit_timestamp="2024-05-01T10:00:09.123456Z",
            server_transaction_id="MTIzNDU2Nzg5MA-c",
            mod_index="0",
            records_in_tx=1,
        ),
        _spanner(
            "sp/4/i",
            "INSERT",
            _item(4, "Thingamajig", Decimal("7.77"), 5),
            "2024-05-01T10:00:09.123Z",
            commit_timestamp="2024-05-01T10:00:09.123456Z",
            server_transaction_id="MTIzNDU2Nzg5MA-c",
            mod_index="1",
            records_in_tx=1,
        ),
    )
    w.note(
        spc,
        "Spanner: commit_timestamp 10:00:07Z before 10:00:07.000500Z (string order "
        "wrong), equal source_timestamp",
    )

    # ---- Salesforce Account -------------------------------------------------------------------
    sfbf = _p(SALESFORCE, "Account", "10:00", "f00d00_salesforce-backfill_0_0.jsonl")
    w.add(
        sfbf,
        _salesforce(
            "sf/E/bf",
            "INSERT",
            _sf_account("0015g00000AbCdEAAV", "Acme", Decimal("1500000.5"), 120),
            "2024-05-01T10:00:00.000Z",
            read_method="salesforce-backfill",
        ),
        _salesforce(
            "sf/F/bf",
            "INSERT",
            _sf_account("0015g00000AbCdFAAV", "Globex", Decimal("2500000.25"), 40),
            "2024-05-01T10:00:00.000Z",
            read_method="salesforce-backfill",
        ),
    )
    sfc = _p(SALESFORCE, "Account", "10:10", "f00d00_salesforce-cdc_1_0.jsonl")
    w.add(
        sfc,
        _salesforce(
            "sf/E/u1",
            "UPDATE",
            _sf_account("0015g00000AbCdEAAV", "Acme Corp", Decimal("1500000.5"), 120),
            "2024-05-01T10:10:00Z",
        ),
    )
    w.note(sfbf, "Salesforce backfill")

    # ---- MongoDB app.users --------------------------------------------------------------------
    mbf = _p(MONGODB, "app_users", "10:00", "0b0b0b_mongodb-backfill_0_0.jsonl")
    w.add(
        mbf,
        _mongo(
            "mg/67/bf",
            "CREATE",
            _user("6630a1b2c3d4e5f601234567", "Ada", "Milano"),
            "2024-05-01T10:00:00.000Z",
            read_method="mongodb-backfill",
        ),
    )
    mc = _p(MONGODB, "app_users", "10:00", "0b0b0b_mongodb-cdc_1_0.jsonl")
    w.add(
        mc,
        _mongo(
            "mg/68/c",
            "CREATE",
            _user("6630a1b2c3d4e5f601234568", "Linus", "Helsinki"),
            "2024-05-01T10:00:30.000Z",
        ),
    )
    w.note(mbf, "MongoDB backfill with nested document, array, decimal 4.5")
    return w


def _wave2() -> _Wave:
    """More CDC, backfill landing after newer CDC, PK change, bad input."""
    w = _Wave(2)

    # ---- MySQL shop.orders --------------------------------------------------------------
    bf = _p(MYSQL, "shop_orders", "10:05", "3f9a1c_mysql-backfill-incremental_0_1.jsonl")
    w.add(
        bf,
        _mysql(
            "ord1/bf2",
            "orders",
            "INSERT",
            _order(1, "paid", paid=True),
            "2024-05-01T10:00:08",
            read_method="mysql-backfill-incremental",
        ),
    )
    w.note(
        bf,
        "backfill of order 1 landing after newer CDC, source_timestamp '...10:00:08' equal "
        "to the CDC update's '...10:00:08Z': sits before it, equals the open version "
        "(no-op)",
    )

    c = _p(MYSQL, "shop_orders", "10:06", "7be2d0_mysql-cdc-binlog_1714557665_10_500.jsonl")
    y = _mysql(
        "ord8/u1",
        "orders",
        "UPDATE",
        _order(8, "paid", paid=True),
        "2024-05-01T10:01:05Z",
        B10,
        500,
    )
    z = _mysql(
        "ord8/u2",
        "orders",
        "UPDATE",
        _order(8, "shipped", paid=True),
        "2024-05-01T10:01:40Z",
        B10,
        1500,
    )
    w.add(
        c,
        y,
        _mysql(
            "ord3/reinsert",
            "orders",
            "INSERT",
            _order(3, "new", note="gift"),
            "2024-05-01T10:01:10Z",
            B10,
            700,
        ),
        # primary key change 4 -> 5: UPDATE-DELETE (old key) + UPDATE-INSERT (new key)
        _mysql(
            "ord4/ud", "orders", "UPDATE-DELETE", _order(4, "new"), "2024-05-01T10:01:12Z", B10, 800
        ),
        _mysql(
            "ord5/ui", "orders", "UPDATE-INSERT", _order(5, "new"), "2024-05-01T10:01:12Z", B10, 800
        ),
        # same-key update as a pair, insert half written first
        _mysql(
            "ord6/ui",
            "orders",
            "UPDATE-INSERT",
            _order(6, "confirmed"),
            "2024-05-01T10:01:14Z",
            B10,
            900,
        ),
        _mysql(
            "ord6/ud", "orders", "UPDATE-DELETE", _order(6, "new"), "2024-05-01T10:01:14Z", B10, 900
        ),
        # no-op update
        _mysql(
            "ord7/noop", "orders", "UPDATE", _order(7, "new"), "2024-05-01T10:01:16Z", B10, 1000
        ),
    )
    w.add(
        c,
        # a later binlog position with an EARLIER timestamp (valid_from clipping)
        _mysql(
            "ord9/u2", "orders", "UPDATE", _order(9, "cancelled"), "2024-05-01T10:01:25Z", B10, 1300
        ),
        _mysql(
            "ord9/u1",
            "orders",
            "UPDATE",
            _order(9, "paid", paid=True),
            "2024-05-01T10:01:30Z",
            B10,
            1200,
        ),
        z,
    )
    # payload missing its key column
    bad_key = _mysql(
        "bad/nokey", "orders", "UPDATE", _order(12, "new"), "2024-05-01T10:01:20Z", B10, 1100
    )
    del bad_key["payload"]["order_id"]
    w.add(c, bad_key)
    w.note(c, "re-insert of order 3 after delete (identical row: new version)")
    w.note(c, "PK change 4->5 as UPDATE-DELETE + UPDATE-INSERT at mysql-bin.000010:800")
    w.note(
        c,
        "order 6: UPDATE-INSERT then UPDATE-DELETE lines, same key, same position: one "
        "update version",
    )
    w.note(c, "order 7 no-op update; order 9 clipping; order 8 update Y (dup in another file)")
    w.note(c, "last line: payload without key column order_id (quarantine)")

    d = _p(MYSQL, "shop_orders", "10:07", "7be2d0_mysql-cdc-binlog_1714557666_10_500.jsonl")
    w.add(d, y)
    w.note(d, "same uuid as a line of the other file of this wave")

    aud = _p(MYSQL, "shop_audit_log", "10:06", "19ac44_mysql-cdc-binlog_1714557702_10_1600.jsonl")
    w.add(
        aud,
        _mysql(
            "audit/ann/d",
            "audit_log",
            "DELETE",
            {"event": "login", "user_name": "ann", "at": "2024-05-01T10:00:35"},
            "2024-05-01T10:01:42Z",
            B10,
            1600,
            primary_keys=[],
        ),
    )
    w.note(aud, "delete in a keyless table")

    pj = _p(MYSQL, "shop_products", "10:06", "a41f02_mysql-cdc-binlog_1714557663_10_400.jsonl")
    w.add(
        pj,
        _products(
            "sku3/u",
            "UPDATE",
            _product("SKU-3", "1.15", 2, description="restocked soon"),
            "2024-05-01T10:01:03Z",
            B10,
            400,
        ),
    )
    w.note(pj, "JSON products event whose uuid reappears in a wave-3 Avro file")

    # ---- Oracle -----------------------------------------------------------------------------
    oc = _p(ORACLE_DB, "ROOT_SAMPLE", "10:06", "c0ffee_oracle-cdc-logminer_2_0.jsonl")
    w.add(
        oc,
        _oracle_db(
            "ora/54/u",
            "UPDATE",
            _sample("1231535354", "Zoë", "TLV2"),
            "2024-05-01T10:05:00Z",
            rs_id=" 0x0000c2.000000b0.0010",
            ssn=0,
            scn=15869150473224,
            tx_id="7.13.1002",
            row_id="AAAPwRAALAAMzMBABE",
        ),
    )
    bad_ts = _oracle_db(
        "bad/ora-ts",
        "UPDATE",
        _sample("1231535354", "x", "y"),
        "2024-05-01T10:05:30",
        rs_id=" 0x0000c2.000000b8.0010",
        ssn=0,
        scn=15869150473230,
        tx_id="7.13.1003",
    )
    bad_ts["source_timestamp"] = "2024-05-01T25:61:00"
    w.add(oc, bad_ts)
    w.add(
        oc,
        _oracle_db(
            "ora/55/d",
            "DELETE",
            _sample("1231535355", "東京", "TLV"),
            "2024-05-01T10:06:00",
            rs_id=" 0x0000c2.000000c0.0010",
            ssn=0,
            scn=15869150473255,
            tx_id="7.14.1003",
            row_id="AAAPwRAALAAMzMBABF",
        ),
    )
    w.note(oc, "line 2: unparseable source_timestamp (quarantine)")

    # ---- PostgreSQL -------------------------------------------------------------------------
    pg = _p(POSTGRES, "public_accounts", "10:04", "5e5e5e_postgres-cdc-wal_0_2000.jsonl")
    no_uuid = _postgres(
        "bad/pg-nouuid",
        "UPDATE",
        _account(2, "bob@example.com", Decimal("1.5")),
        "2024-05-01T10:03:10Z",
        lsn="0/2050",
        tx_id="609",
    )
    del no_uuid["uuid"]
    w.add(
        pg,
        _postgres(
            "pg/2/u611",
            "UPDATE",
            _account(2, "bob@example.com", Decimal("200.5")),
            "2024-05-01T10:03:00.500Z",
            lsn="0/2100",
            tx_id="611",
        ),
        no_uuid,
        _postgres(
            "pg/2/u610",
            "UPDATE",
            _account(2, "bob@example.com", Decimal("225.5")),
            "2024-05-01T10:03:00Z",
            lsn="0/2000",
            tx_id="610",
        ),
        _postgres(
            "pg/4/u",
            "UPDATE",
            _account(4, "dee@example.com", Decimal("8.8"), active=False),
            "2024-05-01T10:03:30Z",
            lsn="1/100",
            tx_id="630",
        ),
        _postgres(
            "pg/4/i",
            "INSERT",
            _account(4, "dee@example.com", Decimal("8.8")),
            "2024-05-01T10:03:30Z",
            lsn="0/FFFFFF00",
            tx_id="620",
        ),
    )
    w.note(
        pg,
        "'10:03:00Z' before '10:03:00.500Z' (string order wrong); line 2 without uuid "
        "(quarantine); lsn 0/FFFFFF00 < 1/100 at equal source_timestamp",
    )

    # ---- SQL Server -------------------------------------------------------------------------
    ss = _p(SQLSERVER, "dbo_invoices", "10:05", "d1d1d1_sqlserver-cdc_0000002B_00000010.jsonl")
    unknown = _sqlserver(
        "bad/unknown-method",
        "INSERT",
        _invoice(9, "draft", Decimal("1.5")),
        "2024-05-01T10:04:50Z",
        lsn="0000002B:00000008:0001",
        tx_id="0x1BFF",
    )
    unknown["read_method"] = "legacy-replicator"
    unknown["source_metadata"] = {"origin": "nightly-export", "batch": 17}
    w.add(
        ss,
        unknown,
        _sqlserver(
            "ss/3/d",
            "DELETE",
            _invoice(3, "draft", Decimal("42.42")),
            "2024-05-01T10:05:00Z",
            lsn="0000002B:00000010:0001",
            tx_id="0x0000000000001C00",
        ),
    )
    w.note(ss, "line 1: unknown read_method, no telltale source_metadata (quarantine)")

    # ---- Spanner ----------------------------------------------------------------------------
    sp = _p(SPANNER, "Items", "10:01", "e7e7e7_spanner-cdc_1_0.jsonl")
    w.add(
        sp,
        _spanner(
            "sp/3/d",
            "DELETE",
            _item(3, "Doohickey", Decimal("0.35"), 1000),
            "2024-05-01T10:01:00.000Z",
            commit_timestamp="2024-05-01T10:01:00.000001Z",
            server_transaction_id="MTIzNDU2Nzg5MA-d",
        ),
        _spanner(
            "sp/2/u",
            "UPDATE",
            _item(2, "Gadget", Decimal("24.5"), 2),
            "2024-05-01T10:01:30.000Z",
            commit_timestamp="2024-05-01T10:01:30.000000Z",
            server_transaction_id="MTIzNDU2Nzg5MA-e",
        ),
    )
    w.note(sp, "Spanner delete and update")

    # ---- Salesforce: two files whose path order is the reverse of source order --------------
    s1 = _p(SALESFORCE, "Account", "10:20", "f00d00_salesforce-cdc_2_0.jsonl")
    s2 = _p(SALESFORCE, "Account", "10:21", "f00d00_salesforce-cdc_3_0.jsonl")
    w.add(
        s1,
        _salesforce(
            "sf/E/u3",
            "UPDATE",
            _sf_account("0015g00000AbCdEAAV", "Acme Holdings", Decimal("1750000.5"), 130),
            "2024-05-01T10:20:00Z",
        ),
    )
    w.add(
        s2,
        _salesforce(
            "sf/E/u2",
            "UPDATE",
            _sf_account("0015g00000AbCdEAAV", "Acme Group", Decimal("1500000.5"), 125),
            "2024-05-01T10:15:00.000Z",
        ),
        _salesforce(
            "sf/F/d",
            "DELETE",
            _sf_account("0015g00000AbCdFAAV", "Globex", Decimal("2500000.25"), 40),
            "2024-05-01T10:12:00Z",
        ),
    )
    w.note(s1, "Salesforce: later change in the file whose path sorts first")

    # ---- MongoDB: equal source_timestamp, order from sort_keys [ms, 9] < [ms, 10] -----------
    mg = _p(MONGODB, "app_users", "10:09", "0b0b0b_mongodb-cdc_2_0.jsonl")
    w.add(
        mg,
        _mongo(
            "mg/67/u10",
            "UPDATE",
            _user("6630a1b2c3d4e5f601234567", "Ada", "Torino", active=False),
            "2024-05-01T10:09:00.000Z",
            increment=10,
        ),
        _mongo(
            "mg/67/u9",
            "UPDATE",
            _user("6630a1b2c3d4e5f601234567", "Ada", "Torino"),
            "2024-05-01T10:09:00.000Z",
            increment=9,
        ),
    )
    w.note(mg, "MongoDB: equal source_timestamp ordered by sort_keys (9 before 10)")
    return w


def _wave3(first: dict[str, bytes]) -> _Wave:
    """Late events, late backfills, deletes, Avro duplicate, corrupt Avro, re-landed file."""
    w = _Wave(3)

    # ---- MySQL orders ---------------------------------------------------------------------
    late = _p(MYSQL, "shop_orders", "10:09", "7be2d0_mysql-cdc-binlog_1714557630_9_13200.jsonl")
    no_pos = _mysql(
        "bad/nopos", "orders", "UPDATE", _order(10, "lost"), "2024-05-01T10:01:44Z", B10, 1650
    )
    del no_pos["source_metadata"]["log_position"]
    w.add(
        late,
        _mysql(
            "ord2/u-late",
            "orders",
            "UPDATE",
            _order(2, "packed"),
            "2024-05-01T10:00:30Z",
            B9,
            13200,
        ),
        no_pos,
        _mysql("ord10/d", "orders", "DELETE", _order10(), "2024-05-01T10:01:45Z", B10, 1700),
        _mysql(
            "ord8/u2",
            "orders",
            "UPDATE",
            _order(8, "shipped", paid=True),
            "2024-05-01T10:01:40Z",
            B10,
            1500,
        ),
    )
    w.note(late, "late order 2 update (mysql-bin.000009:13200) sorting between applied events")
    w.note(late, "line 2: CDC event without log_position (quarantine)")
    w.note(late, "order 8 update Z again (duplicate across waves)")

    # ---- MySQL products (Avro) --------------------------------------------------------------
    pcdc = _p(MYSQL, "shop_products", "10:09", "a41f02_mysql-cdc-binlog_1714557663_10_400.avro")
    w.put(
        pcdc,
        _avro_file(
            [
                _products(
                    "sku3/u",
                    "UPDATE",
                    _product("SKU-3", "1.15", 2, description="restocked soon"),
                    "2024-05-01T10:01:03Z",
                    B10,
                    400,
                ),
                _products(
                    "sku2/d",
                    "DELETE",
                    _product("SKU-2", "5.25", 7, description="Füße"),
                    "2024-05-01T10:01:50Z",
                    B10,
                    1800,
                ),
                _products(
                    "sku1/u2",
                    "UPDATE",
                    _product(
                        "SKU-1", "17.99", 90, active=False, updated="2024-05-01T10:01:55.000001"
                    ),
                    "2024-05-01T10:01:55Z",
                    B10,
                    1900,
                ),
            ],
            "products-cdc-2",
        ),
    )
    w.note(pcdc, "Avro record 1 duplicates the wave-2 JSON event's uuid")
    corrupt = _p(MYSQL, "shop_products", "10:10", "a41f02_mysql-cdc-binlog_1714557700_10_2000.avro")
    w.put(
        corrupt,
        _avro_file(
            [
                _products(
                    "never",
                    "INSERT",
                    _product("SKU-9", "9.99", 9),
                    "2024-05-01T10:01:58Z",
                    B10,
                    2000,
                )
            ],
            "corrupt",
        )[:60],
    )
    w.note(corrupt, "truncated Avro file: header unreadable (quarantine, record 0)")

    # ---- Oracle -----------------------------------------------------------------------------
    oc = _p(ORACLE_DB, "ROOT_SAMPLE", "10:08", "c0ffee_oracle-cdc-logminer_3_0.jsonl")
    w.add(
        oc,
        _oracle_db(
            "ora/55/reinsert",
            "INSERT",
            _sample("1231535355", "東京", "TLV"),
            "2024-05-01T10:07:00",
            rs_id=" 0x0000c3.00000010.0010",
            ssn=0,
            scn=15869150479999,
            tx_id="7.15.1004",
            row_id="AAAPwRAALAAMzMBABG",
        ),
    )
    obf = _p(ORACLE_DB, "ROOT_SAMPLE", "10:09", "c0ffee_oracle-backfill_0_1.jsonl")
    w.add(
        obf,
        _oracle_db(
            "ora/54/bf2",
            "INSERT",
            _sample("1231535354", "Zoë", "TLV"),
            "2024-05-01T10:04:00",
            read_method="oracle-backfill",
            row_id="AAAPwRAALAAMzMBABE",
        ),
    )
    # A backfill read at the same instant as a CDC update: the read sits before that update
    # (rs_id positions encode as '0…', a read's position as '1…', so only the rule decides).
    w.add(
        oc,
        _oracle_db(
            "ora/60/insert",
            "INSERT",
            _sample("1231535360", "A", "TLV"),
            "2024-05-01T10:09:00",
            rs_id="0x0000c3.00000011.0010",
            scn=15869150480001,
            tx_id="7.15.1005",
            row_id="AAAPwRAALAAMzMBABH",
        ),
        _oracle_db(
            "ora/60/update",
            "UPDATE",
            _sample("1231535360", "C", "TLV"),
            "2024-05-01T10:10:00",
            rs_id="0x0000c3.00000012.0010",
            scn=15869150480002,
            tx_id="7.15.1006",
            row_id="AAAPwRAALAAMzMBABH",
        ),
    )
    w.add(
        obf,
        _oracle_db(
            "ora/60/bf",
            "INSERT",
            _sample("1231535360", "B", "TLV"),
            "2024-05-01T10:10:00",
            read_method="oracle-backfill",
            row_id="AAAPwRAALAAMzMBABH",
        ),
    )
    w.note(oc, "Oracle re-insert after delete")
    w.note(obf, "Oracle backfill landing after newer CDC (no-op, must not overwrite current)")
    w.note(obf, "Oracle backfill at the same instant as a CDC update: sits before it")

    # ---- PostgreSQL -------------------------------------------------------------------------
    pg = _p(POSTGRES, "public_accounts", "10:09", "5e5e5e_postgres-cdc-wal_1_200.jsonl")
    w.add(
        pg,
        _postgres(
            "pg/1/d",
            "DELETE",
            _account(1, "ann@example.com", Decimal("99.75")),
            "2024-05-01T10:04:00Z",
            lsn="1/200",
            tx_id="700",
        ),
    )
    # The source added a column (ALTER TABLE ... ADD COLUMN tier): later events carry it.
    w.add(
        pg,
        _postgres(
            "pg/3/tier",
            "UPDATE",
            _account(3, "cy@example.com", Decimal("3.30")) | {"tier": "gold"},
            "2024-05-01T10:05:00Z",
            lsn="1/300",
            tx_id="701",
        ),
    )
    w.note(pg, "PostgreSQL column added mid-stream (tier): appears in typed models")
    pgbf = _p(POSTGRES, "public_accounts", "10:09", "5e5e5e_postgresql-backfill_0_1.jsonl")
    w.add(
        pgbf,
        _postgres(
            "pg/2/bf2",
            "INSERT",
            _account(2, "bob@example.com", Decimal("250.75")),
            "2024-05-01T10:02:30Z",
            read_method="postgresql-backfill",
        ),
    )
    w.note(pgbf, "PostgreSQL backfill landing after newer CDC (no-op)")

    # ---- SQL Server: re-insert; whole wave-1 file landed again under another name ------------
    ss = _p(SQLSERVER, "dbo_invoices", "10:06", "d1d1d1_sqlserver-cdc_0000002B_00000020.jsonl")
    w.add(
        ss,
        _sqlserver(
            "ss/3/reinsert",
            "INSERT",
            _invoice(3, "draft", Decimal("43.01")),
            "2024-05-01T10:06:00.000000Z",
            lsn="0000002B:00000020:0001",
            tx_id="0x0000000000001C10",
        ),
    )
    orig = _p(SQLSERVER, "dbo_invoices", "10:04", "d1d1d1_sqlserver-cdc_0000002A_00000598.jsonl")
    again = _p(
        SQLSERVER, "dbo_invoices", "10:04", "d1d1d1_sqlserver-cdc_0000002A_00000598.retry-1.jsonl"
    )
    w.put(again, first[orig])
    w.note(again, "the whole wave-1 SQL Server CDC file landed again under another name")

    # ---- Spanner ----------------------------------------------------------------------------
    sp = _p(SPANNER, "Items", "10:02", "e7e7e7_spanner-cdc_2_0.jsonl")
    w.add(
        sp,
        _spanner(
            "sp/3/i2",
            "INSERT",
            _item(3, "Doohickey", Decimal("0.35"), 1000),
            "2024-05-01T10:02:00.000Z",
            commit_timestamp="2024-05-01T10:02:00.000001Z",
            server_transaction_id="MTIzNDU2Nzg5MA-f",
        ),
    )
    w.note(sp, "Spanner re-insert after delete")

    # ---- Salesforce: late backfill of a deleted record -----------------------------------------
    sf = _p(SALESFORCE, "Account", "10:30", "f00d00_salesforce-backfill_0_1.jsonl")
    w.add(
        sf,
        _salesforce(
            "sf/F/bf2",
            "INSERT",
            _sf_account("0015g00000AbCdFAAV", "Globex", Decimal("2500000.25"), 40),
            "2024-05-01T10:05:00Z",
            read_method="salesforce-backfill",
        ),
    )
    w.note(sf, "Salesforce backfill read before a delete, landing after it: key stays deleted")

    # ---- MongoDB ----------------------------------------------------------------------------
    mg = _p(MONGODB, "app_users", "10:11", "0b0b0b_mongodb-cdc_3_0.jsonl")
    w.add(
        mg,
        _mongo(
            "mg/68/d",
            "DELETE",
            _user("6630a1b2c3d4e5f601234568", "Linus", "Helsinki"),
            "2024-05-01T10:11:00Z",
        ),
    )
    w.note(mg, "MongoDB delete")
    return w


def build_scenario() -> Scenario:
    """The scenario's three waves and their coverage."""
    first = _wave1()
    second = _wave2()
    waves = (first, second, _wave3(first.files()))
    return Scenario([w.files() for w in waves], [note for w in waves for note in w.coverage])


if __name__ == "__main__":
    scenario_main("python -m tests.e2e.datastream_scenario", build_scenario)
