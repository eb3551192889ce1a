"""What a server's answer says apart from its volatile values: the one rule ``verify``,
``diff`` and a quiet re-recording share.

Two answers say the same when they are equal after the same normalization:

* keys that say nothing about what a server answered are dropped: ``_meta`` (request and
  trace ids, progress tokens), the cache hints of modern list results (``ttlMs``,
  ``cacheScope``), a 2026-07-28 ``requestState`` (opaque by definition), and every key a
  person names (``Ignores.keys``: ``verify --ignore-key``, ``[tool.cassette.verify]
  ignore-keys``), at any depth;
* ISO timestamps and UUIDs inside strings are masked;
* a ``text`` member whose string is a JSON object or array (a tool that answers JSON as
  text) is compared as that JSON, the same rules inside it;
* what sits at or under a JSON Pointer a person names (``Ignores.pointers``, with ``#``
  for the JSON inside a text: ``/result/content/0/text#/generatedAt``) is left out.

``verify`` lists the paths where two answers differ after this (``cassette.client.compare``);
a re-recording with ``keep-volatile`` keeps an answer's old line when the new one is
``steady``-equal to it (``cassette.store.quiet``). Pure: values in, values out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Final

import attrs

from cassette.core.words.jsondiff import MISSING

__all__ = ["JSON_TEXT", "VOLATILE_KEYS", "Ignores", "normalize", "steady"]

_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

#: Keys whose values say nothing about what a server answered: ``_meta`` (request and
#: trace ids, progress tokens), the cache hints of modern list results (SEP-2549), and the
#: opaque ``requestState`` a 2026-07-28 server hands back with ``input_required`` (often
#: sealed with a per-process key, so it differs on every run by design).
VOLATILE_KEYS: Final = frozenset({"_meta", "ttlMs", "cacheScope", "requestState"})

# Stands for "the JSON inside this text" in a path while diffing; rendered as "#". A NUL
# cannot start a key a server sends in practice, and never survives into a report.
JSON_TEXT: Final = "\x00json"
_TEXT_KEY: Final = "text"
_MAXJSON_TEXT: Final = 16 * 1024 * 1024  # past this a text is compared as a string


def _pointers(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def _keys(values: Iterable[str]) -> frozenset[str]:
    return frozenset(values)


@attrs.frozen
class Ignores:
    """What a comparison leaves out: JSON Pointers (with what is under them) and key
    names at any depth."""

    pointers: tuple[str, ...] = attrs.field(default=(), converter=_pointers)
    keys: frozenset[str] = attrs.field(default=frozenset(), converter=_keys)

    def covers(self, path: str) -> bool:
        """Whether a difference at ``path`` is ignored (at or under an ignored pointer)."""
        for pointer in self.pointers:
            base = pointer.rstrip("/")
            if path == pointer or path.startswith((base + "/", base + "#")):
                return True
        return False

    def merged(self, pointers: Iterable[str] = (), keys: Iterable[str] = ()) -> Ignores:
        """These ignores and more (a project's, then a command line's)."""
        return Ignores((*self.pointers, *pointers), self.keys | _keys(keys))


def _json_text(value: str) -> Any:
    """The JSON object or array a text holds, or ``MISSING`` when it holds none."""
    head = value.lstrip()[:1]
    if head not in ("{", "[") or len(value) > _MAXJSON_TEXT:
        return MISSING
    try:
        return json.loads(value)
    except ValueError:
        return MISSING


def normalize(value: Any, keys: frozenset[str] = frozenset(), *, json_text: bool = False) -> Any:
    """A copy with volatile values replaced: ``_meta``, cache hints and ``keys`` dropped,
    timestamps and UUIDs masked; with ``json_text``, JSON inside ``text`` members parsed
    (see the module docstring)."""
    dropped = VOLATILE_KEYS | keys
    return _normalize(value, dropped, "", json_text)


def _normalize(value: Any, dropped: frozenset[str], key: str, json_text: bool) -> Any:
    if isinstance(value, dict):
        return {
            k: _normalize(v, dropped, k, json_text) for k, v in value.items() if k not in dropped
        }
    if isinstance(value, list):
        return [_normalize(v, dropped, "", json_text) for v in value]
    if isinstance(value, str):
        if json_text and key == _TEXT_KEY:
            parsed = _json_text(value)
            if parsed is not MISSING:
                return {JSON_TEXT: _normalize(parsed, dropped, "", json_text)}
        return _UUID.sub("<uuid>", _ISO_TIME.sub("<time>", value))
    return value


def steady(answer: Any, ignores: Ignores) -> Any:
    """``answer`` as the comparison sees it: normalized (``json_text``) and without what
    ``ignores``' pointers cover, so two answers that differ only there are equal."""
    value = normalize(answer, ignores.keys, json_text=True)
    for pointer in ignores.pointers:
        value = _without(value, _steps(pointer))
    return value


def _steps(pointer: str) -> list[str]:
    """A pointer's keys, ``#`` (the JSON inside a text) as ``JSON_TEXT``."""
    steps: list[str] = []
    for index, part in enumerate(pointer.split("#")):
        if index:
            steps.append(JSON_TEXT)
        steps += [s.replace("~1", "/").replace("~0", "~") for s in part.split("/")[1:]]
    return steps


def _without(value: Any, steps: list[str]) -> Any:
    """``value`` with what ``steps`` lead to left out (a copy along the way; nothing when
    they lead nowhere)."""
    if not steps:
        return MISSING
    head, rest = steps[0], steps[1:]
    if isinstance(value, dict) and head in value:
        inner = _without(value[head], rest)
        return {k: v for k, v in value.items() if k != head} | (
            {} if inner is MISSING else {head: inner}
        )
    if isinstance(value, list) and head.isdigit() and int(head) < len(value):
        inner = _without(value[int(head)], rest)
        if inner is MISSING:
            return [*value[: int(head)], "<ignored>", *value[int(head) + 1 :]]
        return [*value[: int(head)], inner, *value[int(head) + 1 :]]
    return value
