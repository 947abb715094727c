"""A family's encoding version (`SORT_KEY_VERSION` of its decoder package) moves with its
encoding: what its decoding gives the bundled sample lines as `sort_pos`, `txn_id`, `event_id`
and the transaction fields its models count is pinned here per version, and pgoutput's SQL that
builds them (models/intermediate/pgoutput/int_pgoutput__changes.sql) with it. A change to an
encoding without a raised version fails here: the warehouse would hold old and new encodings
side by side, where a raised version makes the next run refuse until a full refresh
(docs/decisions/013). The failure prints the digest to pin; a change of the sample files alone
(not of an encoding) needs a new pin too, with the version left as it is."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from cdc_warehouse.settings import PROJECT_DIR
from python_udfs.families import BY_NAME, SNAPSHOT_DIRECTORY, Family
from tests.damaged_lines import SAMPLE
from tests.unit.test_decoders_fuzz import SETTINGS, decoded_rows

# family: (SORT_KEY_VERSION, digest of its encodings of the sample lines).
PINS = {
    "datastream": (1, "c502d3c289336b84"),
    "debezium": (2, "3812450d988bc2b6"),
    "pgoutput": (1, "38fc792224c27f59"),
    "spanner": (1, "82c963f9c4eeb440"),
}
# The fields of a decoded row that a family's encoding version covers.
ENCODED_FIELDS = (
    "sort_pos",
    "txn_id",
    "event_id",
    "transaction_key",
    "data_collection_order",
    "transaction_status",
    "transaction_event_count",
    "transaction_collections",
)
# Where pgoutput's changes get their encoding: the SQL from `sort_pos` to `event_id`.
PGOUTPUT_CHANGES = (
    PROJECT_DIR / "models" / "intermediate" / "pgoutput" / "int_pgoutput__changes.sql"
)
PGOUTPUT_ENCODING = re.compile(r"false as is_backfill,(.*?) as event_id,", re.S)


def file_lines(family: Family, path: Path) -> list[str]:
    """A sample file's lines as landing reads them: text lines, or a record file's records."""
    for suffix, read in family.record_readers.items():
        if path.name.endswith(suffix):
            return [line for _, line, _ in read(str(path)) if line is not None]
    return [line for line in path.read_text().splitlines() if line.strip()]


def decoded_file(family: Family, path: Path, source_name: str, snapshot: bool) -> list[Any]:
    """Every row the family's decoding gives the file's lines: its stages for a log file, the
    header stage then the row stage (with the file's header) for a snapshot file."""
    lines = file_lines(family, path)
    if not snapshot:
        return [row for line in lines for row in decoded_rows(family, line, source_name)]
    assert family.snapshots is not None
    header = family.snapshots.header.decode(lines[0], source_name, SETTINGS)
    row = family.snapshots.row.decode
    return [
        header,
        *(row((line, header["header_json"]), source_name, SETTINGS) for line in lines[1:]),
    ]


def encodings(family: Family) -> list[Any]:
    """What the family's encoding gives every sample file, file by file, row by row."""
    encoded: list[Any] = []
    root = SAMPLE / family.name
    for path in sorted(found for found in root.rglob("*") if found.is_file()):
        relative = path.relative_to(root)
        if not path.name.endswith(family.suffixes):
            continue
        snapshot = len(relative.parts) > 2 and relative.parts[1] == SNAPSHOT_DIRECTORY
        rows = decoded_file(family, path, relative.parts[0], snapshot)
        encoded.append(
            [
                relative.as_posix(),
                [
                    [row.get(field) for field in ENCODED_FIELDS]
                    for row in rows
                    if not row.get("error")
                ],
            ]
        )
    if family.name == "pgoutput":
        built = PGOUTPUT_ENCODING.search(PGOUTPUT_CHANGES.read_text())
        assert built, f"{PGOUTPUT_CHANGES} no longer builds sort_pos to event_id in one place"
        encoded.append(" ".join(built.group(1).split()))
    return encoded


def digest(family: Family) -> str:
    text = json.dumps(encodings(family), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_every_family_has_a_pin():
    assert set(PINS) == set(BY_NAME)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_an_encoding_changes_only_with_its_version(name):
    family = BY_NAME[name]
    pinned_version, pinned_digest = PINS[name]
    found = digest(family)
    assert (family.sort_key_version, found) == (pinned_version, pinned_digest), (
        f"{name}: the sample lines encode as {found!r} at SORT_KEY_VERSION "
        f"{family.sort_key_version}, pinned as {pinned_digest!r} at {pinned_version}. An encoding "
        f"that changed needs SORT_KEY_VERSION raised in python_udfs/{name}/ and the new pair "
        "pinned here; sample files that changed alone, the new digest at the same version."
    )


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_the_pin_covers_sort_positions_of_the_family(name):
    files = [item for item in encodings(BY_NAME[name]) if isinstance(item, list)]
    positions = [row[0] for _, rows in files for row in rows if row[0] is not None]
    assert len(files) >= 5 and len(positions) >= 10
