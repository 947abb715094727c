"""The source families, each named once (docs/decisions/013): its landing directory and file
kinds, its decoding stages and their UDFs, its dbt models, where its sort position is built,
the version of that encoding, and the capabilities it has. Landing (cdc_warehouse/landing.py),
the UDF registration (python_udfs/registry.py), the benchmark and the tests read this list; the
SQL reads it through the macro `source_families` (macros/change_log/source_families.sql), which
tests/unit/test_families.py holds equal to it.

This module lives in `python_udfs` because Spark's Python workers import the record readers it
names (pickled by reference) from the package the session ships.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

from python_udfs import datastream, debezium, pgoutput, snapshots, spanner
from python_udfs.change_log import CHANGE_COLUMNS, spark_schema
from python_udfs.decoding import Decoder
from python_udfs.pgoutput import snapshot as pgoutput_snapshot
from python_udfs.spanner import snapshot as spanner_snapshot

# A record file's reader: its path in; (record number, line, load error) out, one per record.
RecordReader = Callable[[str], Iterator[tuple[int, str | None, str | None]]]

# Spark reads a gzip file's lines as those of the file it holds (by its .gz name); such a file
# cannot be split, so it keeps a partition of its own and its line numbers stay exact. Only a
# plain JSONL file can grow by appended lines; gzip and Avro files are written whole.
GROWING = ".jsonl"
GZIP = ".jsonl.gz"
JSONL = (GROWING, GZIP)


@dataclass(frozen=True)
class DecodeStage:
    """One stage of a family's decoding: a pure function of python_udfs/decoding.py's
    `Decoder` protocol, registered as the Arrow UDF `udf`. The SQL calls it with the columns of
    its unit, then the source name, then the settings it passes itself (`sql_settings`)."""

    udf: str
    decode: Decoder[Any, Any]
    # The fields of a row it returns: CHANGE_COLUMNS plus the family's extras for a stage that
    # makes changes.
    columns: tuple[tuple[str, str], ...]
    # The SQL arguments that make one unit: ("line",) for a line decoder.
    unit: tuple[str, ...] = ("line",)
    # True: a list of rows per unit (an array the stage's model explodes); False: one row.
    many: bool = False
    # Fields of DecodeSettings the SQL passes after the source name, as literals: read once
    # per batch. The others come from the registration (the declared keys).
    sql_settings: tuple[str, ...] = ()
    # False: its rows are not changes yet (pgoutput's messages, for the slot-log rule in SQL).
    makes_changes: bool = True

    @property
    def schema(self) -> str:
        """The UDF's result type, as Spark DDL."""
        struct = spark_schema(self.columns)
        return f"array<struct<{struct}>>" if self.many else struct


@dataclass(frozen=True)
class Models:
    """The family's dbt models, by the role the shared models read them in."""

    # Its landed lines (models/staging/): a build of the
    # families with new lines selects `<staging>+`.
    staging: str
    # The models of decoded rows whose rows with `error` set are quarantined (cdc_quarantine).
    decoded: tuple[str, ...]
    # What int_cdc__source_changes reads the family's changes from.
    changes: str
    # True: `changes` is a view of the family's keyed changes in the change-log shape
    # (`keyed_changes` over its events). False: a table of the rows its transactions released,
    # whose errors and truncates other models read, keyed by int_cdc__source_changes itself.
    changes_keyed: bool = True


# The first directory under a source's that holds its snapshot files (the SQL's rule: the macro
# `is_snapshot_file`).
SNAPSHOT_DIRECTORY = "snapshot"


@dataclass(frozen=True)
class Snapshots:
    """A raw log family's initial snapshot files, `<family>/<source>/snapshot/**` (CONTRACT §1
    "Initial snapshots"; the path rule is the macro `is_snapshot_file`): no part of the source's
    log, decoded in two stages of their own, each file's header once, then each row with it."""

    # Unit: a file's first line; one row of python_udfs/snapshots.py's HEADER_COLUMNS (plus the
    # family's extras), kept one row per file by `headers`.
    header: DecodeStage
    # Unit: (a further line, its file's header_json); a change-log row with op 'snapshot'.
    row: DecodeStage
    headers: str
    rows: str


@dataclass(frozen=True)
class Family:
    """A source family: a directory under the landing root, a decoder, its models."""

    name: str
    # Text files, split into lines by Spark.
    text_suffixes: tuple[str, ...]
    # Record files, decoded into lines by their reader on Spark's Python workers.
    record_readers: dict[str, RecordReader]
    # Its decoding, in order: the first stage reads a landed line, the last makes changes.
    stages: tuple[DecodeStage, ...]
    models: Models
    # Where `sort_pos`, the source's own order as sortable text, is built (docs/sources/).
    sort_position: str
    # The version of that encoding, `SORT_KEY_VERSION` of the family's decoder package, beside
    # the code it versions (raised when the family's decoding would give a change another
    # `sort_pos`, `txn_id`, `event_id` or transaction field its models count): the warehouse
    # records the versions it was built with, and `cdcw run` refuses to mix encodings until a
    # full refresh (cdc_warehouse/build_versions.py).
    sort_key_version: int
    # The model whose rows with op 'truncate' are the family's truncates (they name a table,
    # not a key; int_cdc__truncates); None: it has none.
    truncates: str | None = None
    # Where the family names its columns' types (cdc_source_columns): 'changes', as
    # `column_types` on each row of its first decoded model (NULL where a source gives none:
    # then the row image's columns are named); 'own', elsewhere, read by a CTE
    # `<family>_schemas` of cdc_source_columns; None: nowhere.
    column_types: Literal["changes", "own"] | None = None
    # What of the family waits for later lines (cdc_source_freshness counts it, in a CTE
    # `<family>_pending`); None: every change applies as it lands.
    pending: str | None = None
    # Its initial snapshot files; None: it has none (its source's own initial reads, if any,
    # are part of its log).
    snapshots: Snapshots | None = None

    @property
    def suffixes(self) -> tuple[str, ...]:
        return self.text_suffixes + tuple(self.record_readers)

    @property
    def all_stages(self) -> tuple[DecodeStage, ...]:
        """Every decoding stage the UDFs are registered for: the log's, then the snapshots'."""
        if self.snapshots is None:
            return self.stages
        return (*self.stages, self.snapshots.header, self.snapshots.row)


