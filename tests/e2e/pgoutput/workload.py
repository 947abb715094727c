"""A scripted workload against a real PostgreSQL 15, captured as pgoutput landing files in waves.

`run_workload(pg)` creates the tables and a publication, fills them (TOASTed values too), creates
two slots with exported snapshots over replication connections and writes each slot's snapshot
files (cdc_warehouse/pg_snapshot.py), then runs five waves. The first slot's creation makes a
transaction commit exactly at its consistent point: still running when the slot became
consistent, so not in its snapshot, and decoded with its commit LSN equal to the snapshot's. Each
wave runs some SQL (one connection for short transactions, a second, long-lived psql session for a
transaction kept open across waves), reads both slots once (each read is a new decoding session)
and records the database's own current state. It returns one dict per wave:

    {"number": 3, "name": "w3_open_streamed",
     "files": {"pgoutput/cdc_v2/wave_03.jsonl": b"...", "pgoutput/cdc_v3/wave_03.jsonl": b"..."},
     "db_state": {"public.docs": [{"id": "1", "title": "...", ...}, ...], ...}}

db_state rows hold PostgreSQL's text output of every column (None for NULL), ordered by key; it is
the truth after that wave for what a warehouse fed with all files so far must hold as current state.

Each wave also holds the same truth in the warehouse's own terms (truth.py), for every
slot with files landed so far (both slots see the same committed data):

    "expected_current": [{"source_name": "cdc_v2", "source_table": "public.docs",
                          "key_json": '{"id":1}', "row_json": '{"body":"...","id":1,...}'}, ...]
    "expected_history": [{..same four.., "op": "insert" | "update", "valid_from": datetime (UTC),
                          "valid_to": datetime | None, "is_current": bool}, ...]
    "commit_times":     {xid: datetime (UTC)}  (pg_xact_commit_timestamp of each transaction that
                         changed a published table; equals pgoutput's commit timestamp)

History comes from an audit trail written by triggers (schema cdc_audit, not published), so rolled
back (sub)transactions and not yet committed ones are absent exactly as in the database; valid_from
/ valid_to are commit timestamps. Keys: TABLE_KEYS (= the primary keys); the pipeline must be told
DECLARED_KEYS in its table settings (TABLES_YAML), since pgoutput flags every column of the REPLICA
IDENTITY FULL table as key.

Slots: `cdc_v2` is read with proto_version 2, streaming on (no two-phase: a prepared transaction
arrives at COMMIT PREPARED as an ordinary transaction); `cdc_v3` is a two-phase slot read with
proto_version 3, streaming on, two_phase on. Both pass 'messages' 'on'.

What happens, wave by wave (both slots see the same changes after their snapshots):
  w0  before the slots: rows in docs (TOASTed bodies), full_rows, pairs, typed, scratch; then
      cdc_v2 is created while transactions run (two that commit before its consistent point,
      one at it: an update of a TOASTed row, its body unchanged), cdc_v3 after them; each
      slot's snapshot files land with the first wave.
  w1  inserts into every table (TOASTed text, many types, an enum -> Type message), a transactional
      and a non-transactional logical message, a transaction with a replication origin.
  w2  updates that leave the TOASTed column unchanged ('u'), of keys from the snapshot too,
      primary key changes with the TOASTed column unchanged (one of a snapshot's key; one the
      first of a chain of four, continued in w3 and w4), a delete of a snapshot's key,
      REPLICA IDENTITY FULL updates/deletes, composite key changes, deletes, TRUNCATE, a large
      committed transaction (streamed), a large aborted one (streamed, then Stream Abort),
      PREPARE + COMMIT PREPARED, PREPARE + ROLLBACK PREPARED.
  w3  a large transaction opened in the second session and left OPEN (streamed, not committed),
      a savepoint inside it with more rows, a small transaction PREPAREd and left prepared, a large
      transaction PREPAREd and left prepared, small transactions interleaved, the chain's second
      key change.
  w4  ROLLBACK TO SAVEPOINT in the open transaction, more rows in it (so it is streamed again from
      its start), the small prepared transaction committed, interleaved small transactions, the
      chain's last two key changes.
  w5  a few more rows and COMMIT of the open transaction; COMMIT PREPARED of the large prepared
      one; a final small transaction.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cdc_warehouse.pg_snapshot import ExportedSnapshot, SlotWithSnapshot, write_snapshot
from tests.e2e.pgoutput.pgoutput_capture import landing_bytes, read_slot
from tests.e2e.pgoutput.truth import expected_rows, install_audit
from tests.e2e.waves import write_wave
from tests.postgres import LocalPostgres, PostgresError, PsqlSession

PUBLICATION = "cdc_pub"
SLOTS: dict[str, dict[str, Any]] = {
    "cdc_v2": {"proto_version": 2, "two_phase": False},
    "cdc_v3": {"proto_version": 3, "two_phase": True},
}
# Keys the warehouse should use (public.full_rows is REPLICA IDENTITY FULL: pgoutput flags every
# column of it as key, so its key has to be declared in the table settings).
TABLE_KEYS: dict[str, list[str]] = {
    "public.docs": ["id"],
    "public.full_rows": ["id"],
    "public.pairs": ["region", "seq"],
    "public.typed": ["id"],
    "public.bulk": ["id"],
    "public.scratch": ["id"],
}
# The published tables (the publication lists them: the harness's audit schema stays unpublished).
PUBLISHED_TABLES = list(TABLE_KEYS)
# Keys the pipeline cannot take from pgoutput's Relation key flags and must be given in the table
# settings file (CDC_TABLES): REPLICA IDENTITY FULL flags every column as key.
DECLARED_KEYS: dict[str, list[str]] = {"public.full_rows": ["id"]}
TABLES_YAML = "tables:\n" + "".join(
    f"  - {{source_system: pgoutput, source_table: {table}, primary_key: [{', '.join(key)}]}}\n"
    for table, key in DECLARED_KEYS.items()
)
# Values of bulk.batch that must never reach current state or history.
NEVER_COMMITTED_BATCHES = ("w2-aborted", "open-rolledback", "w2-rolled-back-prepared")
ROLLED_BACK_TO_SAVEPOINT_BATCH = "open-rolledback"
OPEN_TRANSACTION_BATCHES = ("open-part1", "open-part2", "open-part3")
MESSAGE_PREFIX = "cdc-test"


def toast_value(seed: str, blocks: int = 200) -> str:
    """~6.4 kB of hex, deterministic and incompressible enough for pglz: stored out of line."""
    return (
        f"(select string_agg(md5({_q(seed)} || ':' || g), '') from generate_series(1, {blocks}) g)"
    )


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def bulk_insert(batch: str, first_id: int, count: int) -> str:
    """One INSERT of `count` bulk rows (~120 bytes each); 2000 rows exceed 64kB of decoding
    memory several times over, so the transaction is streamed in blocks."""
    return (
        "insert into bulk (id, batch, pad) "
        f"select g, {_q(batch)}, repeat(md5(g::text), 3) "
        f"from generate_series({first_id}, {first_id + count - 1}) g;"
    )


SCHEMA = f"""
create type mood as enum ('sad', 'ok', 'happy');

