"""The pgoutput snapshot writer's pure parts (cdc_warehouse/pg_snapshot.py): COPY's text format
read back, and the lines it writes, which the family's snapshot decoder reads as the rows of the
table the header names (the psql parts run against a real PostgreSQL in tests/e2e/pgoutput/)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cdc_warehouse.pg_snapshot import (
    Column,
    Table,
    copy_text_values,
    header_line,
    replication_conninfo,
    row_line,
)
from python_udfs.pgoutput.snapshot import snapshot_header, snapshot_row


def copy_text(value: str | None) -> str:
    """A value as COPY's text format writes it."""
    if value is None:
        return "\\N"
    escapes = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r", "\b": "\\b", "\f": "\\f",
               "\v": "\\v"}  # fmt: skip
    return "".join(escapes.get(char, char) for char in value)


@given(st.lists(st.one_of(st.none(), st.text()), min_size=1, max_size=5))
def test_copy_text_read_back_is_the_values(values):
    assert copy_text_values("\t".join(copy_text(value) for value in values)) == values


@pytest.mark.parametrize(
    ("line", "values"),
    [
        ("a\\101b", ["aAb"]),  # octal
        ("\\x41\\x4", ["A\x04"]),  # hex, one or two digits
        ("\\\\N\t\\N", ["\\N", None]),  # an escaped backslash before N is text
        ("caf\\303\\251", ["café"]),  # bytes of UTF-8
        ("\\q", ["q"]),  # any other escaped character is itself
        ("", [""]),
    ],
)
def test_copy_text_escapes(line, values):
    assert copy_text_values(line) == values


def test_the_lines_written_read_as_the_tables_rows():
    table = Table(
        "public",
        "docs",
        (
            Column("id", 23, -1, True),
            Column("body", 25, -1, False),
            Column("n", 1700, 655366, False),
        ),
        None,
    )
    header = snapshot_header(header_line("1/6B374D48", table), "slot")
    assert header["error"] is None and header["source_table"] == "public.docs"
    assert json.loads(header["header_json"])["columns"] == [
        ["id", 23, True], ["body", 25, False], ["n", 1700, False]
    ]  # fmt: skip
    row = snapshot_row(
        (row_line(copy_text_values("7\tline\\none\t\\N")), header["header_json"]), "slot"
    )
    assert row["row_image"] == {"id": "7", "body": '"line\\none"', "n": "null"}


@pytest.mark.parametrize(
    ("conninfo", "replication"),
    [
        ("host=db dbname=app", "host=db dbname=app replication=database"),
        ("postgresql://db/app", "postgresql://db/app?replication=database"),
        (
            "postgres://db/app?sslmode=require",
            "postgres://db/app?sslmode=require&replication=database",
        ),
    ],
)
def test_a_replication_connection_asks_for_its_database(conninfo, replication):
    assert replication_conninfo(conninfo) == replication
