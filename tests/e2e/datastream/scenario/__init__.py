"""Deterministic Datastream landing files, delivered in waves, for the end-to-end test.

Seven streams, one per Datastream source (MySQL, Oracle, PostgreSQL, SQL Server, Spanner,
Salesforce, MongoDB), each under ``datastream/<stream>/<object>/YYYY/MM/DD/HH/MM/``. The events
follow the documented Datastream event shape (generic metadata, source-specific
``source_metadata``, full-row ``payload``) and are built to exercise the contract's traps:
backfill interleaved with CDC, out-of-order and late arrival, position orders where string order
is wrong, duplicates at every level, transactions, no-op changes, value typing, Avro files and bad
input. ``build_scenario()`` gives the waves and which trap sits in which wave and file.

One module per source (``mysql``, ``mysql_products`` in Avro, ``oracle_db``, ``postgres``,
``sqlserver``, ``spanner``, ``salesforce``, ``mongodb``) holds a table of the files it lands,
one row per event, and the builder that turns a row into an event (a trap that needs an event no
row can describe keeps its own code); ``events`` holds what they share.

Usage: ``python -m tests.e2e.datastream.scenario write-sample <landing root>`` writes all waves.
"""

from __future__ import annotations

from tests.e2e.waves import Scenario

from . import (
    mongodb,
    mysql,
    mysql_products,
    oracle_db,
    postgres,
    salesforce,
    spanner,
    sqlserver,
)
from .events import _Wave
from .oracle_db import ORACLE_DB_KEY, ORACLE_DB_TABLE, declared_keys, declared_tables_yaml

__all__ = [
    "ORACLE_DB_KEY",
    "ORACLE_DB_TABLE",
    "build_scenario",
    "declared_keys",
    "declared_tables_yaml",
]


# The sources in the order each wave adds their files and notes.
SOURCES = (mysql, mysql_products, oracle_db, postgres, sqlserver, spanner, salesforce, mongodb)


def build_scenario() -> Scenario:
    """The scenario's three waves and their coverage:
    1. initial backfills and the first CDC, one malformed line, Avro backfill + CDC;
    2. more CDC, backfill landing after newer CDC, PK change, bad input;
    3. late events, late backfills, deletes, Avro duplicate, corrupt Avro, re-landed file."""
    waves = [_Wave(number) for number in (1, 2, 3)]
    for w in waves:
        for source in SOURCES:
            source.land_wave(w)
    return Scenario([w.files() for w in waves], [note for w in waves for note in w.coverage])
