"""What a warehouse fed with a slot's pgoutput files must hold, taken from the database itself.

Independent of the pipeline's decoder: values come from SQL on the live tables (current state) and
from an audit trail written by triggers in the same transactions as the changes (history), never
from the pgoutput bytes.

Typing (docs/decisions/001, "Canonical values"), one path for both: per published table a SQL
function `cdc_audit.typed_<schema>_<table>(row)` turns a row into a JSON object of *typed text*,
one string (or null) per column, made by a per-type SQL expression (see `_column_sql`);
`typed_value` turns that text into the canonical JSON value using the column's type:

    int2/int4/int8   number; beyond +-2**53 the decimal string
    numeric          'NaN'/'Infinity'/'-Infinity' as strings; an integral value within +-2**53 an
                     int; else a float iff Decimal(repr(float(d))) == d; else PostgreSQL's own
                     text of the value (scale kept, never an exponent)
    float4/float8    Python float (so 1.0 -> 1.0, -0 -> -0.0); 'NaN'/'Infinity'/'-Infinity' strings
    bool             true/false
    bytea            base64 of the bytes (encode(..., 'base64') without its line breaks)
    date             'YYYY-MM-DD'
    timestamp        'YYYY-MM-DDTHH:MM:SS.ffffff'
    timestamptz      'YYYY-MM-DDTHH:MM:SS.ffffffZ' (UTC)
    json/jsonb       the JSON value itself (json.loads of the column's text; floats as floats)
    arrays (1-D)     JSON arrays, each element typed as above, NULL elements null
    anything else    (text, varchar, uuid, enums, ...) the text output, a string
    domains          typed as their base type

`key_json` / `row_json` are `canonical_json(...)` of the typed values: json.dumps with sorted keys,
compact separators, ensure_ascii=False.

Audit trail: `install_audit(pg, tables)` creates schema `cdc_audit` (never published) with table
`cdc_audit.changes` and AFTER INSERT/UPDATE/DELETE (per row) and AFTER TRUNCATE (per statement)
triggers on every published table. Each row records the table, op, the typed new row (insert,
update) and typed old row (update, delete), txid_current() (the top-level transaction's id, also
inside a subtransaction), statement_timestamp() and a sequence number. A rolled-back transaction,
subtransaction or prepared transaction takes its audit rows with it; a transaction not yet
committed (open, or prepared) is invisible. `expected_history` orders the committed transactions
by pg_xact_commit_timestamp(xid) (track_commit_timestamp=on; the same value pgoutput sends as the
commit timestamp of Commit / Stream Commit / Commit Prepared), then by sequence.

Limits, none of which the workload hits: the pipeline orders by commit LSN, this by commit time
(they differ only for a transaction with a replication origin, whose commit time is the origin's,
here 2024-01-01, and it touches one key of its own); a json/jsonb column holding JSON null and a SQL
NULL both give null; multi-dimensional arrays come out flattened.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from tests.postgres import LocalPostgres

AUDIT_SCHEMA = "cdc_audit"
AUDIT_TABLE = f"{AUDIT_SCHEMA}.changes"
SOURCE_SYSTEM = "pgoutput"
MAX_EXACT_INT = 2**53
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SPECIAL_FLOATS = ("NaN", "Infinity", "-Infinity")
_INT_TYPES = {"int2", "int4", "int8"}
_FLOAT_TYPES = {"float4", "float8"}


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _qualified(table: str) -> str:
    schema, name = table.split(".", 1)
    return f"{_ident(schema)}.{_ident(name)}"


def _function_name(table: str) -> str:
    return f"{AUDIT_SCHEMA}." + re.sub(r"[^a-z0-9_]", "_", "typed_" + table.replace(".", "_"))


# -- columns and their types ------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    kind: str  # a base type name (int8, numeric, ...), "enum", or "array:<element kind>"
    sql_type: str  # format_type, for messages


@dataclass(frozen=True)
class TableInfo:
    name: str  # schema.table
    columns: tuple[Column, ...]
    key: tuple[str, ...]


def _kind(typname: str, typtype: str) -> str:
    return "enum" if typtype == "e" else typname


def table_info(
    pg: LocalPostgres, table: str, declared_keys: dict[str, list[str]] | None = None
) -> TableInfo:
    """Columns (with the kind of their base type) and key: declared, else the primary key."""
    rows = pg.sql(
        f"""
        select a.attname, bt.typname, bt.typtype, bt.typcategory, et.typname, et.typtype,
               format_type(a.atttypid, a.atttypmod)
        from pg_attribute a
        join pg_type t on t.oid = a.atttypid
        join pg_type bt on bt.oid = case when t.typtype = 'd' then t.typbasetype else t.oid end
        left join pg_type et0 on et0.oid = bt.typelem and bt.typcategory = 'A'
        left join pg_type et on et.oid =
            case when et0.typtype = 'd' then et0.typbasetype else et0.oid end
        where a.attrelid = {_literal(_qualified(table))}::regclass
          and a.attnum > 0 and not a.attisdropped
        order by a.attnum
        """
    )
    columns = []
    for name, typname, typtype, category, elem_name, elem_type, sql_type in rows:
        assert name and typname and typtype and sql_type
        if category == "A" and elem_name:
            kind = "array:" + _kind(elem_name, elem_type or "b")
        else:
            kind = _kind(typname, typtype)
        columns.append(Column(name, kind, sql_type))
    if declared_keys and table in declared_keys:
        key = tuple(declared_keys[table])
    else:
        key = tuple(
            row[0] or ""
            for row in pg.sql(
                f"""
                select a.attname
                from pg_index i
                cross join lateral unnest(i.indkey) with ordinality as k(attnum, position)
                join pg_attribute a on a.attrelid = i.indrelid and a.attnum = k.attnum
                where i.indrelid = {_literal(_qualified(table))}::regclass and i.indisprimary
                order by k.position
                """
            )
        )
    if not key:
        raise ValueError(f"{table} has no primary key and no declared key")
    unknown = set(key) - {column.name for column in columns}
    if unknown:
        raise ValueError(f"key columns {sorted(unknown)} are not columns of {table}")
    return TableInfo(table, tuple(columns), key)


# -- typing: SQL side (value -> typed text) and Python side (typed text -> JSON value) ---------


def _value_sql(kind: str, ref: str) -> str:
    """A SQL expression turning the value `ref` into its typed text (NULL stays NULL)."""
    if kind.startswith("array:"):
        element = _value_sql(kind.removeprefix("array:"), "e")
        return (
            f"case when {ref} is null then null else coalesce((select json_agg({element} "
            f"order by o) from unnest({ref}) with ordinality as u(e, o)), '[]')::text end"
        )
    if kind == "bytea":
        return f"translate(encode({ref}, 'base64'), E'\\n\\r', '')"
    if kind == "date":
        return f"case when isfinite({ref}) then to_char({ref}, 'YYYY-MM-DD') else {ref}::text end"
    if kind == "timestamp":
        return (
            f"case when isfinite({ref}) then to_char({ref}, 'YYYY-MM-DD\"T\"HH24:MI:SS.US') "
            f"else {ref}::text end"
        )
    if kind == "timestamptz":
        return (
            f"case when isfinite({ref}) then "
            f"to_char({ref} at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"') "
            f"else {ref}::text end"
        )
    return f"{ref}::text"


def _column_sql(column: Column, row_ref: str) -> str:
    return _value_sql(column.kind, f"({row_ref}).{_ident(column.name)}")


def typed_value(kind: str, text: str | None) -> Any:
    """The canonical JSON value of a column of `kind` from its typed text."""
    if text is None:
        return None
    if kind.startswith("array:"):
        element = kind.removeprefix("array:")
        return [typed_value(element, item) for item in json.loads(text)]
    if kind in _INT_TYPES:
        number = int(text)
        return number if abs(number) <= MAX_EXACT_INT else str(number)
    if kind == "numeric":
        if text in _SPECIAL_FLOATS:
            return text
        decimal = Decimal(text)
        if decimal == decimal.to_integral_value() and abs(decimal) <= MAX_EXACT_INT:
            return int(decimal)
        if Decimal(repr(float(decimal))) == decimal:
            return float(decimal)
        return text
    if kind in _FLOAT_TYPES:
        return text if text in _SPECIAL_FLOATS else float(text)
    if kind == "bool":
        return {"true": True, "false": False}[text]
    if kind in ("json", "jsonb"):
        return json.loads(text)
    return text


def typed_row(info: TableInfo, texts: dict[str, str | None]) -> dict[str, Any]:
    return {column.name: typed_value(column.kind, texts[column.name]) for column in info.columns}


def key_and_row_json(info: TableInfo, texts: dict[str, str | None]) -> tuple[str, str]:
    row = typed_row(info, texts)
    return canonical_json({name: row[name] for name in info.key}), canonical_json(row)


def _typed_function_sql(info: TableInfo) -> str:
    names = ", ".join(_literal(column.name) for column in info.columns)
    values = ", ".join(_column_sql(column, "r") for column in info.columns)
    return (
        f"create function {_function_name(info.name)}(r {_qualified(info.name)}) returns jsonb "
        f"language sql stable as $fn$ select json_object(array[{names}]::text[], "
        f"array[{values}]::text[])::jsonb $fn$;"
    )


# -- audit trail ------------------------------------------------------------------------------


def install_audit(
    pg: LocalPostgres, tables: list[str], declared_keys: dict[str, list[str]] | None = None
) -> dict[str, TableInfo]:
    """Create the audit schema, typing functions and triggers; returns each table's TableInfo."""
    infos = {table: table_info(pg, table, declared_keys) for table in tables}
    statements = [
        f"create schema {AUDIT_SCHEMA};",
        f"""create table {AUDIT_TABLE} (
            seq bigserial primary key,
            table_name text not null,
            op text not null check (op in ('insert', 'update', 'delete', 'truncate')),
            new_row jsonb,
            old_row jsonb,
            txid bigint not null default txid_current(),
            statement_at timestamptz not null default statement_timestamp()
        );""",
    ]
    for table, info in infos.items():
        function = _function_name(table)
        statements.append(_typed_function_sql(info))
        statements.append(
            f"""create function {function}_audit() returns trigger language plpgsql as $fn$
            begin
                if tg_op = 'INSERT' then
                    insert into {AUDIT_TABLE} (table_name, op, new_row)
                    values ({_literal(table)}, 'insert', {function}(new));
                elsif tg_op = 'UPDATE' then
                    insert into {AUDIT_TABLE} (table_name, op, new_row, old_row)
                    values ({_literal(table)}, 'update', {function}(new), {function}(old));
                elsif tg_op = 'DELETE' then
                    insert into {AUDIT_TABLE} (table_name, op, old_row)
                    values ({_literal(table)}, 'delete', {function}(old));
                else
                    insert into {AUDIT_TABLE} (table_name, op)
                    values ({_literal(table)}, 'truncate');
                end if;
                return null;
            end
            $fn$;"""
        )
        statements.append(
            f"create trigger cdc_audit_rows after insert or update or delete on "
            f"{_qualified(table)} for each row execute function {function}_audit();"
        )
        statements.append(
            f"create trigger cdc_audit_truncate after truncate on {_qualified(table)} "
            f"for each statement execute function {function}_audit();"
        )
    pg.sql("\n".join(statements))
    return infos


