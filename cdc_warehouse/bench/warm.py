"""The benchmark's `warm` phase: one continuous process (`cdcw run --every`) fed one small file
per cycle.

On a copy of the full build's warehouse, `cdcw run --every 1s` runs as an operator starts it
(one Python process, JVM, Spark session and parse of the project for the whole phase; the
scheduled build with its tests). Once its first run has found nothing new, each cycle lands one
small file of new events: the `fixed` top-up's lines of the first family of
`workload.SMALL_FILE_FAMILIES` (10,000 events in the realistic mix whatever the scale, of which
that family's share), cut into one piece per cycle of at most `workload.SMALL_FILE_EVENTS`
lines, written under a hidden name beside the top-up file's place in the landing root and
renamed into place. A cycle is a run that lands a file: the next file lands once the previous
run has been recorded (the run log's marker removed), so N cycles are N runs with a build, what
the process's memory could grow with (an interval that finds nothing new costs a listing).

Per cycle, from the process's own output, each line timed as it arrives:

- `seconds`: from the file's rename to dbt's line that `cdc_current` was written, its Delta
  commit and so the change visible to every reader;
- `run_end_seconds`: to the run's closing line (`cdcw: landing run N done`), after its tests;
- `rss_bytes`: the process tree's resident memory once the run was recorded, the process idle.

The run log's rows of the cycles' runs, read once the process has stopped, add each run's own
seconds and `seconds_from_tick`: from the run's start (the interval's tick that saw the file)
to `cdc_current`'s write.
"""

from __future__ import annotations

import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cdc_warehouse.bench import workload
from cdc_warehouse.bench.memory import TreeSampler, tree_rss

WARM = "warm"
# The top-up whose lines the cycles land: its size does not follow the scale.
SOURCE_TOPUP = "fixed"
DEFAULT_CYCLES = 20
DEFAULT_EVERY = "1s"
# The memory check: driver RSS after the last cycle against RSS after this one.
RSS_BASELINE_CYCLE = 10
# The cycles as measured, beside the phase's other files: what the content check reads.
CYCLES_FILE = "warm-cycles.json"
# How long the process may take to start and finish its first run, and a run its file.
RUN_TIMEOUT_SECONDS = 1800
# How long a stopped process may take to end its current run.
STOP_TIMEOUT_SECONDS = 600
MARKER_POLL_SECONDS = 0.05

_COLOURS = re.compile(r"\x1b\[[0-9;]*m")
# dbt's line for a model written, and its summary of a build that failed.
CURRENT_WRITTEN = re.compile(r"\bOK created .*\bmodel \S+\.cdc_current\b")
BUILD_FAILED = re.compile(r"\bCompleted with \d+ errors?,")
RUN_DONE = re.compile(r"^cdcw: landing run (\d+) done: (\d+) files, (\d+) lines landed")
RUN_FAILED = re.compile(r"^cdcw: failed with ")
# The first run's end: nothing new to build (the full build's warehouse), or a build.
FIRST_RUN_ENDED = re.compile(r"^cdcw: nothing new since the build|\bCompleted successfully\b")


class RunFailed(RuntimeError):
    """A run of the continuous process failed or did not end."""


# --------------------------------------------------------------------------------------------
# The cycles' files
# --------------------------------------------------------------------------------------------


