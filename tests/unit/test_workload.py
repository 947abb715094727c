"""The benchmark's workload generator: deterministic, readable by the project's own decoders,
and holding the traps it promises in the stated proportions (no Spark)."""

from __future__ import annotations

import base64
import hashlib
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import fastavro
import numpy as np
import pytest

from cdc_warehouse.bench import decode_profile, pgoutput_encoder, workload
from python_udfs.datastream import avro_file_events, flatten_event
from python_udfs.debezium import flatten_record
from python_udfs.decoding import DecodeSettings
from python_udfs.families import BY_NAME, FAMILIES, SNAPSHOT_DIRECTORY
from python_udfs.pgoutput import change_rows, decode_message, message_row

DEBEZIUM_SETTINGS = DecodeSettings(placeholders=("__debezium_unavailable_value",))


def tree_digest(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file() and path.name != "manifest.json"
    }


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("workload") / "w"
    manifest = workload.generate(workload.Spec(scale=20_000, seed=7, waves=4, jobs=1), out)
    return out, manifest


def is_snapshot_file(path: Path) -> bool:
    return SNAPSHOT_DIRECTORY in path.parts


def lines_of(out: Path, family: str, snapshots: bool = False) -> list[tuple[str, str, str]]:
    """(delivery, source name, line) of every landed line (Avro record) of a family's log (or
    of its snapshot files), in landing order (the small file repeats lines of a top-up: not one
    of them)."""
    small = f"topup-{workload.SMALL_FILE}"
    found = []
    for delivery in sorted(p.name for p in out.iterdir() if p.is_dir() and p.name != small):
        for path in sorted(p for p in (out / delivery / family).rglob("*.*") if p.is_file()):
            if is_snapshot_file(path) != snapshots:
                continue
            source = path.relative_to(out / delivery / family).parts[0]
            if path.suffix == ".avro":  # Datastream Avro: each record as the JSON line it reads as
                found.extend((delivery, source, line) for _, line, _ in avro_file_events(str(path)))
            else:
                found.extend((delivery, source, line) for line in path.read_text().splitlines())
    return found


def test_same_seed_same_files_whatever_the_parallelism(tmp_path):
    spec = workload.Spec(scale=3_000, seed=11, waves=3, jobs=1)
    workload.generate(spec, tmp_path / "a")
    workload.generate(workload.Spec(scale=3_000, seed=11, waves=3, jobs=2), tmp_path / "b")
    workload.generate(workload.Spec(scale=3_000, seed=12, waves=3, jobs=1), tmp_path / "c")
    assert tree_digest(tmp_path / "a") == tree_digest(tmp_path / "b")
    assert tree_digest(tmp_path / "a") != tree_digest(tmp_path / "c")


def test_layout_every_wave_and_every_topup(generated):
    out, manifest = generated
    assert manifest["waves"] == [f"wave-{n:04d}" for n in range(4)]
    assert set(manifest["deliveries"]) == {
        *manifest["waves"],
        "topup-realistic",
        "topup-adversarial",
        "topup-fixed",
    }
    for delivery in manifest["deliveries"]:
        assert {p.name for p in (out / delivery).iterdir()} == set(workload.FAMILIES)
    base = sum(facts["base_events"] for facts in manifest["families"].values())
    assert base == 20_000
    for mode, size in [("realistic", 200), ("adversarial", 200), ("fixed", 10_000)]:
        topup = sum(facts["topup_events"][mode] for facts in manifest["families"].values())
        assert topup == pytest.approx(size, abs=4)


def test_the_small_file_is_the_start_of_a_realistic_topup_file(generated):
    out, manifest = generated
    small = manifest["small_file"]
    assert small["family"] == "datastream"
    assert [p.relative_to(out / "topup-small") for p in (out / "topup-small").rglob("*.*")] == [
        Path(small["path"])
    ]
    lines = (out / "topup-small" / small["path"]).read_text().splitlines()
    whole = (out / "topup-realistic" / small["path"]).read_text().splitlines()
    assert len(lines) == small["events"] == min(workload.SMALL_FILE_EVENTS, len(whole))
    assert lines == whole[: len(lines)]
    assert workload.is_complete(out, manifest)


