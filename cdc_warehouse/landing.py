"""Landing: new files under the landing root become rows of one raw table per source family.

Each line lands once, with its file, line number, landing run and time. A manifest of landed
files makes a run read only what it has not seen; the landing *run* number gives the order
the pgoutput log rule needs (runs in order, then files by path, then lines).

Writers may append to a file (a slot reader, `kcat` into one file): a JSONL file that grew
lands its new complete lines in a later run, numbered on from the lines already landed. A last
line without its newline is being written: it is held back until it is complete, or until the
file has not changed for CDC_PARTIAL_LINE_WAIT_SECONDS (then it lands as it is). A file whose
landed bytes changed (rewritten, cut short; a gzip or Avro file changed at all) is a conflict:
what changed is not landed, and the run reports it once, as a quarantine row naming the file
(line 0) and a warning in its output. So is a file Spark cannot read (a ':' in its name, a
gzip file that is not one): bad input fails no run. The manifest keeps, per landing of a file,
the bytes and line positions landed through, the file's modification time and a fingerprint of
its first and last landed bytes.

A run commits once per family (one Delta append each), then the manifest; the manifest's
commit is the run's. A run killed in between left some families' lines under a run number the
manifest does not know yet: the next run takes that number again, counts those files as landed
(their lines are all there or none, one commit each) and lands only the rest, so no line lands
twice and the run's numbering is what an uninterrupted run gives. Models read only the runs
the manifest lists (each family's staging model, models/staging/), so a build never sees half
a landing run.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from pyspark.sql import Column, DataFrame, Observation, SparkSession
from pyspark.sql import functions as F

from cdc_warehouse.table_format import tag_commits
from python_udfs.families import FAMILIES, GROWING, GZIP, JSONL, Family, RecordReader
from python_udfs.registry import RECORD_LINE, record_lines_mapper


@dataclass(frozen=True)
class RawTables:
    """The tables landing writes, in the raw schema (`Settings.raw_schema`: a schema prefix keeps
    pipelines that share one metastore apart)."""

    schema: str

    @property
    def manifest(self) -> str:
        return f"{self.schema}.landed_files"

    @property
    def unread(self) -> str:
        """The files under the landing root that the last landing run did not read, by name."""
        return f"{self.schema}.unread_files"

    def lines(self, family: Family) -> str:
        return f"{self.schema}.{family.name}_lines"


@dataclass(frozen=True)
class LandingReport:
    landing_run: int
    files: int
    lines: int
    unread: tuple[Path, ...]
    # Files not landed as they are now (a conflict, a file Spark cannot read), with why.
    refused: tuple[tuple[Path, str], ...] = ()

    @property
    def newest_run(self) -> int:
        """The newest landing run the warehouse holds after this one (0: none yet)."""
        return self.landing_run if self.files else self.landing_run - 1


# What the manifest keeps of a file at each landing beside the bytes landed through
# (size_bytes): the line positions landed through, the file's modification time (microseconds
# since the epoch, as the file system tells it) and a fingerprint of the landed bytes.
MANIFEST_FILE_STATE = ("line_count bigint", "modified_us bigint", "fingerprint string")
MANIFEST_COLUMNS = (
    "family string, source_name string, file_path string, size_bytes bigint, "
    "landed_at timestamp, landing_run bigint, " + ", ".join(MANIFEST_FILE_STATE)
)
UNREAD_COLUMNS = "file_path string, size_bytes bigint, seen_at timestamp, landing_run bigint"
# A raw line table: a record line as the readers make it, then when and by which run it landed.
LINE_COLUMNS = ", ".join(
    [f"{field.name} {field.dataType.simpleString()}" for field in RECORD_LINE.fields]
    + ["landed_at timestamp", "landing_run bigint"]
)


def ensure_raw_tables(spark: SparkSession, tables: RawTables) -> None:
    """Create what is missing; a warehouse that has them all costs one catalog listing."""
    spark.sql(f"create database if not exists {tables.schema}")
    existing = {row.tableName for row in spark.sql(f"show tables in {tables.schema}").collect()}

    def missing(table: str) -> bool:
        return table.split(".")[-1] not in existing

    if missing(tables.manifest):
        spark.sql(f"create table {tables.manifest} ({MANIFEST_COLUMNS}) using delta")
    else:
        # Added to the manifest of earlier versions too (null on their rows).
        have = set(spark.table(tables.manifest).columns)
        added = [column for column in MANIFEST_FILE_STATE if column.split()[0] not in have]
        if added:
            spark.sql(f"alter table {tables.manifest} add columns ({', '.join(added)})")
    if missing(tables.unread):
        spark.sql(f"create table {tables.unread} ({UNREAD_COLUMNS}) using delta")
    for family in FAMILIES:
        if not missing(tables.lines(family)):
            continue
        spark.sql(
            f"create table {tables.lines(family)} ({LINE_COLUMNS}) "
            "using delta partitioned by (landing_run)"
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


def landing_listing(landing_root: Path) -> frozenset[tuple[str, int, int]]:
    """(path, size, modification time) of every landable file of every family: what a waiting
    continuous process compares from one interval to the next (a listing, no Spark)."""
    listing = set()
    for family in FAMILIES:
        for _, path in list_family_files(landing_root, family):
            with contextlib.suppress(FileNotFoundError):  # removed since listed
                stat = path.stat()
                listing.add((str(path), stat.st_size, stat.st_mtime_ns))
    return frozenset(listing)


def unread_files(landing_root: Path) -> list[Path]:
    """Every file under the landing root that landing does not read, sorted: files of other
    kinds in a family's streams (.json, .txt, ...), files outside any stream directory, and
    every file of a directory that is no family's (a family of a later version, a typo). Files
    being written (.name, _name) are not listed: their writer renames them into place."""
    if not landing_root.is_dir():
        return []
    read = {path for family in FAMILIES for _, path in list_family_files(landing_root, family)}
    unread: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(landing_root):
        dirnames[:] = [d for d in dirnames if _is_landable(d)]
        paths = (Path(dirpath) / name for name in filenames if _is_landable(name))
        unread.extend(path for path in paths if path not in read)
    return sorted(unread)


def _record_unread(
    spark: SparkSession, tables: RawTables, paths: list[Path], run: int, seen_at: datetime
) -> None:
    """Replace the list of unread files with this run's (one commit)."""
    spark.createDataFrame(
        [(str(path), _size_now(path), seen_at, run) for path in paths],
        UNREAD_COLUMNS,
    ).write.insertInto(tables.unread, overwrite=True)


