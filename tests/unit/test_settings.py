"""Mode selection and Spark settings from the environment: pure functions, no Spark."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from cdc_warehouse import cli, steps
from cdc_warehouse.landing import RawTables
from cdc_warehouse.metastore_locks import run_lock_name
from cdc_warehouse.settings import PROJECT_DIR, SettingsError, load_settings
from cdc_warehouse.spark import (
    SQL_CONF,
    metastore_conf,
    session_conf,
    sql_conf,
    udf_archive,
)

PG_URL = "jdbc:postgresql://db.internal:5432/metastore"


def test_the_default_is_the_embedded_local_warehouse():
    settings = load_settings({})
    assert settings.target == "local"
    assert settings.spark_master == "local[2]"
    assert settings.warehouse_dir == (PROJECT_DIR / "warehouse").resolve()
    assert settings.spark_warehouse == str(settings.warehouse_dir)
    assert settings.embedded_metastore
    conf = session_conf(settings)
    assert conf["spark.master"] == "local[2]"
    assert conf["spark.sql.catalogImplementation"] == "hive"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == (
        f"jdbc:derby:;databaseName={settings.warehouse_dir / 'metastore_db'};create=true"
    )
    # Only the Delta jars (no metastore driver) on the driver's classpath.
    assert conf["spark.driver.extraClassPath"] == conf["spark.jars"].replace(",", ":")


@pytest.mark.parametrize(
    "master",
    [
        "spark://spark-master:7077",
        "yarn",
        "k8s://https://k8s.internal:6443",
        "local-cluster[2,1,1024]",
    ],
)
def test_the_cluster_target_takes_its_master_from_the_environment(master):
    settings = load_settings({"CDC_TARGET": "cluster", "CDC_SPARK_MASTER": master})
    assert settings.target == "cluster"
    assert session_conf(settings)["spark.master"] == master


@pytest.mark.parametrize("master", ["", "local[4]", "sc://host:15002"])
def test_the_cluster_target_refuses_a_missing_or_local_master(master):
    with pytest.raises(SettingsError, match="CDC_TARGET=cluster needs CDC_SPARK_MASTER"):
        load_settings({"CDC_TARGET": "cluster", "CDC_SPARK_MASTER": master})


def test_the_local_target_refuses_a_cluster_master():
    with pytest.raises(SettingsError, match="set CDC_TARGET=cluster"):
        load_settings({"CDC_SPARK_MASTER": "spark://spark-master:7077"})
    assert load_settings({"CDC_SPARK_MASTER": "local[*]"}).spark_master == "local[*]"


def test_the_connect_target_uses_spark_remote_and_no_master():
    settings = load_settings({"CDC_TARGET": "connect", "SPARK_REMOTE": "sc://spark:15002"})
    assert settings.spark_remote == "sc://spark:15002"
    assert settings.spark_master is None
    assert not settings.embedded_metastore
    with pytest.raises(SettingsError, match="CANNOT_CONFIGURE_SPARK_CONNECT_MASTER"):
        load_settings(
            {
                "CDC_TARGET": "connect",
                "SPARK_REMOTE": "sc://spark:15002",
                "CDC_SPARK_MASTER": "yarn",
            }
        )
    with pytest.raises(SettingsError, match="needs SPARK_REMOTE"):
        load_settings({"CDC_TARGET": "connect"})


def test_spark_remote_without_the_connect_target_is_refused():
    """pyspark would silently switch to Connect on SPARK_REMOTE alone."""
    with pytest.raises(SettingsError, match="set CDC_TARGET=connect"):
        load_settings({"SPARK_REMOTE": "sc://spark:15002"})


def test_the_connect_server_owns_warehouse_and_metastore():
    base = {"CDC_TARGET": "connect", "SPARK_REMOTE": "sc://spark:15002"}
    for extra in ({"CDC_WAREHOUSE_DIR": "/data/wh"}, {"CDC_METASTORE_URL": PG_URL}):
        with pytest.raises(SettingsError, match="Connect server owns"):
            load_settings(base | extra)


def test_an_unknown_target_is_refused():
    with pytest.raises(SettingsError, match="local, cluster, connect"):
        load_settings({"CDC_TARGET": "prod"})


@pytest.mark.parametrize(
    "location", ["hdfs://namenode:8020/warehouse", "s3a://bucket/warehouse", "abfss://c@a/wh"]
)
def test_a_remote_warehouse_uri_goes_to_spark_and_state_stays_local(location, tmp_path):
    settings = load_settings({"CDC_WAREHOUSE_DIR": location})
    assert settings.spark_warehouse == location
    assert session_conf(settings)["spark.sql.warehouse.dir"] == location
    assert settings.warehouse_dir == (PROJECT_DIR / "warehouse").resolve()
    state = tmp_path / "state"
    settings = load_settings({"CDC_WAREHOUSE_DIR": location, "CDC_STATE_DIR": str(state)})
    assert settings.warehouse_dir == state
    assert settings.metastore_dir == state / "metastore_db"
    assert settings.dbt_dir == state / "_dbt"


def test_the_run_lock_is_one_per_warehouse_and_prefix_whatever_the_state_directory(tmp_path):
    def lock(**env: str) -> str:
        return run_lock_name(load_settings({"CDC_WAREHOUSE_DIR": "s3a://bucket/wh", **env}))

    one = lock(CDC_STATE_DIR=str(tmp_path / "a"))
    assert one == lock(CDC_STATE_DIR=str(tmp_path / "b"))
    assert one != lock(CDC_STATE_DIR=str(tmp_path / "a"), CDC_SCHEMA_PREFIX="alpha_")
    assert one != run_lock_name(load_settings({"CDC_WAREHOUSE_DIR": "s3a://bucket/other"}))
    assert len(one) <= 64  # MySQL's lock names


def test_a_file_uri_warehouse_is_also_the_local_directory(tmp_path):
    settings = load_settings({"CDC_WAREHOUSE_DIR": (tmp_path / "my wh").as_uri()})
    assert settings.warehouse_dir == tmp_path / "my wh"
    assert settings.spark_warehouse == f"file:{tmp_path / 'my wh'}"
    with pytest.raises(SettingsError, match="host"):
        load_settings({"CDC_WAREHOUSE_DIR": "file://otherhost/wh"})


def test_a_plain_path_warehouse_behaves_as_before(tmp_path):
    settings = load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path / "wh")})
    assert settings.warehouse_dir == tmp_path / "wh"
    assert settings.spark_warehouse == str(tmp_path / "wh")
    assert settings.warehouse_location is None


def test_a_postgresql_metastore_gets_its_driver_on_the_driver_classpath():
    settings = load_settings(
        {"CDC_METASTORE_URL": PG_URL, "CDC_METASTORE_USER": "hive", "CDC_METASTORE_PASSWORD": "pw"}
    )
    assert not settings.embedded_metastore
    conf = metastore_conf(settings)
    assert conf["spark.hadoop.javax.jdo.option.ConnectionURL"] == PG_URL
    assert conf["spark.hadoop.javax.jdo.option.ConnectionDriverName"] == "org.postgresql.Driver"
    assert conf["spark.driver.extraClassPath"] == "/usr/share/java/postgresql.jar"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionUserName"] == "hive"
    assert conf["spark.hadoop.javax.jdo.option.ConnectionPassword"] == "pw"
    # autoCreateAll would also create foreign keys, which hangs on PostgreSQL.
    assert conf["spark.hadoop.datanucleus.schema.autoCreateAll"] == "false"
    assert conf["spark.hadoop.datanucleus.schema.autoCreateTables"] == "true"
    assert conf["spark.hadoop.datanucleus.schema.autoCreateConstraints"] == "false"
    assert "derby" not in session_conf(settings)["spark.hadoop.javax.jdo.option.ConnectionURL"]


def test_a_metastore_set_up_by_schematool_is_not_altered():
    conf = metastore_conf(
        load_settings({"CDC_METASTORE_URL": PG_URL, "CDC_METASTORE_AUTO_CREATE": "false"})
    )
    assert not any(key.startswith("spark.hadoop.datanucleus") for key in conf)
    with pytest.raises(SettingsError, match="true or false"):
        load_settings({"CDC_METASTORE_URL": PG_URL, "CDC_METASTORE_AUTO_CREATE": "yes"})


def test_a_metastore_service_is_reached_by_its_uris():
    uris = "thrift://metastore-1:9083,thrift://metastore-2:9083"
    assert metastore_conf(load_settings({"CDC_METASTORE_URL": uris})) == {
        "spark.hadoop.hive.metastore.uris": uris
    }


def test_an_unknown_jdbc_metastore_needs_driver_and_jars():
    with pytest.raises(SettingsError, match="CDC_METASTORE_DRIVER"):
        load_settings({"CDC_METASTORE_URL": "jdbc:sqlserver://db:1433"})
    settings = load_settings(
        {
            "CDC_METASTORE_URL": "jdbc:sqlserver://db:1433",
            "CDC_METASTORE_DRIVER": "com.microsoft.sqlserver.jdbc.SQLServerDriver",
            "CDC_METASTORE_JARS": "/opt/jdbc/mssql.jar",
        }
    )
    assert metastore_conf(settings)["spark.driver.extraClassPath"] == "/opt/jdbc/mssql.jar"
    with pytest.raises(SettingsError, match="jdbc: URL"):
        load_settings({"CDC_METASTORE_URL": "postgresql://db/metastore"})


def test_the_schema_prefix_must_be_an_identifier():
    assert load_settings({"CDC_SCHEMA_PREFIX": "team_a_"}).schema_prefix == "team_a_"
    with pytest.raises(SettingsError, match="letters, digits"):
        load_settings({"CDC_SCHEMA_PREFIX": "a; drop"})


def test_the_schema_prefix_names_every_schema_the_project_writes():
    """Landing reads the prefix from the settings it is given, so two pipelines in one process
    keep apart."""
    settings = load_settings({"CDC_SCHEMA_PREFIX": "team_a_", "CDC_SCHEMA": "marts"})
    assert settings.raw_schema == "team_a_cdc_raw"
    assert RawTables(settings.raw_schema).manifest == "team_a_cdc_raw.landed_files"
    assert settings.table_schemas == ("team_a_cdc_raw", "team_a_cdc_internal", "marts")
    assert load_settings({}).raw_schema == "cdc_raw"


def test_the_test_scope_is_changed_rows_or_all_and_nothing_else():
    assert load_settings({}).test_every_row is False
    assert load_settings({"CDC_TEST_SCOPE": "changed"}).test_every_row is False
    assert load_settings({"CDC_TEST_SCOPE": " ALL "}).test_every_row is True
    with pytest.raises(SettingsError, match="CDC_TEST_SCOPE must be changed"):
        load_settings({"CDC_TEST_SCOPE": "everything"})


def test_the_thrift_server_listens_on_this_machine_unless_told():
    assert load_settings({}).thrift_host == "127.0.0.1"
    assert load_settings({"CDC_THRIFT_HOST": "0.0.0.0"}).thrift_host == "0.0.0.0"


def test_every_session_gets_the_same_sql_settings():
    assert SQL_CONF["spark.sql.session.timeZone"] == "UTC"
    # Runtime settings only (Spark's and Delta's SQL settings): a Connect session sets them too.
    assert all(key.startswith(("spark.sql.", "spark.databricks.delta.")) for key in SQL_CONF)
    assert SQL_CONF.items() <= session_conf(load_settings({})).items()


def test_an_installation_sets_its_own_sql_settings_over_the_projects():
    settings = load_settings(
        {"CDC_SQL_CONF": " spark.sql.shuffle.partitions = 8 ;spark.sql.codegen.wholeStage=false;"}
    )
    assert settings.sql_conf == (
        ("spark.sql.shuffle.partitions", "8"),
        ("spark.sql.codegen.wholeStage", "false"),
    )
    for conf in (sql_conf(settings), session_conf(settings)):
        assert conf["spark.sql.shuffle.partitions"] == "8"
        assert conf["spark.sql.codegen.wholeStage"] == "false"
        assert conf["spark.sql.session.timeZone"] == SQL_CONF["spark.sql.session.timeZone"]


@pytest.mark.parametrize("value", ["spark.sql.shuffle.partitions", "spark.master=local[4]"])
def test_sql_settings_are_runtime_key_value_pairs(value):
    """Static settings (master, memory, jars) have settings of their own, and would not reach a
    Spark Connect server's session."""
    with pytest.raises(SettingsError, match="CDC_SQL_CONF"):
        load_settings({"CDC_SQL_CONF": value})


