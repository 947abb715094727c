"""A pgoutput slot's initial snapshot files (CONTRACT §1 "Initial snapshots";
docs/sources/pgoutput.md, "Initial snapshots"), taken with `psql` alone (no Python driver):

1. a replication connection (`replication=database`) creates the slot with an exported
   snapshot, `CREATE_REPLICATION_SLOT <slot> LOGICAL pgoutput (SNAPSHOT 'export')`, and stays
   open: the snapshot lives as long as that connection runs no other command;
2. a second connection reads every table the publications publish inside that snapshot
   (`BEGIN ISOLATION LEVEL REPEATABLE READ; SET TRANSACTION SNAPSHOT '<name>'`), its columns as
   the slot's Relation messages will name them (published columns, type OIDs and modifiers,
   replica identity flags) and its rows with `COPY (SELECT ...) TO STDOUT` in text format, each
   value its type's text output as pgoutput sends it;
3. each table becomes one file `<landing root>/pgoutput/<slot>/snapshot/<consistent point>/
   <schema>.<table>.jsonl`: the header line, then a line per row, COPY's escapes undone.

`take_snapshot(conninfo, slot, publications, landing_root)` does all three;
`SlotWithSnapshot` and `write_snapshot` are the two halves, for a caller that acts between the
slot's creation and the read (tests/e2e/pgoutput/ makes a transaction commit at the consistent
point).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

# The text output the slot's decoding session gives values: ISO dates in UTC, hex bytea,
# shortest-exact floats (python_udfs/pgoutput/values.py reads these).
OUTPUT_SETTINGS = {
    "datestyle": "ISO",
    "intervalstyle": "postgres",
    "timezone": "UTC",
    "bytea_output": "hex",
    "extra_float_digits": "3",
}
# COPY's text format: a backslash escapes these characters (and octal and hex byte values).
_COPY_ESCAPES = {"b": b"\b", "f": b"\f", "n": b"\n", "r": b"\r", "t": b"\t", "v": b"\v"}
_OCTAL = "01234567"
_HEX = "0123456789abcdefABCDEF"


class SnapshotError(RuntimeError):
    """psql failed, or the server answered something else than expected; the text says what."""


@dataclass(frozen=True)
class ExportedSnapshot:
    """The slot's consistent point (`X/Y`) and the name of the snapshot it exported."""

    slot: str
    consistent_point: str
    snapshot_name: str


@dataclass(frozen=True)
class Column:
    """A published column as the slot's Relation message names it."""

    name: str
    type_oid: int
    type_modifier: int
    key: bool


@dataclass(frozen=True)
class Table:
    schema: str
    name: str
    columns: tuple[Column, ...]
    # The publications' row filter (WHERE), None for every row.
    row_filter: str | None

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.name}"


# -- COPY's text format and the snapshot file's lines -------------------------------------------


def copy_text_values(line: str) -> list[str | None]:
    """One line of `COPY ... TO STDOUT` (text format, without its newline) as its values: tab
    separated, `\\N` a NULL, backslash escapes undone (as bytes, then read as UTF-8)."""
    values: list[str | None] = []
    for field in line.split("\t"):
        values.append(None if field == "\\N" else _unescaped(field))
    return values


def _unescaped(field: str) -> str:
    if "\\" not in field:
        return field
    out = bytearray()
    index = 0
    while index < len(field):
        char = field[index]
        if char != "\\" or index + 1 == len(field):
            out += char.encode()
            index += 1
            continue
        following = field[index + 1]
        if following in _OCTAL:
            digits = _run(field, index + 1, _OCTAL, 3)
            out.append(int(digits, 8) & 0xFF)
            index += 1 + len(digits)
        elif following == "x" and index + 2 < len(field) and field[index + 2] in _HEX:
            digits = _run(field, index + 2, _HEX, 2)
            out.append(int(digits, 16))
            index += 2 + len(digits)
        else:
            out += _COPY_ESCAPES.get(following, following.encode())
            index += 2
    return out.decode("utf-8")


def _run(text: str, start: int, alphabet: str, most: int) -> str:
    end = start
    while end < len(text) and end - start < most and text[end] in alphabet:
        end += 1
    return text[start:end]


def header_line(lsn: str, table: Table) -> str:
    """A snapshot file's first line: the consistent point, the table, its columns."""
    header = {
        "snapshot": {
            "lsn": lsn,
            "table": table.qualified,
            "columns": [
                {
                    "name": column.name,
                    "type_oid": column.type_oid,
                    "type_modifier": column.type_modifier,
                    "key": column.key,
                }
                for column in table.columns
            ],
        }
    }
    return json.dumps(header, ensure_ascii=False, separators=(",", ":"))


def row_line(values: Sequence[str | None]) -> str:
    return json.dumps({"values": list(values)}, ensure_ascii=False, separators=(",", ":"))


