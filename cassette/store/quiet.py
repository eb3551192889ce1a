"""Re-recording quietly: a cassette recorded again keeps the lines that did not change.

Theory of operation
-------------------
A recording that replaces a cassette (``record --overwrite``, mode ``all``) is written,
event by event and flushed as it happens, to a hidden sibling (``destination``), so a
crash leaves the old cassette as it was. Only once the new recording succeeded does it
take the cassette's name, and this module decides the bytes it takes it with:

* the two files' events are compared without their ``t`` (the time offset is the one
  member that differs between two recordings of the same messages) and aligned as a
  sequence diff (``difflib``, no junk heuristic);
* an event present in both, in the same place of the alignment, keeps the **old line,
  byte for byte**, its ``t`` included: the old recording timed exactly these messages,
  so its pacing is a true one;
* an event that changed or is new is written from the new recording, timed by its own
  gap after the event before it in the new recording, added to the ``t`` the line before
  it now has, and never later than the next kept line (``t`` never decreases from one
  line to the next);
* the header keeps its old ``started_at`` whenever an old event line is kept (the kept
  offsets count from it); when nothing else in the header changed, the old header line is
  kept whole;
* the server's stderr lines are a stream of their own: when the two recordings hold the
  same stderr lines and the same other events, each in the same order, the old lines are
  kept whole however the two streams interleave (which pipe the recorder reads first is
  a race, not a change).

With ``volatile`` (``record --keep-volatile``, ``keep-volatile = true`` in
``[tool.cassette]``, the pytest plugin's ``keep_volatile``), an answer is compared as
``verify`` compares it (``cassette.core.words.volatile.steady``): one that differs from the old
only in values verify treats as volatile (``_meta``, cache hints, timestamps and UUIDs in
text, JSON inside a text compared as JSON) or that the project ignores
(``[tool.cassette.verify]``) is the same event, and keeps its old line. So a server that
stamps the time into an answer re-records to an unchanged file.

The outcome: the same session recorded again leaves the file byte-identical (it is not
even rewritten), and a changed answer changes that answer's line only. Whatever cannot
be compared (an old file that no longer reads, a new one with a line dropped) falls back
to the plain replacement: the new recording, as written.
"""

from __future__ import annotations

import contextlib
import difflib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

import attrs

from cassette.core.tape.codec import encode_line
from cassette.core.wire.model import Event, Header, MessageEvent, StderrEvent
from cassette.core.words.volatile import Ignores, steady
from cassette.errors import CassetteError
from cassette.store.files import describe_os_error, write_atomic

__all__ = ["quiet_lines", "settle"]


def settle(new: Path, path: Path, volatile: Ignores | None = None) -> None:
    """Give the recording at ``new`` the name ``path`` (which holds the recording it
    replaces), keeping the unchanged lines of ``path``; with ``volatile``, also the lines
    of answers that changed only in volatile or ignored values (see the module
    docstring)."""
    try:
        merged = _merged(new, path, volatile)
        if merged is None:
            os.replace(new, path)
            return
        if merged != path.read_bytes():
            write_atomic(path, merged)
        with contextlib.suppress(FileNotFoundError):
            new.unlink()
    except OSError as exc:
        raise CassetteError(f"{path}: cannot finish: {describe_os_error(exc)}") from exc


def _merged(new: Path, path: Path, volatile: Ignores | None) -> bytes | None:
    """The quiet bytes for ``path``, or ``None`` when the two files cannot be compared."""
    from cassette.store.storage import Cassette  # the reader; storage imports this module

    try:
        old_data, new_data = path.read_bytes(), new.read_bytes()
        before, after = Cassette.loads(old_data, str(path)), Cassette.loads(new_data, str(new))
    except (OSError, CassetteError, ValueError):
        return None
    if before.warnings or after.warnings:
        return None
    old_lines, new_lines = old_data.split(b"\n"), new_data.split(b"\n")
    try:
        old = [(e, old_lines[e.seq] + b"\n") for e in before.events]
        fresh = [(e, new_lines[e.seq] + b"\n") for e in after.events]
        old_header = old_lines[0] + b"\n"
    except IndexError:
        return None
    return quiet_lines(old_header, before.header, old, after.header, fresh, volatile)


