"""A throwaway PostgreSQL 15 server for tests, driven only through its own binaries.

`LocalPostgres(directory)` initdb's a fresh cluster, starts it on 127.0.0.1 on a free port with
logical decoding switched on, runs SQL through `psql` and always stops it again:

    with LocalPostgres(tmp_path) as pg:
        pg.sql("create table t (id int primary key)")
        rows = pg.sql("select id, null from t")     # -> [("1", None), ...]
        with pg.session() as open_tx:               # a second, long-lived psql
            open_tx.run("begin; insert into t values (2);")
            ...

No Python driver is needed: every statement goes through `psql -X -At -v ON_ERROR_STOP=1`.
When we run as root (CI containers), the server runs as the `postgres` OS user, because initdb and
postgres refuse to run as root. When the binaries are missing and we are root, the Debian package
`postgresql-15` is installed once (apt-get), serialized by a lock file.
"""

from __future__ import annotations

import csv
import fcntl
import io
import os
import pwd
import shlex
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PG_MAJOR = 15
DEFAULT_BINDIR = Path(f"/usr/lib/postgresql/{PG_MAJOR}/bin")
JDBC_JAR = Path("/usr/share/java/postgresql.jar")
SERVER_SETTINGS = {
    "wal_level": "logical",
    "max_replication_slots": "4",
    "max_wal_senders": "4",
    "logical_decoding_work_mem": "64kB",
    "max_prepared_transactions": "10",
    "listen_addresses": "127.0.0.1",
    # Deterministic text output of timestamptz (pgoutput renders values in the decoding session).
    "timezone": "UTC",
    # pg_xact_commit_timestamp(xid): the commit time the harness's expected history uses.
    "track_commit_timestamp": "on",
    # A test cluster: durability is not needed, speed is.
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
}
# psql prints NULL as this (a value can never contain \x01 followed by this text by accident here).
NULL_MARKER = "\x01<NULL>\x01"
INSTALL_LOCK = Path(tempfile.gettempdir()) / "cdc-test-postgresql-install.lock"


class PostgresError(RuntimeError):
    """The server could not be installed, started, or a statement failed."""


def _is_root() -> bool:
    return os.geteuid() == 0


