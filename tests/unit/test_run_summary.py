"""What `cdcw run` says it wrote, from Delta's operation metrics (metric values are text, as
`describe history` gives them)."""

from __future__ import annotations

from cdc_warehouse.landing import FamilyLanded
from cdc_warehouse.run_summary import (
    RowsWritten,
    byte_size,
    commit_rows,
    landing_progress_line,
    summary_line,
)

MERGE_METRICS = {
    "numTargetRowsInserted": "4",
    "numTargetRowsUpdated": "3",
    "numTargetRowsDeleted": "2",
    # Rows of rewritten files that the merge left as they were.
    "numTargetRowsCopied": "900",
    "numOutputRows": "907",
}


def test_a_merge_counts_the_rows_it_inserted_updated_and_deleted_not_those_it_copied():
    assert commit_rows("MERGE", MERGE_METRICS) == RowsWritten(4, 3, 2)


def test_a_whole_write_counts_its_output_rows():
    for operation in ("WRITE", "CREATE OR REPLACE TABLE AS SELECT", "CREATE TABLE AS SELECT"):
        assert commit_rows(operation, {"numOutputRows": "12", "numFiles": "3"}) == RowsWritten(12)


def test_a_delete_counts_its_deleted_rows_and_maintenance_nothing():
    assert commit_rows("DELETE", {"numDeletedRows": "5"}) == RowsWritten(deleted=5)
    assert commit_rows("OPTIMIZE", {"numRemovedFiles": "8", "numAddedFiles": "1"}) == RowsWritten()
    assert commit_rows("SET TBLPROPERTIES", {}) == RowsWritten()


def test_the_line_adds_the_commits_of_a_run():
    history = commit_rows("MERGE", MERGE_METRICS) + RowsWritten(inserted=1)
    current = RowsWritten(2, 1, 1)
    assert summary_line(7, 3, 120, 2, history, current) == (
        "cdcw: landing run 7 done: 3 files, 120 lines landed, 2 quarantined; cdc_history: 8 "
        "versions written, 2 removed; cdc_current: 3 keys written, 1 deleted"
    )


def test_each_familys_landing_line_says_its_files_lines_bytes_and_seconds():
    landed = FamilyLanded(7, "debezium", 12, 3400, 5 * 1024 * 1024 + 300 * 1024, 2.345)
    assert landing_progress_line(landed) == (
        "cdcw: landing run 7: debezium: 12 files, 3400 lines, 5.3 MiB in 2.3 s"
    )


def test_sizes_read_at_a_glance():
    assert [byte_size(n) for n in (0, 812, 1023, 1024, 65 * 1024 + 512)] == [
        "0 bytes",
        "812 bytes",
        "1023 bytes",
        "1.0 KiB",
        "65.5 KiB",
    ]
    assert byte_size(3 * 1024**3 // 2) == "1.5 GiB"
    assert byte_size(2048 * 1024**4) == "2048.0 TiB"
