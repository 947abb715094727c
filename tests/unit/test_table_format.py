"""The Delta Lake jars and settings: names derived from the installed packages, a clear error
when the install step has not fetched them. No Spark."""

from __future__ import annotations

from importlib.metadata import version
from pathlib import Path

import pyspark
import pytest

from cdc_warehouse import cli, table_format
from cdc_warehouse.settings import JarsMissing, load_settings
from cdc_warehouse.spark import session_conf


def test_the_jars_match_the_installed_delta_package_and_spark_minor():
    spark_minor = ".".join(pyspark.__version__.split(".")[:2])
    delta = version("delta-spark")
    assert [path.name for path in table_format.jar_paths(Path("/x"))] == [
        f"delta-spark_{spark_minor}_2.13-{delta}.jar",
        f"delta-storage-{delta}.jar",
    ]


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
    assert said.startswith("cdcw: the Delta Lake jars") and "Traceback" not in said


def test_every_driver_session_loads_delta_and_its_jars():
    conf = session_conf(load_settings({}))
    assert conf["spark.jars"] == ",".join(str(p) for p in table_format.jar_paths())
    assert conf["spark.driver.extraClassPath"] == ":".join(str(p) for p in table_format.jar_paths())
    assert table_format.SESSION_CONF.items() <= conf.items()


def test_a_spark_process_we_do_not_start_gets_the_same_jars_and_settings():
    options = table_format.submit_options()
    assert options[:2] == ["--jars", table_format.session_jars()]
    for key, value in table_format.SESSION_CONF.items():
        assert f"{key}={value}" in options
