"""The entry point's behaviour that needs no Spark: usage, argument pass-through, the lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cdc_warehouse import build_record, cli, steps
from cdc_warehouse.landing import LandingReport
from cdc_warehouse.settings import (
    PROJECT_DIR,
    RebuildNeeded,
    Settings,
    WarehouseBusy,
    load_settings,
)
from python_udfs.datastream import KEYLESS_BASES
from python_udfs.families import BY_NAME


def settings_in(tmp_path: Path) -> Settings:
    return Settings(
        landing_root=tmp_path / "landing",
        warehouse_dir=tmp_path / "warehouse",
        tables_file=tmp_path / "cdc_tables.yml",
        spark_master="local[1]",
        driver_memory="1g",
    )


def test_dbt_arguments_pass_through_and_gain_project_and_profiles(tmp_path):
    args = steps.dbt_args(["build", "--select", "cdc_history+"], settings_in(tmp_path))
    assert args[:3] == ["build", "--select", "cdc_history+"]
    assert args[args.index("--project-dir") + 1] == str(PROJECT_DIR)
    assert args[args.index("--profiles-dir") + 1] == str(PROJECT_DIR / "profiles")


def test_explicit_project_dir_is_kept(tmp_path):
    args = steps.dbt_args(["test", "--project-dir", "/elsewhere"], settings_in(tmp_path))
    assert args.count("--project-dir") == 1
    assert "/elsewhere" in args


def test_usage_errors_do_not_start_spark(tmp_path, capsys):
    settings = settings_in(tmp_path)
    assert cli.execute(["frobnicate"], settings) == 2
    assert "unknown command" in capsys.readouterr().err
    assert cli.execute(["dbt"], settings) == 2
    assert cli.execute([], settings) == 2
    assert cli.execute(["land", "--select", "x"], settings) == 2
    assert "`cdcw land` takes no --select x" in capsys.readouterr().err
    assert cli.execute(["generate-typed-models", "--project-dir"], settings) == 2
    assert "expected one argument" in capsys.readouterr().err
    assert cli.execute(["--help"], settings) == 0
    assert "generate-typed-models" in capsys.readouterr().out
    assert not settings.warehouse_dir.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["run"],
        ["run", "--exclude-resource-type", "test", "--vars", "{cdc_keys_per_partition: 3}"],
        ["run", "--select", "+cdc_spanner_streams", "--full-refresh"],
        [
            "dbt",
            "show",
            "--inline",
            "select * from {{ ref('cdc_current') }} where x = '-1'",
            "--limit",
            "-1",
            "--output",
            "json",
            "--quiet",
        ],
        ["dbt", "build", "--help"],
        ["dbt", "build", "--project-dir", "/elsewhere", "--select", "path:models/marts"],
        ["dbt", "source", "freshness", "--", "--vars", "{a: 1}"],
        ["bench", "--scale", "2000", "--phases", "floor,full", "-h"],
        ["pg-snapshot", "host=db dbname=app", "cdc_slot", "cdc_pub", "--two-phase"],
    ],
)
def test_what_follows_run_dbt_and_bench_passes_on_unchanged(argv):
    command = cli.parse_command(argv)
    assert (command.name, command.passed_on) == (argv[0], argv[1:])


@pytest.mark.parametrize("name", list(cli.COMMANDS))
def test_every_command_has_its_own_help_that_does_no_work(tmp_path, capsys, name):
    settings = settings_in(tmp_path)
    assert cli.execute([name, "--help"], settings) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("usage: cdcw ")
    assert f" {name} " in printed.splitlines()[0]
    assert not settings.warehouse_dir.exists()


def test_pg_snapshot_without_psql_says_so_in_one_sentence_and_starts_nothing(tmp_path, capsys):
    settings = settings_in(tmp_path)
    argv = ["pg-snapshot", "host=127.0.0.1 dbname=app", "cdc_slot", "cdc_pub"]
    assert cli.execute([*argv, "--psql", str(tmp_path / "no-psql")], settings) == 1
    printed = capsys.readouterr().out.strip()
    assert printed.startswith("cdcw pg-snapshot: ") and "no-psql" in printed
    assert len(printed.splitlines()) == 1
    assert not settings.warehouse_dir.exists()
    assert not (settings.landing_root / "pgoutput").exists()


def test_run_help_is_cdcws_not_dbts(tmp_path, capsys):
    assert cli.execute(["run", "-h"], settings_in(tmp_path)) == 0
    printed = capsys.readouterr().out
    assert "usage: cdcw run [-h] [-v]" in printed
    assert "(`cdcw dbt build --help` lists them)" in " ".join(printed.split())


def test_dbt_help_of_a_dbt_command_names_cdcw_and_starts_nothing(tmp_path, capsys):
    settings = settings_in(tmp_path)
    assert cli.execute(["dbt", "build", "--help"], settings) == 0
    printed = capsys.readouterr().out
    assert printed.startswith("Usage: cdcw dbt build [OPTIONS]")
    assert "--full-refresh" in printed
    assert not settings.warehouse_dir.exists()


@pytest.mark.parametrize(
    ("argv", "verbose", "passed_on"),
    [
        (["run", "--select", "x"], False, ["--select", "x"]),
        (["-v", "run", "--select", "x"], True, ["--select", "x"]),
        (["run", "--verbose", "--select", "x"], True, ["--select", "x"]),
        (["--verbose", "dbt", "show", "-s", "x"], True, ["show", "-s", "x"]),
        (["land", "-v"], True, []),
    ],
)
def test_verbose_is_cdcws_own_flag(argv, verbose, passed_on):
    command = cli.parse_command(argv)
    assert (command.verbose, command.passed_on) == (verbose, passed_on)


def test_a_jvm_started_quietly_writes_its_output_to_the_log(tmp_path, capfd):
    """What a child process started in the block writes to standard error goes to the log;
    this process's standard error is its own again after the block."""
    from cdc_warehouse.spark import jvm_output_to

    log = tmp_path / "logs" / "spark.log"
    noisy = [sys.executable, "-c", "import sys; sys.stderr.write('Setting default log level')"]
    with jvm_output_to(log):
        subprocess.run(noisy, check=True)
    subprocess.run([sys.executable, "-c", "import sys; sys.stderr.write('after')"], check=True)
    assert log.read_text() == "Setting default log level"
    assert capfd.readouterr().err == "after"
    with jvm_output_to(None):
        subprocess.run(noisy, check=True)
    assert capfd.readouterr().err == "Setting default log level"


