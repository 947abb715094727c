"""A class data sharing (CDS) archive for the driver JVM that `cdcw` starts.

Each `cdcw` process starts its own JVM, which loads and verifies ~30 000 classes (Spark SQL,
Hive, Derby, Parquet) before and while it builds. Java 17 can archive the classes a run loaded
(`-XX:ArchiveClassesAtExit`) and map them in later runs (`-XX:SharedArchiveFile`), which
start faster (docs/benchmarks.md). The first process writes the archive when its JVM exits;
every later one maps it.

A partly written archive crashes the JVM that maps it (SIGBUS), so the dump goes to a file of
its own and takes the archive's name only after its JVM exited cleanly. The archive's name
holds a digest of what must match for the JVM to use it (the java binary, the Spark jars, the
extra classpath): another JDK or pyspark gets its own archive, not a mismatch on every start.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

CLASS_ARCHIVE = "CDC_CLASS_ARCHIVE"
OFF = "off"
# A mismatched archive makes the JVM warn on every start and run without it; its name already
# says what it was made for, so the warning would only be noise.
QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"
# The dump takes seconds; a JVM still dumping after this long is left, and the run ends without
# the archive.
DUMP_WAIT_SECONDS = 300


def archive_dir(env: Mapping[str, str]) -> Path | None:
    """Where archives are kept: CDC_CLASS_ARCHIVE (a directory, or `off`), else the user's cache
    directory, shared by every warehouse on the machine."""
    given = env.get(CLASS_ARCHIVE, "").strip()
    if given.lower() == OFF:
        return None
    if given:
        return Path(given).expanduser().resolve()
    cache = env.get("XDG_CACHE_HOME", "").strip()
    if not cache:
        cache = str(Path(env.get("HOME", "").strip() or Path.home()) / ".cache")
    return Path(cache) / "cdc-warehouse"


def archive_name(java: str, spark_jars: Path, extra_classpath: str) -> str:
    """The archive for this JVM and classpath. A JDK or pyspark update replaces the files, so
    their sizes and times change the name too."""
    digest = hashlib.sha256()
    for path in (Path(java).resolve(), spark_jars.resolve()):
        stat = path.stat()
        digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\0".encode())
    digest.update(extra_classpath.encode())
    return f"spark-driver-{digest.hexdigest()[:16]}.jsa"


@dataclass(frozen=True)
class ArchivePlan:
    """What the JVM about to start does with the archive: map it, or write it at exit."""

    java_options: str
    dump_to: Path | None = None
    archive: Path | None = None


def plan(directory: Path, name: str, pid: int) -> ArchivePlan | None:
    """None when the directory cannot be made (e.g. a read-only home in a container): the run
    goes on without an archive."""
    archive = directory / name
    if archive.is_file():
        return ArchivePlan(f"-XX:SharedArchiveFile={archive} {QUIET}")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    remove_abandoned_dumps(directory)
    dump_to = directory / f"{name}.{pid}.part"
    return ArchivePlan(f"-XX:ArchiveClassesAtExit={dump_to} {QUIET}", dump_to, archive)


def remove_abandoned_dumps(directory: Path) -> None:
    """Dumps of processes that died before their JVM finished writing."""
    for part in directory.glob("*.part"):
        pid = part.suffixes[-2].lstrip(".") if len(part.suffixes) >= 2 else ""
        if pid.isdigit() and not _running(int(pid)):
            part.unlink(missing_ok=True)


def _running(pid: int) -> bool:
    """A pid that exists is running, also when it belongs to another user (PermissionError)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def finish_dump(jvm: subprocess.Popen, dump_to: Path, archive: Path) -> bool:
    """End the JVM the way Python's exit would (its stdin closes), wait until it has written the
    archive, and give the archive its name only then."""
    with contextlib.suppress(OSError):
        if jvm.stdin is not None:
            jvm.stdin.close()
    try:
        code = jvm.wait(timeout=DUMP_WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        jvm.kill()
        code = None
    if code == 0 and dump_to.is_file() and dump_to.stat().st_size > 0:
        dump_to.replace(archive)
        return True
    dump_to.unlink(missing_ok=True)
    return False


def finish_at_exit(spark, dumping: ArchivePlan) -> None:
    """Called once the session's JVM is up with a plan that dumps: at interpreter exit, stop
    Spark and let the JVM write the archive before the process ends."""
    jvm = spark.sparkContext._gateway.proc
    dump_to, archive = dumping.dump_to, dumping.archive
    if dump_to is None or archive is None:
        return

    def finish() -> None:
        with contextlib.suppress(Exception):
            spark.stop()
        finish_dump(jvm, dump_to, archive)

    atexit.register(finish)
