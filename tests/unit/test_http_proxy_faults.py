"""The recording proxy when the upstream fails: the client gets a JSON-RPC error with the
right status and request id, and the cassette records what happened."""

from __future__ import annotations

import socket
from typing import Any

import anyio
import httpx

from cassette.transports.http._http_record import RecordingProxy

INIT = {
    "jsonrpc": "2.0",
    "id": 7,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25"},
}


class Collect:
    def __init__(self) -> None:
        self.frames: list[tuple[str, bytes]] = []
        self.statuses: list[tuple[str, str, int]] = []

    def frame(self, direction: str, data: bytes, meta: Any) -> None:
        self.frames.append((direction, data))

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        self.statuses.append((method, stream, status))


async def post_through(proxy: RecordingProxy) -> httpx.Response:
    transport = httpx.ASGITransport(app=proxy)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
        with anyio.fail_after(20):
            return await client.post(
                "/mcp", json=INIT, headers={"accept": "application/json, text/event-stream"}
            )


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_unreachable_upstream_gives_502_with_a_json_rpc_error() -> None:
    tap = Collect()
    proxy = RecordingProxy(f"http://127.0.0.1:{closed_port()}/mcp", tap, "127.0.0.1")

    async def go() -> None:
        response = await post_through(proxy)
        await proxy.aclose()
        assert response.status_code == 502
        body = response.json()
        assert body["id"] == 7
        assert "unreachable" in body["error"]["message"]

    anyio.run(go)
    assert tap.statuses == [("POST", "post-1", 502)]
    assert tap.frames[0][0] == "c2s"  # the request was recorded before it failed


def test_an_upstream_that_never_answers_gives_504_after_the_timeout() -> None:
    tap = Collect()

    async def go() -> None:
        async with await anyio.create_tcp_listener(local_host="127.0.0.1") as listener:
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            held: list[Any] = []

            async def hold(stream: Any) -> None:
                held.append(stream)  # accept, read nothing back, answer never
                await anyio.sleep_forever()

            async with anyio.create_task_group() as tg:
                tg.start_soon(listener.serve, hold)
                proxy = RecordingProxy(
                    f"http://127.0.0.1:{port}/mcp", tap, "127.0.0.1", upstream_timeout=0.5
                )
                response = await post_through(proxy)
                await proxy.aclose()
                tg.cancel_scope.cancel()
        assert response.status_code == 504
        assert "did not answer within 0.5 s" in response.json()["error"]["message"]

    anyio.run(go)
    assert tap.statuses == [("POST", "post-1", 504)]