def current_state(pg: LocalPostgres, infos: dict[str, TableInfo]) -> dict[str, dict[str, str]]:
    """Per table: key_json -> row_json of every row the database holds now."""
    state: dict[str, dict[str, str]] = {}
    for table, info in infos.items():
        rows = pg.sql(f"select {_function_name(table)}(t)::text from {_qualified(table)} t")
        state[table] = dict(key_and_row_json(info, json.loads(row[0] or "")) for row in rows)
    return state


@dataclass(frozen=True)
class AuditChange:
    seq: int
    table: str
    op: str
    new_row: dict[str, str | None] | None
    old_row: dict[str, str | None] | None
    xid: int
    committed_at: datetime


def micros_to_datetime(micros: int) -> datetime:
    return _EPOCH + timedelta(microseconds=micros)


def audit_changes(pg: LocalPostgres) -> list[AuditChange]:
    """Every committed audit row, in commit order (commit timestamp, then sequence)."""
    rows = pg.sql(
        f"""
        select seq, table_name, op, new_row::text, old_row::text, txid,
               (extract(epoch from committed_at) * 1000000)::bigint
        from (select *, pg_xact_commit_timestamp((txid % 4294967296)::text::xid) as committed_at
              from {AUDIT_TABLE}) c
        order by committed_at, txid, seq
        """
    )
    changes = []
    for seq, table, op, new_row, old_row, txid, micros in rows:
        if micros is None:
            raise AssertionError(
                f"no commit timestamp for xid {txid}: is track_commit_timestamp on?"
            )
        changes.append(
            AuditChange(
                seq=int(seq or 0),
                table=table or "",
                op=op or "",
                new_row=None if new_row is None else json.loads(new_row),
                old_row=None if old_row is None else json.loads(old_row),
                xid=int(txid or 0) % 2**32,
                committed_at=micros_to_datetime(int(micros)),
            )
        )
    return changes


