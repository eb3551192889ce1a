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
``cassette.transports._http_checks``), and refused with their status and error code.

A client that lost a POST's event stream resumes it with a GET carrying ``Last-Event-ID``:
it gets exactly the events it had not received, those still to come included (the
response too), and the GET ends with the POST's stream. A recorded GET that resumed a
POST's stream is served as part of that POST.

Memory follows the open sessions, not the sessions served: a session ended by DELETE, or
by the recorded server's exit, is dropped at once (the runtime keeps only its misses), and
one a client abandoned (no request and no open stream for ``idle_timeout`` seconds, 10
minutes by default) is ended as if deleted: a request in it later gets 404, which the
specification tells a client to answer by opening a new session. The check runs as
requests arrive, at most once a second, so a front nobody talks to does nothing.

A POST is answered as it was recorded: the recorded status, JSON or an SSE stream. Server
messages recorded on the POST's own stream come back on it; those recorded on a GET stream
go to the session's GET stream. A cassette recorded over stdio has no such facts: a request
is answered on its POST (as SSE when notifications precede the response), and what a client
notification caused goes to the GET stream.

The app answers from a ``cassette.transport.Sessions``: one ``ClientSession`` per replay
session, opened by the runtime's delivery policy (``cassette.runtime``), which decides
what each reply is, reports misses, refuses oversized messages, paces and fails server
requests the client leaves unanswered. The app only routes. A reply that is ``pending``
(answered live, under ``new_episodes``) holds its POST open like one that awaits the
client; the rest of it comes through the session's ``emit``, routed by the request it
answers: onto that POST's stream while it is open, else onto the GET stream.
"""

from __future__ import annotations

import contextlib
import math
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final

import anyio
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream

from cassette.core.ids import id_key
from cassette.core.jsonrpc import INVALID_REQUEST, Classified, Kind, classify, dumps_bytes
from cassette.core.model import era_of
from cassette.core.negotiation import client_era
from cassette.transport import Frame, Reply, Sessions
from cassette.transports._http import (
    BODY_LIMIT,
    SSE_HEADERS,
    DropConnection,
    Guard,
    Receive,
    Scope,
    Send,
    header,
    read_body,
    send_simple,
    wait_for_disconnect,
)
from cassette.transports._http_checks import (
    Refusal,
    json_refusal,
    legacy_get_refusal,
    legacy_post_refusal,
    legacy_version_refusal,
    modern_post_refusal,
)
from cassette.transports._http_recorded import (
    get_refused,
    modern_versions,
    primed_streams,
    recorded_path,
    resumed_streams,
    sessionless_methods,
)
from cassette.transports._http_session import (
    EventStream,
    Session,
    as_stream,
    goes_on_post,
    is_listen,
    outgoing,
    request_on_get,
    sender,
)

__all__ = ["HttpReplayApp"]

_JSON: Final = b"application/json"
_FORBIDDEN: Final = (json_refusal(403, INVALID_REQUEST, "Forbidden origin").body, _JSON)
_NO_SESSION: Final = json_refusal(400, -32000, "Bad Request: Server not initialized")
_GONE: Final = json_refusal(404, -32001, "Session not found")
_LEGACY_METHODS: Final = b"GET, POST, DELETE"
#: Seconds a session may go without a request or an open stream before it is ended.
IDLE_TIMEOUT: Final = 600.0
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

    ``sessions`` answers (the runtime's ``SessionPool``: a cassette's replay, a mock's,
    an extension's); its ``recording`` says how to serve: era, path, recorded statuses.
    """

    def __init__(
        self,
        sessions: Sessions,
        *,
        path: str | None = None,
        bound_host: str = "127.0.0.1",
        max_body: int = BODY_LIMIT,
        allowed_origins: Sequence[str] = (),
        idle_timeout: float = IDLE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        recording = sessions.recording
        self.idle_timeout = idle_timeout
        self._clock = clock  # for idle sessions; a test may bring its own
        self._swept_at = -math.inf
        self.max_body = max_body
        self.era = era_of(recording.header)
        self.path = path or recorded_path(recording) or "/mcp"
        methods = b"POST" if self.era == "modern" else _LEGACY_METHODS
        self.guard = Guard(bound_host, _FORBIDDEN, methods, tuple(allowed_origins))
        self.sessions: dict[str, Session] = {}
        self._pool = sessions
        self._by_stream = recording.header.transport != "sse"
        self._shared = self._open()
        self._get_refused = get_refused(recording)
        self._priming = primed_streams(recording)
        self._versions = modern_versions(recording)
        self._sessionless = sessionless_methods(recording)
        self._resumed = resumed_streams(recording)

    def _open(self) -> Session:
        session = Session(self._clock())
        session.conversation = self._pool.open(lambda reply: self._continue(session, reply))
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

    def _touch(self, scope: Scope) -> None:
        """A request names its session: it is in use."""
        found = self.sessions.get(header(scope, b"mcp-session-id") or "")
        if found is not None:
            found.used_at = self._clock()

    def _route(self, reply: Reply, *, carries_request: bool) -> list[bool]:
        """For each message of ``reply``: whether it goes back on the POST."""
        return goes_on_post(
            reply, carries_request=carries_request, by_stream=self._by_stream, resumed=self._resumed
        )

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
            refusal = modern_post_refusal(scope["headers"], classified, self._versions)
            if refusal is not None:
                await _refuse(send, refusal)
                return
            await self._answer(call, self._shared, body, classified, extra=[])
            return
        await self._legacy_post(call, body, classified)

    @staticmethod
    def _status(reply: Reply) -> int | None:
        """The status ``reply`` goes out with: the one its responder chose for this client
        (``Reply.status``: a legacy client of a modern cassette, a refused era), else the
        recorded one."""
        if reply.status is not None:
            return reply.status
        return reply.exchange.status if reply.exchange is not None else None

    async def _refuse_era(self, call: _Call, session: Session, reply: Reply) -> None:
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
        refusal = legacy_post_refusal(scope["headers"], classified)
        if refusal is None and not _modern_without_session(session_id, classified):
            refusal = self._session_refusal(session_id, opens, classified)
            refusal = refusal or legacy_version_refusal(scope["headers"])
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
        session: Session,
        body: bytes,
        classified: Classified,
        *,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        # Held before the reply is asked for: what a live server says for this request may
        # come through ``emit`` before the reply itself is back.
        kind = classified.kind
        key = id_key(classified.value.get("id")) if kind is Kind.REQUEST else None
        if key is not None:
            session.hold(key)
        try:
            frame = Frame(body, {"headers": call.scope["headers"]})
            answer = await session.conversation.receive(frame, classified)  # decoded once
            reply = self._deliverable(session, answer)
            if reply.refuses_era and extra:  # a session opened for a client it cannot serve
                await self._refuse_era(call, session, reply)
                return
            if reply.drops:
                await _drop(call.send, extra)
            if kind in (Kind.RESPONSE, Kind.ERROR):  # a client answer: what it unblocked
                await self._continue(session, reply)
                await send_simple(call.send, 202, b"", headers=extra)
            elif key is not None and _incomplete(reply):
                _, more = session.channel(key)
                await self._hold_open(call, session, reply, more, extra)
            elif is_listen(reply):
                await self._listen(call, session, reply)
            else:
                await self._respond(call, session, reply, kind, extra)
        finally:
            if key is not None:
                session.release(key)
        if reply.closes:
            await self._end(session)

    async def _end(self, session: Session) -> None:
        """The recorded server exited here: its session is gone (later requests in it get
        404, its GET stream ends), as with the live server."""
        for session_id, known in list(self.sessions.items()):
            if known is session:
                del self.sessions[session_id]
        session.close()
        if session is not self._shared:
            await session.conversation.aclose()

    async def _respond(
        self,
        call: _Call,
        session: Session,
        reply: Reply,
        kind: Kind,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Answer a POST as it was recorded: a status, JSON, or an SSE stream."""
        send = call.send
        carries = kind in (Kind.REQUEST, Kind.BATCH)
        on_post = self._route(reply, carries_request=carries)
        status = self._status(reply)
        posted = [out for out, here in zip(outgoing(reply), on_post, strict=True) if here]
        if not posted:
            await self._write(session, reply, on_post)
            await send_simple(send, status or 202, b"", headers=extra)
            return
        if as_stream(reply, posted):
            headers = [*SSE_HEADERS, *extra]
            await send({"type": "http.response.start", "status": status or 200, "headers": headers})
            stream = EventStream(session, "post")
            try:
                head = self._prime(stream, reply)
                write = sender(send)
                await self._write(session, reply, on_post, write=write, stream=stream, head=head)
            finally:
                stream.finish()
            await send({"type": "http.response.body", "body": b""})
            return
        await self._write(session, reply, on_post)
        await send_simple(send, status or 200, dumps_bytes(posted[-1][0]), _JSON, extra)

    async def _write(
        self,
        session: Session,
        reply: Reply,
        on_post: Sequence[bool],
        *,
        write: Callable[[bytes], Awaitable[None]] | None = None,
        stream: EventStream | None = None,
        head: bytes = b"",
    ) -> None:
        """Send a reply's messages as the session paces them: those ``on_post`` as events
        of ``stream`` (through ``write``; none: the caller sends them itself), the rest onto
        the GET stream. ``head`` goes first (a priming event)."""
        index = 0
        async for group in session.conversation.paced(reply):
            chunk = head
            head = b""
            for message, _ in group:
                listen = session.listen_for(message)
                if listen is not None:  # caused here, sent on the live listen stream
                    with contextlib.suppress(anyio.ClosedResourceError):
                        listen.send_nowait(message)
                elif not on_post[index]:
                    session.push((message,))
                elif stream is not None:
                    chunk += stream.message(message)
                index += 1
            if chunk and write is not None:
                await write(chunk)
        if head and write is not None:
            await write(head)

    def _deliverable(self, session: Session, reply: Reply) -> Reply:
        """A server request bound for a GET stream that is not open is dropped, as the
        live server drops it, and the replay goes on."""
        while reply.awaiting and session.get_streams == 0 and request_on_get(reply, self._resumed):
            more = session.conversation.undelivered(reply.awaiting[0])
            reply = attrs.evolve(
                more,
                messages=reply.messages + more.messages,
                metas=reply.metas + more.metas,
                times=reply.times + more.times,
                origin=reply.origin,
            )
        return reply

    async def _listen(self, call: _Call, session: Session, reply: Reply) -> None:
        """A 2026-07-28 ``subscriptions/listen`` stream: its recorded notifications
        (the acknowledgement first), then open until the client closes it."""
        send = call.send
        on_post = self._route(reply, carries_request=True)
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        stream = EventStream(session, "post")
        write = sender(send)
        key = id_key(reply.origin)
        later, tagged = anyio.create_memory_object_stream[Any](float("inf"))
        try:
            await self._write(session, reply, on_post, write=write, stream=stream)
            session.listens[key] = later
            async with anyio.create_task_group() as tg:
                tg.start_soon(_forward_events, tagged, stream, write)
                await wait_for_disconnect(call.receive, anyio.Event())
                tg.cancel_scope.cancel()
        finally:
            if session.listens.get(key) is later:
                del session.listens[key]
            later.close()
            stream.finish()

    def _prime(self, stream: EventStream, reply: Reply) -> bytes:
        """The priming event the recorded stream opened with, if it had one."""
        recorded = reply.exchange.stream if reply.exchange is not None else None
        if recorded is None or recorded not in self._priming:
            return b""
        return stream.priming(self._priming[recorded])

    async def _continue(self, session: Session, reply: Reply) -> None:
        """A reply that came later (after a client answer, live, overdue): to the POST of
        the request it belongs to while that is open, else to the GET stream."""
        key = id_key(reply.origin)
        if key in session.open:
            session.channel(key)[0].send_nowait(reply)
            return
        reply = self._deliverable(session, reply)
        async for group in session.conversation.paced(reply):
            session.push([message for message, _ in group])

    async def _hold_open(
        self,
        call: _Call,
        session: Session,
        reply: Reply,
        more: MemoryObjectReceiveStream[Reply],
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Answer as an SSE stream that stays open until the request has its response:
        what follows a client's answer, a live server's messages, or the error a server
        request left unanswered past its deadline gets."""
        send, conversation = call.send, session.conversation
        status = self._status(reply)
        headers = [*SSE_HEADERS, *extra]
        await send({"type": "http.response.start", "status": status or 200, "headers": headers})
        stream = EventStream(session, "post")
        write = sender(send)
        try:
            on_post = self._route(reply, carries_request=True)
            head = self._prime(stream, reply)
            await self._write(session, reply, on_post, write=write, stream=stream, head=head)
            while _incomplete(reply):
                with anyio.move_on_after(conversation.remaining()):
                    try:
                        reply = self._deliverable(session, await more.receive())
                    except anyio.EndOfStream:
                        break  # the front is stopping
                    on_post = self._route(reply, carries_request=True)
                    await self._write(session, reply, on_post, write=write, stream=stream)
                    continue
                for late in conversation.overdue():
                    await self._continue(session, late)
        finally:
            stream.finish()
        await send({"type": "http.response.body", "body": b""})

    # -- GET and DELETE (legacy) ----------------------------------------------------------

    def _session_of(self, scope: Scope) -> Session | Refusal:
        """The session a GET or DELETE names, or why there is none (400, 404), or a
        protocol version it may not use (400)."""
        session_id = header(scope, b"mcp-session-id")
        if session_id is None:
            return json_refusal(400, -32000, "Bad Request: Mcp-Session-Id header is required")
        session = self.sessions.get(session_id)
        if session is None:
            return _GONE
        return legacy_version_refusal(scope["headers"]) or session

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._get_refused is not None:
            await send_simple(send, self._get_refused, b"", headers=[(b"allow", b"POST, DELETE")])
            return
        found = legacy_get_refusal(scope["headers"]) or self._session_of(scope)
        if isinstance(found, Refusal):
            await _refuse(send, found)
            return
        resumed = found.resumable(header(scope, b"last-event-id"))
        if resumed is not None and resumed[0].kind == "post":
            await self._resume(resumed[0], resumed[1], receive, send)
        elif found.get_streams:
            text = "Conflict: Only one SSE stream is allowed per session"
            await _refuse(send, json_refusal(409, -32000, text))
        else:
            rest = b"".join(resumed[0].events[resumed[1] :]) if resumed is not None else b""
            await self._standalone(found, rest, receive, send)

    async def _standalone(
        self, session: Session, rest: bytes, receive: Receive, send: Send
    ) -> None:
        """The session's standalone stream, until the client closes it or the session
        ends; ``rest`` first (what an earlier GET stream had not delivered)."""
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        stream = EventStream(session, "get")
        session.get_streams += 1
        write = sender(send)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
                with contextlib.suppress(anyio.BrokenResourceError, OSError):  # client gone
                    if rest:
                        await write(rest)
                    async for message in session.receiver:
                        await write(stream.message(message))
                tg.cancel_scope.cancel()
        finally:
            session.get_streams -= 1
            stream.finish()
        await _end(send)

    async def _resume(self, stream: EventStream, after: int, receive: Receive, send: Send) -> None:
        """A POST's stream resumed: the events after the ``after``-th, as they come, and
        the end with the POST's (its response included: exactly what the client lacked)."""
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        write = sender(send)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
            with contextlib.suppress(anyio.BrokenResourceError, OSError):  # client gone
                async for chunk in stream.tail(after):
                    await write(chunk)
            tg.cancel_scope.cancel()
        await _end(send)

    async def _delete(self, scope: Scope, send: Send) -> None:
        found = self._session_of(scope)
        if isinstance(found, Refusal):
            await _refuse(send, found)
            return
        session_id = header(scope, b"mcp-session-id")
        assert session_id is not None
        ended = self.sessions.pop(session_id)
        ended.close()
        await ended.conversation.aclose()
        await send_simple(send, 200, b"")


def _opens_session(classified: Classified) -> bool:
    """Whether the body is an ``initialize`` request (alone, or in a batch)."""
    values = classified.value if classified.kind is Kind.BATCH else [classified.value]
    return classified.kind in (Kind.REQUEST, Kind.BATCH) and any(
        isinstance(v, dict) and v.get("method") == "initialize" and "id" in v for v in values
    )


async def _drop(send: Send, extra: list[tuple[bytes, bytes]]) -> None:
    """Cut the connection without an answer (a fault plan's disconnect): the response
    starts as an event stream, as a server that died mid-answer leaves it, and ends
    unterminated."""
    headers = [*SSE_HEADERS, *extra]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    raise DropConnection


async def _end(send: Send) -> None:
    """End a streaming response (its client may have gone away just now)."""
    with contextlib.suppress(OSError):
        await send({"type": "http.response.body", "body": b""})


async def _forward_events(
    messages: MemoryObjectReceiveStream[Any],
    stream: EventStream,
    write: Callable[[bytes], Awaitable[None]],
) -> None:
    """Write what other requests' replays send to a listen stream, as its events."""
    async for message in messages:
        await write(stream.message(message))


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


def _incomplete(reply: Reply) -> bool:
    """Whether more of a request's reply is still to come: the client's answer to a server
    request, a live answer, or the end of a wait for an answer the recording lacks."""
    return not reply.responded and bool(reply.awaiting or reply.pending or reply.unanswered)


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """End a streaming response's work when its client goes away."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()
