"""The sort positions SQL writes (macros/change_log/position_*.sql) are the ones Python writes
(python_udfs/json_values.py), and keep numeric order as text order."""

from __future__ import annotations

from python_udfs.json_values import pos_uint
from tests.conftest import Pipeline
from tests.project_macros import render_macro

UINTS = [0, 1, 9, 10, 12_345, 2**32, 2**63 - 1, 2**64 - 1, 10**20 - 1]
# Epoch microseconds: before 1970, around it, now, and far ahead; NULL (no CDC change yet).
SOURCE_TIMES = [-(2**62), -1_000_000, -1, 0, 1, 1_714_557_600_000_000, 2**62, None]


def sql_of(call: str) -> str:
    return render_macro("change_log", call)


def test_sql_positions_are_pythons_and_keep_order(java_available, tmp_path):
    spark = Pipeline(tmp_path).spark()
    values = ", ".join(f"cast({value} as decimal(20, 0))" for value in UINTS)
    position = sql_of("position_uint('value', 20)")
    written = spark.sql(
        f"select {position} as position from (select explode(array({values})) as value)"
    ).collect()
    assert [row.position for row in written] == [pos_uint(value, 20) for value in UINTS]

    times = ", ".join("cast(null as bigint)" if t is None else f"{t}L" for t in SOURCE_TIMES)
    position = sql_of("position_source_time('value')")
    rows = spark.sql(
        f"select value, {position} as position from (select explode(array({times})) as value)"
    ).collect()
    positions = {row.value: row.position for row in rows}
    assert all(len(position) == 18 for position in positions.values())
    # NULL sorts as the epoch; every other value keeps its numeric order as text.
    assert positions[None] == positions[0]
    known = [value for value in SOURCE_TIMES if value is not None]
    assert sorted(known, key=lambda value: positions[value]) == known
