"""A transport registered in this process, for a test, without installing a distribution."""

from __future__ import annotations

from typing import Any, ClassVar

import anyio
import pytest

from cassette import Cassette, ClientConnection, ReplayOptions, serve_replay
from cassette.errors import DuplicateTransportError, UsageError
from cassette.registry import available, get_transport, load_transport, register
from cassette.transport import FrameStream, Handler, ServeOptions
from cassette.transports.memory import memory_pair
from tests.helpers.support import ROOT, run

EXAMPLE = ROOT / "examples" / "everything.jsonl"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
ANSWERS: list[dict[str, Any]] = []


class OneClient:
    """A front with one in-process client, which asks for ``initialize`` and leaves."""

    name: ClassVar[str] = "one-client"

    async def serve(self, handler: Handler, options: ServeOptions = ServeOptions()) -> None:
        client, server = memory_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_run, handler, server)
            conn = ClientConnection(client)
            ANSWERS.append(await conn.request("initialize", INIT))
            await conn.send_eof()


async def _run(handler: Handler, stream: FrameStream) -> None:
    await handler(stream)


def test_a_registered_plugin_is_served_by_name_until_the_block_ends() -> None:
    ANSWERS.clear()
    with register("one-client", OneClient) as plugin:
        assert plugin is OneClient
        assert "one-client" in available()
        assert load_transport("one-client") is OneClient
        results = run(
            lambda: serve_replay(Cassette.load(EXAMPLE), ReplayOptions(transport="one-client")),
            timeout=30,
        )
    assert ANSWERS[0]["result"]["serverInfo"]["name"]
    assert [len(result.misses) for result in results] == [0]
    assert "one-client" not in available()
    with pytest.raises(LookupError, match="no transport named 'one-client'"):
        get_transport("one-client")


def test_a_registration_without_a_block_lasts_until_unregistered() -> None:
    registration = register("one-client", OneClient)
    try:
        assert isinstance(get_transport("one-client"), OneClient)
    finally:
        registration.unregister()
    registration.unregister()  # again: nothing happens
    assert "one-client" not in available()


def test_a_taken_name_is_refused_unless_replacing_an_installed_one() -> None:
    with register("one-client", OneClient), pytest.raises(DuplicateTransportError):
        register("one-client", OneClient)
    with pytest.raises(DuplicateTransportError, match="replace=True"):
        register("stdio", OneClient)
    with register("stdio", OneClient, replace=True):
        assert load_transport("stdio") is OneClient
    assert load_transport("stdio") is not OneClient
    with pytest.raises(UsageError, match="short for 'streamable-http'"):
        register("http", OneClient)
