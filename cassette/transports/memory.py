"""In-process transport: frames through anyio memory streams, for harnesses and tests.

``serve`` accepts connections made with ``open_connection`` from the same process until
``stop`` is called (and the connections end) or it is cancelled, so a harness can run a
replay in a task and talk to it like any client, without a subprocess or a port. There is
no upstream: a memory transport cannot reach a live server, so it is a ``FrameServer``
and nothing else.
"""

from __future__ import annotations

from typing import ClassVar, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.transport import (
    Frame,
    FrameStream,
    Handler,
    ServeOptions,
    TransportClosedError,
    map_exceptions,
)

__all__ = ["MemoryFrameStream", "MemoryTransport", "memory_pair"]


def _closed(_exc: BaseException) -> TransportClosedError:
    return TransportClosedError("the other end of the memory stream is closed")


def _not_serving(_exc: BaseException) -> TransportClosedError:
    return TransportClosedError("this memory transport is no longer serving")


#: Where anyio's errors cross into a memory stream (``map_exceptions``, built once).
_SEND_ERRORS: Final = map_exceptions(
    {anyio.BrokenResourceError: _closed, anyio.ClosedResourceError: _closed}
)
_ACCEPT_ERRORS: Final = map_exceptions({anyio.ClosedResourceError: _not_serving})


class MemoryFrameStream:
    """One end of an in-memory connection."""

    def __init__(
        self, send: MemoryObjectSendStream[Frame], receive: MemoryObjectReceiveStream[Frame]
    ) -> None:
        self._send = send
        self._receive = receive

    async def send(self, frame: Frame) -> None:
        with _SEND_ERRORS:
            await self._send.send(frame)

    async def receive(self) -> Frame:
        try:
            return await self._receive.receive()
        except anyio.ClosedResourceError as exc:
            raise anyio.EndOfStream from exc

    async def send_eof(self) -> None:
        """We finished sending: the other end reads end of stream."""
        await self._send.aclose()

    async def aclose(self) -> None:
        """Close both directions (this end is done)."""
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair(buffer: float = float("inf")) -> tuple[MemoryFrameStream, MemoryFrameStream]:
    """Two connected ends: what one sends, the other receives."""
    a_send, b_receive = anyio.create_memory_object_stream[Frame](buffer)
    b_send, a_receive = anyio.create_memory_object_stream[Frame](buffer)
    return MemoryFrameStream(a_send, a_receive), MemoryFrameStream(b_send, b_receive)


class MemoryTransport:
    """The ``memory`` transport plugin."""

    name: ClassVar[str] = "memory"

    def __init__(self) -> None:
        self._accept_send, self._accept_receive = anyio.create_memory_object_stream[
            MemoryFrameStream
        ](float("inf"))

    def open_connection(self) -> FrameStream:
        """Connect a new client; the running ``serve`` picks up the other end."""
        client, server = memory_pair()
        with _ACCEPT_ERRORS:
            self._accept_send.send_nowait(server)
        return client

    def stop(self) -> None:
        """Accept no more connections; ``serve`` returns when the current ones end."""
        self._accept_send.close()

    async def serve(self, handler: Handler, options: ServeOptions = ServeOptions()) -> None:
        if options.on_ready is not None:
            options.on_ready("memory:")
        async with anyio.create_task_group() as tg:
            async for server_end in self._accept_receive:
                tg.start_soon(_run, handler, server_end)


async def _run(handler: Handler, stream: MemoryFrameStream) -> None:
    try:
        await handler(stream)
    finally:
        await stream.aclose()