create table docs (
    id int primary key,
    title text not null,
    body text,
    revision int not null default 1
);
alter table docs alter column body set storage external;

create table full_rows (
    id int primary key,
    label text,
    amount numeric(12, 2)
);
alter table full_rows replica identity full;

create table pairs (
    region text not null,
    seq int not null,
    qty int,
    primary key (region, seq)
);

create table typed (
    id bigint primary key,
    c_int2 smallint,
    c_int4 integer,
    c_int8 bigint,
    c_numeric numeric,
    c_float8 double precision,
    c_bool boolean,
    c_text text,
    c_varchar varchar(40),
    c_bytea bytea,
    c_date date,
    c_ts timestamp,
    c_tstz timestamptz,
    c_uuid uuid,
    c_json json,
    c_jsonb jsonb,
    c_int_arr int[],
    c_text_arr text[],
    c_mood mood
);

create table bulk (
    id int primary key,
    batch text not null,
    pad text
);

create table scratch (
    id int primary key,
    note text
);

create publication {PUBLICATION} for table docs, full_rows, pairs, typed, bulk, scratch;
"""

# Before the slots exist: what their snapshots hold.
W0 = f"""
insert into docs (id, title, body) values
    (7, 'seventh, before the slot', {toast_value("doc-7")}),
    (8, 'eighth, before the slot', {toast_value("doc-8")});
