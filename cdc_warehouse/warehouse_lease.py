"""A lease on the warehouse itself, for installations that no other lock keeps apart: a
warehouse apart from the state directory (CDC_STATE_DIR set), local or a remote URI (hdfs:,
s3a:, ...), with the embedded metastore or one without a run lock (a metastore service, a
database other than PostgreSQL or MySQL/MariaDB). Each such installation has its own Derby or
shares a metastore nothing locks, so only a file in the warehouse can tell them apart.

The lease is a small file, `<warehouse>/.cdcw-<prefix>.lease`, naming its holder. A command
creates it (create-if-absent through Hadoop's FileSystem, so any URI Spark reads works),
renews it while it runs and deletes it at the end. A second command stops at once (exit 3)
while the lease is fresh. A lease left by a killed process is taken over once it has not been
renewed for LEASE_SECONDS, or at once by the installation that left it (its state directory's
own lock says none of its processes still runs). Create-if-absent is atomic on HDFS and on a
local disk behind the state directory's file lock; on object stores without conditional
writes two commands started within the same moment may both get it."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

from pyspark.sql import SparkSession

from cdc_warehouse.settings import CONNECT, Settings, WarehouseBusy, by_url_prefix

# A lease not renewed for this long was left by a process that died.
LEASE_SECONDS = 300
RENEW_SECONDS = 60


@dataclass(frozen=True)
class Lease:
    """Who holds the warehouse: the process, its machine and installation, and when it last
    renewed the lease (seconds since the epoch, by its own clock)."""

    pid: int
    host: str
    state_dir: str
    renewed_at: float

    def text(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def parse(text: str) -> Lease | None:
        """None for a lease file that cannot be read (cut short by a crash while written)."""
        try:
            fields = json.loads(text)
            return Lease(
                int(fields["pid"]),
                str(fields["host"]),
                str(fields["state_dir"]),
                float(fields["renewed_at"]),
            )
        except (ValueError, KeyError, TypeError):
            return None

    def describe(self) -> str:
        return f"pid {self.pid} on {self.host}, CDC_STATE_DIR {self.state_dir}"


def needs_lease(settings: Settings) -> bool:
    """Whether the warehouse is apart from the state directory with no metastore run lock over
    it (cdc_warehouse/metastore_locks.py); a Connect server owns its warehouse."""
    from cdc_warehouse.metastore_locks import RUN_LOCKS

    if settings.target == CONNECT or settings.warehouse_location is None:
        return False
    metastore = settings.metastore
    return metastore is None or by_url_prefix(RUN_LOCKS, metastore.url) is None


def lease_uri(settings: Settings) -> str:
    return (
        f"{settings.spark_warehouse.rstrip('/')}/.cdcw-{settings.schema_prefix or 'tables'}.lease"
    )


def may_take(held: Lease | None, mine: Lease, now: float) -> bool:
    """A lease may be taken when unreadable, stale, or left by this very installation."""
    if held is None:
        return True
    if (held.host, held.state_dir) == (mine.host, mine.state_dir):
        return True
    return now - held.renewed_at > LEASE_SECONDS


class _LeaseFile:
    """The lease file through Hadoop's FileSystem of the warehouse URI (driver JVM)."""

    def __init__(self, spark: SparkSession, uri: str) -> None:
        jvm: Any = spark.sparkContext._jvm
        self.path = jvm.org.apache.hadoop.fs.Path(uri)
        self.fs = self.path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def create(self, lease: Lease, overwrite: bool) -> bool:
        """Write the lease; without `overwrite`, only if there is none (False if there is)."""
        if not overwrite and self.fs.exists(self.path):
            return False
        try:
            out = self.fs.create(self.path, overwrite)
        except Exception as error:  # FileAlreadyExistsException: another command was first
            if "AlreadyExists" in str(error) or self.fs.exists(self.path):
                return False
            raise
        try:
            out.write(bytearray(lease.text().encode()))
        finally:
            out.close()
        return True

    def read(self) -> Lease | None:
        try:
            stream = self.fs.open(self.path)
        except Exception:  # gone since it was seen
            return None
        try:
            return Lease.parse(bytes(stream.readAllBytes()).decode(errors="replace"))
        finally:
            stream.close()

    def delete(self) -> None:
        self.fs.delete(self.path, False)


def _busy_message(settings: Settings, held: Lease, now: float) -> str:
    prefix = f" with schema prefix {settings.schema_prefix!r}" if settings.schema_prefix else ""
    return (
        f"another cdcw process ({held.describe()}) is using the warehouse "
        f"{settings.spark_warehouse}{prefix}: its lease {lease_uri(settings)} was renewed "
        f"{max(0, round(now - held.renewed_at))} s ago; one command at a time per warehouse and "
        f"prefix (a lease not renewed for {LEASE_SECONDS} s is taken over)"
    )


@contextmanager
def warehouse_lease(spark: SparkSession, settings: Settings) -> Iterator[None]:
    """Hold the warehouse's lease for the block, when it needs one (WarehouseBusy if another
    command holds it)."""
    if not needs_lease(settings):
        yield
        return
    lease_file = _LeaseFile(spark, lease_uri(settings))
    host, state_dir = socket.gethostname(), str(settings.warehouse_dir)

    def mine() -> Lease:
        return Lease(os.getpid(), host, state_dir, time.time())

    if not lease_file.create(mine(), overwrite=False):
        held = lease_file.read()
        if not may_take(held, mine(), time.time()):
            assert held is not None
            raise WarehouseBusy(_busy_message(settings, held, time.time()))
        # Stale or our own: replace it, then make sure no other taker replaced it after us.
        lease_file.delete()
        taken = lease_file.create(mine(), overwrite=False)
        held = lease_file.read()
        if not taken or held is None or held.pid != os.getpid() or held.host != host:
            raise WarehouseBusy(_busy_message(settings, held or mine(), time.time()))
    stop = threading.Event()

    def renew() -> None:
        while not stop.wait(RENEW_SECONDS):
            held = lease_file.read()
            if held is None or (held.pid, held.host) != (os.getpid(), host):
                return  # taken over: nothing of ours to renew
            lease_file.create(mine(), overwrite=True)

    renewer = threading.Thread(target=renew, name="cdcw-warehouse-lease", daemon=True)
    renewer.start()
    try:
        yield
    finally:
        stop.set()
        renewer.join()
        held = lease_file.read()
        if held is not None and (held.pid, held.host) == (os.getpid(), host):
            lease_file.delete()
