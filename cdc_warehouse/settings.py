"""Where things are and where Spark runs: every setting comes from the environment, with
defaults inside the project. `load_settings` is pure (it reads the mapping it is given), so the
mode rules below are unit-tested without Spark."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar
from urllib.parse import unquote, urlparse

from cdc_warehouse.class_archive import archive_dir

PROJECT_DIR = Path(os.environ.get("CDC_PROJECT_DIR", Path(__file__).resolve().parent.parent))

# Profile targets (profiles/profiles.yml); CDC_TARGET picks one, and with it how Spark starts.
LOCAL, CLUSTER, CONNECT = "local", "cluster", "connect"
TARGETS = (LOCAL, CLUSTER, CONNECT)
# Masters of the `cluster` target; `local` and `local[N]` belong to the `local` target.
CLUSTER_MASTERS = ("spark://", "yarn", "k8s://", "local-cluster[")
DEFAULT_LOCAL_MASTER = "local[2]"
# The default driver heap: the benchmark's 10M-event full build must pass in it, with the driver
# process under 4 GB (docs/benchmarks.md).
DEFAULT_DRIVER_MEMORY = "2560m"
# Delta's own default for removed files: a week of time travel.
RETENTION_HOURS = "CDC_RETENTION_HOURS"
SQL_CONF_SETTING = "CDC_SQL_CONF"
# Runtime SQL settings only: they reach every target, a Spark Connect server's session included.
SQL_CONF_PREFIXES = ("spark.sql.", "spark.databricks.delta.")
DEFAULT_RETENTION_HOURS = 168
# A file's last line without its newline is held back as being written, until the file has not
# changed for this long (then it lands as it is): a writer stops mid-line for seconds at most.
PARTIAL_LINE_WAIT = "CDC_PARTIAL_LINE_WAIT_SECONDS"
# The Thrift server serves this machine only unless told otherwise.
DEFAULT_THRIFT_HOST = "127.0.0.1"
DEFAULT_PARTIAL_LINE_WAIT_SECONDS = 300
INTERPRETED_MAX_LINES = "CDC_INTERPRETED_MAX_LINES"
DEFAULT_INTERPRETED_MAX_LINES = 0
# The Spark UI: off unless asked for; when on, it serves this machine only unless told otherwise.
SPARK_UI = "CDC_SPARK_UI"
SPARK_UI_PORT = "CDC_SPARK_UI_PORT"
SPARK_UI_HOST = "CDC_SPARK_UI_HOST"
METRICS_FILE = "CDC_METRICS_FILE"
DEFAULT_SPARK_UI_PORT = 4040
DEFAULT_SPARK_UI_HOST = "127.0.0.1"

# JDBC metastores whose driver class (and, for PostgreSQL, Debian's jar) we know.
JDBC_DRIVERS = {
    "jdbc:postgresql:": ("org.postgresql.Driver", "/usr/share/java/postgresql.jar"),
    "jdbc:mysql:": ("com.mysql.cj.jdbc.Driver", None),
    "jdbc:mariadb:": ("org.mariadb.jdbc.Driver", None),
}


T = TypeVar("T")


def by_url_prefix(table: Mapping[str, T], url: str) -> T | None:
    """The entry of `table` whose key `url` starts with (a JDBC URL names its database product)."""
    return next((value for prefix, value in table.items() if url.startswith(prefix)), None)


class SettingsError(ValueError):
    """A combination of settings that cannot work; the message says what to change."""


class WarehouseBusy(RuntimeError):
    """Another process holds what this one needs (the state directory, the embedded metastore,
    the shared metastore's start-up lock); nothing was changed. The message says which."""


class JarsMissing(RuntimeError):
    """The install step has not fetched the jars this version needs; the message says which."""


class RebuildNeeded(RuntimeError):
    """The warehouse was built with another encoding of a part than this code writes
    (cdc_warehouse/build_versions.py); nothing was built. The message says which and what to
    run."""


@dataclass(frozen=True)
class Metastore:
    """A shared Hive metastore: a database reached over JDBC by the driver (`jdbc:` URL), or
    a metastore service (`thrift://` URIs). None in Settings means the embedded Derby one."""

    url: str
    user: str | None = None
    password: str | None = None
    driver_class: str | None = None
    driver_jars: str | None = None
    auto_create: bool = True

    @property
    def is_service(self) -> bool:
        return self.url.startswith("thrift://")


@dataclass(frozen=True)
class Settings:
    landing_root: Path
    # This installation's local directory: dbt target and logs, the run lock, the embedded
    # Derby metastore, and the warehouse itself unless `warehouse_location` names another.
    warehouse_dir: Path
    tables_file: Path
    spark_master: str | None
    driver_memory: str
    target: str = LOCAL
    # spark.sql.warehouse.dir when it is not `warehouse_dir`: a URI (file:, hdfs:, s3a:, ...).
    warehouse_location: str | None = None
    spark_remote: str | None = None
    metastore: Metastore | None = None
    executor_memory: str | None = None
    schema_prefix: str = ""
    # CDC_SCHEMA: the marts' database (the profile's schema).
    mart_schema: str = "default"
    # CDC_ALWAYS_BUILD: `cdcw run` builds even when nothing changed since its last build.
    always_build: bool = False
    # CDC_TEST_SCOPE=all: `cdcw run` tests every row, not only those its build rewrote.
    test_every_row: bool = False
    # CDC_THRIFT_HOST: the address the Thrift server listens on.
    thrift_host: str = DEFAULT_THRIFT_HOST
    # CDC_CLASS_ARCHIVE: where the driver JVM's class archive is kept (None: not used).
    class_archive_dir: Path | None = None
    # CDC_RETENTION_HOURS: how far back `cdcw maintain` keeps the tables' earlier versions.
    retention_hours: int = DEFAULT_RETENTION_HOURS
    # CDC_SQL_CONF: Spark SQL settings over the project's own (spark.SQL_CONF), in order.
    sql_conf: tuple[tuple[str, str], ...] = ()
    # CDC_PARTIAL_LINE_WAIT_SECONDS: how long an unchanged file's unfinished last line waits.
    partial_line_wait_seconds: int = DEFAULT_PARTIAL_LINE_WAIT_SECONDS
    # CDC_INTERPRETED_MAX_LINES: `cdcw run` builds this few new lines or fewer without code
    # generation (0, the default: never; docs/decisions/018).
    interpreted_max_lines: int = DEFAULT_INTERPRETED_MAX_LINES
    # CDC_SPARK_UI: the driver serves the Spark UI.
    spark_ui: bool = False
    # CDC_SPARK_UI_PORT: its port (the next free one above when taken).
    spark_ui_port: int = DEFAULT_SPARK_UI_PORT
    # CDC_SPARK_UI_HOST: the address the driver, and so its UI, binds to (SPARK_LOCAL_IP).
    spark_ui_host: str = DEFAULT_SPARK_UI_HOST
    # CDC_METRICS_FILE: where each run writes its metrics in Prometheus' text format (None: not).
    metrics_file: Path | None = None

    @property
    def raw_schema(self) -> str:
        """The database of the landed lines and the manifest (cdc_warehouse/landing.py)."""
        return f"{self.schema_prefix}cdc_raw"

    @property
    def internal_schema(self) -> str:
        """The database of the intermediate models (macros/utils/generate_schema_name.sql)."""
        return f"{self.schema_prefix}cdc_internal"

    @property
    def table_schemas(self) -> tuple[str, ...]:
        """The databases that hold the tables the project writes (staging holds views only)."""
        return (self.raw_schema, self.internal_schema, self.mart_schema)

    @property
    def metastore_dir(self) -> Path:
        return self.warehouse_dir / "metastore_db"

    @property
    def dbt_dir(self) -> Path:
        """dbt's target/ and logs/ live beside the warehouse they describe, so two warehouses
        (e.g. two test scenarios) never share a manifest or partial-parse cache."""
        return self.warehouse_dir / "_dbt"

    @property
    def spark_warehouse(self) -> str:
        return self.warehouse_location or str(self.warehouse_dir)

    @property
    def shared_warehouse_dir(self) -> Path | None:
        """The warehouse's own local directory when it is not this installation's directory
        (CDC_STATE_DIR set): other installations may point at it too."""
        if self.target == CONNECT or self.warehouse_location is None:
            return None
        return _local_path(self.warehouse_location)

    @property
    def embedded_metastore(self) -> bool:
        """Derby inside this process: one process at a time. A Connect server owns its
        metastore, so the client has none of its own."""
        return self.target != CONNECT and self.metastore is None


def _local_path(location: str) -> Path | None:
    """A plain path or a file: URI as a local path; None for any other URI."""
    parsed = urlparse(location)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise SettingsError(f"file: URI with a host is not a local path: {location}")
        return Path(unquote(parsed.path))
    return None if parsed.scheme else Path(location)


def _metastore(env: Mapping[str, str]) -> Metastore | None:
    url = env.get("CDC_METASTORE_URL", "").strip()
    if not url:
        return None
    if url.startswith("thrift://"):
        return Metastore(url=url)
    if not url.startswith("jdbc:"):
        raise SettingsError(
            f"CDC_METASTORE_URL must be a jdbc: URL (metastore database) or thrift:// URIs "
            f"(metastore service), not {url!r}"
        )
    known = by_url_prefix(JDBC_DRIVERS, url)
    driver_class = env.get("CDC_METASTORE_DRIVER") or (known[0] if known else None)
    driver_jars = env.get("CDC_METASTORE_JARS") or (known[1] if known else None)
    if not driver_class or not driver_jars:
        raise SettingsError(
            f"CDC_METASTORE_URL {url.split('?')[0]}: set CDC_METASTORE_DRIVER (JDBC driver class) "
            "and CDC_METASTORE_JARS (its jar on this machine; it goes on the driver classpath)"
        )
    auto_create = env.get("CDC_METASTORE_AUTO_CREATE", "true").strip().lower()
    if auto_create not in {"true", "false"}:
        raise SettingsError(f"CDC_METASTORE_AUTO_CREATE must be true or false, not {auto_create}")
    return Metastore(
        url=url,
        user=env.get("CDC_METASTORE_USER") or None,
        password=env.get("CDC_METASTORE_PASSWORD") or None,
        driver_class=driver_class,
        driver_jars=driver_jars,
        auto_create=auto_create == "true",
    )


def _master(target: str, env: Mapping[str, str]) -> str | None:
    master = env.get("CDC_SPARK_MASTER", "").strip()
    if target == CONNECT:
        if master:
            raise SettingsError(
                "CDC_TARGET=connect runs on the Spark Connect server named by SPARK_REMOTE; "
                "unset CDC_SPARK_MASTER (Spark refuses both: CANNOT_CONFIGURE_SPARK_CONNECT_MASTER)"
            )
        return None
    if target == CLUSTER:
        if not master.startswith(CLUSTER_MASTERS):
            raise SettingsError(
                "CDC_TARGET=cluster needs CDC_SPARK_MASTER set to a cluster master: spark://host:"
                f"port, yarn, k8s://https://host:port or local-cluster[N,cores,MB] (got {master!r})"
            )
        return master
    master = master or DEFAULT_LOCAL_MASTER
    if not (master == "local" or master.startswith("local[")):
        raise SettingsError(
            f"CDC_SPARK_MASTER={master} is not a local master; set CDC_TARGET=cluster to run on it"
        )
    return master


ALWAYS_BUILD = "CDC_ALWAYS_BUILD"
FLAG_VALUES = {
    "1": True,
    "true": True,
    "yes": True,
    "": False,
    "0": False,
    "false": False,
    "no": False,
}


def _flag(setting: str, value: str, meaning: str) -> bool:
    """A misspelt value must not quietly leave a setting off."""
    flag = value.strip().lower()
    if flag not in FLAG_VALUES:
        raise SettingsError(
            f"{setting} must be 1, true or yes ({meaning}) or 0, false, no or empty, not {value!r}"
        )
    return FLAG_VALUES[flag]


TEST_SCOPE = "CDC_TEST_SCOPE"
TEST_SCOPES = {"": False, "changed": False, "all": True}


def _test_every_row(value: str) -> bool:
    """A misspelt scope must not quietly test less than asked."""
    scope = value.strip().lower()
    if scope not in TEST_SCOPES:
        raise SettingsError(f"{TEST_SCOPE} must be changed (the default) or all, not {value!r}")
    return TEST_SCOPES[scope]


def _retention_hours(value: str) -> int:
    """Hours of earlier table versions that maintenance keeps (time travel reaches back as far)."""
    text = value.strip() or str(DEFAULT_RETENTION_HOURS)
    if not text.isdigit():
        raise SettingsError(f"{RETENTION_HOURS} must be a whole number of hours, not {value!r}")
    return int(text)


def _spark_ui_port(value: str) -> int:
    text = value.strip() or str(DEFAULT_SPARK_UI_PORT)
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise SettingsError(f"{SPARK_UI_PORT} must be a port number (1-65535), not {value!r}")
    return int(text)


def _partial_line_wait_seconds(value: str) -> int:
    text = value.strip() or str(DEFAULT_PARTIAL_LINE_WAIT_SECONDS)
    if not text.isdigit():
        raise SettingsError(f"{PARTIAL_LINE_WAIT} must be a whole number of seconds, not {value!r}")
    return int(text)


def _interpreted_max_lines(value: str) -> int:
    text = value.strip() or str(DEFAULT_INTERPRETED_MAX_LINES)
    if not text.isdigit():
        raise SettingsError(
            f"{INTERPRETED_MAX_LINES} must be a whole number of lines, not {value!r}"
        )
    return int(text)


def _sql_conf(value: str) -> tuple[tuple[str, str], ...]:
    """`key=value` pairs separated by `;`, e.g. `spark.sql.shuffle.partitions=200`."""
    pairs = []
    for item in filter(None, (part.strip() for part in value.split(";"))):
        key, equals, setting = (part.strip() for part in item.partition("="))
        if not equals or not key.startswith(SQL_CONF_PREFIXES):
            raise SettingsError(
                f"{SQL_CONF_SETTING} holds key=value pairs separated by ';', each key a runtime "
                f"setting ({' or '.join(p + '*' for p in SQL_CONF_PREFIXES)}), not {item!r}"
            )
        pairs.append((key, setting))
    return tuple(pairs)


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    target = env.get("CDC_TARGET", LOCAL).strip() or LOCAL
    if target not in TARGETS:
        raise SettingsError(f"CDC_TARGET must be one of {', '.join(TARGETS)}, not {target!r}")
    remote = env.get("SPARK_REMOTE", "").strip() or None
    if target == CONNECT and not remote:
        raise SettingsError("CDC_TARGET=connect needs SPARK_REMOTE, e.g. sc://spark-host:15002")
    if target != CONNECT and remote:
        raise SettingsError(
            f"SPARK_REMOTE is set but CDC_TARGET={target}: set CDC_TARGET=connect to use the "
            "Spark Connect server, or unset SPARK_REMOTE"
        )
    master = _master(target, env)
    metastore = _metastore(env)
    location = env.get("CDC_WAREHOUSE_DIR", "").strip()
    if target == CONNECT and (metastore or location):
        raise SettingsError(
            "CDC_TARGET=connect: the Connect server owns the warehouse and the metastore; set "
            "spark.sql.warehouse.dir and the metastore there, and unset CDC_WAREHOUSE_DIR and "
            "CDC_METASTORE_URL here"
        )
    prefix = env.get("CDC_SCHEMA_PREFIX", "")
    if not re.fullmatch(r"[A-Za-z0-9_]*", prefix):
        raise SettingsError(f"CDC_SCHEMA_PREFIX may hold letters, digits and _ only: {prefix!r}")
    given = location or str(PROJECT_DIR / "warehouse")
    local_warehouse = _local_path(given)
    state = env.get("CDC_STATE_DIR", "").strip()
    warehouse_dir = Path(state or local_warehouse or PROJECT_DIR / "warehouse").resolve()
    # A URI goes to Spark as given (hdfs:, s3a:, ...), a file: URI as its decoded path (Hadoop
    # would escape a %-escape again), a plain path made absolute.
    if local_warehouse is None:
        spark_warehouse = given
    elif urlparse(given).scheme:
        spark_warehouse = f"file:{local_warehouse.resolve()}"
    else:
        spark_warehouse = str(local_warehouse.resolve())
    warehouse_location = None if spark_warehouse == str(warehouse_dir) else spark_warehouse
    spark_ui = _flag(SPARK_UI, env.get(SPARK_UI, ""), "serve the Spark UI")
    if spark_ui and target == CONNECT:
        raise SettingsError(
            f"{SPARK_UI}: with CDC_TARGET=connect the Spark UI is the Connect server's; unset it"
        )
    ui_host = env.get(SPARK_UI_HOST, "").strip() or DEFAULT_SPARK_UI_HOST
    # A local-cluster's executors run on this machine; any other cluster's cannot reach it.
    on_remote_executors = target == CLUSTER and not (master or "").startswith("local-cluster[")
    if spark_ui and on_remote_executors and ui_host.startswith("127."):
        raise SettingsError(
            f"{SPARK_UI} on CDC_TARGET=cluster binds the driver to CDC_SPARK_UI_HOST, "
            f"{ui_host} by default, where executors cannot reach it; set CDC_SPARK_UI_HOST "
            "to the driver's address on the cluster's network"
        )
    metrics = env.get(METRICS_FILE, "").strip()
    return Settings(
        landing_root=Path(
            env.get("CDC_LANDING_ROOT", PROJECT_DIR / "sample_data" / "landing")
        ).resolve(),
        warehouse_dir=warehouse_dir,
        tables_file=Path(env.get("CDC_TABLES", PROJECT_DIR / "cdc_tables.yml")).resolve(),
        spark_master=master,
        driver_memory=env.get("CDC_DRIVER_MEMORY", DEFAULT_DRIVER_MEMORY),
        target=target,
        warehouse_location=warehouse_location,
        spark_remote=remote,
        metastore=metastore,
        executor_memory=env.get("CDC_EXECUTOR_MEMORY") or None,
        schema_prefix=prefix,
        mart_schema=env.get("CDC_SCHEMA", "").strip() or "default",
        always_build=_flag(ALWAYS_BUILD, env.get(ALWAYS_BUILD, ""), "build"),
        test_every_row=_test_every_row(env.get(TEST_SCOPE, "")),
        thrift_host=env.get("CDC_THRIFT_HOST", "").strip() or DEFAULT_THRIFT_HOST,
        class_archive_dir=archive_dir(env),
        retention_hours=_retention_hours(env.get(RETENTION_HOURS, "")),
        sql_conf=_sql_conf(env.get(SQL_CONF_SETTING, "")),
        partial_line_wait_seconds=_partial_line_wait_seconds(env.get(PARTIAL_LINE_WAIT, "")),
        interpreted_max_lines=_interpreted_max_lines(env.get(INTERPRETED_MAX_LINES, "")),
        spark_ui=spark_ui,
        spark_ui_port=_spark_ui_port(env.get(SPARK_UI_PORT, "")),
        spark_ui_host=ui_host,
        metrics_file=Path(metrics).resolve() if metrics else None,
    )


@dataclass(frozen=True)
class SettingDoc:
    """One environment variable as docs/configuration.md describes it."""

    name: str
    default: str
    meaning: str


# Every environment variable the project reads, described once: docs/configuration.md is
# generated from this list and dbt_project.yml's vars (`python -m cdc_warehouse.config_docs`),
# and tests/unit/test_config_docs.py fails when a variable read by the code is missing here or
# the file was not regenerated. Descriptions only: nothing above reads this list.
DESCRIBED_SETTINGS = (
    SettingDoc(
        "CDC_LANDING_ROOT",
        "`sample_data/landing`",
        "where raw files land: `<family>/<stream, server or slot>/**/*.jsonl` for each source "
        "family (python_udfs/families.py; Datastream's `*.avro` too; docs/sources/); every "
        "`*.jsonl` may also come gzip-compressed as `*.jsonl.gz`",
    ),
    SettingDoc(
        "CDC_TARGET",
        f"`{LOCAL}`",
        f"profile target and how Spark starts: {', '.join(f'`{t}`' for t in TARGETS)} "
        "(docs/operations.md, Running on a cluster)",
    ),
    SettingDoc(
        "CDC_WAREHOUSE_DIR",
        "`warehouse/`",
        "Spark warehouse: a path or a URI (`file:`, `hdfs:`, `s3a:`, ...); when local, also the "
        "state directory. Refused with the `connect` target (the server owns it)",
    ),
    SettingDoc(
        "CDC_STATE_DIR",
        "the warehouse directory if local, else `warehouse/`",
        "this installation's local state: dbt target and logs, the run lock, the embedded Derby "
        "metastore, the build record",
    ),
    SettingDoc(
        "CDC_TABLES",
        "`cdc_tables.yml`",
        "table settings: declared primary keys, which win over the key a source reports",
    ),
    SettingDoc(
        "CDC_SCHEMA",
        "`default`",
        "database of the marts (internal layers use `cdc_raw`, `cdc_staging`, `cdc_internal`)",
    ),
    SettingDoc(
        "CDC_SCHEMA_PREFIX",
        "(none)",
        "prefix of the internal databases, e.g. `team_a_` gives `team_a_cdc_raw`, ...: "
        "pipelines sharing a metastore keep apart; letters, digits and `_` only",
    ),
    SettingDoc(
        "CDC_SPARK_MASTER",
        f"`{DEFAULT_LOCAL_MASTER}`",
        "Spark master: `local[N]` for `local`; `spark://`, `yarn`, `k8s://`, `local-cluster[...]` "
        "for `cluster`; unset for `connect`",
    ),
    SettingDoc(
        "SPARK_REMOTE",
        "(none)",
        "Spark Connect server, `sc://host:15002` (target `connect` only; set with another "
        "target, it is refused, since pyspark would switch to Connect silently)",
    ),
    SettingDoc(
        "CDC_METASTORE_URL",
        "(none: embedded Derby)",
        "shared Hive metastore: `jdbc:postgresql://...` (a metastore database; also "
        "`jdbc:mysql:`, `jdbc:mariadb:`, or any JDBC URL with the two settings below) or "
        "`thrift://...` (a metastore service, comma-separated for several)",
    ),
    SettingDoc("CDC_METASTORE_USER", "(none)", "user of the JDBC metastore database"),
    SettingDoc("CDC_METASTORE_PASSWORD", "(none)", "password of the JDBC metastore database"),
    SettingDoc(
        "CDC_METASTORE_DRIVER",
        "known for PostgreSQL, MySQL, MariaDB",
        "JDBC driver class of the metastore database",
    ),
    SettingDoc(
        "CDC_METASTORE_JARS",
        "PostgreSQL: `/usr/share/java/postgresql.jar`",
        "the JDBC driver's jar on this machine; `cdcw` puts it on the driver JVM's classpath "
        "when it starts (`spark.jars` would load it too late)",
    ),
    SettingDoc(
        "CDC_METASTORE_AUTO_CREATE",
        "`true`",
        "`true`: the metastore's missing tables and columns are created at start-up (without "
        "constraints); `false`: the schema was created by Hive's schematool",
    ),
    SettingDoc(
        "CDC_DRIVER_MEMORY",
        f"`{DEFAULT_DRIVER_MEMORY}`",
        "driver JVM heap (a 10M-event full build passes in it; more for larger first builds)",
    ),
    SettingDoc("CDC_EXECUTOR_MEMORY", "Spark's", "executor heap (target `cluster`)"),
    SettingDoc(
        TEST_SCOPE,
        "`changed`",
        "`all`: `cdcw run` tests every row of the marts, not only those its build rewrote; any "
        "other value is refused",
    ),
    SettingDoc(
        "CDC_CLASS_ARCHIVE",
        "`~/.cache/cdc-warehouse` (`$XDG_CACHE_HOME/cdc-warehouse` if set)",
        "directory of the driver JVM's class archive (docs/operations.md, The class archive); "
        "`off`: none",
    ),
    SettingDoc(
        PARTIAL_LINE_WAIT,
        f"`{DEFAULT_PARTIAL_LINE_WAIT_SECONDS}`",
        "a `*.jsonl` file's last line without a newline waits as being written until the file "
        "has not changed for this long, then lands as it is",
    ),
    SettingDoc(
        INTERPRETED_MAX_LINES,
        f"`{DEFAULT_INTERPRETED_MAX_LINES}`",
        "`cdcw run` builds this many new lines or fewer with Spark's interpreted expressions, "
        "no code generation, when its last successful build, of the same project and arguments, "
        "went through the landing run before; `0`: never. It pays on a small warehouse, where "
        "compiling each query's code costs more than it saves; a large one's builds read whole "
        "partitions of the marts, where generated code wins (docs/decisions/018)",
    ),
    SettingDoc(
        RETENTION_HOURS,
        f"`{DEFAULT_RETENTION_HOURS}`",
        "`cdcw maintain` keeps the files of every table version younger than this; time travel "
        "(`cdc_as_of_run`) reaches back as far. Below 168 Delta's own safety check is turned "
        "off for that command",
    ),
    SettingDoc(
        SQL_CONF_SETTING,
        "(none)",
        "Spark SQL settings of this installation over the project's own, as `key=value` pairs "
        "separated by `;`; runtime settings only (`spark.sql.*`, `spark.databricks.delta.*`), "
        "so they reach a Spark Connect session too. E.g. `spark.sql.shuffle.partitions=400` on "
        "a large cluster, or no code generation for small tables "
        "(`spark.sql.codegen.wholeStage=false;spark.sql.codegen.factoryMode=NO_CODEGEN`, what "
        "the test suite uses)",
    ),
    SettingDoc(
        SPARK_UI,
        "(none)",
        "`1`, `true` or `yes`: the driver serves the Spark UI (the run says where); off by "
        "default; refused with the `connect` target",
    ),
    SettingDoc(
        SPARK_UI_PORT,
        f"`{DEFAULT_SPARK_UI_PORT}`",
        "the Spark UI's port (Spark takes the next free one above when it is taken)",
    ),
    SettingDoc(
        SPARK_UI_HOST,
        f"`{DEFAULT_SPARK_UI_HOST}`",
        "the address the driver, and so its UI, binds to (`SPARK_LOCAL_IP`): this machine only "
        "unless set; on the `cluster` target (other than `local-cluster`) it must be the "
        "driver's address on the cluster's network, which the executors reach",
    ),
    SettingDoc(
        METRICS_FILE,
        "(none)",
        "after each run, its metrics in Prometheus' text format to this file (written beside "
        "and renamed into place, for node_exporter's textfile collector): "
        "`cdcw_run_duration_seconds`, `cdcw_run_status{status=...}` (1 for the last run's), "
        "`cdcw_run_files_landed`, `cdcw_run_lines_landed`, `cdcw_run_lines_quarantined`, and "
        "per source (`source_system`, `source_name` labels) `cdcw_source_landing_age_seconds` "
        "and `cdcw_source_commit_lag_seconds` from `cdc_source_freshness`",
    ),
    SettingDoc(
        ALWAYS_BUILD,
        "(none)",
        "`1`, `true` or `yes`: `cdcw run` builds even when nothing changed since its last "
        "successful build; `0`, `false`, `no` or empty: the default; any other value is refused",
    ),
    SettingDoc(
        "CDC_THRIFT_HOST",
        f"`{DEFAULT_THRIFT_HOST}`",
        "the address the Thrift server (`python -m cdc_warehouse.thrift_server`) listens on",
    ),
    SettingDoc(
        "CDC_PROJECT_DIR",
        "this checkout",
        "the dbt project `cdcw` runs (its models, macros, `cdc_tables.yml`, sample data)",
    ),
    SettingDoc(
        "PYSPARK_PYTHON",
        "the interpreter running `cdcw`",
        "the Python of Spark's workers: the driver's minor version with the project's "
        "dependencies at the versions of `constraints.txt` (docs/operations.md)",
    ),
)