def test_the_lock_message_names_the_metastore_only_when_it_is_derby(tmp_path):
    derby = load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path)})
    assert "embedded metastore allows one at a time" in steps.busy_message(derby, "42")
    shared = load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path), "CDC_METASTORE_URL": PG_URL})
    message = steps.busy_message(shared, "42")
    assert "pid 42" in message and "CDC_STATE_DIR" in message and "embedded" not in message


def test_settings_errors_are_usage_errors(monkeypatch, capsys):
    monkeypatch.setenv("CDC_TARGET", "cluster")
    monkeypatch.delenv("CDC_SPARK_MASTER", raising=False)
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    assert cli.main(["run"]) == 2
    assert "CDC_TARGET=cluster needs CDC_SPARK_MASTER" in capsys.readouterr().err


def test_the_udf_archive_holds_the_package_and_is_named_by_its_content(tmp_path):
    archive = udf_archive(tmp_path)
    package = Path(__import__("python_udfs").__file__).parent
    with zipfile.ZipFile(archive) as bundle:
        names = set(bundle.namelist())
    assert {f"python_udfs/{p.relative_to(package)}" for p in package.rglob("*.py")} == names
    assert "python_udfs/registry.py" in names
    assert udf_archive(tmp_path) == archive
    assert list(tmp_path.iterdir()) == [archive]


