"""Turn observed traffic into cassette records: sans-IO, deterministic, never in the way.

Theory of operation
-------------------
The recorder is told about every frame that passed (``observe``), every stderr line and
the server's exit, each with a time offset the caller measured. It returns the records to
append to the file, in order. It never changes a frame; forwarding is the caller's job and
happens whatever the recorder thinks of the bytes.

The header cannot be the first thing known, although it is the first line: its ``era``
is a fact decided by the first *successful* exchange, never by an attempt. A dual-era
client probes ``server/discover``, a legacy server answers with an error, and the client
falls back to ``initialize``: that session is legacy and the failed probe stays in it.
So until the era is known every record waits in memory; the first success returns the
header followed by everything held back. ``close`` releases what is still held with no
era (which reads as legacy). Once the header is out, the era cannot change.

What decides the era: a successful ``initialize`` means legacy, at the protocol version
its result names; a successful request that carried the 2026-07-28 ``_meta`` envelope (or
a successful ``server/discover``) means modern, at the version the envelope names. Other
successes (a ``ping`` before anything else) decide nothing.

Over HTTP, where one recording may hold several client sessions, a legacy ``initialize``
in a session (``meta.session``) decides once that session has more than its handshake: its
next success, another session's legacy handshake, or the end of the recording. A bridge
such as mcp-remote first tests the connection in a session of its own, a legacy
``initialize`` and nothing else, then forwards its client's session; when that one proves
2026-07-28, the test session is no part of it: it is the recorded server's answer to a
legacy client, and is kept as the legacy probe (``cassette.core.eras.variants.PROBE_VARIANT``,
as ``cassette.runtime.probe`` records it), which serves legacy clients on replay.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any, Final

import attrs

from cassette._version import __version__
from cassette.core.recording.hooks import call_hook
from cassette.core.recording.local_paths import LocalPaths
from cassette.core.redaction.redactor import RedactionSession, Redactor
from cassette.core.redaction.schemas import SchemaBook
from cassette.core.wire.ids import id_key
from cassette.core.wire.jsonrpc import SINGLE_MESSAGES, JSONObject, Kind, classify_parts
from cassette.core.wire.mcp import VERSION_META
from cassette.core.wire.meta import LATE, SESSION, STREAM
from cassette.core.wire.model import (
    Direction,
    Era,
    Event,
    ExitEvent,
    Header,
    HttpEvent,
    MessageEvent,
    RawEvent,
    RecorderInfo,
    StderrEvent,
)
from cassette.errors import EraError

__all__ = ["MODERN_VERSION_KEY", "BeforeRecord", "Record", "Recorder"]

MODERN_VERSION_KEY: Final = VERSION_META
_RAW_LIMIT: Final = 65536  # frames up to this size are pre-screened for secrets as text
Record = Header | Event
_ANSWERS: Final = frozenset({Kind.RESPONSE, Kind.ERROR})
#: A ``before_record`` hook: a message (a copy) and its direction in, what to keep out
#: (``None``: keep nothing).
BeforeRecord = Callable[[JSONObject, Direction], JSONObject | None]


def _modern_version(request: JSONObject) -> str | None:
    params = request.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(MODERN_VERSION_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def decide(request: JSONObject, result: object) -> tuple[Era, str | None] | None:
    """The era a successful exchange proves, or ``None`` when it proves nothing."""
    method = request.get("method")
    if method == "initialize":
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        return "legacy", version if isinstance(version, str) else None
    modern = _modern_version(request)
    if modern is not None or method == "server/discover":
        return "modern", modern
    return None


def _line_text(data: bytes) -> bytes:
    return data[:-1] if data.endswith(b"\n") else data


@attrs.define
class Recorder:
    """Sans-IO recorder of one session (see the module docstring)."""

    transport: str
    started_at: str
    target: Mapping[str, Any] = attrs.field(factory=dict)
    info: RecorderInfo = attrs.field(factory=lambda: RecorderInfo("cassette-mcp", __version__))
    era: Era | None = None
    protocol_version: str | None = None
    #: secrets are replaced before anything is kept; ``None`` turns redaction off
    redactor: Redactor | None = None
    #: sees each message (a copy) before it is kept, and returns what to keep, or ``None``
    #: to keep nothing; redaction runs after it. Protocol bookkeeping (the era, open
    #: requests, the schemas redaction keeps to) follows what passed, whatever it keeps.
    before_record: BeforeRecord | None = None
    #: whether the server's stderr lines are kept (``--no-stderr``: they are not)
    keep_stderr: bool = True
    #: the machine's folders, written as ``~/...`` and project-relative paths in stderr and
    #: raw lines (``cassette.core.recording.local_paths``); ``None``: those lines are kept as
    #: they are
    local: LocalPaths | None = None
    _session: RedactionSession | None = attrs.field(default=None, init=False)
    # what the server said its tools take and give, to keep redaction within the schemas
    _schemas: SchemaBook = attrs.field(factory=SchemaBook, init=False)
    _held: list[Event] = attrs.field(factory=list, init=False)
    _header: Header | None = attrs.field(default=None, init=False)
    # open client requests by (stream, id), with the client session that sent each
    _open_requests: dict[object, tuple[JSONObject, object]] = attrs.field(factory=dict, init=False)
    _seq: int = attrs.field(default=0, init=False)
    #: whether some request got a successful answer: a session that never did is no cassette
    succeeded: bool = attrs.field(default=False, init=False)
    #: a client session's successful legacy ``initialize``, not yet the era (see the module
    #: docstring): its verdict, the session and the stream its ``initialize`` went on
    _tentative: tuple[tuple[Era, str | None], object, object] | None = attrs.field(
        default=None, init=False
    )
    #: whether a held handshake-only legacy session was kept as the legacy probe
    probed: bool = attrs.field(default=False, init=False)
    #: the client request whose success decided the era (its handshake, or a 2026-07-28
    #: request's envelope): what the recording client declared it can do, for the
    #: recorder's probes (``cassette.core.eras.surface``)
    opening: JSONObject | None = attrs.field(default=None, init=False)

    def __attrs_post_init__(self) -> None:
        if self.redactor is None:
            return
        # One session per recording: its placeholders and its memory of secrets start
        # with the command line or URL, so a secret there is redacted wherever it recurs.
        session = self._session = self.redactor.session()
        target = dict(self.target)
        command = target.get("command")
        if isinstance(command, list | tuple):
            target["command"] = session.argv([str(c) for c in command])
        if isinstance(target.get("url"), str):
            target["url"] = session.text(target["url"])
        self.target = target

    def secret(self, value: str) -> None:
        """A value known to be secret that is never recorded itself (a credential the
        client sent in an HTTP header): redacted wherever it appears from now on."""
        if self._session is not None and value:
            self._session.remember(value, "header")

    @property
    def header(self) -> Header | None:
        """The header once written, else ``None``."""
        return self._header

    # -- observations ------------------------------------------------------------------

    def observe(
        self, direction: Direction, data: bytes, t: float, meta: Mapping[str, Any] | None = None
    ) -> list[Record]:
        """One frame passed in ``direction``; ``data`` is exactly what was carried.

        ``meta`` holds transport facts worth keeping (over HTTP: which stream, which
        client session, the SSE event id); never header values.
        """
        line = _line_text(data)
        # the parts, not a ``Classified``: the frame's text comes with them, decoded once
        kind, message, _problem, text = classify_parts(line)
        if kind not in SINGLE_MESSAGES:
            return self._add(self._redact_raw(_raw(direction, line, t, meta)))
        stream = meta.get(STREAM) if meta else None
        session = meta.get(SESSION) if meta else None
        kept: JSONObject | None = message
        if self.before_record is not None:
            shown = str if self._session is None else self._session.text
            kept = call_hook(self.before_record, message, direction, shown)
        pointers = None
        if self._session is not None:
            schemas = self._schemas.schemas(direction, message, stream)
            # the line's own text lets a clean message skip the walk: only if unchanged
            unchanged = self.before_record is None and len(line) <= _RAW_LIMIT
            raw = text if unchanged else None
            if kept is not None:
                kept, found = self._session.message(kept, schemas, raw)
                pointers = found or None
        out: list[Record] = []
        if kept is not None:
            out = self._add(
                MessageEvent(t=t, dir=direction, message=kept, meta=meta, redacted=pointers)
            )
        if direction == "c2s" and kind is Kind.REQUEST:
            self._open_requests[_key(stream, message["id"])] = (message, session)
        elif direction == "s2c" and kind in _ANSWERS:
            request = self._answered(stream, session, message.get("id"))
            if request is not None and kind is Kind.RESPONSE:
                self.succeeded = True
            if request is not None and kind is Kind.RESPONSE and self._header is None:
                out = self._decide(request, message.get("result"), session, stream)
        return out

    def _decide(
        self, request: JSONObject, result: object, session: object, stream: object
    ) -> list[Record]:
        """The era once a successful exchange proves it (see the module docstring), and
        the records held back for it; ``[]`` while it is still open."""
        verdict = decide(request, result)
        if verdict is not None and self.opening is None:
            self.opening = request
        held = self._tentative
        if held is None:
            if verdict is not None and verdict[0] == "legacy" and session is not None:
                self._tentative = (verdict, session, stream)  # a handshake alone, so far
                return []
            return [] if verdict is None else self.decide_era(*verdict)
        if verdict is not None and verdict[0] == "modern" and session != held[1]:
            self._as_probe(held[1], held[2])  # a connection test beside the session
            self.opening = request
            return self.decide_era(*verdict)
        if verdict is None and session != held[1]:
            return []  # another session's success that proves no era
        return self.decide_era(*held[0])

    def _as_probe(self, session: object, stream: object) -> None:
        """The held events of client session ``session``, a handshake-only legacy session
        (its ``initialize`` went on ``stream``, before the session had its id), marked as
        the recorded server's answer to a legacy probe
        (``cassette.core.eras.variants.PROBE_VARIANT``): what the runtime's own probe records."""
        from cassette.core.eras.variants import PROBE_VARIANT
        from cassette.core.wire.meta import VARIANT

        self.probed = True
        for index, event in enumerate(self._held):
            meta = getattr(event, "meta", None)
            if not isinstance(event, MessageEvent | RawEvent) or not meta:
                continue
            if meta.get(SESSION) == session or meta.get(STREAM) == stream:
                marked = {**meta, VARIANT: PROBE_VARIANT}
                self._held[index] = attrs.evolve(event, meta=marked)

    def stderr(self, text: str, t: float) -> list[Record]:
        """The server wrote a line on stderr: kept, with the machine's folders written
        portably and then redacted, unless stderr is not kept."""
        if not self.keep_stderr:
            return []
        if self.local is not None:
            text = self.local.portable(text)
        kept = text if self._session is None else self._session.line("stderr", text)
        return self._add(StderrEvent(t=t, text=kept))

    def redacted(self, text: str) -> str:
        """``text`` as the cassette keeps it (for a person, the same as in the file)."""
        return text if self.redactor is None else self.redactor.text(text)

    def exit(self, code: int | None, t: float) -> list[Record]:
        """The server process ended."""
        return self._add(ExitEvent(t=t, code=code))

    def awaiting(self, msg_id: object, stream: object = None) -> bool:
        """True while the client request with this id has had no answer (a proxy's
        timeout asks before answering in the server's place)."""
        return _key(stream, msg_id) in self._open_requests

    def late(self, data: bytes, t: float) -> list[Record]:
        """A server answer that came after the proxy had answered in its place: kept as a
        raw line marked ``late`` (a replay never plays raw lines), not as the answer."""
        return self._add(self._redact_raw(_raw("s2c", _line_text(data), t, {LATE: True})))

    def http(
        self, method: str, stream: str, status: int, t: float, session: int | None = None
    ) -> list[Record]:
        """An HTTP exchange fact a replay needs (see ``HttpEvent``)."""
        return self._add(
            HttpEvent(t=t, method=method, stream=stream, status=status, session=session)
        )

    def decide_era(self, era: Era, protocol_version: str | None = None) -> list[Record]:
        """Fix the era now; returns the header and every record held back for it."""
        if self._header is not None:
            if era != self._header.era:
                raise EraError(
                    f"the cassette header already says era {self._header.era!r}; "
                    f"it cannot change to {era!r}"
                )
            return []
        self.era, self.protocol_version = era, protocol_version
        return self._release()

    def close(self) -> list[Record]:
        """The session ended: release anything still held (with no era if undecided, the
        held legacy handshake's if that is all that succeeded)."""
        if self._header is not None:
            return []
        if self._tentative is not None:
            self.era, self.protocol_version = self._tentative[0]
        return self._release()

    # -- internals ---------------------------------------------------------------------

    def _answered(self, stream: object, session: object, msg_id: object) -> JSONObject | None:
        """The open request a response answers: the one with its id on its own stream, or
        else the latest with its id in its client session (legacy HTTP+SSE answers every
        POST on the session's one event stream)."""
        found = self._open_requests.pop(_key(stream, msg_id), None)
        if found is None:
            for key, (request, owner) in reversed(list(self._open_requests.items())):
                live_id = request["id"]
                if owner == session and type(live_id) is type(msg_id) and live_id == msg_id:
                    found = self._open_requests.pop(key)
                    break
        return found[0] if found is not None else None

    def _redact_raw(self, event: RawEvent) -> RawEvent:
        """A raw line as kept: the machine's folders written portably, then redacted."""
        if event.text is None:
            return event
        text = event.text if self.local is None else self.local.portable(event.text)
        if self._session is not None:
            text = self._session.line(f"raw-{event.dir}", text)
        return event if text == event.text else attrs.evolve(event, text=text)

    def _release(self) -> list[Record]:
        self._header = Header(
            transport=self.transport,
            recorder=self.info,
            started_at=self.started_at,
            target=dict(self.target),
            era=self.era,
            protocol_version=self.protocol_version,
            redaction=None if self.redactor is None else self.redactor.describe(),
        )
        out: list[Record] = [self._header, *self._held]
        self._held.clear()
        return out

    def _add(self, event: Event) -> list[Record]:
        self._seq += 1
        object.__setattr__(event, "seq", self._seq)  # just built here; nobody else holds it
        if self._header is None:
            self._held.append(event)
            return []
        return [event]


def _raw(direction: Direction, line: bytes, t: float, meta: Mapping[str, Any] | None) -> RawEvent:
    try:
        return RawEvent(t=t, dir=direction, text=line.decode("utf-8"), meta=meta)
    except UnicodeDecodeError:
        return RawEvent(t=t, dir=direction, b64=base64.b64encode(line).decode("ascii"), meta=meta)


def _key(stream: object, value: object) -> object:
    return (stream, *id_key(value))
