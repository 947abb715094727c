"""When a scheduled `cdcw run` may skip dbt: the build record and its fingerprint, no Spark."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cdc_warehouse import build_record
from cdc_warehouse.settings import PROJECT_DIR

ENV = {"CDC_LANDING_ROOT": "/landing", "CDC_WAREHOUSE_DIR": "/warehouse", "HOME": "/root"}
ARGS = ["--vars", "{cdc_keys_per_partition: 2}"]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of what the fingerprint reads from the real project, to change freely."""
    copy = tmp_path / "project"
    copy.mkdir()
    for name in build_record.PROJECT_INPUTS:
        source = PROJECT_DIR / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, copy / name)
    (copy / "cdc_tables.yml").write_text("tables: []\n")
    return copy


def digest(project: Path, args=ARGS, env=ENV, dbt_version="1.11.16") -> str:
    return build_record.fingerprint(project, project / "cdc_tables.yml", args, env, dbt_version)


def test_the_fingerprint_is_stable(project):
    assert digest(project) == digest(project)


@pytest.mark.parametrize(
    "relative",
    [
        "models/marts/cdc_history.sql",
        "macros/change_log/same_key.sql",
        "tests/dbt/spanner_children_after_their_parents.sql",
        "python_udfs/debezium/__init__.py",
        "dbt_project.yml",
        "cdc_tables.yml",
    ],
)
def test_a_changed_project_file_changes_the_fingerprint(project, relative):
    before = digest(project)
    with (project / relative).open("a") as handle:
        handle.write("\n")
    assert digest(project) != before


def test_a_new_model_changes_the_fingerprint(project):
    before = digest(project)
    (project / "models" / "marts" / "new_mart.sql").write_text("select 1 as one\n")
    assert digest(project) != before


def test_arguments_settings_and_the_dbt_version_change_the_fingerprint(project):
    before = digest(project)
    assert digest(project, args=[*ARGS, "--select", "cdc_history"]) != before
    assert digest(project, env={**ENV, "CDC_TEST_SCOPE": "all"}) != before
    assert digest(project, env={**ENV, "CDC_SCHEMA": "marts"}) != before
    assert digest(project, env={**ENV, "SPARK_REMOTE": "sc://spark:15002"}) != before
    assert digest(project, dbt_version="1.11.17") != before


def test_what_does_not_change_a_build_leaves_the_fingerprint(project):
    before = digest(project)
    assert digest(project, env={**ENV, "HOME": "/home/other", "CDC_ALWAYS_BUILD": "1"}) == before
    assert digest(project, env={**ENV, "CDC_CLASS_ARCHIVE": "off"}) == before
    cache = project / "python_udfs" / "__pycache__"
    cache.mkdir(exist_ok=True)
    (cache / "debezium.cpython-311.pyc").write_bytes(b"compiled")
    assert digest(project) == before


def test_a_written_record_reads_back_and_forget_removes_it(tmp_path):
    assert build_record.read(tmp_path / "_dbt") is None
    build_record.write(tmp_path / "_dbt", 7, "abc")
    record = build_record.read(tmp_path / "_dbt")
    assert (record.landing_run, record.fingerprint) == (7, "abc")
    assert record.finished_at
    build_record.forget(tmp_path / "_dbt")
    assert build_record.read(tmp_path / "_dbt") is None
    build_record.forget(tmp_path / "_dbt")


@pytest.mark.parametrize("content", ["", "{not json", '{"landing_run": 3}', "[1, 2]"])
def test_an_unreadable_record_means_build(tmp_path, content):
    (tmp_path / build_record.RECORD_FILE).write_text(content)
    assert build_record.read(tmp_path) is None


RECORD = build_record.BuildRecord(landing_run=5, fingerprint="abc", finished_at="then")


def test_a_run_that_landed_nothing_after_the_recorded_build_skips_it():
    assert build_record.up_to_date(RECORD, 5, 0, "abc", ARGS, always_build=False)


@pytest.mark.parametrize(
    ("record", "newest_run", "files", "fingerprint", "args", "always_build"),
    [
        pytest.param(None, 5, 0, "abc", ARGS, False, id="no successful build recorded"),
        pytest.param(RECORD, 6, 2, "abc", ARGS, False, id="new files landed"),
        pytest.param(RECORD, 6, 0, "abc", ARGS, False, id="a run landed since (cdcw land)"),
        pytest.param(RECORD, 5, 0, "def", ARGS, False, id="project or settings changed"),
        pytest.param(RECORD, 5, 0, "abc", [*ARGS, "--full-refresh"], False, id="full refresh"),
        pytest.param(RECORD, 5, 0, "abc", ARGS, True, id="forced"),
    ],
)
def test_a_run_builds(record, newest_run, files, fingerprint, args, always_build):
    assert not build_record.up_to_date(record, newest_run, files, fingerprint, args, always_build)


def test_the_record_outlives_a_build_that_catches_up_newer_landing_runs():
    """Killed or failed, such a build leaves a record behind the newest landing run: the next
    run builds, and tests and builds from the record on."""
    assert build_record.outlives_build(RECORD, "abc", ARGS, always_build=False)
    assert not build_record.up_to_date(RECORD, 6, 0, "abc", ARGS, always_build=False)


@pytest.mark.parametrize(
    ("record", "fingerprint", "args", "always_build"),
    [
        pytest.param(None, "abc", ARGS, False, id="no successful build recorded"),
        pytest.param(RECORD, "def", ARGS, False, id="project or settings changed"),
        pytest.param(RECORD, "abc", [*ARGS, "--full-refresh"], False, id="full refresh"),
        pytest.param(RECORD, "abc", ARGS, True, id="forced"),
    ],
)
def test_the_record_goes_before_a_build_that_may_rewrite_what_it_saw(
    record, fingerprint, args, always_build
):
    """Such a build may change rows of landing runs the record covers: interrupted, it must
    leave the next run building everything and testing every row."""
    assert not build_record.outlives_build(record, fingerprint, args, always_build)
