"""The streamable-HTTP replay front: an ASGI app that answers as the recorded endpoint did.

Theory of operation
-------------------
The app serves the era its cassette's header names, never guessing from requests:

* **legacy** (sessions): an ``initialize`` POST without a session opens a replay session
  with a fresh ``Mcp-Session-Id`` and its own ``Replayer``, so concurrent sessions never
  consume each other's recordings. Later requests must carry a live session id (unknown:
  404); DELETE ends a session (then 404); GET opens the session's standalone SSE stream;
  ``MCP-Protocol-Version``, when sent, must be a legacy revision. A request with no
  session (a dual-era client's ``server/discover`` probe) is answered from a sessionless
  replayer, with the status the recording shows.
* **modern** (2026-07-28, stateless): every POST is checked as the specification says
  (``MCP-Protocol-Version`` equals the envelope's version, ``Mcp-Method`` the method,
  ``Mcp-Name`` the named parameter; otherwise 400 with -32020) and answered from the one
  replayer of the app; GET and DELETE get 405.

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

import base64
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream

from cassette.core.ids import id_key
from cassette.core.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Kind,
    classify,
    dumps_bytes,
    error_response,
)
from cassette.core.mcp import LEGACY_VERSIONS, NAMED_PARAM, VERSION_META
from cassette.core.model import HttpEvent, RawEvent, Recording, era_of
from cassette.transport import Frame, Reply, Sessions
from cassette.transports._http import (
    BODY_LIMIT,
    SSE_HEADERS,
    Guard,
    Receive,
    Scope,
    Send,
    header,
    read_body,
    send_simple,
    wait_for_disconnect,
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

HEADER_MISMATCH: Final = -32020
_JSON: Final = b"application/json"


def _error_body(code: int, message: str, msg_id: object = None) -> bytes:
    return dumps_bytes(error_response(msg_id, code, message))


_FORBIDDEN: Final = (_error_body(INVALID_REQUEST, "Forbidden origin"), _JSON)


def _decode_header_value(value: str | None) -> str | None:
    """Undo the ``=?base64?...?=`` form the 2026-07-28 revision uses for non-ASCII values."""
    if value is not None and value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except ValueError:
            return None
    return value


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
    ) -> None:
        recording = sessions.recording
        self.max_body = max_body
        self.era = era_of(recording.header)
        self.path = path or _recorded_path(recording) or "/mcp"
        methods = b"POST" if self.era == "modern" else b"GET, POST, DELETE"
        self.guard = Guard(bound_host, _FORBIDDEN, methods, tuple(allowed_origins))
        self.sessions: dict[str, Session] = {}
        self._pool = sessions
        self._by_stream = recording.header.transport != "sse"
        self._shared = self._open()
        self._get_refused = _get_refused(recording)
        self._priming = _primed_streams(recording)

    def _open(self) -> Session:
        session = Session()
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
        send = admitted
        if scope["path"] != self.path:
            await send_simple(send, 404, b"Not Found", b"text/plain")
            return
        method = scope["method"]
        if method == "POST":
            await self._post(scope, receive, send)
        elif self.era == "modern" or method not in ("GET", "DELETE"):
            await send_simple(send, 405, b"", headers=[(b"allow", b"POST")])
        elif method == "GET":
            await self._get(scope, receive, send)
        else:
            await self._delete(scope, send)

    # -- POST ------------------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await read_body(receive, self.max_body, send=send)
        if body is None:
            return
        classified = classify(body)
        if classified.kind is Kind.NOT_JSON:
            text = f"Parse error: {classified.problem}" if classified.problem else "Parse error"
            await send_simple(send, 400, _error_body(PARSE_ERROR, text), _JSON)
            return
        if self.era == "modern":
            rejection = _modern_header_problem(scope, classified.value)
            if rejection is not None:
                msg_id = classified.value.get("id") if isinstance(classified.value, dict) else None
                await send_simple(send, 400, _error_body(HEADER_MISMATCH, rejection, msg_id), _JSON)
                return
            call = _Call(scope, receive, send)
            kind, value = classified.kind, classified.value
            await self._answer(call, self._shared, body, kind, value, extra=[])
            return
        call = _Call(scope, receive, send)
        await self._legacy_post(call, body, classified.kind, classified.value)

    async def _legacy_post(self, call: _Call, body: bytes, kind: Kind, value: Any) -> None:
        scope, send = call.scope, call.send
        version = header(scope, b"mcp-protocol-version")
        if version is not None and version not in LEGACY_VERSIONS:
            text = f"Unsupported protocol version: {version}"
            await send_simple(send, 400, _error_body(INVALID_REQUEST, text), _JSON)
            return
        session_id = header(scope, b"mcp-session-id")
        extra: list[tuple[bytes, bytes]] = []
        if session_id is not None:
            session = self.sessions.get(session_id)
            if session is None:
                await send_simple(send, 404, _error_body(-32001, "Session not found"), _JSON)
                return
        elif kind is Kind.REQUEST and value.get("method") == "initialize":
            session_id = uuid.uuid4().hex
            session = self.sessions[session_id] = self._open()
            extra.append((b"mcp-session-id", session_id.encode()))
        else:
            session = self._shared
        await self._answer(call, session, body, kind, value, extra=extra)

    async def _answer(
        self,
        call: _Call,
        session: Session,
        body: bytes,
        kind: Kind,
        value: Any,
        *,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        # Held before the reply is asked for: what a live server says for this request may
        # come through ``emit`` before the reply itself is back.
        key = id_key(value.get("id")) if kind is Kind.REQUEST else None
        if key is not None:
            session.hold(key)
        try:
            frame = Frame(body, {"headers": call.scope["headers"]})
            reply = self._deliverable(session, await session.conversation.receive(frame))
            if kind in (Kind.RESPONSE, Kind.ERROR):  # a client answer: what it unblocked
                await self._continue(session, reply)
                await send_simple(call.send, 202, b"", headers=extra)
            elif key is not None and (reply.awaiting or reply.pending) and not reply.responded:
                _, more = session.channel(key)
                await self._hold_open(call, session, reply, more, extra)
            elif is_listen(reply):
                await self._listen(call, session, reply)
            else:
                await self._respond(call, session, reply, kind, extra)
        finally:
            if key is not None:
                session.release(key)

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
        on_post = goes_on_post(reply, carries_request=carries, by_stream=self._by_stream)
        status = reply.exchange.status if reply.exchange is not None else None
        posted = [out for out, here in zip(outgoing(reply), on_post, strict=True) if here]
        if not posted:
            await self._write(session, reply, on_post)
            await send_simple(send, status or 202, b"", headers=extra)
            return
        if as_stream(reply, posted):
            headers = [*SSE_HEADERS, *extra]
            await send({"type": "http.response.start", "status": status or 200, "headers": headers})
            stream = EventStream(session, "post")
            head = self._prime(stream, reply)
            await self._write(session, reply, on_post, write=sender(send), stream=stream, head=head)
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
                if not on_post[index]:
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
        while reply.awaiting and session.get_streams == 0 and request_on_get(reply):
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
        on_post = goes_on_post(reply, carries_request=True, by_stream=self._by_stream)
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        stream = EventStream(session, "post")
        await self._write(session, reply, on_post, write=sender(send), stream=stream)
        await wait_for_disconnect(call.receive, anyio.Event())

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
        status = reply.exchange.status if reply.exchange is not None else None
        headers = [*SSE_HEADERS, *extra]
        await send({"type": "http.response.start", "status": status or 200, "headers": headers})
        stream = EventStream(session, "post")
        write = sender(send)
        on_post = goes_on_post(reply, carries_request=True, by_stream=self._by_stream)
        head = self._prime(stream, reply)
        await self._write(session, reply, on_post, write=write, stream=stream, head=head)
        while not reply.responded and (reply.awaiting or reply.pending):
            with anyio.move_on_after(conversation.remaining()):
                try:
                    reply = self._deliverable(session, await more.receive())
                except anyio.EndOfStream:
                    break  # the front is stopping
                on_post = goes_on_post(reply, carries_request=True, by_stream=self._by_stream)
                await self._write(session, reply, on_post, write=write, stream=stream)
                continue
            for late in conversation.overdue():
                await self._continue(session, late)
        await send({"type": "http.response.body", "body": b""})

    # -- GET and DELETE (legacy) ----------------------------------------------------------

    def _session_of(self, scope: Scope) -> tuple[int, Session | None]:
        session_id = header(scope, b"mcp-session-id")
        if session_id is None:
            return 400, None
        session = self.sessions.get(session_id)
        return (404, None) if session is None else (200, session)

    async def _get(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._get_refused is not None:
            await send_simple(send, self._get_refused, b"", headers=[(b"allow", b"POST, DELETE")])
            return
        if "text/event-stream" not in (header(scope, b"accept") or ""):
            await send_simple(send, 406, _error_body(INVALID_REQUEST, "Not Acceptable"), _JSON)
            return
        status, session = self._session_of(scope)
        if session is None:
            text = "Session not found" if status == 404 else "Bad Request: no session id"
            await send_simple(send, status, _error_body(-32000, text), _JSON)
            return
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        resumed_post = await self._resume(session, header(scope, b"last-event-id"), send)
        if resumed_post:  # a POST's stream resumed to its end: this GET ends there too
            await send({"type": "http.response.body", "body": b""})
            return
        stream = EventStream(session, "get")
        gone = anyio.Event()
        session.get_streams += 1
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_for_disconnect, receive, gone)
            try:
                async for message in session.receiver:
                    chunk = stream.message(message)
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
            except (anyio.BrokenResourceError, OSError):
                pass  # the client went away
            finally:
                session.get_streams -= 1
                tg.cancel_scope.cancel()
        if not gone.is_set():
            await send({"type": "http.response.body", "body": b""})

    async def _resume(self, session: Session, last_id: str | None, send: Send) -> bool:
        """Resend what followed ``Last-Event-ID`` on its stream; True if it was a POST's."""
        if not last_id or "/" not in last_id:
            return False
        name, _, number = last_id.rpartition("/")
        events = session.history.get(name)
        if events is None or not number.isdigit():
            return False
        rest = b"".join(events[int(number) :])
        if rest:
            await send({"type": "http.response.body", "body": rest, "more_body": True})
        return name.startswith("post-")

    async def _delete(self, scope: Scope, send: Send) -> None:
        status, session = self._session_of(scope)
        if session is None:
            await send_simple(send, status, b"")
            return
        session_id = header(scope, b"mcp-session-id")
        assert session_id is not None
        ended = self.sessions.pop(session_id)
        ended.close()
        await ended.conversation.aclose()
        await send_simple(send, 200, b"")