# In landing order.
FAMILIES: tuple[Family, ...] = (
    Family(
        "spanner",
        JSONL,
        {},
        # A row per mod of a data change record, per heartbeat and per child partition.
        stages=(DecodeStage("spanner_flatten", spanner.flatten_line, spanner.COLUMNS, many=True),),
        models=Models(
            staging="stg_spanner__lines",
            decoded=(
                "int_spanner__records",
                "int_spanner__snapshot_headers",
                "int_spanner__snapshot_rows",
            ),
            changes="int_spanner__changes",
            changes_keyed=False,
        ),
        sort_position=(
            "python_udfs/spanner/, `_data_change_rows`; snapshot rows "
            "python_udfs/spanner/snapshot.py, `snapshot_sort_pos`"
        ),
        sort_key_version=spanner.SORT_KEY_VERSION,
        column_types="own",
        pending=(
            "transactions not all of whose records have landed, and changes and snapshot rows "
            "above the stream's low watermark (int_spanner__transactions)"
        ),
        snapshots=Snapshots(
            header=DecodeStage(
                "spanner_snapshot_header",
                spanner_snapshot.snapshot_header,
                spanner_snapshot.SPANNER_HEADER_COLUMNS,
                makes_changes=False,
            ),
            row=DecodeStage(
                "spanner_snapshot_row",
                spanner_snapshot.snapshot_row,
                CHANGE_COLUMNS,
                unit=("line", "header_json"),
            ),
            headers="int_spanner__snapshot_headers",
            rows="int_spanner__snapshot_rows",
        ),
    ),
    Family(
        "datastream",
        JSONL,
        {".avro": datastream.avro_file_events},
        stages=(
            DecodeStage(
                "datastream_flatten",
                datastream.flatten_event,
                CHANGE_COLUMNS + datastream.EXTRA_COLUMNS,
            ),
        ),
        models=Models(
            staging="stg_datastream__lines",
            decoded=("int_datastream__events",),
            changes="int_datastream__changes",
        ),
        sort_position="python_udfs/datastream/, `_POSITIONS` (one function per source)",
        sort_key_version=datastream.SORT_KEY_VERSION,
        column_types="changes",
    ),
    Family(
        "debezium",
        JSONL,
        {},
        stages=(
            DecodeStage(
                "debezium_flatten",
                debezium.flatten_record,
                debezium.COLUMNS,
                sql_settings=("placeholders",),
            ),
        ),
        models=Models(
            staging="stg_debezium__lines",
            # An END that contradicts the transaction's first END is quarantined there.
            decoded=("int_debezium__events", "int_debezium__transaction_ends"),
            changes="int_debezium__changes",
            changes_keyed=False,
        ),
        sort_position="python_udfs/debezium/, `_flatten`",
        sort_key_version=debezium.SORT_KEY_VERSION,
        truncates="int_debezium__changes",
        column_types="changes",
        pending=(
            "transactions of a server with transaction metadata whose END record or some of "
            "the events it counts have not landed (int_debezium__pending_transactions)"
        ),
    ),
    Family(
        "pgoutput",
        JSONL,
        {},
        stages=(
            DecodeStage(
                "pgoutput_message",
                pgoutput.message_row,
                pgoutput.MESSAGE_COLUMNS,
                unit=("line", "in_stream"),
                makes_changes=False,
            ),
            DecodeStage(
                "pgoutput_changes",
                pgoutput.change_rows,
                pgoutput.CHANGE_ROW_COLUMNS,
                unit=("relation_json", "kind", "old_kind", "old_tuple_json", "new_tuple_json"),
                # A primary key change is two rows.
                many=True,
            ),
        ),
        models=Models(
            staging="stg_pgoutput__lines",
            decoded=(
                "int_pgoutput__messages",
                "int_pgoutput__changes",
                "int_pgoutput__snapshot_headers",
                "int_pgoutput__snapshot_rows",
            ),
            changes="int_pgoutput__changes",
            changes_keyed=False,
        ),
        sort_position=(
            "models/intermediate/pgoutput/int_pgoutput__changes.sql, `sort_pos`; snapshot rows "
            "python_udfs/pgoutput/snapshot.py, `snapshot_sort_pos`"
        ),
        sort_key_version=pgoutput.SORT_KEY_VERSION,
        truncates="int_pgoutput__changes",
        column_types="own",
        pending="transactions streamed or prepared but not yet committed or rolled back",
        snapshots=Snapshots(
            header=DecodeStage(
                "pgoutput_snapshot_header",
                pgoutput_snapshot.snapshot_header,
                snapshots.HEADER_COLUMNS,
                makes_changes=False,
            ),
            row=DecodeStage(
                "pgoutput_snapshot_row",
                pgoutput_snapshot.snapshot_row,
                CHANGE_COLUMNS,
                unit=("line", "header_json"),
            ),
            headers="int_pgoutput__snapshot_headers",
            rows="int_pgoutput__snapshot_rows",
        ),
    ),
)

BY_NAME: dict[str, Family] = {family.name: family for family in FAMILIES}
