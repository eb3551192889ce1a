"""The legacy HTTP+SSE (2024-11-05) replay front: an ASGI app that answers as the server did.

Theory of operation
-------------------
A GET to the stream path opens a replay session: a fresh session id, its own ``Replayer``
(so concurrent sessions never consume each other's recordings) and an event stream whose
first event is ``endpoint``, naming ``<post path>?sessionId=<id>``. Whatever the
recording shows the server saying before the client spoke follows it.

A POST to that endpoint is answered ``202 Accepted`` at once, as a 2024-11-05 server does;
its replayed answers (notifications, server requests, the response, in recorded order) go
out on the session's stream. A POST for an unknown session gets 404, one without a
session 400, a body that is not JSON 400. A recorded POST status other than 202 is
replayed, but only from a cassette recorded on this transport: statuses of another
transport mean something else.

Routing needs no transport facts: in this transport everything the server says travels
on the one stream, so a cassette recorded over stdio or streamable HTTP serves here as it
is. A server request the replay waits on is failed after ``answer_timeout`` seconds
without the client's answer, as on the other fronts.

The stream path is the recorded one for a cassette recorded on this transport (the
upstream URL's path), ``/sse`` otherwise. When the GET stream closes, its session ends.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Final
from urllib.parse import parse_qs, urlsplit

import anyio
import anyio.abc
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.jsonrpc import Kind, classify, dumps_bytes
from cassette.core.matching import MissReport, Strategy
from cassette.core.model import Recording
from cassette.core.replayer import Replayer, ReplaySessions, Reply
from cassette.transports._http import (
    BODY_LIMIT,
    Receive,
    Scope,
    Send,
    admitted,
    read_body,
    send_simple,
)

__all__ = ["DEFAULT_POST_PATH", "DEFAULT_STREAM_PATH", "SseReplayApp"]

DEFAULT_STREAM_PATH: Final = "/sse"
DEFAULT_POST_PATH: Final = "/message"
_SESSION_PARAM: Final = "sessionId"
_TEXT: Final = b"text/plain; charset=utf-8"
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]


def _event(message: Any) -> bytes:
    return b"event: message\ndata: " + dumps_bytes(message) + b"\n\n"


class _Session:
    """One replay session: its replayer, its outgoing messages, the task group of its stream."""

    def __init__(self, replayer: Replayer, tg: anyio.abc.TaskGroup) -> None:
        self.replayer = replayer
        self.tg = tg
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

    def close(self) -> None:
        self.closed = True
        self.sender.close()


class SseReplayApp:
    """ASGI app serving one cassette over HTTP+SSE (see the module docstring)."""

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        path: str | None = None,
        post_path: str = DEFAULT_POST_PATH,
        bound_host: str = "127.0.0.1",
        on_miss: Callable[[str], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        answer_timeout: float = 30.0,
        max_body: int = BODY_LIMIT,
    ) -> None:
        self.max_body = max_body
        self.path = path or _recorded_path(recording) or DEFAULT_STREAM_PATH
        self.post_path = post_path
        self.bound_host = bound_host
        self.on_miss = on_miss
        self.on_warning = on_warning
        self.answer_timeout = answer_timeout
        self.sessions: dict[str, _Session] = {}
        self._replays = ReplaySessions(recording, strategy, environ=os.environ)
        self._own_statuses = recording.header.transport == "sse"
        self._stopping = anyio.Event()

    @property
    def misses(self) -> list[MissReport]:
        """Every miss of every session served so far."""
        return self._replays.misses

    def summary(self) -> str:
        """All sessions' misses, for a person ("" when there were none)."""
        return self._replays.summary()

    def stop_streams(self) -> None:
        """End every session's stream (the front is shutting down)."""
        self._stopping.set()
        for session in list(self.sessions.values()):
            session.close()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not await admitted(scope, receive, send, self.bound_host, (b"Forbidden origin", _TEXT)):
            return
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == self.path:
            await self._stream(receive, send)
        elif method == "POST" and path == self.post_path:
            await self._post(scope, receive, send)
        elif path in (self.path, self.post_path):
            allow = b"GET" if path == self.path else b"POST"
            await send_simple(send, 405, b"Method Not Allowed", _TEXT, [(b"allow", allow)])
        else:
            await send_simple(send, 404, b"Not Found", _TEXT)

    # -- the event stream ------------------------------------------------------------------

    async def _stream(self, receive: Receive, send: Send) -> None:
        if self._stopping.is_set():
            await send_simple(send, 503, b"Shutting down", _TEXT)
            return
        session_id = uuid.uuid4().hex
        await send({"type": "http.response.start", "status": 200, "headers": list(_SSE_HEADERS)})
        endpoint = f"{self.post_path}?{_SESSION_PARAM}={session_id}".encode()
        first = b"event: endpoint\ndata: " + endpoint + b"\n\n"
        await send({"type": "http.response.body", "body": first, "more_body": True})
        gone = False
        async with anyio.create_task_group() as tg:
            replayer = self._replays.new()
            session = self.sessions[session_id] = _Session(replayer, tg)
            tg.start_soon(_close_on_disconnect, receive, session)
            self._deliver(session, replayer.start())
            try:
                async for message in session.receiver:
                    await send(
                        {"type": "http.response.body", "body": _event(message), "more_body": True}
                    )
            except OSError:
                gone = True  # the client went away mid-send
            finally:
                self.sessions.pop(session_id, None)
                session.close()
                tg.cancel_scope.cancel()
        if not gone:
            with contextlib.suppress(OSError):  # it may have gone away just now
                await send({"type": "http.response.body", "body": b""})

    def _deliver(self, session: _Session, reply: Reply) -> None:
        if reply.miss is not None and self.on_miss is not None:
            self.on_miss(session.replayer.describe(reply.miss))
        if self.on_warning is not None:
            for warning in reply.warnings:
                self.on_warning(warning)
        session.push(reply.messages)
        if session.closed:
            return
        for server_id in reply.awaiting:
            session.tg.start_soon(self._expire_later, session, server_id)

    async def _expire_later(self, session: _Session, server_id: object) -> None:
        await anyio.sleep(self.answer_timeout)
        if server_id in session.replayer.waiting:
            self._deliver(session, session.replayer.expire(server_id))

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
        if classify(body).kind is Kind.NOT_JSON:
            await send_simple(send, 400, b"Could not parse message", _TEXT)
            return
        reply = session.replayer.receive_frame(body)
        self._deliver(session, reply)
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
