"""Column types as each source names them, and the Spark type a typed model reads the column's
row_json value as: the shape every family shares; each family's rules are its package's
`column_types` module. The decoders record a row's column types as `column_types` text (one
JSON object, column -> [source type, Spark type]); `cdc_source_columns` collects them per
table, so a column added, dropped or retyped upstream shows there, and the typed models take
their types from it. A type no rule knows reads as `string`: its JSON text is kept whole,
never lost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from python_udfs.json_values import canonical_json

STRING = "string"
# Spark's widest decimal; a wider source decimal stays text.
MAX_DECIMAL_PRECISION = 38

ColumnType = tuple[str | None, str]


def column_types_json(types: Mapping[str, ColumnType]) -> str:
    """The `column_types` text of a row: keys sorted, so equal schemas give equal text (the
    model groups rows by it before it looks inside)."""
    return canonical_json({name: list(pair) for name, pair in types.items()})


def decimal_type(precision: Any, scale: Any) -> str:
    """decimal(p,s) when Spark holds it; text otherwise (unknown or wider precision)."""
    try:
        p, s = int(precision), int(scale)
    except (TypeError, ValueError):
        return STRING
    if not 0 < p <= MAX_DECIMAL_PRECISION or not 0 <= s <= p:
        return STRING
    return f"decimal({p},{s})"