def newest_landing_run(spark: SparkSession, tables: RawTables) -> int:
    """The newest landing run the manifest records (0: none yet)."""
    return spark.sql(f"select max(landing_run) from {tables.manifest}").collect()[0][0] or 0


def families_landed_after(spark: SparkSession, tables: RawTables, run: int) -> list[Family]:
    """The families with files in landing runs after `run`, in FAMILIES order."""
    rows = spark.sql(
        f"select distinct family from {tables.manifest} where landing_run > {run}"
    ).collect()
    landed = {row.family for row in rows}
    return [family for family in FAMILIES if family.name in landed]


FINGERPRINT_BYTES = 64 * 1024
READ_CHUNK_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class FileState:
    """What a landing records of a file: the bytes and (for a plain JSONL file) the line
    positions landed through, its modification time and the fingerprint of the landed bytes.
    Rows of earlier versions carry the size only."""

    size_bytes: int
    line_count: int | None = None
    modified_us: int | None = None
    fingerprint: str | None = None


@dataclass(frozen=True)
class Arrival:
    """A file's lines a run lands: the positions after `after_line`, through `through_line`
    (None: every line Spark reads, for gzip and Avro files, which are written whole)."""

    source_name: str
    path: Path
    after_line: int
    through_line: int | None
    state: FileState


@dataclass(frozen=True)
class Refusal:
    """A file not landed as it is now: a landed file whose landed bytes changed, or one Spark
    cannot read. It is one quarantine row naming the file (line 0, `reason`) and is recorded
    with the state it has now, so that it is reported again only once it changes."""

    source_name: str
    path: Path
    reason: str
    state: FileState


