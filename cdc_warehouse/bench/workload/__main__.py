"""The generator's command line: `python -m cdc_warehouse.bench.workload --scale N --out DIR`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from cdc_warehouse.bench import workload
from cdc_warehouse.bench.workload.deliveries import generate
from cdc_warehouse.bench.workload.plan import FAMILIES, Spec


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m cdc_warehouse.bench.workload",
        description=(workload.__doc__ or "").split("\n")[0],
    )
    parser.add_argument("--scale", type=int, required=True, help="base change events")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--waves", type=int, default=8)
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--chunk-events", type=int, default=50_000)
    parser.add_argument("--jobs", type=int, default=0)
    args = parser.parse_args(argv)
    families = tuple(f for f in args.families.split(",") if f)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {', '.join(sorted(unknown))}")
    spec = Spec(args.scale, args.seed, args.waves, families, args.chunk_events, args.jobs)
    manifest = generate(spec, args.out)
    lines = sum(s["lines"] for d in manifest["deliveries"].values() for s in d["families"].values())
    print(
        f"wrote {args.out}: {args.scale} base events, {lines} lines in "
        f"{manifest['generate_seconds']}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
