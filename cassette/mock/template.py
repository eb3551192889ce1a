"""Placeholders in a mock's answers: ``{{arguments.NAME}}`` becomes the call's argument.

A string that is exactly one placeholder takes the argument's JSON value (a number stays a
number, an object an object); a placeholder inside a longer string is replaced by the
value's text (a string as is, anything else as compact JSON). ``{{arguments}}`` is the
whole arguments object; ``{{arguments.a.b}}`` reaches into an object argument. An argument
the call did not pass renders as the empty string. Spaces inside the braces are allowed.
Only strings are rendered, never object keys; a value without ``{{`` is returned as is.

Rendering is bounded: a hundred placeholders of a 2 MB argument would make a 200 MB
answer, so the text put in is counted as it goes, and past ``limit`` bytes (the process's
message size limit: no answer may be larger) rendering stops with ``TemplateTooLarge``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

from cassette.core.wire.limits import max_message_bytes

__all__ = ["PLACEHOLDER", "TemplateTooLarge", "references", "render"]

PLACEHOLDER: Final = re.compile(r"\{\{\s*arguments((?:\.[^\s.{}]+)*)\s*\}\}")
_MISSING: Final = object()


class TemplateTooLarge(ValueError):
    """Filling in the placeholders would make an answer larger than ``limit`` bytes."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"would be larger than {limit} bytes once filled in")
        self.limit = limit


class _Budget:
    """Bytes of argument text a rendering may still put in."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.left = limit

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise TemplateTooLarge(self.limit)


def render(value: Any, arguments: dict[str, Any], limit: int | None = None) -> Any:
    """``value`` with every placeholder replaced from ``arguments``; ``TemplateTooLarge``
    when that would put in more than ``limit`` bytes (default: the size limit)."""
    return _render(value, arguments, _Budget(max_message_bytes() if limit is None else limit))


def _render(value: Any, arguments: dict[str, Any], budget: _Budget) -> Any:
    if isinstance(value, str):
        return _string(value, arguments, budget) if "{{" in value else value
    if isinstance(value, dict):
        return {k: _render(v, arguments, budget) for k, v in value.items()}
    if isinstance(value, list):
        return [_render(v, arguments, budget) for v in value]
    return value


def references(value: Any) -> Iterator[tuple[str, ...]]:
    """The argument paths ``value``'s placeholders name (``()`` for ``{{arguments}}``)."""
    if isinstance(value, str):
        for match in PLACEHOLDER.finditer(value):
            yield _path(match)
    elif isinstance(value, dict):
        for v in value.values():
            yield from references(v)
    elif isinstance(value, list):
        for v in value:
            yield from references(v)


def _path(match: re.Match[str]) -> tuple[str, ...]:
    return tuple(match.group(1).split(".")[1:])


def _lookup(arguments: dict[str, Any], path: tuple[str, ...]) -> Any:
    found: Any = arguments
    for part in path:
        if not isinstance(found, dict) or part not in found:
            return _MISSING
        found = found[part]
    return found


def _text(value: Any) -> str:
    if value is _MISSING:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _string(text: str, arguments: dict[str, Any], budget: _Budget) -> Any:
    whole = PLACEHOLDER.fullmatch(text)
    if whole is not None:
        found = _lookup(arguments, _path(whole))
        if found is _MISSING:
            return ""
        budget.spend(len(_text(found)))  # written out once per place it appears
        return found

    def fill(match: re.Match[str]) -> str:
        filled = _text(_lookup(arguments, _path(match)))
        budget.spend(len(filled))
        return filled

    return PLACEHOLDER.sub(fill, text)
