"""One client connection, and the two sides of a plugin a check gets connections from.

Every property is written once against ``_Side``: ``_ConnectSide`` opens a connection
through the plugin's ``connect``, ``_ServeSide`` through the author's client factory to the
plugin's ``serve`` (which ``_serving`` runs with the reference peer, ``_peer_handler``,
behind it). ``_Conn`` speaks JSON-RPC over the frames either side gives.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, Protocol

import anyio

from cassette.core.wire.jsonrpc import Kind, classify
from cassette.core.wire.mcp import LATEST_LEGACY
from cassette.errors import TransportClosedError
from cassette.testing._report import _Failure
from cassette.testing._util import _Ready, _short
from cassette.testing.peer import PEER_NAME, ReferencePeer
from cassette.transport import (
    ConnectOptions,
    Frame,
    FrameServer,
    FrameStream,
    ServeOptions,
    Target,
    Upstream,
    UpstreamConnector,
)

#: How a client reaches ``serve``: given the address the plugin reported through
#: ``ServeOptions.on_ready``, returns a stream to a new connection.
ClientFactory = Callable[[Any], Awaitable[FrameStream]]
#: How long a ``FrameServer`` may take to report that clients can connect.
_READY_TIMEOUT: Final = 10.0

_INIT_PARAMS: Final = {
    "protocolVersion": LATEST_LEGACY,
    "capabilities": {},
    "clientInfo": {"name": "cassette-check", "version": "1"},
}


# -- one client connection -----------------------------------------------------------------


class _Conn:
    """The client end of one connection, speaking JSON-RPC over frames."""

    def __init__(self, stream: FrameStream, upstream: Upstream | None) -> None:
        self.stream = stream
        self.upstream = upstream
        self.frames: list[bytes] = []
        self.others: list[dict[str, Any]] = []
        self.peer = False
        self._queue: list[dict[str, Any]] = []
        self._next_id = 0

    async def send(self, message: Mapping[str, Any]) -> None:
        await self.stream.send(Frame(json.dumps(message).encode("utf-8") + b"\n"))

    async def frame(self) -> bytes:
        frame = await self.stream.receive()
        if not isinstance(frame, Frame) or type(frame.data) is not bytes:
            raise _Failure(f"receive() must return a Frame holding bytes, got {frame!r}")
        self.frames.append(frame.data)
        return frame.data

    async def message(self) -> dict[str, Any]:
        while not self._queue:
            data = await self.frame()
            whole = classify(data)
            # A replay hands a transport what it says at once as one frame of several lines.
            for classified in [whole] if whole.kind is not Kind.NOT_JSON else _lines(data):
                if classified.kind is Kind.BATCH:
                    self._queue.extend(m for m in classified.value if isinstance(m, dict))
                elif classified.is_message:
                    self._queue.append(classified.value)
        return self._queue.pop(0)

    async def answer(self, msg_id: object) -> dict[str, Any]:
        """Read until the response to ``msg_id``, keeping everything else in ``others``."""
        while True:
            message = await self.message()
            if message.get("id") == msg_id and "method" not in message:
                return message
            self.others.append(message)

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            request["params"] = dict(params)
        await self.send(request)
        return await self.answer(self._next_id)

    async def initialize(self) -> dict[str, Any]:
        reply = await self.request("initialize", _INIT_PARAMS)
        result = reply.get("result")
        if not isinstance(result, dict):
            raise _Failure(f"initialize was not answered with a result: {_short(reply)}")
        info = result.get("serverInfo")
        self.peer = isinstance(info, dict) and info.get("name") == PEER_NAME
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def finish(self) -> None:
        """The client is done: say so (a half-close), and read on to the end of the stream."""
        await self.stream.send_eof()
        await self.drain()

    async def drain(self) -> None:
        while True:
            try:
                await self.frame()
            except anyio.EndOfStream:
                return


class _Side(Protocol):
    """How a check gets connections: through ``connect`` or through ``serve``."""

    def open(self) -> AbstractAsyncContextManager[_Conn]: ...


class _ConnectSide:
    def __init__(self, plugin: UpstreamConnector, target: Target) -> None:
        self.plugin = plugin
        self.target = target

    @asynccontextmanager
    async def open(self) -> AsyncIterator[_Conn]:
        async with self.plugin.connect(self.target, ConnectOptions()) as upstream:
            yield _Conn(upstream, upstream)


class _ServeSide:
    def __init__(self, factory: ClientFactory, address: object) -> None:
        self.factory = factory
        self.address = address

    @asynccontextmanager
    async def open(self) -> AsyncIterator[_Conn]:
        stream = await self.factory(self.address)
        try:
            yield _Conn(stream, None)
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await stream.aclose()


# -- serving the reference peer through a plugin -------------------------------------------


async def _peer_handler(stream: FrameStream) -> None:
    """The reference peer behind a plugin's ``serve``."""
    peer = ReferencePeer()
    try:
        for line in peer.greeting():
            await stream.send(Frame(line))
        while peer.exit_code is None:
            try:
                frame = await stream.receive()
            except anyio.EndOfStream:
                break
            for line in peer.feed(frame.data):
                await stream.send(Frame(line))
    except TransportClosedError:
        pass  # the client went away
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()


@asynccontextmanager
async def _serving(
    plugin: FrameServer, handler: Callable[[FrameStream], Awaitable[None]]
) -> AsyncIterator[object]:
    """Run ``plugin.serve(handler)`` until the block ends; yields the address it reported
    through ``ServeOptions.on_ready`` (the contract: once clients can connect)."""
    ready = _Ready()
    async with anyio.create_task_group() as tg:
        tg.start_soon(plugin.serve, handler, ServeOptions(on_ready=ready))
        address = None
        with anyio.move_on_after(_READY_TIMEOUT):
            address = await ready.wait()
        if address is None:
            raise _Failure(
                f"serve() did not call options.on_ready(address) within {_READY_TIMEOUT:g} s: "
                "a FrameServer reports where clients reach it once they can"
            )
        try:
            yield address
        finally:
            tg.cancel_scope.cancel()


# -- small helpers -------------------------------------------------------------------------


def _lines(data: bytes) -> list[Any]:
    return [classify(line) for line in data.split(b"\n") if line.strip()]
