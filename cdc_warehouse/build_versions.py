"""The encodings a warehouse was built with, so that a build never stores a second encoding
beside the first (docs/decisions/013).

The stored tables keep what the decoders wrote: each family's `sort_pos` (and the `txn_id`
and `event_id` beside it) in its decoding tables, the change log and `cdc_history`, and the
change log's columns. A family's encoding has a version (`sort_key_version`,
python_udfs/families.py), and so has the layout of the stored tables (`LAYOUT_VERSION`). The
warehouse records the versions it was built with in the raw schema (`build_versions`, one row
per part): a new warehouse at its first build, a full refresh of every model once it has
succeeded. A build whose code has another version of a part than the record refuses with one
sentence: only a full refresh can rewrite what the tables hold. A family the record does not
name yet (added since) has stored nothing, and is recorded as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cdc_warehouse.settings import RebuildNeeded, Settings
from cdc_warehouse.steps import NODE_SELECTIONS
from python_udfs.families import FAMILIES

# The part of the record that is the stored tables' layout; the others are family names.
LAYOUT = "layout"
# The stored tables' columns. Raised when a stored table loses a column or a column's meaning
# changes, so that an incremental build cannot go on from what the tables hold: 2, the change
# log without is_full_image; 3, a key's partition holds keys of its source table only
# (docs/decisions/017).
LAYOUT_VERSION = 3
# A warehouse built before the record existed has this layout, and no other part recorded.
UNRECORDED_LAYOUT = {LAYOUT: 1}
# The command that rebuilds every model from the landed lines.
FULL_REFRESH = "cdcw run --full-refresh"


@dataclass(frozen=True)
class Mismatch:
    part: str
    built: int
    code: int


def code_versions() -> dict[str, int]:
    """The versions this code writes."""
    return {LAYOUT: LAYOUT_VERSION} | {family.name: family.sort_key_version for family in FAMILIES}


def mismatches(built: Mapping[str, int], code: Mapping[str, int]) -> list[Mismatch]:
    """The parts the warehouse was built with in another version than the code's, in the code's
    order; a part the record does not name is new and matches."""
    return [
        Mismatch(part, built[part], version)
        for part, version in code.items()
        if part in built and built[part] != version
    ]


def _part(name: str) -> str:
    return "the stored tables' layout" if name == LAYOUT else f"{name}'s sort-key encoding"


def refusal(found: Sequence[Mismatch]) -> str:
    """The one sentence a refused build says."""
    named = " and ".join(
        f"{_part(m.part)} version {m.built} (this code writes version {m.code})" for m in found
    )
    return (
        f"the warehouse was built with {named}; run `{FULL_REFRESH}` to rebuild every model "
        "from the landed lines"
    )


def rebuilds_everything(dbt_args: Sequence[str]) -> bool:
    """True for the arguments of a dbt build (or run) that rebuilds every model from scratch."""
    return "--full-refresh" in dbt_args and not any(
        arg.split("=", 1)[0] in NODE_SELECTIONS for arg in dbt_args
    )


def versions_table(settings: Settings) -> str:
    return f"{settings.raw_schema}.build_versions"


def recorded(spark, settings: Settings) -> dict[str, int] | None:
    """The versions the warehouse was built with; None for a warehouse not built yet."""
    table = versions_table(settings)
    if spark.catalog.tableExists(table):
        return {row.part: row.version for row in spark.table(table).collect()}
    if spark.catalog.tableExists(f"{settings.internal_schema}.int_cdc__change_log"):
        return dict(UNRECORDED_LAYOUT)
    return None


def record(spark, settings: Settings, versions: Mapping[str, int]) -> None:
    """Replace the record with `versions`, in one Delta commit."""
    rows = ", ".join(f"('{part}', {version})" for part, version in versions.items())
    spark.sql(f"create database if not exists {settings.raw_schema}")
    spark.sql(
        f"create or replace table {versions_table(settings)} using delta as "
        f"select part, version, current_timestamp() as recorded_at "
        f"from values {rows} as recorded(part, version)"
    )


def check(spark, settings: Settings, dbt_args: Sequence[str]) -> None:
    """Before a build: RebuildNeeded when it would add to tables built with another version of
    a part. A build that rebuilds everything is not checked (`record_rebuild` once it has
    succeeded); a warehouse's first build, and a family new to the record, are recorded now."""
    if rebuilds_everything(dbt_args):
        return
    code = code_versions()
    built = recorded(spark, settings)
    if built is None:
        record(spark, settings, code)
        return
    found = mismatches(built, code)
    if found:
        raise RebuildNeeded(refusal(found))
    if not code.keys() <= built.keys():
        record(spark, settings, built | code)


def record_rebuild(spark, settings: Settings, dbt_args: Sequence[str]) -> None:
    """After a successful build: a build that rebuilt every model records this code's
    versions."""
    if rebuilds_everything(dbt_args):
        record(spark, settings, code_versions())