def ensure_debian_package(package: str, installed: Path) -> None:
    """apt-get install `package` unless `installed` exists (as root, once, serialized by a lock
    file because another test process may be installing right now)."""
    if installed.exists():
        return
    if not _is_root():
        raise PostgresError(f"{installed} not found; install the Debian package {package}")
    INSTALL_LOCK.touch(exist_ok=True)
    with INSTALL_LOCK.open("r+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if installed.exists():
            return
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        for command in (
            ["apt-get", "update"],
            ["apt-get", "install", "-y", "--no-install-recommends", package],
        ):
            try:
                done = subprocess.run(
                    command, env=env, capture_output=True, text=True, timeout=900, check=False
                )
            except (OSError, subprocess.TimeoutExpired) as error:
                raise PostgresError(f"could not run {' '.join(command)}: {error}") from error
            if done.returncode != 0:
                raise PostgresError(
                    f"installing {package} failed: `{' '.join(command)}` exited "
                    f"{done.returncode}:\n{(done.stdout + done.stderr)[-3000:]}"
                )
    if not installed.exists():
        raise PostgresError(f"{package} installed but {installed} is missing")


def ensure_server_binaries(bindir: Path = DEFAULT_BINDIR) -> Path:
    """The directory holding initdb/pg_ctl/postgres/psql; installs postgresql-15 if needed."""
    if (bindir / "postgres").exists():
        return bindir
    if not _is_root() or bindir != DEFAULT_BINDIR:
        raise PostgresError(
            f"PostgreSQL {PG_MAJOR} server binaries not found in {bindir}; install the Debian "
            f"package postgresql-{PG_MAJOR} (apt-get install -y postgresql-{PG_MAJOR})"
        )
    ensure_debian_package(f"postgresql-{PG_MAJOR}", bindir / "postgres")
    return bindir


def ensure_jdbc_driver(jar: Path = JDBC_JAR) -> Path:
    """PostgreSQL's JDBC driver (Debian's libpostgresql-jdbc-java), e.g. for a Hive metastore."""
    ensure_debian_package("libpostgresql-jdbc-java", jar)
    return jar


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def parse_csv_rows(output: str) -> list[tuple[str | None, ...]]:
    """`psql -t --csv` output (all result sets, no headers) -> rows of text, NULL as None."""
    return [
        tuple(None if field == NULL_MARKER else field for field in record)
        for record in csv.reader(io.StringIO(output, newline=""))
    ]


class LocalPostgres:
    """A fresh PostgreSQL cluster in `directory` (or a private temp dir the server can reach)."""

    def __init__(
        self,
        directory: Path | str,
        *,
        bindir: Path = DEFAULT_BINDIR,
        settings: dict[str, str] | None = None,
        start_timeout: float = 60.0,
    ) -> None:
        self.directory = Path(directory)
        self.bindir = bindir
        self.settings = {**SERVER_SETTINGS, **(settings or {})}
        self.start_timeout = start_timeout
        self.port: int | None = None
        self.user = "postgres"
        self.database = "postgres"
        self._run_as: str | None = "postgres" if _is_root() else None
        self._owned_dirs: list[Path] = []
        self._sessions: list[PsqlSession] = []
        self._started = False
        self.base: Path | None = None

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> LocalPostgres:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def start(self) -> LocalPostgres:
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self) -> None:
        self.bindir = ensure_server_binaries(self.bindir)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.base = self._server_reachable_dir(self.directory)
        self.data_dir = self.base / "data"
        # Unix socket paths are limited to ~107 bytes: keep the socket in a short private dir.
        self.socket_dir = Path(tempfile.mkdtemp(prefix="cdc-pg-sock-"))
        self._owned_dirs.append(self.socket_dir)
        self._give_to_server(self.socket_dir)
        self.log_file = self.base / "postgres.log"
        self.log_file.touch()
        self._give_to_server(self.log_file, mode=0o644)
        self.data_dir.mkdir()
        self._give_to_server(self.data_dir)
        self._as_server(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data_dir),
                "-U",
                self.user,
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            what="initdb",
        )
        last_error: PostgresError | None = None
        for _attempt in range(3):  # the free port may be taken between probing and binding
            self.port = free_port()
            options = [f"-p {self.port}", f"-k {shlex.quote(str(self.socket_dir))}"]
            options += [f"-c {name}={shlex.quote(value)}" for name, value in self.settings.items()]
            try:
                self._as_server(
                    [
                        str(self.bindir / "pg_ctl"),
                        "-D",
                        str(self.data_dir),
                        "-l",
                        str(self.log_file),
                        "-w",
                        "-t",
                        str(int(self.start_timeout)),
                        "-o",
                        " ".join(options),
                        "start",
                    ],
                    what="pg_ctl start",
                )
            except PostgresError as error:
                last_error = error
                self._stop_server()
                continue
            self._started = True
            break
        if not self._started:
            raise PostgresError(f"{last_error}\n--- server log ---\n{self.server_log()[-4000:]}")
        self.sql("select 1")

    def close(self) -> None:
        """Stop the server (pg_ctl stop -m fast), end open sessions, remove private temp dirs."""
        for session in list(self._sessions):
            session.close()
        self._sessions.clear()
        self._stop_server()
        self._started = False
        if self.base is not None and self.base != self.directory and self.log_file.exists():
            shutil.copyfile(self.log_file, self.directory / "postgres.log")
        for directory in self._owned_dirs:
            shutil.rmtree(directory, ignore_errors=True)
        self._owned_dirs.clear()

    def _stop_server(self) -> None:
        data_dir = getattr(self, "data_dir", None)
        if data_dir is None or not (data_dir / "postmaster.pid").exists():
            return
        try:
            self._as_server(
                [
                    str(self.bindir / "pg_ctl"),
                    "-D",
                    str(data_dir),
                    "-m",
                    "fast",
                    "-w",
                    "-t",
                    "30",
                    "stop",
                ],
                what="pg_ctl stop",
            )
        except PostgresError:
            # Last resort: the postmaster we started, by its pid.
            try:
                pid = int((data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
                os.kill(pid, 9)
            except (OSError, ValueError):
                pass

    # -- SQL -----------------------------------------------------------------------------------

    def psql_command(self, *extra: str) -> list[str]:
        return [
            str(self.bindir / "psql"),
            "-X",
            "-q",
            "-v",
            "ON_ERROR_STOP=1",
            "-h",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-U",
            self.user,
            "-d",
            self.database,
            *extra,
        ]

    def psql_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["PGTZ"] = "UTC"
        env["PGCLIENTENCODING"] = "UTF8"
        env["PGCONNECT_TIMEOUT"] = "10"
        return env

    def conninfo(self) -> str:
        """The server's libpq connection string (as psql's -d takes it)."""
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={self.database}"

    def sql(self, text: str, timeout: float = 120.0) -> list[tuple[str | None, ...]]:
        """Run one or more statements; rows of every row-returning statement, values as text.

        SQL NULL comes back as None. Any error raises PostgresError with psql's message.
        """
        command = self.psql_command("-t", "--csv", "-P", f"null={NULL_MARKER}", "-f", "-")
        try:
            done = subprocess.run(
                command,
                input=text.encode(),
                env=self.psql_env(),
                capture_output=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as error:
            raise PostgresError(
                f"psql timed out after {timeout}s running:\n{text[:2000]}"
            ) from error
        if done.returncode != 0:
            raise PostgresError(
                f"psql failed ({done.returncode}): {done.stderr.decode(errors='replace').strip()}"
                f"\n--- statements ---\n{text[:2000]}"
            )
        return parse_csv_rows(done.stdout.decode())

    def value(self, text: str) -> str | None:
        rows = self.sql(text)
        if len(rows) != 1 or len(rows[0]) != 1:
            raise PostgresError(f"expected one value, got {rows!r} from: {text}")
        return rows[0][0]

    def session(self) -> PsqlSession:
        """A long-lived psql connection (e.g. to keep a transaction open across slot reads)."""
        session = PsqlSession(self)
        self._sessions.append(session)
        return session

    def server_log(self) -> str:
        try:
            return self.log_file.read_text(errors="replace")
        except (AttributeError, OSError):
            return ""

    # -- running as the postgres OS user -------------------------------------------------------

    def _as_server(self, command: list[str], what: str) -> None:
        if self._run_as:
            if shutil.which("runuser"):
                command = ["runuser", "-u", self._run_as, "--", *command]
            else:
                command = ["su", self._run_as, "-s", "/bin/sh", "-c", shlex.join(command)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        try:
            done = subprocess.run(
                command,
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
                cwd="/",
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            raise PostgresError(f"{what} could not run: {error}") from error
        if done.returncode != 0:
            raise PostgresError(
                f"{what} failed ({done.returncode}): {(done.stdout + done.stderr).strip()[-3000:]}"
            )

    def _give_to_server(self, path: Path, mode: int = 0o700) -> None:
        if self._run_as:
            entry = pwd.getpwnam(self._run_as)
            os.chown(path, entry.pw_uid, entry.pw_gid)
        path.chmod(mode)

    def _server_reachable_dir(self, directory: Path) -> Path:
        """`directory` if the server's OS user can get there, else a private dir under /tmp."""
        if not self._run_as:
            return directory
        try:
            entry = pwd.getpwnam(self._run_as)
        except KeyError as error:
            raise PostgresError(f"OS user {self._run_as!r} does not exist") from error
        if _user_can_traverse(directory, entry):
            return directory
        private = Path(tempfile.mkdtemp(prefix="cdc-pg-"))
        private.chmod(0o755)
        self._owned_dirs.append(private)
        return private


def _user_can_traverse(directory: Path, entry: pwd.struct_passwd) -> bool:
    """Whether every directory from / down to `directory` is searchable by that user."""
    for part in [*reversed(directory.resolve().parents), directory.resolve()]:
        info = part.stat()
        if info.st_uid == entry.pw_uid:
            allowed = info.st_mode & 0o100
        elif info.st_gid == entry.pw_gid:
            allowed = info.st_mode & 0o010
        else:
            allowed = info.st_mode & 0o001
        if not allowed:
            return False
    return True


class PsqlSession:
    """One psql process kept open; statements are written to its stdin step by step.

    `run(sql)` returns once psql has executed everything written so far (an \\echo marker comes
    back), so a transaction opened here stays open while other connections read the slot.
    """

    def __init__(self, pg: LocalPostgres) -> None:
        self.pg = pg
        self._counter = 0
        self.process = subprocess.Popen(
            pg.psql_command("-At", "-P", f"null={NULL_MARKER}"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=pg.psql_env(),
            text=True,
            encoding="utf-8",
            bufsize=1,
        )

    def __enter__(self) -> PsqlSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self, text: str, timeout: float = 120.0) -> list[str]:
        """Execute statements in this session; the output lines they printed (if any)."""
        if self.process.poll() is not None:
            raise PostgresError(f"psql session already ended ({self.process.returncode})")
        self._counter += 1
        marker = f"__cdc_step_done_{self._counter}__"
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(text.rstrip() + "\n" + f"\\echo {marker}\n")
        self.process.stdin.flush()
        lines: list[str] = []
        deadline = time.monotonic() + timeout
        while True:
            line = self.process.stdout.readline()
            if line == "":
                self.process.wait(timeout=10)
                raise PostgresError(
                    f"psql session ended ({self.process.returncode}) while running:\n"
                    f"{text[:2000]}\n--- output ---\n{''.join(lines)[-3000:]}"
                )
            if line.rstrip("\n") == marker:
                return [entry.rstrip("\n") for entry in lines]
            lines.append(line)
            if time.monotonic() > deadline:
                raise PostgresError(f"psql session timed out running:\n{text[:2000]}")

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                assert self.process.stdin is not None
                self.process.stdin.write("\\q\n")
                self.process.stdin.close()
                self.process.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                self.process.kill()
                self.process.wait(timeout=10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None and not stream.closed:
                stream.close()
        if self in self.pg._sessions:
            self.pg._sessions.remove(self)


@contextmanager
def local_postgres(directory: Path | str, **kwargs: object) -> Iterator[LocalPostgres]:
    with LocalPostgres(directory, **kwargs) as pg:  # type: ignore[arg-type]
        yield pg