def commit_times(changes: list[AuditChange]) -> dict[int, datetime]:
    """xid -> commit timestamp, for every transaction that left audit rows."""
    return {change.xid: change.committed_at for change in changes}


@dataclass
class Version:
    table: str
    key_json: str
    row_json: str
    op: str
    committed_at: datetime  # the transaction's own commit time
    valid_from: datetime
    valid_to: datetime | None
    xid: int

    @property
    def is_current(self) -> bool:
        return self.valid_to is None


def _transaction_rows(
    tx: list[AuditChange], infos: dict[str, TableInfo], live: dict[tuple[str, str], str]
) -> dict[tuple[str, str], tuple[str | None, str]]:
    """(table, key_json) -> (the row one transaction leaves, None where it deletes the key; the
    op of its last change of the key)."""
    final: dict[tuple[str, str], tuple[str | None, str]] = {}
    for change in sorted(tx, key=lambda change: change.seq):
        info = infos[change.table]
        if change.op == "truncate":
            keys = {key for key in live if key[0] == change.table}
            keys |= {key for key, (row, _) in final.items() if key[0] == change.table and row}
            for key in keys:
                final[key] = (None, "delete")
            continue
        if change.old_row is not None:
            old_key, _ = key_and_row_json(info, change.old_row)
            final[(change.table, old_key)] = (None, "delete")
        if change.new_row is not None:
            new_key, new_row = key_and_row_json(info, change.new_row)
            final[(change.table, new_key)] = (new_row, change.op)
    return final


