"""The pgoutput harness captures real, rich logical decoding output from a real PostgreSQL 15.

One server and one workload run for the whole package (~5-10 s), shared with
test_pgoutput_pipeline.py (conftest.py). The facts checked here are what the warehouse's
pgoutput tests rely on: streaming, aborts, two-phase, truncate, messages, 'u' columns, REPLICA
IDENTITY FULL, and the resend of an open transaction from its start by the next slot read (the
contract's log rule), with a subtransaction rolled back in between.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from typing import Any

import pytest

from tests.e2e.pgoutput.pgoutput_capture import (
    decode_lines,
    parse_landing_bytes,
    read_slot,
    write_landing_file,
)
from tests.e2e.pgoutput.truth import (
    AuditChange,
    Column,
    TableInfo,
    canonical_json,
    expected_history,
    micros_to_datetime,
    typed_value,
)
from tests.e2e.pgoutput.workload import (
    NEVER_COMMITTED_BATCHES,
    OPEN_TRANSACTION_BATCHES,
    PUBLICATION,
    ROLLED_BACK_TO_SAVEPOINT_BATCH,
    SLOTS,
    TABLE_KEYS,
    land_wave,
)
from tests.postgres import PostgresError

pytestmark = pytest.mark.postgres

LSN = re.compile(r"^[0-9A-F]{1,8}/[0-9A-F]{1,8}$")
PG_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


@pytest.fixture(scope="module")
def captured(postgres_workload) -> dict[str, Any]:
    pg, waves = postgres_workload
    # Every supported read flavour on a fresh slot; PostgreSQL 15 has no proto 4 / 'parallel'.
    pg.sql("select pg_create_logical_replication_slot('probe', 'pgoutput')")
    accepted = {}
    for proto, streaming in [(1, None), (2, "on"), (3, "on"), (4, "on"), (2, "parallel")]:
        try:
            read_slot(pg, "probe", PUBLICATION, proto, streaming=streaming, peek=True)
            accepted[(proto, streaming)] = True
        except PostgresError:
            accepted[(proto, streaming)] = False
    final_rows = pg.sql("select count(*) from bulk")
    decoded = {
        slot: {
            wave["number"]: decode_lines(
                parse_landing_bytes(
                    wave["files"].get(f"pgoutput/{slot}/wave_{wave['number']:02d}.jsonl", b"")
                )
            )
            for wave in waves
        }
        for slot in SLOTS
    }
    return {
        "waves": waves,
        "decoded": decoded,
        "accepted": accepted,
        "final_bulk_count": int(final_rows[0][0]),
    }


def messages_of(captured: dict[str, Any], number: int, slot: str) -> list[dict[str, Any]]:
    return captured["decoded"][slot][number]


def all_messages(captured: dict[str, Any], slot: str) -> list[tuple[int, dict[str, Any]]]:
    return [
        (number, message)
        for number, messages in sorted(captured["decoded"][slot].items())
        for message in messages
    ]


def relations(captured: dict[str, Any], slot: str) -> dict[int, dict[str, Any]]:
    return {
        message["relid"]: message
        for _, message in all_messages(captured, slot)
        if message["type"] == "R"
    }


def bulk_batch(message: dict[str, Any], rels: dict[int, dict[str, Any]]) -> str | None:
    if message["type"] != "I" or rels[message["relid"]]["relation"] != "bulk":
        return None
    return message["new"][1][1].decode()


def log_files(wave: dict[str, Any]) -> dict[str, bytes]:
    return {path: content for path, content in wave["files"].items() if "/snapshot/" not in path}


def snapshot_files(wave: dict[str, Any], slot: str) -> dict[str, bytes]:
    return {
        path: content
        for path, content in wave["files"].items()
        if path.startswith(f"pgoutput/{slot}/snapshot/")
    }


def test_landing_lines_are_in_the_contract_format(captured):
    waves = captured["waves"]
    assert [wave["number"] for wave in waves] == [1, 2, 3, 4, 5]
    for wave in waves:
        assert set(log_files(wave)) == {
            f"pgoutput/{slot}/wave_{wave['number']:02d}.jsonl" for slot in SLOTS
        }
        for content in log_files(wave).values():
            for line in parse_landing_bytes(content):
                assert set(line) == {"lsn", "xid", "data"}
                assert LSN.match(line["lsn"]), line
                assert isinstance(line["xid"], int)
                assert "\n" not in line["data"]


def test_what_postgres_15_accepts(captured):
    assert captured["accepted"] == {
        (1, None): True,
        (2, "on"): True,
        (3, "on"): True,
        (4, "on"): False,
        (2, "parallel"): False,
    }


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_every_message_kind_of_the_workload_is_captured(captured, slot):
    kinds = Counter(message["type"] for _, message in all_messages(captured, slot))
    common = set("BCRYIUDTMOSEcA")
    assert common <= set(kinds), common - set(kinds)
    two_phase = set("bPKrp")
    if SLOTS[slot]["two_phase"]:
        assert two_phase <= set(kinds), two_phase - set(kinds)
    else:
        assert not two_phase & set(kinds)


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_messages_transactional_and_not(captured, slot):
    logical = [message for _, message in all_messages(captured, slot) if message["type"] == "M"]
    assert {message["prefix"] for message in logical} == {"cdc-test"}
    non_transactional = [message for message in logical if message["flags"] == 0]
    transactional = [message for message in logical if message["flags"] == 1]
    assert non_transactional and transactional
    assert all(message["line_xid"] == 0 for message in non_transactional)
    assert all(message["line_xid"] != 0 for message in transactional)


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_unchanged_toast_and_key_change_and_replica_identity_full(captured, slot):
    rels = relations(captured, slot)
    by_name = {message["relation"]: message for message in rels.values()}
    docs = by_name["docs"]
    body = [column["name"] for column in docs["columns"]].index("body")
    updates = [
        message
        for _, message in all_messages(captured, slot)
        if message["type"] == "U" and rels[message["relid"]]["relation"] == "docs"
    ]
    assert any(message["new"][body][0] == "u" for message in updates)
    key_change = [message for message in updates if message.get("old_kind") == "K"]
    assert key_change, "the primary key change must carry the old key"
    assert key_change[0]["old"][0] == ("t", b"2")
    assert key_change[0]["new"][0] == ("t", b"20")
    assert key_change[0]["new"][body][0] == "u"

    full = by_name["full_rows"]
    assert full["replica_identity"] == "f"
    assert all(column["flags"] == 1 for column in full["columns"])  # every column flagged as key
    assert any(
        message["type"] in "UD" and message.get("old_kind") == "O"
        for _, message in all_messages(captured, slot)
        if message.get("relid") == full["relid"]
    )
    assert {"mood"} <= {
        message["name"] for _, message in all_messages(captured, slot) if message["type"] == "Y"
    }


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_large_transactions_stream_and_abort(captured, slot):
    rels = relations(captured, slot)
    wave2 = messages_of(captured, 2, slot)
    starts = [message for message in wave2 if message["type"] == "S"]
    assert len(starts) > 2, "2000-row transactions must stream in several blocks"
    committed = [message["xid"] for message in wave2 if message["type"] == "c"]
    aborted = [message for message in wave2 if message["type"] == "A"]
    assert len(committed) == 1 and len(aborted) == 1
    assert aborted[0]["subxid"] == aborted[0]["xid"]  # the whole transaction
    aborted_batches = {
        bulk_batch(message, rels)
        for message in wave2
        if message["type"] == "I" and message.get("xid") == aborted[0]["xid"]
    }
    assert aborted_batches == {"w2-aborted"}


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_open_transaction_is_resent_from_its_start_by_the_next_reads(captured, slot):
    rels = relations(captured, slot)
    per_wave = captured["decoded"][slot]

    open_xids = {
        message["line_xid"]
        for message in per_wave[3]
        if bulk_batch(message, rels) == OPEN_TRANSACTION_BATCHES[0]
    }
    assert len(open_xids) == 1
    open_xid = open_xids.pop()

    def first_segments(number: int) -> list[dict[str, Any]]:
        return [
            message
            for message in per_wave[number]
            if message["type"] == "S" and message["xid"] == open_xid and message["first_segment"]
        ]

    def changes(number: int) -> list[tuple[str, str]]:
        return [
            (message["line_lsn"], bulk_batch(message, rels))
            for message in per_wave[number]
            if message["type"] in "IUDM" and message["line_xid"] == open_xid
        ]

    # Wave 3: streamed while open, including rows of the savepoint later rolled back.
    assert len(first_segments(3)) == 1
    wave3 = changes(3)
    assert ROLLED_BACK_TO_SAVEPOINT_BATCH in {batch for _, batch in wave3}
    assert not [m for m in per_wave[3] if m["type"] in "cA" and m["xid"] == open_xid]

    # Wave 4: sent again from its start (first_segment = 1 again), same changes at the same LSNs,
    # minus the rolled-back subtransaction; still no commit and never a Stream Abort for it.
    assert len(first_segments(4)) == 1
    wave4 = changes(4)
    before_savepoint = [change for change in wave3 if change[1] != ROLLED_BACK_TO_SAVEPOINT_BATCH]
    assert wave4[: len(before_savepoint)] == before_savepoint
    assert ROLLED_BACK_TO_SAVEPOINT_BATCH not in {batch for _, batch in wave4}
    assert OPEN_TRANSACTION_BATCHES[1] in {batch for _, batch in wave4}
    for number in (3, 4, 5):
        assert not [m for m in per_wave[number] if m["type"] == "A" and m["xid"] == open_xid]

    # Wave 5: sent again from its start and committed.
    wave5 = changes(5)
    assert wave5[: len(wave4)] == wave4
    assert ROLLED_BACK_TO_SAVEPOINT_BATCH not in {batch for _, batch in wave5}
    assert OPEN_TRANSACTION_BATCHES[2] in {batch for _, batch in wave5}
    commits = [m for m in per_wave[5] if m["type"] in "cC" and m["line_xid"] == open_xid]
    assert len(commits) == 1


def test_two_phase_on_both_slots(captured):
    two_phase = all_messages(captured, "cdc_v3")
    by_gid: dict[str, list[str]] = {}
    for _, message in two_phase:
        if "gid" in message:
            by_gid.setdefault(message["gid"], []).append(message["type"])
    assert by_gid["gid_commit"] == ["b", "P", "K"]
    assert by_gid["gid_rollback"] == ["b", "P", "r"]
    assert by_gid["gid_late"] == ["b", "P", "K"]  # prepared in w3, committed in w4
    assert by_gid["gid_big"] == ["p", "K"]  # streamed, Stream Prepare in w3, committed in w5

    # The slot without two-phase sees a prepared transaction only at COMMIT PREPARED, as an
    # ordinary one, and never the rolled-back one.
    rels = relations(captured, "cdc_v2")
    batches = {bulk_batch(message, rels) for _, message in all_messages(captured, "cdc_v2")}
    assert "w3-prepared-small" in batches and "w2-rolled-back-prepared" not in batches


def test_database_truth_per_wave(captured):
    waves = captured["waves"]
    for wave in waves:
        batches = {row["batch"] for row in wave["db_state"]["public.bulk"]}
        assert not batches & set(NEVER_COMMITTED_BATCHES), wave["name"]
    # The open transaction is invisible until wave 5, then there minus the savepoint's rows.
    assert not {row["batch"] for row in waves[3]["db_state"]["public.bulk"]} & set(
        OPEN_TRANSACTION_BATCHES
    )
    final = Counter(row["batch"] for row in waves[4]["db_state"]["public.bulk"])
    assert final["open-part1"] == 1499 and final["open-part2"] == 1200
    assert final[ROLLED_BACK_TO_SAVEPOINT_BATCH] == 0
    assert sum(final.values()) == captured["final_bulk_count"]
    docs = {row["id"]: row for row in waves[4]["db_state"]["public.docs"]}
    assert set(docs) == {"1", "7", "20", "80", "6001"} and len(docs["20"]["body"]) == 6400
    first = {row["id"]: row for row in waves[0]["db_state"]["public.docs"]}
    assert docs["6001"]["body"] == first["6"]["body"] and len(first["6"]["body"]) == 6400
    typed = {row["id"]: row for row in waves[0]["db_state"]["public.typed"]}
    assert typed["1"]["c_int8"] == "9007199254740993"
    assert typed["1"]["c_float8"] == "NaN"
    assert typed["1"]["c_int_arr"] == "{1,NULL,3}"
    assert typed["3"]["c_bool"] is None


def test_landing_files_are_written_where_the_contract_says(captured, tmp_path):
    for wave in captured["waves"]:
        for path in land_wave(tmp_path, wave):
            assert path.relative_to(tmp_path).parts[:2] in {("pgoutput", slot) for slot in SLOTS}
    assert len(list((tmp_path / "pgoutput").rglob("wave_*.jsonl"))) == 10
    assert len(list((tmp_path / "pgoutput").rglob("snapshot/*/*.jsonl"))) == 2 * len(TABLE_KEYS)
    lines = parse_landing_bytes(captured["waves"][0]["files"]["pgoutput/cdc_v2/wave_01.jsonl"])
    path = write_landing_file(tmp_path / "other", "cdc_v2", "again", lines)
    assert path == tmp_path / "other" / "pgoutput" / "cdc_v2" / "again.jsonl"
    assert parse_landing_bytes(path.read_bytes()) == lines


# -- the truth in the warehouse's terms (truth.py) -------------------------------------------


def for_slot(rows: list[dict[str, Any]], slot: str) -> list[dict[str, Any]]:
    return [row for row in rows if row["source_name"] == slot]


def versions_of(wave: dict[str, Any], table: str, key: dict[str, Any], slot: str = "cdc_v2"):
    key_json = canonical_json(key)
    return sorted(
        (
            row
            for row in for_slot(wave["expected_history"], slot)
            if row["source_table"] == table and row["key_json"] == key_json
        ),
        key=lambda row: row["valid_from"],
    )


def current_rows(wave: dict[str, Any], table: str, slot: str = "cdc_v2") -> dict[str, Any]:
    return {
        row["key_json"]: json.loads(row["row_json"])
        for row in for_slot(wave["expected_current"], slot)
        if row["source_table"] == table
    }


def test_expected_state_per_wave_has_what_the_database_has(captured):
    for wave in captured["waves"]:
        for slot in SLOTS:
            current = for_slot(wave["expected_current"], slot)
            assert Counter(row["source_table"] for row in current) == {
                table: len(rows) for table, rows in wave["db_state"].items() if rows
            }, wave["name"]
            for table, rows in wave["db_state"].items():
                key_columns = TABLE_KEYS[table]
                keys = [json.loads(key) for key in current_rows(wave, table, slot)]
                assert sorted(tuple(str(key[name]) for name in key_columns) for key in keys) == (
                    sorted(tuple(row[name] for name in key_columns) for row in rows)
                ), (wave["name"], table)
            # The audit trail's replay ends where the database is.
            history_current = {
                (row["source_table"], row["key_json"], row["row_json"])
                for row in for_slot(wave["expected_history"], slot)
                if row["is_current"]
            }
            assert history_current == {
                (row["source_table"], row["key_json"], row["row_json"]) for row in current
            }, wave["name"]
        # Both slots see the same committed data; their histories differ only where the
        # transaction committed at cdc_v2's consistent point changed a key: cdc_v3's snapshot,
        # taken after it, holds its change.
        strip = [
            [{**row, "source_name": None} for row in for_slot(wave[part], slot)]
            for part in ("expected_current", "expected_history")
            for slot in sorted(SLOTS)
        ]
        assert strip[0] == strip[1]
        docs_7 = canonical_json({"id": 7})
        assert [row for row in strip[2] if row["key_json"] != docs_7] == [
            row for row in strip[3] if row["key_json"] != docs_7
        ]
        assert all(set(row) == CURRENT_FIELDS for row in wave["expected_current"])
        assert all(set(row) == HISTORY_FIELDS for row in wave["expected_history"])


CURRENT_FIELDS = {"source_name", "source_table", "key_json", "row_json"}
HISTORY_FIELDS = CURRENT_FIELDS | {"op", "valid_from", "valid_to", "is_current"}


def test_expected_history_holds_no_uncommitted_rows(captured):
    waves = captured["waves"]

    def batches(wave):
        return Counter(
            json.loads(row["row_json"])["batch"]
            for row in for_slot(wave["expected_history"], "cdc_v2")
            if row["source_table"] == "public.bulk"
        )

    for wave in waves:
        assert not set(batches(wave)) & set(NEVER_COMMITTED_BATCHES), wave["name"]
    for wave in waves[:4]:  # the open transaction commits in wave 5
        assert not set(batches(wave)) & set(OPEN_TRANSACTION_BATCHES), wave["name"]
    final = batches(waves[4])
    assert final["open-part1"] == 1499 and final["open-part2"] == 1200
    assert final[ROLLED_BACK_TO_SAVEPOINT_BATCH] == 0
    # Inserted, updated and deleted in one transaction: one version each, the row after it.
    assert final["w2-committed"] == 1999
    bulk_1 = versions_of(waves[4], "public.bulk", {"id": 1})
    assert [(row["op"], json.loads(row["row_json"])["pad"]) for row in bulk_1] == [
        ("update", "updated in same tx")
    ]
    assert versions_of(waves[4], "public.bulk", {"id": 6}) == []
    # Inserted and deleted by the (long) open transaction: no version at all.
    assert versions_of(waves[4], "public.bulk", {"id": 10001}) == []


def test_expected_history_primary_key_change_and_versions(captured):
    wave = captured["waves"][4]
    (old,) = versions_of(wave, "public.docs", {"id": 2})
    (new,) = versions_of(wave, "public.docs", {"id": 20})
    assert old["op"] == "insert" and not old["is_current"] and old["valid_to"] is not None
    assert new["op"] == "update" and new["is_current"] and new["valid_to"] is None
    assert new["valid_from"] == old["valid_to"]
    old_row, new_row = json.loads(old["row_json"]), json.loads(new["row_json"])
    assert new_row["title"] == "second, new key" and new_row["id"] == 20
    assert new_row["body"] == old_row["body"] and len(new_row["body"]) == 6400
    assert not versions_of(wave, "public.pairs", {"region": "eu", "seq": 2})[-1]["is_current"]
    assert versions_of(wave, "public.pairs", {"region": "eu", "seq": 3})[-1]["is_current"]

    # Several changes of one key in one transaction: one version, op of the last change.
    (five,) = versions_of(wave, "public.full_rows", {"id": 5})
    assert five["op"] == "update"
    assert json.loads(five["row_json"]) == {"amount": 55, "id": 5, "label": "five!"}

    # TRUNCATE closes every live key at its commit; a later insert opens a new key.
    truncated = [versions_of(wave, "public.scratch", {"id": key})[-1] for key in (1, 2, 3)]
    assert len({row["valid_to"] for row in truncated}) == 1
    assert not any(row["is_current"] for row in truncated)

    # docs 1: insert, update, update via COMMIT PREPARED, update by the open transaction.
    docs_1 = versions_of(wave, "public.docs", {"id": 1})
    assert [json.loads(row["row_json"])["title"] for row in docs_1] == [
        "first",
        "first, retitled",
        "first, via 2pc",
        "first, inside the open tx",
    ]
    for earlier, later in pairwise(docs_1):
        assert earlier["valid_to"] == later["valid_from"]
    assert [row["is_current"] for row in docs_1] == [False, False, False, True]

    for row in wave["expected_history"]:
        assert row["valid_from"].tzinfo is not None
        assert row["valid_to"] is None or row["valid_from"] <= row["valid_to"]
        assert row["is_current"] == (row["valid_to"] is None)
        assert row["op"] in ("insert", "update", "snapshot")


def test_expected_values_are_typed_as_the_contract_says(captured):
    typed = current_rows(captured["waves"][0], "public.typed")
    one, two, three, four = (typed[canonical_json({"id": key})] for key in (1, 2, 3, 4))
    assert one["c_int8"] == "9007199254740993" and four["c_int8"] == 0
    assert two["c_int8"] == "-9223372036854775808" and two["c_int2"] == -32768
    assert one["c_bytea"] == base64.b64encode(b"\x00\xff\x10").decode() == "AP8Q"
    assert four["c_bytea"] == "3q2+7w==" and two["c_bytea"] == ""
    assert one["c_tstz"] == "2024-02-29T11:14:15.654321Z"
    assert four["c_tstz"] == "2100-12-31T23:59:59.000000Z"
    assert one["c_ts"] == "2024-02-29T13:14:15.123456" and two["c_date"] == "0001-01-01"
    assert one["c_numeric"] == "123456789012345678901234567890.123456789012345678901"
    assert two["c_numeric"] == -1e-21 and four["c_numeric"] == 0
    assert (one["c_float8"], two["c_float8"], three["c_float8"]) == ("NaN", "Infinity", "-Infinity")
    assert four["c_float8"] == 1.7976931348623157e308
    assert one["c_bool"] is True and two["c_bool"] is False and three["c_bool"] is None
    assert one["c_json"] == {"a": [1, 2.5, None], "b": "x"} and four["c_json"] == "just a string"
    assert one["c_jsonb"] == {"a": {"n": 12345678901234567890}, "z": 1}
    assert one["c_int_arr"] == [1, None, 3] and three["c_int_arr"] == [None]
    assert one["c_text_arr"] == ["a", None, "c,d", "NULL"] and two["c_text_arr"] == []
    assert one["c_mood"] == "happy" and four["c_text"] == "line1\nline2"
    full = current_rows(captured["waves"][0], "public.full_rows")
    assert full['{"id":1}']["amount"] == 10.5 and full['{"id":2}']["amount"] == 20
    # The exact text: sorted keys, compact, non-ASCII kept.
    row_json = next(
        row["row_json"]
        for row in captured["waves"][0]["expected_current"]
        if row["source_table"] == "public.typed" and row["key_json"] == '{"id":1}'
    )
    assert row_json.startswith('{"c_bool":true,"c_bytea":"AP8Q","c_date":"2024-02-29",')
    assert '"c_text":"héllo, \\"quoted\\" \\\\ backslash"' in row_json


@pytest.mark.parametrize(
    ("kind", "text", "value"),
    [
        ("int8", "9007199254740992", 9007199254740992),
        ("int8", "-9007199254740993", "-9007199254740993"),
        ("numeric", "10.50", 10.5),
        ("numeric", "20.00", 20),
        ("numeric", "9007199254740993", "9007199254740993"),
        ("numeric", "0.1000000000000000000001", "0.1000000000000000000001"),
        ("numeric", "NaN", "NaN"),
        ("float8", "1", 1.0),
        ("float8", "-Infinity", "-Infinity"),
        ("array:numeric", '["1.5", null, "2"]', [1.5, None, 2]),
        ("array:bool", '["true", "false"]', [True, False]),
        ("jsonb", '{"b": [1.0, "x"], "a": null}', {"a": None, "b": [1.0, "x"]}),
        ("uuid", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
        ("text", None, None),
    ],
)
def test_typed_value_rules(kind, text, value):
    assert typed_value(kind, text) == value
    assert type(typed_value(kind, text)) is type(value)


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_commit_times_are_the_commit_timestamps_pgoutput_sends(captured, slot):
    commit_times = captured["waves"][4]["commit_times"]
    sent = {}
    for _, message in all_messages(captured, slot):
        if message["type"] == "C":
            sent[message["line_xid"]] = message["commit_ts"]
        elif message["type"] == "c":
            sent[message["xid"]] = message["commit_ts"]
        elif message["type"] == "K":
            sent[message["xid"]] = message["ts"]
    # The transactions the slot does not send are those its snapshot holds.
    assert set(commit_times) - set(sent)
    for xid, committed_at in commit_times.items():
        if xid in sent:
            assert committed_at == PG_EPOCH + timedelta(microseconds=sent[xid]), xid
    # The transaction with a replication origin commits at the origin's timestamp.
    (origin,) = versions_of(captured["waves"][4], "public.pairs", {"region": "origin", "seq": 1})
    assert origin["valid_from"] == datetime(2024, 1, 1, tzinfo=UTC)


def test_expected_history_rules_on_a_synthetic_audit_trail():
    info = TableInfo("s.t", (Column("id", "int4", "integer"), Column("v", "text", "text")), ("id",))
    sequence = iter(range(1, 100))

    def change(xid, op, new=None, old=None):
        def row(values):
            return None if values is None else {"id": str(values[0]), "v": values[1]}

        return AuditChange(
            next(sequence), "s.t", op, row(new), row(old), xid, micros_to_datetime(xid * 10)
        )

    changes = [
        change(1, "insert", new=(1, "a")),
        change(1, "update", new=(1, "b"), old=(1, "a")),  # one version for tx 1: "b"
        change(1, "insert", new=(2, "x")),
        change(2, "update", new=(1, "b"), old=(1, "b")),  # no real change: no version
        change(3, "update", new=(3, "x"), old=(2, "x")),  # key change 2 -> 3
        change(4, "truncate"),
        change(4, "insert", new=(1, "c")),  # truncated, then inserted again in the same tx
        change(5, "delete", old=(1, "c")),
        change(5, "insert", new=(1, "c")),  # deleted and back as it was: no new version
    ]
    versions = [
        (v.key_json, json.loads(v.row_json)["v"], v.op, v.valid_from, v.valid_to)
        for v in expected_history(changes, {"s.t": info})
    ]
    t = {xid: micros_to_datetime(xid * 10) for xid in range(1, 6)}
    assert versions == [
        ('{"id":1}', "b", "update", t[1], t[4]),
        ('{"id":1}', "c", "insert", t[4], None),
        ('{"id":2}', "x", "insert", t[1], t[3]),
        ('{"id":3}', "x", "update", t[3], t[4]),  # closed by the truncate
    ]


# -- initial snapshots (cdc_warehouse/pg_snapshot.py) -------------------------------------------


def test_a_transaction_commits_exactly_at_the_first_slots_consistent_point(captured):
    """The harness's premise for the snapshot's place: cdc_v2 decodes a transaction whose
    commit LSN is its consistent point, and that transaction's change is not in its snapshot
    (docs 7 keeps its title from before the slot)."""
    point = captured["waves"][0]["consistent_points"]["cdc_v2"]
    commits = [m for m in messages_of(captured, 1, "cdc_v2") if m["type"] == "C"]
    assert point in {commit["commit_lsn"] for commit in commits}
    snapshot = snapshot_files(captured["waves"][0], "cdc_v2")
    [docs] = [content for path, content in snapshot.items() if path.endswith("public.docs.jsonl")]
    header, *rows = parse_landing_bytes(docs)
    assert header["snapshot"]["lsn"] == point
    titles = {row["values"][0]: row["values"][1] for row in rows}
    assert titles == {"7": "seventh, before the slot", "8": "eighth, before the slot"}


@pytest.mark.parametrize("slot", sorted(SLOTS))
def test_snapshot_files_hold_every_published_table_as_the_catalog_describes_it(captured, slot):
    snapshot = snapshot_files(captured["waves"][0], slot)
    headers = {}
    for content in snapshot.values():
        header, *rows = parse_landing_bytes(content)
        headers[header["snapshot"]["table"]] = header["snapshot"]
        assert all(len(row["values"]) == len(header["snapshot"]["columns"]) for row in rows)
    assert set(headers) == set(TABLE_KEYS)
    full_rows = headers["public.full_rows"]["columns"]
    assert all(column["key"] for column in full_rows)  # REPLICA IDENTITY FULL, as Relation says
    assert [c["name"] for c in headers["public.pairs"]["columns"] if c["key"]] == ["region", "seq"]
    [typed] = [c for p, c in snapshot.items() if p.endswith("public.typed.jsonl")]
    [row] = parse_landing_bytes(typed)[1:]
    assert "tab\tand newline\nand backslash \\ here" in row["values"]
