"""Seeded workload generator: landing files of every source family, in waves, at any scale.

`python -m cdc_warehouse.bench.workload --scale 1000000 --out bench/w1m` writes

    <out>/wave-0000/ .. wave-NNNN/    the base events, one landing root per wave (a landing run)
    <out>/topup-realistic/           1% more events: new keys, changes to recent keys, a few
                                     late changes of old keys (placed back in source order)
    <out>/topup-adversarial/         1% more events: updates of random live keys of all ages
    <out>/topup-small/               one small file: the first 1,000 events of the realistic
                                     top-up's first Datastream (else Debezium) file
    <out>/manifest.json              what was generated: files and lines per wave, events,
                                     duplicates, late files, placeholders, Avro files, splits,
                                     merges, truncates, live keys per family
    <out>/expected-sample.json       per family, the rows cdc_current holds after the base
                                     waves for a sample of live keys (`expected_sample`)

Each directory is shaped like a landing root (README, `CDC_LANDING_ROOT`:
`<family>/<stream, server or slot>/**/*.jsonl`, Datastream's `*.avro` too): `stage()` hard-links
one into the real landing root so that each wave lands as its own run.

The model (everything is a pure function of the seed and the scale, vectorised with numpy):
per family a timeline of row changes; a change either creates a key or changes an existing
one, chosen mostly among recently created keys (exponential recency), sometimes among a small
set of hot keys (update-heavy) and sometimes uniformly among all keys (old ones). A key's first
change is its insert (a backfill / snapshot read for keys that exist before the stream
starts), its last may be a delete or a primary key change; transactions group consecutive
changes, a few of them large (streamed by pgoutput). Family formats follow the scenario
generators in tests/e2e and tests/e2e/pgoutput, one module per family saying what its files hold
(`datastream.py`, `debezium.py`, `pgoutput.py`, `spanner.py`); `plan.py` holds what they share
and `deliveries.py` writes them.

Late files (datastream, debezium) are files whose events belong to one wave but that land one or
two waves later; their path sorts where their events' time is.
"""

from cdc_warehouse.bench.workload.datastream import DS_SOURCES
from cdc_warehouse.bench.workload.debezium import DBZ_SERVERS, REC_CHANGE, REC_PK_CREATE
from cdc_warehouse.bench.workload.deliveries import (
    GENERATORS,
    SAMPLE_KEYS,
    SMALL_FILE,
    SMALL_FILE_EVENTS,
    SMALL_FILE_FAMILIES,
    delivery_files,
    discard,
    expected_sample,
    generate,
    is_complete,
    load_expected_sample,
    load_manifest,
    stage,
    unstage,
)
from cdc_warehouse.bench.workload.pgoutput import PG_RELATION, PG_SIDE_OID, PG_SLOT
from cdc_warehouse.bench.workload.plan import (
    DUPLICATE_SHARE,
    FAMILIES,
    OP_DELETE,
    OP_PK_CHANGE,
    OP_SNAPSHOT,
    PK_KEY_OFFSET,
    SIDE_ROWS,
    TOAST_SHARE,
    TOPUP_MODES,
    Chunk,
    FileStats,
    Spec,
    family_events,
    plan_base,
    plan_topup,
    side_live_keys,
    truncates_in,
)
from cdc_warehouse.bench.workload.spanner import SP_STREAMS

__all__ = [
    "DBZ_SERVERS",
    "DS_SOURCES",
    "DUPLICATE_SHARE",
    "FAMILIES",
    "GENERATORS",
    "OP_DELETE",
    "OP_PK_CHANGE",
    "OP_SNAPSHOT",
    "PG_RELATION",
    "PG_SIDE_OID",
    "PG_SLOT",
    "PK_KEY_OFFSET",
    "REC_CHANGE",
    "REC_PK_CREATE",
    "SAMPLE_KEYS",
    "SIDE_ROWS",
    "SMALL_FILE",
    "SMALL_FILE_EVENTS",
    "SMALL_FILE_FAMILIES",
    "SP_STREAMS",
    "TOAST_SHARE",
    "TOPUP_MODES",
    "Chunk",
    "FileStats",
    "Spec",
    "delivery_files",
    "discard",
    "expected_sample",
    "family_events",
    "generate",
    "is_complete",
    "load_expected_sample",
    "load_manifest",
    "plan_base",
    "plan_topup",
    "side_live_keys",
    "stage",
    "truncates_in",
    "unstage",
]
