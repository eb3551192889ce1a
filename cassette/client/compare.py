"""Is a live answer the recorded one? Normalization, volatile fields, JSON inside text.

Two answers are compared after the same normalization on both sides:

* keys that say nothing about what a server answered are dropped: ``_meta`` (request and
  trace ids, progress tokens), the cache hints of modern list results (``ttlMs``,
  ``cacheScope``), a 2026-07-28 ``requestState`` (opaque by definition), and every key the
  user names (``--ignore-key``), at any depth;
* ISO timestamps and UUIDs inside strings are masked;
* a ``text`` member whose string is a JSON object or array (a tool that answers JSON as
  text, a JSON resource) is compared as JSON: a reordered key is no change, and a changed
  field is reported at its path *inside* the text, written after a ``#``:
  ``/result/content/0/text#/items/0/price``. Ignored keys and masks apply inside it too.

Then every differing JSON Pointer path is listed, except those at or under a pointer the
user ignores (``--ignore``; ``/result/content/0/text`` also covers what is inside it).

Pure: values in, values out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Final

import attrs

from cassette.core.jsondiff import MISSING, differences
from cassette.core.matching import fingerprint

__all__ = [
    "VOLATILE_KEYS",
    "Ignores",
    "Paths",
    "classify",
    "label",
    "normalize",
]

_ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")

#: Keys whose values say nothing about what a server answered: ``_meta`` (request and
#: trace ids, progress tokens), the cache hints of modern list results (SEP-2549), and the
#: opaque ``requestState`` a 2026-07-28 server hands back with ``input_required`` (often
#: sealed with a per-process key, so it differs on every run by design).
VOLATILE_KEYS: Final = frozenset({"_meta", "ttlMs", "cacheScope", "requestState"})

# Stands for "the JSON inside this text" in a path while diffing; rendered as "#". A NUL
# cannot start a key a server sends in practice, and never survives into a report.
_JSON_TEXT: Final = "\x00json"
_JSON_SEGMENT: Final = "/" + _JSON_TEXT
_TEXT_KEY: Final = "text"
_MAX_JSON_TEXT: Final = 16 * 1024 * 1024  # past this a text is compared as a string

#: (path, recorded value, live value) for each difference; ``MISSING`` marks an absent side.
Paths = tuple[tuple[str, Any, Any], ...]


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
    if head not in ("{", "[") or len(value) > _MAX_JSON_TEXT:
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
                return {_JSON_TEXT: _normalize(parsed, dropped, "", json_text)}
        return _UUID.sub("<uuid>", _ISO_TIME.sub("<time>", value))
    return value


def _shown(value: Any) -> Any:
    """A normalized value as a person should see it: parsed JSON text back as text."""
    if isinstance(value, dict):
        if set(value) == {_JSON_TEXT}:
            return json.dumps(_shown(value[_JSON_TEXT]), separators=(",", ":"), sort_keys=True)
        return {k: _shown(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shown(v) for v in value]
    return value


def _path(path: str) -> str:
    return path.replace(_JSON_SEGMENT, "#")


def differing_paths(
    recorded: Any, live: Any, ignores: Ignores = Ignores(), prefix: str = ""
) -> Paths:
    """Every path where ``live`` differs from ``recorded`` after normalization, minus the
    ignored ones; ``prefix`` is put before each path (``/result``)."""
    a = normalize(recorded, ignores.keys, json_text=True)
    b = normalize(live, ignores.keys, json_text=True)
    out = []
    for d in differences(a, b):
        path = prefix + _path(d.path)
        if not ignores.covers(path):
            out.append((path, _shown(d.recorded), _shown(d.received)))
    return tuple(out)


def classify(
    recorded: dict[str, Any], live: dict[str, Any] | None, ignores: Ignores = Ignores()
) -> tuple[str, Paths, str]:
    """Compare one recorded answer with the live one (``None``: no live answer): the
    status (``MATCH``, ``CHANGED``, ``ERROR-SHAPE-CHANGED``, ``MISSING``), the differing
    paths and a detail for a person."""
    if live is None:
        return "MISSING", (), "no answer from the live server"
    live_error, rec_error = live.get("error"), recorded.get("error")
    if isinstance(live_error, dict) and live_error.get("code") == -32601 and rec_error is None:
        return "MISSING", (), f"live server: {live_error.get('message', 'method not found')}"
    if (rec_error is None) != (live_error is None):
        was = "error" if rec_error is not None else "result"
        now = "error" if live_error is not None else "result"
        return "ERROR-SHAPE-CHANGED", (), f"recorded {was}, live {now}"
    if rec_error is not None:
        rec_code = rec_error.get("code") if isinstance(rec_error, dict) else None
        live_code = live_error.get("code") if isinstance(live_error, dict) else None
        if rec_code != live_code:
            return "ERROR-SHAPE-CHANGED", (), f"error code {rec_code} became {live_code}"
    key = "error" if rec_error is not None else "result"
    paths = differing_paths(recorded.get(key), live.get(key), ignores, f"/{key}")
    return ("CHANGED" if paths else "MATCH"), paths, ""


def label(message: dict[str, Any]) -> str:
    """A request as a person reads it: method, tool name and compact arguments."""
    method, name, args = fingerprint(message)
    text = f"{method} {name}".rstrip()
    if args and args not in ("{}", "null"):
        text += " " + (args if len(args) <= 80 else args[:77] + "...")
    return text