def cycle_pieces(line_counts: Sequence[int], cycles: int, most: int) -> list[tuple[int, int, int]]:
    """`cycles` runs of consecutive lines as (file index, start, stop), each within one file:
    the files' lines are shared out so that the largest piece is as small as it can be, and the
    pieces come in order of their place in their file (the files' pieces interleaved). Each
    piece is cut to its first `most` lines, so the pieces hold every line only when `cycles`
    pieces of `most` lines can; with fewer cycles than files, the first files only."""
    if cycles < 1 or cycles > sum(line_counts):
        raise ValueError(f"{cycles} cycles of {sum(line_counts)} lines: 1 to {sum(line_counts)}")
    files = [index for index, count in enumerate(line_counts) if count][:cycles]
    shares = dict.fromkeys(files, 1)
    for _ in range(cycles - len(files)):
        growable = [index for index in files if shares[index] < line_counts[index]]
        largest = max(growable, key=lambda index: -(-line_counts[index] // shares[index]))
        shares[largest] += 1
    placed = []
    for index in files:
        count, share = line_counts[index], shares[index]
        bounds = [count * part // share for part in range(share + 1)]
        for part in range(share):
            start = bounds[part]
            placed.append((part / share, index, start, min(bounds[part + 1], start + most)))
    return [(index, start, stop) for _, index, start, stop in sorted(placed)]


@dataclass(frozen=True)
class Piece:
    """Lines [start, stop) of one file of the top-up (its path relative to the top-up's
    directory, which is shaped like a landing root)."""

    source: Path
    start: int
    stop: int

    @property
    def lines(self) -> int:
        return self.stop - self.start


def _line_count(path: Path) -> int:
    with path.open("rb") as lines:
        return sum(1 for _ in lines)


def warm_pieces(workload_dir: Path, cycles: int) -> tuple[str, list[Piece], bool]:
    """The family whose lines the cycles land, one piece per cycle, and whether the pieces hold
    every line of the family's top-up (then cdc_current holds the top-up's live keys)."""
    topup = workload_dir / f"topup-{SOURCE_TOPUP}"
    for family in workload.SMALL_FILE_FAMILIES:
        files = sorted(p.relative_to(topup) for p in (topup / family).rglob("*") if p.is_file())
        whole_lines = [path for path in files if path.suffix == ".jsonl"]
        if not whole_lines:
            continue
        counts = [_line_count(topup / path) for path in whole_lines]
        spans = cycle_pieces(counts, cycles, workload.SMALL_FILE_EVENTS)
        pieces = [Piece(whole_lines[index], start, stop) for index, start, stop in spans]
        covered = whole_lines == files and sum(piece.lines for piece in pieces) == sum(counts)
        return family, pieces, covered
    raise ValueError(f"{topup} holds no file of {', '.join(workload.SMALL_FILE_FAMILIES)}")


def warm_file(piece: Piece, cycle: int) -> Path:
    """Where a cycle's piece lands, relative to the landing root: beside its top-up file."""
    return piece.source.with_name(f"{piece.source.stem}-warm-{cycle:04d}{piece.source.suffix}")


def land_piece(topup: Path, piece: Piece, cycle: int, landing_root: Path) -> Path:
    """The piece written under a hidden name (which landing passes by), then renamed into
    place: a listing sees all of it or nothing."""
    with (topup / piece.source).open("rb") as whole:
        lines = [line for number, line in enumerate(whole) if piece.start <= number < piece.stop]
    target = landing_root / warm_file(piece, cycle)
    target.parent.mkdir(parents=True, exist_ok=True)
    hidden = target.with_name(f".{target.name}")
    hidden.write_bytes(b"".join(lines))
    hidden.rename(target)
    return target


# --------------------------------------------------------------------------------------------
# The continuous process's output
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    at: float  # time.monotonic() when the line arrived
    wall: float  # time.time() then
    text: str


def plain(text: str) -> str:
    """A line without dbt's colours."""
    return _COLOURS.sub("", text)


class ChildOutput(threading.Thread):
    """A child's output lines as they arrive, each with the moment it arrived, copied to a
    log file."""

    def __init__(self, stream: IO[str], log: Path) -> None:
        super().__init__(daemon=True)
        self.stream, self.log = stream, log
        self.lines: queue.Queue[Line | None] = queue.Queue()

    def run(self) -> None:
        with self.log.open("w") as copy:
            for text in self.stream:
                self.lines.put(Line(time.monotonic(), time.time(), plain(text.rstrip("\n"))))
                copy.write(text)
                copy.flush()
        self.lines.put(None)

    def drain(self) -> None:
        """Forget the lines so far (printed before the next file landed)."""
        while True:
            try:
                if self.lines.get_nowait() is None:
                    self.lines.put(None)
                    return
            except queue.Empty:
                return

    def until(self, deadline: float) -> Iterator[Line]:
        """The next lines until the output ends; TimeoutError at `deadline` (monotonic)."""
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise TimeoutError("the continuous process printed nothing in time") from None
            if line is None:
                self.lines.put(None)
                return
            yield line


@dataclass(frozen=True)
class SeenRun:
    """A run that landed files, as its output shows it."""

    landing_run: int
    files: int
    lines: int
    current_written: Line
    done: Line


def _failure(text: str) -> bool:
    return bool(RUN_FAILED.search(text) or BUILD_FAILED.search(text))


def wait_first_run(lines: Iterable[Line]) -> None:
    for line in lines:
        if _failure(line.text):
            raise RunFailed(f"the first run failed: {line.text}")
        if FIRST_RUN_ENDED.search(line.text):
            return
    raise RunFailed("the continuous process ended before its first run did")


def read_run(lines: Iterable[Line]) -> SeenRun:
    """The first run in `lines` that landed files, up to its closing line, with dbt's line
    that cdc_current was written in it; RunFailed at a failed run."""
    written = None
    for line in lines:
        if _failure(line.text):
            raise RunFailed(f"a run failed: {line.text}")
        if CURRENT_WRITTEN.search(line.text):
            written = line
        done = RUN_DONE.match(line.text)
        if done:
            if written is None:
                raise RunFailed(f"a run that landed files wrote no cdc_current: {line.text}")
            return SeenRun(int(done[1]), int(done[2]), int(done[3]), written, line)
    raise RunFailed("the continuous process ended before its run did")


def wait_recorded(marker: Path, child: subprocess.Popen, deadline: float) -> None:
    """Until the run in progress has been appended to the run log (its marker removed)."""
    while marker.exists():
        if child.poll() is not None:
            raise RunFailed(f"the continuous process ended (exit {child.returncode})")
        if time.monotonic() > deadline:
            raise TimeoutError(f"the run was not recorded in time ({marker} still there)")
        time.sleep(MARKER_POLL_SECONDS)


# --------------------------------------------------------------------------------------------
# Bookkeeping
# --------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], share: float) -> float:
    """The `share` (0-100) percentile, interpolated linearly between the closest ranks."""
    if not values:
        raise ValueError("no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * share / 100
    below = int(rank)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)


def cycle_record(
    cycle: int, piece: Piece, landed_at: float, run: SeenRun, rss: dict[str, int]
) -> dict[str, Any]:
    """One cycle's figures; `landed_at`: the monotonic time of the file's rename."""
    return {
        "cycle": cycle,
        "file": str(warm_file(piece, cycle)),
        "lines": piece.lines,
        "landing_run": run.landing_run,
        "files_landed": run.files,
        "lines_landed": run.lines,
        "seconds": round(run.current_written.at - landed_at, 3),
        "run_end_seconds": round(run.done.at - landed_at, 3),
        "cdc_current_written_at": run.current_written.wall,
        "rss_bytes": rss,
    }


def add_run_log(cycles: list[dict[str, Any]], rows: Iterable[dict[str, Any]]) -> bool:
    """Each cycle's `run_seconds` and `seconds_from_tick` from its run's row of the run log
    (`landing_run`, `status`, `files_landed`, `lines_landed`, `started` and `ended` as epoch
    seconds), in place; whether every cycle has one row, succeeded, that landed its file."""
    by_run: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        by_run.setdefault(row["landing_run"], []).append(row)
    matched = True
    for cycle in cycles:
        found = by_run.get(cycle["landing_run"], [])
        if len(found) != 1:
            matched = False
            continue
        [row] = found
        cycle["run_seconds"] = round(row["ended"] - row["started"], 3)
        cycle["seconds_from_tick"] = round(cycle["cdc_current_written_at"] - row["started"], 3)
        matched &= (row["status"], row["files_landed"], row["lines_landed"]) == (
            "succeeded",
            1,
            cycle["lines"],
        )
    return matched


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 50), 3),
        "p95": round(percentile(values, 95), 3),
        "max": max(values),
        "first": values[0],
    }


