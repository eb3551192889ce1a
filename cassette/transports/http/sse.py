"""The ``sse`` transport plugin: legacy HTTP+SSE, the 2024-11-05 transport (``http`` extra).

In this transport a client opens a GET event stream; the server's first event,
``endpoint``, names the URI to POST each client message to; every POST is answered 202 and
everything the server says (responses included) comes back on the event stream.

Three pieces, as for streamable HTTP:

* ``record_proxy``: serve ``SseRecordingProxy`` (``cassette record --transport sse
  --upstream URL``), which relays the stream and the POSTs, rewriting the ``endpoint``
  event to point at itself; an upstream slower than ``upstream_timeout`` to answer gets
  the client a 504;
* ``serve_sessions``: serve ``SseReplayApp`` (``cassette replay --front sse``), a fresh
  session id and session per event stream; the app can also be mounted in-process;
* ``connect``: an ``Upstream`` speaking to a live server as a client: frames out are
  POSTs, frames in are the stream's ``message`` events.

Both servers bind to 127.0.0.1 unless told otherwise, refuse a foreign ``Origin`` with
403, and stop gracefully when cancelled, ending the event streams they hold open.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from typing import Any, ClassVar, Final
from urllib.parse import urljoin

import anyio
import httpx

from cassette.core.wire.deadlines import UPSTREAM_TIMEOUT
from cassette.transport import (
    ConnectOptions,
    Frame,
    RecordOptions,
    Tap,
    Target,
    TransportClosedError,
    TransportError,
    Upstream,
    map_exceptions,
)
from cassette.transports.http._http import Inbox, upstream_client, upstream_errors
from cassette.transports.http._sse_record import SseRecordingProxy
from cassette.transports.http._sse_replay import SseReplayApp
from cassette.transports.http.sse_parser import SSEEvent, SSEParser
from cassette.transports.http.streamable_http import NetworkFront, run_app

__all__ = ["SseRecordingProxy", "SseReplayApp", "SseTransport", "SseUpstream"]

#: Seconds a server gets to send its ``endpoint`` event once the stream is open.
ENDPOINT_TIMEOUT: Final = 30.0


def _unreachable(url: str, exc: BaseException) -> TransportError:
    return TransportError(f"cannot reach {url}: {exc}")


def _failed(what: str, _exc: BaseException) -> TransportError:
    return TransportError(what)


class SseUpstream(Inbox):
    """A live HTTP+SSE server, spoken to as a client would.

    ``open`` sends the GET and reads until the ``endpoint`` event; ``pump`` (a task the
    transport runs) reads the rest of the stream into a buffer, so a cancelled ``receive``
    never cuts the HTTP stream in the middle of an event.
    """

    def __init__(
        self, client: httpx.AsyncClient, url: str, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__()
        self._client = client
        self.url = url
        self._extra = dict(headers or {})
        self.endpoint: str | None = None
        self._response: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._parser = SSEParser()
        self._reader = anyio.CancelScope()
        self._done = anyio.Event()
        self._closed = False

    async def open(self) -> None:
        """GET the event stream and wait for its ``endpoint`` event."""
        request = self._client.build_request(
            "GET", self.url, headers={**self._extra, "accept": "text/event-stream"}
        )
        unreachable = map_exceptions({httpx.HTTPError: partial(_unreachable, self.url)})
        try:
            with unreachable:
                self._response = await self._client.send(request, stream=True)
                content_type = self._response.headers.get("content-type", "")
                if self._response.status_code != 200 or not content_type.startswith(
                    "text/event-stream"
                ):
                    raise TransportError(
                        f"{self.url} answered {self._response.status_code} "
                        f"({content_type or 'no content type'}), not an event stream"
                    )
                self._chunks = self._response.aiter_bytes()
                async for chunk in self._chunks:
                    self._take(self._parser.feed(chunk))
                    if self.endpoint is not None:
                        return
                raise TransportError(f"{self.url} ended its event stream without an endpoint event")
        except BaseException:
            if self._response is not None:
                with anyio.CancelScope(shield=True):
                    await self._response.aclose()
            raise

    async def pump(self) -> None:
        """Read the rest of the stream until it ends or ``send_eof`` stops it."""
        assert self._chunks is not None
        assert self._response is not None
        try:
            with self._reader, map_exceptions(upstream_errors(f"the event stream from {self.url}")):
                async for chunk in self._chunks:
                    self._take(self._parser.feed(chunk))
        except TransportError as exc:
            if not self._closed:
                self._error = exc
        finally:
            self._send.close()
            self._done.set()
            with anyio.CancelScope(shield=True):
                await self._response.aclose()

    def _take(self, events: list[SSEEvent]) -> None:
        for event in events:
            if event.type == "endpoint":
                self.endpoint = urljoin(self.url, event.data.strip())
            elif event.data:
                self._send.send_nowait(Frame(event.data.encode("utf-8")))

    async def send(self, frame: Frame) -> None:
        if self._closed or self._done.is_set() or self.endpoint is None:
            raise TransportClosedError(f"the event stream from {self.url} is closed")
        headers = {**self._extra, "content-type": "application/json"}
        with map_exceptions(upstream_errors(f"cannot POST to {self.endpoint}")):
            response = await self._client.post(self.endpoint, content=frame.data, headers=headers)
        if response.status_code in (404, 410):
            raise TransportClosedError(
                f"{self.endpoint} answered {response.status_code}: the session is gone"
            )

    async def send_eof(self) -> None:
        """The client has finished: close the event stream, which ends the session."""
        self._closed = True
        self._reader.cancel()

    async def wait(self) -> int | None:
        await self._done.wait()
        return None

    async def aclose(self) -> None:
        await self.send_eof()


class SseTransport(NetworkFront):
    """The ``sse`` transport plugin (legacy HTTP+SSE)."""

    name: ClassVar[str] = "sse"
    replay_app: ClassVar[Callable[..., Any]] = SseReplayApp

    def __init__(self, *, endpoint_timeout: float = ENDPOINT_TIMEOUT) -> None:
        self.endpoint_timeout = endpoint_timeout

    @asynccontextmanager
    async def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AsyncIterator[Upstream]:
        if not target.url:
            raise TransportError("the sse transport needs the URL of a server's event stream")
        timeout = options.timeout or self.endpoint_timeout
        async with upstream_client() as client:
            upstream = SseUpstream(client, target.url, target.headers)
            silent = partial(_failed, f"{target.url} sent no endpoint event within {timeout:g} s")
            with map_exceptions({TimeoutError: silent}), anyio.fail_after(timeout):
                await upstream.open()
            async with anyio.create_task_group() as tg:
                tg.start_soon(upstream.pump)
                try:
                    yield upstream
                finally:
                    await upstream.aclose()

    async def record_proxy(self, upstream: str, tap: Tap, options: RecordOptions) -> None:
        """Serve a recording proxy to the HTTP+SSE server whose stream is ``upstream``; a
        POST body over ``options.max_message_bytes`` gets 413, and an upstream that does
        not start answering within ``options.upstream_timeout`` seconds (default 60) 504."""
        timeout = options.upstream_timeout or UPSTREAM_TIMEOUT
        proxy = SseRecordingProxy(
            upstream,
            tap,
            options.host,
            options.max_message_bytes,
            timeout,
            allowed_origins=options.allowed_origins,
            headers=options.headers,
        )
        try:
            await run_app(
                proxy,
                options.host,
                options.port,
                proxy.path,
                options.on_ready,
                on_stop=proxy.stop_streams,
            )
        finally:
            with anyio.CancelScope(shield=True):
                await proxy.aclose()