def test_without_a_family_of_whole_lines_there_is_no_small_file(tmp_path):
    spec = workload.Spec(scale=1_000, waves=2, families=("pgoutput", "spanner"), jobs=1)
    manifest = workload.generate(spec, tmp_path)
    assert manifest["small_file"] is None
    assert not (tmp_path / "topup-small").exists()
    assert workload.is_complete(tmp_path, manifest)


def test_families_option_limits_what_is_written(tmp_path):
    spec = workload.Spec(scale=1_000, waves=2, families=("datastream", "spanner"), jobs=1)
    workload.generate(spec, tmp_path)
    assert {p.name for p in (tmp_path / "wave-0000").iterdir()} == {"datastream", "spanner"}


def test_datastream_lines_flatten_without_error(generated):
    out, manifest = generated
    ops, uuids, duplicates = Counter(), Counter(), 0
    for _, source, line in lines_of(out, "datastream"):
        row = flatten_event(line, source)
        assert row["error"] is None, (row, line)
        ops[row["op"]] += 1
        uuids[row["event_id"]] += 1
    duplicates = sum(count - 1 for count in uuids.values())
    events = sum(
        s["events"]
        for d in manifest["deliveries"].values()
        for f, s in d["families"].items()
        if f == "datastream"
    )
    assert len(uuids) == events
    assert {"insert", "update", "delete", "snapshot"} <= set(ops)
    # Duplicates: 1% of lines again, plus a small file landed twice under another name.
    assert 0.01 <= duplicates / events <= 0.04
    assert manifest["families"]["datastream"]["late_files"] >= 1


def test_debezium_records_flatten_with_placeholders_and_key_changes(generated):
    out, manifest = generated
    ops, unknown_updates, updates_main, offsets = Counter(), 0, 0, Counter()
    for delivery, source, line in lines_of(out, "debezium"):
        row = flatten_record(line, source, DEBEZIUM_SETTINGS)
        assert row["error"] is None, (row, line[:300])
        ops[row["op"]] += 1
        record = json.loads(line)
        if delivery.startswith("wave-"):  # the two top-ups are alternatives, same offsets
            offsets[(record["topic"], record["partition"], record["offset"])] += 1
        if source == "pg_main" and row["op"] == "update":
            updates_main += 1
            unknown_updates += any(v is None for v in row["row_image"].values())
    assert {"insert", "update", "delete", "snapshot", None} <= set(ops)  # None: tombstones
    assert unknown_updates / updates_main == pytest.approx(workload.TOAST_SHARE, abs=0.08)
    same_offset_again = sum(count - 1 for count in offsets.values())
    assert same_offset_again / len(offsets) == pytest.approx(workload.DUPLICATE_SHARE, abs=0.006)
    totals = Counter()
    for delivery in manifest["deliveries"].values():
        totals.update(delivery["families"]["debezium"])
    assert totals["pk_changes"] >= 1
    assert manifest["families"]["debezium"]["late_files"] >= 1


def debezium_transactions(out: Path, deliveries: list[str]) -> tuple[dict, dict]:
    """(each transaction's END counts, each transaction's landed events as (collection,
    order)) of the Debezium lines of `deliveries`, by (server, transaction)."""
    ends: dict[tuple[str, str], dict[str, int]] = {}
    events: dict[tuple[str, str], set[tuple[str, int]]] = {}
    for delivery, source, line in lines_of(out, "debezium"):
        if delivery not in deliveries:
            continue
        row = flatten_record(line, source, DEBEZIUM_SETTINGS)
        transaction = (source, row["transaction_key"])
        if row["transaction_status"] == "END":
            assert (
                ends.setdefault(transaction, row["transaction_collections"])
                == (row["transaction_collections"])
            )
        elif row["transaction_key"] is not None and row["op"] is not None:
            events.setdefault(transaction, set()).add(
                (row["source_table"], row["data_collection_order"])
            )
        elif row["op"] not in (None, "snapshot"):
            raise AssertionError(f"a change without its transaction: {line[:300]}")
    return ends, events


def is_whole(counts: dict[str, int], landed: set[tuple[str, int]]) -> bool:
    return all(
        {(collection, n) for n in range(1, count + 1)} <= landed
        for collection, count in counts.items()
    )


