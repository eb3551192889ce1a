"""``cassette diff A B``: what changed between two recordings, for review.

Requests are paired by fingerprint (``cassette.core.replay.matching.fingerprint``, the key a replay
matches on): the k-th request with a given fingerprint in A pairs with the k-th in B, so
reordering alone is no change. Unpaired requests are removed (only in A) or added (only in
B). For each pair, the answers are compared after volatile values (``_meta``, timestamps,
UUIDs) are normalized on both sides, and every differing JSON Pointer path is reported.

A placeholder is compared by its rule only (``cassette.core.redaction.redacted.canonical``):
``[REDACTED:key:1]`` and ``[REDACTED:key:2]``, or an older cassette's random
``[REDACTED:key:3f9a0c1d2e4b]``, at the same place are the same, and so are two typed
sentinels at a position both recordings list as redacted. Which number a secret got is
no change to review; a secret that appears, disappears or changes rule is.
"""

from __future__ import annotations

import argparse
import os
from collections import defaultdict
from typing import Any, Final

import attrs

from cassette.client.compare import VOLATILE_KEYS, label, normalize
from cassette.core.eras.variants import probe_of
from cassette.core.redaction.redacted import canonical
from cassette.core.replay.matching import Fingerprint, fingerprint, show_value
from cassette.core.wire.jsonrpc import pretty
from cassette.core.wire.model import MessageEvent
from cassette.core.words.colour import Rule
from cassette.core.words.jsondiff import MISSING, differences
from cassette.store.storage import Cassette
from cassette.tools._common import Exchange, emit, exchanges

__all__ = [
    "COLOURS",
    "VOLATILE_KEYS",
    "CassetteDiff",
    "Change",
    "diff_cassettes",
    "label",
    "main",
    "normalize",
]


@attrs.frozen(slots=True)
class Change:
    """One request whose answer differs: where, and the paths with both values."""

    request: str
    line_a: int
    line_b: int
    paths: tuple[tuple[str, Any, Any], ...]


@attrs.frozen(slots=True)
class CassetteDiff:
    """Everything that differs between two cassettes (empty: they agree)."""

    header: tuple[tuple[str, Any, Any], ...] = ()
    added: tuple[tuple[str, int], ...] = ()
    removed: tuple[tuple[str, int], ...] = ()
    changed: tuple[Change, ...] = ()

    @property
    def same(self) -> bool:
        return not (self.header or self.added or self.removed or self.changed)

    def as_data(self) -> dict[str, Any]:
        def val(v: Any) -> Any:
            return None if v is MISSING else v

        return {
            "same": self.same,
            "header": [{"field": f, "a": a, "b": b} for f, a, b in self.header],
            "added": [{"request": r, "line": n} for r, n in self.added],
            "removed": [{"request": r, "line": n} for r, n in self.removed],
            "changed": [
                {
                    "request": c.request,
                    "line_a": c.line_a,
                    "line_b": c.line_b,
                    "paths": [
                        {"path": p, "a": val(a), "b": val(b), "absent": _absent(a, b)}
                        for p, a, b in c.paths
                    ],
                }
                for c in self.changed
            ],
        }


def _absent(a: Any, b: Any) -> str | None:
    if a is MISSING:
        return "a"
    if b is MISSING:
        return "b"
    return None


_SENTINEL: Final = "[REDACTED]"


def _canonical(value: Any) -> Any:
    """``value`` with each placeholder reduced to its rule (see the module docstring)."""
    if isinstance(value, str):
        return canonical(value)
    if isinstance(value, list):
        return [_canonical(v) for v in value]
    if isinstance(value, dict):
        return {k: _canonical(v) for k, v in value.items()}
    return value


def _message(event: MessageEvent) -> Any:
    """An event's message as compared: placeholders by rule, typed sentinels alike."""
    message = _canonical(event.message)
    for pointer in event.redacted or ():
        message = _replace_at(message, pointer.split("/")[1:])
    return message


def _replace_at(value: Any, parts: list[str]) -> Any:
    if not parts:
        return _SENTINEL
    key = parts[0].replace("~1", "/").replace("~0", "~")
    if isinstance(value, dict) and key in value:
        return {**value, key: _replace_at(value[key], parts[1:])}
    if isinstance(value, list) and key.isdigit() and int(key) < len(value):
        return [_replace_at(v, parts[1:]) if i == int(key) else v for i, v in enumerate(value)]
    return value


