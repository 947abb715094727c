"""The local file system every session writes its files through: Hadoop's own, checksummed as
by default, with the permission and link calls that Hadoop runs as child processes (`chmod`,
`readlink`) made in the JVM instead (docs/decisions/019-local-file-system-in-process.md).

Its Java source lives beside this module (`jvm/`); the install step compiles it against the
Hadoop client that pyspark ships into the project's `jars/`, beside Delta's.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pyspark

from cdc_warehouse.prereqs import java_problem, jdk_problem, jdk_tool
from cdc_warehouse.settings import JarsMissing

JAR_NAME = "cdc-warehouse-local-fs.jar"
SOURCES_DIR = Path(__file__).parent / "jvm"
JAVA_RELEASE = "17"
# Hadoop's settings (`spark.hadoop.*` reach every driver's and executor's Hadoop configuration):
# the FileSystem API's implementation of `file:` and the FileContext API's.
SESSION_CONF = {
    "spark.hadoop.fs.file.impl": "cdcwarehouse.hadoop.LocalFileSystem",
    "spark.hadoop.fs.AbstractFileSystem.file.impl": "cdcwarehouse.hadoop.LocalFs",
}


def hadoop_client_api() -> Path:
    """The Hadoop client API jar of the installed pyspark, which the classes are compiled
    against (they run on the same one)."""
    found = sorted(Path(pyspark.__file__).parent.glob("jars/hadoop-client-api-*.jar"))
    if not found:
        raise JarsMissing("pyspark ships no hadoop-client-api jar to compile against")
    return found[-1]


def build(jars_dir: Path) -> Path:
    """Compile the sources into `jars_dir`/JAR_NAME, replaced whole once written."""
    javac, jar_tool = jdk_tool("javac"), jdk_tool("jar")
    if javac is None or jar_tool is None:
        raise JarsMissing(jdk_problem() or java_problem() or f"no `jar` beside {javac}")
    jars_dir.mkdir(parents=True, exist_ok=True)
    target = jars_dir / JAR_NAME
    partial = jars_dir / f".{JAR_NAME}.partial"
    with tempfile.TemporaryDirectory(prefix="cdcw-jvm-") as classes:
        compile_sources = [javac, "--release", JAVA_RELEASE, "-Xlint:all", "-Werror"]
        compile_sources += ["-classpath", str(hadoop_client_api()), "-d", classes]
        run_tool([*compile_sources, *map(str, sorted(SOURCES_DIR.rglob("*.java")))])
        run_tool([jar_tool, "--create", "--file", str(partial), "-C", classes, "."])
    os.replace(partial, target)
    return target


def run_tool(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).strip()[-2000:]
        raise JarsMissing(f"{Path(command[0]).name} failed building {JAR_NAME}: {said}")
