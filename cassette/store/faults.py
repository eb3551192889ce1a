"""Reading a fault plan file (TOML or JSON), with errors that name ``file:line``.

A plan file is what ``cassette replay --faults FILE`` and the pytest marker's
``faults="FILE"`` read::

    seed = 7                      # makes probabilities repeatable (default 0)

    [[fault]]
    kind = "timeout"              # delay, timeout, error, malformed, disconnect, exit
    method = "tools/call"
    name = "search"               # the tool or prompt name, or the resource URI
    nth = 1                       # only the first matching call

The values and what they mean are ``cassette.core.replay.faults``; docs/faults.md is the guide.
A mistake in a rule is reported at the line of its ``[[fault]]`` header (TOML) or of its
opening brace (JSON), so a person goes straight to it.

``write_fault_plan`` writes a plan as the JSON file ``load_fault_plan`` reads: how the
pytest plugin hands a test's plan to a server command it starts (``--faults FILE``).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Final

from cassette.core.replay.faults import FaultPlan
from cassette.errors import CassetteNotFoundError, UsageError
from cassette.store.files import write_atomic

__all__ = ["load_fault_plan", "write_fault_plan"]

_TABLE: Final = re.compile(rb"^[ \t]*\[\[[ \t]*faults?[ \t]*\]\]", re.MULTILINE)
_RULE_NUMBER: Final = re.compile(r"^fault (\d+): ")


def load_fault_plan(path: str | os.PathLike[str]) -> FaultPlan:
    """The plan in ``path`` (``.json`` is JSON, anything else TOML); a ``UsageError`` that
    names ``path:line`` when it cannot be used."""
    shown = os.fspath(path)
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise CassetteNotFoundError(f"{shown}: no such fault plan") from None
    except OSError as exc:
        raise UsageError(f"{shown}: cannot read the fault plan: {exc.strerror}") from None
    data = _decode(shown, raw)
    try:
        return FaultPlan.from_data(data)
    except UsageError as exc:
        raise UsageError(f"{shown}:{_line_of(str(exc), raw, shown)}: {exc}") from None


def write_fault_plan(path: str | os.PathLike[str], plan: FaultPlan) -> None:
    """Write ``plan`` to ``path`` as JSON (a rule's unset fields left out), whole or not at
    all; a scratch file read at once by another process, so not flushed to the disk."""
    import attrs

    rules = [{k: v for k, v in attrs.asdict(rule).items() if v is not None} for rule in plan.rules]
    data = json.dumps({"seed": plan.seed, "fault": rules})
    write_atomic(path, data.encode("utf-8"), durable=False)


def _decode(shown: str, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{shown}:1: the fault plan is not UTF-8 text ({exc.reason})") from None
    if shown.endswith(".json"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{shown}:{exc.lineno}: not JSON: {exc.msg}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = getattr(exc, "lineno", None) or _toml_line(str(exc))
        raise UsageError(f"{shown}:{line}: not TOML: {_toml_reason(str(exc))}") from None


def _toml_line(message: str) -> int:
    found = re.search(r"at line (\d+)", message)
    return int(found.group(1)) if found else 1


def _toml_reason(message: str) -> str:
    return re.sub(r"\s*\(at line \d+, column \d+\)", "", message)


def _line_of(message: str, raw: bytes, shown: str) -> int:
    """The line of the rule ``message`` is about (``fault N: ...``), else 1."""
    found = _RULE_NUMBER.match(message)
    if found is None:
        return 1
    number = int(found.group(1))
    if shown.endswith(".json"):
        starts = [m.start() for m in re.finditer(rb"\{", raw)][1:]  # the plan's own is first
    else:
        starts = [m.start() for m in _TABLE.finditer(raw)]
    if number > len(starts):
        return 1
    return raw.count(b"\n", 0, starts[number - 1]) + 1
