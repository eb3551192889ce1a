"""The ``streamable-http`` transport plugin (needs the ``http`` extra: httpx and uvicorn).

One piece per capability of the contract (``cassette.transport``):

* ``RecordingFront.record_proxy``: serve ``RecordingProxy`` (a recording reverse proxy)
  on a local port;
* ``CassetteFront.serve_sessions``: serve ``HttpReplayApp`` (the replay front) on a local
  port; the app itself can also be mounted in-process, e.g. behind
  ``httpx.ASGITransport``, given ``cassette.runtime.replay_sessions(tape)``;
* ``UpstreamConnector.connect``: an ``Upstream`` that speaks to a live endpoint as a
  client, one POST per frame (responses arrive as JSON or as an SSE stream, in any order,
  as the server sends them), keeping the session id and protocol version the server gave;
  a modern-era request also gets the routing headers its body implies
  (``modern_headers``), and sending a notification or an answer returns once the server
  accepted it, so nothing sent after it can overtake it.

Both servers bind to 127.0.0.1 unless told otherwise, refuse a foreign ``Origin`` with
403, and stop gracefully when the surrounding task is cancelled.
"""

from __future__ import annotations

import base64
import contextlib
import re
import sys
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import ClassVar

import anyio
import anyio.abc
import httpx

from cassette.core.redaction.headers import refusal
from cassette.core.redaction.redactor import redact_text
from cassette.core.wire.deadlines import UPSTREAM_TIMEOUT
from cassette.core.wire.jsonrpc import Classified, Kind, classify, dumps_bytes, error_response
from cassette.core.wire.mcp import NAMED_PARAM, VERSION_META
from cassette.core.wire.meta import IN_REPLY_TO, SSE
from cassette.transport import (
    ConnectOptions,
    Frame,
    RecordOptions,
    ServeOptions,
    SessionPool,
    Tap,
    Target,
    TransportClosedError,
    TransportError,
    Upstream,
    map_exceptions,
)
from cassette.transports.http._http import (
    Asgi,
    HttpServer,
    Inbox,
    bind,
    is_loopback_host,
    upstream_client,
    upstream_errors,
    url_of,
)
from cassette.transports.http._http_auth import RequireBearer
from cassette.transports.http._http_record import RecordingProxy
from cassette.transports.http._http_replay import HttpReplayApp
from cassette.transports.http.sse_parser import SSEParser

__all__ = ["HttpReplayApp", "HttpUpstream", "RecordingProxy", "StreamableHttpTransport"]


def _warn_if_exposed(host: str) -> None:
    if not is_loopback_host(host):
        sys.stderr.write(
            f"cassette: warning: listening on {host}, reachable from other machines; "
            "anyone who can reach it can use it\n"
        )


async def run_app(
    app: Asgi,
    host: str,
    port: int,
    path: str,
    on_ready: Callable[[str], None] | None,
    *,
    on_stop: Callable[[], None] | None = None,
) -> None:
    """Serve ``app`` until cancelled; ``on_ready`` gets the URL once the port is bound.

    ``on_stop`` runs when stopping begins, so an app can end its long-lived streams and
    let the graceful shutdown finish at once instead of waiting them out."""
    _warn_if_exposed(host)
    sock = bind(host, port)
    server = HttpServer(app, sock)
    if on_ready is not None:
        on_ready(url_of(sock, path))
    done = anyio.Event()
    shield = anyio.CancelScope(shield=True)

    async def serve() -> None:
        with shield:  # stopped gracefully below, not torn down mid-response
            try:
                await server.serve()
            finally:
                done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(serve)
        try:
            await done.wait()
        finally:
            if on_stop is not None:
                on_stop()
            server.stop()
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                await done.wait()
            shield.cancel()


_HEADER_SAFE = re.compile(r"[\x20-\x7e]*")


def _header_value(value: str) -> str:
    """Printable ASCII as it is, anything else in the specification's base64 form."""
    if _HEADER_SAFE.fullmatch(value) and value == value.strip() and not value.startswith("=?"):
        return value
    return f"=?base64?{base64.b64encode(value.encode('utf-8')).decode('ascii')}?="


def modern_headers(body: bytes) -> dict[str, str]:
    """The routing headers a 2026-07-28 request must carry over HTTP, read off its body.

    A modern request names its protocol version in ``params._meta``; the server checks that
    ``MCP-Protocol-Version``, ``Mcp-Method`` and (for the methods that name something)
    ``Mcp-Name`` agree with the body, and answers 400 otherwise. A legacy request, a
    notification without the envelope, or a body that is not one JSON object gets none.
    """
    return _routing_headers(classify(body))


