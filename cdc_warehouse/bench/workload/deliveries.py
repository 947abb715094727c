"""Writing a workload: each family's plans cut into chunks and written as files, in parallel,
under one directory per delivery (the waves, the top-ups, the small file), with the manifest and
the expected sample; and staging a delivery into a landing root."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from cdc_warehouse.bench.workload import datastream, debezium, pgoutput, spanner
from cdc_warehouse.bench.workload.debezium import (
    DBZ_SERVERS,
    DBZ_SIDE_SCHEMA,
    DBZ_SIDE_SERVER,
    DBZ_SIDE_TABLE,
)
from cdc_warehouse.bench.workload.pgoutput import PG_SIDE_TABLE, PG_SLOT
from cdc_warehouse.bench.workload.plan import (
    BACKFILL_SHARE,
    FAMILIES,
    OP_UPDATE,
    PK_KEY_OFFSET,
    SIDE_ROWS,
    TOPUP_MODES,
    Chunk,
    FileStats,
    Plan,
    Spec,
    _deliver_name,
    family_events,
    plan_base,
    plan_topup,
    side_live_keys,
    side_row,
    truncates_in,
)
from cdc_warehouse.files import replace_text

# The delivery of one small file, what a frequent scheduled run finds.
SMALL_FILE = "small"
SMALL_FILE_EVENTS = 1_000
# Families whose every line is a whole event: a file's first lines are a valid file of their own.
SMALL_FILE_FAMILIES = ("datastream", "debezium")
# The expected rows (values) of a sample of live keys per family, checked by the benchmark.
SAMPLE_KEYS = 200
SAMPLE_FILE = "expected-sample.json"


class FamilyGenerator(Protocol):
    """What the writing reads of a family's module (`datastream.py`, `debezium.py`, ...)."""

    def sub_source(self, key: np.ndarray) -> np.ndarray:
        """The stream, server or table (an index into the module's list) of each key id."""

    def chunks(
        self, spec: Spec, plan: Plan, mode: str | None, state: dict[Any, int]
    ) -> list[Chunk]:
        """The plan's changes cut into files (`mode`: the top-up, None for the base waves).
        `state` is what the base's call leaves for the top-ups' (each gets a copy)."""

    def write_file(
        self, chunk: Chunk, plan: Plan, seed: int
    ) -> tuple[list[str] | bytes, FileStats]:
        """A chunk's file: its lines, or its bytes (a binary format)."""

    def carries_all(self, plan: Plan, i: int) -> bool:
        """Whether change i carries every column (else some take the key's earlier values)."""

    def expected_row(self, plan: Plan, last: int, full: int) -> dict[str, Any]:
        """(identity, key and row_json as JSON values) of a key whose last change is `last`
        and whose latest change carrying every column is `full`, as the module writes them."""


GENERATORS: dict[str, FamilyGenerator] = {
    "datastream": datastream,
    "debezium": debezium,
    "pgoutput": pgoutput,
    "spanner": spanner,
}
_PLANS: dict[tuple[str, str], Plan] = {}  # (family, "base" | mode) -> plan; read by workers


# --------------------------------------------------------------------------------------------
# Expected rows: what cdc_current holds for a sample of keys after the base waves
# --------------------------------------------------------------------------------------------


def _side_expected(family: str, waves: int) -> list[dict[str, Any]]:
    if family == "debezium":
        name, table = DBZ_SERVERS[DBZ_SIDE_SERVER][0], f"{DBZ_SIDE_SCHEMA}.{DBZ_SIDE_TABLE}"
    else:
        name, table = PG_SLOT, f"public.{PG_SIDE_TABLE}"
    return [
        {
            "source_name": name,
            "source_table": table,
            "key": {"id": n},
            "row": side_row(n),
            "why": ["after_truncate"],
        }
        for n in side_live_keys(waves)
    ]