@pytest.mark.parametrize(("text", "seconds"), [("30s", 30), ("5m", 300), ("1h", 3600)])
def test_run_every_takes_a_duration(text, seconds):
    command = cli.parse_command(["run", "--every", text, "--select", "x"])
    assert (command.every, command.passed_on) == (seconds, ["--select", "x"])
    assert cli.parse_command(["run"]).every is None


@pytest.mark.parametrize("text", ["30", "0s", "5 minutes", "1d"])
def test_a_duration_that_is_none_is_a_usage_error(tmp_path, capsys, text):
    settings = settings_in(tmp_path)
    assert cli.execute(["run", "--every", text], settings) == 2
    assert "e.g. 30s, 5m or 1h" in capsys.readouterr().err
    assert not settings.warehouse_dir.exists()


def test_generate_typed_models_takes_a_project_dir():
    assert cli.parse_command(["generate-typed-models"]).project_dir == PROJECT_DIR
    command = cli.parse_command(["generate-typed-models", "--project-dir", "/p"])
    assert command.project_dir == Path("/p")


def test_a_second_process_on_the_same_warehouse_stops_at_once(tmp_path):
    settings = settings_in(tmp_path)
    holder = (
        "import sys, time\n"
        "from cdc_warehouse import steps\n"
        "from cdc_warehouse.settings import Settings\n"
        "from pathlib import Path\n"
        f"s = Settings(Path('{tmp_path}/l'), Path('{settings.warehouse_dir}'), Path('x'), "
        "'local[1]', '1g')\n"
        "with steps.warehouse_lock(s):\n"
        "    print('locked', flush=True)\n"
        "    time.sleep(30)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout.readline().strip() == "locked"
        try:
            with steps.warehouse_lock(settings):
                raise AssertionError("the lock was granted twice")
        except WarehouseBusy as busy:
            assert f"pid {process.pid}" in str(busy)
            assert "one at a time" in str(busy)
    finally:
        process.kill()
        process.wait()
    with steps.warehouse_lock(settings):
        pass


def test_two_state_directories_on_one_warehouse_and_prefix_are_refused(tmp_path):
    """Each CDC_STATE_DIR has its own embedded metastore: two of them over one warehouse would
    land the same files twice. The warehouse directory carries a lock per schema prefix."""
    warehouse = tmp_path / "warehouse"

    def installation(state: str, prefix: str = ""):
        return load_settings(
            {
                "CDC_WAREHOUSE_DIR": warehouse.as_uri(),
                "CDC_STATE_DIR": str(tmp_path / state),
                "CDC_SCHEMA_PREFIX": prefix,
            }
        )

    first = installation("a")
    assert first.shared_warehouse_dir == warehouse
    with steps.warehouse_lock(first):
        try:
            with steps.warehouse_lock(installation("b")):
                raise AssertionError("the warehouse was granted to two state directories")
        except WarehouseBusy as busy:
            assert f"pid {os.getpid()}, CDC_STATE_DIR {tmp_path / 'a'}" in str(busy)
            assert str(warehouse) in str(busy)
        # Another schema prefix writes other tables (a shared metastore's pipelines).
        with steps.warehouse_lock(installation("c", prefix="other_")):
            pass
    with steps.warehouse_lock(installation("b")):
        pass


def test_run_tests_the_landing_runs_after_what_history_reflected():
    assert steps.tested_from_run(7, ["--select", "cdc_history+"]) == 8
    # Nothing built yet, a full refresh, or an operator asking for everything: no scope.
    assert steps.tested_from_run(None, []) is None
    assert steps.tested_from_run(7, ["--full-refresh"]) is None
    every_row = load_settings({"CDC_TEST_SCOPE": "all"}).test_every_row
    assert steps.tested_from_run(7, [], every_row) is None


def test_the_test_scope_setting_is_the_one_the_macros_read():
    """Python sets it, the test-scope macros read it: one name in each language."""
    macros = (PROJECT_DIR / "macros" / "marts" / "tested_from_landing_run.sql").read_text()
    assert f"landing_run_setting('{steps.TEST_SCOPE_SETTING}')" in macros


def test_the_build_families_setting_is_the_one_the_macro_reads():
    """Python sets it, the models that union the families read it: one name in each language."""
    macros = (PROJECT_DIR / "macros" / "utils" / "families_in_build.sql").read_text()
    assert f"set {steps.BUILD_FAMILIES_SETTING}'" in macros


def test_the_built_through_setting_is_the_one_the_macro_reads():
    """Python sets it, the models whose rows are rare read it: one name in each language."""
    macros = (PROJECT_DIR / "macros" / "utils" / "landing_runs_processed.sql").read_text()
    assert f"landing_run_setting('{steps.BUILT_THROUGH_SETTING}')" in macros


def test_the_processed_floor_is_the_last_like_build_s_landing_run():
    """A model whose rows are rare reads lines after the last successful build of the same
    project and arguments (a forced one too); no floor without one, after a change, or for a
    full refresh."""
    record = build_record.BuildRecord(landing_run=3, fingerprint="same", finished_at="then")
    assert steps.processed_floor(record, "same", []) == 3
    assert steps.processed_floor(record, "same", ["--select", "cdc_quarantine"]) == 3
    assert steps.processed_floor(None, "same", []) is None
    assert steps.processed_floor(record, "changed", []) is None
    assert steps.processed_floor(record, "same", ["--full-refresh"]) is None


def test_a_build_of_few_new_lines_after_a_like_build_runs_interpreted(tmp_path):
    """Only when the build reads no more than this run's lines: the last successful build, of
    the same project and arguments, went through the landing run before; not for a full
    refresh, more lines than the setting allows (none by default), or code generation chosen in
    CDC_SQL_CONF."""
    record = build_record.BuildRecord(landing_run=3, fingerprint="same", finished_at="then")
    allowed = {"CDC_WAREHOUSE_DIR": str(tmp_path), "CDC_INTERPRETED_MAX_LINES": "20000"}
    settings = load_settings(allowed)
    few = LandingReport(landing_run=4, files=1, lines=settings.interpreted_max_lines, unread=())
    assert steps.builds_few_lines(record, "same", few, [], settings)
    forced = LandingReport(landing_run=4, files=0, lines=0, unread=())
    assert steps.builds_few_lines(record, "same", forced, [], settings)
    assert not steps.builds_few_lines(None, "same", few, [], settings)
    assert not steps.builds_few_lines(record, "changed", few, [], settings)
    assert not steps.builds_few_lines(record, "same", few, ["--full-refresh"], settings)
    catching_up = LandingReport(landing_run=5, files=1, lines=10, unread=())
    assert not steps.builds_few_lines(record, "same", catching_up, [], settings)
    many = LandingReport(landing_run=4, files=1, lines=few.lines + 1, unread=())
    assert not steps.builds_few_lines(record, "same", many, [], settings)
    never = load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path), "CDC_INTERPRETED_MAX_LINES": "0"})
    assert not steps.builds_few_lines(record, "same", forced, [], never)
    by_default = load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path)})
    assert not steps.builds_few_lines(record, "same", forced, [], by_default)
    chosen = load_settings({**allowed, "CDC_SQL_CONF": "spark.sql.codegen.wholeStage=true"})
    assert not steps.builds_few_lines(record, "same", few, [], chosen)