def _answer(pair: Exchange) -> Any:
    if pair.response is None:
        return {"(no answer)": True}
    message = _message(pair.response)
    if "error" in message:
        return {"error": message["error"]}
    return {"result": message.get("result")}


def _client_requests(tape: Cassette) -> dict[Fingerprint, list[Exchange]]:
    """Each recorded client request by fingerprint; the recorder's probes are left out
    (what any client may list is no change of the session to review)."""
    pairs, _ = exchanges([e for e in tape.events if probe_of(e) is None])
    by_fp: dict[Fingerprint, list[Exchange]] = defaultdict(list)
    for pair in pairs:
        if pair.request.dir == "c2s":
            by_fp[fingerprint(_message(pair.request))].append(pair)
    return by_fp


def _ignored(path: str, ignore: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in ignore)


def diff_cassettes(
    a: Cassette | str | os.PathLike[str],
    b: Cassette | str | os.PathLike[str],
    *,
    ignore: tuple[str, ...] | list[str] = (),
) -> CassetteDiff:
    """The semantic difference between cassette ``a`` (old) and ``b`` (new)."""
    old = a if isinstance(a, Cassette) else Cassette.load(a)
    new = b if isinstance(b, Cassette) else Cassette.load(b)
    skip = tuple(ignore)
    header = tuple(
        (name, getattr(old.header, name), getattr(new.header, name))
        for name in ("era", "protocol_version", "transport")
        if getattr(old.header, name) != getattr(new.header, name)
    )
    left, right = _client_requests(old), _client_requests(new)
    added: list[tuple[str, int]] = []
    removed: list[tuple[str, int]] = []
    changed: list[Change] = []
    for fp in sorted(left.keys() | right.keys()):
        olds, news = left.get(fp, []), right.get(fp, [])
        for pa, pb in zip(olds, news, strict=False):
            paths = tuple(
                (d.path, d.recorded, d.received)
                for d in differences(normalize(_answer(pa)), normalize(_answer(pb)))
                if not _ignored(d.path, skip)
            )
            if paths:
                changed.append(
                    Change(label(pa.request.message), pa.request.seq + 1, pb.request.seq + 1, paths)
                )
        removed += [(label(p.request.message), p.request.seq + 1) for p in olds[len(news) :]]
        added += [(label(p.request.message), p.request.seq + 1) for p in news[len(olds) :]]
    return CassetteDiff(
        header,
        tuple(sorted(added, key=lambda x: x[1])),
        tuple(sorted(removed, key=lambda x: x[1])),
        tuple(sorted(changed, key=lambda c: c.line_a)),
    )


def render(a: str, b: str, diff: CassetteDiff, fmt: str) -> str:
    if fmt == "json":
        return pretty({"a": a, "b": b, **diff.as_data()})
    if diff.same:
        return f"{a} and {b}: no semantic differences"
    lines = [f"--- {a}", f"+++ {b}"]
    for name, old, new in diff.header:
        lines.append(f"~ header {name}: {old!r} -> {new!r}")
    for request, line in diff.removed:
        lines.append(f"- {request}  ({a}:{line})")
    for request, line in diff.added:
        lines.append(f"+ {request}  ({b}:{line})")
    for change in diff.changed:
        lines.append(f"~ {change.request}  ({a}:{change.line_a} -> {b}:{change.line_b})")
        for path, old, new in change.paths:
            lines.append(f"    {path or '/'}: {show_value(old)} -> {show_value(new)}")
    lines.append(
        f"{len(diff.removed)} removed, {len(diff.added)} added, {len(diff.changed)} changed"
        + (", header changed" if diff.header else "")
    )
    return "\n".join(lines)


#: how the text report is painted on a terminal (``cassette.core.words.colour``): as a unified
#: diff reads, removed red, added green, changed yellow
COLOURS: Final = (
    Rule.of(r"^(--- .*|\+\+\+ .*)$", "bold"),
    Rule.of(r"^(- .*)$", "red"),
    Rule.of(r"^(\+ .*)$", "green"),
    Rule.of(r"^(~ .*)$", "yellow"),
    Rule.of(r": (no semantic differences)$", "green"),
)


def main(args: argparse.Namespace) -> int:
    result = diff_cassettes(args.old, args.new, ignore=args.ignore)
    colours = COLOURS if args.format == "text" else ()
    emit(render(args.old, args.new, result, args.format), colours, getattr(args, "color", "auto"))
    return 0 if result.same else 1
