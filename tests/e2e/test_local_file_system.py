"""The warehouse session writes its files through the project's local file system
(cdc_warehouse/local_file_system.py): a Delta table written, read and committed to starts no
child process, and its files get the permissions Hadoop's stock local file system gives them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from cdc_warehouse import local_file_system
from tests.conftest import Pipeline

PROCESS_START = "jdk.ProcessStart"
# The Java package of cdc_warehouse/jvm.
PROJECT_PACKAGE = "cdcwarehouse.hadoop"
SPARK_EXECUTOR_METRICS = "org.apache.spark.executor.ProcfsMetricsGetter"


def started_by(event) -> set[str]:
    """The classes on the stack that started a recorded process."""
    return {frame.getMethod().getType().getName() for frame in event.getStackTrace().getFrames()}


def processes_started_while(spark, recording_dir: Path, action) -> list[str]:
    """The command line of each child process the session's JVM started while `action()` ran (a
    Java Flight Recorder recording of process starts alone), so that a failure names them. Not
    counted: `getconf PAGESIZE`, which Spark's executor metrics start at a heartbeat whatever
    the file system, and which can fall inside the recording."""
    jvm = spark.sparkContext._jvm
    recording = jvm.jdk.jfr.Recording()
    recording.enable(PROCESS_START).withStackTrace()
    recording.start()
    try:
        action()
    finally:
        recording.stop()
    dump = recording_dir / "processes.jfr"
    recording.dump(jvm.java.io.File(str(dump)).toPath())
    recording.close()
    events = jvm.jdk.jfr.consumer.RecordingFile.readAllEvents(jvm.java.io.File(str(dump)).toPath())
    return [
        f"{event.getString('command')} (in {event.getString('directory')})"
        for event in events
        if event.getEventType().getName() == PROCESS_START
        and SPARK_EXECUTOR_METRICS not in started_by(event)
    ]


def test_the_sessions_local_file_systems_are_the_projects(java_available, tmp_path):
    spark = Pipeline(tmp_path).spark()
    jvm = spark.sparkContext._jvm
    hadoop_conf = spark.sparkContext._jsc.hadoopConfiguration()
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(hadoop_conf)
    context = jvm.org.apache.hadoop.fs.FileContext.getLocalFSFileContext(hadoop_conf)
    in_use = {
        "spark.hadoop.fs.file.impl": local.getClass().getName(),
        "spark.hadoop.fs.AbstractFileSystem.file.impl": (
            context.getDefaultFileSystem().getClass().getName()
        ),
    }
    assert in_use == local_file_system.SESSION_CONF
    assert all(name.startswith(f"{PROJECT_PACKAGE}.") for name in in_use.values())


def test_a_delta_table_is_written_without_a_child_process(java_available, tmp_path):
    spark = Pipeline(tmp_path).spark()
    location = tmp_path / "table"

    def write_and_read() -> None:
        spark.sql(
            f"create table delta.`{location}` using delta partitioned by (part)"
            " as select id, id % 3 as part from range(30)"
        )
        spark.sql(f"insert into delta.`{location}` select id, id % 3 from range(30, 60)")
        spark.sql(f"delete from delta.`{location}` where id < 5")
        assert spark.sql(f"select count(*) from delta.`{location}`").first()[0] == 55

    assert processes_started_while(spark, tmp_path, write_and_read) == []

    umask = os.umask(0)
    os.umask(umask)
    written = [path for path in location.rglob("*") if not path.is_symlink()]
    assert any(path.suffix == ".parquet" for path in written)
    assert any(path.name.endswith(".crc") for path in written), "still checksummed"
    modes = {stat.S_IMODE(path.stat().st_mode) for path in written if path.is_file()}
    assert modes == {0o666 & ~umask}
    directories = {stat.S_IMODE(path.stat().st_mode) for path in written if path.is_dir()}
    assert directories == {0o777 & ~umask}


def test_a_links_status_is_the_links_and_a_files_its_own(java_available, tmp_path):
    spark = Pipeline(tmp_path).spark()
    jvm = spark.sparkContext._jvm
    local = jvm.org.apache.hadoop.fs.FileSystem.getLocal(
        spark.sparkContext._jsc.hadoopConfiguration()
    ).getRawFileSystem()
    target = tmp_path / "target.txt"
    target.write_text("twelve bytes")
    link = tmp_path / "link.txt"
    link.symlink_to(target)

    of_file = local.getFileLinkStatus(jvm.org.apache.hadoop.fs.Path(str(target)))
    assert not of_file.isSymlink() and of_file.getLen() == 12
    of_link = local.getFileLinkStatus(jvm.org.apache.hadoop.fs.Path(str(link)))
    assert of_link.isSymlink()
    assert of_link.getSymlink().toUri().getPath() == str(target)