def quiet_lines(
    old_header_line: bytes,
    old_header: Header,
    old: Sequence[tuple[Event, bytes]],
    new_header: Header,
    new: Sequence[tuple[Event, bytes]],
    volatile: Ignores | None = None,
) -> bytes:
    """The file a re-recording leaves: ``old`` and ``new`` are events with their lines;
    ``volatile``: answers are compared as ``verify`` compares them."""
    out: list[bytes] = []
    kept = False
    last_t: float | None = None  # the ``t`` of the line written last
    a = [_key(e, volatile) for e, _ in old]
    b = [_key(e, volatile) for e, _ in new]
    if _streams(a, old) == _streams(b, new):  # only stderr's place among messages moved
        return _header_line(old_header_line, old_header, new_header, True) + b"".join(
            line for _, line in old
        )
    for tag, i1, i2, j1, j2 in _opcodes(a, b):
        if tag == "equal":
            for event, line in old[i1:i2]:
                out.append(line)
                last_t = event.t
            kept = kept or i2 > i1
            continue
        ceiling = old[i2][0].t if i2 < len(old) else None  # the next kept line's
        for j in range(j1, j2):
            event, line = new[j]
            t = _timed(event, new[j - 1][0] if j > 0 else None, last_t, ceiling)
            out.append(line if t == event.t else encode_line(attrs.evolve(event, t=t)))
            last_t = t
    return _header_line(old_header_line, old_header, new_header, kept) + b"".join(out)


def _streams(
    keys: list[bytes], events: Sequence[tuple[Event, bytes]]
) -> tuple[list[bytes], list[bytes]]:
    """A recording's events as two streams, each in its order: the server's stderr lines,
    and everything else. A server writes its stderr and its messages down two pipes, and
    which of them the recorder reads first is a race; two recordings whose streams are the
    same are the same recording, however their lines interleave."""
    stderr = [k for k, (e, _) in zip(keys, events, strict=True) if isinstance(e, StderrEvent)]
    rest = [k for k, (e, _) in zip(keys, events, strict=True) if not isinstance(e, StderrEvent)]
    return rest, stderr


#: Past this many events between the common head and tail, the middle is taken as
#: changed as a whole rather than aligned (an alignment's cost grows with the product).
_MOST_ALIGNED: Final = 4000


def _opcodes(a: list[bytes], b: list[bytes]) -> list[tuple[str, int, int, int, int]]:
    """``difflib``'s opcodes for ``a`` to ``b``, cheap for the usual re-recording: the
    common head and tail are taken as they are, only the middle is aligned, and a long
    middle is one replaced block."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    a_end, b_end = len(a) - tail, len(b) - tail
    ops: list[tuple[str, int, int, int, int]] = [("equal", 0, head, 0, head)] if head else []
    if a_end - head > _MOST_ALIGNED or b_end - head > _MOST_ALIGNED:
        ops.append(("replace", head, a_end, head, b_end))
    elif head < a_end or head < b_end:
        matcher = difflib.SequenceMatcher(None, a[head:a_end], b[head:b_end], autojunk=False)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes():
            ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", a_end, len(a), b_end, len(b)))
    return ops


def _key(event: Event, volatile: Ignores | None = None) -> bytes:
    """What an event is, without when it happened; with ``volatile``, an answer without
    the values verify would not compare."""
    if volatile is not None and isinstance(event, MessageEvent) and _is_answer(event):
        message = steady(event.message, volatile)
        return encode_line(attrs.evolve(event, t=0.0, message=message))
    return encode_line(attrs.evolve(event, t=0.0))


def _is_answer(event: MessageEvent) -> bool:
    """A server's answer to a request: what verify compares."""
    message = event.message
    if event.dir != "s2c" or "method" in message:
        return False
    return "result" in message or "error" in message


def _timed(
    event: Event, before: Event | None, last_t: float | None, ceiling: float | None
) -> float:
    """A changed event's ``t``: its own gap after the event before it, counted from the
    line written before it, between that line's ``t`` and the next kept one's."""
    if last_t is None:
        t = event.t
    else:
        gap = event.t - before.t if before is not None else event.t
        t = last_t + max(gap, 0.0)
    if ceiling is not None:
        t = min(t, ceiling)
    if last_t is not None:
        t = max(t, last_t)
    return round(t, 6)


def _header_line(old_line: bytes, old: Header, new: Header, kept: bool) -> bytes:
    """The old header line when only ``started_at`` differs; else the new header, with the
    old ``started_at`` when old event lines (timed from it) are kept."""
    if attrs.evolve(new, started_at=old.started_at) == old:
        return old_line
    return encode_line(attrs.evolve(new, started_at=old.started_at) if kept else new)