def test_debezium_transactions_are_whole_once_their_files_have_landed(generated):
    """Every change but a snapshot read carries its transaction's block, and each transaction's
    END (on its server's transaction topic, with the wave) counts exactly the events of it that
    the waves land, each top-up's too; a late file holds its transactions back meanwhile."""
    out, manifest = generated
    waves = manifest["waves"]
    for deliveries in [waves, *([*waves, f"topup-{mode}"] for mode in workload.TOPUP_MODES)]:
        ends, events = debezium_transactions(out, deliveries)
        assert ends and set(events) <= set(ends)
        for transaction, counts in ends.items():
            landed = events.get(transaction, set())
            assert is_whole(counts, landed), transaction
            assert len(landed) == sum(counts.values()), transaction
    ends, events = debezium_transactions(out, waves[:1])
    waiting = [t for t, counts in ends.items() if not is_whole(counts, events.get(t, set()))]
    assert waiting and manifest["families"]["debezium"]["late_files"] >= 1
    totals = Counter()
    for delivery in manifest["deliveries"].values():
        totals.update(delivery["families"]["debezium"])
    assert totals["transactions"] >= len(ends)


def test_a_server_without_changes_in_a_delivery_has_no_transaction_file(tmp_path):
    """At 2,000 events the adversarial top-up changes no key of pg_main: no file of BEGIN and
    END records for it, and every transaction file holds records."""
    spec = workload.Spec(scale=2_000, seed=42, waves=2, jobs=1)
    workload.generate(spec, tmp_path)
    assert not (tmp_path / "topup-adversarial" / "debezium" / "pg_main").exists()
    files = list(tmp_path.rglob("*.transaction+0+*.jsonl"))
    assert files and all(path.read_text().strip() for path in files)


def test_pgoutput_log_decodes_and_its_changes_type(generated):
    out, manifest = generated
    kinds, unchanged_toast, updates = Counter(), 0, 0
    relation = None
    for delivery in manifest["deliveries"]:
        in_stream = False
        for path in sorted((out / delivery / "pgoutput").rglob("*.jsonl")):
            if is_snapshot_file(path):
                continue
            for line in path.read_text().splitlines():
                entry = json.loads(line)
                tag = base64.b64decode(entry["data"])[:1]
                row = message_row((line, in_stream and tag not in (b"S", b"E")), workload.PG_SLOT)
                assert row["error"] is None, (row, line)
                in_stream = {b"S": True, b"E": False}.get(tag, in_stream)
                kinds[row["kind"]] += 1
                if row["kind"] == "relation":
                    relation = row["relation_json"]
                if row["kind"] in ("insert", "update", "delete"):
                    changes = change_rows(
                        (
                            relation,
                            row["kind"],
                            row["old_kind"],
                            row["old_tuple_json"],
                            row["new_tuple_json"],
                        ),
                        workload.PG_SLOT,
                    )
                    assert all(change["error"] is None for change in changes), changes
                    if row["kind"] == "update" and len(changes) == 1:
                        updates += 1
                        unchanged_toast += any(v is None for v in changes[0]["row_image"].values())
    assert {"begin", "commit", "relation", "insert", "update", "delete"} <= set(kinds)
    assert kinds["stream_commit"] >= 1 and kinds["stream_abort"] >= 1
    assert unchanged_toast / updates == pytest.approx(workload.TOAST_SHARE, abs=0.1)
    totals = Counter()
    for delivery in manifest["deliveries"].values():
        totals.update(delivery["families"]["pgoutput"])
    assert totals["streamed_txns"] >= 1
    assert totals["aborted_subtxns"] >= 1
    assert totals["resent_open_txns"] >= 1  # open at a wave's end, sent again by the next read
    assert totals["pk_changes"] >= 1


def test_pgoutput_open_transaction_is_sent_again_from_its_first_segment(generated):
    out, manifest = generated
    first_segments = Counter()
    for delivery in manifest["waves"]:
        for path in sorted((out / delivery / "pgoutput").rglob("*.jsonl")):
            if is_snapshot_file(path):
                continue
            for line in path.read_text().splitlines():
                data = base64.b64decode(json.loads(line)["data"])
                if data[:1] == b"S":
                    message = decode_message(data, False)
                    if message["first_segment"]:
                        first_segments[message["xid"]] += 1
    assert any(count == 2 for count in first_segments.values())


