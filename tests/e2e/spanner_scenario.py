"""Deterministic Spanner change stream landing files, delivered in four waves, for the end-to-end
test.

Two change streams, each landing the rows its partition queries returned, one JSON object per
line (``{"partition_token": ..., <the row>}``), under ``spanner/<stream>/<partition>/NNNN.jsonl``
(the initial query, partition token null, under ``initial/``):

- ``shop_gsql``: a GoogleSQL database (tables ``Products`` with every type code, ``Orders`` with a
  composite key). Rows in the GoogleSQL shape ``{"ChangeRecord": [{"data_change_record": [...],
  "heartbeat_record": [], "child_partitions_record": []}]}``; most records as a client library
  serialises them (JSON-typed fields as strings holding JSON, INT64 fields as decimal strings),
  the records of partitions g1a and g1b with those fields as decoded JSON. value_capture_type
  OLD_AND_NEW_VALUES (the default) until 10:05, then NEW_ROW (ALTER CHANGE STREAM). Partitions:
  the initial query announces g1, g2, g3 (parents [null]); g1 splits into g1a and g1b at 10:04;
  g2 and g3 merge into g23 at 10:06.
- ``ledger_pg``: a PostgreSQL-dialect database (tables ``accounts`` and ``transfers``), rows in
  the PostgreSQL shape ``{"data_change_record": {...}}``. value_capture_type NEW_VALUES until
  10:05, then NEW_ROW_AND_OLD_VALUES. Partitions p1 and p2 from the initial query.

The records are generated from a small model of each database (every key's current row), so
that old values, NEW_ROW images and partial images agree with each other. ``build_scenario()``
gives the waves and which trap sits in which wave and file; the stream status after each wave is in
``EXPECTED_STATUS`` (derived by hand, checked against the oracle by the self-check).

Usage: ``python -m tests.e2e.spanner_scenario write-sample <landing root>`` writes all waves.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from tests.e2e.waves import Scenario, scenario_main

DAY = "2024-06-03"
GSQL = "shop_gsql"
PGSQL = "ledger_pg"
ALTERED_AT = "10:05:00"  # both streams' value_capture_type changed at this time
WITH_OLD_VALUES = ("OLD_AND_NEW_VALUES", "NEW_ROW_AND_OLD_VALUES")
FULL_ROW = ("NEW_ROW", "NEW_ROW_AND_OLD_VALUES")

# (low watermark, open partitions, incomplete transactions) per stream after each wave.
EXPECTED_STATUS: dict[str, list[tuple[str, int, int]]] = {
    GSQL: [
        ("2024-06-03T10:01:30Z", 3, 0),  # held by heartbeat-only g2
        ("2024-06-03T10:04:00Z", 4, 0),  # held by g1b: announced, no line yet
        ("2024-06-03T10:04:50Z", 4, 1),  # held by stalled g3; 4410000015 half landed
        ("2024-06-03T10:09:00Z", 3, 0),
    ],
    PGSQL: [
        ("2024-06-03T10:01:00Z", 2, 1),  # held by heartbeat-only p2; 7305118804 half landed
        ("2024-06-03T10:03:00Z", 2, 1),  # 7305118804: its p1 half landed twice, p2 half not
        ("2024-06-03T10:05:30Z", 2, 0),
        ("2024-06-03T10:07:20Z", 2, 1),  # 7305118814 half landed, above the watermark
    ],
}


def at(hms: str) -> str:
    """A scenario instant on DAY, UTC, spelled as Spanner does (as many digits as given)."""
    return f"{DAY}T{hms}Z"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _compact(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def token(stream: str, role: str) -> str:
    """An opaque, deterministic partition token."""
    digest = hashlib.sha256(f"{stream}/{role}".encode()).digest()
    return base64.urlsafe_b64encode(b"\x01" + digest[:26]).decode("ascii").rstrip("=")


# --------------------------------------------------------------------------------------------
# Schemas
# --------------------------------------------------------------------------------------------


def _type(code: str, **extra: Any) -> dict[str, Any]:
    return {"code": code, **extra}


INT64 = _type("INT64")
FLOAT64 = _type("FLOAT64")
NUMERIC = _type("NUMERIC")
BOOL = _type("BOOL")
STRING = _type("STRING")
BYTES = _type("BYTES")
DATE = _type("DATE")
TIMESTAMP = _type("TIMESTAMP")
JSON = _type("JSON")
PG_NUMERIC = _type("NUMERIC", type_annotation="PG_NUMERIC")
PG_JSONB = _type("JSON", type_annotation="PG_JSONB")


def _array(element: dict[str, Any]) -> dict[str, Any]:
    return _type("ARRAY", array_element_type=element)


@dataclass(frozen=True)
class _Table:
    name: str
    key: tuple[str, ...]
    columns: tuple[tuple[str, dict[str, Any]], ...]

    def key_of(self, row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(str(row[c]) for c in self.key)

    def column_types(self, names: Iterable[str], as_text: bool) -> list[dict[str, Any]]:
        wanted = set(names)
        out = []
        for position, (name, spec) in enumerate(self.columns, start=1):
            if name in wanted:
                out.append(
                    {
                        "name": name,
                        "type": _compact(spec) if as_text else spec,
                        "is_primary_key": name in self.key,
                        "ordinal_position": str(position) if as_text else position,
                    }
                )
        return out

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.columns]


PRODUCTS = _Table(
    "Products",
    ("ProductId",),
    (
        ("ProductId", INT64),
        ("Name", STRING),
        ("Price", NUMERIC),
        ("Weight", FLOAT64),
        ("InStock", BOOL),
        ("Thumbnail", BYTES),
        ("Released", DATE),
        ("UpdatedAt", TIMESTAMP),
        ("Attributes", JSON),
        ("Tags", _array(STRING)),
        ("Views", INT64),
        ("Ratings", _array(FLOAT64)),
    ),
)
ORDERS = _Table(
    "Orders",
    ("CustomerId", "OrderId"),
    (
        ("CustomerId", STRING),
        ("OrderId", INT64),
        ("Status", STRING),
        ("Total", NUMERIC),
        ("PlacedAt", TIMESTAMP),
        ("Note", STRING),
    ),
)
ACCOUNTS = _Table(
    "accounts",
    ("account_id",),
    (
        ("account_id", STRING),
        ("owner", STRING),
        ("balance", PG_NUMERIC),
        ("opened_on", DATE),
        ("updated_at", TIMESTAMP),
        ("prefs", PG_JSONB),
        ("active", BOOL),
        ("avatar", BYTES),
        ("limits", _array(INT64)),
    ),
)
TRANSFERS = _Table(
    "transfers",
    ("transfer_id",),
    (
        ("transfer_id", INT64),
        ("from_account", STRING),
        ("to_account", STRING),
        ("amount", PG_NUMERIC),
        ("fx_rate", FLOAT64),
        ("memo", STRING),
        ("created_at", TIMESTAMP),
    ),
)

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\xff\xd9"
BIG = "9007199254740993"  # 2**53 + 1: a double cannot hold it

# Rows as Spanner's JSON encoding writes them (INT64 as numbers or decimal strings, NUMERIC as
# decimal strings, FLOAT64 numbers or words, BYTES base64, JSON columns as strings holding JSON).
P1 = {
    "ProductId": "1",
    "Name": "Espresso Grinder Mühle",
    "Price": "249.99",
    "Weight": 3.25,
    "InStock": True,
    "Thumbnail": _b64(PNG),
    "Released": "2024-05-01",
    "UpdatedAt": "2024-06-03T10:00:30.5Z",
    "Attributes": '{"sku": 12345678901234567891, "dims": {"w": 12.5, "h": 30}, "color": "black"}',
    "Tags": ["kitchen", "coffee"],
    "Views": BIG,
    "Ratings": [4.5, "NaN", None],
}
P2 = {
    "ProductId": 2,
    "Name": "Tea Kettle",
    "Price": "12345678901234567890.123456789",
    "Weight": "Infinity",
    "InStock": False,
    "Thumbnail": "",
    "Released": "1999-12-31",
    "UpdatedAt": "2024-06-03T09:59:59.999999999Z",
    "Attributes": "null",
    "Tags": [],
    "Views": 9007199254740992,  # 2**53: still exact as a double
    "Ratings": [],
}
P3 = {
    "ProductId": "3",
    "Name": "Mug 日本",
    "Price": "10.00",
    "Weight": 0.35,
    "InStock": None,
    "Thumbnail": None,
    "Released": None,
    "UpdatedAt": None,
    "Attributes": '[1, "two", {"b": true, "a": null}]',
    "Tags": None,
    "Views": "-42",
    "Ratings": ["-Infinity"],
}
P4 = {
    "ProductId": "4",
    "Name": "Pour-over Stand",
    "Price": "0.1",
    "Weight": 1.2,
    "InStock": True,
    "Thumbnail": _b64(JPEG),
    "Released": "2024-06-01",
    "UpdatedAt": "2024-06-03T12:04:20.000001+02:00",
    "Attributes": '{"origin": "Kyoto", "materials": ["ceramic", "oak"]}',
    "Tags": ["coffee", "ceramic"],
    "Views": 0,
    "Ratings": [4.75, 4.25],
}
P5 = {
    "ProductId": "5",
    "Name": "Coffee Scale",
    "Price": "35",
    "Weight": 0.8,
    "InStock": True,
    "Thumbnail": None,
    "Released": "2023-11-30",
    "UpdatedAt": "2024-06-03T10:04:20Z",
    "Attributes": '{"max_g": 3000}',
    "Tags": ["coffee"],
    "Views": "15",
    "Ratings": None,
}
P5_AGAIN = {
    **P5,
    "Name": "Coffee Scale (refurbished)",
    "Price": "29.90",
    "UpdatedAt": "2024-06-03T10:06:10Z",
    "Views": "0",
}
P6 = {
    "ProductId": "6",
    "Name": "Filter Papers (100 pcs)",
    "Price": "4.99",
    "Weight": 0.15,
    "InStock": True,
    "Thumbnail": None,
    "Released": "2022-01-01",
    "UpdatedAt": "2024-06-03T10:04:20Z",
    "Attributes": "{}",
    "Tags": ["consumable"],
    "Views": "9223372036854775807",
    "Ratings": [3.9],
}
P7_BEFORE_STREAM = {
    "ProductId": "7",
    "Name": "Milk Frother",
    "Price": "6.00",
    "Weight": 0.4,
    "InStock": False,
    "Thumbnail": None,
    "Released": "2021-03-15",
    "UpdatedAt": "2024-05-30T08:00:00Z",
    "Attributes": '{"battery": "AA"}',
    "Tags": ["kitchen"],
    "Views": "1200",
    "Ratings": [3.5],
}
ADA_1001 = {
    "CustomerId": "c-ada",
    "OrderId": 1001,
    "Status": "placed",
    "Total": "74.50",
    "PlacedAt": "2024-06-03T10:01:10.123456Z",
    "Note": None,
}
BOB_1002 = {
    "CustomerId": "c-bob",
    "OrderId": "1002",
    "Status": "placed",
    "Total": "19.99",
    "PlacedAt": "2024-06-03T10:01:10.123456Z",
    "Note": "gift wrap",
}
CYD_1003 = {
    "CustomerId": "c-cyd",
    "OrderId": "1003",
    "Status": "placed",
    "Total": "1000000000000000000000.5",
    "PlacedAt": "2024-06-03T10:08:30Z",
    "Note": "Ünïcødé ✓",
}
DAN_1004_BEFORE_STREAM = {
    "CustomerId": "c-dan",
    "OrderId": "1004",
    "Status": "placed",
    "Total": "5",
    "PlacedAt": "2024-06-02T18:00:00Z",
    "Note": None,
}
ACC_001 = {
    "account_id": "acc-001",
    "owner": "Ada Lovelace",
    "balance": "1250.50",
    "opened_on": "2015-12-10",
    "updated_at": "2024-06-03T10:00:20.250Z",
    "prefs": '{"lang": "en", "alerts": {"sms": false, "email": true}}',
    "active": True,
    "avatar": _b64(b"\x00\x01\x02\xff"),
    "limits": ["100", 2500, None],
}
ACC_002 = {
    "account_id": "acc-002",
    "owner": "Grace Hopper",
    "balance": "99999999999999999999999999999.999999999",
    "opened_on": "1906-12-09",
    "updated_at": "2024-06-03T10:00:20.250Z",
    "prefs": "{}",
    "active": True,
    "avatar": None,
    "limits": [],
}
ACC_003 = {
    "account_id": "acc-003",
    "owner": "Dorothy Vaughan",
    "balance": "12.345",
    "opened_on": "2024-06-03",
    "updated_at": "2024-06-03T10:04:00Z",
    "prefs": '{"tier": 2}',
    "active": True,
    "avatar": None,
    "limits": [1],
}
ACC_003_AGAIN = {
    **ACC_003,
    "balance": "0",
    "updated_at": "2024-06-03T10:07:00Z",
    "prefs": '{"tier": 1}',
}
ACC_004_BEFORE_STREAM = {
    "account_id": "acc-004",
    "owner": "Katherine Johnson",
    "balance": "0",
    "opened_on": "1953-06-01",
    "updated_at": "2024-01-01T00:00:00Z",
    "prefs": '{"lang": "en"}',
    "active": True,
    "avatar": None,
    "limits": [BIG],
}
ACC_005 = {
    "account_id": "acc-005",
    "owner": "Émilie du Châtelet",
    "balance": "-0.5",
    "opened_on": "2020-02-29",
    "updated_at": "2024-06-03T10:00:20.250Z",
    "prefs": '"plain JSON string"',
    "active": False,
    "avatar": "",
    "limits": None,
}
TRANSFER_BIG = {
    "transfer_id": BIG,
    "from_account": "acc-001",
    "to_account": "acc-002",
    "amount": "100.25",
    "fx_rate": "NaN",
    "memo": "initial",
    "created_at": "2024-06-03T10:00:40Z",
}
TRANSFER_42 = {
    "transfer_id": 42,
    "from_account": "acc-002",
    "to_account": "acc-001",
    "amount": "100",
    "fx_rate": "-Infinity",
    "memo": None,
    "created_at": "2024-06-03T10:01:30.123Z",
}


# --------------------------------------------------------------------------------------------
# Streams: records generated from a model of the database
# --------------------------------------------------------------------------------------------


class _Stream:
    """One change stream: its dialect, its partitions' tokens and the database it watches."""

    def __init__(
        self,
        name: str,
        dialect: str,
        captures: tuple[str, str],
        tables: Iterable[_Table],
        existing: Iterable[tuple[_Table, dict[str, Any]]],
        decoded: Iterable[str] = (),
    ) -> None:
        self.name = name
        self.decoded = frozenset(decoded)  # roles whose JSON fields come decoded (GoogleSQL)
        self.dialect = dialect
        self.captures = captures  # (before ALTERED_AT, from ALTERED_AT on)
        self.tables = {t.name: t for t in tables}
        self.db: dict[tuple[str, tuple[Any, ...]], dict[str, Any]] = {}
        for table, row in existing:
            self.db[(table.name, table.key_of(row))] = dict(row)

    def token(self, role: str | None) -> str | None:
        return None if role is None else token(self.name, role)

    def path(self, role: str | None, file: str) -> str:
        return f"spanner/{self.name}/{role or 'initial'}/{file}"

    def _row(self, role: str | None, kind: str, record: dict[str, Any]) -> dict[str, Any]:
        line: dict[str, Any] = {"partition_token": self.token(role)}
        if self.dialect == "postgresql":
            line[kind] = record
        else:
            struct = {k: [] for k in ("data_change_record", "heartbeat_record")}
            struct["child_partitions_record"] = []
            struct[kind] = [record]
            line["ChangeRecord"] = [struct]
        return line

    def heartbeat(self, role: str, hms: str) -> dict[str, Any]:
        return self._row(role, "heartbeat_record", {"timestamp": at(hms)})

    def children(
        self, role: str | None, hms: str, seq: str, children: list[tuple[str, list[str | None]]]
    ) -> dict[str, Any]:
        record = {
            "start_timestamp": at(hms),
            "record_sequence": seq,
            "child_partitions": [
                {
                    "token": self.token(child),
                    "parent_partition_tokens": [self.token(p) for p in parents],
                }
                for child, parents in children
            ],
        }
        return self._row(role, "child_partitions_record", record)

    def data(
        self,
        role: str,
        hms: str,
        txn: str,
        table: _Table,
        mod_type: str,
        rows: list[dict[str, Any]],
        *,
        seq: str = "00000000",
        records: int = 1,
        partitions: int = 1,
        last: bool = True,
        as_text: bool | None = None,
        commit: bool = True,
    ) -> dict[str, Any]:
        """A data change record of ``rows`` (INSERT: full rows; UPDATE: key + changed columns;
        DELETE: keys), its images following the capture type in force at ``hms``. ``commit``
        False leaves the database model as it was (for a record that will be quarantined)."""
        capture = self.captures[0] if hms < ALTERED_AT else self.captures[1]
        if as_text is None:
            as_text = self.dialect == "googlesql" and role not in self.decoded
        mods = []
        touched: set[str] = set(table.key)
        full_image = mod_type != "UPDATE" or capture in FULL_ROW
        for given in rows:
            db_key = (table.name, table.key_of(given))
            before = self.db.get(db_key)
            changed = [c for c in given if c not in table.key]
            if mod_type == "INSERT":
                assert before is None, db_key
                after: dict[str, Any] | None = dict(given)
            elif mod_type == "UPDATE":
                assert before is not None, db_key
                after = {**before, **given}
            else:
                assert before is not None, db_key
                after = None
            keys = {c: given[c] for c in table.key}
            non_key = [c for c in table.names if c not in table.key]
            if mod_type == "DELETE":
                new: dict[str, Any] = {}
                old = {c: before[c] for c in non_key} if capture in WITH_OLD_VALUES else {}
            elif full_image:
                assert after is not None
                new = {c: after[c] for c in non_key}
                old = {}
                if mod_type == "UPDATE" and capture in WITH_OLD_VALUES:
                    assert before is not None
                    old = {c: before[c] for c in changed}
            else:
                assert before is not None
                new = {c: given[c] for c in changed}
                old = {c: before[c] for c in changed} if capture in WITH_OLD_VALUES else {}
            touched.update(table.names if full_image else changed)
            mods.append(
                {
                    "keys": _compact(keys) if as_text else keys,
                    "new_values": _compact(new) if as_text else new,
                    "old_values": _compact(old) if as_text else old,
                }
            )
            if commit:
                if after is None:
                    del self.db[db_key]
                else:
                    self.db[db_key] = after
        record = {
            "commit_timestamp": at(hms),
            "record_sequence": seq,
            "server_transaction_id": txn,
            "is_last_record_in_transaction_in_partition": last,
            "table_name": table.name,
            "column_types": table.column_types(touched, as_text),
            "mods": mods,
            "mod_type": mod_type,
            "value_capture_type": capture,
            "number_of_records_in_transaction": str(records) if as_text else records,
            "number_of_partitions_in_transaction": str(partitions) if as_text else partitions,
            "transaction_tag": f"app={self.name},action={mod_type.lower()}",
            "is_system_transaction": False,
        }
        return self._row(role, "data_change_record", record)