def fingerprint(path: Path, size: int) -> str:
    """SHA-256 of the first `size` bytes' length, first and last FINGERPRINT_BYTES: a rewrite or
    a cut shows there in most cases, at a bounded read per check."""
    digest = hashlib.sha256(str(size).encode())
    with path.open("rb") as handle:
        digest.update(handle.read(min(size, FINGERPRINT_BYTES)))
        tail_start = max(FINGERPRINT_BYTES, size - FINGERPRINT_BYTES)
        if tail_start < size:
            handle.seek(tail_start)
            digest.update(handle.read(size - tail_start))
    return digest.hexdigest()


def complete_lines(
    path: Path, start: int, size: int, lines_before: int, finished: bool
) -> tuple[int, int]:
    """(bytes, line positions) of the file through its last complete line, reading its bytes
    [start, size) on from `lines_before` positions. Spark numbers lines the same way: a position
    per newline, and one for a last line without its own. That last line is left out as still
    being written unless `finished`."""
    newlines, complete_end, position = 0, start, start
    with path.open("rb") as handle:
        handle.seek(start)
        while position < size:
            chunk = handle.read(min(READ_CHUNK_BYTES, size - position))
            if not chunk:
                break
            count = chunk.count(b"\n")
            if count:
                newlines += count
                complete_end = position + chunk.rindex(b"\n") + 1
            position += len(chunk)
    if finished and position > complete_end:
        return position, lines_before + newlines + 1
    return complete_end, lines_before + newlines


def bytes_through_line(path: Path, line: int) -> int:
    """The bytes of a file's first `line` line positions (all of it if it has fewer)."""
    seen, position = 0, 0
    with path.open("rb") as handle:
        while chunk := handle.read(READ_CHUNK_BYTES):
            count = chunk.count(b"\n")
            if seen + count >= line:
                end = -1
                for _ in range(line - seen):
                    end = chunk.index(b"\n", end + 1)
                return position + end + 1
            seen += count
            position += len(chunk)
    return position


def _modified_us(stat: os.stat_result) -> int:
    return stat.st_mtime_ns // 1000


def _finished(stat: os.stat_result, wait_seconds: int, now_us: int) -> bool:
    """Whether a file has not changed for `wait_seconds`: its writer is done with it."""
    return now_us - _modified_us(stat) >= wait_seconds * 1_000_000


@dataclass(frozen=True)
class Manifest:
    """What the manifest says before a run: the newest landing run it records (0: none yet)
    and, per family, the state of each landed file after its newest landing."""

    newest_run: int
    states: dict[str, dict[str, FileState]]


def _read_manifest(spark: SparkSession, tables: RawTables) -> Manifest:
    """One read of the manifest for every family, and the run number with it."""
    rows = spark.sql(
        f"""select family, file_path, max(landing_run) as landing_run, max_by(
                  struct(size_bytes, line_count, modified_us, fingerprint), landing_run
              ) as state
            from {tables.manifest} group by family, file_path"""
    ).collect()
    states: dict[str, dict[str, FileState]] = {family.name: {} for family in FAMILIES}
    for row in rows:
        states.setdefault(row.family, {})[row.file_path] = FileState(
            row.state.size_bytes or 0,
            row.state.line_count,
            row.state.modified_us,
            row.state.fingerprint,
        )
    return Manifest(max((row.landing_run for row in rows), default=0), states)


def _whole_file_state(path: Path, stat: os.stat_result) -> FileState:
    """The state of a file taken whole: a gzip or Avro file landed, or a file refused by its
    name, of which no line ever lands."""
    return FileState(stat.st_size, None, _modified_us(stat), fingerprint(path, stat.st_size))


def _state_now(path: Path, stat: os.stat_result, finished: bool) -> FileState:
    """The state a landing of the whole file would record now."""
    if not path.name.endswith(GROWING):
        return _whole_file_state(path, stat)
    end, lines = complete_lines(path, 0, stat.st_size, 0, finished)
    return FileState(end, lines, _modified_us(stat), fingerprint(path, end))


