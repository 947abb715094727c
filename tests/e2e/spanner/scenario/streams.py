"""What both change streams are generated from: the scenario's clock, Spanner's type codes,
a table's schema, a stream's model of its database (whose records follow the value capture
type in force) and the files of a wave."""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

DAY = "2024-06-03"
GSQL = "shop_gsql"
PGSQL = "ledger_pg"
ALTERED_AT = "10:05:00"  # both streams' value_capture_type changed at this time
WITH_OLD_VALUES = ("OLD_AND_NEW_VALUES", "NEW_ROW_AND_OLD_VALUES")
FULL_ROW = ("NEW_ROW", "NEW_ROW_AND_OLD_VALUES")


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


PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10"
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\xff\xd9"
BIG = "9007199254740993"  # 2**53 + 1: a double cannot hold it


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

    def snapshot_path(self, table: _Table, file: str) -> str:
        return f"spanner/{self.name}/snapshot/{table.name}/{file}"

    def snapshot(self, table: _Table, hms: str) -> list[dict[str, Any]]:
        """A snapshot file of ``table`` as a strong read at ``hms`` returns it: the header (every
        column, typed as this stream's records type them), then each row the database model
        holds now, in key order, values as Spanner's JSON encoding writes them."""
        as_text = self.dialect == "googlesql"
        header = {
            "snapshot": {
                "read_timestamp": at(hms),
                "table": table.name,
                "column_types": table.column_types(table.names, as_text),
            }
        }
        rows = sorted((key, row) for (name, key), row in self.db.items() if name == table.name)
        return [header, *({"values": dict(row)} for _, row in rows)]


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
