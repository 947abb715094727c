"""Two installations (each its own CDC_STATE_DIR, so each its own embedded metastore) over one
warehouse: the warehouse's lease (cdc_warehouse/warehouse_lease.py) lets one command at a time
in, whatever the warehouse URI; a lease left by a process that died is taken over once stale."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest

from cdc_warehouse.settings import PROJECT_DIR, WarehouseBusy, load_settings
from cdc_warehouse.spark import build_session
from cdc_warehouse.warehouse_lease import LEASE_SECONDS, Lease, lease_uri, warehouse_lease
from tests.conftest import Pipeline, patched_env

SAMPLE_FILE = Path("datastream/mysql_shop")


def other_installation_lease(tmp_path: Path, renewed_at: float) -> Lease:
    return Lease(pid=4242, host="elsewhere", state_dir=str(tmp_path / "b"), renewed_at=renewed_at)


def test_one_installation_at_a_time_on_a_shared_warehouse(java_available, tmp_path, capsys):
    pipeline = Pipeline(tmp_path)
    shutil.copytree(
        PROJECT_DIR / "sample_data" / "landing" / SAMPLE_FILE, pipeline.landing_root / SAMPLE_FILE
    )
    pipeline.warehouse_dir.mkdir(parents=True)
    lease_file = pipeline.warehouse_dir / ".cdcw-tables.lease"
    installation_a = {"CDC_STATE_DIR": str(tmp_path / "a")}

    # Another installation's fresh lease: refused at once, in one sentence, nothing landed.
    lease_file.write_text(other_installation_lease(tmp_path, time.time()).text())
    capsys.readouterr()
    with patched_env(installation_a):
        assert pipeline.cdcw("land") == 3
    said = capsys.readouterr().err
    assert "another cdcw process (pid 4242 on elsewhere, CDC_STATE_DIR" in said
    assert "Traceback" not in said
    assert not (pipeline.warehouse_dir / "cdc_raw.db").exists()

    # Left by a process that died: taken over once stale, and gone after the command.
    stale = time.time() - LEASE_SECONDS - 5
    lease_file.write_text(other_installation_lease(tmp_path, stale).text())
    with patched_env(installation_a):
        assert pipeline.cdcw("land") == 0
    assert not lease_file.exists()
    with patched_env({**installation_a, **pipeline.env()}):
        settings_a = load_settings()
    spark = build_session(settings_a)
    assert spark.table("cdc_raw.datastream_lines").count() > 0

    # While a command of one installation holds it, the other's is refused.
    with patched_env({"CDC_STATE_DIR": str(tmp_path / "b"), **pipeline.env()}):
        settings_b = load_settings()
    assert lease_uri(settings_a) == lease_uri(settings_b)
    with warehouse_lease(spark, settings_a):
        held = Lease.parse(lease_file.read_text())
        assert held is not None and held.state_dir == str(tmp_path / "a")
        with (
            pytest.raises(WarehouseBusy, match=str(tmp_path / "a")),
            warehouse_lease(spark, settings_b),
        ):
            pass
    assert not lease_file.exists()
