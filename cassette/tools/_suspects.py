"""Suspects: random-looking tokens no rule claimed, so that a scan never calls a leaking
file clean.

Theory of operation
-------------------
The rules (``cassette.core.redaction.secret_rules``) find secrets by where they stand and by their
shape; a credential in a form no rule knows is written as it is, and a scan that only
asks the rules would call that file clean. So after the rules have redacted a cassette
(``cassette.tools._secrets.clean``), what is left is read once more for *suspects*: a
token that looks random (long, mixing letters and digits at random rather than in words,
not a UUID), in a place a credential could be, which is anywhere but where an
identifier stands (a member or a word before it naming an id, a hash, a commit, an etag),
a path or host name, or base64 bytes of an image.

A suspect is reported by where it is (``file:line``, a JSON Pointer into that line, the
rule ``entropy``), never by its value, and fails the scan until a person reviews it:
``[tool.cassette.redact] reviewed`` lists the reviewed ones by pointer and rule (a ``*``
stands for one step of the pointer; ``cassette``, a glob, narrows an entry to some
files). Never by a digest of the value: a digest would let anyone holding the project
confirm a guess of it.
"""

from __future__ import annotations

import fnmatch
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import attrs

from cassette.core.redaction.redacted import PLACEHOLDER_PATTERN
from cassette.core.wire.model import Event, MessageEvent, RawEvent, StderrEvent
from cassette.core.words.jsondiff import pointer
from cassette.errors import UsageError
from cassette.tools._common import Finding

__all__ = ["RULE", "Reviewed", "Suspect", "reviewed_entries", "suspects"]

RULE: Final = "entropy"

#: A run that may be a token: letters, digits and the signs tokens hold.
_TOKEN: Final = re.compile(r"[A-Za-z0-9_\-+/=.~]{16,}")
_UUID: Final = re.compile(
    r"[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}"
    # without its dashes (uuid4().hex): its version digit and variant say so
    r"|[0-9a-f]{12}[1-8][0-9a-f]{3}[89ab][0-9a-f]{15}"
)
_HEX: Final = re.compile(r"[0-9a-fA-F]+")
_SHORTEST: Final = 20  # a token of letters and digits
_SHORTEST_HEX: Final = 32  # a hex token (shorter ones are abbreviated hashes)
#: Bits per character of a token drawn at random from letters and digits: 20 characters
#: of base62 give about 4.1; words and identifiers stay near 3.5.
_ENTROPY: Final = 3.6
_ENTROPY_HEX: Final = 3.0
#: Changes between lower case, upper case and digits, per character (a capital starting
#: a word not counted): a random base62 token changes at about half of its characters, a
#: camelCase name at one in six.
_CHANGES: Final = 0.25
#: Words that say a value is an identifier, not a credential (a member name, or the
#: word just before a token in text).
_ID_WORDS: Final = frozenset(
    {"id", "ids", "uuid", "guid", "sha", "sha1", "sha256", "sha512", "md5", "hash", "digest"}
    | {"etag", "commit", "revision", "rev", "checksum", "version", "cursor", "trace", "span"}
    | {"parent", "tree", "object", "blob", "ref", "integrity", "fingerprint", "request"}
    | {"state"}  # an opaque state a server hands back (requestState), not a credential
)
#: JSON Schemas: their members are property names and URLs, never credentials.
_SCHEMA_KEYS: Final = frozenset({"inputSchema", "outputSchema", "requestedSchema"})
_WORD_BEFORE: Final = re.compile(r"([A-Za-z][A-Za-z0-9]*)[^A-Za-z0-9\n]{0,4}$")
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|[-_\s.]+")


@attrs.frozen
class Suspect:
    """A random-looking token no rule claimed: where it is, never what."""

    line: int
    pointer: str
    length: int

    def finding(self) -> Finding:
        return Finding(
            self.line,
            "suspect",
            f"suspect ({RULE}): a random-looking {self.length}-character token at "
            f"{self.pointer or '/'}, no rule claimed it; redact it (--redact-path, "
            "--redact-pattern) or, if it is no secret, list it in [tool.cassette.redact] "
            f'reviewed: {{pointer = "{self.pointer}", rule = "{RULE}"}}',
        )


@attrs.frozen
class Reviewed:
    """A suspect a person reviewed: its pointer (``*`` for one step), its rule, and the
    cassettes it holds for (a glob; ``None``: every cassette)."""

    pointer: str
    rule: str = RULE
    cassette: str | None = None

    def covers(self, suspect: Suspect, where: str) -> bool:
        if self.rule != RULE or not _pointer_matches(self.pointer, suspect.pointer):
            return False
        return self.cassette is None or fnmatch.fnmatch(where, self.cassette)


def _pointer_matches(pattern: str, actual: str) -> bool:
    want, have = pattern.split("/"), actual.split("/")
    return len(want) == len(have) and all(w in ("*", h) for w, h in zip(want, have, strict=True))