def test_spanner_rows_have_the_contract_shape(generated):
    out, _ = generated
    kinds, captures, dialects = Counter(), set(), set()
    for _, _, line in lines_of(out, "spanner"):
        row = json.loads(line)
        assert "partition_token" in row
        if "ChangeRecord" in row:
            dialects.add("googlesql")
            (entry,) = row["ChangeRecord"]
            (kind,) = [k for k, v in entry.items() if v]
            (record,) = entry[kind]
        else:
            dialects.add("postgresql")
            (kind,) = [k for k in row if k != "partition_token"]
            record = row[kind]
        kinds[kind] += 1
        if kind == "data_change_record":
            captures.add(record["value_capture_type"])
            assert record["mod_type"] in {"INSERT", "UPDATE", "DELETE"}
            assert {"keys", "new_values", "old_values"} <= set(record["mods"][0])
            assert record["number_of_records_in_transaction"] >= 1
    assert set(kinds) == {"data_change_record", "heartbeat_record", "child_partitions_record"}
    try:  # the Spanner decoder, where this version has it
        from python_udfs.spanner import flatten_line  # type: ignore[import-not-found]
    except ImportError:
        return
    for _, source, line in lines_of(out, "spanner"):
        assert all(row["error"] is None for row in flatten_line(line, source)), line
    assert captures == {"OLD_AND_NEW_VALUES", "NEW_VALUES", "NEW_ROW", "NEW_ROW_AND_OLD_VALUES"}
    assert dialects == {"postgresql", "googlesql"}


@pytest.mark.parametrize("family", ["pgoutput", "spanner"])
def test_keys_before_the_log_are_rows_of_snapshot_files_that_decode(generated, family):
    """The raw log families' early keys are no part of their log: each is one row of a
    snapshot file of the base waves, which the family's snapshot stages decode."""
    out, manifest = generated
    snapshots = BY_NAME[family].snapshots
    assert snapshots is not None
    rows = 0
    header_json = None
    for delivery, source, line in lines_of(out, family, snapshots=True):
        assert delivery.startswith("wave-")
        if '"snapshot"' in line[:12]:
            header = snapshots.header.decode(line, source, DEBEZIUM_SETTINGS)
            assert header["error"] is None, header
            header_json = header["header_json"]
            continue
        row = snapshots.row.decode((line, header_json), source, DEBEZIUM_SETTINGS)
        assert row["error"] is None and row["op"] == "snapshot", row
        rows += 1
    spec = workload.Spec(scale=20_000, seed=7, waves=4, jobs=1)
    plan = workload.plan_base(spec, family, workload.family_events(spec)[family])
    assert rows == (plan.op == workload.OP_SNAPSHOT).sum() > 0
    totals = Counter()
    for delivery in manifest["deliveries"].values():
        totals.update(delivery["families"][family])
    assert totals["snapshot_lines"] > rows


def test_topups_differ_in_which_keys_they_touch():
    spec = workload.Spec(scale=50_000, seed=3, waves=4)
    base = workload.plan_base(spec, "debezium", 20_000)
    realistic = workload.plan_topup(spec, base, "realistic")
    adversarial = workload.plan_topup(spec, base, "adversarial")
    existing = realistic.key[realistic.key < base.n_keys]
    # Realistic: most changes hit the newest keys; a few late ones hit old keys.
    assert (existing >= 0.9 * base.n_keys).mean() > 0.8
    assert (realistic.pos < len(base.key)).sum() >= 1  # late: placed back in source order
    # Adversarial: spread over keys of all ages.
    assert (adversarial.key >= 0.9 * base.n_keys).mean() < 0.2
    assert adversarial.key.min() < 0.1 * base.n_keys


def test_live_keys_follow_deletes_and_key_changes():
    spec = workload.Spec(scale=10_000, seed=5, waves=2)
    base = workload.plan_base(spec, "pgoutput", 10_000)
    deleted = set(base.key[base.op == workload.OP_DELETE].tolist())
    changed = set(base.key[base.op == workload.OP_PK_CHANGE].tolist())
    assert deleted and changed
    live = set(base.live.tolist())
    assert not (deleted | changed) & live
    assert {k + workload.PK_KEY_OFFSET for k in changed} <= live
    assert len(live) == base.n_keys - len(deleted)


