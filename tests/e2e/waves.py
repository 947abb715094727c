"""Writing a scenario's waves of files under a landing root, and the scenarios' shared CLI."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path


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
    prog: str,
    build_waves: Callable[[], list[dict[str, bytes]]],
    coverage: list[tuple[int, str, str]],
    argv: list[str] | None = None,
) -> None:
    """CLI: ``write-sample <dir>`` lands every wave into one landing root; ``coverage`` prints
    which trap sits in which wave and file."""
    parser = argparse.ArgumentParser(prog=prog)
    sub = parser.add_subparsers(dest="command", required=True)
    sample = sub.add_parser("write-sample", help="write all waves into one landing root")
    sample.add_argument("dir", type=Path)
    sub.add_parser("coverage", help="print which trap is in which wave and file")
    args = parser.parse_args(argv)
    waves = build_waves()
    if args.command == "write-sample":
        for wave in waves:
            write_wave(args.dir, wave)
        print(f"wrote {sum(len(w) for w in waves)} files under {args.dir}")
    else:
        for number, path, trap in coverage:
            print(f"wave {number}  {path}\n    {trap}")