def _routing_headers(classified: Classified) -> dict[str, str]:
    """``modern_headers`` of a body already classified (the upstream parses each once)."""
    message = classified.value if classified.kind is Kind.REQUEST else None
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(VERSION_META) if isinstance(meta, dict) else None
    if not isinstance(version, str) or not isinstance(params, dict) or message is None:
        return {}
    method = str(message.get("method"))
    headers = {"mcp-protocol-version": version, "mcp-method": method}
    named = params.get(NAMED_PARAM.get(method, ""))
    if isinstance(named, str):
        headers["mcp-name"] = _header_value(named)
    return headers


def _http_error(sent: Classified, status: int, content: bytes, names: Iterable[str] = ()) -> bytes:
    """The JSON-RPC error a client gets for an HTTP error without a JSON-RPC body (a plain
    404, a proxy's HTML page): without it the request would wait for an answer forever.
    Nothing for a notification or an answer, which expect no reply."""
    if sent.kind is not Kind.REQUEST:
        return b""
    text = " ".join(content[:300].decode("utf-8", "replace").split())[:200]  # one line
    detail = f": {text}" if text else ""
    message = f"cassette-mcp: the server answered HTTP {status} with no JSON-RPC body{detail}"
    if status in (401, 403):  # which credential, not the server's error document
        message = "cassette-mcp: " + refusal(status, "the server", names, flow=False)
    return dumps_bytes(error_response(sent.value["id"], -32000, message))


def _method(sent: Classified) -> str | None:
    method = sent.value.get("method") if isinstance(sent.value, dict) else None
    return method if isinstance(method, str) else None


class HttpUpstream(Inbox):
    """A live streamable-HTTP endpoint, spoken to as a client would. ``headers`` (a
    client's credentials, say) go with every request."""

    def __init__(
        self,
        client: httpx.AsyncClient,
        url: str,
        tg: anyio.abc.TaskGroup,
        headers: Mapping[str, str] | None = None,
        *,
        listen: bool = False,
    ) -> None:
        super().__init__()
        self._client = client
        self._url = url
        self._tg = tg
        self._extra = dict(headers or {})
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._closed = False
        self._listen = listen  # open the GET stream once the session is initialized

    def _headers(self, sent: Classified | None = None) -> dict[str, str]:
        headers = {**self._extra, "accept": "application/json, text/event-stream"}
        headers["content-type"] = "application/json"
        if self.session_id:
            headers["mcp-session-id"] = self.session_id
        if self.protocol_version:
            headers["mcp-protocol-version"] = self.protocol_version
        if sent is not None:
            headers.update(_routing_headers(sent))
        return headers

    async def send(self, frame: Frame) -> None:
        if self._error is not None:
            raise self._error
        if self._closed:
            raise TransportClosedError("the HTTP upstream is closed")
        sent = classify(frame.data)
        if sent.kind in (Kind.REQUEST, Kind.BATCH):
            self._tg.start_soon(self._post, frame.data, sent)  # its answer may stream long
        else:
            # A notification or an answer gets 202 at once. Waiting for it keeps the order
            # the client meant, as the SDK clients do: a request sent after
            # notifications/initialized must not overtake it (server-everything registers
            # tools when it processes initialized).
            await self._post(frame.data, sent)
            if self._listen and self.session_id and _method(sent) == "notifications/initialized":
                self._listen = False
                self._tg.start_soon(self._standalone_stream)

    async def _standalone_stream(self) -> None:
        """The session's GET stream, where a legacy server sends what belongs to no request
        (its own requests, list changes). Optional by the specification: a server that
        refuses it (405), or a stream that breaks, only means nothing comes that way."""
        headers = {k: v for k, v in self._headers().items() if k != "content-type"}
        headers["accept"] = "text/event-stream"
        with contextlib.suppress(httpx.HTTPError, TransportError):
            async with self._client.stream("GET", self._url, headers=headers) as response:
                if response.status_code != 200:
                    return
                parser = SSEParser()
                async for chunk in response.aiter_raw():
                    for event in parser.feed(chunk):
                        self._deliver(event.data.encode("utf-8"), {SSE: True})

    async def _post(self, body: bytes, sent: Classified) -> None:
        """One POST and what it answers; a failure on the wire ends the stream with the
        error, so the reader hears it instead of waiting for an answer that cannot come."""
        try:
            with map_exceptions(upstream_errors(f"upstream {redact_text(self._url)}")):
                await self._exchange(body, sent)
        except TransportError as exc:
            self._fail(exc)

    async def _exchange(self, body: bytes, sent: Classified) -> None:
        """POST ``body``; each message of the answer becomes a frame whose ``meta`` says
        which request's answer carried it (``in_reply_to``) and whether it came as an
        event stream (``sse``)."""
        origin = sent.value.get("id") if sent.kind is Kind.REQUEST else None
        async with self._client.stream(
            "POST", self._url, content=body, headers=self._headers(sent)
        ) as response:
            self.session_id = response.headers.get("mcp-session-id") or self.session_id
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                meta = {IN_REPLY_TO: origin, SSE: True} if origin is not None else None
                parser = SSEParser()
                async for chunk in response.aiter_raw():
                    for event in parser.feed(chunk):
                        self._deliver(event.data.encode("utf-8"), meta)
                for event in parser.close():
                    self._deliver(event.data.encode("utf-8"), meta)
            else:
                content = await response.aread()
                if response.status_code >= 400 and not classify(content).is_message:
                    content = _http_error(sent, response.status_code, content, self._extra)
                if content.strip():
                    self._deliver(content, {IN_REPLY_TO: origin} if origin is not None else None)

    def _deliver(self, data: bytes, meta: Mapping[str, object] | None = None) -> None:
        classified = classify(data)
        if classified.kind is Kind.RESPONSE and isinstance(classified.value.get("result"), dict):
            version = classified.value["result"].get("protocolVersion")
            if isinstance(version, str):
                self.protocol_version = version
        if data:
            with contextlib.suppress(anyio.ClosedResourceError):  # arrived after the end
                self._send.send_nowait(Frame(data, meta))

    async def send_eof(self) -> None:
        """The client has finished: end the session upstream (DELETE) and the stream."""
        if self._closed:
            return
        self._closed = True
        if self.session_id:
            with contextlib.suppress(httpx.HTTPError):  # the session ends with us either way
                await self._client.delete(self._url, headers=self._headers())
        self._send.close()

    async def wait(self) -> int | None:
        return None

    async def aclose(self) -> None:
        await self.send_eof()


