"""The streamable-HTTP replay front: an ASGI app that answers as the recorded endpoint did.

Theory of operation
-------------------
The app serves the era its cassette's header names, never guessing from requests:

* **legacy** (sessions): an ``initialize`` POST without a session opens a replay session
  with a fresh ``Mcp-Session-Id`` and its own ``Replayer``, so concurrent sessions never
  consume each other's recordings. Later requests must carry a live session id (unknown:
  404); DELETE ends a session (then 404); GET opens the session's standalone SSE stream
  (one at a time: 409). A request with no session gets 400 when the recorded server
  handed out sessions, unless the recording shows it sent without one (a dual-era
  client's ``server/discover`` probe): that is answered from a sessionless replayer, with
  the status the recording shows.
* **modern** (2026-07-28, stateless): every POST is answered from the one replayer of the
  app; GET and DELETE get 405.

Before a session sees a request, it is checked as its era's specification and the live
reference server check it (media types, body shape, protocol version, routing headers:
``cassette.transports.http._http_checks``), and refused with their status and error code.

A client that lost a POST's event stream resumes it with a GET carrying ``Last-Event-ID``:
it gets exactly the events it had not received, those still to come included (the
response too), and the GET ends with the POST's stream. A recorded GET that resumed a
POST's stream is served as part of that POST.

Memory follows the open sessions, not the sessions served: a session ended by DELETE, or
by the recorded server's exit, is dropped at once (the runtime keeps only its misses), and
one a client abandoned (no request and no open stream for ``idle_timeout`` seconds, 10
minutes by default) is ended as if deleted: a request in it later gets 404, which the
specification tells a client to answer by opening a new session. The check runs as
requests arrive, at most once a second, so a front nobody talks to does nothing. At
``max_sessions`` open sessions (1000 by default), opening one more ends the least
recently used the same way, so memory stays bounded while clients keep opening sessions.

A POST is answered as it was recorded: the recorded status, JSON or an SSE stream. Server
messages recorded on the POST's own stream come back on it; those recorded on a GET stream
go to the session's GET stream. A cassette recorded over stdio has no such facts: a request
is answered on its POST (as SSE when notifications precede the response), and what a client
notification caused goes to the GET stream.

The app answers from a ``cassette.transport.SessionPool``: one ``ServedSession`` per replay
session, opened by the runtime's delivery policy (``cassette.runtime``), which decides
what each reply is, reports misses, refuses oversized messages, paces and fails server
requests the client leaves unanswered. The app only routes a request to its session and
checks it as HTTP, decoding its body once; the session (``_http_session.Session``)
answers it and delivers everything that follows. A reply that is ``pending`` (answered
live, under ``new_episodes``) holds its POST open like one that awaits the client; the
rest of it comes through the session's ``emit`` (``SessionStreams.later``), routed by the
request it answers: onto that POST's stream while it is open, else onto the GET stream.
Which clients are served, and at which statuses, the replay says (``Reply.status``,
``Reply.refuses_era``): the front reads no era rule of its own.
"""

from __future__ import annotations

import math
import time
import uuid
from collections.abc import Callable, Sequence
from typing import Final

import attrs

from cassette.core.replay.negotiation import client_era
from cassette.core.wire.ids import id_key
from cassette.core.wire.jsonrpc import INVALID_REQUEST, Classified, Kind, classify, dumps_bytes
from cassette.core.wire.meta import HEADERS
from cassette.core.wire.model import era_of
from cassette.transport import Frame, Reply, SessionPool
from cassette.transports.http._http import (
    BODY_LIMIT,
    Guard,
    Receive,
    Scope,
    Send,
    header,
    headers_of,
    read_body,
    send_simple,
)
from cassette.transports.http._http_checks import (
    Refusal,
    json_refusal,
    legacy_get_refusal,
    legacy_post_refusal,
    legacy_version_refusal,
    modern_post_refusal,
)
from cassette.transports.http._http_recorded import (
    get_refused,
    modern_versions,
    primed_streams,
    recorded_path,
    resumed_streams,
    sessionless_methods,
)
from cassette.transports.http._http_session import Serving, SessionStreams, resume

