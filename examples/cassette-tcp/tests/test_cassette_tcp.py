"""What a plugin author's own tests look like: the check-suite, then a real round trip.

`check_transport` runs every property of the transport contract against the plugin: here
the `connect` side against the reference peer listening on TCP, and the `serve` side with
a client that connects to wherever `serve` reported it listens. Only public names are
imported: `cassette`, `cassette.transport` and `cassette.testing`.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import anyio
from cassette_tcp import TcpTransport, open_stream
from cassette_tcp.peer import peer_server

from cassette import (
    Cassette,
    ClientConnection,
    RecordConfig,
    ReplayOptions,
    ServeOptions,
    Target,
    record_session,
    serve_replay,
)
from cassette.testing import check_transport

INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "tcp-example", "version": "1"},
}


def run(scenario: Any) -> Any:
    async def bounded() -> Any:
        with anyio.fail_after(60):
            return await scenario()

    return anyio.run(bounded)


def test_the_tcp_plugin_passes_the_check_suite() -> None:
    async def scenario() -> Any:
        async with peer_server() as url:
            return await check_transport("tcp", target=Target(url=url), client=open_stream)

    report = run(scenario)
    assert report.ok, str(report)
    assert not report.skipped, str(report)  # both sides, every property


async def session(connection: ClientConnection) -> list[Any]:
    answers = [await connection.request("initialize", INIT)]
    await connection.notify("notifications/initialized")
    answers.append(await connection.request("tools/list"))
    answers.append(
        await connection.request("tools/call", {"name": "echo", "arguments": {"text": "over tcp"}})
    )
    await connection.send_eof()  # a half-close: the server sees the end, and so do we
    return answers


async def record_over_tcp(tape: Path, url: str) -> list[Any]:
    """Record the peer at ``url``, the client reaching the recorder through the plugin's
    own ``serve``: one TCP connection, handed to ``record_session`` as its client stream."""
    answers: list[Any] = []
    connected = anyio.Event()
    done = anyio.Event()

    async def handler(stream: Any) -> None:
        connected.set()
        config = RecordConfig(path=tape, transport="tcp", passthrough_stderr=False)
        await record_session(Target(url=url), config, stream)
        done.set()

    ready: list[str] = []
    listening = anyio.Event()

    def on_ready(address: str) -> None:
        ready.append(address)
        listening.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(TcpTransport().serve, handler, ServeOptions(on_ready=on_ready))
        await listening.wait()
        answers = await session(ClientConnection(await open_stream(ready[0])))
        await done.wait()
        tg.cancel_scope.cancel()
    return answers


def test_a_session_recorded_over_tcp_replays_over_tcp(tmp_path: Path) -> None:
    tape = tmp_path / "tcp.jsonl"

    async def scenario() -> tuple[list[Any], list[Any]]:
        async with peer_server() as url:
            # The client speaks to the recorder over a plain TCP connection of its own: the
            # recorder's client side is one served TCP stream, the server the peer.
            live = await record_over_tcp(tape, url)
        cassette = Cassette.load(tape)
        ready: list[str] = []
        listening = anyio.Event()

        def on_ready(address: str) -> None:
            ready.append(address)
            listening.set()

        async with anyio.create_task_group() as tg:
            options = ReplayOptions(transport="tcp", listen=ServeOptions(on_ready=on_ready))
            front = partial(serve_replay, cassette, options)
            tg.start_soon(front)
            await listening.wait()
            replayed = await session(ClientConnection(await open_stream(ready[0])))
            tg.cancel_scope.cancel()
        return live, replayed

    live, replayed = run(scenario)
    assert replayed == live
    assert live[2]["result"]["content"][0]["text"] == "over tcp"
    cassette = Cassette.load(tape)
    assert cassette.header.transport == "tcp"
    assert cassette.header.target["url"].startswith("tcp://127.0.0.1:")