def test_stage_links_one_delivery_into_a_landing_root(generated, tmp_path):
    out, _ = generated
    count = workload.stage(out, "wave-0001", tmp_path, families=("debezium",))
    staged = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert count == len(staged) > 0
    assert all(p.relative_to(tmp_path).parts[0] == "debezium" for p in staged)
    workload.unstage(out, "wave-0001", tmp_path)
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]


# ---- Datastream Avro, Spanner splits and merges, truncates, the expected rows ----------------


def test_datastream_avro_files_have_the_envelope_and_decode(generated):
    out, manifest = generated
    files = sorted(p for d in manifest["deliveries"] for p in (out / d / "datastream").rglob("*"))
    avro = [p for p in files if p.suffix == ".avro"]
    assert avro and all(p.relative_to(out).parts[2] == "mysql_shop" for p in avro)
    totals = Counter()
    for delivery in manifest["deliveries"].values():
        totals.update(delivery["families"]["datastream"])
    assert totals["avro_files"] == len(avro)
    uuids = set()
    for path in avro:
        with path.open("rb") as handle:
            reader = fastavro.reader(handle)
            schema = reader.writer_schema
            rows = list(reader)
        assert [f["name"] for f in schema["fields"]] == [
            "stream_name",
            "read_method",
            "object",
            "schema_key",
            "uuid",
            "read_timestamp",
            "source_timestamp",
            "sort_keys",
            "source_metadata",
            "payload",
        ]
        payload = {f["name"]: f["type"] for f in schema["fields"][-1]["type"]["fields"]}
        assert payload["amount"][1]["logicalType"] == "decimal"
        assert payload["updated_at"][1]["logicalType"] == "timestamp-micros"
        assert all(isinstance(r["payload"]["amount"], Decimal) for r in rows)
        assert all(r["source_metadata"]["database"] == "shop" for r in rows)
        for number, line, error in avro_file_events(str(path)):
            assert error is None and line is not None, (path, number, error)
            row = flatten_event(line, "mysql_shop")
            assert row["error"] is None, row
            uuids.add(row["event_id"])
    assert len(uuids) == totals["avro_events"] > 0
    # Their events are counted with the JSON files' (test_datastream_lines_flatten_...).


def _spanner_partition_rows(out: Path, deliveries: list[str]) -> dict[str, list[dict]]:
    """Per stream, the decoded rows of every landed line of its log, in landing order."""
    from python_udfs.spanner import flatten_line

    streams: dict[str, list[dict]] = {}
    for delivery in deliveries:
        for path in sorted((out / delivery / "spanner").rglob("*.jsonl")):
            if is_snapshot_file(path):
                continue
            stream = path.relative_to(out / delivery / "spanner").parts[0]
            for line in path.read_text().splitlines():
                streams.setdefault(stream, []).extend(flatten_line(line, stream))
    return streams


def test_spanner_partitions_split_and_merge_children_after_parents(generated):
    out, manifest = generated
    totals = Counter()
    for delivery in manifest["deliveries"].values():
        totals.update(delivery["families"]["spanner"])
    assert totals["splits"] >= 1 and totals["merges"] >= 1
    for stream, rows in _spanner_partition_rows(out, manifest["waves"]).items():
        parents_of: dict[str, set] = {}
        ended: dict[str, int] = {}  # partition -> where its child partitions record ends it
        first_record: dict[str, int] = {}
        last_record: dict[str, int] = {}
        for row in rows:
            assert row["error"] is None, row
            token = row["partition_token"]
            if row["record_kind"] == "child_partitions":
                parents_of.setdefault(row["child_token"], set()).update(row["parent_tokens"])
                if token is not None:
                    ended[token] = row["record_ts"]
            elif row["record_kind"] != "heartbeat":
                first_record.setdefault(token, row["record_ts"])
                last_record[token] = row["record_ts"]
        assert any(len(parents) == 2 for parents in parents_of.values()), stream  # a merge
        children_of = Counter(p for parents in parents_of.values() for p in parents)
        assert any(count == 2 for count in children_of.values()), stream  # a split
        for child, parents in parents_of.items():
            for parent in parents:
                # Every parent ends; its records come before, its children's after.
                assert parent in ended, (stream, parent)
                assert last_record.get(parent, 0) <= ended[parent], (stream, parent)
                if child in first_record:
                    assert first_record[child] >= ended[parent], (stream, child, parent)