def unreadable_name(path: Path) -> str | None:
    """Why Spark cannot read a text file by its name, if it cannot: Hadoop takes what comes
    before a ':' in a name for a URI scheme, so the path of the file's checksum (`.name.crc`)
    does not parse and the whole read fails. Avro files are read by Python and not affected."""
    if path.name.endswith(JSONL) and ":" in path.name:
        return (
            "the file's name holds ':', by which Spark cannot read a file: none of it is landed "
            "(renamed without ':' it lands)"
        )
    return None


def plan_landing(
    files: list[tuple[str, Path]],
    landed: dict[str, FileState],
    wait_seconds: int,
    now_us: int,
) -> tuple[list[Arrival], list[Refusal]]:
    """What a run lands of each file, and which files it refuses: landed files that changed, and
    files Spark cannot read by their names. A plain JSONL file whose landed bytes are unchanged
    lands its lines appended since; its last line without a newline waits until the file has
    not changed for `wait_seconds`."""
    arrivals, refusals = [], []
    for source, path in files:
        try:
            stat = path.stat()
        except FileNotFoundError:  # removed since it was listed: nothing of it to land
            continue
        size, modified = stat.st_size, _modified_us(stat)
        known = landed.get(str(path))
        if known is not None and known.size_bytes == size and known.modified_us in (modified, None):
            continue  # unchanged since its landing (rows of earlier versions: same size)
        name_problem = unreadable_name(path)
        if name_problem is not None:
            refusals.append(Refusal(source, path, name_problem, _whole_file_state(path, stat)))
            continue
        finished = _finished(stat, wait_seconds, now_us)
        grows = path.name.endswith(GROWING)
        if known is None:
            start, lines_before = 0, 0
        elif grows and size >= known.size_bytes and _landed_bytes_unchanged(path, known):
            start = known.size_bytes
            lines_before = (
                known.line_count
                if known.line_count is not None
                # landed by an earlier version, whole
                else complete_lines(path, 0, start, 0, True)[1]
            )
        else:
            now = "cut to" if size < known.size_bytes else "changed, now"
            reason = (
                f"the file changed after it was landed ({known.size_bytes} bytes landed, {now} "
                f"{size} bytes): what changed is not landed"
            )
            refusals.append(Refusal(source, path, reason, _state_now(path, stat, finished)))
            continue
        if not grows:
            arrivals.append(Arrival(source, path, 0, None, _whole_file_state(path, stat)))
            continue
        end, lines = complete_lines(path, start, size, lines_before, finished)
        if end > start:
            state = FileState(end, lines, modified, fingerprint(path, end))
            arrivals.append(Arrival(source, path, lines_before, lines, state))
    return arrivals, refusals


def _landed_bytes_unchanged(path: Path, known: FileState) -> bool:
    """Whether the bytes a file had when it was landed are still its first bytes (rows of
    earlier versions have no fingerprint: their files are taken as unchanged)."""
    return known.fingerprint is None or fingerprint(path, known.size_bytes) == known.fingerprint


@dataclass(frozen=True)
class Resumed:
    """A file whose lines an interrupted landing of this run number committed to its family's
    table before the manifest recorded it: its last line position and how many lines it has."""

    source_name: str
    path: Path
    last_line: int
    lines: int


def _resumed_files(spark: SparkSession, tables: RawTables, run: int) -> dict[str, list[Resumed]]:
    """Per family, the files an interrupted landing of `run` committed (one query for all)."""
    per_family = " union all ".join(
        f"""select '{family.name}' as family, source_name, file_path,
                  max(line_number) as last_line, count(*) as lines
              from {tables.lines(family)} where landing_run = {run}
              group by source_name, file_path"""
        for family in FAMILIES
    )
    resumed: dict[str, list[Resumed]] = {family.name: [] for family in FAMILIES}
    for row in spark.sql(per_family).collect():
        resumed[row.family].append(
            Resumed(row.source_name, Path(row.file_path), row.last_line, row.lines)
        )
    return resumed


