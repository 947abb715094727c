"""The one protocol every family's decoding implements (docs/decisions/013): a unit of input,
the name of the source it came from and the family's settings in; rows out, each a change-log
row (`CHANGE_COLUMNS` of python_udfs/change_log.py plus the family's extra columns) or, for
what cannot be used, a row whose `error` is the quarantine reason.

A family decodes in one stage or more (python_udfs/families.py names them). The first stage's
unit is a landed line; pgoutput's is the line and whether it lies inside a streamed block, which
only the line's place in the slot's log tells (SQL computes it), and its rows are messages, not
changes: the SQL applies the slot-log rule to them, and the second stage's unit is one message
of a committed transaction, decoded into change-log rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from python_udfs.table_settings import KeyLookup

# A decoded row: a field of the stage's columns to its value (a missing field is NULL).
Row = dict[str, Any]

Unit = TypeVar("Unit", contravariant=True)
Rows = TypeVar("Rows", bound="Row | list[Row]", covariant=True)


@dataclass(frozen=True)
class DecodeSettings:
    """What a decoder may need beyond its input, the same for every unit of a batch, so that
    it is built once (when the UDFs are registered, or per batch for a setting the SQL passes),
    never per unit."""

    # The keys declared in the table settings file (CDC_TABLES), by source system, source name
    # and source table; None: no table declares one.
    declared_keys: KeyLookup | None = None
    # Debezium: the connector's `unavailable.value.placeholder` settings as written in its
    # configuration (dbt var cdc_unavailable_placeholders, passed by the SQL).
    placeholders: Sequence[str] = ()


NO_SETTINGS = DecodeSettings()


class Decoder(Protocol[Unit, Rows]):
    """One stage of a family's decoding, called once per unit by its UDF
    (python_udfs/registry.py, `decoding_udf`). Never raises on bad input: a unit it cannot
    decode comes back as a row with `error` set (a stage that returns a list returns one such
    row), so the run quarantines it and goes on; `registry.guarded` turns a bug into such a row
    too."""

    def __call__(self, unit: Unit, source_name: str, settings: DecodeSettings, /) -> Rows: ...