def test_a_build_chooses_its_families_only_after_a_like_build(tmp_path):
    """Every node is built (no family selection, and no query for one) without a record of a
    successful build, after anything changed since it, or when the caller chose the nodes."""
    record = build_record.BuildRecord(landing_run=3, fingerprint="same", finished_at="then")
    no_spark = None
    settings = load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path)})
    assert steps.families_to_build(no_spark, settings, None, "same", []) is None
    assert steps.families_to_build(no_spark, settings, record, "changed", []) is None
    for chosen in (["--select", "cdc_history"], ["--exclude=stg_spanner__lines"], ["-s", "x"]):
        assert steps.families_to_build(no_spark, settings, record, "same", chosen) is None
    assert steps.families_to_build(no_spark, settings, record, "same", ["--full-refresh"]) is None
    assert steps.family_selection(None, {"datastream"}) == []


def test_a_family_build_leaves_out_the_typed_models_of_the_other_families():
    """Of the other families, those with typed models (a criterion that matches nothing would be
    a dbt warning, an error under --warn-error)."""
    built = [BY_NAME["debezium"], BY_NAME["pgoutput"]]
    selection = steps.family_selection(built, {"datastream", "debezium", "spanner"})
    assert selection == [
        "--select",
        "stg_debezium__lines+ stg_pgoutput__lines+",
        "--exclude",
        "config.meta.cdc_source.source_system:spanner"
        " config.meta.cdc_source.source_system:datastream",
    ]
    assert steps.family_selection(built, {"debezium"}) == selection[:2]


