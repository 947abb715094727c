"""Delta Lake, the warehouse's table format (docs/decisions/006-delta-lake.md).

Its jars are fetched once, by the install step, into the project's `jars/` directory, by
Spark's own dependency resolver (Ivy, from Maven Central); every session names them on its
classpath, so a run never downloads anything. Their version is the `delta-spark` package's,
pinned in constraints.txt beside pyspark, so the Python API and the jars always match.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from importlib.metadata import version
from pathlib import Path

import pyspark
from pyspark.sql import SparkSession

from cdc_warehouse import local_file_system
from cdc_warehouse.settings import PROJECT_DIR, JarsMissing

JARS_DIR = PROJECT_DIR / "jars"
SCALA_VERSION = "2.13"

# Every session's Delta settings: its SQL (MERGE, time travel, VACUUM ...) and its catalog,
# which makes `create table ... using delta` a Delta table in the Hive metastore; and the local
# file system its files are written through.
SESSION_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
    **local_file_system.SESSION_CONF,
}


# Each commit carries the landing run it belongs to (DESCRIBE HISTORY's userMetadata), so the
# state of a table after a landing run can be found again (macros/marts/cdc_as_of_run.sql).
COMMIT_METADATA = "spark.databricks.delta.commitInfo.userMetadata"


def tag_commits(spark: SparkSession, landing_run: int) -> None:
    """Every Delta commit this session makes from now on names `landing_run`."""
    spark.conf.set(COMMIT_METADATA, json.dumps({"landing_run": landing_run}))


# A mart with deletion vectors cannot answer max(last_landing_run) from its files' statistics
# (Delta reads them only for tables without), so its MERGE records the newest landing run it
# has processed in the commit's tag, under this key with the table's name
# (macros/utils/record_watermark.sql, docs/decisions/016). It is read back from the table's
# history (macros/utils/recorded_watermark.sql).
WATERMARK = "watermark"
# Operations that change no row: a watermark recorded before them still holds. Any other
# commit without one (a RESTORE, a DELETE by hand, a write by an earlier version) hides the
# older watermarks, and the table's rows answer instead.
ROW_KEEPING_OPERATIONS = (
    "OPTIMIZE",
    "VACUUM START",
    "VACUUM END",
    "ADD CONSTRAINT",
    "DROP CONSTRAINT",
    "SET TBLPROPERTIES",
    "UNSET TBLPROPERTIES",
)
# How many of a table's newest commits are looked through for one.
WATERMARK_COMMITS = 20


def newest_write_tag(commits: Iterable[tuple[str, str | None]]) -> dict | None:
    """The tag (userMetadata, a JSON object) of the newest commit that changed rows, from
    (operation, userMetadata) pairs newest first; None when that commit has none, or when no
    commit changed rows."""
    for operation, metadata in commits:
        if operation in ROW_KEEPING_OPERATIONS:
            continue
        try:
            tag = json.loads(metadata or "{}")
        except ValueError:
            return None
        return tag if isinstance(tag, dict) and tag else None
    return None


def watermark_in_commits(commits: Iterable[tuple[str, str | None]], table: str) -> int | None:
    """The watermark that the newest commit changing rows recorded for `table`, from
    (operation, userMetadata) pairs newest first; None when it recorded none."""
    mark = (newest_write_tag(commits) or {}).get(WATERMARK)
    if isinstance(mark, dict) and mark.get("table") == table:
        run = mark.get("landing_run")
        return run if isinstance(run, int) and not isinstance(run, bool) else None
    return None


def recorded_watermark(spark: SparkSession, relation: str) -> int | None:
    """The newest landing run `relation` (schema.table) recorded as processed, read from its
    history; None when it recorded none."""
    from pyspark.errors import AnalysisException

    try:
        commits = spark.sql(f"describe history {relation} limit {WATERMARK_COMMITS}").collect()
    except AnalysisException:  # not a Delta table: a warehouse of an earlier version
        return None
    return watermark_in_commits(
        ((commit.operation, commit.userMetadata) for commit in commits),
        relation.rsplit(".", 1)[-1],
    )


def delta_version() -> str:
    return version("delta-spark")


def artifacts() -> list[tuple[str, str, str]]:
    """(group, artifact, version) of the jars a session needs: Delta for this Spark minor, and
    its storage layer. Scala's library is Spark's own."""
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    delta = delta_version()
    return [
        ("io.delta", f"delta-spark_{spark_minor}_{SCALA_VERSION}", delta),
        ("io.delta", "delta-storage", delta),
    ]


def fetched_jar_paths(directory: Path | None = None) -> list[Path]:
    """Where the fetched jars (`artifacts`) are: `directory`, by default the project's `jars/`."""
    directory = directory or JARS_DIR
    return [directory / f"{artifact}-{release}.jar" for _, artifact, release in artifacts()]


def jar_paths(directory: Path | None = None) -> list[Path]:
    """Every jar a session needs: the fetched ones, then the local file system's, which the
    install step builds."""
    return [*fetched_jar_paths(directory), (directory or JARS_DIR) / local_file_system.JAR_NAME]


def session_jars(directory: Path | None = None) -> str:
    """The jars as `spark.jars` takes them (on the driver's and every executor's classpath)."""
    missing = [path for path in jar_paths(directory) if not path.is_file()]
    if missing:
        raise JarsMissing(
            f"the jars {', '.join(path.name for path in missing)} are not in "
            f"{missing[0].parent}; `make install` fetches and builds them"
        )
    return ",".join(str(path) for path in jar_paths(directory))


def driver_class_path(directory: Path | None = None) -> str:
    """The same jars on a driver's own class path, from its JVM's start: Spark reads
    `spark.jars` through the file system the settings name before it loads them (decision
    019), and the Thrift server's JDBC sessions resolve Delta's catalog class without their
    loader."""
    return session_jars(directory).replace(",", os.pathsep)


def submit_options(directory: Path | None = None) -> list[str]:
    """spark-submit's options for a Spark process of ours that cdcw does not start, e.g. a
    Spark Connect server (docs/operations.md, Spark Connect)."""
    options = [
        "--jars",
        session_jars(directory),
        "--driver-class-path",
        driver_class_path(directory),
    ]
    for key, value in SESSION_CONF.items():
        options += ["--conf", f"{key}={value}"]
    return options


def fetch(directory: Path | None = None) -> list[Path]:
    """Resolve the artifacts with Spark's Ivy into a scratch cache and keep the jars named by
    `fetched_jar_paths`; those already present are not fetched again."""
    wanted = fetched_jar_paths(directory)
    if all(path.is_file() for path in wanted):
        return wanted
    wanted[0].parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ivy-") as cache:
        spark = (
            SparkSession.builder.master("local[1]")
            .config("spark.jars.packages", ",".join(":".join(a) for a in artifacts()))
            .config("spark.jars.ivy", cache)
            .config("spark.ui.enabled", "false")
            .getOrCreate()
        )
        spark.stop()
        resolved = {path.name.split("_", 1)[1]: path for path in Path(cache, "jars").glob("*.jar")}
        for path in wanted:
            if path.name not in resolved:
                raise JarsMissing(f"Spark's resolver did not fetch {path.name}")
            shutil.copyfile(resolved[path.name], path)
    return wanted


def main(argv: list[str]) -> int:
    """Fetch and build the jars (the install step); `--submit-options`: print spark-submit's
    options for a Spark process of ours that cdcw does not start."""
    if argv == ["--submit-options"]:
        print(" ".join(submit_options()))
        return 0
    for path in [*fetch(), local_file_system.build(JARS_DIR)]:
        print(f"cdcw: {path.relative_to(PROJECT_DIR)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