def expected_history(
    changes: list[AuditChange],
    infos: dict[str, TableInfo],
    before: frozenset[int] = frozenset(),
) -> list[Version]:
    """Versions per key from the committed audit rows (see the module docstring for order).

    The transactions whose audit rows are `before` (the slot's snapshot holds them) are no
    part of the slot's log: the rows they leave are each key's first version, op 'snapshot',
    from the epoch ("since before the log began"), and the later transactions follow it.

    One version per transaction that leaves a key with a row different from its open version
    (the row after the transaction's last change of that key; op = that change's op, so a key
    inserted and then updated in one transaction has op 'update', and the new key of a primary
    key change has op 'update'). A delete, a truncate (every live key of the table) or a primary
    key change (for the old key) closes the open version. valid_to = the next transition's
    commit time; valid_from = the min of the version's commit time and every later transition's.
    """
    transactions: dict[int, list[AuditChange]] = {}
    for change in changes:
        transactions.setdefault(change.xid, []).append(change)
    ordered = sorted(
        transactions.values(), key=lambda tx: (tx[0].committed_at, min(c.seq for c in tx))
    )

    live: dict[tuple[str, str], str] = {}  # (table, key_json) -> row_json of the open version
    # (table, key_json) -> transitions: (time, row_json or None for a close, op, xid)
    transitions: dict[tuple[str, str], list[tuple[datetime, str | None, str, int]]] = {}
    in_snapshot = [tx for tx in ordered if all(change.seq in before for change in tx)]
    logged = [tx for tx in ordered if not all(change.seq in before for change in tx)]
    for tx in in_snapshot:
        for key, (row, _) in _transaction_rows(tx, infos, live).items():
            if row is None:
                live.pop(key, None)
            else:
                live[key] = row
    for key, row in live.items():
        transitions[key] = [(_EPOCH, row, "snapshot", 0)]
    for tx in logged:
        when = tx[0].committed_at
        for key, (row, op) in _transaction_rows(tx, infos, live).items():
            if row is None:
                if key in live:
                    del live[key]
                    transitions.setdefault(key, []).append((when, None, "delete", tx[0].xid))
            elif live.get(key) != row:
                live[key] = row
                transitions.setdefault(key, []).append((when, row, op, tx[0].xid))

    versions = []
    for (table, key_json), steps in transitions.items():
        earliest_later: datetime | None = None
        for index in range(len(steps) - 1, -1, -1):
            when, row, op, xid = steps[index]
            earliest_later = when if earliest_later is None else min(when, earliest_later)
            if row is None:
                continue
            valid_to = steps[index + 1][0] if index + 1 < len(steps) else None
            versions.append(Version(table, key_json, row, op, when, earliest_later, valid_to, xid))
    versions.sort(key=lambda v: (v.table, v.key_json, v.valid_from, v.committed_at))
    return versions


# -- the wave's expectations, per slot --------------------------------------------------------


def expected_rows(
    pg: LocalPostgres, infos: dict[str, TableInfo], slots: dict[str, frozenset[int]]
) -> dict[str, Any]:
    """`expected_current` and `expected_history` for each slot in `slots` (with the audit rows
    its snapshot holds: the same current state for all, the history from each one's snapshot
    on), and `commit_times` (xid -> commit timestamp of every transaction that changed a
    table)."""
    current = current_state(pg, infos)
    changes = audit_changes(pg)
    histories = {slot: expected_history(changes, infos, before) for slot, before in slots.items()}
    expected_current = [
        {"source_name": slot, "source_table": table, "key_json": key, "row_json": row}
        for slot in slots
        for table in sorted(current)
        for key, row in sorted(current[table].items())
    ]
    expected_versions = [
        {
            "source_name": slot,
            "source_table": version.table,
            "key_json": version.key_json,
            "row_json": version.row_json,
            "op": version.op,
            "valid_from": version.valid_from,
            "valid_to": version.valid_to,
            "is_current": version.is_current,
        }
        for slot, history in histories.items()
        for version in history
    ]
    return {
        "expected_current": expected_current,
        "expected_history": expected_versions,
        "commit_times": commit_times(changes),
    }
