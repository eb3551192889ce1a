"""The members inside a cassette's free-form objects that readers rely on, and their types.

The header's ``target`` and ``redaction`` and an event's ``meta`` are JSON objects a newer
writer may add members to, so the converter takes them as they are. But the replay,
``lint`` and the fronts read some of their members (the stored strategy, the recorded
URL, the redaction rules, the HTTP stream a message travelled on), and a value of the
wrong type there would fail far from the file: a list where a stream name belongs cannot
even be a dictionary key. So the reader checks exactly those members, once, and a
cassette that passes is safe to hand to any of them. Unknown members are left alone.
The ``redaction`` rules are the redaction module's to judge (``check_header``: they are
read as a record of what was redacted, never compiled or run).

Each function returns what is wrong, as ``"member: reason"``, or ``None``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from cassette.core.redaction.redacted import check_header
from cassette.core.replay.matching import STRATEGIES
from cassette.core.wire.meta import (
    EVENT,
    EVENT_ID,
    LATE,
    PROBE,
    RETRY,
    SESSION,
    SSE,
    START,
    STREAM,
    SYNTHETIC,
    VARIANT,
)

__all__ = ["meta_problem", "redaction_problem", "target_problem"]

Check = Callable[[Any], str | None]


def _string(value: Any) -> str | None:
    return None if isinstance(value, str) else "must be a string"


def _integer(value: Any) -> str | None:
    ok = isinstance(value, int) and not isinstance(value, bool)
    return None if ok else "must be an integer"


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else "must be true or false"


def _strings(value: Any) -> str | None:
    if value is None:  # as if absent, like the header's other optional fields
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return "must be a list of strings"
    return None


def _strategy(value: Any) -> str | None:
    if isinstance(value, str) and value in STRATEGIES:
        return None
    return "must be one of " + ", ".join(f'"{name}"' for name in STRATEGIES)


_TARGET: Final[Mapping[str, Check]] = {
    "command": _strings,
    "cwd": _string,
    "url": _string,
    "strategy": _strategy,
}
_META: Final[Mapping[str, Check]] = {
    STREAM: _string,
    SESSION: _integer,
    SSE: _boolean,
    EVENT_ID: _string,
    EVENT: _string,
    RETRY: _integer,
    SYNTHETIC: _string,
    LATE: _boolean,
    VARIANT: _string,
    START: _integer,
    PROBE: _string,
}


def _first_problem(value: Mapping[str, Any], checks: Mapping[str, Check], where: str) -> str | None:
    for name, check in checks.items():
        if name in value:
            problem = check(value[name])
            if problem is not None:
                return f"{where}.{name}: {problem}"
    return None


def target_problem(target: Mapping[str, Any]) -> str | None:
    """What is wrong with the header's ``target`` (``command``, ``url``, ``strategy``)."""
    if target.get("command") is None and "command" in target:
        return "target.command: must be a list of strings"
    return _first_problem(target, _TARGET, "target")


def redaction_problem(redaction: Mapping[str, Any] | None) -> str | None:
    """What is wrong with the header's ``redaction`` field: the redaction module's own
    rules (``check_header``: it is read, never run; ``null`` lists read as none)."""
    if redaction is None:
        return None
    problems = check_header(redaction)
    return problems[0] if problems else None


def meta_problem(meta: Mapping[str, Any] | None) -> str | None:
    """What is wrong with an event's ``meta`` (the members the replay and fronts read)."""
    if not meta:
        return None
    return _first_problem(meta, _META, "meta")
