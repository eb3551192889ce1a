"""The legacy HTTP+SSE (2024-11-05) replay front: an ASGI app that answers as the server did.

Theory of operation
-------------------
A GET to the stream path opens a replay session: a fresh session id, its own ``Replayer``
(so concurrent sessions never consume each other's recordings) and an event stream whose
first event is ``endpoint``, naming ``<post path>?sessionId=<id>``. Whatever the
recording shows the server saying before the client spoke follows it.

A POST to that endpoint is answered ``202 Accepted`` at once, as a 2024-11-05 server does;
its replayed answers (notifications, server requests, the response, in recorded order) go
out on the session's stream. A POST for an unknown or ended session gets 404, one without
a session 400, and, as the reference servers answer them, a body that is not
``application/json`` or not one JSON-RPC message (a batch, an ``id: null``) 400. A
recorded POST status other than 202 is replayed, but only from a cassette recorded on
this transport: statuses of another transport mean something else.

Routing needs no transport facts: in this transport everything the server says travels
on the one stream, so a cassette recorded over stdio or streamable HTTP serves here as it
is. The session's stream writer bounds each wait by the session's next answer deadline
and writes what is overdue, so a server request the client never answers fails as on the
other fronts; messages a live server sends on its own (``new_episodes``) come through the
session's ``emit`` onto the same stream.

The stream path is the recorded one for a cassette recorded on this transport (the
upstream URL's path), ``/sse`` otherwise. When the GET stream closes, its session ends.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.wire.jsonrpc import Kind, classify, classify_value, dumps_bytes, is_answer
from cassette.core.wire.meta import HEADERS
from cassette.core.wire.model import Recording
from cassette.transport import DRAIN_DEADLINE, Frame, Reply, ServedSession, SessionPool
from cassette.transports._drain import Counter, tcp_peer_counter, until_read
from cassette.transports.http._http import (
    BODY_LIMIT,
    SSE_HEADERS,
    Guard,
    Receive,
    Scope,
    Send,
    headers_of,
    read_body,
    send_simple,
)
from cassette.transports.http._http_checks import sse_post_refusal

__all__ = ["DEFAULT_POST_PATH", "DEFAULT_STREAM_PATH", "SseReplayApp"]

DEFAULT_STREAM_PATH: Final = "/sse"
DEFAULT_POST_PATH: Final = "/message"
_SESSION_PARAM: Final = "sessionId"
_TEXT: Final = b"text/plain; charset=utf-8"
#: The pause before a response that follows notifications, for a client whose reading
#: cannot be watched (``cassette.transports._drain``: one on another machine).
DELIVERY_GAP: Final = 0.005


async def _let_read(unread: Counter | None) -> None:
    """Before a response that follows notifications: let the client read them first
    (``cassette.transports._drain`` says why)."""
    with anyio.move_on_after(DRAIN_DEADLINE):
        if unread is not None and await until_read(unread):
            return
        await anyio.sleep(DELIVERY_GAP)


def _event(message: Any) -> bytes:
    return b"event: message\ndata: " + dumps_bytes(message) + b"\n\n"


class _Session:
    """One replay session: its conversation, its outgoing messages, the task group of its
    stream (paced replies are written from tasks of it)."""

    def __init__(self, tg: anyio.abc.TaskGroup, unread: Counter | None = None) -> None:
        self.tg = tg
        self.unread = unread
        self.served: ServedSession
        self.closed = False
        self.sender: MemoryObjectSendStream[Any]
        self.receiver: MemoryObjectReceiveStream[Any]
        self.sender, self.receiver = anyio.create_memory_object_stream[Any](float("inf"))

    def push(self, messages: Sequence[Any]) -> None:
        for message in messages:
            try:
                self.sender.send_nowait(message)
            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                return

    async def deliver(self, reply: Reply) -> None:
        """Queue a reply's messages for the stream, each group when the session paces it."""
        async for group in self.served.paced(reply):
            self.push([message for message, _ in group])

    async def answer(self, reply: Reply) -> None:
        """Deliver the reply to a POST: at once when it ends the session or was made up
        here, else from a task of the stream (the POST gets its 202 now, as live)."""
        if reply.closes or reply.drops:  # the server exited (or a fault cut it): so does this
            await self.deliver(reply)
            self.close()
        elif reply.since is None:
            await self.deliver(reply)  # made up here (an error): nothing to pace
        else:
            # Recorded answers may be paced. Tasks start in order, so unpaced replies
            # still reach the stream in order.
            self.tg.start_soon(self.deliver, reply)

    async def write_stream(self, send: Send) -> None:
        """Write the session's messages as they come; past an answer deadline, what is
        overdue."""
        served = self.served
        noted = False  # the last event written was a notification
        while True:
            with anyio.move_on_after(served.remaining()):
                try:
                    message = await self.receiver.receive()
                except anyio.EndOfStream:
                    return
                if noted and is_answer(message):
                    await _let_read(self.unread)
                noted = classify_value(message) is Kind.NOTIFICATION
                body = _event(message)
                await send({"type": "http.response.body", "body": body, "more_body": True})
                continue
            for reply in served.overdue():
                await self.deliver(reply)

    def close(self) -> None:
        self.closed = True
        self.sender.close()


