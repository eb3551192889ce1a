"""A fixed string that satisfies a JSON Schema ``pattern``, for a typed sentinel.

Where a secret sits under a property whose schema gives a ``pattern``
(``"^ak_[0-9a-f]{16}$"``), the redacted value must still match it, or a client that
validates (the official SDKs do) rejects the replay. The example is *built* from the
pattern's parse tree, not searched for: each literal kept, each class's first member
(``0`` for ``[0-9a-f]``), each repeat its least count, each alternation its first
branch. So ``^ak_[0-9a-f]{16}$`` gives ``ak_0000000000000000``: obviously fake, and
nothing about the secret in it (``cassette.core.redaction.schemas`` then writes the placeholder's
number over its last characters when the pattern still matches: ``ak_0000000000000003``).
The pattern is only parsed (bounded by its length) and the example checked against it
once; a pattern this cannot satisfy gives ``None`` and the caller falls back to its own
sentinel.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Final

__all__ = ["pattern_allows", "pattern_example"]

_MAX_PATTERN: Final = 1000  # longer patterns are not worth building an example for
_MAX_EXAMPLE: Final = 4096
_CANDIDATES: Final = "0aA_- .:/"


@lru_cache(maxsize=256)
def pattern_example(pattern: str, least: int = 0) -> str | None:
    """A short string ``pattern`` matches (JSON Schema: anywhere in it), or ``None``;
    with ``least``, each open repeat is stretched to that count (for a ``minLength``)."""
    if len(pattern) > _MAX_PATTERN or least > _MAX_EXAMPLE:
        return None
    try:
        from re import _parser  # type: ignore[attr-defined]

        tree = _parser.parse(pattern)
        example = _build(list(tree), {}, least)
        compiled = re.compile(pattern)
    except (re.error, _Unsupported, RecursionError, OverflowError):
        return None
    if len(example) > _MAX_EXAMPLE or compiled.search(example) is None:
        return None
    return example


def pattern_allows(pattern: str, value: str) -> bool:
    """Whether ``pattern`` matches ``value`` (a placeholder: short, ours)."""
    if len(pattern) > _MAX_PATTERN:
        return False
    try:
        return re.search(pattern, value) is not None
    except (re.error, RecursionError, OverflowError):
        return False


class _Unsupported(Exception):
    """A construct the builder does not follow."""


def _build(items: list[tuple[Any, Any]], groups: dict[int, str], stretch: int) -> str:
    out: list[str] = []
    for op, arg in items:
        out.append(_item(str(op), arg, groups, stretch))
        if sum(len(p) for p in out) > _MAX_EXAMPLE:
            raise _Unsupported
    return "".join(out)


def _item(op: str, arg: Any, groups: dict[int, str], stretch: int) -> str:  # noqa: PLR0911 (one per op)
    if op == "LITERAL":
        return chr(arg)
    if op == "NOT_LITERAL":
        return next(c for c in _CANDIDATES if ord(c) != arg)
    if op == "ANY":
        return "0"
    if op == "IN":
        return _member(arg)
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        least, most, sub = arg
        count: int = max(int(least), min(int(most), stretch))
        return _build(list(sub), groups, stretch) * count
    if op == "SUBPATTERN":
        group, _, _, sub = arg
        text = _build(list(sub), groups, stretch)
        if group is not None:
            groups[group] = text
        return text
    if op == "ATOMIC_GROUP":
        return _build(list(arg), groups, stretch)
    if op == "BRANCH":
        return _build(list(arg[1][0]), groups, stretch)
    if op == "GROUPREF":
        return str(groups.get(arg, ""))
    if op in ("AT", "ASSERT", "ASSERT_NOT"):
        return ""  # anchors; look-arounds are checked by the final match
    raise _Unsupported(op)


def _member(items: list[tuple[Any, Any]]) -> str:
    """The first character a character class accepts."""
    if items and str(items[0][0]) == "NEGATE":
        refused = "".join(_member([item]) for item in items[1:] if str(item[0]) != "CATEGORY")
        for candidate in _CANDIDATES:
            if candidate not in refused:
                return candidate
        raise _Unsupported("NEGATE")
    op, arg = items[0]
    op = str(op)
    if op == "LITERAL":
        return chr(arg)
    if op == "RANGE":
        return chr(arg[0])
    if op == "CATEGORY":
        name = str(arg)
        if "DIGIT" in name and "NOT" not in name:
            return "0"
        if "SPACE" in name and "NOT" not in name:
            return " "
        return "a" if "NOT" not in name else "-"
    raise _Unsupported(op)
