"""An envelope field of the wrong JSON type is quarantined with a reason naming the field, or
read exactly as the original where the source spells it both ways (a position as a number or
as decimal text): never applied as something else. Every field of real sample events is
respelled as other JSON types: a boolean as "true" or 1, a number as text, text as an array or
object, an array or object as JSON text. Datastream: the event's fields and its
source_metadata's; Debezium: the Kafka record's fields, and the change event's own (payload.op,
payload.ts_ms, payload.source.*, ...) inside its JSON text; Spanner: the line's partition_token
and every field of its record (data change, heartbeat, child partitions) and of each mod;
pgoutput: the slot line's lsn, xid and data (the message inside is binary). The line kinds of
issue 59 too: every field of a snapshot header and of its columns, every value of a snapshot
row, every field of a Debezium transaction record (the sample's), its data collections and a
change event's transaction block."""

from __future__ import annotations

import json
from typing import Any

import pytest

from python_udfs import datastream, debezium, pgoutput, spanner
from python_udfs.decoding import DecodeSettings
from python_udfs.pgoutput import snapshot as pgoutput_snapshots
from python_udfs.spanner import snapshot as spanner_snapshots
from tests.damaged_lines import NEW_KIND_FILES, every_sample_line


def respellings(value: Any) -> list[Any]:
    """The value in other JSON types, keeping its meaning where another type can hold it."""
    if value is None:
        return []  # null is an absent field, which the rules read as such
    if isinstance(value, bool):
        return [str(value).lower(), int(value), [value]]
    if isinstance(value, (int, float)):
        spelled = [str(value), [value], {"value": value}]
        return spelled + ([bool(value)] if value in (0, 1) else [])
    if isinstance(value, str):
        spelled: list[Any] = [[value], {"value": value}]
        if value.isdigit() and str(int(value)) == value:  # "007" is text a number cannot keep
            spelled.append(int(value))
        if value in ("true", "false"):
            spelled.append(value == "true")
        return spelled
    return [json.dumps(value), {"value": value} if isinstance(value, list) else [value]]


def datastream_events() -> list[dict[str, Any]]:
    """Every sample event (JSON files) that decodes."""
    return [
        json.loads(line)
        for line in every_sample_line("datastream")
        if not datastream.flatten_event(line, "sample").get("error")
    ]


