"""The legacy HTTP+SSE (2024-11-05) recording proxy: an ASGI app that records as it relays.

Theory of operation
-------------------
The 2024-11-05 transport splits one session over two kinds of HTTP exchange: a long GET
whose event stream carries everything the server says, and a POST per client message to
the URI named by the stream's ``endpoint`` event. That URI is often relative and carries
the session id in its query (``/message?sessionId=...``).

The proxy serves the GET at the upstream URL's path and relays the upstream stream to the
client as it arrives. The first event is the one thing it may change: an ``endpoint``
URI is resolved against the upstream URL and replaced by its path and query alone, which
the client resolves against the proxy; the proxy remembers where each such local endpoint
leads and which session it belongs to. So the first event is re-serialised (a comment
before it is dropped), and every byte after it is forwarded untouched. A later
``endpoint`` event is forwarded as it is (a relative URI still reaches the proxy).

A POST to a local endpoint is forwarded with its body verbatim and its headers minus
hop-by-hop ones, and its answer (202 ``Accepted`` from a conforming server) comes back the
same way. The JSON-RPC answer travels on the session's event stream. An upstream that
does not start answering a GET or a POST within ``upstream_timeout`` seconds gets the
client a 504 (recorded, as an unreachable one's 502 is).

Recorded through the ``Tap``, per HTTP exchange (``get-N``, ``post-N`` in arrival order):

* each GET's status, with the session ordinal it opened (1 for the first event stream);
* each POST body as one client frame, before it is forwarded;
* a POST status other than 202, the status every accepted message gets;
* each event's data as one server frame with ``sse: true``, its event id, and its type
  when that is not ``message``.

Not recorded: the ``endpoint`` event, whose URI carries the session id (session ids, like
header values, never reach a cassette), and events with empty data (keep-alives).
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import urljoin, urlsplit

import anyio
import attrs
import httpx

from cassette.core.wire.deadlines import UPSTREAM_TIMEOUT
from cassette.core.wire.meta import EVENT, EVENT_ID, SESSION, SSE, STREAM
from cassette.transport import Tap
from cassette.transports.http._http import (
    BODY_LIMIT,
    Guard,
    LazyClient,
    Receive,
    Scope,
    Send,
    forwardable,
    read_body,
    send_simple,
)
from cassette.transports.http._http_auth import with_extra
from cassette.transports.http.sse_parser import SSEEvent, SSEParser

__all__ = ["SseRecordingProxy", "local_endpoint", "serialize_event"]

ACCEPTED: Final = 202
_FORBIDDEN: Final = (b"Forbidden origin", b"text/plain")
# A piece of the stream up to and including one line-ending byte (an event ends only there).
_PIECE: Final = re.compile(rb"[^\r\n]*[\r\n]|[^\r\n]+")


def local_endpoint(uri: str) -> str:
    """The path and query of an endpoint URI: what a client resolves against the proxy."""
    parts = urlsplit(uri)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def serialize_event(event: SSEEvent, data: str | None = None) -> bytes:
    """One event as ``text/event-stream`` bytes (``data`` replaces the event's own)."""
    lines = []
    if event.type != "message":
        lines.append(b"event: " + event.type.encode("utf-8"))
    if event.last_event_id:
        lines.append(b"id: " + event.last_event_id.encode("utf-8"))
    if event.retry is not None:
        lines.append(b"retry: " + str(event.retry).encode())
    value = event.data if data is None else data
    lines.extend(b"data: " + line.encode("utf-8") for line in value.split("\n"))
    return b"\n".join(lines) + b"\n\n"


@attrs.frozen
class _Endpoint:
    """Where a local endpoint leads, and the client session it belongs to."""

    url: str
    session: int


@attrs.define
class _Stream:
    """One upstream event stream being relayed: its parser and where its first event is."""

    name: str
    session: int
    base: str
    parser: SSEParser = attrs.field(factory=SSEParser)
    head_done: bool = False
    # The re-serialised first event ended in a CR whose LF is still to come: not forwarded.
    skip_lf: bool = False


class SseRecordingProxy:
    """ASGI app: a recording reverse proxy to the HTTP+SSE server at ``upstream``."""

    def __init__(
        self,
        upstream: str,
        tap: Tap,
        bound_host: str,
        max_body: int = BODY_LIMIT,
        upstream_timeout: float = UPSTREAM_TIMEOUT,
        *,
        allowed_origins: Sequence[str] = (),
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.extra = dict(headers or {})  # given by the person recording; never recorded
        self.max_body = max_body
        self.upstream_timeout = upstream_timeout
        self.upstream = upstream
        self.path = urlsplit(upstream).path or "/"
        self.tap = tap
        self.guard = Guard(bound_host, _FORBIDDEN, b"GET, POST", tuple(allowed_origins))
        self._counter = itertools.count(1)
        self._session_counter = itertools.count(1)
        self._endpoints: dict[str, _Endpoint] = {}
        self._endpoint_origins: dict[str, str] = {}  # endpoint path -> its upstream origin
        self._http = LazyClient(jar=False)  # each client's cookies are its own
        self._stopping = anyio.Event()

    def stop_streams(self) -> None:
        """End every relayed event stream (the proxy is shutting down)."""
        self._stopping.set()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        admitted = await self.guard.admit(scope, receive, send)
        if admitted is None:
            return
        send = admitted
        path, method = scope["path"], scope["method"]
        if method == "GET" and path == self.path:
            await self._stream(scope, receive, send)
        elif method == "POST" and path in self._endpoint_origins:
            await self._post(scope, receive, send)
        elif path == self.path or path in self._endpoint_origins:
            allow = b"GET" if path == self.path else b"POST"
            await send_simple(send, 405, b"Method Not Allowed", b"text/plain", [(b"allow", allow)])
        else:
            await send_simple(send, 404, b"Not Found", b"text/plain")

    # -- the event stream ------------------------------------------------------------------

    async def _stream(self, scope: Scope, receive: Receive, send: Send) -> None:
        name = f"get-{next(self._counter)}"
        url = _with_query(self.upstream, scope)
        request = self._http().build_request(
            "GET", url, headers=with_extra(forwardable(scope["headers"]), self.extra)
        )
        try:
            with anyio.fail_after(self.upstream_timeout):
                response = await self._http().send(request, stream=True)
        except (httpx.HTTPError, TimeoutError) as exc:
            await self._failed(send, "GET", name, None, url=self.upstream, exc=exc)
            return
        try:
            is_stream = response.headers.get("content-type", "").startswith("text/event-stream")
            if response.status_code != 200 or not is_stream:
                self.tap.http("GET", name, response.status_code, None)
                content = await response.aread()
                headers = forwardable(response.headers.raw)
                await send_simple(send, response.status_code, content, headers=headers)
                return
            stream = _Stream(name, next(self._session_counter), url)
            self.tap.http("GET", name, 200, stream.session)
            headers = forwardable(response.headers.raw)
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            await self._relay(send, receive, response, stream)
        finally:
            await response.aclose()

    async def _relay(
        self, send: Send, receive: Receive, response: httpx.Response, stream: _Stream
    ) -> None:
        ended = False
        async with anyio.create_task_group() as tg:
            tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
            tg.start_soon(_cancel_on, self._stopping, tg.cancel_scope)
            try:
                async for chunk in response.aiter_raw():
                    out = self._take(stream, chunk)
                    if out:
                        await send({"type": "http.response.body", "body": out, "more_body": True})
                ended = True
            except (httpx.HTTPError, OSError):
                ended = True  # the upstream stream broke: the client sees its end as it is
            finally:
                tg.cancel_scope.cancel()
        if ended or self._stopping.is_set():
            stream.parser.close()
            # The client may be gone already; there is nobody left to tell.
            with anyio.CancelScope(shield=True), contextlib.suppress(OSError):
                await send({"type": "http.response.body", "body": b""})

    def _take(self, stream: _Stream, chunk: bytes) -> bytes:
        """Record the events ``chunk`` completes; return the bytes to forward."""
        if stream.head_done:
            self._record(stream, stream.parser.feed(chunk))
            if stream.skip_lf and chunk:
                stream.skip_lf = False
                return chunk[1:] if chunk[:1] == b"\n" else chunk
            return chunk
        for piece in _PIECE.finditer(chunk):
            events = stream.parser.feed(piece.group())
            if events:  # the first event: rewrite it, then forward the rest untouched
                stream.head_done = True
                stream.skip_lf = piece.group().endswith(b"\r")
                rest = chunk[piece.end() :]
                head = b"".join(self._first(stream, event) for event in events)
                return head + self._take(stream, rest) if rest else head
        return b""

    def _first(self, stream: _Stream, event: SSEEvent) -> bytes:
        if event.type == "endpoint":
            return serialize_event(event, self._register(stream, event.data))
        self._record(stream, [event])
        return serialize_event(event)

    def _register(self, stream: _Stream, uri: str) -> str:
        target = urljoin(stream.base, uri.strip())
        local = local_endpoint(target)
        self._endpoints[local] = _Endpoint(target, stream.session)
        parts = urlsplit(target)
        self._endpoint_origins[parts.path or "/"] = f"{parts.scheme}://{parts.netloc}"
        return local

    def _record(self, stream: _Stream, events: list[SSEEvent]) -> None:
        for event in events:
            if event.type == "endpoint":
                self._register(stream, event.data)
                continue
            if not event.data:
                continue
            meta: dict[str, Any] = {STREAM: stream.name, SESSION: stream.session, SSE: True}
            if event.last_event_id:
                meta[EVENT_ID] = event.last_event_id
            if event.type != "message":
                meta[EVENT] = event.type
            self.tap.frame("s2c", event.data.encode("utf-8"), meta)

    # -- client messages -------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        local = scope["path"] + (
            f"?{scope['query_string'].decode('latin-1')}" if scope["query_string"] else ""
        )
        endpoint = self._endpoints.get(local)
        # A query the proxy never handed out (a stale session) still goes where the path
        # leads, so the client gets the upstream's own answer to it.
        url = endpoint.url if endpoint else self._endpoint_origins[scope["path"]] + local
        session = endpoint.session if endpoint else None
        body = await read_body(receive, self.max_body, send=send)
        if body is None:
            return
        name = f"post-{next(self._counter)}"
        meta: dict[str, Any] = {STREAM: name}
        if session is not None:
            meta[SESSION] = session
        if body.strip():
            self.tap.frame("c2s", body, meta)
        try:
            with anyio.fail_after(self.upstream_timeout):
                sent = with_extra(forwardable(scope["headers"]), self.extra)
                response = await self._http().request("POST", url, headers=sent, content=body)
        except (httpx.HTTPError, TimeoutError) as exc:
            await self._failed(send, "POST", name, session, url=url, exc=exc)
            return
        if response.status_code != ACCEPTED:
            self.tap.http("POST", name, response.status_code, session)
        headers = forwardable(response.headers.raw)
        await send_simple(send, response.status_code, response.content, headers=headers)

    async def _failed(
        self,
        send: Send,
        method: str,
        stream: str,
        session: int | None,
        *,
        url: str,
        exc: Exception,
    ) -> None:
        """The upstream could not answer: 504 when it was too slow, else 502, recorded."""
        timed_out = isinstance(exc, TimeoutError)
        status = 504 if timed_out else 502
        self.tap.http(method, stream, status, session)
        why = (
            f"did not answer within {self.upstream_timeout:g} s"
            if timed_out
            else f"unreachable: {exc}"
        )
        await send_simple(
            send, status, f"cassette-mcp: upstream {url} {why}".encode(), b"text/plain"
        )


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


async def _cancel_on(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()


def _with_query(url: str, scope: Scope) -> str:
    query = bytes(scope["query_string"]).decode("latin-1")
    if not query:
        return url
    return url + ("&" if urlsplit(url).query else "?") + query
