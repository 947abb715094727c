"""Resident memory of a process tree, read from /proc: the driver's Python process (the root),
its JVMs (in local mode the executors live in the driver's JVM) and everything else under it
(the Python UDF workers)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

PROC = Path("/proc")
SAMPLE_SECONDS = 0.2


def status(pid: int, proc: Path = PROC) -> dict[str, str]:
    try:
        text = (proc / str(pid) / "status").read_text()
    except OSError:
        return {}
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)


def kib(fields: dict[str, str], field: str) -> int:
    value = fields.get(field, "0 kB").split()
    return int(value[0]) if value else 0


def _parent_of(stat: str) -> int:
    """The parent's pid from /proc/<pid>/stat (after the command's name, which may hold ')')."""
    return int(stat.rsplit(")", 1)[1].split()[1])


def _children(proc: Path) -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir(proc):
        if not entry.isdigit():
            continue
        try:
            ppid = _parent_of((proc / entry / "stat").read_text())
        except (OSError, ValueError, IndexError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def descendants(root: int, proc: Path = PROC) -> list[int]:
    """The root and every process under it."""
    tree = _children(proc)
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(tree.get(pid, []))
    return found


def _parent(pid: int, proc: Path) -> int:
    try:
        return _parent_of((proc / str(pid) / "stat").read_text())
    except (OSError, ValueError, IndexError):
        return 0


def _is_java(pid: int, proc: Path) -> bool:
    try:
        exe = os.readlink(proc / str(pid) / "exe")
    except OSError:
        return False
    return os.path.basename(exe) == "java"


def jvm_pids(root: int, proc: Path = PROC) -> list[int]:
    return [pid for pid in descendants(root, proc) if pid != root and _is_java(pid, proc)]


def tree_rss(root: int, proc: Path = PROC) -> dict[str, int]:
    """Resident bytes (VmRSS) of the tree at one instant: `driver_python` (the root), `jvm`
    (its top-level JVMs), `jvm_largest` (the largest of them), `workers` (every other process),
    `driver` (the root and its JVMs: what the driver's memory targets measure) and `tree`."""
    parts = {"driver_python": 0, "jvm": 0, "jvm_largest": 0, "workers": 0}
    pids = descendants(root, proc)
    java = {pid for pid in pids if _is_java(pid, proc)}
    for pid in pids:
        rss = kib(status(pid, proc), "VmRSS") * 1024
        if pid == root:
            parts["driver_python"] += rss
        elif pid in java:
            # A JVM starting a Python worker forks first: for a moment the child is a copy of
            # the JVM (same pages, counted twice). Count top-level JVMs only.
            if _parent(pid, proc) not in java:
                parts["jvm"] += rss
                parts["jvm_largest"] = max(parts["jvm_largest"], rss)
        else:
            parts["workers"] += rss
    parts["driver"] = parts["driver_python"] + parts["jvm"]
    parts["tree"] = parts["driver"] + parts["workers"]
    return parts


class TreeSampler(threading.Thread):
    """Peak resident memory of a process tree, sampled: each part of `tree_rss` at its
    largest."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.stopped = threading.Event()
        self.peak = dict.fromkeys(
            ("driver", "driver_python", "jvm", "jvm_largest", "workers", "tree"), 0
        )
        self.samples = 0

    def run(self) -> None:
        while not self.stopped.is_set():
            for name, value in tree_rss(self.root).items():
                self.peak[name] = max(self.peak[name], value)
            self.samples += 1
            self.stopped.wait(SAMPLE_SECONDS)

    def stop(self) -> dict[str, int]:
        self.stopped.set()
        self.join()
        return dict(self.peak)


def own_high_water_marks() -> dict[str, int]:
    """This process's and its JVMs' peak resident bytes (VmHWM, exact)."""
    me = os.getpid()
    return {
        "driver_python_hwm": kib(status(me), "VmHWM") * 1024,
        "jvm_hwm": sum(kib(status(pid), "VmHWM") * 1024 for pid in jvm_pids(me)),
    }