def _modern_header_problem(scope: Scope, value: Any) -> str | None:
    if not isinstance(value, dict) or "method" not in value:
        return None
    raw_params = value.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    raw_meta = params.get("_meta")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    if header(scope, b"mcp-protocol-version") != meta.get(VERSION_META):
        return "MCP-Protocol-Version header does not match the request envelope's version"
    method = value["method"]
    if header(scope, b"mcp-method") != method:
        return "Mcp-Method header does not match the request body's method"
    name_key = NAMED_PARAM.get(method)
    expected = params.get(name_key) if name_key else None
    if isinstance(expected, str) and _decode_header_value(header(scope, b"mcp-name")) != expected:
        return f"Mcp-Name header does not match the request body's {name_key!r}"
    return None


def _recorded_path(recording: Recording) -> str | None:
    url = recording.header.target.get("url")
    return (urlsplit(url).path or "/") if isinstance(url, str) else None


def _primed_streams(recording: Recording) -> dict[str, int | None]:
    """Recorded POST streams that opened with a 2025-11-25 priming event, with its retry."""
    primed: dict[str, int | None] = {}
    for event in recording.events:
        meta = getattr(event, "meta", None)
        if isinstance(event, RawEvent) and event.text == "" and meta and meta.get("sse"):
            stream = meta.get("stream")
            retry = meta.get("retry")
            if isinstance(stream, str) and stream not in primed:
                primed[stream] = retry if isinstance(retry, int) else None
    return primed


def _get_refused(recording: Recording) -> int | None:
    """A recorded server that refused GET (405) gets the same answer from its replay."""
    statuses = {
        e.status for e in recording.events if isinstance(e, HttpEvent) and e.method == "GET"
    }
    return 405 if statuses == {405} else None
