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

Given an ``HttpExtender`` (``new_episodes``), every POST is offered to it after the replay
has answered it: a request the replay missed is answered live instead, and appended (see
``cassette.transports._http_extend``).
"""

from __future__ import annotations

import base64
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import urlsplit

import anyio
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    Kind,
    classify,
    dumps_bytes,
    error_response,
)
from cassette.core.matching import MissReport, Strategy
from cassette.core.model import LEGACY_VERSIONS, HttpEvent, RawEvent, Recording, era_of
from cassette.core.replayer import ReplaySessions, Reply, Responder, ResponderPool
from cassette.transports._http import (
    BODY_LIMIT,
    Receive,
    Scope,
    Send,
    admitted,
    header,
    read_body,
    send_simple,
    wait_for_disconnect,
)

if TYPE_CHECKING:
    from cassette.transports._http_extend import HttpExtender

__all__ = ["HttpReplayApp"]

HEADER_MISMATCH: Final = -32020
_JSON: Final = b"application/json"
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
_NAME_PARAM: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
_MODERN_VERSION: Final = "io.modelcontextprotocol/protocolVersion"


def _error_body(code: int, message: str, msg_id: object = None) -> bytes:
    return dumps_bytes(error_response(msg_id, code, message))


_FORBIDDEN: Final = (_error_body(INVALID_REQUEST, "Forbidden origin"), _JSON)


class _EventStream:
    """One SSE response of a replay session: numbers its events and keeps them for resuming.

    Event ids are ``<stream>/<n>`` (``post-2/1``, ``get-1/4``): unique in the session and
    saying which stream they belong to, so a GET with ``Last-Event-ID`` can resume it.
    """

    def __init__(self, session: _Session, kind: str) -> None:
        session.streams += 1
        self.name = f"{kind}-{session.streams}"
        self.events: list[bytes] = []
        session.history[self.name] = self.events

    def _id(self) -> bytes:
        return f"{self.name}/{len(self.events) + 1}".encode()

    def message(self, message: Any) -> bytes:
        data = b"id: " + self._id() + b"\nevent: message\ndata: " + dumps_bytes(message) + b"\n\n"
        self.events.append(data)
        return data

    def priming(self, retry: int | None) -> bytes:
        """The 2025-11-25 priming event (an id and empty data), and ``retry`` if recorded."""
        data = b"id: " + self._id() + b"\n"
        if retry is not None:
            data += b"retry: " + str(retry).encode() + b"\n"
        data += b"data: \n\n"
        self.events.append(data)
        return data


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


class _Session:
    """One replay session: its own consumption state and its standalone GET stream."""

    def __init__(self, replayer: Responder) -> None:
        self.replayer = replayer
        self.sender: MemoryObjectSendStream[Any]
        self.receiver: MemoryObjectReceiveStream[Any]
        self.sender, self.receiver = anyio.create_memory_object_stream[Any](float("inf"))
        self.get_streams = 0  # standalone GET streams open right now
        self.streams = 0  # SSE responses so far (names their events)
        self.history: dict[str, list[bytes]] = {}  # events sent, per stream, for resuming
        # POST streams held open while the replay waits for a client answer, by request id
        self.waiting_posts: dict[object, MemoryObjectSendStream[Reply]] = {}

    def push(self, messages: Sequence[Any]) -> None:
        for message in messages:
            try:
                self.sender.send_nowait(message)
            except anyio.ClosedResourceError:
                return

    def close(self) -> None:
        self.sender.close()


class HttpReplayApp:
    """ASGI app serving one cassette over streamable HTTP (see the module docstring).

    ``sessions`` answers in place of the cassette's replays (``cassette mock`` passes its
    manifest's); ``recording`` then only says how to serve: era, path, recorded statuses.
    """

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        path: str | None = None,
        bound_host: str = "127.0.0.1",
        on_miss: Callable[[str], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        answer_timeout: float = 30.0,
        sessions: ResponderPool | None = None,
        max_body: int = BODY_LIMIT,
        extender: HttpExtender | None = None,
    ) -> None:
        self.extender = extender  # new_episodes: what the replay lacks goes live
        self.on_warning = on_warning
        self.answer_timeout = answer_timeout
        self.max_body = max_body
        self.era = era_of(recording.header)
        self.path = path or _recorded_path(recording) or "/mcp"
        self.bound_host = bound_host
        self.on_miss = on_miss
        self.sessions: dict[str, _Session] = {}
        self._replays: ResponderPool = sessions or ReplaySessions(
            recording, strategy, environ=os.environ
        )
        self._by_stream = recording.header.transport != "sse"
        self._shared = _Session(self._replays.new())
        self._get_refused = _get_refused(recording)
        self._priming = _primed_streams(recording)

    @property
    def misses(self) -> list[MissReport]:
        """Every miss of every session served so far."""
        return self._replays.misses

    def summary(self) -> str:
        """All sessions' misses, for a person ("" when there were none)."""
        return self._replays.summary()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not await admitted(scope, receive, send, self.bound_host, _FORBIDDEN):
            return
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
            await self._answer(call, self._shared, body, classified.kind, [])
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
            session = self.sessions[session_id] = _Session(self._replays.new())
            extra.append((b"mcp-session-id", session_id.encode()))
        else:
            session = self._shared
        await self._answer(call, session, body, kind, extra)

    async def _answer(
        self,
        call: _Call,
        session: _Session,
        body: bytes,
        kind: Kind,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        send = call.send
        reply = session.replayer.receive_frame(body)
        if self.extender is not None and await self.extender.took(
            session, body, reply, scope=call.scope, receive=call.receive, send=send, extra=extra
        ):
            if reply.miss is not None:  # answered live after all: not a miss
                session.replayer.misses.remove(reply.miss)
            return
        reply = self._settle(session, reply)
        if kind in (Kind.RESPONSE, Kind.ERROR):  # a client answer: what it unblocked goes on
            self._continue(session, reply)
            await send_simple(send, 202, b"", headers=extra)
            return
        carries = kind in (Kind.REQUEST, Kind.BATCH)
        on_post, elsewhere = _route(reply, carries_request=carries, by_stream=self._by_stream)
        session.push(elsewhere)
        status = reply.exchange.status if reply.exchange is not None else None
        if reply.awaiting and not reply.responded:
            await self._hold_open(send, session, reply, on_post, extra)
            return
        if _is_listen(reply):
            await self._listen(send, call.receive, session, reply, on_post)
            return
        if not on_post:
            await send_simple(send, status or 202, b"", headers=extra)
            return
        if _as_stream(reply, on_post):
            headers = [*_SSE_HEADERS, *extra]
            await send({"type": "http.response.start", "status": status or 200, "headers": headers})
            stream = _EventStream(session, "post")
            chunk = self._prime(stream, reply) + b"".join(stream.message(m) for m, _ in on_post)
            await send({"type": "http.response.body", "body": chunk})
            return
        payload = on_post[-1][0]
        await send_simple(send, status or 200, dumps_bytes(payload), _JSON, extra)

    def _settle(self, session: _Session, reply: Reply) -> Reply:
        """Report what a reply says for people; a server request bound for a GET stream that
        is not open is dropped, as the live server drops it, and the replay goes on."""
        if reply.miss is not None and self.on_miss is not None:
            self.on_miss(session.replayer.describe(reply.miss))
        for warning in reply.warnings:
            if self.on_warning is not None:
                self.on_warning(warning)
        while reply.awaiting and session.get_streams == 0 and _request_on_get(reply):
            more = session.replayer.undelivered(reply.awaiting[0])
            reply = attrs.evolve(
                more,
                messages=reply.messages + more.messages,
                metas=reply.metas + more.metas,
                times=reply.times + more.times,
                origin=reply.origin,
            )
        return reply

    async def _listen(
        self,
        send: Send,
        receive: Receive,
        session: _Session,
        reply: Reply,
        on_post: list[tuple[Any, Mapping[str, Any] | None]],
    ) -> None:
        """A 2026-07-28 ``subscriptions/listen`` stream: its recorded notifications
        (the acknowledgement first), then open until the client closes it."""
        await send({"type": "http.response.start", "status": 200, "headers": list(_SSE_HEADERS)})
        stream = _EventStream(session, "post")
        chunk = b"".join(stream.message(m) for m, _ in on_post)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await wait_for_disconnect(receive, anyio.Event())

    def _prime(self, stream: _EventStream, reply: Reply) -> bytes:
        recorded = reply.exchange.stream if reply.exchange is not None else None
        if recorded is None or recorded not in self._priming:
            return b""
        return stream.priming(self._priming[recorded])

    def _continue(self, session: _Session, reply: Reply) -> None:
        held = session.waiting_posts.get(_key(reply.origin))
        if held is not None:
            held.send_nowait(reply)
            return
        session.push(reply.messages)  # nobody holds the request's stream: the GET stream

    async def _hold_open(
        self,
        send: Send,
        session: _Session,
        reply: Reply,
        on_post: list[tuple[Any, Mapping[str, Any] | None]],
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Answer as an SSE stream that stays open until the replay has the response."""
        status = reply.exchange.status if reply.exchange is not None else None
        headers = [*_SSE_HEADERS, *extra]
        await send({"type": "http.response.start", "status": status or 200, "headers": headers})
        stream = _EventStream(session, "post")
        chunk = self._prime(stream, reply) + b"".join(stream.message(m) for m, _ in on_post)
        await send({"type": "http.response.body", "body": chunk, "more_body": True})
        inbox, outbox = anyio.create_memory_object_stream[Reply](float("inf"))
        key = _key(reply.origin)
        session.waiting_posts[key] = inbox
        awaiting = list(reply.awaiting)
        try:
            while True:
                with anyio.move_on_after(self.answer_timeout):
                    reply = await outbox.receive()
                    awaiting = list(reply.awaiting)
                    on_post, elsewhere = _route(
                        reply, carries_request=True, by_stream=self._by_stream
                    )
                    session.push(elsewhere)
                    chunk = b"".join(stream.message(m) for m, _ in on_post)
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                    if reply.responded or not awaiting:
                        break
                    continue
                expired = self._settle(session, session.replayer.expire(awaiting[0]))
                chunk = b"".join(stream.message(m) for m in expired.messages)
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                break
        finally:
            session.waiting_posts.pop(key, None)
        await send({"type": "http.response.body", "body": b""})

    # -- GET and DELETE (legacy) ----------------------------------------------------------

    def _session_of(self, scope: Scope) -> tuple[int, _Session | None]:
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
        await send({"type": "http.response.start", "status": 200, "headers": list(_SSE_HEADERS)})
        resumed_post = await self._resume(session, header(scope, b"last-event-id"), send)
        if resumed_post:  # a POST's stream resumed to its end: this GET ends there too
            await send({"type": "http.response.body", "body": b""})
            return
        stream = _EventStream(session, "get")
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

    async def _resume(self, session: _Session, last_id: str | None, send: Send) -> bool:
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
        self.sessions.pop(session_id).close()
        await send_simple(send, 200, b"")


def _key(value: object) -> object:
    return (type(value).__name__, value)


def _is_listen(reply: Reply) -> bool:
    exchange = reply.exchange
    return (
        exchange is not None
        and exchange.message.get("method") == "subscriptions/listen"
        and not reply.responded
    )


def _request_on_get(reply: Reply) -> bool:
    """Whether the server request the reply waits on was recorded on a GET stream."""
    for message, meta in zip(reply.messages, reply.metas, strict=True):
        is_request = isinstance(message, dict) and "method" in message
        if is_request and message.get("id") == reply.awaiting[0]:
            stream = meta.get("stream") if meta else None
            return isinstance(stream, str) and stream.startswith("get-")
    return False


def _route(
    reply: Reply, *, carries_request: bool, by_stream: bool = True
) -> tuple[list[tuple[Any, Mapping[str, Any] | None]], list[Any]]:
    """Split a reply into what goes back on the POST and what goes on the GET stream.

    ``by_stream`` is off for cassettes recorded on the legacy HTTP+SSE transport, where
    everything (responses included) travelled on the one GET stream: their streams say
    nothing about where a streamable-HTTP client expects a message.
    """
    on_post: list[tuple[Any, Mapping[str, Any] | None]] = []
    elsewhere: list[Any] = []
    for message, meta in zip(reply.messages, reply.metas, strict=True):
        stream = meta.get("stream") if meta and by_stream else None
        recorded_on_get = isinstance(stream, str) and stream.startswith("get-")
        if recorded_on_get or (stream is None and not carries_request):
            elsewhere.append(message)
        else:
            on_post.append((message, meta))
    return on_post, elsewhere


def _as_stream(reply: Reply, on_post: list[tuple[Any, Mapping[str, Any] | None]]) -> bool:
    if any(meta and meta.get("sse") for _, meta in on_post):
        return True
    recorded_json = any(meta and meta.get("stream") for _, meta in on_post)
    return not recorded_json and len(on_post) > 1 and reply.exchange is not None


def _modern_header_problem(scope: Scope, value: Any) -> str | None:
    if not isinstance(value, dict) or "method" not in value:
        return None
    raw_params = value.get("params")
    params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
    raw_meta = params.get("_meta")
    meta: dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
    if header(scope, b"mcp-protocol-version") != meta.get(_MODERN_VERSION):
        return "MCP-Protocol-Version header does not match the request envelope's version"
    method = value["method"]
    if header(scope, b"mcp-method") != method:
        return "Mcp-Method header does not match the request body's method"
    name_key = _NAME_PARAM.get(method)
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
