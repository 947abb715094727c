"""Landing: new files under the landing root become rows of one raw table per source family.

Each line lands once, with its file, line number, landing run and time. A manifest of landed
files makes a run read only files it has not seen; the landing *run* number gives the order
the pgoutput log rule needs (runs in order, then files by path, then lines).

A run commits once per family (one Delta append each), then the manifest; the manifest's
commit is the run's. A run killed in between left some families' lines under a run number the
manifest does not know yet: the next run takes that number again, counts those files as landed
(their lines are all there or none, one commit each) and lands only the rest, so no line lands
twice and the run's numbering is what an uninterrupted run gives. Models read only the runs
the manifest lists (macros/source_family.sql), so a build never sees half a landing run.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from cdc_warehouse.table_format import tag_commits
from python_udfs.datastream import avro_file_events
from python_udfs.registry import RECORD_LINE, RecordReader, record_lines_mapper

# CDC_SCHEMA_PREFIX keeps pipelines that share one metastore apart (macros/generate_schema_name).
RAW_SCHEMA = os.environ.get("CDC_SCHEMA_PREFIX", "") + "cdc_raw"
MANIFEST_TABLE = f"{RAW_SCHEMA}.landed_files"
# The files under the landing root that the last landing run did not read, by name.
UNREAD_TABLE = f"{RAW_SCHEMA}.unread_files"


@dataclass(frozen=True)
class Family:
    """A source family's landing directory and the file kinds it accepts: text files are split
    into lines by Spark; record files are decoded in Python by `record_readers` (pickled by
    reference, so they live in the shipped `python_udfs` package)."""

    name: str
    text_suffixes: tuple[str, ...]
    record_readers: dict[str, RecordReader]

    @property
    def table(self) -> str:
        return f"{RAW_SCHEMA}.{self.name}_lines"

    @property
    def staging_model(self) -> str:
        """The dbt model every other model of the family reads its lines through."""
        return f"stg_{self.name}__lines"

    @property
    def suffixes(self) -> tuple[str, ...]:
        return self.text_suffixes + tuple(self.record_readers)


# Spark reads a gzip file's lines as those of the file it holds (by its .gz name); such a file
# cannot be split, so it keeps a partition of its own and its line numbers stay exact.
JSONL = (".jsonl", ".jsonl.gz")
FAMILIES: tuple[Family, ...] = (
    Family("spanner", JSONL, {}),
    Family("datastream", JSONL, {".avro": avro_file_events}),
    Family("debezium", JSONL, {}),
    Family("pgoutput", JSONL, {}),
)


@dataclass(frozen=True)
class LandingReport:
    landing_run: int
    files: int
    lines: int
    unread: tuple[Path, ...]

    @property
    def newest_run(self) -> int:
        """The newest landing run the warehouse holds after this one (0: none yet)."""
        return self.landing_run if self.files else self.landing_run - 1


def ensure_raw_tables(spark: SparkSession) -> None:
    spark.sql(f"create database if not exists {RAW_SCHEMA}")
    spark.sql(
        f"""create table if not exists {MANIFEST_TABLE} (
              family string, source_name string, file_path string, size_bytes bigint,
              landed_at timestamp, landing_run bigint)
            using delta"""
    )
    spark.sql(
        f"""create table if not exists {UNREAD_TABLE} (
              file_path string, size_bytes bigint, seen_at timestamp, landing_run bigint)
            using delta"""
    )
    for family in FAMILIES:
        spark.sql(
            f"""create table if not exists {family.table} (
                  source_name string, file_path string, line_number bigint, line string,
                  load_error string, landed_at timestamp, landing_run bigint)
                using delta partitioned by (landing_run)"""
        )


def _is_landable(name: str) -> bool:
    """Writers commonly stage files as .name or _name before renaming them into place."""
    return not name.startswith((".", "_"))


def list_family_files(landing_root: Path, family: Family) -> list[tuple[str, Path]]:
    """(source_name, path) of every landable file of the family, sorted by path."""
    family_dir = landing_root / family.name
    if not family_dir.is_dir():
        return []
    found: list[tuple[str, Path]] = []
    for source_dir in sorted(p for p in family_dir.iterdir() if p.is_dir()):
        if not _is_landable(source_dir.name):
            continue
        for dirpath, dirnames, filenames in os.walk(source_dir):
            dirnames[:] = [d for d in dirnames if _is_landable(d)]
            for filename in filenames:
                if _is_landable(filename) and filename.endswith(family.suffixes):
                    found.append((source_dir.name, Path(dirpath) / filename))
    return sorted(found, key=lambda item: str(item[1]))


def unread_files(landing_root: Path) -> list[Path]:
    """Every file under the landing root that landing does not read, sorted: files of other
    kinds in a family's streams (.json, .txt, ...), files outside any stream directory, and
    every file of a directory that is no family's (a family of a later version, a typo). Files
    being written (.name, _name) are not listed: their writer renames them into place."""
    if not landing_root.is_dir():
        return []
    read = {path for family in FAMILIES for _, path in list_family_files(landing_root, family)}
    unread = []
    for dirpath, dirnames, filenames in os.walk(landing_root):
        dirnames[:] = [d for d in dirnames if _is_landable(d)]
        paths = (Path(dirpath) / name for name in filenames if _is_landable(name))
        unread.extend(path for path in paths if path not in read)
    return sorted(unread)


def _record_unread(spark: SparkSession, paths: list[Path], run: int, seen_at: datetime) -> None:
    """Replace the list of unread files with this run's (one commit)."""
    spark.createDataFrame(
        [(str(path), _size_now(path), seen_at, run) for path in paths],
        "file_path string, size_bytes bigint, seen_at timestamp, landing_run bigint",
    ).write.insertInto(UNREAD_TABLE, overwrite=True)


