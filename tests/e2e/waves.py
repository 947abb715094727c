"""A scenario's waves of files, writing them under a landing root, and the scenarios' shared
CLI."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Scenario:
    """The waves of files (relative path -> bytes) a scenario lands one after another, and its
    coverage: which trap of the contract sits in which wave and file, as (wave number, relative
    path, trap)."""

    waves: list[dict[str, bytes]]
    coverage: list[tuple[int, str, str]]


def write_wave(root: Path | str, wave: dict[str, bytes]) -> list[Path]:
    """Land one wave's files (relative path -> bytes) under ``root``, as a new run's arrivals."""
    written = []
    for relative, data in sorted(wave.items()):
        target = Path(root) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(target)
    return written


def scenario_main(
    prog: str, build_scenario: Callable[[], Scenario], argv: list[str] | None = None
) -> None:
    """CLI: ``write-sample <dir>`` lands every wave into one landing root; ``coverage`` prints
    which trap sits in which wave and file."""
    parser = argparse.ArgumentParser(prog=prog)
    sub = parser.add_subparsers(dest="command", required=True)
    sample = sub.add_parser("write-sample", help="write all waves into one landing root")
    sample.add_argument("dir", type=Path)
    sub.add_parser("coverage", help="print which trap is in which wave and file")
    args = parser.parse_args(argv)
    scenario = build_scenario()
    if args.command == "write-sample":
        for wave in scenario.waves:
            write_wave(args.dir, wave)
        print(f"wrote {sum(len(w) for w in scenario.waves)} files under {args.dir}")
    else:
        for number, path, trap in scenario.coverage:
            print(f"wave {number}  {path}\n    {trap}")
