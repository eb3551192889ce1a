"""One detector for recording, ``lint``, ``redact --scan`` and ``redact -o``.

A cassette recorded with redaction off, or by an older version with fewer rules, is read
the way a recording would have redacted it: through one ``RedactionSession`` of the
built-in rules. Two passes over the cassette: the first only *learns* (every secret it
finds becomes a known value, as in a recording), the second redacts with everything
learned, so a secret the session met anywhere is found everywhere, earlier lines too.
Where the second pass changes something is a finding; its output is ``redact -o``'s.

Typed sentinels an event lists in ``redacted`` (a number under ``token``) are already
redacted and are not reported. What the rules leave is read once more for *suspects*,
random-looking tokens no rule claimed (``cassette.tools._suspects``), so a scan never
calls a file clean that holds a credential in a form no rule knows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Final

import attrs

from cassette.core.redaction.redacted import placeholder_pattern
from cassette.core.redaction.redactor import RedactionSession, Redactor
from cassette.core.redaction.schemas import SchemaBook
from cassette.core.replay.wildcards import mask_like
from cassette.core.wire.meta import STREAM
from cassette.core.wire.model import Event, MessageEvent, RawEvent, StderrEvent
from cassette.core.words.jsondiff import pointer
from cassette.store.storage import Cassette
from cassette.tools._common import Finding

__all__ = ["Cleaned", "clean", "secret_findings", "suspect_findings"]

_RULE: Final = re.compile(r"\[REDACTED:([a-z0-9-]+):")
_EMAIL: Final = re.compile(r"redacted-[0-9]+@example\.invalid")


@attrs.frozen
class Cleaned:
    """A cassette as the built-in rules redact it, where that changed something, and how
    many values it replaced (each placeholder written, each typed sentinel)."""

    target: dict[str, Any]
    events: tuple[Event, ...]
    findings: list[Finding]
    replaced: int = 0


def _session(tape: Cassette, redactor: Redactor | None = None) -> RedactionSession:
    """The one gate's scanning policy (built-in and project rules, the header's paths),
    or the caller's."""
    from cassette.store.gate import scan_policy

    return (redactor or scan_policy(tape.header.redaction)).session()


