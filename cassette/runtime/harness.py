"""The harness API: record or replay in-process and talk to it as a client, with dicts.

``open_recording`` spawns a server behind the recording proxy and ``open_replay`` serves a
cassette on the memory transport; both hand back a ``ClientConnection``. They run the same
runtime as the command line (``record_session`` and ``serve``), so a harness sees exactly
what a client of ``cassette record`` or ``cassette replay`` would.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio

from cassette.core.replay.matching import Strategy
from cassette.core.wire.jsonrpc import JSONObject, Kind, classify, dumps_bytes
from cassette.runtime.record import RecordConfig, RecordResult, record_session
from cassette.runtime.replay_pool import ReplayOptions, replay_pool
from cassette.runtime.serve import serve
from cassette.store.storage import Cassette
from cassette.transport import Frame, FrameStream, Target

__all__ = ["ClientConnection", "open_recording", "open_replay"]


class ClientConnection:
    """A harness's side of a session: send and receive JSON-RPC messages as dicts.

    ``request`` is the convenience most harnesses want: it numbers the request, waits for
    the response with that id, and keeps every other message it saw in ``received``.
    """

    def __init__(self, stream: FrameStream) -> None:
        self.stream = stream
        self.received: list[JSONObject] = []
        self._next_id = 0
        self._lines: list[JSONObject] = []

    async def send(self, message: JSONObject) -> None:
        """Send one message."""
        await self.stream.send(Frame(dumps_bytes(message) + b"\n"))

    async def receive(self) -> JSONObject:
        """The next JSON-RPC message from the server (other output is skipped)."""
        while not self._lines:
            frame = await self.stream.receive()
            for line in frame.data.splitlines():
                classified = classify(line)
                if classified.kind is Kind.BATCH:
                    self._lines.extend(classified.value)
                elif classified.is_message:
                    self._lines.append(classified.value)
        return self._lines.pop(0)

    async def request(self, method: str, params: JSONObject | None = None) -> JSONObject:
        """Send a request and return its response message (result or error)."""
        self._next_id += 1
        msg_id = self._next_id
        message: JSONObject = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            reply = await self.receive()
            if reply.get("id") == msg_id and "method" not in reply:
                return reply
            self.received.append(reply)

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification."""
        message: JSONObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def send_eof(self) -> None:
        """Half-close: finish the session from the client's side (the server sees end of
        input; what it still says can be read)."""
        await self.stream.send_eof()

    async def aclose(self) -> None:
        """Full close: both directions (nothing more is sent or read), as anyio's streams."""
        await self.stream.aclose()


@asynccontextmanager
async def open_recording(
    command: Sequence[str | os.PathLike[str]],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    transport: str = "stdio",
) -> AsyncIterator[ClientConnection]:
    """Spawn a server, record everything to ``path``, and hand the harness the client side."""
    from cassette.transports.memory import memory_pair

    harness_end, proxy_end = memory_pair()
    config = RecordConfig(
        path=path, transport=transport, overwrite=overwrite, passthrough_stderr=False
    )
    result: list[RecordResult] = []

    async def run() -> None:
        result.append(
            await record_session(
                Target(command=tuple(os.fspath(arg) for arg in command)), config, proxy_end
            )
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        try:
            yield ClientConnection(harness_end)
        finally:
            await harness_end.send_eof()  # the client is done; the proxy winds the server down


@asynccontextmanager
async def open_replay(
    cassette: Cassette | str | os.PathLike[str], *, strategy: str | Strategy | None = None
) -> AsyncIterator[ClientConnection]:
    """Serve a cassette in-process and hand the harness a connection to it. ``strategy``
    ``None``: the cassette's recorded one, else ``default``, as ``cassette replay``."""
    from cassette.transports.memory import MemoryTransport  # not on the stdio path

    transport = MemoryTransport()
    responders = replay_pool(cassette, ReplayOptions(strategy=strategy, transport=transport))
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve, transport, responders)
        stream = transport.open_connection()
        try:
            yield ClientConnection(stream)
        finally:
            await stream.aclose()
            transport.stop()
