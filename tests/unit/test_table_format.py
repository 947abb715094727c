"""The session's jars and settings: Delta Lake's, names derived from the installed packages,
and the local file system's, built from the project's Java; a clear error when the install step
has not fetched or built them. No Spark."""

from __future__ import annotations

import zipfile
from importlib.metadata import version
from pathlib import Path

import pyspark
import pytest

from cdc_warehouse import cli, local_file_system, prereqs, table_format
from cdc_warehouse.settings import JarsMissing, load_settings
from cdc_warehouse.spark import session_conf


def test_the_jars_match_the_installed_delta_package_and_spark_minor():
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    delta = version("delta-spark")
    assert [path.name for path in table_format.jar_paths(Path("/x"))] == [
        f"delta-spark_{spark_minor}_2.13-{delta}.jar",
        f"delta-storage-{delta}.jar",
        local_file_system.JAR_NAME,
    ]
    assert table_format.fetched_jar_paths(Path("/x")) == table_format.jar_paths(Path("/x"))[:2]


def test_missing_jars_are_named_with_the_command_that_fetches_them(tmp_path):
    (tmp_path / table_format.jar_paths(tmp_path)[1].name).write_bytes(b"")
    with pytest.raises(JarsMissing) as missing:
        table_format.session_jars(tmp_path)
    message = str(missing.value)
    assert table_format.jar_paths(tmp_path)[0].name in message
    assert table_format.jar_paths(tmp_path)[1].name not in message
    assert "make install" in message


def test_cdcw_reports_missing_jars_in_one_sentence(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(table_format, "JARS_DIR", tmp_path)
    monkeypatch.setenv("CDC_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    assert cli.main(["land"]) == 1
    said = capsys.readouterr().err
    assert said.startswith("cdcw: the jars") and "Traceback" not in said


def test_every_driver_session_loads_delta_and_its_jars():
    conf = session_conf(load_settings({}))
    assert conf["spark.jars"] == ",".join(str(p) for p in table_format.jar_paths())
    assert conf["spark.driver.extraClassPath"] == ":".join(str(p) for p in table_format.jar_paths())
    assert table_format.SESSION_CONF.items() <= conf.items()


def test_a_spark_process_we_do_not_start_gets_the_same_jars_and_settings():
    options = table_format.submit_options()
    assert options[:4] == [
        "--jars",
        table_format.session_jars(),
        "--driver-class-path",
        ":".join(str(path) for path in table_format.jar_paths()),
    ]
    for key, value in table_format.SESSION_CONF.items():
        assert f"{key}={value}" in options


def test_the_install_step_builds_the_local_file_systems_jar(tmp_path):
    jar = local_file_system.build(tmp_path)
    assert jar == tmp_path / local_file_system.JAR_NAME
    with zipfile.ZipFile(jar) as built:
        classes = {name for name in built.namelist() if name.endswith(".class")}
    named = {
        value.replace(".", "/") + ".class" for value in local_file_system.SESSION_CONF.values()
    }
    assert named <= classes
    assert [path.name for path in tmp_path.iterdir()] == [local_file_system.JAR_NAME]


def test_a_java_without_a_jdk_beside_it_is_named_with_the_package_to_install(tmp_path, monkeypatch):
    bin_dir = tmp_path / "jre" / "bin"
    bin_dir.mkdir(parents=True)
    java = bin_dir / "java"
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "jre"))
    assert prereqs.jdk_tool("javac") is None
    with pytest.raises(JarsMissing) as missing:
        local_file_system.build(tmp_path / "jars")
    assert "openjdk-17-jdk-headless" in str(missing.value)
    assert "openjdk-17-jdk-headless" in (prereqs.jdk_problem() or "")

    javac = bin_dir / "javac"
    javac.write_text("#!/bin/sh\n")
    javac.chmod(0o755)
    assert prereqs.jdk_tool("javac") == str(javac)
    assert prereqs.jdk_problem() is None
