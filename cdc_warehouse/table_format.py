"""Delta Lake, the warehouse's table format (docs/decisions/006-delta-lake.md).

Its jars are fetched once, by the install step, into the project's `jars/` directory, by
Spark's own dependency resolver (Ivy, from Maven Central); every session names them on its
classpath, so a run never downloads anything. Their version is the `delta-spark` package's,
pinned in constraints.txt beside pyspark, so the Python API and the jars always match.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import pyspark

from cdc_warehouse.settings import PROJECT_DIR

JARS_DIR = PROJECT_DIR / "jars"
SCALA_VERSION = "2.13"

# Every session's Delta settings: its SQL (MERGE, time travel, VACUUM ...) and its catalog,
# which makes `create table ... using delta` a Delta table in the Hive metastore.
SESSION_CONF = {
    "spark.sql.extensions": "io.delta.sql.DeltaSparkSessionExtension",
    "spark.sql.catalog.spark_catalog": "org.apache.spark.sql.delta.catalog.DeltaCatalog",
}


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


def jar_paths(directory: Path = JARS_DIR) -> list[Path]:
    return [directory / f"{artifact}-{release}.jar" for _, artifact, release in artifacts()]


class JarsMissing(RuntimeError):
    """The install step has not fetched the jars this version needs."""


def session_jars(directory: Path = JARS_DIR) -> str:
    """The jars as `spark.jars` takes them (on the driver's and every executor's classpath)."""
    missing = [path.name for path in jar_paths(directory) if not path.is_file()]
    if missing:
        raise JarsMissing(
            f"the Delta Lake jars {', '.join(missing)} are not in {directory}; "
            "`make install` fetches them"
        )
    return ",".join(str(path) for path in jar_paths(directory))


def fetch(directory: Path = JARS_DIR) -> list[Path]:
    """Resolve the artifacts with Spark's Ivy into a scratch cache and keep the jars named by
    `jar_paths`; those already present are not fetched again."""
    wanted = jar_paths(directory)
    if all(path.is_file() for path in wanted):
        return wanted
    from pyspark.sql import SparkSession

    directory.mkdir(parents=True, exist_ok=True)
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


def main() -> int:
    for path in fetch():
        print(f"cdcw: {path.relative_to(PROJECT_DIR)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