class SseReplayApp:
    """ASGI app serving replay sessions over HTTP+SSE (see the module docstring)."""

    def __init__(
        self,
        sessions: SessionPool,
        *,
        path: str | None = None,
        post_path: str = DEFAULT_POST_PATH,
        bound_host: str = "127.0.0.1",
        max_body: int = BODY_LIMIT,
        allowed_origins: Sequence[str] = (),
        max_sessions: int = 1000,
    ) -> None:
        recording = sessions.recording
        self.max_body = max_body
        #: an SSE session lives as long as its GET stream: over the limit a new stream
        #: is refused (503, try later) rather than another client's cut
        self.max_sessions = max_sessions
        self.path = path or _recorded_path(recording) or DEFAULT_STREAM_PATH
        self.post_path = post_path
        forbidden = (b"Forbidden origin", _TEXT)
        self.guard = Guard(bound_host, forbidden, b"GET, POST", tuple(allowed_origins))
        self.sessions: dict[str, _Session] = {}
        self._pool = sessions
        self._own_statuses = recording.header.transport == "sse"
        self._stopping = anyio.Event()

    def stop_streams(self) -> None:
        """End every session's stream (the front is shutting down)."""
        self._stopping.set()
        for session in list(self.sessions.values()):
            session.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        admitted = await self.guard.admit(scope, receive, send)
        if admitted is None:
            return
        send = admitted
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == self.path:
            await self._stream(scope, receive, send)
        elif method == "POST" and path == self.post_path:
            await self._post(scope, receive, send)
        elif path in (self.path, self.post_path):
            allow = b"GET" if path == self.path else b"POST"
            await send_simple(send, 405, b"Method Not Allowed", _TEXT, [(b"allow", allow)])
        else:
            await send_simple(send, 404, b"Not Found", _TEXT)

    # -- the event stream ------------------------------------------------------------------

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._stopping.is_set():
            await send_simple(send, 503, b"Shutting down", _TEXT)
            return
        if len(self.sessions) >= self.max_sessions:
            busy = [(b"retry-after", b"1")]
            await send_simple(send, 503, b"Too many open sessions", _TEXT, busy)
            return
        session_id = uuid.uuid4().hex
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        endpoint = f"{self.post_path}?{_SESSION_PARAM}={session_id}".encode()
        first = b"event: endpoint\ndata: " + endpoint + b"\n\n"
        await send({"type": "http.response.body", "body": first, "more_body": True})
        gone = False
        async with anyio.create_task_group() as tg:
            unread = tcp_peer_counter(scope.get("client"), scope.get("server"))
            session = self.sessions[session_id] = _Session(tg, unread)
            session.served = self._pool.open(session.deliver)
            tg.start_soon(_close_on_disconnect, receive, session)
            try:
                await session.deliver(session.served.start())
                await session.write_stream(send)
            except OSError:
                gone = True  # the client went away mid-send
            finally:
                self.sessions.pop(session_id, None)
                session.close()
                tg.cancel_scope.cancel()
                with anyio.CancelScope(shield=True):
                    await session.served.aclose()
        if not gone:
            with contextlib.suppress(OSError):  # it may have gone away just now
                await send({"type": "http.response.body", "body": b""})

    # -- client messages -------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(bytes(scope["query_string"]).decode("latin-1"))
        session_id = (query.get(_SESSION_PARAM) or [""])[0]
        if not session_id:
            await send_simple(send, 400, b"sessionId is required", _TEXT)
            return
        session = self.sessions.get(session_id)
        if session is None:
            await send_simple(send, 404, b"Could not find session", _TEXT)
            return
        body = await read_body(receive, self.max_body, send=send)
        if body is None:
            return
        classified = classify(body)  # decoded once: checked here, answered from it
        refusal = sse_post_refusal(headers_of(scope), classified)
        if refusal is not None:
            await send_simple(send, refusal.status, refusal.body, refusal.content_type)
            return
        frame = Frame(body, {HEADERS: scope[HEADERS]})
        reply = await session.served.receive(frame, classified)
        await session.answer(reply)
        status = reply.exchange.status if reply.exchange is not None else None
        if status is not None and self._own_statuses:
            await send_simple(send, status, b"", _TEXT)
            return
        await send_simple(send, 202, b"Accepted", _TEXT)


async def _close_on_disconnect(receive: Receive, session: _Session) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    session.close()


def _recorded_path(recording: Recording) -> str | None:
    """The upstream's stream path, for a cassette recorded on this transport."""
    if recording.header.transport != "sse":
        return None
    url = recording.header.target.get("url")
    return (urlsplit(url).path or "/") if isinstance(url, str) else None
