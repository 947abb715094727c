"""The driver JVM's class archive: where it is kept, which one a JVM gets, and that a dump
becomes the archive only when its JVM exited cleanly (a partial one would crash the next JVM)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_warehouse import class_archive
from cdc_warehouse.settings import load_settings


def test_the_archive_is_kept_in_the_user_cache_unless_told_otherwise(tmp_path):
    home = {"HOME": "/home/ops"}
    assert class_archive.archive_dir(home) == Path("/home/ops/.cache/cdc-warehouse")
    xdg = {**home, "XDG_CACHE_HOME": "/var/cache"}
    assert class_archive.archive_dir(xdg) == Path("/var/cache/cdc-warehouse")
    assert class_archive.archive_dir({"CDC_CLASS_ARCHIVE": str(tmp_path)}) == tmp_path
    assert class_archive.archive_dir({"CDC_CLASS_ARCHIVE": " OFF "}) is None
    assert load_settings({"CDC_CLASS_ARCHIVE": "off"}).class_archive_dir is None
    assert load_settings({"CDC_CLASS_ARCHIVE": str(tmp_path)}).class_archive_dir == tmp_path


@pytest.fixture
def jvm_files(tmp_path: Path) -> tuple[Path, Path]:
    java = tmp_path / "jdk" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_bytes(b"java 17")
    jars = tmp_path / "pyspark" / "jars"
    jars.mkdir(parents=True)
    return java, jars


def test_another_jvm_or_classpath_gets_another_archive(jvm_files):
    java, jars = jvm_files
    name = class_archive.archive_name(str(java), jars, "")
    assert name == class_archive.archive_name(str(java), jars, "")
    assert name.startswith("spark-driver-") and name.endswith(".jsa")
    assert class_archive.archive_name(str(java), jars, "/usr/share/java/postgresql.jar") != name
    java.write_bytes(b"java 17.0.16")
    assert class_archive.archive_name(str(java), jars, "") != name
    updated = class_archive.archive_name(str(java), jars, "")
    os.utime(jars, ns=(1, 1))
    assert class_archive.archive_name(str(java), jars, "") != updated


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_a_jvm_maps_the_archive_once_it_exists(tmp_path):
    directory = tmp_path / "archives"
    first = class_archive.plan(directory, "spark-driver-x.jsa", 4242)
    assert first.dump_to == directory / "spark-driver-x.jsa.4242.part"
    assert first.archive == directory / "spark-driver-x.jsa"
    assert f"-XX:ArchiveClassesAtExit={first.dump_to}" in first.java_options
    assert "-XX:SharedArchiveFile" not in first.java_options
    first.archive.write_bytes(b"archive")
    later = class_archive.plan(directory, "spark-driver-x.jsa", 4243)
    assert later.dump_to is None
    assert f"-XX:SharedArchiveFile={first.archive}" in later.java_options
    assert "ArchiveClassesAtExit" not in later.java_options


def test_a_directory_that_cannot_be_made_means_no_archive(tmp_path):
    not_a_directory = tmp_path / "cache"
    not_a_directory.write_text("a file")
    assert class_archive.plan(not_a_directory / "cdc-warehouse", "spark-driver-x.jsa", 1) is None


def test_dumps_of_dead_processes_are_removed_and_running_ones_kept(tmp_path):
    abandoned = tmp_path / f"spark-driver-x.jsa.{dead_pid()}.part"
    running = tmp_path / f"spark-driver-x.jsa.{os.getpid()}.part"
    for part in (abandoned, running):
        part.write_bytes(b"half an archive")
    class_archive.plan(tmp_path, "spark-driver-x.jsa", 4242)
    assert not abandoned.exists()
    assert running.exists()


def jvm_standin(tmp_path: Path, script: str) -> subprocess.Popen:
    """A process that, like the JVM, runs until its stdin closes, then writes its dump."""
    return subprocess.Popen(
        ["sh", "-c", f"cat > /dev/null; {script}", "jvm", str(tmp_path / "x.jsa.1.part")],
        stdin=subprocess.PIPE,
    )


def test_a_clean_exit_turns_the_dump_into_the_archive(tmp_path):
    dump_to, archive = tmp_path / "x.jsa.1.part", tmp_path / "x.jsa"
    jvm = jvm_standin(tmp_path, 'printf archived > "$1"')
    assert class_archive.finish_dump(jvm, dump_to, archive)
    assert archive.read_bytes() == b"archived"
    assert not dump_to.exists()


@pytest.mark.parametrize(
    "script",
    ['printf half > "$1"; exit 1', ': > "$1"', "exit 0"],
    ids=["failed exit", "empty dump", "no dump"],
)
def test_a_failed_dump_never_becomes_the_archive(tmp_path, script):
    dump_to, archive = tmp_path / "x.jsa.1.part", tmp_path / "x.jsa"
    jvm = jvm_standin(tmp_path, script)
    assert not class_archive.finish_dump(jvm, dump_to, archive)
    assert not archive.exists()
    assert not dump_to.exists()
