"""What the three oracles (tests/e2e/*_oracle.py) share: the rules that are the same for every
source family (docs/guarantees.md, docs/decisions/001), so that each oracle holds only
its family's reading of its source format. Like the oracles it imports nothing from the project:
an oracle that shared code with the warehouse would share its mistakes.

- landing: a family's files are ``<system>/<source>/...``; each line or record the family cannot
  interpret is quarantined with its file, 1-based number and reason, and nothing of it is used;
- values: integers beyond +-2**53 become decimal strings; JSON text has sorted keys, no spaces
  and UTF-8 kept; an instant's text is UTC 'YYYY-MM-DDTHH:MM:SS.ffffffZ';
- versions: a family turns each key's changes, in its source order, into steps (the state each
  leaves). The steps of one transaction in a row make one transition, the state after the last;
  a state equal to the open version's is none, and a delete with nothing open is none; a
  transition takes effect at its own time, clipped to the next one's, so that versions never
  overlap; the last version stays current unless a delete closed it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import InvalidOperation
from itertools import zip_longest
from typing import Any, TypeGuard, TypeVar

MAX_EXACT_INT = 2**53  # the largest integer magnitude a double, hence any JSON reader, holds
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# (1-based line or record number, the parsed line or record, why it cannot be read)
Line = tuple[int, Any, str | None]
# (row_json, unavailable_columns): what a version holds
State = tuple[str, tuple[str, ...]]
# (source_name, source_table, key_json)
KeyIdentity = tuple[str, str, str]
Interpreted = TypeVar("Interpreted")


class BadInput(Exception):
    """A line or record that goes to quarantine; its message is the reason."""


# --------------------------------------------------------------------------------------------
# Values
# --------------------------------------------------------------------------------------------


def is_int(value: Any) -> TypeGuard[int]:
    """An integer, not a boolean (JSON's true is no number)."""
    return isinstance(value, int) and not isinstance(value, bool)


def canonical_int(value: int) -> int | str:
    """An int, or its decimal string beyond +-2**53."""
    return value if -MAX_EXACT_INT <= value <= MAX_EXACT_INT else str(value)


def canonical_json(obj: Any) -> str:
    """The JSON text of canonical values: sorted keys, no spaces, UTF-8 kept."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def utc_datetime(micros: int) -> datetime:
    """Epoch microseconds as an aware UTC datetime (the marts' precision)."""
    return EPOCH + timedelta(microseconds=micros)


def instant_text(moment: datetime) -> str:
    """The canonical text of an instant (an aware datetime): UTC, microseconds, 'Z'."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


# --------------------------------------------------------------------------------------------
# Landing
# --------------------------------------------------------------------------------------------


def source_of(path: str, source_system: str, suffixes: tuple[str, ...]) -> str | None:
    """'<source_system>/<source>/...<suffix>' -> '<source>'; None for a file the family does not
    read."""
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != source_system or not path.endswith(suffixes):
        return None
    return parts[1]


def json_lines(
    data: bytes,
    *,
    parse_float: Callable[[str], Any] | None = None,
    malformed: str = "malformed JSON line",
) -> list[Line]:
    """Each non-blank line of a file of one JSON document per line, parsed or with the reason
    (``malformed``: the exception's text) why it cannot be."""
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines = lines[:-1]
    out: list[Line] = []
    for index, raw in enumerate(lines):
        if raw.strip() == b"":
            continue
        try:
            parsed = json.loads(raw.decode("utf-8"), parse_float=parse_float)
        except (UnicodeDecodeError, ValueError, InvalidOperation) as exc:
            out.append((index + 1, None, f"{malformed}: {exc}"))
            continue
        out.append((index + 1, parsed, None))
    return out


def land(
    waves: list[dict[str, bytes]],
    source_system: str,
    suffixes: tuple[str, ...],
    read: Callable[[str, bytes], list[Line]],
    interpret: Callable[[str, Any], Interpreted | None],
) -> tuple[list[tuple[str, Interpreted]], list[dict[str, Any]]]:
    """Every file of the family landed in ``waves`` (a wave's files in path order), read into
    lines or records and interpreted: the good ones as (source name, interpretation) in landing
    order, and the quarantine rows in file and line order. ``interpret`` raises BadInput for
    what goes to quarantine and gives None for what is skipped (a tombstone)."""
    good: list[tuple[str, Interpreted]] = []
    quarantine: list[dict[str, Any]] = []
    for wave in waves:
        for path in sorted(wave):
            source = source_of(path, source_system, suffixes)
            if source is None:
                continue
            for number, raw, error in read(path, wave[path]):
                if error is None:
                    try:
                        interpreted = interpret(source, raw)
                    except BadInput as exc:
                        error = str(exc)
                    else:
                        if interpreted is not None:
                            good.append((source, interpreted))
                        continue
                quarantine.append(
                    {
                        "source_system": source_system,
                        "source_name": source,
                        "file_path": path,
                        "line_number": number,
                        "reason": error,
                    }
                )
    quarantine.sort(key=lambda row: (row["file_path"], row["line_number"]))
    return good, quarantine


# --------------------------------------------------------------------------------------------
# Versions and marts
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One change of a key, in source order: its transaction, its mart op, its source time
    (epoch microseconds) and the state it leaves (None: the key is deleted)."""

    tx: Hashable
    op: str
    at: int
    state: State | None


@dataclass(frozen=True)
class Transition:
    """A step kept as a new version (or, with no state, as the close of the open one), and the
    time it takes effect."""

    step: Step
    effective: int


def transitions(steps: list[Step]) -> list[Transition]:
    """A key's transitions: per transaction (consecutive steps of one tx) the step that ends it,
    unless it leaves the key as it was (its state equal to the open version's, or a delete with
    nothing open). Each takes effect at its own time clipped to the next transition's: a late
    change cannot begin a version after its successor began."""
    pairs = zip_longest(steps, steps[1:])
    ends = [step for step, after in pairs if after is None or after.tx != step.tx]
    kept: list[Step] = []
    open_state: State | None = None
    for step in ends:
        if step.state != open_state:
            kept.append(step)
            open_state = step.state
    effective: list[int] = []
    for step in reversed(kept):
        effective.append(step.at if not effective else min(step.at, effective[-1]))
    return [Transition(step, at) for step, at in zip(kept, reversed(effective), strict=True)]


def marts(
    source_system: str,
    steps_by_key: Mapping[KeyIdentity, list[Step]],
    quarantine: list[dict[str, Any]],
) -> dict[str, list[dict[str, Any]]]:
    """cdc_current, cdc_history and cdc_quarantine from each key's steps in source order (keys in
    source name, table and key order)."""
    current: list[dict[str, Any]] = []
    history: list[dict[str, Any]] = []
    for source_name, source_table, key_json in sorted(steps_by_key):
        identity = {
            "source_system": source_system,
            "source_name": source_name,
            "source_table": source_table,
            "key_json": key_json,
        }
        kept = transitions(steps_by_key[(source_name, source_table, key_json)])
        for this, following in zip_longest(kept, kept[1:]):
            if this.step.state is None:
                continue
            row_json, unavailable = this.step.state
            valid_to = None if following is None else utc_datetime(following.effective)
            history.append(
                {
                    **identity,
                    "row_json": row_json,
                    "unavailable_columns": list(unavailable),
                    "op": this.step.op,
                    "valid_from": utc_datetime(this.effective),
                    "valid_to": valid_to,
                    "is_current": valid_to is None,
                }
            )
            if following is None:
                current.append(
                    {
                        **identity,
                        "row_json": row_json,
                        "unavailable_columns": list(unavailable),
                        "last_op": this.step.op,
                        "last_committed_at": utc_datetime(this.step.at),
                    }
                )
    return {"cdc_current": current, "cdc_history": history, "cdc_quarantine": quarantine}