insert into full_rows values (4, 'four', 4.00);
insert into pairs values ('pre', 1, 5), ('pre', 2, 6);
insert into typed (id, c_int8, c_numeric, c_text, c_tstz, c_jsonb, c_text_arr, c_mood) values
    (5, 9007199254740993, 0.10, 'tab\tand newline\nand backslash \\ here',
     '2024-01-31 23:59:59.5+01', '{{"b": [1, null]}}', '{{"x y", NULL}}', 'ok');
insert into scratch values (100, 'before the slot'), (101, 'before the slot, too');
"""

W1 = f"""
insert into docs (id, title, body) values
    (1, 'first', {toast_value("doc-1")}),
    (2, 'second', {toast_value("doc-2")}),
    (3, 'third', {toast_value("doc-3")}),
    (4, 'small', 'short body'),
    (6, 'sixth', {toast_value("doc-6")});

insert into full_rows values (1, 'one', 10.50), (2, 'two', 20.00), (3, 'three', null);

insert into pairs values ('eu', 1, 10), ('eu', 2, 20), ('us', 1, 30);

insert into typed values
    (1, 32767, 2147483647, 9007199254740993,
     123456789012345678901234567890.123456789012345678901, 'NaN', true,
     'héllo, "quoted" \\ backslash', 'varchar value', '\\x00ff10',
     '2024-02-29', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.654321+02',
     'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '{{"a": [1, 2.50, null], "b": "x"}}',
     '{{"z": 1, "a": {{"n": 12345678901234567890}}}}',
     '{{1, NULL, 3}}', '{{"a", NULL, "c,d", "NULL"}}', 'happy'),
    (2, -32768, -2147483648, -9223372036854775808, -0.000000000000000000001, 'Infinity', false,
     '', '', '\\x', '0001-01-01', '1970-01-01 00:00:00', '1999-12-31 23:59:59.999999+00',
     '00000000-0000-0000-0000-000000000000', 'null', '[]', '{{}}', '{{}}', 'sad'),
    (3, null, null, 9223372036854775807, 1e-30, '-Infinity', null, null, null, null, null,
     null, null, null, null, null, '{{NULL}}', '{{NULL}}', null),
    (4, 0, 0, 0, 0, 1.7976931348623157e308, true, 'line1
line2', 'x', '\\xdeadbeef', '2100-12-31', '2100-12-31 23:59:59', '2100-12-31 23:59:59+00',
     'ffffffff-ffff-ffff-ffff-ffffffffffff', '"just a string"', '3.14', '{{-1, 0, 1}}',
     '{{" spaced ", ""}}', 'ok');

insert into scratch values (1, 'to be truncated'), (2, 'also truncated');

begin;
insert into scratch values (3, 'with a transactional message');
select pg_logical_emit_message(true, {_q(MESSAGE_PREFIX)}, 'transactional content') is not null;
commit;

select pg_logical_emit_message(false, {_q(MESSAGE_PREFIX)}, 'non-transactional content')
    is not null;

select pg_replication_origin_create('upstream_origin') is not null;
select pg_replication_origin_session_setup('upstream_origin');
begin;
select pg_replication_origin_xact_setup('0/ABCDEF', '2024-01-01 00:00:00+00');
insert into pairs values ('origin', 1, 1);
commit;
select pg_replication_origin_session_reset();
"""

W2 = f"""
-- TOASTed body untouched -> 'u' in the new tuple.
update docs set title = 'first, retitled', revision = revision + 1 where id = 1;
-- Primary key change, body untouched.
update docs set id = 20, title = 'second, new key' where id = 2;
-- The first of a chain of primary key changes, body untouched all along (waves 2 to 4).
update docs set id = 60, title = 'sixth, second key' where id = 6;
delete from docs where id = 3;
update docs set body = {toast_value("doc-4-new")} where id = 4;
-- The same for a row of the snapshot, then its key changed: the body comes from the snapshot.
update docs set revision = revision + 1 where id = 8;
update docs set id = 80, title = 'eighth, new key' where id = 8;
delete from pairs where region = 'pre' and seq = 2;
update full_rows set label = 'four, after the slot' where id = 4;
update typed set c_text = 'after the slot' where id = 5;

update full_rows set amount = 11.75 where id = 1;
update full_rows set label = 'three', amount = 3.00 where id = 3;
delete from full_rows where id = 2;

