"""The values a cassette is made of: one header, then events in the order they happened.

These are frozen and carry no behaviour beyond small conveniences, so they can be shared
between the recorder, the replayer and the file layer without anyone worrying about who
may change them. ``seq`` is an event's position in the file (the header is 0, the first
event 1), which makes ``seq + 1`` its line number: miss diagnostics and ``lint`` point at
lines without the file layer having to tell them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final, Literal, Protocol

import attrs

from cassette.core.wire.mcp import LEGACY_VERSIONS

__all__ = [
    "ERAS",
    "FORMAT_VERSION",
    "LEGACY_VERSIONS",
    "Direction",
    "Era",
    "Event",
    "ExitEvent",
    "Header",
    "HttpEvent",
    "MessageEvent",
    "RawEvent",
    "RecorderInfo",
    "Recording",
    "StderrEvent",
    "era_of",
]

#: The newest cassette format this code writes and the newest it reads.
FORMAT_VERSION: Final = 1

Direction = Literal["c2s", "s2c"]
Era = Literal["legacy", "modern"]
ERAS: Final = ("legacy", "modern")


@attrs.frozen(slots=True)
class RecorderInfo:
    """Which program wrote the cassette, so a bug report can name the version."""

    name: str
    version: str


@attrs.frozen(slots=True)
class Header:
    """Line 1 of a cassette: what session this is a recording of.

    ``era`` is ``None`` when no exchange succeeded; readers treat that as legacy (see
    ``era_of``), which is also what every cassette written before the field existed means.
    ``target`` describes what was recorded (a command line or a URL) with secrets removed.
    """

    transport: str
    recorder: RecorderInfo
    started_at: str
    target: Mapping[str, Any] = attrs.field(factory=dict)
    era: Era | None = None
    protocol_version: str | None = None
    #: how secrets were redacted: the placeholder salt and the user's rules (None: off)
    redaction: Mapping[str, Any] | None = None
    format: int = FORMAT_VERSION
    seq: int = attrs.field(default=0, eq=False)


def era_of(header: Header) -> Era:
    """The era a replay must serve: the recorded one, and legacy when none was decided."""
    return header.era or "legacy"


@attrs.frozen(slots=True)
class MessageEvent:
    """One JSON-RPC message (request, notification, response or error) as it passed."""

    kind: ClassVar[str] = "message"
    t: float
    dir: Direction
    message: dict[str, Any]
    meta: Mapping[str, Any] | None = None
    seq: int = attrs.field(default=0, eq=False)
    #: JSON Pointers into ``message`` of typed sentinels standing for redacted secrets (a
    #: number, an enum member): matching treats them as wildcards, like placeholders
    redacted: tuple[str, ...] | None = None


@attrs.frozen(slots=True)
class RawEvent:
    """A frame that is not one JSON-RPC message, kept verbatim.

    ``text`` holds it when it is valid UTF-8; otherwise ``b64`` holds the bytes base64
    encoded, because a cassette line must itself be valid JSON text.
    """

    kind: ClassVar[str] = "raw"
    t: float
    dir: Direction
    text: str | None = None
    b64: str | None = None
    meta: Mapping[str, Any] | None = None
    seq: int = attrs.field(default=0, eq=False)


@attrs.frozen(slots=True)
class StderrEvent:
    """One line the server process wrote on stderr (its log, not protocol)."""

    kind: ClassVar[str] = "stderr"
    t: float
    text: str
    seq: int = attrs.field(default=0, eq=False)


@attrs.frozen(slots=True)
class ExitEvent:
    """The server process ended; ``code`` is negative when a signal ended it (POSIX)."""

    kind: ClassVar[str] = "exit"
    t: float
    code: int | None
    seq: int = attrs.field(default=0, eq=False)


@attrs.frozen(slots=True)
class HttpEvent:
    """An HTTP exchange fact that is not a JSON-RPC message (network transports only).

    Written for every GET and DELETE, and for a POST whose status is not the default one
    (200 for a request, 202 for a notification or a response), so a replay can give the
    same status. ``stream`` names the HTTP exchange (``post-3``, ``get-1``) the way message
    events' ``meta.stream`` does; ``session`` is the client session's ordinal in the
    recording (header values such as the session id itself are never stored).
    """

    kind: ClassVar[str] = "http"
    t: float
    method: str
    stream: str
    status: int
    session: int | None = None
    seq: int = attrs.field(default=0, eq=False)


Event = MessageEvent | RawEvent | StderrEvent | ExitEvent | HttpEvent


class Recording(Protocol):
    """Anything that has a header and events: a loaded ``Cassette`` or a test's literal."""

    @property
    def header(self) -> Header: ...

    @property
    def events(self) -> Sequence[Event]: ...