def newest_landing_run(spark: SparkSession) -> int:
    """The newest landing run the manifest records (0: none yet)."""
    return spark.sql(f"select max(landing_run) from {MANIFEST_TABLE}").first()[0] or 0


def families_landed_after(spark: SparkSession, run: int) -> list[Family]:
    """The families with files in landing runs after `run`, in FAMILIES order."""
    rows = spark.sql(
        f"select distinct family from {MANIFEST_TABLE} where landing_run > {run}"
    ).collect()
    landed = {row.family for row in rows}
    return [family for family in FAMILIES if family.name in landed]


def _next_landing_run(spark: SparkSession) -> int:
    return newest_landing_run(spark) + 1


def _landed_paths(spark: SparkSession, family: Family) -> set[str]:
    rows = spark.sql(
        f"select file_path from {MANIFEST_TABLE} where family = '{family.name}'"
    ).collect()
    return {row.file_path for row in rows}


def _uncommitted_files(spark: SparkSession, family: Family, run: int) -> list[tuple[str, str]]:
    """(source_name, file_path) of the files whose lines an interrupted landing of `run`
    committed to the family's table before the manifest recorded them."""
    rows = spark.sql(
        f"select distinct source_name, file_path from {family.table} where landing_run = {run}"
    ).collect()
    return [(row.source_name, row.file_path) for row in rows]


def _local_path(uri: Column) -> Column:
    """Spark reports file paths as URIs, percent-encoding only what a URI forbids; url_decode
    would also read '+' (common in Kafka-style file names) as a space, so protect it first.
    Plain string functions, not regular expressions: this runs once per line."""
    without_scheme = (
        F.when(uri.startswith("file://"), uri.substr(8, 1 << 30))
        .when(uri.startswith("file:"), uri.substr(6, 1 << 30))
        .otherwise(uri)
    )
    return F.url_decode(F.replace(without_scheme, F.lit("+"), F.lit("%2B")))


# monotonically_increasing_id() is (partition index << 33) + the row's position in its
# partition: with one file per partition, the low bits are the line's index in its file.
ROW_POSITION_BITS = (1 << 33) - 1
TARGET_OUTPUT_BYTES = 128 * 1024 * 1024
# Keeps a small landing run on more than one core.
MIN_OUTPUT_FILES = 2


