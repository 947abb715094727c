"""Files the project writes for later runs or for dbt to read, written so that a process killed
mid-write leaves the previous file whole: a half-written yml or JSON file would break every dbt
command or read as garbage."""

from __future__ import annotations

from pathlib import Path

# Neither dbt (`.sql`, `.yml`) nor the project's own readers pick up a file with this suffix.
PARTIAL_SUFFIX = ".partial"


def replace_text(path: Path, text: str) -> None:
    """Write `text` beside `path`, then rename it into place (atomic on one file system)."""
    partial = path.with_name(path.name + PARTIAL_SUFFIX)
    partial.write_text(text)
    partial.replace(path)