__all__ = ["HttpReplayApp"]

_JSON: Final = b"application/json"
_FORBIDDEN: Final = (json_refusal(403, INVALID_REQUEST, "Forbidden origin").body, _JSON)
_NO_SESSION: Final = json_refusal(400, -32000, "Bad Request: Server not initialized")
_GONE: Final = json_refusal(404, -32001, "Session not found")
_LEGACY_METHODS: Final = b"GET, POST, DELETE"
#: Seconds a session may go without a request or an open stream before it is ended.
IDLE_TIMEOUT: Final = 600.0
#: The most sessions open at once, by default (``ServeOptions.max_sessions``).
MAX_SESSIONS: Final = 1000
_SWEEP_EVERY: Final = 1.0  # seconds between looks for abandoned sessions


async def _refuse(send: Send, refusal: Refusal) -> None:
    await send_simple(send, refusal.status, refusal.body, refusal.content_type)


@attrs.frozen
class _Call:
    """One ASGI request being answered."""

    scope: Scope
    receive: Receive
    send: Send


class HttpReplayApp:
    """ASGI app serving replay sessions over streamable HTTP (see the module docstring).

    ``sessions`` answers (the runtime's ``PolicySessionPool``: a cassette's replay, a mock's,
    an extension's); its ``recording`` says how to serve: era, path, recorded statuses.
    """

    def __init__(
        self,
        sessions: SessionPool,
        *,
        path: str | None = None,
        bound_host: str = "127.0.0.1",
        max_body: int = BODY_LIMIT,
        allowed_origins: Sequence[str] = (),
        idle_timeout: float = IDLE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        recording = sessions.recording
        self.idle_timeout = idle_timeout
        self.max_sessions = max_sessions
        self._clock = clock  # for idle sessions; a test may bring its own
        self._swept_at = -math.inf
        self.max_body = max_body
        self.era = era_of(recording.header)
        self.path = path or recorded_path(recording) or "/mcp"
        methods = b"POST" if self.era == "modern" else _LEGACY_METHODS
        self.guard = Guard(bound_host, _FORBIDDEN, methods, tuple(allowed_origins))
        self.sessions: dict[str, SessionStreams] = {}
        self._pool = sessions
        self._serving = Serving(
            by_stream=recording.header.transport != "sse",
            resumed=frozenset(resumed_streams(recording)),
            priming=primed_streams(recording),
        )
        self._shared = self._open()
        self._get_refused = get_refused(recording)
        self._versions = modern_versions(recording)
        self._sessionless = sessionless_methods(recording)

    def _open(self) -> SessionStreams:
        """A new session: what comes later for it is its own to deliver (``later``)."""
        session = SessionStreams(self._clock(), self._serving)
        session.served = self._pool.open(session.later)
        return session

    def stop_streams(self) -> None:
        """End every open stream (the front is shutting down)."""
        for session in [self._shared, *self.sessions.values()]:
            session.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        admitted = await self.guard.admit(scope, receive, send)
        if admitted is None:
            return
        await self._sweep()
        send = admitted
        if scope["path"] != self.path:
            await send_simple(send, 404, b"Not Found", b"text/plain")
            return
        method = scope["method"]
        self._touch(scope)
        if method == "POST":
            await self._post(scope, receive, send)
        elif self.era == "modern" and header(scope, b"mcp-session-id") not in self.sessions:
            await send_simple(send, 405, b"", headers=[(b"allow", b"POST")])
        elif method == "GET":
            await self._get(scope, receive, send)
        elif method == "DELETE":
            await self._delete(scope, send)
        else:
            refusal = json_refusal(405, -32000, "Method not allowed.")
            allow = [(b"allow", _LEGACY_METHODS)]
            await send_simple(send, 405, refusal.body, refusal.content_type, allow)

    async def _sweep(self) -> None:
        """End the sessions a client abandoned (see the module docstring)."""
        now = self._clock()
        if now - self._swept_at < _SWEEP_EVERY:
            return
        self._swept_at = now
        idle = [
            session
            for session in self.sessions.values()
            if session.idle_since(now) > self.idle_timeout
        ]
        for session in idle:
            await self._end(session)

    async def _make_room(self) -> None:
        """At ``max_sessions`` open sessions, end the least recently used one: its next
        request gets 404, as for a session the server ended, and its client opens a new
        one. Memory then follows the limit, whatever the clients do."""
        while self.sessions and len(self.sessions) >= self.max_sessions:
            oldest = min(self.sessions.values(), key=lambda session: session.used_at)
            await self._end(oldest)

    def _touch(self, scope: Scope) -> None:
        """A request names its session: it is in use."""
        found = self.sessions.get(header(scope, b"mcp-session-id") or "")
        if found is not None:
            found.used_at = self._clock()

    # -- POST ------------------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        # A session id means a legacy client: on a modern cassette too, where it opened one
        legacy = self.era == "legacy" or header(scope, b"mcp-session-id") is not None
        if legacy and not await self._known_session(scope, send):
            return
        body = await read_body(receive, self.max_body, send=send)
        if body is None:
            return
        classified = classify(body)
        call = _Call(scope, receive, send)
        # A legacy client on a modern cassette opens a legacy session, if its replay serves
        # that client (``Reply.refuses_era`` says it does not: ``_answer``)
        legacy = legacy or _opens_session(classified)
        if not legacy:
            refusal = modern_post_refusal(headers_of(scope), classified, self._versions)
            if refusal is not None:
                await _refuse(send, refusal)
                return
            await self._answer(call, self._shared, body, classified, extra=[])
            return
        await self._legacy_post(call, body, classified)

    async def _refuse_era(self, call: _Call, session: SessionStreams, reply: Reply) -> None:
        """A session opened for a client its replay does not serve (a legacy client's
        ``initialize`` on a modern cassette whose recorded server listed no legacy
        revision): the replay's ``-32022`` (a miss, with the hint to record for that
        client), at 400 as a modern-only server answers, and no session."""
        await self._end(session)
        answer = reply.messages[0] if reply.messages else None
        await send_simple(call.send, reply.status or 400, dumps_bytes(answer), _JSON)

    async def _known_session(self, scope: Scope, send: Send) -> bool:
        """A session id this front never gave, or ended, gets 404 before anything else."""
        session_id = header(scope, b"mcp-session-id")
        if session_id is None or session_id in self.sessions:
            return True
        await _refuse(send, _GONE)
        return False

    async def _legacy_post(self, call: _Call, body: bytes, classified: Classified) -> None:
        scope, send = call.scope, call.send
        session_id = header(scope, b"mcp-session-id")
        opens = _opens_session(classified)
        refusal = legacy_post_refusal(headers_of(scope), classified)
        if refusal is None and not _modern_without_session(session_id, classified):
            refusal = self._session_refusal(session_id, opens, classified)
            refusal = refusal or legacy_version_refusal(headers_of(scope))
        if refusal is not None:
            await _refuse(send, refusal)
            return
        extra: list[tuple[bytes, bytes]] = []
        if session_id is not None:
            found = self.sessions.get(session_id)
            if found is None:  # ended (DELETE) while its body was being read
                await _refuse(send, _GONE)
                return
            session = found
        elif opens:
            await self._make_room()
            session_id = uuid.uuid4().hex
            session = self.sessions[session_id] = self._open()
            extra.append((b"mcp-session-id", session_id.encode()))
        else:
            session = self._shared
        await self._answer(call, session, body, classified, extra=extra)

    def _session_refusal(
        self, session_id: str | None, opens: bool, classified: Classified
    ) -> Refusal | None:
        """An ``initialize`` inside a session is refused (400), and so is a request
        without one when the recorded server handed out sessions, unless the recording
        shows that request sent without one."""
        if session_id is not None:
            text = "Invalid Request: Server already initialized"
            return json_refusal(400, INVALID_REQUEST, text) if opens else None
        if opens or self._sessionless is None:
            return None
        method = classified.value.get("method") if classified.kind is not Kind.BATCH else None
        return None if method in self._sessionless else _NO_SESSION

    async def _answer(
        self,
        call: _Call,
        session: SessionStreams,
        body: bytes,
        classified: Classified,
        *,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Hand the checked request to its session, which answers it; a session opened
        for a client its replay refuses, or whose recorded server exited, is ended."""
        # Held before the reply is asked for: what a live server says for this request may
        # come through ``emit`` before the reply itself is back.
        kind = classified.kind
        key = id_key(classified.value.get("id")) if kind is Kind.REQUEST else None
        if key is not None:
            session.hold(key)
        try:
            frame = Frame(body, {HEADERS: call.scope[HEADERS]})
            reply = await session.ask(frame, classified)  # decoded once, by the front
            if reply.refuses_era and extra:  # a session opened for a client it cannot serve
                await self._refuse_era(call, session, reply)
                return
            await session.answer(call.send, call.receive, reply, kind, key=key, extra=extra)
        finally:
            if key is not None:
                session.release(key)
        if reply.closes:
            await self._end(session)

    async def _end(self, session: SessionStreams) -> None:
        """The recorded server exited here: its session is gone (later requests in it get
        404, its GET stream ends), as with the live server."""
        for session_id, known in list(self.sessions.items()):
            if known is session:
                del self.sessions[session_id]
        session.close()
        if session is not self._shared:
            await session.served.aclose()

    # -- GET and DELETE (legacy) ----------------------------------------------------------

    def _session_of(self, scope: Scope) -> SessionStreams | Refusal:
        """The session a GET or DELETE names, or why there is none (400, 404), or a
        protocol version it may not use (400)."""
        session_id = header(scope, b"mcp-session-id")
        if session_id is None:
            return json_refusal(400, -32000, "Bad Request: Mcp-Session-Id header is required")
        session = self.sessions.get(session_id)
        if session is None:
            return _GONE
        return legacy_version_refusal(headers_of(scope)) or session

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._get_refused is not None:
            await send_simple(send, self._get_refused, b"", headers=[(b"allow", b"POST, DELETE")])
            return
        found = legacy_get_refusal(headers_of(scope)) or self._session_of(scope)
        if isinstance(found, Refusal):
            await _refuse(send, found)
            return
        resumed = found.resumable(header(scope, b"last-event-id"))
        if resumed is not None and resumed[0].kind == "post":
            await resume(resumed[0], resumed[1], receive, send)
        elif found.get_streams:
            text = "Conflict: Only one SSE stream is allowed per session"
            await _refuse(send, json_refusal(409, -32000, text))
        else:
            rest = b"".join(resumed[0].events[resumed[1] :]) if resumed is not None else b""
            await found.standalone(rest, receive, send)

    async def _delete(self, scope: Scope, send: Send) -> None:
        found = self._session_of(scope)
        if isinstance(found, Refusal):
            await _refuse(send, found)
            return
        session_id = header(scope, b"mcp-session-id")
        assert session_id is not None
        ended = self.sessions.pop(session_id)
        ended.close()
        await ended.served.aclose()
        await send_simple(send, 200, b"")


def _opens_session(classified: Classified) -> bool:
    """Whether the body is an ``initialize`` request (alone, or in a batch)."""
    values = classified.value if classified.kind is Kind.BATCH else [classified.value]
    return classified.kind in (Kind.REQUEST, Kind.BATCH) and any(
        isinstance(v, dict) and v.get("method") == "initialize" and "id" in v for v in values
    )


def _modern_without_session(session_id: str | None, classified: Classified) -> bool:
    """A 2026-07-28 client's request (its envelope says so) on a legacy cassette, sent
    without a session as that era does: left to the replay, which refuses it with
    ``-32022`` and a miss that says how to record for that client. The legacy session and
    version checks would answer first with a 400 that names neither."""
    if session_id is not None or classified.kind is not Kind.REQUEST:
        return False
    value = classified.value
    # a dual-era client's probe gets what a legacy server gives it, as before
    return value.get("method") != "server/discover" and client_era(value) == "modern"
