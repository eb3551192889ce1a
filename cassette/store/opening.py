"""The opening of a long cassette, read before the rest, when it provably holds the answer
to a session's ``initialize`` (``cassette.core.opening`` serves from it).

A replay answers ``initialize`` from the whole cassette: the recording that matches, the
revision the server would grant, the warnings about the client's capabilities. For a
legacy stdio cassette those read beyond the handshake only through what this module
rules out in the file's bytes, so a cassette that passes every check answers
``initialize`` from its opening exactly as from the whole:

* no event has a ``meta`` (no variant sessions, no legacy probe, no later server starts,
  no HTTP facts);
* ``"initialize"`` occurs once (one recording can match the request), and no
  ``server/discover`` (the revisions a server proves it supports) or request the server
  makes of its client's capabilities (``roots/list``, ``sampling/createMessage``,
  ``elicitation/create``, ``inputRequests``: the capability warnings read them);
* no ``\\u`` escape, so none of those words can be spelt in a way the checks miss;
* the opening (the header, the events up to the ``initialize`` answer, and the client
  message after it) holds only messages and stderr lines, decodes without a warning, and
  its header's era is legacy.

Anything else (a short cassette, a cassette that fails a check, a file that cannot be
read) gets ``None``: the replay loads it whole before its first answer, as always, and
the whole load reports any fault. The bytes are read once more then; from the page
cache that is a few milliseconds for a cassette of tens of megabytes.
"""

from __future__ import annotations

import os
from typing import Final

from cassette.core.codec import decode_lines
from cassette.core.jsonrpc import Kind, classify_value
from cassette.core.limits import Limits, current_limits
from cassette.core.model import Event, MessageEvent, StderrEvent, era_of
from cassette.errors import CassetteError
from cassette.store.files import open_regular
from cassette.store.storage import Cassette

__all__ = ["OPENING_FROM", "read_opening"]

#: the smallest cassette whose opening is served first: below it, the whole cassette
#: loads in a few milliseconds and the checks would cost more than they save
OPENING_FROM: Final = 1024 * 1024

#: the most lines an opening may take (a handshake is three or four)
_OPENING_LINES: Final = 64

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


def read_opening(path: str | os.PathLike[str], *, limits: Limits | None = None) -> Cassette | None:
    """The opening of the cassette at ``path`` as a cassette of its own, when it provably
    answers ``initialize`` as the whole does; ``None`` otherwise (see the module docstring)."""
    source = os.fspath(path)
    chosen = current_limits() if limits is None else limits
    data = _long_text(source)
    if data is None or data.count(b'"initialize"') != 1 or any(w in data for w in _NOWHERE):
        return None
    lines = _first_lines(data, _OPENING_LINES)
    try:
        decoded = decode_lines(lines, source, chosen.line_limit, fast=False, limits=chosen)
    except CassetteError:
        return None
    if decoded.warnings or era_of(decoded.header) != "legacy":
        return None
    events = _through_handshake(decoded.events)
    return None if events is None else Cassette(decoded.header, tuple(events), source)


def _long_text(source: str) -> bytes | None:
    """The bytes of the cassette at ``source`` if it is at least ``OPENING_FROM`` long;
    ``None`` for a shorter one or one that cannot be read (the whole load says why)."""
    try:
        with open_regular(source, "cassette") as file:
            if os.fstat(file.fileno()).st_size < OPENING_FROM:
                return None
            return file.read()
    except (OSError, CassetteError):
        return None


def _first_lines(data: bytes, count: int) -> list[bytes]:
    """The first ``count`` complete lines of ``data``, each with its newline."""
    lines: list[bytes] = []
    start = 0
    while len(lines) < count:
        end = data.find(b"\n", start)
        if end < 0:
            break
        lines.append(data[start : end + 1])
        start = end + 1
    return lines


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
