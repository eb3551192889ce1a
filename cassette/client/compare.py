"""Is a live answer the recorded one? Normalization, volatile fields, JSON inside text.

Two answers are compared after the same normalization on both sides
(``cassette.core.words.volatile``, the rule a quiet re-recording shares):

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
from typing import Any, Final

from cassette.core.replay.matching import fingerprint
from cassette.core.words.jsondiff import differences
from cassette.core.words.volatile import JSON_TEXT, VOLATILE_KEYS, Ignores, normalize

__all__ = [
    "VOLATILE_KEYS",
    "Ignores",
    "Paths",
    "classify",
    "label",
    "normalize",
]

#: (path, recorded value, live value) for each difference; ``MISSING`` marks an absent side.
Paths = tuple[tuple[str, Any, Any], ...]

# "The JSON inside this text" in a path while diffing; rendered as "#".
_JSON_SEGMENT: Final = "/" + JSON_TEXT


def _shown(value: Any) -> Any:
    """A normalized value as a person should see it: parsed JSON text back as text."""
    if isinstance(value, dict):
        if set(value) == {JSON_TEXT}:
            return json.dumps(_shown(value[JSON_TEXT]), separators=(",", ":"), sort_keys=True)
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
