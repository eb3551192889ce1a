"""CORS on the HTTP fronts: a browser page the DNS-rebinding guard admits (this machine's
own, or an ``allowed_origins`` one) gets its preflight answered and may read the answers;
any other page still gets 403."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest

from cassette.runtime import replay_sessions
from cassette.transport import RecordOptions, ServeOptions, normalize_origin
from cassette.transports.http.sse import SseReplayApp
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import front_app
from tests.unit.test_http_front import ACCEPT, LEGACY, MODERN, req

LOCAL = "http://localhost:5173"
PREFLIGHT = {
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type,mcp-session-id",
}


def on(app: Any, body: Callable[[httpx.AsyncClient], Awaitable[None]]) -> None:
    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
            with anyio.fail_after(10):
                await body(client)

    anyio.run(go)


def test_a_loopback_page_gets_its_preflight_and_may_read_the_session_id() -> None:
    app = front_app(HttpReplayApp, LEGACY)

    async def body(client: httpx.AsyncClient) -> None:
        preflight = await client.options("/api/mcp", headers={**PREFLIGHT, "origin": LOCAL})
        assert preflight.status_code == 204
        assert preflight.headers["access-control-allow-origin"] == LOCAL
        assert preflight.headers["access-control-allow-methods"] == "GET, POST, DELETE"
        assert preflight.headers["access-control-allow-headers"] == "content-type,mcp-session-id"
        answer = await client.post(
            "/api/mcp", json=req(1, "initialize"), headers={**ACCEPT, "origin": LOCAL}
        )
        assert answer.status_code == 200
        assert answer.headers["access-control-allow-origin"] == LOCAL
        assert "mcp-session-id" in answer.headers["access-control-expose-headers"]
        plain = await client.post("/api/mcp", json=req(1, "initialize"), headers=ACCEPT)
        assert "access-control-allow-origin" not in plain.headers  # not from a browser

    on(app, body)


def test_a_foreign_page_is_still_refused_unless_allowed() -> None:
    allowed = ServeOptions(allowed_origins=["https://App.Example.com:443/"]).allowed_origins
    app = HttpReplayApp(replay_sessions(MODERN), allowed_origins=allowed)

    async def body(client: httpx.AsyncClient) -> None:
        foreign = await client.options(
            "/api/mcp", headers={**PREFLIGHT, "origin": "https://evil.example"}
        )
        assert foreign.status_code == 403
        assert "access-control-allow-origin" not in foreign.headers
        allowed = await client.options(
            "/api/mcp", headers={**PREFLIGHT, "origin": "https://app.example.com"}
        )
        assert allowed.status_code == 204
        assert allowed.headers["access-control-allow-methods"] == "POST"  # the modern era

    on(app, body)


def test_the_sse_front_answers_preflights_for_what_it_serves() -> None:
    app = front_app(SseReplayApp, LEGACY)

    async def body(client: httpx.AsyncClient) -> None:
        preflight = await client.options("/message", headers={**PREFLIGHT, "origin": LOCAL})
        assert (preflight.status_code, preflight.headers["access-control-allow-methods"]) == (
            204,
            "GET, POST",
        )

    on(app, body)


def test_allowed_origins_are_kept_as_browsers_write_them() -> None:
    options = RecordOptions(allowed_origins=["HTTPS://App.Example.com:443", "http://[::1]:8080/"])
    assert options.allowed_origins == ("https://app.example.com", "http://[::1]:8080")
    assert normalize_origin("http://localhost:80") == "http://localhost"
    for bad in ("*", "app.example.com", "https://app.example.com/path", "null"):
        with pytest.raises(ValueError, match="is not an origin"):
            normalize_origin(bad)