@pytest.mark.parametrize(
    ("value", "forced"),
    [("1", True), ("TRUE", True), ("yes", True), ("", False), ("0", False), ("false", False)],
)
def test_cdc_always_build_forces_a_build(value, forced):
    assert load_settings({"CDC_ALWAYS_BUILD": value}).always_build is forced


@pytest.mark.parametrize("value", ["ture", "2", "on please"])
def test_a_misspelt_cdc_always_build_is_refused(value):
    with pytest.raises(SettingsError, match="CDC_ALWAYS_BUILD must be"):
        load_settings({"CDC_ALWAYS_BUILD": value})


def test_retention_hours_default_to_deltas_week_and_must_be_whole_hours():
    assert load_settings({}).retention_hours == 168
    assert load_settings({"CDC_RETENTION_HOURS": "24"}).retention_hours == 24
    assert load_settings({"CDC_RETENTION_HOURS": "0"}).retention_hours == 0
    for value in ("1d", "-1", "2.5"):
        with pytest.raises(SettingsError, match="CDC_RETENTION_HOURS must be a whole number"):
            load_settings({"CDC_RETENTION_HOURS": value})


def test_partial_line_wait_defaults_to_five_minutes_and_must_be_whole_seconds():
    assert load_settings({}).partial_line_wait_seconds == 300
    assert load_settings({"CDC_PARTIAL_LINE_WAIT_SECONDS": "0"}).partial_line_wait_seconds == 0
    for value in ("5m", "-1", "0.5"):
        with pytest.raises(SettingsError, match="CDC_PARTIAL_LINE_WAIT_SECONDS must be a whole"):
            load_settings({"CDC_PARTIAL_LINE_WAIT_SECONDS": value})


