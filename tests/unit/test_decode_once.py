"""Each client message is decoded once, on every front: a network front decodes a body to
check it (media type, JSON-RPC shape, session) and hands that decoded value down to the
replay instead of having it parse the body again."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from cassette.core.replay.replayer import Replayer
from cassette.core.wire import jsonrpc
from cassette.transport import Frame
from cassette.transports.http.sse import SseReplayApp
from cassette.transports.http.streamable_http import HttpReplayApp
from cassette.transports.memory import memory_pair
from tests.helpers.support import front_app
from tests.unit import test_http_front as http
from tests.unit import test_sse_transport as sse
from tests.unit.test_replayer import note, req, res, tape

INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {}}
STDIO_TAPE = tape(
    ("c2s", req(0, "initialize", INIT)),
    ("s2c", res(0, {"protocolVersion": "2025-06-18", "capabilities": {}})),
    ("c2s", note("notifications/initialized")),
    ("c2s", req(1, "tools/list")),
    ("s2c", res(1, {"tools": []})),
)


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every JSON text the frame parser decodes, from now on."""
    seen: list[str] = []
    real = jsonrpc._decode

    def counting(text: str) -> Any:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(jsonrpc, "_decode", counting)
    return seen


def test_stdio_decodes_each_line_once(decodes: list[str]) -> None:
    from cassette.runtime.serve import replay

    sends = [req(0, "initialize", INIT), note("notifications/initialized"), req(1, "tools/list")]
    client, server = memory_pair()
    received: list[bytes] = []

    async def go() -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(replay, server, Replayer(STDIO_TAPE))
                for message in sends:
                    await client.send(Frame(json.dumps(message).encode() + b"\n"))
                await client.send_eof()
                while True:
                    try:
                        received.append((await client.receive()).data)
                    except anyio.EndOfStream:
                        break

    anyio.run(go)
    assert len(received) == 2  # both requests answered
    assert len(decodes) == len(sends)


def test_streamable_http_decodes_each_body_once(decodes: list[str]) -> None:
    app = front_app(HttpReplayApp, http.LEGACY)
    decodes.clear()  # preparing the cassette is not a request

    async def body(client: httpx.AsyncClient) -> None:
        init = await http.post(client, http.req(1, "initialize", {"protocolVersion": "2025-11-25"}))
        assert init.status_code == 200
        assert len(decodes) == 1
        sid = init.headers["mcp-session-id"]
        listed = await http.post(client, http.req(2, "tools/list"), **{"mcp-session-id": sid})
        assert listed.json()["result"] == {"tools": []}
        assert len(decodes) == 2

    http.scenario(app, body)


@pytest.fixture
def header_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every time an HTTP front parses a request's headers, from now on."""
    from cassette.transports.http import _http

    seen: list[int] = []
    real = _http._parse

    def counting(raw: Any) -> dict[bytes, list[str]]:
        seen.append(1)
        return real(raw)

    monkeypatch.setattr(_http, "_parse", counting)
    return seen


def test_streamable_http_parses_each_requests_headers_once(header_parses: list[int]) -> None:
    """The guard, the session lookups and the era checks of a POST read one parsing of
    its headers (they scanned the raw list three times and more)."""
    app = front_app(HttpReplayApp, http.LEGACY)

    async def body(client: httpx.AsyncClient) -> None:
        init = await http.post(client, http.req(1, "initialize", {"protocolVersion": "2025-11-25"}))
        assert init.status_code == 200
        assert len(header_parses) == 1
        sid = init.headers["mcp-session-id"]
        listed = await http.post(client, http.req(2, "tools/list"), **{"mcp-session-id": sid})
        assert listed.json()["result"] == {"tools": []}
        assert len(header_parses) == 2

    http.scenario(app, body)


def test_sse_decodes_each_post_once(decodes: list[str]) -> None:
    app = front_app(SseReplayApp, sse.SSE_TAPE)
    decodes.clear()  # preparing the cassette is not a request

    async def body(tg: Any) -> None:
        stream, endpoint = await sse.open_stream(app, tg)
        answer = await sse.post(app, endpoint, sse.req(0, "initialize", sse.INIT))
        assert answer.status == 202
        assert (await stream.message())["id"] == 0
        assert len(decodes) == 1
        await sse.post(app, endpoint, sse.note("notifications/initialized"))
        assert len(decodes) == 2

    sse.drive(body)


class _Fallback:
    """A live side that takes nothing: what ``new_episodes`` is when the replay answers."""

    async def seen(self, frame: Frame, classified: jsonrpc.Classified) -> bool:
        return False

    async def take(self, request: dict[str, Any], frame: Frame) -> bool:
        return False

    async def aclose(self) -> None:
        pass


def test_new_episodes_decodes_each_message_once(decodes: list[str]) -> None:
    """Under ``new_episodes`` the conversation classifies a frame for its live side and
    hands the same value to the replay (it decoded each frame three times)."""
    from cassette.runtime.conversation import DeliveryPolicy, PolicyServedSession

    conversation = PolicyServedSession(Replayer(STDIO_TAPE), DeliveryPolicy(), _Fallback())

    async def go() -> list[Any]:
        sends = [req(0, "initialize", INIT), req(1, "tools/list")]
        replies = [await conversation.receive(Frame(json.dumps(m).encode())) for m in sends]
        return [reply.messages for reply in replies]

    answers = anyio.run(go)
    assert [messages[-1]["id"] for messages in answers] == [0, 1]
    assert len(decodes) == 2
