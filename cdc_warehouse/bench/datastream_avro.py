"""Datastream's Avro files of a MySQL table, as the benchmark's generator and the tests write
them. Datastream wraps every row in one envelope (the event fields it documents, the source's
``source_metadata``, the row as a ``payload`` record); the files differ only in their
payload's columns, so the envelope is here once."""

from __future__ import annotations

import io
from typing import Any

import fastavro

# The record Datastream writes for a MySQL DATETIME column (a wall-clock date and time, no
# zone), its logical types on the field types where Avro readers apply them.
DATETIME_RECORD: dict[str, Any] = {
    "type": "record",
    "name": "datetime",
    "fields": [
        {"name": "date", "type": {"type": "int", "logicalType": "date"}},
        {"name": "time", "type": {"type": "long", "logicalType": "time-micros"}},
    ],
}


def mysql_event_schema(name: str, payload_fields: list[dict[str, Any]]) -> dict[str, Any]:
    """The Avro schema of a MySQL table's Datastream events, the record ``name`` in namespace
    ``datastream``, its payload holding ``payload_fields``."""
    return {
        "type": "record",
        "name": name,
        "namespace": "datastream",
        "fields": [
            {"name": "stream_name", "type": "string"},
            {"name": "read_method", "type": "string"},
            {"name": "object", "type": "string"},
            {"name": "schema_key", "type": "string"},
            {"name": "uuid", "type": "string"},
            {"name": "read_timestamp", "type": {"type": "long", "logicalType": "timestamp-millis"}},
            {
                "name": "source_timestamp",
                "type": {"type": "long", "logicalType": "timestamp-millis"},
            },
            {"name": "sort_keys", "type": {"type": "array", "items": ["string", "long"]}},
            {
                "name": "source_metadata",
                "type": {
                    "type": "record",
                    "name": "source_metadata",
                    "fields": [
                        {"name": "table", "type": "string"},
                        {"name": "database", "type": "string"},
                        {"name": "primary_keys", "type": {"type": "array", "items": "string"}},
                        {"name": "log_file", "type": "string"},
                        {"name": "log_position", "type": "long"},
                        {"name": "change_type", "type": "string"},
                        {"name": "is_deleted", "type": "boolean"},
                    ],
                },
            },
            {
                "name": "payload",
                "type": {"type": "record", "name": "payload", "fields": payload_fields},
            },
        ],
    }


def avro_container(
    schema: dict[str, Any], records: list[dict[str, Any]], **writer_options: Any
) -> bytes:
    """An Avro object container file of ``records``; ``writer_options`` go to fastavro's writer
    (a codec, a sync marker for bytes that do not change from run to run, ...)."""
    out = io.BytesIO()
    fastavro.writer(out, fastavro.parse_schema(schema), records, **writer_options)
    return out.getvalue()
