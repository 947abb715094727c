"""Oracle table ``ROOT.SAMPLE``, whose events carry no primary key (the test declares it), and
what each wave lands."""

from __future__ import annotations

from typing import Any

from .events import ORACLE_DB, File, _event, _ms, _uid, _Wave, land

# The Oracle table carries no primary key in its events: the test declares it.
ORACLE_DB_TABLE = "ROOT.SAMPLE"
ORACLE_DB_KEY = ["THIS_IS_MY_PK"]


def declared_tables_yaml() -> str:
    """Table settings file (README: `CDC_TABLES`) declaring the Oracle table's key."""
    return (
        "tables:\n"
        "  - source_system: datastream\n"
        f"    source_table: {ORACLE_DB_TABLE}\n"
        f"    primary_key: [{', '.join(ORACLE_DB_KEY)}]\n"
    )


def declared_keys() -> dict[tuple[str, str], list[str]]:
    """The same declaration as ``declared_tables_yaml``, for the oracle."""
    return {("datastream", ORACLE_DB_TABLE): list(ORACLE_DB_KEY)}


def _oracle_db(
    label: str,
    change_type: str,
    payload: dict[str, Any],
    ts: str,
    *,
    rs_id: str = "",
    ssn: int = 0,
    scn: int = 0,
    tx_id: str = "",
    row_id: str = "AAAPwRAALAAMzMBABD",
    read_method: str = "oracle-cdc-logminer",
) -> dict[str, Any]:
    """An event of the Oracle table ROOT.SAMPLE (shaped like the documentation's example)."""
    metadata = {
        "log_file": "" if read_method != "oracle-cdc-logminer" else "/u01/redo/redo02.log",
        "scn": scn,
        "row_id": row_id,
        "is_deleted": change_type == "DELETE",
        "database": "DB1",
        "schema": "ROOT",
        "table": "SAMPLE",
        "change_type": change_type,
        "tx_id": tx_id,
        "rs_id": rs_id,
        "ssn": ssn,
    }
    sort_keys = [_ms(ts), scn, rs_id, ssn]
    return _event(
        ORACLE_DB, read_method, "ROOT.SAMPLE", _uid(label), ts, sort_keys, metadata, payload
    )


def _sample(pk: str, field1: str | None, field2: str) -> dict[str, Any]:
    """A row of ROOT.SAMPLE."""
    return {"THIS_IS_MY_PK": pk, "FIELD1": field1, "FIELD2": field2}


def _sample_event(
    label: str,
    change_type: str,
    sample: tuple[str, str | None, str],
    ts: str,
    row: str = "D",
    rs_id: str = "",
    ssn: int = 0,
    scn: int = 0,
    tx_id: str = "",
    read_method: str = "oracle-cdc-logminer",
) -> dict[str, Any]:
    """An event row of FILES: a ROOT.SAMPLE row as (THIS_IS_MY_PK, FIELD1, FIELD2), a
    source_timestamp on 2024-05-01, the last letter of its row_id, its position."""
    return _oracle_db(
        label,
        change_type,
        _sample(*sample),
        f"2024-05-01T{ts}",
        rs_id=rs_id,
        ssn=ssn,
        scn=scn,
        tx_id=tx_id,
        row_id=f"AAAPwRAALAAMzMBAB{row}",
        read_method=read_method,
    )


def _unparseable_timestamp() -> dict[str, Any]:
    """An event whose source_timestamp is no instant (quarantined)."""
    bad_ts = _sample_event(
        "bad/ora-ts",
        "UPDATE",
        (PK54, "x", "y"),
        "10:05:30",
        "D",
        " 0x0000c2.000000b8.0010",
        0,
        15869150473230,
        "7.13.1003",
    )
    bad_ts["source_timestamp"] = "2024-05-01T25:61:00"
    return bad_ts


BACKFILL = "oracle-backfill"
PK53, PK54, PK55, PK60 = "1231535353", "1231535354", "1231535355", "1231535360"

# The files each wave lands, their events in file order as (label, change type,
# (THIS_IS_MY_PK, FIELD1, FIELD2), source_timestamp[, row_id's last letter[, rs_id, ssn, scn,
# tx_id]]).
# fmt: off
FILES = (
    File(1, "10:00", "c0ffee_oracle-backfill_0_0.jsonl", (
        ("ora/53/bf", "INSERT", (PK53, "foo", "TLV"), "10:00:00"),
        ("ora/54/bf", "INSERT", (PK54, "Zoë", "TLV"), "10:00:00", "E"),
        ("ora/55/bf", "INSERT", (PK55, "東京", "TLV"), "10:00:00", "F"),
    ), ("Oracle backfill, timestamps without fraction and without Z, non-ASCII values",),
        BACKFILL),
    File(1, "10:02", "c0ffee_oracle-cdc-logminer_1_0.jsonl", (
        # one transaction, two changes of the same key; ssn 10 after ssn 9 (string order wrong)
        ("ora/53/u-ssn10", "UPDATE", (PK53, None, "TLV"), "10:02:00",
         "D", " 0x0000c1.00000a10.0010", 10, 15869116216871, "7.12.1001"),
        ("ora/53/u-ssn9", "UPDATE", (PK53, "bar", "TLV"), "10:02:00",
         "D", " 0x0000c1.00000a10.0010", 9, 15869116216871, "7.12.1001"),
    ), ("Oracle: two changes of one key in one tx_id (one version); ssn 9 < 10",)),
    File(2, "10:06", "c0ffee_oracle-cdc-logminer_2_0.jsonl", (
        ("ora/54/u", "UPDATE", (PK54, "Zoë", "TLV2"), "10:05:00Z",
         "E", " 0x0000c2.000000b0.0010", 0, 15869150473224, "7.13.1002"),
        _unparseable_timestamp(),
        ("ora/55/d", "DELETE", (PK55, "東京", "TLV"), "10:06:00",
         "F", " 0x0000c2.000000c0.0010", 0, 15869150473255, "7.14.1003"),
    ), ("line 2: unparseable source_timestamp (quarantine)",)),
    File(3, "10:08", "c0ffee_oracle-cdc-logminer_3_0.jsonl", (
        ("ora/55/reinsert", "INSERT", (PK55, "東京", "TLV"), "10:07:00",
         "G", " 0x0000c3.00000010.0010", 0, 15869150479999, "7.15.1004"),
        # A backfill read at the same instant as a CDC update: the read sits before that update
        # (rs_id positions encode as '0…', a read's position as '1…', so only the rule decides).
        ("ora/60/insert", "INSERT", (PK60, "A", "TLV"), "10:09:00",
         "H", "0x0000c3.00000011.0010", 0, 15869150480001, "7.15.1005"),
        ("ora/60/update", "UPDATE", (PK60, "C", "TLV"), "10:10:00",
         "H", "0x0000c3.00000012.0010", 0, 15869150480002, "7.15.1006"),
    ), ("Oracle re-insert after delete",)),
    File(3, "10:09", "c0ffee_oracle-backfill_0_1.jsonl", (
        ("ora/54/bf2", "INSERT", (PK54, "Zoë", "TLV"), "10:04:00", "E"),
        ("ora/60/bf", "INSERT", (PK60, "B", "TLV"), "10:10:00", "H"),
    ), (
        "Oracle backfill landing after newer CDC (no-op, must not overwrite current)",
        "Oracle backfill at the same instant as a CDC update: sits before it",
    ), BACKFILL),
)
# fmt: on


def land_wave(w: _Wave) -> None:
    """Add the files this source lands in wave ``w``."""
    land(w, ORACLE_DB, "ROOT_SAMPLE", FILES, _sample_event)
