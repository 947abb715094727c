"""Which installations need the warehouse lease, and when a lease may be taken over."""

from __future__ import annotations

from cdc_warehouse.settings import load_settings
from cdc_warehouse.warehouse_lease import LEASE_SECONDS, Lease, lease_uri, may_take, needs_lease

MINE = Lease(pid=10, host="a", state_dir="/srv/cdc/state", renewed_at=1000.0)


def test_a_lease_names_its_holder_and_reads_back():
    assert Lease.parse(MINE.text()) == MINE
    assert Lease.parse('{"pid": 1') is None
    assert Lease.parse("{}") is None


def test_fresh_leases_of_others_hold_stale_ones_and_our_own_do_not():
    other = Lease(pid=20, host="b", state_dir="/srv/other", renewed_at=1000.0)
    assert not may_take(other, MINE, now=1000.0 + LEASE_SECONDS)
    assert may_take(other, MINE, now=1000.0 + LEASE_SECONDS + 1)
    # Left by this installation's process that died: its state directory lock is ours now.
    assert may_take(Lease(99, "a", "/srv/cdc/state", 1000.0), MINE, now=1000.0)
    # The same state directory on another machine is another installation.
    assert not may_take(Lease(99, "c", "/srv/cdc/state", 1000.0), MINE, now=1000.0)
    assert may_take(None, MINE, now=0.0)


def test_only_a_warehouse_apart_without_a_metastore_run_lock_takes_a_lease(tmp_path):
    state = {"CDC_STATE_DIR": str(tmp_path / "state")}
    assert not needs_lease(load_settings({}))
    assert not needs_lease(load_settings({"CDC_WAREHOUSE_DIR": str(tmp_path / "wh")}))
    for warehouse in (str(tmp_path / "wh"), "hdfs://nn:8020/warehouse", "s3a://bucket/wh"):
        settings = load_settings({**state, "CDC_WAREHOUSE_DIR": warehouse})
        assert needs_lease(settings), warehouse
    service = {"CDC_METASTORE_URL": "thrift://metastore:9083"}
    assert needs_lease(load_settings({**state, **service, "CDC_WAREHOUSE_DIR": "hdfs://nn/w"}))
    locked = {"CDC_METASTORE_URL": "jdbc:postgresql://db/metastore"}
    assert not needs_lease(load_settings({**state, **locked, "CDC_WAREHOUSE_DIR": "hdfs://nn/w"}))
    prefixed = load_settings(
        {**state, "CDC_WAREHOUSE_DIR": "hdfs://nn:8020/warehouse/", "CDC_SCHEMA_PREFIX": "team_a_"}
    )
    assert lease_uri(prefixed) == "hdfs://nn:8020/warehouse/.cdcw-team_a_.lease"
