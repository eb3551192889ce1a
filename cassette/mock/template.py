"""Placeholders in a mock's answers: ``{{arguments.NAME}}`` becomes the call's argument.

A string that is exactly one placeholder takes the argument's JSON value (a number stays a
number, an object an object); a placeholder inside a longer string is replaced by the
value's text (a string as is, anything else as compact JSON). ``{{arguments}}`` is the
whole arguments object; ``{{arguments.a.b}}`` reaches into an object argument. An argument
the call did not pass renders as the empty string. Spaces inside the braces are allowed.
Only strings are rendered, never object keys; a value without ``{{`` is returned as is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Final

__all__ = ["PLACEHOLDER", "references", "render"]

PLACEHOLDER: Final = re.compile(r"\{\{\s*arguments((?:\.[^\s.{}]+)*)\s*\}\}")
_MISSING: Final = object()


def render(value: Any, arguments: dict[str, Any]) -> Any:
    """``value`` with every placeholder replaced from ``arguments``."""
    if isinstance(value, str):
        return _string(value, arguments) if "{{" in value else value
    if isinstance(value, dict):
        return {k: render(v, arguments) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, arguments) for v in value]
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


def _string(text: str, arguments: dict[str, Any]) -> Any:
    whole = PLACEHOLDER.fullmatch(text)
    if whole is not None:
        found = _lookup(arguments, _path(whole))
        return "" if found is _MISSING else found
    return PLACEHOLDER.sub(lambda m: _text(_lookup(arguments, _path(m))), text)
