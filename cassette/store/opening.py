"""The opening of a long cassette, read before the rest, when it provably holds the answer
to a session's ``initialize`` (``cassette.core.replay.opening`` serves from it).

A replay answers ``initialize`` from the whole cassette: the recording that matches, the
revision the server would grant, the warnings about the client's capabilities. For a
legacy stdio cassette those read beyond the handshake only through what this module
rules out in the file's bytes, so a cassette that passes every check answers
``initialize`` from its opening exactly as from the whole:

* no event has a ``meta`` (no variant sessions, no legacy probe, no later server starts,
  no HTTP facts), but for the recorder's probes (``cassette.core.eras.surface``), whose lines
  come last and answer listings only: a trailing run of lines each ending as the recorder
  writes a probe's (``_PROBE_LINE``) is left out of every check below (``_session_size``);
* ``"initialize"`` occurs once (one recording can match the request), and no
  ``server/discover`` (the revisions a server proves it supports) or request the server
  makes of its client's capabilities (``roots/list``, ``sampling/createMessage``,
  ``elicitation/create``, ``inputRequests``: the capability warnings read them);
* no ``\\u`` escape, so none of those words can be spelt in a way the checks miss;
* the opening (the header, the events up to the ``initialize`` answer, and the client
  message after it) holds only messages and stderr lines, decodes without a warning, and
  its header's era is legacy.

The replay's banner reads the recorder's probes beside the opening (``read_probes``: the
trailing probe lines, from the end), which is all it needs of a cassette that passes.

Anything else (a short cassette, a cassette that fails a check, a file that cannot be
read) gets ``None``: the replay loads it whole before its first answer, as always, and
the whole load reports any fault. The checks read the file a megabyte at a time; the
whole load reads it again, from the page cache: a few milliseconds for tens of megabytes.
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from typing import BinaryIO, Final

from cassette.core.tape.codec import decode_lines
from cassette.core.wire.jsonrpc import Kind, classify_value
from cassette.core.wire.limits import Limits, current_limits
from cassette.core.wire.model import Event, MessageEvent, StderrEvent, era_of
from cassette.errors import CassetteError
from cassette.store.files import open_regular
from cassette.store.storage import Cassette

__all__ = ["OPENING_FROM", "read_opening", "read_probes"]

#: the smallest cassette whose opening is served first: below it, the whole cassette
#: loads in a few milliseconds and the checks would cost more than they save
OPENING_FROM: Final = 1024 * 1024

#: the most lines an opening may take (a handshake is three or four), and the longest
#: line it may hold
_OPENING_LINES: Final = 64
_LINE_CAP: Final = 1024 * 1024

#: how much of the rest of the file is read at a time to check it
_CHUNK: Final = 1024 * 1024

_INITIALIZE: Final = b'"initialize"'

#: what the file may hold nowhere (the module docstring says why)
_NOWHERE: Final = (
    b'"meta"',
    b"\\u",
    b"server/discover",
    b"roots/list",
    b"sampling/createMessage",
    b"elicitation/create",
    b"inputRequests",
)


#: a line of the recorder's probes as it writes one: its ``meta`` member last (but for a
#: typed sentinel's pointers), naming the probe and nothing else. A session's line cannot
#: end so: a message's own members are closed by at least two more braces
_PROBE_LINE: Final = re.compile(rb',"meta":\{"probe":"[^"\\]*"\}(?:,"redacted":\[[^\]]*\])?\}$')


def read_opening(path: str | os.PathLike[str], *, limits: Limits | None = None) -> Cassette | None:
    """The opening of the cassette at ``path`` as a cassette of its own, when it provably
    answers ``initialize`` as the whole does; ``None`` otherwise (see the module docstring)."""
    source = os.fspath(path)
    chosen = current_limits() if limits is None else limits
    try:
        with open_regular(source, "cassette") as file:
            lines = _proved_opening(file, chosen)
    except (OSError, CassetteError):
        return None  # the whole load says what is wrong
    if lines is None:
        return None
    try:
        decoded = decode_lines(lines, source, chosen.line_limit, fast=False, limits=chosen)
    except CassetteError:
        return None
    if decoded.warnings or era_of(decoded.header) != "legacy":
        return None
    events = _through_handshake(decoded.events)
    return None if events is None else Cassette(decoded.header, tuple(events), source)


def read_probes(path: str | os.PathLike[str], *, limits: Limits | None = None) -> list[Event]:
    """The events of the recorder's probe lines that end the cassette at ``path`` (empty
    when it ends with none, or they cannot be read: the whole load says what is wrong).
    Read from the end, so a cassette's size costs nothing here but its probes' lines."""
    source = os.fspath(path)
    chosen = current_limits() if limits is None else limits
    cap = min(chosen.line_limit, _LINE_CAP)
    try:
        with open_regular(source, "cassette") as file:
            size = os.fstat(file.fileno()).st_size
            start = _session_size(file, size)
            if start >= size:
                return []
            file.seek(0)
            header = file.readline(cap + 1)
            file.seek(start)
            tail = file.read(size - start)
        decoded = decode_lines(
            [header, *tail.splitlines(keepends=True)], source, fast=False, limits=chosen
        )
    except (OSError, CassetteError):
        return []
    return decoded.events


def _proved_opening(file: BinaryIO, chosen: Limits) -> list[bytes] | None:
    """The opening lines of a long enough ``file`` that passes every check, else ``None``."""
    size = os.fstat(file.fileno()).st_size
    if size < OPENING_FROM:
        return None
    session = _session_size(file, size)
    file.seek(0)
    lines = _first_lines(file, min(chosen.line_limit, _LINE_CAP))
    if lines is None:
        return None
    kept, used = [], 0
    for line in lines:  # a short session: its probes' lines are no part of the opening
        used += len(line)
        if used > session:
            break
        kept.append(line)
    file.seek(sum(map(len, kept)))
    return kept if _proved(kept, file, session) else None


def _first_lines(file: BinaryIO, cap: int) -> list[bytes] | None:
    """The file's first ``_OPENING_LINES`` lines (fewer in a file that has fewer), each
    with its newline; ``None`` if one is longer than ``cap`` or lacks its newline. Capped,
    so a file with no newline (a gigabyte of zeros) costs a megabyte here, not its size."""
    lines: list[bytes] = []
    while len(lines) < _OPENING_LINES:
        line = file.readline(cap + 1)
        if not line:
            break
        if len(line) > cap or not line.endswith(b"\n"):
            return None
        lines.append(line)
    return lines


def _session_size(file: BinaryIO, size: int) -> int:
    """The bytes of ``file`` before its trailing probe lines (``_PROBE_LINE``); its
    ``size`` when it ends with none. Read from the end, a chunk at a time."""
    start = size
    for line in _lines_back(file, size):
        if not _PROBE_LINE.search(line):
            break
        start -= len(line) + 1
    return start


def _lines_back(file: BinaryIO, size: int) -> Iterator[bytes]:
    """The file's lines without their newlines, last first (a file that does not end
    with a newline yields its unterminated tail, which is no probe line, first). It stops
    at a line longer than a chunk: no more is read than that line (a file of zeros)."""
    pos, pending = size, b""
    first = True
    while pos > 0 and len(pending) <= _CHUNK:
        step = min(_CHUNK, pos)
        pos -= step
        file.seek(pos)
        parts = (file.read(step) + pending).split(b"\n")
        pending = parts.pop(0)  # its start may lie before ``pos``
        if first and parts and parts[-1] == b"":
            parts.pop()  # after the last newline: no line
        first = False
        yield from reversed(parts)
    if pos == 0:
        yield pending  # the file's first line


def _proved(lines: list[bytes], file: BinaryIO, size: int | None = None) -> bool:
    """Whether the opening ``lines`` and the rest of ``file`` (up to ``size`` bytes from
    its start, when given) hold ``"initialize"`` once and nothing of ``_NOWHERE``, read a
    chunk at a time (memory stays a chunk, whatever the size); a word cut by a chunk's end
    is found in the next, which starts with the previous one's last bytes."""
    keep = max(len(word) for word in (*_NOWHERE, _INITIALIZE)) - 1
    initialize = 0
    tail = b""
    left = [(1 << 62 if size is None else size) - sum(map(len, lines))]

    def read() -> bytes:
        chunk = file.read(min(_CHUNK, left[0]))
        left[0] -= len(chunk)
        return chunk

    chunks = itertools.chain([b"".join(lines)], iter(read, b""))
    for chunk in chunks:
        data = tail + chunk
        # an "initialize" wholly inside ``tail`` was counted with the chunk before
        initialize += data.count(_INITIALIZE) - tail.count(_INITIALIZE)
        if initialize > 1 or any(word in data for word in _NOWHERE):
            return False
        tail = data[-keep:]
    return initialize == 1


def _through_handshake(events: list[Event]) -> list[Event] | None:
    """The events up to the ``initialize`` answer and the client message after it, when
    those are all messages and stderr lines; ``None`` when the lines read do not reach
    that far or hold anything else."""
    asked: object = None
    answered = False
    for index, event in enumerate(events):
        if isinstance(event, StderrEvent):
            continue
        if not isinstance(event, MessageEvent):
            return None
        message = event.message
        kind = classify_value(message)
        if event.dir == "c2s":
            if answered:
                return events[: index + 1]
            if kind is Kind.REQUEST and message.get("method") == "initialize":
                asked = message["id"]
        elif asked is not None and kind is Kind.RESPONSE and message.get("id") == asked:
            answered = True
    return None