def _target(session: RedactionSession, target: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in dict(target).items():
        if key == "command" and isinstance(value, list):
            out[key] = session.argv([str(v) for v in value])
        elif key == "url" and isinstance(value, str):
            out[key] = session.text(value)
        else:
            out[key] = value
    return out


def _event(session: RedactionSession, book: SchemaBook, event: Event) -> Event:
    if isinstance(event, MessageEvent):
        stream = event.meta.get(STREAM) if isinstance(event.meta, dict) else None
        message, found = session.message(
            event.message, book.schemas(event.dir, event.message, stream)
        )
        kept = tuple(event.redacted or ())
        message = mask_like(event.message, message, kept)  # sentinels already in place
        pointers = tuple(dict.fromkeys((*kept, *found))) or None
        return attrs.evolve(event, message=message, redacted=pointers)
    if isinstance(event, RawEvent) and event.text is not None:
        return attrs.evolve(event, text=session.line(f"raw-{event.dir}", event.text))
    if isinstance(event, StderrEvent):
        return attrs.evolve(event, text=session.line("stderr", event.text))
    return event


def clean(tape: Cassette, redactor: Redactor | None = None) -> Cleaned:
    """Redact a cassette with the built-in rules (see the module docstring)."""
    session = _session(tape, redactor)
    for _ in range(2):  # learn, then redact with all that was learned
        session.restart_lines()
        target = _target(session, tape.header.target)
        book = SchemaBook()
        events = tuple(_event(session, book, e) for e in tape.events)
    changed = list(_changes(tape.header.target, target, ()))
    findings = [
        Finding(1, "secret", f"unredacted secret ({_rules(after)}) in header target {where}")
        for where, _, after in changed
    ]
    findings += _written_patterns(tape.header.redaction)
    replaced = sum(_replaced(before, after) for _, before, after in changed)
    for old, new in zip(tape.events, events, strict=True):
        if isinstance(old, MessageEvent) and isinstance(new, MessageEvent):
            changes = list(_changes(old.message, new.message, ()))
            where = "message "
        elif isinstance(old, RawEvent | StderrEvent) and isinstance(new, RawEvent | StderrEvent):
            changes = list(_changes(old.text, new.text, ()))
            where = f"{old.kind} text"
        else:
            continue
        findings += [
            Finding(old.seq + 1, "secret", f"unredacted secret ({_rules(after)}) in {where}{path}")
            for path, _, after in changes
        ]
        replaced += sum(_replaced(before, after) for _, before, after in changes)
    return Cleaned(target, events, findings, replaced)


def _written_patterns(info: Any) -> list[Finding]:
    """A value an older version wrote into the header as a redaction pattern (with its
    digest): a secret in the clear, which ``redact -o`` drops."""
    if not isinstance(info, dict):
        return []
    from cassette.core.redaction.literal_patterns import without_literals

    values = without_literals(info)[1]
    return [
        Finding(
            1,
            "secret",
            "unredacted secret (a value given as a redaction pattern) in header "
            "/redaction/patterns",
        )
        for _ in values
    ]


def _changes(old: Any, new: Any, at: tuple[str | int, ...]) -> Iterator[tuple[str, Any, Any]]:
    """Where ``new`` differs from ``old``: (JSON Pointer, old value, new value)."""
    if old == new:
        return
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            yield from _changes(old[key], new.get(key), (*at, str(key)))
    elif isinstance(old, list) and isinstance(new, list):
        if at and at[-1] == "command" and len(at) == 1:
            yield pointer(at), " ".join(map(str, old)), " ".join(map(str, new))
            return
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            yield from _changes(a, b, (*at, index))
    else:
        yield pointer(at), old, new


def _replaced(old: Any, new: Any) -> int:
    """How many values a change replaced: the placeholders ``new`` has more than ``old``
    (a text may hold several secrets), and at least one (a typed sentinel)."""
    if not isinstance(new, str):
        return 1
    found = placeholder_pattern()
    before = len(found.findall(old)) if isinstance(old, str) else 0
    return max(len(found.findall(new)) - before, 1)


def _rules(value: Any) -> str:
    text = value if isinstance(value, str) else str(value)
    found = set(_RULE.findall(text))
    found |= {"email"} if _EMAIL.search(text) else set()  # the personal-data rules
    found |= {"phone"} if "+1555010" in text else set()
    return ",".join(sorted(found)) or "key"


def secret_findings(tape: Cassette, *, suspected: bool = True) -> list[Finding]:
    """Secrets the recorder's rules would have removed, wherever they are, and (unless
    ``suspected`` is false) the suspects no rule claimed that no one has reviewed
    (``cassette.tools._suspects``)."""
    cleaned = clean(tape)
    if not suspected:
        return cleaned.findings
    return [*cleaned.findings, *suspect_findings(tape, cleaned)]


def suspect_findings(tape: Cassette, cleaned: Cleaned | None = None) -> list[Finding]:
    """Random-looking tokens left after the rules, less those ``[tool.cassette.redact]
    reviewed`` lists (the pyproject.toml nearest the working directory). The list is
    checked on every scan, suspects or none: a malformed entry found only once a suspect
    turns up would pass every clean scan in CI and fail the first one that needs it."""
    import os

    from cassette.store.config import find_pyproject, load_settings
    from cassette.tools._suspects import reviewed_entries, suspects, unreviewed

    project = find_pyproject()
    where = f"{project}: [tool.cassette.redact]" if project else "[tool.cassette.redact]"
    reviewed = reviewed_entries(load_settings(), where)
    cleaned = cleaned or clean(tape)
    found = suspects(cleaned.target, cleaned.events)
    if not found:
        return []
    path = tape.source or ""
    if project is not None and path:
        relative = os.path.relpath(os.path.abspath(path), project.parent)
        path = path if relative.startswith("..") else relative
    return [s.finding() for s in unreviewed(found, reviewed, path)]