def _output_files(files: list[tuple[str, Path]], sizes: dict[Path, int]) -> int:
    """Fewer, larger output files than one per landed file, and never more than the files."""
    total_bytes = sum(sizes[path] for _, path in files)
    return min(len(files), max(MIN_OUTPUT_FILES, -(-total_bytes // TARGET_OUTPUT_BYTES)))


@contextmanager
def _one_partition_per_file(spark: SparkSession, largest_file: int) -> Iterator[None]:
    """A file is never split and never shares its partition when both limits are at least the
    largest file (Spark packs files into partitions up to maxPartitionBytes, counting each file
    as at least openCostInBytes)."""
    limit = str(max(largest_file, TARGET_OUTPUT_BYTES))
    keys = ("spark.sql.files.maxPartitionBytes", "spark.sql.files.openCostInBytes")
    saved = {key: spark.conf.get(key) for key in keys}
    for key in keys:
        spark.conf.set(key, limit)
    try:
        yield
    finally:
        for key, value in saved.items():
            spark.conf.set(key, value)


def _text_lines(
    spark: SparkSession,
    files: list[tuple[str, Path]],
    sizes: dict[Path, int],
) -> DataFrame:
    """Spark streams each file line by line (memory does not grow with file size), one file per
    partition, so a line's position in its partition is its exact line number; blank lines carry
    no event and are not kept. Call under _one_partition_per_file."""
    source_by_path = spark.createDataFrame(
        [(str(path), source) for source, path in files], "path string, source_name string"
    )
    # file: URIs, so that a cluster whose default file system is HDFS reads the local files.
    uris = [f"file://{path}" for _, path in files]
    numbered = spark.read.text(uris, lineSep="\n").select(
        _local_path(F.col("_metadata.file_path")).alias("path"),
        (F.monotonically_increasing_id().bitwiseAND(ROW_POSITION_BITS) + 1).alias("line_number"),
        F.expr("trim(trailing '\\r' from value)").alias("line"),
    )
    # Coalescing keeps the numbering, which was taken per input partition.
    return (
        numbered.where(F.trim("line") != "")
        .join(F.broadcast(source_by_path), "path")
        .select(
            "source_name",
            F.col("path").alias("file_path"),
            F.col("line_number").cast("bigint"),
            "line",
            F.lit(None).cast("string").alias("load_error"),
        )
        .coalesce(_output_files(files, sizes))
    )


def _record_lines(
    spark: SparkSession,
    files: list[tuple[str, Path]],
    sizes: dict[Path, int],
    reader: RecordReader,
) -> DataFrame:
    """Record files are decoded by Spark's Python workers, each file streamed in bounded
    batches: neither the driver nor a worker holds a whole file, and files share the cores."""
    paths = spark.createDataFrame(
        [(source, str(path)) for source, path in files], "source_name string, file_path string"
    )
    return paths.repartition(_output_files(files, sizes)).mapInArrow(
        record_lines_mapper(reader), RECORD_LINE
    )


def _record_manifest(spark: SparkSession, rows: list[tuple]) -> None:
    """The run's commit: from now on its files count as landed and models read its lines."""
    spark.createDataFrame(
        rows,
        "family string, source_name string, file_path string, size_bytes bigint, "
        "landed_at timestamp, landing_run bigint",
    ).write.insertInto(MANIFEST_TABLE)


def _lines_of_run(spark: SparkSession, family: Family, run: int) -> int:
    return spark.table(family.table).where(F.col("landing_run") == run).count()


def _size_now(path: Path) -> int | None:
    """The size of a file whose landing was interrupted, as far as it can still be told."""
    try:
        return path.stat().st_size
    except OSError:
        return None


def land(spark: SparkSession, landing_root: Path) -> LandingReport:
    """Append every not-yet-landed file's lines to its family's raw table, then record the
    files in the manifest; finish first what an interrupted run of the same number began."""
    ensure_raw_tables(spark)
    run = _next_landing_run(spark)
    tag_commits(spark, run)
    landed_at = datetime.now(UTC).replace(tzinfo=None)
    manifest_rows = []
    total_lines = 0
    for family in FAMILIES:
        resumed = _uncommitted_files(spark, family, run)
        manifest_rows.extend(
            (family.name, source, path, _size_now(Path(path)), landed_at, run)
            for source, path in resumed
        )
        known = _landed_paths(spark, family) | {path for _, path in resumed}
        new_files = [
            (source, path)
            for source, path in list_family_files(landing_root, family)
            if str(path) not in known
        ]
        if not new_files:
            if resumed:
                total_lines += _lines_of_run(spark, family, run)
            continue
        sizes = {path: path.stat().st_size for _, path in new_files}
        frames = []
        text_files = [f for f in new_files if f[1].name.endswith(family.text_suffixes)]
        if text_files:
            frames.append(_text_lines(spark, text_files, sizes))
        for suffix, reader in family.record_readers.items():
            record_files = [f for f in new_files if f[1].name.endswith(suffix)]
            if record_files:
                frames.append(_record_lines(spark, record_files, sizes, reader))
        lines = frames[0]
        for frame in frames[1:]:
            lines = lines.unionByName(frame)
        # insertInto matches columns by position: the raw tables end with these two.
        batch = lines.select(
            *RECORD_LINE.fieldNames(),
            F.lit(landed_at).alias("landed_at"),
            F.lit(run).cast("bigint").alias("landing_run"),
        )
        with _one_partition_per_file(spark, max(sizes.values())):
            batch.write.insertInto(family.table)
        total_lines += _lines_of_run(spark, family, run)
        manifest_rows.extend(
            (family.name, source, str(path), sizes[path], landed_at, run)
            for source, path in new_files
        )
    if manifest_rows:
        _record_manifest(spark, manifest_rows)
    unread = unread_files(landing_root)
    _record_unread(spark, unread, run, landed_at)
    return LandingReport(
        landing_run=run, files=len(manifest_rows), lines=total_lines, unread=tuple(unread)
    )
