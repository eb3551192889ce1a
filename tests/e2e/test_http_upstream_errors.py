"""The streamable-HTTP client side against an endpoint that answers with a plain HTTP
error: a request gets a JSON-RPC error naming the status at once, instead of waiting for
an answer that will never come. The counterpart is the standard library's own HTTP server,
which answers every POST with 501 and an HTML page."""

from __future__ import annotations

from collections.abc import Iterator

import anyio
import pytest

from cassette.core.wire.jsonrpc import loads
from cassette.errors import TransportError
from cassette.registry import load_transport
from cassette.tools.check import check_server
from cassette.transport import Frame, Target
from tests.helpers.support import PY, Background

pytest.importorskip("httpx")


@pytest.fixture
def plain_http() -> Iterator[str]:
    server = Background([PY, "-m", "http.server", "0", "--bind", "127.0.0.1"])
    try:
        port = server.wait_for(r"Serving HTTP on 127\.0\.0\.1 port (\d+)").group(1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        server.stop()


def test_a_request_answered_with_a_plain_http_error_gets_a_json_rpc_error(
    plain_http: str,
) -> None:
    async def go() -> dict[str, object]:
        transport = load_transport("streamable-http")()
        async with transport.connect(Target(url=plain_http)) as upstream:
            await upstream.send(Frame(b'{"jsonrpc":"2.0","id":7,"method":"ping"}'))
            await upstream.send(Frame(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'))
            with anyio.fail_after(30):
                frame = await upstream.receive()
            answer: dict[str, object] = loads(frame.data)
            return answer

    answer = anyio.run(go)
    assert answer["id"] == 7
    error = answer["error"]
    assert isinstance(error, dict)
    assert error["code"] == -32000
    assert "HTTP 501 with no JSON-RPC body" in error["message"]


def test_check_reports_such_a_server_instead_of_waiting_out_its_deadline(
    plain_http: str,
) -> None:
    with pytest.raises(TransportError) as raised:
        anyio.run(lambda: check_server(url=plain_http, time_limit=30))
    message = str(raised.value)
    assert "the server refused initialize" in message
    assert "HTTP 501 with no JSON-RPC body" in message
    assert "\n" not in message