def test_truncates_empty_the_side_tables_and_live_keys_account_for_them(generated):
    out, manifest = generated
    waves = manifest["spec"]["waves"]
    live_side = workload.side_live_keys(waves)
    truncates = sum(map(workload.truncates_in, range(waves)))
    assert truncates >= 1 and 0 < len(live_side) < waves * workload.SIDE_ROWS
    # Debezium: op t records (no key) in the side topic, then the wave's inserts.
    seen = []
    for _, _, line in lines_of(out, "debezium"):
        record = json.loads(line)
        if record["topic"].endswith(".sales.promotions"):
            row = flatten_record(line, "pg_lite", DEBEZIUM_SETTINGS)
            assert row["error"] is None, row
            seen.append(row["op"] if row["op"] == "truncate" else json.loads(row["key_json"])["id"])
    assert seen.count("truncate") == truncates
    after_last = seen[len(seen) - 1 - seen[::-1].index("truncate") + 1 :]
    assert after_last == live_side
    # pgoutput: Truncate messages of the side relation, then its inserts.
    oids = []
    for delivery in manifest["waves"]:
        for path in sorted((out / delivery / "pgoutput").rglob("*.jsonl")):
            if is_snapshot_file(path):
                continue
            for line in path.read_text().splitlines():
                data = base64.b64decode(json.loads(line)["data"])
                if data[:1] == b"T":
                    oids.append(decode_message(data, False)["relation_oids"])
    assert oids == [[workload.PG_SIDE_OID]] * truncates
    for family in ("debezium", "pgoutput"):
        facts = manifest["families"][family]
        assert facts["side_table"] == {
            "events": waves * workload.SIDE_ROWS + truncates,
            "truncates": truncates,
            "live_keys": len(live_side),
        }
        plan = workload.plan_base(
            workload.Spec(scale=20_000, seed=7, waves=4, jobs=1),
            family,
            facts["base_events"],
        )
        assert facts["live_keys"]["base"] == len(plan.live) + len(live_side)


UNKNOWN = object()
# The writers of the families with snapshot files.
GENERATED_FILE = {
    "pgoutput": workload.pgoutput.write_file,
    "spanner": workload.spanner.write_file,
}


def _decoded_change(family: str, plan, i: int, kind: int = 0) -> dict:
    """The row image (column -> JSON value, UNKNOWN where the change does not carry it) the
    project's decoder makes of change i, written as the workload writes it (kind: a Debezium
    record kind)."""
    sub = int(workload.GENERATORS[family].sub_source(plan.key[i : i + 1])[0])
    chunk = workload.Chunk(family, "", sub, 0, 0, np.array([i]))
    snapshots = BY_NAME[family].snapshots
    if snapshots is not None and plan.op[i] == workload.OP_SNAPSHOT:
        chunk.extra = {"snapshot": True}
        header_line, row_line = GENERATED_FILE[family](chunk, plan, 7)[0]
        header = snapshots.header.decode(header_line, chunk.source, DEBEZIUM_SETTINGS)
        image = snapshots.row.decode((row_line, header["header_json"]), chunk.source)["row_image"]
    elif family == "datastream":
        line = workload.datastream._datastream_line(plan, i, 7, sub)
        image = flatten_event(line, workload.DS_SOURCES[sub][0])["row_image"]
    elif family == "debezium":
        chunk.extra = {
            "partition": 0,
            "kinds": np.array([kind]),
            "offsets": np.array([0]),
            "orders": np.array([1]),
        }
        line = workload.debezium.write_file(chunk, plan, 7)[0][0]
        image = flatten_record(line, workload.DBZ_SERVERS[sub][0], DEBEZIUM_SETTINGS)["row_image"]
    elif family == "pgoutput":
        data = workload.pgoutput._pg_change(plan, i, None, workload.FileStats())
        row = message_row((pgoutput_encoder.slot_line(1, 1, data), False), workload.PG_SLOT)
        relation = message_row(
            (pgoutput_encoder.slot_line(1, 1, workload.PG_RELATION), False), workload.PG_SLOT
        )
        changes = change_rows(
            (
                relation["relation_json"],
                row["kind"],
                row["old_kind"],
                row["old_tuple_json"],
                row["new_tuple_json"],
            ),
            workload.PG_SLOT,
        )
        image = changes[-1]["row_image"]
    else:
        from python_udfs.spanner import flatten_line

        line = workload.spanner.write_file(chunk, plan, 7)[0][0]
        image = flatten_line(line, workload.SP_STREAMS[sub][0])[0]["row_image"]
    return {c: UNKNOWN if v is None else json.loads(v) for c, v in image.items()}


