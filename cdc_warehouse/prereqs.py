"""Checks the machine before anything heavy starts, so a missing Java or a wrong Python
ends with one readable sentence instead of a JVM or pip stack trace.

Standard library only: the Makefile runs it with the system Python before the venv exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

MIN_PYTHON = (3, 11)
MAX_PYTHON_EXCLUSIVE = (3, 14)
MIN_JAVA = 17


def python_problem(version: tuple[int, int] = sys.version_info[:2]) -> str | None:
    """PySpark 4 and dbt 1.11 support this range only."""
    if MIN_PYTHON <= version < MAX_PYTHON_EXCLUSIVE:
        return None
    lowest = ".".join(map(str, MIN_PYTHON))
    highest = f"{MAX_PYTHON_EXCLUSIVE[0]}.{MAX_PYTHON_EXCLUSIVE[1] - 1}"
    return (
        f"Python {version[0]}.{version[1]} found; this project needs Python {lowest} to {highest}."
    )


def java_executable() -> str | None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        candidate = os.path.join(java_home, "bin", "java")
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which("java")


def jdk_tool(name: str) -> str | None:
    """A JDK tool (`javac`, `jar`) of the Java that runs Spark: beside its `java`, symbolic
    links followed (Debian's /usr/bin/java points into the JDK)."""
    java = java_executable()
    if java is None:
        return None
    candidate = os.path.join(os.path.dirname(os.path.realpath(java)), name)
    return candidate if os.access(candidate, os.X_OK) else None


def jdk_problem() -> str | None:
    """The install step compiles the project's Java (cdc_warehouse/local_file_system.py)."""
    if java_executable() is None or jdk_tool("javac") is not None:
        return None
    return (
        f"{java_executable()} has no `javac` beside it: the install step compiles Java with a "
        "JDK. On Debian/Ubuntu `apt-get install openjdk-17-jdk-headless`, or set JAVA_HOME to "
        "a JDK."
    )


def parse_java_major(version_output: str) -> int | None:
    """`java -version` prints e.g. 'openjdk version "17.0.15"' or '"1.8.0_392"'."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if not match:
        return None
    major = int(match.group(1))
    if major == 1 and match.group(2):
        major = int(match.group(2))
    return major


def java_problem() -> str | None:
    """Spark 4 needs Java 17 or newer on PATH or in JAVA_HOME."""
    java = java_executable()
    if java is None:
        return (
            "Java was not found (no JAVA_HOME, no `java` on PATH). Spark needs Java "
            f"{MIN_JAVA}+: on Debian/Ubuntu `apt-get install openjdk-17-jdk-headless`."
        )
    result = subprocess.run([java, "-version"], capture_output=True, text=True, check=False)
    output = result.stderr + result.stdout
    major = parse_java_major(output)
    if major is None:
        # Often the JVM refused to start, e.g. a bad option in JDK_JAVA_OPTIONS: say what it said.
        said = " / ".join(line.strip() for line in output.splitlines() if line.strip())
        said = f" `{java} -version` said: {said[:400]}" if said else ""
        return f"Could not read the version of {java}; Spark needs Java {MIN_JAVA}+.{said}"
    if major < MIN_JAVA:
        return f"{java} is Java {major}; Spark 4 needs Java {MIN_JAVA}+ (set JAVA_HOME)."
    return None


def problems(java: bool = True) -> list[str]:
    return [p for p in (python_problem(), java_problem() if java else None) if p]


def main() -> int:
    """The install step's check: what a run needs, and a JDK to compile with."""
    found = [*problems(), *filter(None, [jdk_problem()])]
    for problem in found:
        print(f"cdcw: {problem}", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