def summarize(cycles: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Latency percentiles over the cycles, and the driver's RSS after the first, the baseline
    (RSS_BASELINE_CYCLE) and the last cycle with last / baseline (None with fewer cycles)."""
    driver = [cycle["rss_bytes"]["driver"] for cycle in cycles]
    baseline = driver[RSS_BASELINE_CYCLE - 1] if len(driver) >= RSS_BASELINE_CYCLE else None
    summary: dict[str, Any] = {
        "latency_seconds": _spread([cycle["seconds"] for cycle in cycles]),
        "driver_rss_bytes": {
            "first": driver[0],
            "baseline_cycle": RSS_BASELINE_CYCLE,
            "baseline": baseline,
            "last": driver[-1],
            "last_vs_baseline": round(driver[-1] / baseline, 4) if baseline else None,
        },
    }
    if all("seconds_from_tick" in cycle for cycle in cycles):
        summary["latency_from_tick_seconds"] = _spread(
            [cycle["seconds_from_tick"] for cycle in cycles]
        )
    return summary


def summary_line(result: dict[str, Any]) -> str:
    """The phase in one line, as the benchmark prints it."""
    latency, rss = result["latency_seconds"], result["driver_rss_bytes"]
    cycles = result["cycles"]
    tick = result.get("latency_from_tick_seconds")
    baseline = (
        f", after cycle {rss['baseline_cycle']} {rss['baseline'] / 2**30:.2f} GB"
        f" (last / that {rss['last_vs_baseline']})"
        if rss["baseline"]
        else ""
    )
    return (
        f"warm: {len(cycles)} cycles of one {result['family']} file "
        f"({sum(c['lines'] for c in cycles) / len(cycles):.0f} lines on average), "
        f"every {result['every']}: landing to cdc_current p50 {latency['p50']:.1f} s, "
        f"p95 {latency['p95']:.1f} s"
        + (f" (from the tick p95 {tick['p95']:.1f} s)" if tick else "")
        + f"; driver RSS after cycle 1 {rss['first'] / 2**30:.2f} GB{baseline}, "
        f"after the last {rss['last'] / 2**30:.2f} GB; stopped with exit {result['exit_code']}"
    )


# --------------------------------------------------------------------------------------------
# The phase
# --------------------------------------------------------------------------------------------


def _stop(child: subprocess.Popen) -> int:
    """SIGTERM, as an operator stops the process; its exit code (negative: killed after
    STOP_TIMEOUT_SECONDS)."""
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            return child.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            child.kill()
    return child.wait()


def run_cycles(
    workload_dir: Path,
    landing_root: Path,
    marker: Path,
    env: dict[str, str],
    log: Path,
    cycles: int,
    every: str,
) -> dict[str, Any]:
    """Start the continuous process (`env`: the phase's warehouse and landing root), feed it
    `cycles` files, stop it; the cycles' figures and the process's exit code. `marker`: the
    run log's marker of the warehouse (cdc_warehouse.run_log)."""
    family, pieces, covered = warm_pieces(workload_dir, cycles)
    topup = workload_dir / f"topup-{SOURCE_TOPUP}"
    started = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "cdc_warehouse.cli", "run", "--every", every],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    assert child.stdout is not None
    output = ChildOutput(child.stdout, log)
    output.start()
    sampler = TreeSampler(child.pid)
    sampler.start()
    records: list[dict[str, Any]] = []
    landed: list[Path] = []
    try:
        wait_first_run(output.until(started + RUN_TIMEOUT_SECONDS))
        wait_recorded(marker, child, started + RUN_TIMEOUT_SECONDS)
        startup_seconds = round(time.monotonic() - started, 3)
        for cycle, piece in enumerate(pieces, 1):
            output.drain()
            landed.append(land_piece(topup, piece, cycle, landing_root))
            landed_at = time.monotonic()
            run = read_run(output.until(landed_at + RUN_TIMEOUT_SECONDS))
            wait_recorded(marker, child, landed_at + RUN_TIMEOUT_SECONDS)
            record = cycle_record(cycle, piece, landed_at, run, tree_rss(child.pid))
            records.append(record)
            print(
                f"bench: warm cycle {cycle}/{len(pieces)}: {piece.lines} lines, landing run "
                f"{run.landing_run}: cdc_current after {record['seconds']:.1f} s, the run's end "
                f"after {record['run_end_seconds']:.1f} s, driver RSS "
                f"{record['rss_bytes']['driver'] / 2**30:.2f} GB",
                file=sys.stderr,
                flush=True,
            )
    except (RunFailed, TimeoutError) as problem:
        raise RunFailed(f"warm phase: {problem} (the process's output: {log})") from problem
    finally:
        exit_code = _stop(child)
        peaks = sampler.stop()
        output.join()
        for path in landed:
            path.unlink()
    return {
        "phase": WARM,
        "every": every,
        "family": family,
        "source": f"topup-{SOURCE_TOPUP}",
        "covers_source": covered,
        "startup_seconds": startup_seconds,
        "exit_code": exit_code,
        "cycles": records,
        "rss_peak_bytes": peaks,
        "rss_samples": sampler.samples,
    }