class _Wave:
    """The files of one wave: relative path -> lines."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.lines: dict[str, list[str]] = {}
        self.raw: dict[str, bytes] = {}
        self.coverage: list[tuple[int, str, str]] = []

    def add(self, path: str, *lines: dict[str, Any] | str) -> int:
        """Append lines (a str is written as is); the 1-based number of the last one."""
        target = self.lines.setdefault(path, [])
        target.extend(line if isinstance(line, str) else _compact(line) for line in lines)
        return len(target)

    def put(self, path: str, data: bytes) -> None:
        self.raw[path] = data

    def note(self, path: str, trap: str) -> None:
        self.coverage.append((self.number, path, trap))

    def files(self) -> dict[str, bytes]:
        out = {p: ("\n".join(lines) + "\n").encode("utf-8") for p, lines in self.lines.items()}
        out.update(self.raw)
        return dict(sorted(out.items()))


def _streams() -> tuple[_Stream, _Stream]:
    shop = _Stream(
        GSQL,
        "googlesql",
        ("OLD_AND_NEW_VALUES", "NEW_ROW"),
        (PRODUCTS, ORDERS),
        [(PRODUCTS, P7_BEFORE_STREAM), (ORDERS, DAN_1004_BEFORE_STREAM)],
        decoded=("g1a", "g1b"),
    )
    ledger = _Stream(
        PGSQL,
        "postgresql",
        ("NEW_VALUES", "NEW_ROW_AND_OLD_VALUES"),
        (ACCOUNTS, TRANSFERS),
        [(ACCOUNTS, ACC_004_BEFORE_STREAM)],
    )
    return shop, ledger


# --------------------------------------------------------------------------------------------
# Waves
# --------------------------------------------------------------------------------------------


def _wave1(shop: _Stream, ledger: _Stream) -> _Wave:
    w = _Wave(1)
    # ---- shop_gsql ----------------------------------------------------------------------------
    init = shop.path(None, "0001.jsonl")
    w.add(
        init,
        shop.children(None, "10:00:00", "00000001", [("g1", [None]), ("g2", [None])]),
        shop.children(None, "10:00:00", "00000002", [("g3", [None])]),
    )
    w.note(init, "initial query (token null): two child_partitions_records, parents [null]")
    g1 = shop.path("g1", "0001.jsonl")
    w.add(
        g1,
        shop.data("g1", "10:00:30.500", "4410000001", PRODUCTS, "INSERT", [P1, P2, P3]),
    )
    bad = w.add(
        g1,
        '{"partition_token":"' + str(shop.token("g1")) + '","ChangeRecord":[{"data_change_'
        'record":[],"heartbeat_record":[{"timestamp":"2024-06-03T10:01:2',
    )
    w.add(
        g1,
        shop.data(
            "g1",
            "10:01:45.250000000",
            "4410000003",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "1", "Price": "229.99"}],
        ),
        shop.heartbeat("g1", "10:02:00"),
    )
    w.note(g1, "one INSERT record with three mods; every type code; INT64 beyond 2**53")
    w.note(g1, f"line {bad}: malformed JSON (truncated line) between good records")
    w.note(g1, "OLD_AND_NEW_VALUES update at 10:01:45.250000000 (9 digits): above the watermark")
    g2 = shop.path("g2", "0001.jsonl")
    w.add(g2, shop.heartbeat("g2", "10:01:00"), shop.heartbeat("g2", "10:01:30"))
    w.note(g2, "heartbeat-only partition holds the watermark at 10:01:30")
    g3 = shop.path("g3", "0001.jsonl")
    w.add(
        g3,
        shop.data("g3", "10:01:10.123456", "4410000002", ORDERS, "INSERT", [ADA_1001, BOB_1002]),
        shop.heartbeat("g3", "10:02:10"),
    )
    w.note(g3, "composite key (STRING, INT64) inserts")

    # ---- ledger_pg ----------------------------------------------------------------------------
    init = ledger.path(None, "0001.jsonl")
    w.add(
        init,
        ledger.children(None, "10:00:00.000", "1000012389", [("p1", [None]), ("p2", [None])]),
    )
    w.note(init, "initial query (token null) announcing p1 and p2, parents [null]")
    p1 = ledger.path("p1", "0001.jsonl")
    w.add(
        p1,
        ledger.data(
            "p1", "10:00:20.250", "7305118801", ACCOUNTS, "INSERT", [ACC_001, ACC_002, ACC_005]
        ),
        ledger.data(
            "p1",
            "10:00:40",
            "7305118802",
            TRANSFERS,
            "INSERT",
            [TRANSFER_BIG],
            seq="9",
            records=2,
            last=False,
        ),
        ledger.data(
            "p1",
            "10:00:40",
            "7305118802",
            TRANSFERS,
            "UPDATE",
            [{"transfer_id": BIG, "memo": "initial (corrected)", "fx_rate": 0.9975}],
            seq="10",
            records=2,
        ),
        ledger.data(
            "p1",
            "10:01:30.123",
            "7305118803",
            ACCOUNTS,
            "UPDATE",
            [
                {
                    "account_id": "acc-001",
                    "balance": "1200.50",
                    "updated_at": "2024-06-03T10:01:30.123Z",
                }
            ],
        ),
        ledger.data(
            "p1",
            "10:01:30.123",
            "7305118804",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-002", "balance": "99999999999999999999999999899.999999999"}],
            records=2,
            partitions=2,
        ),
        ledger.heartbeat("p1", "10:02:00"),
    )
    w.note(
        p1,
        "one transaction, two records of one key: INSERT seq '9' then NEW_VALUES UPDATE seq "
        "'10' (numeric order) -> one version",
    )
    w.note(
        p1,
        "two transactions at the same commit timestamp 10:01:30.123 (7305118803 complete, "
        "7305118804 spread over p1 and p2: its p2 record lands in wave 3)",
    )
    p2 = ledger.path("p2", "0001.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:01:00"))
    w.note(p2, "heartbeat-only partition holds the watermark at 10:01:00")
    return w


def _wave2(shop: _Stream, ledger: _Stream, first: _Wave) -> _Wave:
    w = _Wave(2)
    # ---- shop_gsql ----------------------------------------------------------------------------
    g1 = shop.path("g1", "0002.jsonl")
    w.add(
        g1,
        shop.data(
            "g1",
            "10:02:40.125",
            "4410000004",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "1", "Views": "9007199254740995"}, {"ProductId": 3, "Views": 7}],
        ),
        shop.data(
            "g1",
            "10:03:04.999",
            "4410000005",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v1"}],
        ),
        shop.data(
            "g1",
            "10:03:04.999999999",
            "4410000006",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v2"}],
        ),
        shop.data(
            "g1",
            "10:03:05",
            "4410000007",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v3"}],
        ),
        shop.data(
            "g1",
            "10:03:05.000001",
            "4410000008",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "2", "Name": "Tea Kettle v4"}],
        ),
        shop.data(
            "g1",
            "10:03:20.750",
            "4410000009",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "3", "InStock": True}],
            records=2,
            partitions=2,
        ),
        shop.data(
            "g1",
            "10:03:30",
            "4410000010",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "7", "Price": "5.50", "InStock": True}],
        ),
        shop.children("g1", "10:04:00", "00000001", [("g1a", ["g1"]), ("g1b", ["g1"])]),
    )
    w.note(g1, "one UPDATE record with two mods (two keys)")
    w.note(
        g1,
        "one key at 10:03:04.999, 10:03:04.999999999, 10:03:05, 10:03:05.000001 (3/9/0/6 "
        "digits): text order is wrong, instant order gives 'Tea Kettle v4'",
    )
    w.note(g1, "Products 7 first seen through a partial update: nine columns unavailable")
    w.note(g1, "split: g1 ends with a child_partitions_record announcing g1a and g1b at 10:04")
    g2 = shop.path("g2", "0002.jsonl")
    w.add(g2, shop.heartbeat("g2", "10:03:30"), shop.heartbeat("g2", "10:04:30"))
    w.note(g2, "heartbeat-only partition advances")
    g3 = shop.path("g3", "0002.jsonl")
    w.add(
        g3,
        shop.heartbeat("g3", "10:03:00"),
        shop.data(
            "g3",
            "10:03:20.750",
            "4410000009",
            ORDERS,
            "UPDATE",
            [{"CustomerId": "c-ada", "OrderId": "1001", "Status": "shipped"}],
            seq="00000001",
            records=2,
            partitions=2,
        ),
    )
    bad = w.add(
        g3,
        shop.data(
            "g3",
            "10:03:40",
            "4410000011",
            ORDERS,
            "UPDATE",
            [{"CustomerId": "c-dan", "OrderId": "1004", "PlacedAt": "2024-06-03T25:61:00Z"}],
            commit=False,
        ),
    )
    w.add(g3, shop.heartbeat("g3", "10:04:50"))
    w.note(g3, "transaction 4410000009 spread over g1 and g3, both landing in this wave")
    w.note(g3, f"line {bad}: TIMESTAMP value 25:61:00 does not fit its type (quarantined)")
    g1a = shop.path("g1a", "0001.jsonl")
    w.add(
        g1a,
        shop.data("g1a", "10:04:20", "4410000012", PRODUCTS, "INSERT", [P4, P5, P6]),
        shop.data("g1a", "10:04:40", "4410000013", PRODUCTS, "DELETE", [{"ProductId": "5"}]),
        shop.heartbeat("g1a", "10:05:00"),
    )
    w.note(
        g1a,
        "child g1a's records (decoded JSON fields) wait: g1b, announced without lines yet, "
        "holds the watermark at its start 10:04:00",
    )

    # ---- ledger_pg ----------------------------------------------------------------------------
    again = ledger.path("p1", "0001.dup.jsonl")
    w.put(again, first.files()[ledger.path("p1", "0001.jsonl")])
    w.note(
        again,
        "wave 1's p1 file landed again under another name: 7305118804's p1 half counts once, "
        "so the transaction stays incomplete",
    )
    p1 = ledger.path("p1", "0002.jsonl")
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:10.654321",
            "7305118805",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-002", "owner": "Rear Admiral Grace Hopper"}],
        ),
    )
    unknown = w.add(
        p1,
        {
            "partition_token": ledger.token("p1"),
            "partition_event_record": {
                "commit_timestamp": at("10:02:20"),
                "record_sequence": "00000001",
                "partition_token": ledger.token("p1"),
                "move_in_events": [],
                "move_out_events": [{"destination_partition_token": ledger.token("p2")}],
            },
        },
    )
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:40",
            "7305118806",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-004", "active": False, "updated_at": "2024-06-03T10:02:40Z"}],
        ),
    )
    bad = w.add(
        p1,
        ledger.data(
            "p1",
            "10:02:50",
            "7305118807",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-001", "limits": ["100", "12x"]}],
            commit=False,
        ),
    )
    w.add(p1, ledger.heartbeat("p1", "10:03:10"))
    w.note(p1, "NEW_VALUES update: owner only, balance from the latest applied value")
    w.note(p1, f"line {unknown}: unknown record kind partition_event_record (quarantined)")
    w.note(p1, "acc-004 first seen through a NEW_VALUES update: six columns unavailable")
    w.note(p1, f"line {bad}: ARRAY<INT64> element '12x' does not fit (quarantined)")
    p2 = ledger.path("p2", "0003.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:03:00"))
    w.note(
        p2,
        "p2's later file lands before its earlier one: the watermark passes 10:01:30.123, but "
        "7305118804 is still incomplete and must wait",
    )
    return w


def _wave3(shop: _Stream, ledger: _Stream, second: _Wave) -> _Wave:
    w = _Wave(3)
    # ---- shop_gsql ----------------------------------------------------------------------------
    g1b = shop.path("g1b", "0001.jsonl")
    w.add(
        g1b,
        shop.heartbeat("g1b", "10:05:30"),
        shop.data(
            "g1b",
            "10:05:40",
            "4410000014",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "7", "Name": "Milk Frother Pro"}],
        ),
    )
    w.note(g1b, "NEW_ROW update of Products 7 (after ALTER): waits behind stalled g3")
    g1a = shop.path("g1a", "0002.jsonl")
    w.add(g1a, shop.data("g1a", "10:06:10", "4410000016", PRODUCTS, "INSERT", [P5_AGAIN]))
    unknown = w.add(
        g1a,
        {
            "partition_token": shop.token("g1a"),
            "ChangeRecord": [
                {
                    "data_change_record": [],
                    "heartbeat_record": [],
                    "child_partitions_record": [],
                    "partition_start_record": [
                        {
                            "start_timestamp": at("10:07:00"),
                            "record_sequence": "00000001",
                            "partition_tokens": [shop.token("g1a")],
                        }
                    ],
                }
            ],
        },
    )
    w.add(g1a, shop.heartbeat("g1a", "10:08:00"))
    w.note(g1a, "re-insert of Products 5 after its delete (waits until wave 4)")
    w.note(g1a, f"line {unknown}: unknown record kind partition_start_record (quarantined)")
    again = shop.path("g1a", "0001.redelivered.jsonl")
    w.put(again, second.files()[shop.path("g1a", "0001.jsonl")])
    w.note(again, "wave 2's g1a file landed again under another name: counts once")
    g2 = shop.path("g2", "0003.jsonl")
    w.add(
        g2,
        shop.heartbeat("g2", "10:05:45"),
        shop.children("g2", "10:06:00", "00000001", [("g23", ["g2", "g3"])]),
    )
    w.note(g2, "merge: g2 announces g23 (parents g2, g3) and ends")
    g23 = shop.path("g23", "0001.jsonl")
    w.add(
        g23,
        shop.data(
            "g23",
            "10:06:30",
            "4410000015",
            ORDERS,
            "UPDATE",
            [{"CustomerId": "c-bob", "OrderId": "1002", "Status": "shipped"}],
            records=2,
            partitions=2,
        ),
        shop.heartbeat("g23", "10:07:00"),
    )
    w.note(
        g23,
        "merged child's records land before parent g3 has finished: they wait; its transaction "
        "4410000015 also has a record in g1b that lands in wave 4",
    )
    w.note(
        shop.path("g3", "0003.jsonl"),
        "g3 stalls: its next file lands only in wave 4, the watermark stays at 10:04:50",
    )

    # ---- ledger_pg ----------------------------------------------------------------------------
    p2 = ledger.path("p2", "0002.jsonl")
    w.add(
        p2,
        ledger.data(
            "p2",
            "10:01:30.123",
            "7305118804",
            TRANSFERS,
            "INSERT",
            [TRANSFER_42],
            seq="00000001",
            records=2,
            partitions=2,
        ),
        ledger.heartbeat("p2", "10:02:30"),
    )
    w.note(
        p2,
        "the late p2 half of 7305118804: the transaction applies below the watermark, acc-002's "
        "later NEW_VALUES version (wave 2) now takes its balance",
    )
    p1 = ledger.path("p1", "0003.jsonl")
    w.add(
        p1,
        ledger.data("p1", "10:04:00", "7305118808", ACCOUNTS, "INSERT", [ACC_003]),
        ledger.data(
            "p1",
            "10:05:10",
            "7305118809",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-001", "active": True}],
        ),
        ledger.data(
            "p1", "10:05:20", "7305118810", ACCOUNTS, "DELETE", [{"account_id": "acc-003"}]
        ),
        ledger.heartbeat("p1", "10:06:30"),
    )
    w.note(p1, "NEW_ROW_AND_OLD_VALUES update writing the same values: no new version")
    w.note(p1, "insert then delete of acc-003 (NEW_ROW_AND_OLD_VALUES delete with old values)")
    p2 = ledger.path("p2", "0004.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:05:30"))
    return w


def _wave4(shop: _Stream, ledger: _Stream) -> _Wave:
    w = _Wave(4)
    # ---- shop_gsql ----------------------------------------------------------------------------
    g3 = shop.path("g3", "0003.jsonl")
    w.add(
        g3,
        shop.data(
            "g3",
            "10:05:20",
            "4410000017",
            ORDERS,
            "UPDATE",
            [
                {
                    "CustomerId": "c-ada",
                    "OrderId": 1001,
                    "Status": "delivered",
                    "Note": "left at door",
                }
            ],
        ),
        shop.heartbeat("g3", "10:05:50"),
        shop.children("g3", "10:06:00", "00000001", [("g23", ["g2", "g3"])]),
    )
    w.note(g3, "stalled g3 finally lands and ends (same child record as g2): merge complete")
    g1b = shop.path("g1b", "0002.jsonl")
    w.add(
        g1b,
        shop.data(
            "g1b",
            "10:06:30",
            "4410000015",
            PRODUCTS,
            "UPDATE",
            [{"ProductId": "6", "InStock": False}],
            seq="00000001",
            records=2,
            partitions=2,
        ),
        shop.heartbeat("g1b", "10:09:10"),
    )
    w.note(g1b, "second half of 4410000015 (g23 + g1b): the transaction completes")
    g23 = shop.path("g23", "0002.jsonl")
    w.add(
        g23,
        shop.data("g23", "10:08:30", "4410000018", ORDERS, "INSERT", [CYD_1003]),
        shop.data(
            "g23",
            "10:08:40",
            "4410000019",
            ORDERS,
            "DELETE",
            [{"CustomerId": "c-bob", "OrderId": "1002"}],
        ),
        shop.heartbeat("g23", "10:09:00"),
    )
    w.note(g23, "NEW_ROW delete (no old values) of an order; NUMERIC a double cannot hold")
    g1a = shop.path("g1a", "0003.jsonl")
    w.add(g1a, shop.heartbeat("g1a", "10:09:30"))

    # ---- ledger_pg ----------------------------------------------------------------------------
    p1 = ledger.path("p1", "0004.jsonl")
    w.add(
        p1,
        ledger.data(
            "p1",
            "10:06:50",
            "7305118811",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-004", "owner": "Katherine G. Johnson"}],
        ),
        ledger.data("p1", "10:07:00", "7305118812", ACCOUNTS, "INSERT", [ACC_003_AGAIN]),
        ledger.data("p1", "10:07:10", "7305118813", TRANSFERS, "DELETE", [{"transfer_id": BIG}]),
        ledger.data(
            "p1",
            "10:07:40",
            "7305118814",
            ACCOUNTS,
            "UPDATE",
            [{"account_id": "acc-001", "balance": "1100.50"}],
            records=2,
            partitions=2,
        ),
        ledger.heartbeat("p1", "10:08:00"),
    )
    bad = w.add(
        p1,
        '{"partition_token":"' + str(ledger.token("p1")) + '","data_change_record":{"commit_'
        'timestamp":"2024-06-03T10:08:05Z","record_sequence":"00000000","server_trans',
    )
    w.note(p1, "NEW_ROW_AND_OLD_VALUES update of acc-004: full row, nothing unavailable any more")
    w.note(p1, "re-insert of acc-003 after its delete; delete of the big transfer key")
    w.note(
        p1,
        "7305118814 has one of its two records landed, above the watermark: incomplete, waits",
    )
    w.note(p1, f"line {bad}: truncated last line (quarantined)")
    p2 = ledger.path("p2", "0005.jsonl")
    w.add(p2, ledger.heartbeat("p2", "10:07:20"))
    w.note(p2, "p2's heartbeat holds the watermark at 10:07:20")
    return w


def build_scenario() -> Scenario:
    """The scenario's four waves and their coverage."""
    shop, ledger = _streams()
    first = _wave1(shop, ledger)
    second = _wave2(shop, ledger, first)
    third = _wave3(shop, ledger, second)
    waves = (first, second, third, _wave4(shop, ledger))
    return Scenario([w.files() for w in waves], [note for w in waves for note in w.coverage])


if __name__ == "__main__":
    scenario_main("python -m tests.e2e.spanner_scenario", build_scenario)