def _plan_key(family: str, row: dict) -> int:
    """The plan's key id of a sampled row (a primary key change's new key: its new id)."""
    key = row["key"]
    if family == "debezium" and row["source_name"] == "pg_lite":
        return (int(key["order_id"]) - 1) * 4 + int(key["line_no"]) - 1
    return int(next(iter(key.values())))


@pytest.mark.parametrize("family", workload.FAMILIES)
def test_expected_rows_are_what_the_decoders_make_of_each_keys_changes(family):
    """A sampled key's expected row is its last change as decoded, its columns the last change
    does not carry (TOAST, a primary key change's new key, Spanner's changed-only updates)
    those of the key's latest change that carries them; the side table's rows are those
    inserted since its last truncate."""
    spec = workload.Spec(scale=20_000, seed=7, waves=4, jobs=1)
    plan = workload.plan_base(spec, family, workload.family_events(spec)[family])
    rows = workload.expected_sample(spec, plan, np.zeros(len(plan.key), bool))
    kinds = Counter(why for row in rows for why in row["why"])
    assert kinds["uniform"] >= 1 and kinds["backfill"] >= 1 and kinds["updated"] >= 1
    if family in ("debezium", "pgoutput"):
        assert kinds["toast"] >= 1 and kinds["pk_successor"] >= 1
        side = [row for row in rows if "after_truncate" in row["why"]]
        assert [row["key"]["id"] for row in side] == workload.side_live_keys(spec.waves)
    if family == "spanner":
        assert kinds["changed_only"] >= 1
    main = [row for row in rows if "after_truncate" not in row["why"]]
    assert len(main) == workload.SAMPLE_KEYS
    live = set(plan.live.tolist())
    unknown_seen = 0
    for row in main:
        new_id = _plan_key(family, row)
        assert new_id in live
        old = new_id - workload.PK_KEY_OFFSET if new_id >= workload.PK_KEY_OFFSET else new_id
        changes = np.flatnonzero(plan.key == old).tolist()
        kind = workload.REC_PK_CREATE if new_id != old else workload.REC_CHANGE
        decoded = _decoded_change(family, plan, changes[-1], kind)
        assert set(decoded) <= set(row["row"]), (family, row)
        for column in row["row"]:
            value = decoded.get(column, UNKNOWN)  # Spanner's changed-only updates leave it out
            if value is UNKNOWN:
                unknown_seen += 1
                carrier = next(
                    i for i in reversed(changes) if workload.GENERATORS[family].carries_all(plan, i)
                )
                value = _decoded_change(family, plan, carrier)[column]
            assert row["row"][column] == value, (family, row, column, value)
    assert unknown_seen >= 1 or family == "datastream"


def test_decode_profile_times_every_base_line_of_each_family(generated):
    """The decoding profile reads every line the base waves land (Avro records included) and
    decodes each without an error: the generator's lines are valid input."""
    out, manifest = generated
    for family in (entry.name for entry in FAMILIES):
        result = decode_profile.profile(out, family)
        landed = sum(
            delivery["families"].get(family, {}).get("lines", 0)
            - delivery["families"].get(family, {}).get("snapshot_lines", 0)
            for name, delivery in manifest["deliveries"].items()
            if name.startswith("wave-")
        )
        assert result["lines"] == landed > 0, family
        assert result["errors"] == 0, family
        assert result["us_per_line"] > 0