update pairs set qty = qty + 1 where region = 'eu' and seq = 1;
update pairs set seq = 3 where region = 'eu' and seq = 2;
update pairs set region = 'apac' where region = 'us' and seq = 1;

update typed set c_text = 'changed', c_int_arr = array[7, null]::int[],
    c_numeric = c_numeric + 1, c_float8 = -0.0, c_jsonb = c_jsonb || '{{"k": true}}'
    where id = 1;
update typed set c_bool = true, c_text = 'now set', c_tstz = '2020-06-01 12:00:00+05:30'
    where id = 3;
delete from typed where id = 2;

truncate scratch;
insert into scratch values (10, 'after truncate');

-- Several changes of one key in one transaction.
begin;
insert into full_rows values (5, 'five', 5);
update full_rows set amount = 55 where id = 5;
update full_rows set label = 'five!' where id = 5;
commit;

-- A large committed transaction: streamed.
begin;
{bulk_insert("w2-committed", 1, 2000)}
update bulk set pad = 'updated in same tx' where id between 1 and 5;
delete from bulk where id = 6;
commit;

-- A large aborted transaction: streamed, then Stream Abort.
begin;
{bulk_insert("w2-aborted", 100001, 2000)}
rollback;

-- Two-phase: committed and rolled back.
begin;
insert into pairs values ('2pc', 1, 100);
update docs set title = 'first, via 2pc' where id = 1;
prepare transaction 'gid_commit';
commit prepared 'gid_commit';

begin;
insert into bulk values (900001, 'w2-rolled-back-prepared', 'x');
delete from pairs where region = 'eu' and seq = 1;
prepare transaction 'gid_rollback';
rollback prepared 'gid_rollback';
"""

W3_OPEN = f"""
begin;
{bulk_insert("open-part1", 10001, 1500)}
update docs set title = 'first, inside the open tx' where id = 1;
select pg_logical_emit_message(true, {_q(MESSAGE_PREFIX)}, 'inside the open tx') is not null;
savepoint sp1;
{bulk_insert("open-rolledback", 20001, 1000)}
"""

W3_MAIN = f"""
-- The chain's second key change: 600 takes the body 60 took from 6.
update docs set id = 600 where id = 60;
insert into pairs values ('eu', 10, 1);
begin;
insert into bulk values (700001, 'w3-prepared-small', 'p');
update pairs set qty = 99 where region = 'eu' and seq = 10;
prepare transaction 'gid_late';
update typed set c_int4 = c_int4 - 1 where id = 1;
begin;
{bulk_insert("w3-prepared-large", 30001, 1500)}
prepare transaction 'gid_big';
insert into scratch values (11, 'interleaved in w3');
"""

W4_OPEN = f"""
rollback to savepoint sp1;
{bulk_insert("open-part2", 40001, 1200)}
"""

W4_MAIN = """
-- Two more key changes of the chain in one run: 6001's body is still 6's.
update docs set id = 6000, title = 'sixth, fourth key' where id = 600;
update docs set id = 6001 where id = 6000;
insert into pairs values ('eu', 11, 2);
commit prepared 'gid_late';
update full_rows set label = 'one, w4' where id = 1;
"""

W5_OPEN = f"""
{bulk_insert("open-part3", 50001, 10)}
delete from bulk where id = 10001;
commit;
"""

W5_MAIN = f"""
commit prepared 'gid_big';
delete from docs where id = 4;
insert into scratch values (12, 'final');
select pg_logical_emit_message(false, {_q(MESSAGE_PREFIX)}, 'last word') is not null;
insert into pairs values ('eu', 12, 3);
"""


def column_catalog(pg: LocalPostgres) -> list[dict[str, Any]]:
    """Each published table's columns as the catalog types them: the type's name and kind
    (`typtype`: b base, e enum), its OID and the column's type modifier, and format_type's
    spelling."""
    names = ", ".join(f"'{table}'::regclass" for table in TABLE_KEYS)
    rows = pg.sql(
        "select a.attrelid::regclass::text, a.attname, t.typname, t.typtype, a.atttypid, "
        "a.atttypmod, format_type(a.atttypid, a.atttypmod) from pg_attribute a "
        f"join pg_type t on t.oid = a.atttypid where a.attrelid in ({names}) "
        "and a.attnum > 0 and not a.attisdropped"
    )
    return [
        {
            "table": table if "." in table else f"public.{table}",
            "column": column,
            "type_name": type_name,
            "type_kind": type_kind,
            "type_oid": int(oid),
            "type_modifier": int(modifier),
            "formatted": formatted,
        }
        for table, column, type_name, type_kind, oid, modifier, formatted in rows
    ]


def db_state(pg: LocalPostgres) -> dict[str, list[dict[str, str | None]]]:
    """Every public table's rows, ordered by primary key, values as PostgreSQL text output."""
    state: dict[str, list[dict[str, str | None]]] = {}
    for table, keys in TABLE_KEYS.items():
        schema, name = table.split(".")
        columns = [
            row[0]
            for row in pg.sql(
                "select attname from pg_attribute "
                f"where attrelid = '{schema}.{name}'::regclass and attnum > 0 "
                "and not attisdropped order by attnum"
            )
        ]
        pairs = ", ".join(f"'{column}', {column}::text" for column in columns)
        order = ", ".join(keys)
        rows = pg.sql(f"select json_build_object({pairs})::text from {table} order by {order}")
        state[table] = [json.loads(row[0]) for row in rows]
    return state


