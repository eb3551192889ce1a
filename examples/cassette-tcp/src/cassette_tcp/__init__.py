"""cassette-tcp: a cassette-mcp transport for JSON-RPC over a plain TCP socket.

Each message is one line of UTF-8 JSON ending in ``\\n``, exactly as over stdio, so frames
are forwarded byte for byte and a cassette recorded here replays over stdio and the other
way round. Targets are URLs of the form ``tcp://HOST:PORT``.

It implements two capabilities of the contract (``cassette.transport``):

* ``UpstreamConnector.connect`` reaches a server listening on TCP (``cassette record
  --transport tcp --upstream tcp://HOST:PORT``: the client talks to cassette on stdio,
  cassette to the server over TCP);
* ``FrameServer.serve`` listens where ``ServeOptions`` says (``cassette replay TAPE
  --front tcp --port N``; 127.0.0.1 and a free port by default, or
  ``CASSETTE_TCP_LISTEN=HOST:PORT``) and hands each connection to the runtime, which
  answers it (a cassette, a mock, ``new_episodes``: whatever ``cassette`` serves). It
  reports its address through ``options.on_ready``.

Written against the plugin contract in cassette-mcp's docs/transports.md, importing
nothing but ``cassette.transport``, and checked with ``cassette.testing.check_transport``
(see tests/).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import ClassVar
from urllib.parse import urlsplit

import anyio
import anyio.abc
from anyio.abc import SocketAttribute

from cassette.transport import (
    ConnectOptions,
    Frame,
    Handler,
    ServeOptions,
    Target,
    TransportClosedError,
    TransportError,
    Upstream,
    map_exceptions,
)

__all__ = ["TcpStream", "TcpTransport", "TcpUpstream", "open_stream"]

_LISTEN_VARIABLE = "CASSETTE_TCP_LISTEN"


def _gone(exc: BaseException) -> TransportClosedError:
    return TransportClosedError(f"the TCP peer went away: {exc}")


#: anyio's and the OS's errors, as the contract's (``TransportClosedError``), where they
#: cross into the plugin; built once, it guards every ``send``.
_SEND_ERRORS = map_exceptions(
    {anyio.BrokenResourceError: _gone, anyio.ClosedResourceError: _gone, OSError: _gone}
)


def parse_address(url: str) -> tuple[str, int]:
    """``tcp://HOST:PORT`` (or ``HOST:PORT``) as a (host, port) pair."""
    parts = urlsplit(url if "//" in url else f"tcp://{url}")
    if parts.scheme != "tcp" or not parts.hostname or parts.port is None:
        raise TransportError(f"{url!r} is not a tcp://HOST:PORT address")
    return parts.hostname, parts.port


class TcpStream:
    """A frame stream over one TCP connection: one frame per line, newline included."""

    def __init__(self, sock: anyio.abc.SocketStream) -> None:
        self._sock = sock
        self._pending = b""
        self._lines: deque[bytes] = deque()
        self._eof = False  # the peer finished sending
        self._sent_eof = False  # we finished sending
        self._closed = False

    async def receive(self) -> Frame:
        # Lines are cut from chunks synchronously, after the only await: a cancelled
        # receive leaves the bytes in the socket, so nothing is ever lost.
        while not self._lines:
            if self._eof:
                raise anyio.EndOfStream
            try:
                chunk = await self._sock.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                chunk = b""
            self._take(chunk)
        return Frame(self._lines.popleft())

    def _take(self, chunk: bytes) -> None:
        if not chunk:
            self._eof = True
            if self._pending:  # a last line without a newline is still a frame
                self._lines.append(self._pending)
                self._pending = b""
            return
        data = self._pending + chunk
        *lines, self._pending = data.split(b"\n")
        self._lines.extend(line + b"\n" for line in lines)

    async def send(self, frame: Frame) -> None:
        if self._closed or self._sent_eof or self._eof:
            raise TransportClosedError("the TCP connection is closed")
        with _SEND_ERRORS:
            await self._sock.send(frame.data)

    async def send_eof(self) -> None:
        """Half-close: the peer reads end of stream (FIN); we can still read what is left."""
        if self._sent_eof or self._closed:
            return
        self._sent_eof = True
        # Already gone? Then it has seen the end either way.
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await self._sock.send_eof()

    async def aclose(self) -> None:
        """Full close: drop the connection in both directions."""
        if not self._closed:
            self._closed = True
            await self._sock.aclose()


class TcpUpstream(TcpStream):
    """A live server reached over TCP (no process: ``wait`` has no exit code to give)."""

    async def wait(self) -> int | None:
        return None


async def open_stream(url: str) -> TcpStream:
    """Connect to ``url`` as a client (what a test's client factory returns)."""
    host, port = parse_address(url)
    with map_exceptions({OSError: partial(_failed, f"cannot reach {url}")}):
        sock = await anyio.connect_tcp(host, port)
    return TcpStream(sock)


def _failed(what: str, exc: BaseException) -> TransportError:
    """``what`` failed, and the OS's reason why (its text, not its repr)."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return TransportError(f"{what}: {reason}")


class TcpTransport:
    """The ``tcp`` transport plugin."""

    name: ClassVar[str] = "tcp"

    def __init__(self, listen: str | None = None) -> None:
        self.listen = listen or os.environ.get(_LISTEN_VARIABLE)

    @asynccontextmanager
    async def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AsyncIterator[Upstream]:
        if not target.url:
            raise TransportError("the tcp transport needs a tcp://HOST:PORT URL to reach")
        host, port = parse_address(target.url)
        with map_exceptions({OSError: partial(_failed, f"cannot reach {target.url}")}):
            sock = await anyio.connect_tcp(host, port)
        upstream = TcpUpstream(sock)
        try:
            yield upstream
        finally:
            with anyio.CancelScope(shield=True):  # never leave a socket behind
                await upstream.aclose()

    async def serve(self, handler: Handler, options: ServeOptions = ServeOptions()) -> None:
        if self.listen is not None:
            host, port = parse_address(self.listen)
        else:
            host, port = options.host, options.port
        with map_exceptions({OSError: partial(_failed, f"cannot listen on {host}:{port}")}):
            listener = await anyio.create_tcp_listener(local_host=host, local_port=port)
        bound_host, bound_port = listener.extra(SocketAttribute.local_address)[:2]  # noqa: S610
        address = f"tcp://{bound_host}:{bound_port}"
        if options.on_ready is not None:
            options.on_ready(address)
        async with listener:
            await listener.serve(partial(_handle, handler))


async def _handle(handler: Handler, sock: anyio.abc.SocketStream) -> None:
    stream = TcpStream(sock)
    try:
        await handler(stream)
    except Exception as exc:  # one broken connection must not stop the server
        sys.stderr.write(f"cassette-tcp: connection failed: {type(exc).__name__}: {exc}\n")
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()
