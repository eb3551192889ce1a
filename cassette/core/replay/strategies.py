"""Matching strategies: the named policies (``strict``, ``default``, ``loose``) a replay
matches requests under, and the params a project tells them to ignore (JSON Pointers).

Kept apart from ``cassette.core.replay.matching`` so that a strategy, a small value the command
line and the options build, is read without the matcher's machinery; ``matching`` exports
these names too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs

from cassette.core.wire.jsonrpc import JSONObject
from cassette.errors import UsageError

__all__ = [
    "STRATEGIES",
    "Strategy",
    "check_ignore_pointer",
    "get_strategy",
    "ignored_paths",
    "repeating",
    "without_ignored",
]


@attrs.frozen
class Strategy:
    """A named matching policy (see the module docstring for the three built-ins), and the
    params it never matches on (``ignore``: JSON Pointers into the request)."""

    name: str
    repeat_listings: bool
    fallback_to_method: bool
    ignore: tuple[str, ...] = ()
    #: a request whose recordings are all used up gets its last answer again, whatever
    #: its method (``repeating``; the opt-in ``allow_repeats`` / ``--allow-repeats``)
    allow_repeats: bool = False

    @property
    def strict(self) -> bool:
        """Whether what a replay cannot match exactly beyond requests (a client's differing
        answer, a server request the client cannot take) is a miss (``Matcher.strict``)."""
        return self.name == "strict"

    def ignoring(self, pointers: Sequence[str]) -> Strategy:
        """This strategy, also ignoring ``pointers`` (each checked: a ``UsageError`` says
        what a pointer must look like)."""
        for pointer in pointers:
            check_ignore_pointer(pointer)
        if not pointers:
            return self
        return attrs.evolve(self, ignore=tuple(dict.fromkeys([*self.ignore, *pointers])))


def repeating(strategy: Strategy, allow: bool = True) -> Strategy:
    """``strategy``, answering a used-up request with its last recording again when
    ``allow`` (vcrpy's ``allow_playback_repeats``: a client that retries, an agent that
    calls the same tool twice where the recording called it once)."""
    return attrs.evolve(strategy, allow_repeats=True) if allow else strategy


def check_ignore_pointer(pointer: str) -> None:
    """An ignore pointer is a JSON Pointer (RFC 6901) into the request's params."""
    if not pointer.startswith("/params/"):
        raise UsageError(
            f"ignore pointer {pointer!r}: give a JSON Pointer into the request's params, "
            "e.g. /params/arguments/timestamp or /params/uri"
        )


def _steps(pointer: str) -> list[str]:
    return [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]


def _drop(value: Any, steps: Sequence[str]) -> Any:
    """``value`` without what ``steps`` lead to; only the containers on the way are copied."""
    if not steps:
        return value
    head, rest = steps[0], steps[1:]
    if isinstance(value, dict) and head in value:
        copy = dict(value)
        if rest:
            copy[head] = _drop(value[head], rest)
        else:
            del copy[head]
        return copy
    if isinstance(value, list) and head.isdigit() and int(head) < len(value):
        items = list(value)
        if rest:
            items[int(head)] = _drop(items[int(head)], rest)
        else:
            items[int(head)] = None
        return items
    return value


def without_ignored(message: JSONObject, ignore: Sequence[str]) -> JSONObject:
    """``message`` with the ignored params removed (what fingerprints are made of)."""
    for pointer in ignore:
        message = _drop(message, _steps(pointer))
    return message


def ignored_paths(message: JSONObject, ignore: Sequence[str]) -> tuple[str, ...]:
    """The ignore pointers as paths into ``compared_part`` (what a miss diagnosis diffs)."""
    prefix = "/params/arguments" if message.get("method") == "tools/call" else "/params"
    return tuple(p[len(prefix) :] for p in ignore if p.startswith(prefix + "/"))


STRATEGIES: Final = {
    "strict": Strategy("strict", repeat_listings=False, fallback_to_method=False),
    "default": Strategy("default", repeat_listings=True, fallback_to_method=False),
    "loose": Strategy("loose", repeat_listings=True, fallback_to_method=True),
}


def get_strategy(strategy: str | Strategy) -> Strategy:
    """Resolve a strategy name; an unknown one is a ``UsageError`` listing the valid ones."""
    if isinstance(strategy, Strategy):
        return strategy
    try:
        return STRATEGIES[strategy]
    except KeyError:
        from cassette.core.words.suggest import unknown_choice

        raise UsageError(unknown_choice("strategy", strategy, STRATEGIES)) from None