def snapshot_path(landing_root: Path, exported: ExportedSnapshot, table: Table) -> Path:
    point = exported.consistent_point.replace("/", "-")
    return (
        landing_root / "pgoutput" / exported.slot / "snapshot" / point / f"{table.qualified}.jsonl"
    )


# -- psql ---------------------------------------------------------------------------------------


def replication_conninfo(conninfo: str) -> str:
    """The connection string asking for a logical replication connection to its database."""
    if conninfo.startswith(("postgresql://", "postgres://")):
        return conninfo + ("&" if "?" in conninfo else "?") + "replication=database"
    return f"{conninfo} replication=database"


def _quoted(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class SlotWithSnapshot:
    """A pgoutput slot created with an exported snapshot over a replication connection kept
    open by a psql process: `start()` sends the command, `wait()` returns the consistent point
    and the snapshot's name once the slot exists (PostgreSQL first waits for the transactions
    running when it began), `close()` ends the connection and with it the snapshot."""

    def __init__(
        self, conninfo: str, slot: str, *, two_phase: bool = False, psql: str = "psql"
    ) -> None:
        self.slot = slot
        options = "SNAPSHOT 'export'" + (", TWO_PHASE" if two_phase else "")
        self.command = f"CREATE_REPLICATION_SLOT {_identifier(slot)} LOGICAL pgoutput ({options});"
        self.process = subprocess.Popen(
            [psql, "-X", "-q", "-A", "-t", "-F", "\t", "-v", "ON_ERROR_STOP=1",
             "-d", replication_conninfo(conninfo)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )  # fmt: skip
        self.exported: ExportedSnapshot | None = None

    def __enter__(self) -> SlotWithSnapshot:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> None:
        stdin = self._stdin()
        stdin.write(self.command + "\n")
        stdin.flush()

    def wait(self) -> ExportedSnapshot:
        """The created slot's consistent point and snapshot; blocks until PostgreSQL answers."""
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        fields = line.rstrip("\n").split("\t")
        if len(fields) != 4:
            self.process.kill()
            error = self.process.stderr.read() if self.process.stderr else ""
            raise SnapshotError(f"{self.command} failed: {(error or line).strip()}")
        slot, consistent_point, snapshot_name, _plugin = fields
        self.exported = ExportedSnapshot(slot, consistent_point, snapshot_name)
        return self.exported

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self._stdin().close()
                self.process.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def _stdin(self) -> IO[str]:
        assert self.process.stdin is not None
        return self.process.stdin


# The published tables' columns as Relation messages name them: not dropped, not generated,
# in a publication's column list; key flags of the replica identity (FULL: every column;
# DEFAULT: the primary key; INDEX: that index; NOTHING: none).
_COLUMNS_QUERY = """
select n.nspname, c.relname, a.attname, a.atttypid, a.atttypmod,
    case c.relreplident
        when 'f' then true
        when 'n' then false
        when 'i' then coalesce(a.attnum = any(ri.indkey::int2[]), false)
        else coalesce(a.attnum = any(pk.indkey::int2[]), false)
    end,
    pt.pubname, pt.rowfilter
from pg_publication_tables pt
join pg_namespace n on n.nspname = pt.schemaname
join pg_class c on c.relnamespace = n.oid and c.relname = pt.tablename
join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
    and a.attgenerated = '' and a.attname = any(pt.attnames)
left join pg_index pk on pk.indrelid = c.oid and pk.indisprimary
left join pg_index ri on ri.indrelid = c.oid and ri.indisreplident
where pt.pubname = any({publications})
order by n.nspname, c.relname, a.attnum
"""


def write_snapshot(
    conninfo: str,
    exported: ExportedSnapshot,
    publications: Sequence[str],
    landing_root: Path,
    *,
    psql: str = "psql",
) -> list[Path]:
    """Every table `publications` publish, read inside the exported snapshot and written as a
    snapshot file (a hidden temporary name until it is whole); the files, in table order."""
    with tempfile.TemporaryDirectory(prefix="cdcw-pg-snapshot-") as scratch:
        work = Path(scratch)
        names = "array[" + ", ".join(_quoted(p) for p in publications) + "]::text[]"
        columns_query = _COLUMNS_QUERY.format(publications=names)
        _in_snapshot(conninfo, exported, [_copy(columns_query, work / "columns")], psql)
        tables = _tables(work / "columns")
        _in_snapshot(
            conninfo,
            exported,
            [_copy(_table_query(table), work / f"{index}.copy") for index, table in
             enumerate(tables)],
            psql,
        )  # fmt: skip
        return [
            _write_file(work / f"{index}.copy", exported, table, landing_root)
            for index, table in enumerate(tables)
        ]


def take_snapshot(
    conninfo: str,
    slot: str,
    publications: Sequence[str],
    landing_root: Path,
    *,
    two_phase: bool = False,
    psql: str = "psql",
) -> tuple[ExportedSnapshot, list[Path]]:
    """Create the slot with an exported snapshot and write its snapshot files."""
    with SlotWithSnapshot(conninfo, slot, two_phase=two_phase, psql=psql) as creating:
        creating.start()
        exported = creating.wait()
        return exported, write_snapshot(conninfo, exported, publications, landing_root, psql=psql)


def _copy(query: str, target: Path) -> str:
    """A psql `\\copy` of the query's rows to a client-side file (one line: psql's rule)."""
    one_line = " ".join(query.split())
    return f"\\copy ({one_line}) to {_quoted(str(target))}"


def _table_query(table: Table) -> str:
    columns = ", ".join(_identifier(column.name) for column in table.columns)
    source = f"{_identifier(table.schema)}.{_identifier(table.name)}"
    where = f" where {table.row_filter}" if table.row_filter else ""
    return f"select {columns} from {source}{where}"


def _in_snapshot(conninfo: str, exported: ExportedSnapshot, commands: list[str], psql: str) -> None:
    """Run psql commands in one transaction that reads the exported snapshot."""
    settings = "".join(f"set local {name} = {_quoted(value)};\n" for name, value in
                       OUTPUT_SETTINGS.items())  # fmt: skip
    script = (
        "begin isolation level repeatable read;\n"
        f"set transaction snapshot {_quoted(exported.snapshot_name)};\n"
        f"{settings}" + "\n".join(commands) + "\ncommit;\n"
    )
    done = subprocess.run(
        [psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", conninfo, "-f", "-"],
        input=script,
        text=True,
        encoding="utf-8",
        capture_output=True,
        env={**os.environ, "PGCLIENTENCODING": "UTF8"},
        check=False,
    )
    if done.returncode != 0:
        raise SnapshotError(
            f"reading snapshot {exported.snapshot_name} failed: {done.stderr.strip()}"
        )


def _tables(columns_file: Path) -> list[Table]:
    """The published tables from the columns query's rows: a table published with a row filter
    by every publication keeps their filters (any one lets a row through)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for line in _lines(columns_file):
        schema, name, column, type_oid, modifier, key, publication, row_filter = copy_text_values(
            line
        )
        assert schema is not None and name is not None and column is not None
        table = found.setdefault((schema, name), {"columns": {}, "filters": {}})
        table["columns"].setdefault(
            column, Column(column, int(type_oid or 0), int(modifier or -1), key == "t")
        )
        table["filters"][publication] = row_filter
    tables = []
    for (schema, name), table in found.items():
        filters = list(table["filters"].values())
        row_filter = None if None in filters else " or ".join(f"({f})" for f in filters)
        tables.append(Table(schema, name, tuple(table["columns"].values()), row_filter))
    return tables


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", newline="\n") as lines:
        for line in lines:
            yield line.removesuffix("\n")


def _write_file(copied: Path, exported: ExportedSnapshot, table: Table, landing_root: Path) -> Path:
    target = snapshot_path(landing_root, exported, table)
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.partial")
    with staged.open("w", encoding="utf-8") as out:
        out.write(header_line(exported.consistent_point, table) + "\n")
        for line in _lines(copied):
            out.write(row_line(copy_text_values(line)) + "\n")
    staged.rename(target)
    return target


def main(
    argv: Sequence[str] | None = None,
    prog: str = "python -m cdc_warehouse.pg_snapshot",
    default_landing_root: Path | None = None,
) -> int:
    """`cdcw pg-snapshot CONNINFO SLOT PUBLICATION[,...] [LANDING_ROOT] [--two-phase]` (or
    `python -m cdc_warehouse.pg_snapshot ...`): create the slot and write its snapshot files.
    Through `cdcw` the landing root defaults to the warehouse's (CDC_LANDING_ROOT)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="create a pgoutput slot with an exported snapshot and write its snapshot files",
    )
    parser.add_argument("conninfo", help="libpq connection string or URI of the database")
    parser.add_argument("slot")
    parser.add_argument("publications", help="comma-separated publication names")
    parser.add_argument(
        "landing_root",
        type=Path,
        nargs="?" if default_landing_root is not None else None,
        default=default_landing_root,
        help="the landing root"
        + (f" (default {default_landing_root})" if default_landing_root is not None else ""),
    )
    parser.add_argument("--two-phase", action="store_true", help="a two-phase slot")
    parser.add_argument("--psql", default="psql", help="the psql binary")
    args = parser.parse_args(argv)
    try:
        exported, files = take_snapshot(
            args.conninfo,
            args.slot,
            args.publications.split(","),
            args.landing_root,
            two_phase=args.two_phase,
            psql=args.psql,
        )
    except (SnapshotError, OSError) as exc:
        print(f"{prog}: {exc}")
        return 1
    print(f"slot {exported.slot} at {exported.consistent_point}: {len(files)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
