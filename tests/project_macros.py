"""A project macro rendered as dbt renders it, for macros of plain Jinja (no adapter or ref):
tests tie such macros to the Python that shares their rule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jinja2

from cdc_warehouse.settings import PROJECT_DIR


def render_macro(macro_paths: str | Sequence[str], call: str, **context: Any) -> str:
    """The text `call` (e.g. `position_uint('x', 20)`) renders to, with the macros of
    macros/`macro_paths` defined (files, or every file of a folder, as macros call one another),
    dbt's `do` statement, and `context` (e.g. a stand-in for dbt's `exceptions`)."""
    paths = [macro_paths] if isinstance(macro_paths, str) else macro_paths
    files = []
    for path in (PROJECT_DIR / "macros" / name for name in paths):
        files += sorted(path.glob("*.sql")) if path.is_dir() else [path]
    macros = "".join(file.read_text() for file in files)
    environment = jinja2.Environment(extensions=["jinja2.ext.do"])
    return environment.from_string(macros + "{{ " + call + " }}").render(**context).strip()
