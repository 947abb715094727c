"""The table settings file (`CDC_TABLES`): declared keys win over what a source says, e.g.
for Oracle (Datastream sends no primary key) or REPLICA IDENTITY FULL tables."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import yaml

KeyLookup = Callable[[str, str, str], list[str] | None]


def parse_table_settings(text: str) -> list[dict[str, Any]]:
    """Validate the YAML document and return its entries; raise ValueError naming the problem,
    since a wrong key declaration silently merges or splits rows."""
    document = yaml.safe_load(text) or {}
    if not isinstance(document, Mapping):
        raise ValueError("table settings: the document must be a mapping with a 'tables' list")
    entries = document.get("tables") or []
    if not isinstance(entries, list):
        raise ValueError("table settings: 'tables' must be a list")
    for index, entry in enumerate(entries):
        where = f"table settings entry {index + 1}"
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where}: must be a mapping")
        for field in ("source_system", "source_table"):
            if not isinstance(entry.get(field), str) or not entry[field]:
                raise ValueError(f"{where}: '{field}' is required")
        key = entry.get("primary_key")
        if key is not None and (
            not isinstance(key, list) or not key or not all(isinstance(c, str) for c in key)
        ):
            raise ValueError(f"{where}: 'primary_key' must be a non-empty list of column names")
    return [dict(entry) for entry in entries]


def declared_key_lookup(entries: list[dict[str, Any]]) -> KeyLookup:
    """An entry naming the source_name beats one that leaves it out (meaning any source)."""
    exact: dict[tuple[str, str, str], list[str]] = {}
    any_source: dict[tuple[str, str], list[str]] = {}
    for entry in entries:
        key = entry.get("primary_key")
        if not key:
            continue
        if entry.get("source_name"):
            exact[(entry["source_system"], entry["source_name"], entry["source_table"])] = key
        else:
            any_source[(entry["source_system"], entry["source_table"])] = key

    def lookup(source_system: str, source_name: str, source_table: str) -> list[str] | None:
        found = exact.get((source_system, source_name, source_table))
        return found if found is not None else any_source.get((source_system, source_table))

    return lookup