def test_interpreted_builds_are_off_by_default_and_must_be_whole_lines():
    assert load_settings({}).interpreted_max_lines == 0
    assert load_settings({"CDC_INTERPRETED_MAX_LINES": "20000"}).interpreted_max_lines == 20000
    for value in ("20k", "-1", "0.5"):
        with pytest.raises(SettingsError, match="CDC_INTERPRETED_MAX_LINES must be a whole"):
            load_settings({"CDC_INTERPRETED_MAX_LINES": value})


def test_the_project_writes_tables_in_the_raw_internal_and_mart_databases():
    assert load_settings({}).table_schemas == ("cdc_raw", "cdc_internal", "default")
    settings = load_settings({"CDC_SCHEMA_PREFIX": "team_a_", "CDC_SCHEMA": "marts"})
    assert settings.table_schemas == ("team_a_cdc_raw", "team_a_cdc_internal", "marts")


def test_the_spark_ui_is_off_unless_asked_for_and_then_on_its_port():
    off = load_settings({})
    assert (off.spark_ui, off.spark_ui_host, off.metrics_file) == (False, "127.0.0.1", None)
    assert session_conf(off)["spark.ui.enabled"] == "false"
    on = load_settings({"CDC_SPARK_UI": "1", "CDC_SPARK_UI_PORT": "4141"})
    assert (on.spark_ui, on.spark_ui_port) == (True, 4141)
    conf = session_conf(on)
    assert (conf["spark.ui.enabled"], conf["spark.ui.port"]) == ("true", "4141")


@pytest.mark.parametrize(
    ("env", "refused"),
    [
        ({"CDC_SPARK_UI": "on"}, "CDC_SPARK_UI must be 1, true or yes"),
        ({"CDC_SPARK_UI_PORT": "99999"}, "CDC_SPARK_UI_PORT must be a port number"),
        ({"CDC_SPARK_UI_PORT": "http"}, "CDC_SPARK_UI_PORT must be a port number"),
        (
            {"CDC_SPARK_UI": "1", "CDC_TARGET": "connect", "SPARK_REMOTE": "sc://h:15002"},
            "the Spark UI is the Connect server's",
        ),
        (
            {"CDC_SPARK_UI": "1", "CDC_TARGET": "cluster", "CDC_SPARK_MASTER": "spark://m:7077"},
            "executors cannot reach it",
        ),
    ],
)
def test_spark_ui_settings_that_cannot_work_are_refused(env, refused):
    with pytest.raises(SettingsError, match=refused):
        load_settings(env)


def test_a_cluster_ui_binds_where_its_host_setting_says():
    env = {"CDC_SPARK_UI": "1", "CDC_TARGET": "cluster", "CDC_SPARK_MASTER": "spark://m:7077"}
    assert load_settings({**env, "CDC_SPARK_UI_HOST": "10.0.0.5"}).spark_ui_host == "10.0.0.5"
    local_cluster = {**env, "CDC_SPARK_MASTER": "local-cluster[2,1,1024]"}
    assert load_settings(local_cluster).spark_ui_host == "127.0.0.1"


def test_the_metrics_file_is_an_absolute_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = load_settings({"CDC_METRICS_FILE": "metrics/cdcw.prom"})
    assert settings.metrics_file == tmp_path / "metrics" / "cdcw.prom"