def mutations(event: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(field name, event with that field respelled) for every top-level and source_metadata
    field."""
    mutated = []
    for field, value in event.items():
        for spelled in respellings(value):
            mutated.append((field, {**event, field: spelled}))
    for field, value in (event.get("source_metadata") or {}).items():
        for spelled in respellings(value):
            meta = {**event["source_metadata"], field: spelled}
            mutated.append((field, {**event, "source_metadata": meta}))
    return mutated


EVENTS = datastream_events()


def test_the_sample_gives_events_of_every_source_type():
    decoded = {datastream.flatten_event(json.dumps(e), "s")["source_type"] for e in EVENTS}
    assert decoded >= {"mysql", "oracle", "postgresql", "sqlserver", "spanner", "salesforce"}


@pytest.mark.parametrize("index", range(len(EVENTS)))
def test_a_respelled_datastream_field_is_quarantined_by_name_or_read_the_same(index):
    event = EVENTS[index]
    original = datastream.flatten_event(json.dumps(event), "s")
    for field, mutated in mutations(event):
        result = datastream.flatten_event(json.dumps(mutated), "s")
        if result.get("error"):
            assert field in result["error"], (field, mutated, result["error"])
        else:
            assert result == original, (field, mutated)


@pytest.mark.parametrize("spelled", ["true", "false ", "no", 1, ["true"]])
def test_is_deleted_must_be_a_json_boolean(spelled):
    """The string "true" used to turn a delete into an upsert; "no" made a live key."""
    event = next(e for e in EVENTS if e.get("source_metadata", {}).get("is_deleted") is False)
    mutated = {**event, "source_metadata": {**event["source_metadata"], "is_deleted": spelled}}
    result = datastream.flatten_event(json.dumps(mutated), "s")
    assert "is_deleted" in (result.get("error") or ""), result


DEBEZIUM_SETTINGS = DecodeSettings(placeholders=("__debezium_unavailable_value",))


def debezium_records() -> list[dict[str, Any]]:
    """Every sample record whose change event decodes to a change (not a heartbeat or a
    tombstone), its payload text parsed."""
    records = []
    for line in every_sample_line("debezium"):
        decoded = debezium.flatten_record(line, "sample", DEBEZIUM_SETTINGS)
        if decoded.get("op") and not decoded.get("error"):
            records.append(json.loads(line))
    return records


def debezium_decoded(record: dict[str, Any], change: dict[str, Any]) -> dict[str, Any]:
    """`record` with `change` as its value's JSON text, in the envelope it came in."""
    value = json.loads(record["payload"])
    enveloped = isinstance(value, dict) and set(value) == {"schema", "payload"}
    text = json.dumps({**value, "payload": change} if enveloped else change)
    return debezium.flatten_record(json.dumps({**record, "payload": text}), "s", DEBEZIUM_SETTINGS)


def change_of(record: dict[str, Any]) -> dict[str, Any]:
    value = json.loads(record["payload"])
    return value["payload"] if set(value) == {"schema", "payload"} else value


def debezium_mutations(record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(field name, decoded result) for every change-event and source field respelled."""
    change = change_of(record)
    results = []
    for field, value in change.items():
        if field in ("before", "after"):
            continue  # row images: their values are the row's, not the envelope's
        for spelled in respellings(value):
            results.append((field, debezium_decoded(record, {**change, field: spelled})))
    for field, value in change["source"].items():
        for spelled in respellings(value):
            source = {**change["source"], field: spelled}
            results.append((field, debezium_decoded(record, {**change, "source": source})))
    for field, value in record.items():
        if field != "payload":
            for spelled in respellings(value):
                mutated = json.dumps({**record, field: spelled})
                results.append((field, debezium.flatten_record(mutated, "s", DEBEZIUM_SETTINGS)))
    return results


RECORDS = debezium_records()


def test_the_sample_gives_debezium_changes_of_every_op():
    ops = {debezium_decoded(r, change_of(r))["op"] for r in RECORDS}
    assert ops >= {"insert", "update", "delete"}


@pytest.mark.parametrize("index", range(len(RECORDS)))
def test_a_respelled_debezium_field_is_quarantined_by_name_or_read_the_same(index):
    record = RECORDS[index]
    original = debezium_decoded(record, change_of(record))
    for field, result in debezium_mutations(record):
        if result.get("error"):
            assert field in result["error"], (field, result["error"])
        else:
            assert result == original, field


RECORD_TIMES = ("commit_timestamp", "timestamp", "start_timestamp")


def spanner_records() -> list[dict[str, Any]]:
    """Every sample line that decodes without error, parsed."""
    return [
        json.loads(line)
        for line in every_sample_line("spanner")
        if not any(row.get("error") for row in spanner.flatten_line(line, "sample"))
    ]


def record_dicts(node: Any) -> list[dict[str, Any]]:
    """The record struct of a line (the object holding its time) and the mods in it, in
    either dialect's nesting: each may be respelled in place."""
    if isinstance(node, list):
        return [found for item in node for found in record_dicts(item)]
    if not isinstance(node, dict):
        return []
    own = [node] if any(time in node for time in RECORD_TIMES) else []
    mods = node.get("mods") if own else None
    if isinstance(mods, list):
        own += [mod for mod in mods if isinstance(mod, dict)]
    return own or [found for value in node.values() for found in record_dicts(value)]


def spanner_mutations(document: dict[str, Any]) -> list[tuple[str, str]]:
    """(field name, line) for the token and every record and mod field respelled."""
    lines = []
    for spelled in respellings(document.get("partition_token")):
        lines.append(("partition_token", json.dumps({**document, "partition_token": spelled})))
    for index, _ in enumerate(record_dicts(document)):
        copy = json.loads(json.dumps(document))
        target = record_dicts(copy)[index]
        for field, value in list(target.items()):
            for spelled in respellings(value):
                target[field] = spelled
                lines.append((field, json.dumps(copy)))
            target[field] = value
    return lines


SPANNER_LINES = spanner_records()


def test_the_sample_gives_every_spanner_record_kind():
    kinds = {
        row["record_kind"]
        for d in SPANNER_LINES
        for row in spanner.flatten_line(json.dumps(d), "s")
    }
    assert kinds == {"data_change", "heartbeat", "child_partitions"}


@pytest.mark.parametrize("index", range(len(SPANNER_LINES)))
def test_a_respelled_spanner_field_is_quarantined_by_name_or_read_the_same(index):
    document = SPANNER_LINES[index]
    original = spanner.flatten_line(json.dumps(document), "s")
    for field, line in spanner_mutations(document):
        rows = spanner.flatten_line(line, "s")
        errors = [row["error"] for row in rows if row.get("error")]
        if errors:
            assert all(field in error for error in errors), (field, line, errors)
        else:
            assert rows == original, (field, line)


def pgoutput_lines() -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in every_sample_line("pgoutput")
        if not pgoutput.message_row((line, False), "s")["error"]
    ]


PGOUTPUT_LINES = pgoutput_lines()


def test_a_respelled_pgoutput_field_is_quarantined_by_name_or_read_the_same():
    assert len(PGOUTPUT_LINES) > 20
    for entry in PGOUTPUT_LINES:
        original = pgoutput.message_row((json.dumps(entry), False), "s")
        for field, value in entry.items():
            for spelled in respellings(value):
                result = pgoutput.message_row((json.dumps({**entry, field: spelled}), False), "s")
                if result["error"]:
                    assert field in result["error"], (field, spelled, result["error"])
                else:
                    assert result == original, (field, spelled)


SNAPSHOT_KINDS = {
    "pgoutput_snapshot": pgoutput_snapshots,
    "spanner_snapshot": spanner_snapshots,
    "spanner_snapshot_pg": spanner_snapshots,
}


def respelled_fields(target: dict[str, Any], document: Any) -> list[tuple[str, str]]:
    """(field name, the document as JSON text) for each field of `target`, an object inside
    `document`, respelled in place."""
    results = []
    for field, value in list(target.items()):
        for spelled in respellings(value):
            target[field] = spelled
            results.append((field, json.dumps(document)))
        target[field] = value
    return results


@pytest.mark.parametrize("kind", sorted(SNAPSHOT_KINDS))
def test_a_respelled_snapshot_header_field_is_quarantined_by_name_or_read_the_same(kind):
    module = SNAPSHOT_KINDS[kind]
    document = json.loads(NEW_KIND_FILES[kind][0])
    original = module.snapshot_header(json.dumps(document), "s")
    assert original["error"] is None
    header = document["snapshot"]
    columns = header.get("columns") or header.get("column_types")
    mutated = respelled_fields(header, document)
    for column in columns:
        mutated += respelled_fields(column, document)
    for field, line in mutated:
        result = module.snapshot_header(line, "s")
        if result["error"]:
            assert field in result["error"], (field, line, result["error"])
        else:
            assert result == original, (field, line)


def row_value_slots(values: Any) -> list[tuple[str, Any]]:
    """(column name, key of its value in `values`): a pgoutput row lists its values in the
    header's column order, a Spanner row names them."""
    return list(values.items()) if isinstance(values, dict) else list(enumerate(values))


@pytest.mark.parametrize("kind", sorted(SNAPSHOT_KINDS))
def test_a_respelled_snapshot_value_is_quarantined_by_column_or_read_the_same(kind):
    """A value of another JSON type does not fit its column, or means the same (an INT64 as a
    number or as decimal text). A JSON column's value is any JSON, so it has no other
    spelling."""
    module = SNAPSHOT_KINDS[kind]
    header_line, *rows = (line.decode() for line in NEW_KIND_FILES[kind])
    header = module.snapshot_header(header_line, "s")
    columns = json.loads(header_line)["snapshot"]
    names = [c["name"] for c in columns.get("columns") or columns.get("column_types")]
    json_columns = {
        c["name"] for c in columns.get("column_types") or () if "JSON" in json.dumps(c.get("type"))
    }
    for row_line in rows:
        document = json.loads(row_line)
        original = module.snapshot_row((row_line, header["header_json"]), "s")
        assert original["error"] is None
        values = document["values"]
        for slot, value in row_value_slots(values):
            column = slot if isinstance(slot, str) else names[slot]
            if column in json_columns:
                continue
            for spelled in respellings(value):
                values[slot] = spelled
                result = module.snapshot_row((json.dumps(document), header["header_json"]), "s")
                if result["error"]:
                    assert f"column {column!r}" in result["error"], (column, spelled, result)
                else:
                    assert result == original, (column, spelled)
            values[slot] = value


def transaction_records() -> list[dict[str, Any]]:
    """Every sample record of a transaction: a BEGIN or END record, or a change event with a
    transaction block."""
    return [
        json.loads(line)
        for line in every_sample_line("debezium")
        if debezium.flatten_record(line, "sample", DEBEZIUM_SETTINGS)["transaction_key"]
    ]


TRANSACTION_RECORDS = transaction_records()


def test_the_sample_holds_transaction_records_and_blocks():
    statuses = {change_of(record).get("status") for record in TRANSACTION_RECORDS}
    assert statuses == {"BEGIN", "END", None}


@pytest.mark.parametrize("index", range(len(TRANSACTION_RECORDS)))
def test_a_respelled_transaction_field_is_quarantined_by_name_or_read_the_same(index):
    """Every field of a transaction record and of its data collections, and a change event's
    transaction block and its fields."""
    record = TRANSACTION_RECORDS[index]
    payload = change_of(record)
    original = debezium_decoded(record, payload)
    assert original["error"] is None and original["transaction_key"]
    mutated = []
    if "status" in payload:
        mutated += respelled_fields(payload, payload)
        for collection in payload.get("data_collections") or ():
            mutated += respelled_fields(collection, payload)
    else:
        mutated += [
            ("transaction", json.dumps({**payload, "transaction": spelled}))
            for spelled in respellings(payload["transaction"])
        ]
        mutated += respelled_fields(payload["transaction"], payload)
    assert mutated
    for field, text in mutated:
        result = debezium_decoded(record, json.loads(text))
        if result["error"]:
            assert field in result["error"], (field, text, result["error"])
        else:
            assert result == original, (field, text)