def _resumed_state(path: Path, last_line: int, wait_seconds: int, now_us: int) -> FileState:
    """The state of a file an interrupted landing committed: a JSONL file through the last line
    it landed (lines after it land in the next run), any other file whole, as is one refused by
    its name; a file that is gone is recorded by name only."""
    try:
        stat = path.stat()
    except OSError:
        return FileState(0)
    if unreadable_name(path) is not None:
        return _whole_file_state(path, stat)
    if not path.name.endswith(GROWING) or last_line == 0:
        return _state_now(path, stat, _finished(stat, wait_seconds, now_us))
    end = bytes_through_line(path, last_line)
    return FileState(end, last_line, _modified_us(stat), fingerprint(path, end))


# Hadoop reads each path it is given as a glob pattern: "a[1].jsonl" named no file (the run
# failed) and "c*.jsonl" also "cx.jsonl" (whose lines it read twice).
GLOB_CHARACTERS = re.compile(r"([\\\[\]{}*?])")


def spark_file_uri(path: Path) -> str:
    """The URI by which Spark reads one local file and only it: `file:`, so that a cluster whose
    default file system is HDFS reads the local file, and its glob characters escaped."""
    return "file://" + GLOB_CHARACTERS.sub(r"\\\1", str(path))


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


def _output_files(arrivals: list[Arrival]) -> int:
    """Fewer, larger output files than one per landed file, and never more than the files."""
    total_bytes = sum(arrival.state.size_bytes for arrival in arrivals)
    return min(len(arrivals), max(MIN_OUTPUT_FILES, -(-total_bytes // TARGET_OUTPUT_BYTES)))


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
            if value is None:
                spark.conf.unset(key)
            else:
                spark.conf.set(key, value)


def _text_lines(spark: SparkSession, arrivals: list[Arrival]) -> DataFrame:
    """Spark streams each file line by line (memory does not grow with file size), one file per
    partition, so a line's position in its partition is its exact line number; each file keeps
    the positions its arrival lands (a grown file's new lines; a line being written stays for a
    later run), and blank lines carry no event and are not kept. Call under
    _one_partition_per_file."""
    landed_lines = spark.createDataFrame(
        [
            (str(arrival.path), arrival.source_name, arrival.after_line, arrival.through_line)
            for arrival in arrivals
        ],
        "path string, source_name string, after_line bigint, through_line bigint",
    )
    uris = [spark_file_uri(arrival.path) for arrival in arrivals]
    numbered = spark.read.text(uris, lineSep="\n").select(
        _local_path(F.col("_metadata.file_path")).alias("path"),
        (F.monotonically_increasing_id().bitwiseAND(ROW_POSITION_BITS) + 1).alias("line_number"),
        # Trimming a character list indexes every character of the line: only a CRLF line
        # pays for it.
        F.when(F.col("value").endswith("\r"), F.expr("trim(trailing '\\r' from value)"))
        .otherwise(F.col("value"))
        .alias("line"),
    )
    # Coalescing keeps the numbering, which was taken per input partition.
    return (
        numbered.where(F.trim("line") != "")
        .join(F.broadcast(landed_lines), "path")
        .where(
            (F.col("line_number") > F.col("after_line"))
            & (F.col("through_line").isNull() | (F.col("line_number") <= F.col("through_line")))
        )
        .select(
            "source_name",
            F.col("path").alias("file_path"),
            F.col("line_number").cast("bigint"),
            "line",
            F.lit(None).cast("string").alias("load_error"),
        )
        .coalesce(_output_files(arrivals))
    )


def _record_lines(spark: SparkSession, arrivals: list[Arrival], reader: RecordReader) -> DataFrame:
    """Record files are decoded by Spark's Python workers, each file streamed in bounded
    batches: neither the driver nor a worker holds a whole file, and files share the cores."""
    paths = spark.createDataFrame(
        [(arrival.source_name, str(arrival.path)) for arrival in arrivals],
        "source_name string, file_path string",
    )
    return paths.repartition(_output_files(arrivals)).mapInArrow(
        record_lines_mapper(reader), RECORD_LINE
    )


def _refusal_lines(spark: SparkSession, refusals: list[Refusal]) -> DataFrame:
    """One line per refused file, at line 0 (the file itself), its reason the quarantine's."""
    return spark.createDataFrame(
        [(r.source_name, str(r.path), 0, None, r.reason) for r in refusals], RECORD_LINE
    )


def _innermost_cause(exc: Exception) -> str:
    """What a Spark error comes down to: the innermost Java exception under it (the Python
    error names only the call that failed), else the error's first line."""
    cause = getattr(exc, "java_exception", None)
    if cause is None:
        return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    while cause.getCause() is not None:
        cause = cause.getCause()
    return str(cause.toString())


def _gzip_files_spark_cannot_read(spark: SparkSession, arrivals: list[Arrival]) -> dict[Path, str]:
    """The gzip files of `arrivals` that Spark fails to read, each read alone, with why. Spark's
    gzip reader fails the whole read of a family on a file that is not gzip, is cut short or
    has other bytes after its data; only a read that failed is checked file by file, so a run
    without such a file pays nothing."""
    unreadable = {}
    for arrival in arrivals:
        if not arrival.path.name.endswith(GZIP):
            continue
        try:
            spark.read.text(spark_file_uri(arrival.path)).count()
        except Exception as exc:  # any reason Spark has: the file is quarantined with it
            unreadable[arrival.path] = (
                f"Spark cannot read the file as gzip ({_innermost_cause(exc)}): none of it is "
                "landed"
            )
    return unreadable


def _manifest_row(
    family: Family, source: str, path: Path, state: FileState, landed_at: datetime, run: int
) -> tuple:
    return (
        family.name,
        source,
        str(path),
        state.size_bytes,
        landed_at,
        run,
        state.line_count,
        state.modified_us,
        state.fingerprint,
    )


def _record_manifest(spark: SparkSession, tables: RawTables, rows: list[tuple]) -> None:
    """The run's commit: from now on its files count as landed and models read its lines."""
    spark.createDataFrame(rows, MANIFEST_COLUMNS).write.insertInto(tables.manifest)


def _append_lines(tables: RawTables, family: Family, batch: DataFrame) -> int:
    """Append a family's lines (one Delta commit) and return how many there were, counted as
    they are written rather than by reading them back."""
    observation = Observation(f"landed_{family.name}")
    batch.observe(observation, F.count(F.lit(1)).alias("lines")).write.insertInto(
        tables.lines(family)
    )
    return int(observation.get["lines"])


def _size_now(path: Path) -> int | None:
    """The size of a file whose landing was interrupted, as far as it can still be told."""
    try:
        return path.stat().st_size
    except OSError:
        return None


@dataclass(frozen=True)
class FamilyLanded:
    """What a run landed of one family, told as soon as the family's lines are committed: its
    files and lines as the run counts them (a refused file is a file and its quarantine row a
    line), the bytes of lines it landed, and the seconds it took."""

    landing_run: int
    family: str
    files: int
    lines: int
    bytes: int
    seconds: float


def _new_bytes(landed: dict[str, FileState], path: Path, state: FileState) -> int:
    """The bytes of a file a run lands: those after the bytes an earlier run landed."""
    known = landed.get(str(path))
    return max(0, state.size_bytes - (known.size_bytes if known else 0))


def _append_family(
    spark: SparkSession,
    tables: RawTables,
    family: Family,
    arrivals: list[Arrival],
    refusals: list[Refusal],
    landed_at: datetime,
    run: int,
) -> int:
    """One Delta append of a family's lines of this run: those of its text and record files,
    and a line per refused file; returns how many."""
    frames = []
    text = [a for a in arrivals if a.path.name.endswith(family.text_suffixes)]
    if text:
        frames.append(_text_lines(spark, text))
    for suffix, reader in family.record_readers.items():
        records = [a for a in arrivals if a.path.name.endswith(suffix)]
        if records:
            frames.append(_record_lines(spark, records, reader))
    if refusals:
        frames.append(_refusal_lines(spark, refusals))
    lines = frames[0]
    for frame in frames[1:]:
        lines = lines.unionByName(frame)
    # insertInto matches columns by position: the raw tables end with these two.
    batch = lines.select(
        *RECORD_LINE.fieldNames(),
        F.lit(landed_at).alias("landed_at"),
        F.lit(run).cast("bigint").alias("landing_run"),
    )
    # Twice the largest size seen: a file that grows before Spark lists it stays whole.
    largest = max((_size_now(a.path) or 0 for a in arrivals), default=0)
    with _one_partition_per_file(spark, 2 * largest):
        return _append_lines(tables, family, batch)


def land(
    spark: SparkSession,
    tables: RawTables,
    landing_root: Path,
    partial_line_wait_seconds: int,
    progress: Callable[[FamilyLanded], None] | None = None,
) -> LandingReport:
    """Append each file's not-yet-landed lines to its family's raw table and a quarantine line
    for each file refused, then record them all in the manifest; finish first what an
    interrupted run of the same number began. `progress` is told of each family as it lands."""
    ensure_raw_tables(spark, tables)
    manifest = _read_manifest(spark, tables)
    run = manifest.newest_run + 1
    tag_commits(spark, run)
    landed_at = datetime.now(UTC).replace(tzinfo=None)
    now_us = time.time_ns() // 1000
    manifest_rows: list[tuple] = []
    total_lines = 0
    refused: list[tuple[Path, str]] = []
    resumed_by_family = _resumed_files(spark, tables, run)
    for family in FAMILIES:
        started = time.monotonic()
        landed = manifest.states[family.name]
        resumed = [
            (r, _resumed_state(r.path, r.last_line, partial_line_wait_seconds, now_us))
            for r in resumed_by_family[family.name]
        ]
        resumed_paths = {str(r.path) for r, _ in resumed}
        arrivals, refusals = plan_landing(
            [f for f in list_family_files(landing_root, family) if str(f[1]) not in resumed_paths],
            landed,
            partial_line_wait_seconds,
            now_us,
        )
        lines = sum(r.lines for r, _ in resumed)
        if arrivals or refusals:
            try:
                lines += _append_family(spark, tables, family, arrivals, refusals, landed_at, run)
            except Exception:
                # A read that fails commits nothing: landed again without the gzip files Spark
                # cannot read, which are refused instead (else the run fails as it did).
                unreadable = _gzip_files_spark_cannot_read(spark, arrivals)
                if not unreadable:
                    raise
                refusals += [
                    Refusal(a.source_name, a.path, unreadable[a.path], a.state)
                    for a in arrivals
                    if a.path in unreadable
                ]
                arrivals = [a for a in arrivals if a.path not in unreadable]
                lines += _append_family(spark, tables, family, arrivals, refusals, landed_at, run)
        landed_files = [
            *((r.source_name, r.path, state) for r, state in resumed),
            *((a.source_name, a.path, a.state) for a in arrivals),
        ]
        files = landed_files + [(r.source_name, r.path, r.state) for r in refusals]
        if not files:
            continue
        manifest_rows.extend(
            _manifest_row(family, source, path, state, landed_at, run)
            for source, path, state in files
        )
        total_lines += lines
        refused.extend((r.path, r.reason) for r in refusals)
        if progress is not None:
            landed_bytes = sum(_new_bytes(landed, path, state) for _, path, state in landed_files)
            seconds = round(time.monotonic() - started, 3)
            progress(FamilyLanded(run, family.name, len(files), lines, landed_bytes, seconds))
    if manifest_rows:
        _record_manifest(spark, tables, manifest_rows)
    unread = unread_files(landing_root)
    _record_unread(spark, tables, unread, run, landed_at)
    return LandingReport(
        landing_run=run,
        files=len(manifest_rows),
        lines=total_lines,
        unread=tuple(unread),
        refused=tuple(refused),
    )
