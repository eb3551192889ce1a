"""Structural differences between two JSON values, as RFC 6901 JSON Pointer paths.

Used wherever we must say *exactly* what diverged: a replay miss names the argument path
that differs from the closest recording, and later tools (verify, diff) reuse the same
notion. JSON, not Python, equality: ``1``, ``1.0`` and ``true`` are three different values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

import attrs

__all__ = ["MISSING", "Difference", "differences", "pointer", "same_json"]


class _Missing:
    """Marks a side where the path does not exist."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "(absent)"


MISSING: Final = _Missing()


@attrs.frozen(slots=True)
class Difference:
    """One path where the two values disagree."""

    path: str
    recorded: Any
    received: Any


def pointer(parts: tuple[str | int, ...]) -> str:
    """Render path parts as a JSON Pointer ("" is the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def same_json(a: Any, b: Any) -> bool:
    """Equality as JSON sees it (Python's ``True == 1`` is not JSON's)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _walk(a: Any, b: Any, parts: tuple[str | int, ...]) -> Iterator[Difference]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            yield from _walk(a.get(key, MISSING), b.get(key, MISSING), (*parts, key))
    elif isinstance(a, list) and isinstance(b, list):
        for index in range(max(len(a), len(b))):
            left = a[index] if index < len(a) else MISSING
            right = b[index] if index < len(b) else MISSING
            yield from _walk(left, right, (*parts, index))
    elif a is MISSING or b is MISSING or not same_json(a, b):
        yield Difference(pointer(parts), a, b)


def differences(recorded: Any, received: Any, limit: int | None = None) -> list[Difference]:
    """Every path (or the first ``limit``) where ``received`` differs from ``recorded``."""
    found: list[Difference] = []
    for diff in _walk(recorded, received, ()):
        found.append(diff)
        if limit is not None and len(found) >= limit:
            break
    return found
