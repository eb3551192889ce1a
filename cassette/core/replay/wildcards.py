"""Redacted positions of a recording match any live value.

Theory of operation
-------------------
A recorded request may hold placeholders (``[REDACTED:key:3]``, an e-mail address's
``redacted-1@example.invalid``) where the live request holds a real secret, and not the
same one: a CI token is not the developer's token. A placeholder says nothing of the
value it replaced, so a replay cannot tell whether a live value is "the same"; instead,
every redacted position is a wildcard. ``mask_like(recorded, live)`` returns the live
value with each position that a wildcard of the recording matches replaced by the
recorded value; the result then compares, fingerprints and diffs like any recording.

* a string that is a placeholder matches any value (older cassettes turned numbers into
  placeholder strings);
* a string that holds placeholders among other text is a template: each placeholder
  stands for one or more characters, the text around it must be equal;
* a position listed in the event's ``redacted`` pointers (a typed sentinel: a number,
  an enum member) matches any value.

Templates are matched without regular expressions (literal pieces found left to right,
which is exact for patterns whose only wildcard is "one or more of anything"), so a
cassette's text can never make matching slow.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from cassette.core.redaction.redacted import has_placeholder, is_placeholder, placeholder_pattern

__all__ = ["has_wildcards", "mask_like", "template_matches"]


def has_wildcards(value: Any, pointers: Iterable[str] = ()) -> bool:
    """Whether a recorded value holds any redacted position."""
    if any(True for _ in pointers):
        return True
    if isinstance(value, str):
        return has_placeholder(value)
    if isinstance(value, dict):
        return any(has_wildcards(v) for v in value.values())
    if isinstance(value, list):
        return any(has_wildcards(v) for v in value)
    return False


def template_matches(template: str, text: str) -> bool:
    """Whether ``text`` is ``template`` with each placeholder standing for 1+ characters."""
    pieces = placeholder_pattern().split(template)
    first, last = pieces[0], pieces[-1]
    if len(text) < len(first) + len(last) + len(pieces) - 1:
        return False
    if not text.startswith(first) or not text.endswith(last):
        return False
    pos = len(first)
    end = len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, pos + 1, end - 1) if piece else pos + 1
        if found == -1:
            return False
        pos = found + len(piece)
    return pos < end


def mask_like(recorded: Any, live: Any, pointers: Iterable[str] = ()) -> Any:
    """``live`` with every position a wildcard of ``recorded`` matches taken from
    ``recorded`` (see the module docstring); the rest of ``live`` as it is."""
    out = _mask(recorded, live)
    for pointer in pointers:
        out = _take_at(recorded, out, _parts(pointer))
    return out


def _mask(recorded: Any, live: Any) -> Any:
    if isinstance(recorded, str):
        return recorded if _string_matches(recorded, live) else live
    if isinstance(recorded, dict) and isinstance(live, dict):
        return {k: _mask(recorded[k], v) if k in recorded else v for k, v in live.items()}
    if isinstance(recorded, list) and isinstance(live, list):
        return [_mask(r, v) for r, v in zip(recorded, live, strict=False)] + live[len(recorded) :]
    return live


def _string_matches(recorded: str, live: Any) -> bool:
    """Whether a recorded string's wildcards match ``live`` (never for one with none)."""
    if recorded == live or not has_placeholder(recorded):
        return False
    if is_placeholder(recorded):
        return True
    return isinstance(live, str) and template_matches(recorded, live)


def _parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _take_at(recorded: Any, live: Any, parts: list[str]) -> Any:
    if not parts:
        return recorded
    head, rest = parts[0], parts[1:]
    if isinstance(recorded, dict) and isinstance(live, dict) and head in recorded and head in live:
        return {**live, head: _take_at(recorded[head], live[head], rest)}
    if isinstance(recorded, list) and isinstance(live, list) and head.isdigit():
        index = int(head)
        if index < len(recorded) and index < len(live):
            copy = list(live)
            copy[index] = _take_at(recorded[index], live[index], rest)
            return copy
    return live