def test_the_families_with_typed_models_are_read_from_dbts_manifest(tmp_path):
    manifest = tmp_path / "manifest.json"
    assert steps.families_with_typed_models(manifest) == set()
    manifest.write_text("not json")
    assert steps.families_with_typed_models(manifest) == set()
    typed = {"config": {"meta": {"cdc_source": {"source_system": "datastream"}}}}
    nodes = {
        "model.p.shop_products_current": {"resource_type": "model", **typed},
        "test.p.typed_values_fit_shop_products_current_": {"resource_type": "test", **typed},
        "model.p.cdc_history": {"resource_type": "model", "config": {"meta": {}}},
    }
    manifest.write_text(json.dumps({"nodes": nodes}))
    assert steps.families_with_typed_models(manifest) == {"datastream"}


def test_an_unforeseen_failure_is_one_sentence_and_exit_4_with_the_traceback_in_a_file(
    tmp_path, capsys, monkeypatch
):
    def broken(argv, settings):
        raise RuntimeError("[DELTA_SOMETHING] the table is odd\n" + "\tat a.b.C(C.java:1)\n" * 50)

    monkeypatch.setattr(cli, "execute", broken)
    monkeypatch.setenv("CDC_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    assert cli.main(["run"]) == cli.UNEXPECTED_FAILURE == 4
    said = capsys.readouterr().err
    log = tmp_path / "warehouse" / "_dbt" / "logs" / "cdcw-failure.log"
    assert said == (
        "cdcw: failed with RuntimeError: [DELTA_SOMETHING] the table is odd "
        f"(the traceback is in {log})\n"
    )
    assert "Traceback" in log.read_text() and "C.java:1" in log.read_text()


def test_a_build_refused_for_another_encoding_is_its_sentence_and_exit_5(
    tmp_path, capsys, monkeypatch
):
    def refused(argv, settings):
        raise RebuildNeeded("the warehouse was built with ...; run `cdcw run --full-refresh`")

    monkeypatch.setattr(cli, "execute", refused)
    monkeypatch.setenv("CDC_WAREHOUSE_DIR", str(tmp_path / "warehouse"))
    assert cli.main(["run"]) == cli.REBUILD_NEEDED == 5
    said = capsys.readouterr().err
    assert said == "cdcw: the warehouse was built with ...; run `cdcw run --full-refresh`\n"


def test_the_keyless_warning_names_each_table_and_what_its_key_stands_on():
    said = steps.keyless_tables_warning(
        [("oracle_erp", "HR.EMP", "row_id"), ("mysql_shop", "shop.log", "whole_row")],
        Path("/etc/cdc_tables.yml"),
    )
    assert said == (
        "cdcw: warning: 2 Datastream tables without a real key: oracle_erp HR.EMP (keyed by its "
        "Oracle ROWID, which changes when the row moves); mysql_shop shop.log (keyed by the "
        "whole row, so an update leaves the old row live); declare their keys in "
        "/etc/cdc_tables.yml"
    )
    assert set(steps.KEYLESS_BASIS_TEXT) == set(KEYLESS_BASES)


def test_the_scheduled_build_leaves_out_dbt_unit_tests_unless_told_which_resources():
    assert steps.without_unit_tests(["--exclude-resource-type", "test"]) == [
        "--exclude-resource-type", "test", "--exclude-resource-type", "unit_test",
    ]  # fmt: skip
    assert steps.without_unit_tests([]) == ["--exclude-resource-type", "unit_test"]
    chosen = ["--resource-type", "unit_test"]
    assert steps.without_unit_tests(chosen) == chosen
