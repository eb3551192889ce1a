"""Hostile input through the streamable-HTTP recording proxy: random methods, paths, headers
and bodies, relayed to a real (in-process) upstream that answers in JSON, in SSE, with odd
statuses, with garbage, or never. The proxy never fails with a 5xx of its own other than the
documented 502 and 504, never lets an exception out, and the cassette it writes always
reads back."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cassette.core.recording.recorder import Recorder
from cassette.core.wire.model import MessageEvent
from cassette.runtime.sink import Clock, Sink, SinkTap
from cassette.store.storage import Cassette, CassetteWriter
from cassette.transports.http._http import LazyClient, Receive, Scope, Send
from cassette.transports.http._http_record import RecordingProxy
from tests.unit.test_hostile_input import json_values

MODES = ("json", "sse", "status", "garbage", "hang")
UPSTREAM = "http://upstream.test/mcp"


class Upstream:
    """A tiny MCP-ish ASGI server: the proxy's real counterpart, answering per ``mode``."""

    def __init__(self, mode: str, status: int) -> None:
        self.mode, self.status = mode, status
        self.statuses: list[int] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body", False):
                break
        if self.mode == "hang":
            await anyio.sleep_forever()
        status, headers, content = self._answer(scope["method"], body)
        self.statuses.append(status)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def _answer(self, method: str, body: bytes) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        json_type = [(b"content-type", b"application/json")]
        if self.mode in ("status", "garbage"):
            bad = self.mode == "status"
            return (self.status, [], b"no") if bad else (200, json_type, b"\xff{not json")
        if method != "POST":
            return (405, [], b"") if method != "DELETE" else (200, [], b"")
        try:
            message = json.loads(body)
        except ValueError:
            error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}
            return 400, json_type, json.dumps(error).encode()
        if not isinstance(message, dict) or "method" not in message or "id" not in message:
            return 202, [], b""
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": {"protocolVersion": "2025-11-25"}}
        headers = [(b"mcp-session-id", b"s-1")] if message["method"] == "initialize" else []
        if self.mode == "json":
            return 200, json_type + headers, json.dumps(reply).encode()
        note = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}}
        events = f"id: 1\ndata: {json.dumps(note)}\n\nid: 2\ndata: {json.dumps(reply)}\n\n"
        return 200, [(b"content-type", b"text/event-stream"), *headers], events.encode()


rpc_messages = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0")},
    optional={
        "id": st.integers(-3, 3) | st.text(max_size=3) | st.none(),
        "method": st.sampled_from(["initialize", "tools/list", "ping", "notifications/x"]),
        "params": json_values,
        "result": json_values,
    },
)
bodies = (
    st.binary(max_size=200)
    | json_values.map(lambda v: json.dumps(v).encode())
    | rpc_messages.map(lambda v: json.dumps(v).encode())
    | st.lists(rpc_messages, max_size=3).map(lambda v: json.dumps(v).encode())
)
header_values = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=20)
headers = st.dictionaries(
    st.sampled_from(
        [
            "mcp-session-id",
            "mcp-protocol-version",
            "accept",
            "content-type",
            "origin",
            "last-event-id",
            "connection",
            "authorization",
            "x-anything",
        ]
    ),
    header_values,
    max_size=4,
)


# CASSETTE_FUZZ=1 (docs/reliability.md) runs the long version.
@settings(
    max_examples=20_000 if os.environ.get("CASSETTE_FUZZ") else 60,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    st.sampled_from(["POST", "GET", "DELETE", "PUT", "PATCH", "OPTIONS"]),
    st.sampled_from(["/mcp", "/mcp", "/mcp", "/", "/mcp/", "/other"]),  # mostly the endpoint
    bodies,
    headers,
    st.tuples(st.sampled_from(MODES), st.sampled_from([400, 404, 409, 500, 503])),
)
def test_recording_proxy_never_fails_and_its_cassette_always_reads(
    method: str, path: str, body: bytes, sent: dict[str, str], upstream_says: tuple[str, int]
) -> None:
    upstream = Upstream(*upstream_says)
    with tempfile.TemporaryDirectory() as folder:
        tape = Path(folder) / "fuzz.jsonl"
        recorder = Recorder(transport="streamable-http", started_at="x", target={"url": UPSTREAM})
        writer = CassetteWriter(tape).open()
        sink = Sink(recorder, writer, Clock())
        proxy = RecordingProxy(UPSTREAM, SinkTap(sink), "127.0.0.1", upstream_timeout=0.2)
        # The proxy's own client, reaching the upstream app in-process; an upstream that
        # crashed would answer 500, as over a network.
        to_upstream = httpx.ASGITransport(app=upstream, raise_app_exceptions=False)
        proxy._http = LazyClient(httpx.AsyncClient(transport=to_upstream))

        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=proxy)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                with anyio.fail_after(10):
                    response = await c.request(method, path, content=body, headers=sent)
            await proxy.aclose()
            return response

        try:
            response = anyio.run(go)
        finally:
            sink.finish()
            writer.close()
        if response.status_code >= 500:
            relayed = response.status_code in upstream.statuses
            assert relayed or response.status_code in (502, 504), response
        if response.status_code == 504:
            assert "did not answer within 0.2 s" in response.json()["error"]["message"]
        Cassette.load(tape)  # raises on anything unreadable
        event(f"{response.status_code} from {'upstream' if upstream.statuses else 'proxy'}")


def test_the_fuzz_upstream_is_reached_through_the_proxy() -> None:
    """The property above is only worth something if requests do get through."""
    upstream = Upstream("sse", 500)
    with tempfile.TemporaryDirectory() as folder:
        tape = Path(folder) / "t.jsonl"
        recorder = Recorder(transport="streamable-http", started_at="x", target={"url": UPSTREAM})
        writer = CassetteWriter(tape).open()
        sink = Sink(recorder, writer, Clock())
        proxy = RecordingProxy(UPSTREAM, SinkTap(sink), "127.0.0.1")
        proxy._http = LazyClient(httpx.AsyncClient(transport=httpx.ASGITransport(app=upstream)))
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": "initialize"}

        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=proxy)
            async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as c:
                with anyio.fail_after(10):
                    return await c.post("/mcp", json=request)

        response = anyio.run(go)
        sink.finish()
        writer.close()
        assert response.status_code == 200
        assert response.headers["mcp-session-id"] == "s-1"
        assert '"id": 1' in response.text
        events = Cassette.load(tape).events
        kinds = [(e.dir, e.message.get("method")) for e in events if isinstance(e, MessageEvent)]
        assert kinds == [("c2s", "initialize"), ("s2c", "notifications/message"), ("s2c", None)]