def settle(pg: LocalPostgres, timeout: float = 10.0) -> None:
    """Wait until all WAL written so far is flushed (slot reads decode only flushed WAL)."""
    target = pg.value("select pg_current_wal_insert_lsn()")
    deadline = time.monotonic() + timeout
    while True:
        if pg.value(f"select pg_current_wal_flush_lsn() >= '{target}'::pg_lsn") == "t":
            return
        if time.monotonic() > deadline:
            raise PostgresError(f"WAL not flushed up to {target} after {timeout}s")
        time.sleep(0.05)


def transaction_id(session: PsqlSession) -> str:
    """The id of the transaction open in `session` (assigned by then)."""
    [xid] = session.run("select txid_current();")
    return xid


def wait_until_waiting_for(pg: LocalPostgres, xid: str, timeout: float = 60.0) -> None:
    """Until a backend (the walsender creating a slot) waits for transaction `xid` to end."""
    deadline = time.monotonic() + timeout
    query = (
        "select count(*) from pg_locks where locktype = 'transactionid' "
        f"and transactionid::text = '{xid}' and not granted"
    )
    while pg.value(query) == "0":
        if time.monotonic() > deadline:
            raise PostgresError(f"nothing waits for transaction {xid} after {timeout}s")
        time.sleep(0.05)


@dataclass(frozen=True)
class SlotSnapshot:
    """A slot's exported snapshot: its files (landing path -> bytes), and the audit rows it
    holds (the truth's changes before the slot's log)."""

    exported: ExportedSnapshot
    files: dict[str, bytes]
    audit_seqs: frozenset[int]


