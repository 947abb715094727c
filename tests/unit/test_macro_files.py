"""Macros as dbt-utils keeps them: one macro per file, the file named for it, so that a reader
finds a macro by its name. The exceptions hold macros that share one contract and say so."""

from __future__ import annotations

import re

from cdc_warehouse.settings import PROJECT_DIR

MACRO = re.compile(r"\{%-?\s*macro\s+(\w+)")
# Files whose macros share one contract, kept together on purpose (each file says why).
SHARED_CONTRACT = {
    # The global overrides of dbt-spark's adapter macros, in one file that says why.
    "adapter_overrides.sql": {
        "spark__get_merge_sql",
        "spark__get_where_subquery",
        "get_insert_into_sql",
    },
    # The writer and the reader of one SQL comment: its format is their contract.
    "merge_only_into_partitions.sql": {"merge_only_into_partitions", "merged_target_partitions"},
    "merge_only_into_keys.sql": {"merge_only_into_keys", "merged_target_keys"},
    "broadcast_merge_source.sql": {"broadcast_merge_source", "merge_source_is_broadcast"},
    "nothing_to_write.sql": {"nothing_to_write", "marked_nothing_to_write"},
}


def macro_files() -> dict[str, set[str]]:
    return {
        path.relative_to(PROJECT_DIR / "macros").as_posix(): set(MACRO.findall(path.read_text()))
        for path in sorted((PROJECT_DIR / "macros").rglob("*.sql"))
    }


def test_each_macro_file_holds_the_macro_it_is_named_for():
    files = macro_files()
    assert len(files) > 40
    misnamed = {
        name: macros
        for name, macros in files.items()
        if macros != SHARED_CONTRACT.get(name.rsplit("/", 1)[-1], {name.rsplit("/", 1)[-1][:-4]})
    }
    assert misnamed == {}


def test_no_macro_is_defined_twice():
    names = [macro for macros in macro_files().values() for macro in macros]
    assert len(names) == len(set(names))