def expected_sample(
    spec: Spec, plan: Plan, in_avro: np.ndarray | None = None, size: int = SAMPLE_KEYS
) -> list[dict[str, Any]]:
    """The rows cdc_current holds after the base waves for a deterministic sample of live keys:
    up to `size` // 8 of each kind worth checking (last change an update with TOAST columns
    unchanged, a primary key change's new key, a backfilled key, a Spanner changed-only update,
    an event read from an Avro file), the rest uniform; plus every live row of the side table
    that truncates empty. `in_avro`: per change, whether it landed in an Avro file."""
    family = plan.family
    generator = GENERATORS[family]
    rng = np.random.default_rng([spec.seed, 31, FAMILIES.index(family)])
    order = np.argsort(plan.key, kind="stable")
    sorted_key = plan.key[order]
    live = plan.live
    base_key = np.where(live >= PK_KEY_OFFSET, live - PK_KEY_OFFSET, live)
    last = order[np.searchsorted(sorted_key, base_key, side="right") - 1]
    op = plan.op[last]
    kinds = {
        "toast": (op == OP_UPDATE) & plan.toast[last],
        "pk_successor": live >= PK_KEY_OFFSET,
        "backfill": plan.first_pos[base_key] < BACKFILL_SHARE * len(plan.key),
        "updated": op == OP_UPDATE,
    }
    if family == "debezium":
        kinds["toast"] &= generator.sub_source(base_key) == 0
    if family == "datastream":
        del kinds["toast"], kinds["pk_successor"]
        if in_avro is not None:
            kinds["avro"] = in_avro[last]
    if family == "spanner":
        del kinds["toast"], kinds["pk_successor"]
        kinds["changed_only"] = (op == OP_UPDATE) & (generator.sub_source(base_key) < 2)
    share = max(1, size // 8)
    chosen: dict[int, list[str]] = {}
    for why, mask in kinds.items():
        candidates = np.flatnonzero(mask)
        for n in candidates[rng.permutation(len(candidates))[:share]]:
            chosen.setdefault(int(n), []).append(why)
    rest = np.setdiff1d(np.arange(len(live)), np.fromiter(chosen, np.int64, len(chosen)))
    for n in rest[rng.permutation(len(rest))[: max(0, size - len(chosen))]]:
        chosen.setdefault(int(n), []).append("uniform")
    rows = []
    for n in sorted(chosen):
        i = int(last[n])
        lo = np.searchsorted(sorted_key, plan.key[i])
        changes = order[lo : np.searchsorted(sorted_key, plan.key[i], side="right")]
        full = next(int(j) for j in changes[::-1] if generator.carries_all(plan, int(j)))
        rows.append({**generator.expected_row(plan, i, full), "why": chosen[n]})
    if family in ("debezium", "pgoutput"):
        rows += _side_expected(family, spec.waves)
    return rows


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _write_chunk(task: tuple[str, Chunk, str, int]) -> tuple[str, str, int, int, dict]:
    plan_key, chunk, root, seed = task
    plan = _PLANS[(chunk.family, plan_key)]
    written, stats = GENERATORS[chunk.family].write_file(chunk, plan, seed)
    data = written if isinstance(written, bytes) else ("\n".join(written) + "\n").encode("utf-8")
    paths = [Path(root) / chunk.path]
    if chunk.extra.get("twice"):
        paths.append(Path(root) / chunk.path.replace(".jsonl", "-redelivered.jsonl"))
        stats.duplicates += stats.lines
        stats.lines *= 2
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return chunk.family, root, len(paths), len(data) * len(paths), asdict(stats)


def _tasks(
    spec: Spec, out: Path
) -> tuple[list[tuple[str, Chunk, str, int]], dict[str, Any], dict[str, list[dict[str, Any]]]]:
    counts = family_events(spec)
    tasks: list[tuple[str, Chunk, str, int]] = []
    facts: dict[str, Any] = {}
    samples: dict[str, list[dict[str, Any]]] = {}
    for family in spec.families:
        base = plan_base(spec, family, counts[family])
        _PLANS[(family, "base")] = base
        state: dict[Any, int] = {}
        facts[family] = {
            "base_events": len(base.key),
            "keys": int(base.n_keys),
            "live_keys": {"base": len(base.live)},
            "topup_events": {},
            "late_files": 0,
        }
        plans: list[tuple[str, Plan, str | None]] = [("base", base, None)]
        for topup_mode in TOPUP_MODES:
            topup = plan_topup(spec, base, topup_mode)
            _PLANS[(family, topup_mode)] = topup
            plans.append((topup_mode, topup, topup_mode))
            facts[family]["live_keys"][topup_mode] = len(topup.live)
            facts[family]["topup_events"][topup_mode] = len(topup.key)
        side = family in ("debezium", "pgoutput")
        if side:
            # The side table that truncates empty (the top-ups do not touch it).
            side_live = len(side_live_keys(spec.waves))
            facts[family]["side_table"] = {
                "events": spec.waves * SIDE_ROWS + sum(map(truncates_in, range(spec.waves))),
                "truncates": sum(map(truncates_in, range(spec.waves))),
                "live_keys": side_live,
            }
            for name in facts[family]["live_keys"]:
                facts[family]["live_keys"][name] += side_live
        for plan_key, plan, mode in plans:
            chunks = GENERATORS[family].chunks(spec, plan, mode, dict(state) if mode else state)
            if mode is None:
                in_avro = np.zeros(len(plan.key), bool)
                for chunk in chunks:
                    if chunk.extra.get("avro"):
                        in_avro[chunk.index] = True
                samples[family] = expected_sample(spec, plan, in_avro)
                facts[family]["sample_keys"] = len(samples[family])
            for chunk in chunks:
                target = out / _deliver_name(chunk.deliver, spec.waves, mode)
                facts[family]["late_files"] += int(bool(chunk.extra.get("late")))
                tasks.append((plan_key, chunk, str(target), spec.seed))
    return tasks, facts, samples


def write_small_file(out: Path) -> dict[str, Any] | None:
    """`topup-small` (apart from the deliveries: its lines repeat the realistic top-up's): the
    first SMALL_FILE_EVENTS lines of the realistic top-up's first file of
    the first family in SMALL_FILE_FAMILIES it holds (None when it holds neither)."""
    realistic = out / f"topup-{TOPUP_MODES[0]}"
    for family in SMALL_FILE_FAMILIES:
        files = sorted((realistic / family).rglob("*.jsonl"))
        if not files:
            continue
        with files[0].open() as whole:
            lines = [line for _, line in zip(range(SMALL_FILE_EVENTS), whole, strict=False)]
        relative = files[0].relative_to(realistic)
        target = out / f"topup-{SMALL_FILE}" / relative
        target.parent.mkdir(parents=True)
        target.write_text("".join(lines))
        return {"family": family, "path": str(relative), "events": len(lines)}
    return None


def generate(spec: Spec, out: Path | str) -> dict[str, Any]:
    """Write every wave, both top-ups and the small file under `out` and return (and write)
    the manifest."""
    out = Path(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    started = time.perf_counter()
    _PLANS.clear()
    tasks, facts, samples = _tasks(spec, out)
    jobs = spec.jobs or os.cpu_count() or 1
    # Big chunks first, so the pool's workers finish together.
    tasks.sort(key=lambda task: -len(task[1].index))
    if jobs > 1 and len(tasks) > 1:
        with ProcessPoolExecutor(jobs, mp_context=get_context("fork")) as pool:
            results = list(pool.map(_write_chunk, tasks, chunksize=1))
    else:
        results = [_write_chunk(task) for task in tasks]
    _PLANS.clear()
    small_file = write_small_file(out)
    deliveries: dict[str, dict[str, Any]] = {}
    for family, root, files, size, stats in results:
        name = Path(root).name
        entry = deliveries.setdefault(name, {"files": 0, "bytes": 0, "families": {}})
        entry["files"] += files
        entry["bytes"] += size
        total = entry["families"].setdefault(family, FileStats())
        total.add(FileStats(**stats))
    manifest = {
        "spec": {**asdict(spec), "families": list(spec.families)},
        "generate_seconds": round(time.perf_counter() - started, 2),
        "waves": [f"wave-{w:04d}" for w in range(spec.waves)],
        "topups": {mode: f"topup-{mode}" for mode in TOPUP_MODES},
        "deliveries": {
            name: {
                "files": entry["files"],
                "bytes": entry["bytes"],
                "families": {f: asdict(s) for f, s in sorted(entry["families"].items())},
            }
            for name, entry in sorted(deliveries.items())
        },
        "families": facts,
        "small_file": small_file,
    }
    replace_text(out / SAMPLE_FILE, json.dumps(samples, indent=1) + "\n")
    replace_text(out / "manifest.json", json.dumps(manifest, indent=2) + "\n")
    return manifest


def load_expected_sample(out: Path | str) -> dict[str, list[dict[str, Any]]]:
    """Per family, the expected cdc_current rows of the sampled keys after the base waves
    (`expected_sample`): source_name, source_table, key, row (JSON values), why."""
    return json.loads((Path(out) / SAMPLE_FILE).read_text())


def load_manifest(out: Path | str) -> dict[str, Any]:
    return json.loads((Path(out) / "manifest.json").read_text())


def delivery_files(out: Path | str, name: str) -> Iterator[Path]:
    root = Path(out) / name
    for dirpath, _, filenames in os.walk(root):
        for filename in filenames:
            yield Path(dirpath, filename).relative_to(root)


def stage(out: Path | str, name: str, landing_root: Path | str, families: Iterable[str] = FAMILIES):
    """Hard-link one delivery's files into the landing root (copy where links cannot be made),
    as the next arrivals. Returns the number of files staged."""
    families = set(families)
    count = 0
    for relative in sorted(delivery_files(out, name)):
        if relative.parts[0] not in families:
            continue
        target = Path(landing_root) / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        source = Path(out) / name / relative
        if target.exists():
            continue
        try:
            os.link(source, target)
        except OSError:
            shutil.copyfile(source, target)
        count += 1
    return count


def unstage(out: Path | str, name: str, landing_root: Path | str) -> None:
    for relative in delivery_files(out, name):
        (Path(landing_root) / relative).unlink(missing_ok=True)


def discard(out: Path | str, name: str, landing_root: Path | str) -> None:
    """Delete a landed delivery's files from the landing root and the workload: at 50M events
    the workload (47 GB) and a build's shuffle and spill do not fit on one disk together. The
    workload is incomplete afterwards (`is_complete`), so the next bench generates it again."""
    unstage(out, name, landing_root)
    shutil.rmtree(Path(out) / name, ignore_errors=True)


def is_complete(out: Path | str, manifest: dict[str, Any]) -> bool:
    """Every delivery is there, and the small file (a manifest written before it had none)."""
    if not all((Path(out) / name).is_dir() for name in manifest["deliveries"]):
        return False
    if "small_file" not in manifest or not (Path(out) / SAMPLE_FILE).is_file():
        return False
    small = manifest["small_file"]
    return small is None or (Path(out) / f"topup-{SMALL_FILE}" / small["path"]).is_file()
