"""The watermark a mart records in its MERGE's commit (docs/decisions/016) and the tag of a
table's newest write: the rules that find them in a table's history, in Python
(cdc_warehouse/table_format.py) and in the macros the models call
(macros/utils/watermark_in_commits.sql, newest_write_tag.sql), which must agree."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cdc_warehouse.table_format import (
    ROW_KEEPING_OPERATIONS,
    WATERMARK,
    newest_write_tag,
    watermark_in_commits,
)
from tests.project_macros import render_macro


def tag(table: str = "cdc_history", run: Any = 7) -> str:
    return json.dumps({"landing_run": 9, WATERMARK: {"table": table, "landing_run": run}})


RUN_ONLY = json.dumps({"landing_run": 9})
CASES = {
    "the newest write's": ([("MERGE", tag())], 7),
    "through commits that keep the rows": (
        [(operation, RUN_ONLY) for operation in ROW_KEEPING_OPERATIONS] + [("MERGE", tag())],
        7,
    ),
    "hidden by a write without one": ([("DELETE", RUN_ONLY), ("MERGE", tag())], None),
    "hidden by a restore": ([("RESTORE", None), ("MERGE", tag())], None),
    "another table's": ([("MERGE", tag(table="cdc_current"))], None),
    "not a number": ([("MERGE", tag(run="7"))], None),
    "not a boolean": ([("MERGE", tag(run=True))], None),
    "not JSON": ([("MERGE", "landing run 7")], None),
    "a full build's": ([("CREATE OR REPLACE TABLE AS SELECT", tag(run=3))], 3),
    "none in the history": ([], None),
}


def fromjson(text: str, default: Any = None) -> Any:
    """dbt's `fromjson`: the default when the text is not JSON."""
    try:
        return json.loads(text)
    except ValueError:
        return default


@pytest.mark.parametrize("case", CASES)
def test_the_watermark_is_the_newest_row_changing_commits(case):
    commits, expected = CASES[case]
    assert watermark_in_commits(commits, "cdc_history") == expected


@pytest.mark.parametrize("case", CASES)
def test_the_macro_finds_the_same_watermark(case):
    commits, expected = CASES[case]
    rendered = render_macro(
        ["utils/watermark_in_commits.sql", "utils/newest_write_tag.sql"],
        "watermark_in_commits(commits, 'cdc_history')",
        commits=[list(commit) for commit in commits],
        fromjson=fromjson,
    )
    assert rendered == ("" if expected is None else str(expected))


@pytest.mark.parametrize("case", CASES)
def test_the_macro_finds_the_same_newest_write_tag(case):
    """The models that read the lines after the last build's (macros/utils/
    landing_runs_processed.sql) compare its landing run with this tag's."""
    commits, _ = CASES[case]
    rendered = render_macro(
        "utils/newest_write_tag.sql",
        "newest_write_tag(commits)",
        commits=[list(commit) for commit in commits],
    )
    parsed = fromjson(rendered or "{}", {})
    assert (parsed if isinstance(parsed, dict) and parsed else None) == newest_write_tag(commits)


def test_the_newest_write_tag_is_the_newest_row_changing_commits():
    assert newest_write_tag([("OPTIMIZE", tag(run=1)), ("WRITE", RUN_ONLY)]) == {"landing_run": 9}
    assert newest_write_tag([("WRITE", None), ("WRITE", RUN_ONLY)]) is None
    assert newest_write_tag([("VACUUM END", RUN_ONLY)]) is None