class NetworkFront:
    """What the network transports share: serving sessions with their replay app.

    A subclass names its ``replay_app`` (constructed as ``HttpReplayApp`` is); its
    ``stop_streams`` ends the long-lived streams when stopping begins."""

    name: ClassVar[str]
    replay_app: ClassVar[Callable[..., HttpReplayApp]]

    async def serve_sessions(self, sessions: SessionPool, options: ServeOptions) -> None:
        """Serve ``sessions`` until cancelled. A request body over
        ``options.max_message_bytes`` gets 413."""
        app = type(self).replay_app(
            sessions,
            bound_host=options.host,
            max_body=options.max_message_bytes,
            allowed_origins=options.allowed_origins,
            max_sessions=options.max_sessions,
        )
        served: Asgi = app
        if options.require_auth:
            served = RequireBearer(
                app,
                app.path,
                options.host,
                options.authorization_servers,
                options.allowed_origins,
            )
        await run_app(
            served, options.host, options.port, app.path, options.on_ready, on_stop=app.stop_streams
        )


class StreamableHttpTransport(NetworkFront):
    """The ``streamable-http`` transport plugin."""

    name: ClassVar[str] = "streamable-http"
    replay_app: ClassVar[Callable[..., HttpReplayApp]] = HttpReplayApp

    @asynccontextmanager
    async def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AsyncIterator[Upstream]:
        if not target.url:
            raise TransportError("the streamable-http transport needs a URL to reach")
        async with (
            upstream_client() as client,
            anyio.create_task_group() as tg,
        ):
            upstream = HttpUpstream(
                client, target.url, tg, target.headers, listen=options.standalone_stream
            )
            try:
                yield upstream
            finally:
                await upstream.send_eof()
                tg.cancel_scope.cancel()

    async def record_proxy(self, upstream: str, tap: Tap, options: RecordOptions) -> None:
        """Serve a recording reverse proxy to ``upstream`` until cancelled; an upstream
        that does not start answering within ``options.upstream_timeout`` seconds (default
        60) gets a 504, a request body over ``options.max_message_bytes`` a 413."""
        timeout = options.upstream_timeout or UPSTREAM_TIMEOUT
        proxy = RecordingProxy(
            upstream,
            tap,
            options.host,
            timeout,
            options.max_message_bytes,
            allowed_origins=options.allowed_origins,
            era=options.era,
            headers=options.headers,
        )
        try:
            await run_app(proxy, options.host, options.port, proxy.path, options.on_ready)
        finally:
            with anyio.CancelScope(shield=True):
                await proxy.aclose()