def reviewed_entries(settings: Any, where: str = "[tool.cassette.redact]") -> list[Reviewed]:
    """The reviewed suspects of ``[tool.cassette.redact] reviewed`` (``settings`` is the
    ``[tool.cassette]`` table); a malformed entry is one ``UsageError`` line."""
    section = settings.get("redact") if isinstance(settings, dict) else None
    entries = section.get("reviewed") if isinstance(section, dict) else None
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise UsageError(f"{where} reviewed must be a list of {{pointer, rule}} tables")
    out = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("pointer"), str):
            raise UsageError(f"{where} reviewed[{index}] must be a table with a pointer")
        unknown = set(entry) - {"pointer", "rule", "cassette"}
        rule, glob = entry.get("rule", RULE), entry.get("cassette")
        if unknown or not isinstance(rule, str) or not isinstance(glob, str | None):
            raise UsageError(
                f"{where} reviewed[{index}] takes pointer, rule and cassette (strings) only"
            )
        if entry["pointer"] and not entry["pointer"].startswith("/"):
            raise UsageError(f"{where} reviewed[{index}] pointer is not a JSON Pointer")
        out.append(Reviewed(entry["pointer"], rule, glob))
    return out


def suspects(target: Any, events: Sequence[Event]) -> list[Suspect]:
    """The suspects in a cassette the rules have redacted (its header's target and its
    events, as ``clean`` returns them), in line order."""
    out = [Suspect(1, p, n) for p, n in _in_value(target, ("target",), None)]
    for event in events:
        line = event.seq + 1
        if isinstance(event, MessageEvent):
            found = _in_value(event.message, ("message",), None)
        elif isinstance(event, RawEvent | StderrEvent) and event.text is not None:
            found = _in_text(event.text, ("text",))
        else:
            continue
        out += [Suspect(line, p, n) for p, n in found]
    return out


def unreviewed(found: list[Suspect], reviewed: list[Reviewed], path: str) -> list[Suspect]:
    """``found`` less the suspects ``reviewed`` covers for the cassette at ``path``."""
    where = Path(path).as_posix()
    return [s for s in found if not any(r.covers(s, where) for r in reviewed)]


def _in_value(value: Any, at: tuple[str | int, ...], name: str | None) -> Iterator[tuple[str, int]]:
    if isinstance(value, str):
        if name is not None and _names_id(name):
            return
        yield from _in_text(value, at)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _in_value(item, (*at, index), name)
    elif isinstance(value, dict):
        binary = value.get("type") in ("image", "audio")
        for key, item in value.items():
            if (binary and key == "data") or key == "blob" or key in _SCHEMA_KEYS:
                continue  # base64 bytes of an image, audio or a blob; a schema
            yield from _in_value(item, (*at, str(key)), str(key))


def _names_id(name: str) -> bool:
    words = [w.lower() for w in _CAMEL.split(name) if w]
    return bool(words) and (words[-1] in _ID_WORDS or words[-1].endswith(("uid", "uuid")))


def _in_text(text: str, at: tuple[str | int, ...]) -> Iterator[tuple[str, int]]:
    if len(text) < _SHORTEST or ("base64," in text and text.startswith("data:")):
        return
    held = [m.span() for m in PLACEHOLDER_PATTERN.finditer(text)] if "REDACTED" in text else []
    for match in _TOKEN.finditer(text):
        if any(s < match.end() and match.start() < e for s, e in held):
            continue
        before = _WORD_BEFORE.search(text[max(0, match.start() - 64) : match.start()])
        if before is not None and _names_id(before.group(1)):
            continue
        for piece in _pieces(match.group()):
            if _random(piece):
                yield pointer(at), len(piece)
                return  # one suspect per string: the pointer is what a person reviews


def _pieces(token: str) -> list[str]:
    """A token's parts that could each be a credential: a path or a host name is cut at
    its ``/`` and ``.``; a UUID is no part."""
    absolute = token.startswith("/")  # before the strip below takes that slash away
    token = token.strip(".=/-")
    if _UUID.fullmatch(token):
        return []
    if "." in token or "//" in token or absolute:  # a host, a path, a URL
        return [p for p in re.split(r"[/.=]", token) if not _UUID.fullmatch(p)]
    name, eq, value = token.partition("=")
    if eq and value.strip("="):  # NAME=VALUE (base64 holds "/" and ends in "=")
        return [] if _names_id(name) or _UUID.fullmatch(value) else [name, value]
    return [token]


def _random(token: str, *, cut: bool = True) -> bool:
    """Whether ``token`` looks drawn at random (see the module docstring)."""
    if cut:
        token = token.strip("=-_~")
    if _HEX.fullmatch(token):  # 40 and 64: a SHA-1 or SHA-256 (a commit id, a digest)
        size = len(token)
        return size >= _SHORTEST_HEX and size not in (40, 64) and _entropy(token) >= _ENTROPY_HEX
    if len(token) < _SHORTEST or not any(c.isdigit() for c in token):
        return False
    if "-" in token and all(len(part) < 8 for part in token.split("-")):
        return False  # a hyphenated name or a date (PuTTY-User-Key-File-3, 2026-01-01)
    if not any(c.isalpha() for c in token):
        return False
    return _entropy(token) >= _ENTROPY and _changes(token) >= _CHANGES


def _entropy(token: str) -> float:
    size = len(token)
    return -sum(n / size * math.log2(n / size) for n in Counter(token).values())


def _class(char: str) -> int:
    return 0 if char.islower() else 1 if char.isupper() else 2 if char.isdigit() else 3


def _changes(token: str) -> float:
    # an upper-case letter starting a lower-case word is one change, not two (camelCase)
    classes = [_class(c) for c in token]
    pairs = itertools.pairwise(classes)
    return sum(a != b and (a, b) != (1, 0) for a, b in pairs) / len(token)
