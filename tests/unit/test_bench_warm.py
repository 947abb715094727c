"""The warm phase's parts that need no Spark: the cycles' files, the continuous process's output,
the process tree's memory, percentiles and the cycles' bookkeeping."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from cdc_warehouse.bench import benchmark, memory, warm, workload
from cdc_warehouse.landing import landing_listing


def test_pieces_share_the_lines_out_evenly_and_interleave_the_files():
    pieces = warm.cycle_pieces([2121, 1414], 20, most=1000)
    assert len(pieces) == 20
    sizes = [stop - start for _, start, stop in pieces]
    assert max(sizes) - min(sizes) <= 2
    # Every line once, each file's pieces in order.
    for index, count in enumerate([2121, 1414]):
        spans = [(start, stop) for file, start, stop in pieces if file == index]
        assert spans[0][0] == 0 and spans[-1][1] == count
        assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    # Interleaved by their place in their file: both files' first pieces come first.
    assert {pieces[0][0], pieces[1][0]} == {0, 1}


def test_the_largest_piece_is_as_small_as_it_can_be():
    pieces = warm.cycle_pieces([10, 1, 1], 4, most=1000)
    assert sorted(stop - start for _, start, stop in pieces) == [1, 1, 5, 5]


def test_pieces_are_cut_to_most_lines_and_few_cycles_take_the_first_files():
    cut = warm.cycle_pieces([3000, 500], 2, most=1000)
    assert cut == [(0, 0, 1000), (1, 0, 500)]
    assert warm.cycle_pieces([5, 5, 5], 2, most=1000) == [(0, 0, 5), (1, 0, 5)]
    assert warm.cycle_pieces([0, 3], 3, most=1000) == [(1, 0, 1), (1, 1, 2), (1, 2, 3)]
    with pytest.raises(ValueError):
        warm.cycle_pieces([2, 1], 4, most=1000)
    with pytest.raises(ValueError):
        warm.cycle_pieces([2, 1], 0, most=1000)


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("workload")
    workload.generate(workload.Spec(scale=3_000, seed=5, waves=2, jobs=1), root)
    return root


def test_each_cycle_lands_new_lines_of_the_fixed_topup_atomically(generated, tmp_path):
    family, pieces, covered = warm.warm_pieces(generated, 5)
    assert family == workload.SMALL_FILE_FAMILIES[0] and covered
    assert all(0 < piece.lines <= workload.SMALL_FILE_EVENTS for piece in pieces)
    topup = generated / f"topup-{warm.SOURCE_TOPUP}"
    landing = tmp_path / "landing"
    landed = {
        cycle: warm.land_piece(topup, piece, cycle, landing)
        for cycle, piece in enumerate(pieces, 1)
    }
    # Beside the top-up file, under a name of its own; no hidden file left behind.
    assert sorted(landing.rglob(".*")) == []
    assert {str(path) for path, _, _ in landing_listing(landing)} == {
        str(path) for path in landed.values()
    }
    for cycle, piece in enumerate(pieces, 1):
        assert landed[cycle].parent == landing / piece.source.parent
    # Together the pieces are the top-up's lines, each once.
    for source in {piece.source for piece in pieces}:
        joined = b"".join(
            landed[cycle].read_bytes()
            for cycle, piece in enumerate(pieces, 1)
            if piece.source == source
        )
        assert joined == (topup / source).read_bytes()


def test_fewer_cycles_than_the_topup_needs_do_not_cover_it(generated):
    _, pieces, covered = warm.warm_pieces(generated, 2)
    assert len(pieces) == 2 and not covered


def line(at: float, text: str) -> warm.Line:
    return warm.Line(at, 1000.0 + at, text)


CURRENT_OK = (
    "19:20:05  5 of 9 \x1b[32mOK\x1b[0m created sql incremental model default.cdc_current "
    "..... [\x1b[32mOK\x1b[0m in 2.10s]"
)
DONE = "cdcw: landing run 12 done: 1 files, 177 lines landed, 0 quarantined; cdc_history: ..."


def test_a_run_is_read_from_its_output_up_to_its_closing_line():
    lines = [
        line(0.5, "cdcw: landing run 12: datastream: 1 files, 177 lines, 80.0 KiB in 0.4 s"),
        line(1.0, "19:20:01  1 of 9 START sql incremental model default.cdc_history"),
        line(2.0, "19:20:03  5 of 9 OK created sql incremental model default.cdc_current_orders"),
        line(3.0, warm.plain(CURRENT_OK)),
        line(4.0, DONE),
        line(5.0, "never read"),
    ]
    run = warm.read_run(iter(lines))
    assert (run.landing_run, run.files, run.lines) == (12, 1, 177)
    assert run.current_written.at == 3.0 and run.done.at == 4.0


@pytest.mark.parametrize(
    "lines",
    [
        ["cdcw: failed with AnalysisException: [DELTA_TABLE_NOT_FOUND] ..."],
        ["19:20:09  Completed with 1 error, 0 partial successes, and 0 warnings:"],
        [DONE],  # no cdc_current written
        ["19:20:01  1 of 9 START sql incremental model default.cdc_history"],  # output ended
    ],
)
def test_a_failed_or_unfinished_run_is_a_failure(lines):
    with pytest.raises(warm.RunFailed):
        warm.read_run(line(float(n), text) for n, text in enumerate(lines))


def test_the_first_run_ends_with_nothing_new_or_a_successful_build():
    nothing_new = "cdcw: nothing new since the build of 2026-12-02T18:00:00 (landing run 8, ...)"
    warm.wait_first_run(iter([line(0, "cdcw: running every 1s on /l"), line(1, nothing_new)]))
    finished = warm.plain("19:00:00  \x1b[32mCompleted successfully\x1b[0m")
    warm.wait_first_run(iter([line(0, finished)]))
    with pytest.raises(warm.RunFailed):
        warm.wait_first_run(iter([line(0, "cdcw: running every 1s on /l")]))


def test_the_output_of_a_child_is_timed_as_it_arrives(tmp_path):
    script = f"import time; print('a', flush=True); time.sleep(0.3); print({DONE!r})"
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, errors="replace"
    )
    assert child.stdout is not None
    output = warm.ChildOutput(child.stdout, tmp_path / "child.log")
    output.start()
    lines = list(output.until(time.monotonic() + 60))
    child.wait()
    output.join()
    assert [entry.text for entry in lines] == ["a", DONE]
    assert lines[1].at - lines[0].at >= 0.25
    assert (tmp_path / "child.log").read_text() == f"a\n{DONE}\n"
    # Once ended, it stays ended.
    assert list(output.until(time.monotonic() + 60)) == []
    output.drain()
    assert list(output.until(time.monotonic() + 60)) == []


def test_an_output_that_stays_silent_times_out(tmp_path):
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE, text=True
    )
    assert child.stdout is not None
    output = warm.ChildOutput(child.stdout, tmp_path / "child.log")
    output.start()
    try:
        with pytest.raises(TimeoutError):
            next(output.until(time.monotonic() + 0.2))
    finally:
        child.kill()
        child.wait()
        output.join()


def test_percentiles_interpolate_between_ranks_as_numpy_does():
    rng = np.random.default_rng(3)
    for size in (1, 2, 5, 20, 200):
        values = list(rng.exponential(5.0, size))
        for share in (0, 50, 95, 100):
            assert warm.percentile(values, share) == pytest.approx(np.percentile(values, share))
    with pytest.raises(ValueError):
        warm.percentile([], 50)


def fake_process(proc: Path, pid: int, parent: int, exe: str, rss_kib: int) -> None:
    directory = proc / str(pid)
    directory.mkdir(parents=True)
    (directory / "stat").write_text(f"{pid} (a (b) c) S {parent} 1 1 0 -1\n")
    (directory / "status").write_text(f"Name:\tx\nVmHWM:\t{rss_kib * 2} kB\nVmRSS:\t{rss_kib} kB\n")
    os.symlink(exe, directory / "exe")


def test_tree_rss_sums_the_driver_its_jvm_and_the_workers(tmp_path):
    proc = tmp_path / "proc"
    fake_process(proc, 10, 1, "/usr/bin/python3.11", 100)  # the driver's Python
    fake_process(proc, 11, 10, "/usr/lib/jvm/bin/java", 1000)  # its JVM
    fake_process(proc, 12, 11, "/usr/bin/python3.11", 50)  # a UDF worker daemon
    fake_process(proc, 13, 12, "/usr/bin/python3.11", 30)  # a worker it forked
    fake_process(proc, 14, 11, "/usr/lib/jvm/bin/java", 1000)  # the JVM's fork, not yet exec'd
    fake_process(proc, 20, 1, "/usr/lib/jvm/bin/java", 5000)  # another tree
    (proc / "self").mkdir()
    rss = memory.tree_rss(10, proc)
    assert rss == {
        "driver_python": 100 * 1024,
        "jvm": 1000 * 1024,
        "jvm_largest": 1000 * 1024,
        "workers": 80 * 1024,
        "driver": 1100 * 1024,
        "tree": 1180 * 1024,
    }
    assert sorted(memory.jvm_pids(10, proc)) == [11, 14]
    assert memory.tree_rss(99, proc)["tree"] == 0  # a process gone


def test_tree_rss_of_this_process():
    rss = memory.tree_rss(os.getpid())
    assert rss["driver_python"] > 10 * 2**20
    assert rss["tree"] >= rss["driver"] >= rss["driver_python"]


def cycles(count: int, driver_rss: list[int] | None = None) -> list[dict]:
    rss = driver_rss or [2**30] * count
    piece = warm.Piece(Path("datastream/s/t/f.jsonl"), 0, 100)
    records = []
    for n in range(1, count + 1):
        landed_at = 10.0 * n
        run = warm.SeenRun(
            8 + n, 1, 100, line(landed_at + n, CURRENT_OK), line(landed_at + n + 2, DONE)
        )
        records.append(
            warm.cycle_record(n, piece, landed_at, run, {"driver": rss[n - 1], "tree": 0})
        )
    return records


def test_a_cycle_records_its_seconds_from_landing_and_its_file():
    [first, second] = cycles(2)
    assert first["file"] == "datastream/s/t/f-warm-0001.jsonl"
    assert second["file"] == "datastream/s/t/f-warm-0002.jsonl"
    assert (second["landing_run"], second["lines"]) == (10, 100)
    assert (second["seconds"], second["run_end_seconds"]) == (2.0, 4.0)
    assert second["cdc_current_written_at"] == 1000.0 + 22.0


def run_row(cycle: dict, **changes) -> dict:
    written = cycle["cdc_current_written_at"]
    row = {
        "landing_run": cycle["landing_run"],
        "status": "succeeded",
        "files_landed": 1,
        "lines_landed": cycle["lines"],
        "started": written - 1.5,
        "ended": written + 3.0,
    }
    return row | changes


def test_the_run_log_adds_each_runs_seconds_and_the_seconds_from_its_tick():
    records = cycles(3)
    assert warm.add_run_log(records, [run_row(cycle) for cycle in records])
    assert [(c["run_seconds"], c["seconds_from_tick"]) for c in records] == [(4.5, 1.5)] * 3
    summary = warm.summarize(records)
    assert summary["latency_from_tick_seconds"]["p95"] == 1.5


@pytest.mark.parametrize(
    "rows",
    [
        lambda records: [run_row(c) for c in records[:2]],  # a cycle without its row
        lambda records: [run_row(c) for c in records] + [run_row(records[0])],  # two rows
        lambda records: [run_row(c, lines_landed=99) for c in records],
        lambda records: [run_row(c, status="failed") for c in records],
    ],
)
def test_a_run_log_that_does_not_match_the_cycles_says_so(rows):
    records = cycles(3)
    assert not warm.add_run_log(records, rows(records))


def test_the_summary_gives_percentiles_and_rss_after_the_baseline_cycle():
    few = warm.summarize(cycles(3, [100, 110, 120]))
    assert few["driver_rss_bytes"] == {
        "first": 100,
        "baseline_cycle": warm.RSS_BASELINE_CYCLE,
        "baseline": None,
        "last": 120,
        "last_vs_baseline": None,
    }
    assert "latency_from_tick_seconds" not in few
    records = cycles(12, [100 + n for n in range(12)])
    summary = warm.summarize(records)
    assert summary["driver_rss_bytes"]["baseline"] == 109
    assert summary["driver_rss_bytes"]["last_vs_baseline"] == round(111 / 109, 4)
    seconds = [c["seconds"] for c in records]
    assert summary["latency_seconds"] == {
        "p50": round(float(np.percentile(seconds, 50)), 3),
        "p95": round(float(np.percentile(seconds, 95)), 3),
        "max": 12.0,
        "first": 1.0,
    }
    line = warm.summary_line(
        {**summary, "cycles": records, "family": "datastream", "every": "1s", "exit_code": 0}
    )
    assert f"p95 {summary['latency_seconds']['p95']:.1f} s" in line
    assert "after cycle 10" in line and "exit 0" in line


def test_the_warm_phase_is_asked_for_and_its_flags_are_checked():
    args = benchmark.parse_args(["--scale", "100"])
    assert warm.WARM not in args.phases.split(",")
    assert (args.warm_cycles, args.warm_every) == (warm.DEFAULT_CYCLES, warm.DEFAULT_EVERY)
    args = benchmark.parse_args(["--scale", "100", "--warm-cycles", "200", "--warm-every", "5s"])
    assert (args.warm_cycles, args.warm_every) == (200, "5s")
    for bad in (["--warm-cycles", "0"], ["--warm-every", "1"], ["--warm-every", "0s"]):
        with pytest.raises(SystemExit):
            benchmark.parse_args(["--scale", "100", *bad])
