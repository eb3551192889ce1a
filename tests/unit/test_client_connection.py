"""``ClientConnection`` speaks anyio's words: ``send_eof`` half-closes, ``aclose`` closes."""

from __future__ import annotations

import anyio
import pytest

from cassette import ClientConnection, Frame
from cassette.transports.memory import memory_pair
from tests.helpers.support import run


def test_send_eof_ends_the_client_side_and_the_server_can_still_answer() -> None:
    client, server = memory_pair()

    async def go() -> dict[str, object]:
        conn = ClientConnection(client)
        await conn.send_eof()
        with pytest.raises(anyio.EndOfStream):
            await server.receive()  # the server sees the end of its input...
        await server.send(Frame(b'{"jsonrpc": "2.0", "method": "bye"}\n'))
        return await conn.receive()  # ...and what it still says can be read

    assert run(go, timeout=10) == {"jsonrpc": "2.0", "method": "bye"}


def test_aclose_closes_both_directions() -> None:
    client, server = memory_pair()

    async def go() -> None:
        conn = ClientConnection(client)
        await conn.aclose()
        with pytest.raises(anyio.EndOfStream):
            await server.receive()
        with pytest.raises(anyio.EndOfStream):
            await conn.receive()  # nothing more is read on a closed connection

    run(go, timeout=10)