def snapshot_files(pg: LocalPostgres, exported: ExportedSnapshot) -> SlotSnapshot:
    """The slot's snapshot files as an operator takes them, and the audit rows the snapshot
    holds, read while the slot's replication connection keeps it alive."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        written = write_snapshot(
            pg.conninfo(), exported, [PUBLICATION], root, psql=str(pg.bindir / "psql")
        )
        files = {str(path.relative_to(root)): path.read_bytes() for path in written}
    with pg.session() as reader:
        [seqs] = reader.run(
            "begin isolation level repeatable read;\n"
            f"set transaction snapshot '{exported.snapshot_name}';\n"
            "select coalesce(string_agg(seq::text, ','), '') from cdc_audit.changes;\n"
            "commit;"
        )
    return SlotSnapshot(exported, files, frozenset(int(seq) for seq in seqs.split(",") if seq))


def create_slots(pg: LocalPostgres) -> dict[str, SlotSnapshot]:
    """Both slots, each created over a replication connection with an exported snapshot.

    cdc_v2 is created while transactions run. PostgreSQL waits for the transactions running
    when it starts (b), then for those running at its next step (d), and becomes consistent
    at the running-transactions record it writes once d has ended; a transaction that started
    after that step (e) does not hold it back, is not in its snapshot, and its commit, the next
    WAL record, starts exactly at the consistent point: the slot decodes it."""
    psql = str(pg.bindir / "psql")
    found: dict[str, SlotSnapshot] = {}
    with pg.session() as b, pg.session() as d, pg.session() as e:
        b.run("begin; insert into scratch values (900, 'committed before the slot');")
        b_xid = transaction_id(b)
        with SlotWithSnapshot(pg.conninfo(), "cdc_v2", psql=psql) as creating:
            creating.start()
            wait_until_waiting_for(pg, b_xid)
            d.run("begin; insert into scratch values (901, 'committed while it is created');")
            d_xid = transaction_id(d)
            b.run("commit;")
            wait_until_waiting_for(pg, d_xid)
            e.run("begin; update docs set title = 'seventh, at the consistent point' where id = 7;")
            d.run("commit;")
            exported = creating.wait()
            e.run("commit;")
            found["cdc_v2"] = snapshot_files(pg, exported)
    with SlotWithSnapshot(pg.conninfo(), "cdc_v3", two_phase=True, psql=psql) as creating:
        creating.start()
        found["cdc_v3"] = snapshot_files(pg, creating.wait())
    return found


def run_workload(pg: LocalPostgres) -> list[dict[str, Any]]:
    pg.sql(SCHEMA)
    tables = install_audit(pg, PUBLISHED_TABLES, TABLE_KEYS)
    pg.sql(W0)
    snapshots = create_slots(pg)
    audit_before = {slot: snapshot.audit_seqs for slot, snapshot in snapshots.items()}

    waves: list[dict[str, Any]] = []
    open_tx = pg.session()
    try:

        def wave(name: str, *steps: Callable[[], object]) -> None:
            for step in steps:
                step()
            settle(pg)
            number = len(waves) + 1
            files = {}
            if number == 1:
                for snapshot in snapshots.values():
                    files.update(snapshot.files)
            for slot, options in SLOTS.items():
                lines = read_slot(pg, slot, PUBLICATION, **options)
                if lines:
                    files[f"pgoutput/{slot}/wave_{number:02d}.jsonl"] = landing_bytes(lines)
            landed = [*(path for earlier in waves for path in earlier["files"]), *files]
            slots = sorted({Path(path).parts[1] for path in landed})  # pgoutput/<slot>/...
            waves.append(
                {
                    "number": number,
                    "name": name,
                    "files": files,
                    "db_state": db_state(pg),
                    **expected_rows(pg, tables, {slot: audit_before[slot] for slot in slots}),
                }
            )

        wave("w1_initial", lambda: pg.sql(W1))
        waves[0]["column_catalog"] = column_catalog(pg)
        waves[0]["consistent_points"] = {
            slot: snapshot.exported.consistent_point for slot, snapshot in snapshots.items()
        }
        wave("w2_updates_streams_2pc", lambda: pg.sql(W2))
        wave(
            "w3_open_streamed",
            lambda: open_tx.run(W3_OPEN),
            lambda: pg.sql(W3_MAIN),  # ends with a commit: flushes the open tx's WAL as well
        )
        wave(
            "w4_rollback_to_savepoint",
            lambda: open_tx.run(W4_OPEN),
            lambda: pg.sql(W4_MAIN),
        )
        wave(
            "w5_commit",
            lambda: open_tx.run(W5_OPEN),
            lambda: pg.sql(W5_MAIN),
        )
    finally:
        open_tx.close()
    return waves


def land_wave(landing_root: Path | str, wave: dict[str, Any]) -> list[Path]:
    """Write one wave's files under the landing root (as a new run's arrivals would be)."""
    return write_wave(landing_root, wave["files"])


SAMPLE_SLOT = "cdc_v3"


def write_sample(landing_root: Path) -> list[Path]:
    """The bundled sample's pgoutput files: one slot's waves and snapshot, from a fresh
    server (`python -m tests.e2e.pgoutput.workload <landing root>`)."""
    with tempfile.TemporaryDirectory() as scratch, LocalPostgres(scratch) as pg:
        waves = run_workload(pg)
    prefix = f"pgoutput/{SAMPLE_SLOT}/"
    return [
        path
        for wave in waves
        for path in write_wave(
            landing_root,
            {name: data for name, data in wave["files"].items() if name.startswith(prefix)},
        )
    ]


if __name__ == "__main__":
    import sys

    print(f"wrote {len(write_sample(Path(sys.argv[1])))} files")
