"""The HTTP replay front, mounted in-process behind httpx's ASGI transport: statuses,
headers and sessions per era, without opening a port."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import attrs
import httpx
import pytest

from cassette import Cassette, Header, HttpEvent, MessageEvent, RawEvent
from cassette.core.wire.model import Era, RecorderInfo
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import front_app

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def tape(era: Era, *events: Any) -> Cassette:
    header = Header(
        transport="streamable-http",
        recorder=RecorderInfo("t", "0"),
        started_at="x",
        target={"url": "https://example.test/api/mcp"},
        era=era,
        protocol_version="2025-11-25" if era == "legacy" else "2026-07-28",
    )
    numbered = tuple(_with_seq(e, i + 1) for i, e in enumerate(events))
    return Cassette(header, numbered)


def copies(events: Any) -> list[Any]:
    """Events of another tape, to number afresh in a new one (``tape`` numbers in place)."""
    return [attrs.evolve(event) for event in events]


def _with_seq(event: Any, seq: int) -> Any:
    object.__setattr__(event, "seq", seq)
    return event


def c2s(message: dict[str, Any], stream: str, **meta: Any) -> MessageEvent:
    return MessageEvent(t=0.0, dir="c2s", message=message, meta={"stream": stream, **meta})


def s2c(message: dict[str, Any], stream: str, **meta: Any) -> MessageEvent:
    return MessageEvent(t=0.0, dir="s2c", message=message, meta={"stream": stream, **meta})


def req(msg_id: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def res(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


LEGACY = tape(
    "legacy",
    c2s(req(1, "initialize", {"protocolVersion": "2025-11-25"}), "post-1"),
    RawEvent(
        t=0.0,
        dir="s2c",
        text="",
        meta={"stream": "post-1", "session": 1, "sse": True, "event_id": "x", "retry": 1500},
    ),
    s2c(res(1, {"protocolVersion": "2025-11-25"}), "post-1", session=1, sse=True, event_id="a"),
    c2s({"jsonrpc": "2.0", "method": "notifications/initialized"}, "post-2", session=1),
    HttpEvent(t=0.0, method="GET", stream="get-3", status=200, session=1),
    s2c(
        {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"},
        "get-3",
        session=1,
        sse=True,
    ),
    c2s(req(2, "tools/list"), "post-4", session=1),
    s2c(res(2, {"tools": []}), "post-4", session=1),
)

TOOL_CALL = req(3, "tools/call", {"name": "add", "arguments": {"a": 1}, "_meta": MODERN_META})
MODERN = tape(
    "modern",
    c2s(req(1, "server/discover", {"_meta": MODERN_META}), "post-1"),
    s2c(res(1, {"supportedVersions": ["2026-07-28"]}), "post-1"),
    c2s(TOOL_CALL, "post-2"),
    s2c(res(3, {"content": [], "resultType": "complete"}), "post-2", sse=True),
    c2s(req(4, "tools/call", {"name": "old", "arguments": {}, "_meta": MODERN_META}), "post-3"),
    HttpEvent(t=0.0, method="POST", stream="post-3", status=400),
    s2c({"jsonrpc": "2.0", "id": 4, "error": {"code": -32022, "message": "Unsupported"}}, "post-3"),
)


def scenario(app: HttpReplayApp, body: Callable[[httpx.AsyncClient], Awaitable[None]]) -> None:
    async def go() -> None:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
            with anyio.fail_after(10):
                await body(client)

    anyio.run(go)


def sse_messages(response: httpx.Response) -> list[Any]:
    return [
        json.loads(line[len("data: ") :])
        for line in response.text.splitlines()
        if line.startswith("data: ") and line != "data: "
    ]


def post(client: httpx.AsyncClient, message: Any, **headers: str) -> Awaitable[httpx.Response]:
    return client.post("/api/mcp", json=message, headers={**ACCEPT, **headers})


class TestLegacy:
    def test_initialize_opens_a_session_answered_as_recorded(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            first = await post(client, req(7, "initialize", {"protocolVersion": "2025-06-18"}))
            second = await post(client, req(7, "initialize", {"protocolVersion": "2025-06-18"}))
            assert first.status_code == 200
            assert first.headers["content-type"] == "text/event-stream"
            # recorded at 2025-11-25: the older revision asked for is granted, as live
            assert sse_messages(first) == [res(7, {"protocolVersion": "2025-06-18"})]
            ids = {first.headers["mcp-session-id"], second.headers["mcp-session-id"]}
            assert len(ids) == 2  # a fresh session id per replay session
            assert all(len(i) >= 16 and i.isascii() for i in ids)

        scenario(app, body)

    def test_sse_events_have_stream_ids_and_the_recorded_priming_event(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            init = await post(client, req(3, "initialize"))
            assert init.text.startswith(
                "id: post-1/1\nretry: 1500\ndata: \n\nid: post-1/2\nevent: message\n"
            )
            sid = init.headers["mcp-session-id"]
            resumed = await client.get(
                "/api/mcp",
                headers={
                    "accept": "text/event-stream",
                    "mcp-session-id": sid,
                    "last-event-id": "post-1/1",
                },
            )
            assert resumed.status_code == 200
            assert resumed.text.startswith("id: post-1/2\n")  # resumes after the given event
            assert sse_messages(resumed) == [res(3, {"protocolVersion": "2025-11-25"})]

        scenario(app, body)

    def test_sessions_are_isolated_and_json_answers_stay_json(self) -> None:
        app = front_app(HttpReplayApp, LEGACY, "strict")

        async def body(client: httpx.AsyncClient) -> None:
            sessions = []
            for _ in range(2):
                init = await post(client, req(1, "initialize"))
                sessions.append(init.headers["mcp-session-id"])
            for sid in sessions:  # strict: each session may play tools/list once, each its own
                listing = await post(client, req(9, "tools/list"), **{"mcp-session-id": sid})
                assert listing.status_code == 200
                assert listing.headers["content-type"] == "application/json"
                assert listing.json() == res(9, {"tools": []})

        scenario(app, body)

    def test_notification_gets_202(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            sid = (await post(client, req(1, "initialize"))).headers["mcp-session-id"]
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            response = await post(client, note, **{"mcp-session-id": sid})
            assert response.status_code == 202
            assert response.content == b""
            # what the server said on its GET stream after that waits for the session's GET
            queued = app.sessions[sid].receiver.receive_nowait()
            assert queued == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}

        scenario(app, body)

    def test_unknown_session_is_404_and_delete_ends_a_session(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            unknown = await post(client, req(2, "tools/list"), **{"mcp-session-id": "nope"})
            assert unknown.status_code == 404
            sid = (await post(client, req(1, "initialize"))).headers["mcp-session-id"]
            headers = {"mcp-session-id": sid}
            assert (await client.delete("/api/mcp", headers=headers)).status_code == 200
            assert (await post(client, req(2, "tools/list"), **headers)).status_code == 404
            assert (await client.delete("/api/mcp", headers=headers)).status_code == 404

        scenario(app, body)

    def test_get_needs_a_session_and_protocol_version_is_checked(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            stream = {"accept": "text/event-stream"}
            assert (await client.get("/api/mcp", headers=stream)).status_code == 400
            gone = {**stream, "mcp-session-id": "nope"}
            assert (await client.get("/api/mcp", headers=gone)).status_code == 404
            sid = (await post(client, req(1, "initialize"))).headers["mcp-session-id"]
            bad = await post(
                client,
                req(2, "tools/list"),
                **{"mcp-session-id": sid, "mcp-protocol-version": "1999-01-01"},
            )
            assert bad.status_code == 400
            good = await post(
                client,
                req(2, "tools/list"),
                **{"mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"},
            )
            assert good.status_code == 200

        scenario(app, body)

    def test_foreign_origin_is_403_and_local_origin_is_fine(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            evil = await post(client, req(1, "initialize"), origin="http://evil.example")
            assert evil.status_code == 403
            rebound = await client.post(
                "/api/mcp", json=req(1, "initialize"), headers={**ACCEPT, "host": "evil.example"}
            )
            assert rebound.status_code == 403
            local = await post(client, req(1, "initialize"), origin="http://localhost:5173")
            assert local.status_code == 200

        scenario(app, body)

    def test_serves_at_the_recorded_path_only(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)
        assert app.path == "/api/mcp"

        async def body(client: httpx.AsyncClient) -> None:
            response = await client.post("/mcp", json=req(1, "initialize"), headers=ACCEPT)
            assert response.status_code == 404

        scenario(app, body)

    def test_a_miss_is_a_json_rpc_error_on_its_post(self) -> None:
        misses: list[str] = []
        app = front_app(HttpReplayApp, LEGACY, on_miss=misses.append)

        async def body(client: httpx.AsyncClient) -> None:
            sid = (await post(client, req(1, "initialize"))).headers["mcp-session-id"]
            response = await post(client, req(5, "prompts/list"), **{"mcp-session-id": sid})
            assert response.status_code == 200
            assert response.json()["error"]["code"] == -32099

        scenario(app, body)
        assert misses
        assert "prompts/list was never recorded" in misses[0]
        assert "prompts/list" in app.pool.result().summary

    def test_media_types_and_bodies_are_checked_as_the_reference_server_does(self) -> None:
        app = front_app(HttpReplayApp, LEGACY)

        async def body(client: httpx.AsyncClient) -> None:
            sid = (await post(client, req(1, "initialize"))).headers["mcp-session-id"]
            session = {"mcp-session-id": sid}
            only_json = await post(
                client, req(2, "tools/list"), **session, accept="application/json"
            )
            assert (only_json.status_code, only_json.json()["error"]["code"]) == (406, -32000)
            text = await post(
                client, req(2, "tools/list"), **session, **{"content-type": "text/plain"}
            )
            assert (text.status_code, text.json()["error"]["code"]) == (415, -32000)
            null_id = await post(client, {**req(2, "tools/list"), "id": None}, **session)
            assert (null_id.status_code, null_id.json()["error"]["code"]) == (400, -32700)
            again = await post(client, req(3, "initialize"), **session)
            assert (again.status_code, again.json()["error"]["code"]) == (400, -32600)
            batch = await post(client, [req(4, "tools/list")], **session)
            assert batch.status_code == 200  # batches are still the core's to answer
            put = await client.put("/api/mcp", json=req(5, "tools/list"), headers=ACCEPT)
            assert (put.status_code, put.headers["allow"]) == (405, "GET, POST, DELETE")

        scenario(app, body)

    def test_without_a_session_only_what_was_recorded_without_one_is_answered(self) -> None:
        problem = {"jsonrpc": "2.0", "id": 0, "error": {"code": -32000, "message": "no"}}
        probed = tape(
            "legacy",
            c2s(req(0, "server/discover"), "post-1"),
            HttpEvent(t=0.0, method="POST", stream="post-1", status=400),
            s2c(problem, "post-1"),
            *copies(LEGACY.events),
        )
        app = front_app(HttpReplayApp, probed)

        async def body(client: httpx.AsyncClient) -> None:
            listing = await post(client, req(2, "tools/list"))
            assert (listing.status_code, listing.json()["error"]["code"]) == (400, -32000)
            assert "not initialized" in listing.json()["error"]["message"]
            discover = await post(client, req(7, "server/discover"))
            assert discover.status_code == 400  # the probe gets what it got live
            assert discover.json() == {**problem, "id": 7}

        scenario(app, body)

    def test_a_get_stream_that_resumed_a_post_is_served_on_that_post(self) -> None:
        progress = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}
        resumed = tape(
            "legacy",
            *copies(LEGACY.events[:4]),
            c2s(req(5, "tools/call", {"name": "slow"}), "post-5", session=1),
            s2c(progress, "post-5", session=1, sse=True),
            HttpEvent(t=0.0, method="GET", stream="get-6", status=200, session=1),
            s2c(progress, "get-6", session=1, sse=True),
            s2c(res(5, {"content": []}), "get-6", session=1, sse=True),
        )
        app = front_app(HttpReplayApp, resumed)

        async def body(client: httpx.AsyncClient) -> None:
            sid = (await post(client, req(1, "initialize"))).headers["mcp-session-id"]
            call = await post(
                client, req(9, "tools/call", {"name": "slow"}), **{"mcp-session-id": sid}
            )
            assert sse_messages(call) == [progress, progress, res(9, {"content": []})]

        scenario(app, body)


class TestModern:
    def headers(self, method: str, name: str | None = None) -> dict[str, str]:
        out = {"mcp-protocol-version": "2026-07-28", "mcp-method": method}
        if name is not None:
            out["mcp-name"] = name
        return out

    def test_get_and_delete_are_405(self) -> None:
        app = front_app(HttpReplayApp, MODERN)

        async def body(client: httpx.AsyncClient) -> None:
            assert (await client.get("/api/mcp")).status_code == 405
            assert (await client.delete("/api/mcp")).status_code == 405

        scenario(app, body)

    def test_stateless_posts_with_matching_headers(self) -> None:
        app = front_app(HttpReplayApp, MODERN)

        async def body(client: httpx.AsyncClient) -> None:
            discover = await post(
                client,
                req(1, "server/discover", {"_meta": MODERN_META}),
                **self.headers("server/discover"),
            )
            assert discover.status_code == 200
            assert "mcp-session-id" not in discover.headers
            call = await post(client, {**TOOL_CALL, "id": 8}, **self.headers("tools/call", "add"))
            assert call.headers["content-type"] == "text/event-stream"
            assert sse_messages(call) == [res(8, {"content": [], "resultType": "complete"})]

        scenario(app, body)

    def test_header_mismatch_is_400_with_32020(self) -> None:
        app = front_app(HttpReplayApp, MODERN)

        async def body(client: httpx.AsyncClient) -> None:
            wrong_name = await post(client, TOOL_CALL, **self.headers("tools/call", "other"))
            assert wrong_name.status_code == 400
            assert wrong_name.json()["error"]["code"] == -32020
            wrong_method = await post(client, TOOL_CALL, **self.headers("tools/list", "add"))
            assert wrong_method.json()["error"]["code"] == -32020
            no_version = await post(
                client, TOOL_CALL, **{"mcp-method": "tools/call", "mcp-name": "add"}
            )
            assert no_version.status_code == 400
            encoded = await post(client, TOOL_CALL, **self.headers("tools/call", "=?base64?YWRk?="))
            assert encoded.status_code == 200  # base64 form of "add"

        scenario(app, body)

    def test_recorded_error_status_is_replayed(self) -> None:
        app = front_app(HttpReplayApp, MODERN)

        async def body(client: httpx.AsyncClient) -> None:
            old = req(9, "tools/call", {"name": "old", "arguments": {}, "_meta": MODERN_META})
            response = await post(client, old, **self.headers("tools/call", "old"))
            assert response.status_code == 400
            assert response.json() == {
                "jsonrpc": "2.0",
                "id": 9,
                "error": {"code": -32022, "message": "Unsupported"},
            }

        scenario(app, body)

    def test_an_unsupported_version_is_400_with_32022_naming_the_supported_ones(self) -> None:
        app = front_app(HttpReplayApp, MODERN)
        meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
        future = req(3, "tools/list", {"_meta": meta})

        async def body(client: httpx.AsyncClient) -> None:
            headers = {**self.headers("tools/list"), "mcp-protocol-version": "2099-01-01"}
            response = await post(client, future, **headers)
            assert response.status_code == 400
            assert response.json()["error"]["code"] == -32022
            assert response.json()["error"]["data"] == {
                "supported": ["2026-07-28"],
                "requested": "2099-01-01",
            }
            note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {}}
            late = await post(client, note, **headers)
            assert (late.status_code, late.json()["error"]["code"]) == (400, -32022)

        scenario(app, body)

    def test_bodies_and_envelopes_are_checked_as_the_ladder_says(self) -> None:
        app = front_app(HttpReplayApp, MODERN)
        listing = req(3, "tools/list", {"_meta": MODERN_META})

        async def body(client: httpx.AsyncClient) -> None:
            headers = self.headers("tools/list")
            for shape in ([listing], {**listing, "id": None}, res(3, {})):
                refused = await post(client, shape, **headers)
                assert (refused.status_code, refused.json()["error"]["code"]) == (400, -32600)
            bare = await post(client, req(3, "tools/list"), **headers)
            assert (bare.status_code, bare.json()["error"]["code"]) == (400, -32602)
            twice = await client.post(
                "/api/mcp",
                json=listing,
                headers=[*ACCEPT.items(), *headers.items(), ("mcp-method", "tools/list")],
            )
            assert (twice.status_code, twice.json()["error"]["code"]) == (400, -32020)
            text = await post(client, listing, **headers, **{"content-type": "text/plain"})
            assert text.status_code == 400
            assert (
                await post(client, listing, **headers, accept="application/json")
            ).status_code == 406
            assert (await post(client, listing, **headers, accept="*/*")).status_code == 200

        scenario(app, body)


@pytest.mark.parametrize("body", [b"{not json", b""])
def test_unparsable_post_is_400(body: bytes) -> None:
    app = front_app(HttpReplayApp, LEGACY)

    async def go(client: httpx.AsyncClient) -> None:
        response = await client.post("/api/mcp", content=body, headers=ACCEPT)
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32700

    scenario(app, go)


def test_a_listen_stream_replays_its_notifications_and_stays_open_until_closed() -> None:
    listen_params = {"_meta": MODERN_META, "filter": {"toolsListChanged": True}}
    ack = {"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {}}
    sub_meta = {"io.modelcontextprotocol/subscriptionId": "sub-1"}
    changed = {
        "jsonrpc": "2.0",
        "method": "notifications/tools/list_changed",
        "params": {"_meta": sub_meta},
    }
    cassette = tape(
        "modern",
        c2s(req(5, "subscriptions/listen", listen_params), "post-9"),
        s2c(ack, "post-9", sse=True),
        s2c(changed, "post-9", sse=True),
    )
    app = front_app(HttpReplayApp, cassette)
    body = json.dumps(req(6, "subscriptions/listen", listen_params)).encode()
    sent: list[dict[str, Any]] = []
    first_chunk = anyio.Event()
    closed = anyio.Event()
    requests = iter([{"type": "http.request", "body": body, "more_body": False}])

    async def receive() -> dict[str, Any]:
        message = next(requests, None)
        if message is not None:
            return message
        await closed.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        if message.get("body"):
            first_chunk.set()

    headers = [
        (b"content-type", b"application/json"),
        (b"accept", b"application/json, text/event-stream"),
        (b"mcp-protocol-version", b"2026-07-28"),
        (b"mcp-method", b"subscriptions/listen"),
    ]
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/api/mcp",
        "headers": headers,
        "query_string": b"",
    }

    async def go() -> None:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(app, scope, receive, send)
                await first_chunk.wait()
                assert not any(
                    m.get("type") == "http.response.body" and not m.get("more_body") for m in sent
                )
                closed.set()

    anyio.run(go)
    assert sent[0]["status"] == 200
    text = b"".join(m.get("body", b"") for m in sent[1:]).decode()
    messages = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]
    assert messages == [ack, changed]  # the acknowledgement first, subscription ids kept


def test_an_oversized_body_gets_413() -> None:
    from cassette.transports.http import _http

    async def go() -> None:
        sent: list[dict[str, Any]] = []
        chunks = iter([b"x" * 10, b"y" * 10])

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": next(chunks), "more_body": True}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        assert await _http.read_body(receive, limit=15, send=send) is None
        assert sent[0]["status"] == 413
        assert b"over the 15 byte limit" in sent[1]["body"]

    anyio.run(go)


class TestAcrossEras:
    """A client of the other era (``cassette.core.eras.bridge``), as the HTTP front serves it."""

    def test_a_legacy_client_gets_a_modern_servers_errors_at_200(self) -> None:
        """A modern server answers Method not found at 404; to a legacy client (mcp 1.x,
        the TypeScript SDK) a 404 means its session ended. A legacy server sends 200."""
        missing = {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "nope"}}
        modern = tape(
            "modern",
            c2s(req(1, "server/discover", {"_meta": MODERN_META}), "post-1"),
            s2c(res(1, {"supportedVersions": ["2026-07-28", "2025-11-25"]}), "post-1"),
            c2s(req(2, "logging/setLevel", {"level": "info", "_meta": MODERN_META}), "post-2"),
            HttpEvent(t=0.0, method="POST", stream="post-2", status=404),
            s2c(missing, "post-2"),
        )
        app = front_app(HttpReplayApp, modern)

        async def body(client: httpx.AsyncClient) -> None:
            init = await post(client, req(1, "initialize", {"protocolVersion": "2025-11-25"}))
            sid = init.headers["mcp-session-id"]
            level = await post(
                client, req(5, "logging/setLevel", {"level": "info"}), **{"mcp-session-id": sid}
            )
            assert level.status_code == 200
            assert level.json() == {**missing, "id": 5}

        scenario(app, body)

    def test_a_modern_client_of_a_legacy_cassette_is_refused_with_how_to_record(self) -> None:
        """The recorded server refused this client's sessionless requests; the replay's
        answer is the -32022 that says so and how to record for it, not a header check."""
        refused = {"jsonrpc": "2.0", "id": 4, "error": {"code": -32000, "message": "no"}}
        listed = req(4, "tools/list", {"_meta": MODERN_META})
        legacy = tape(
            "legacy",
            c2s(listed, "post-1"),
            HttpEvent(t=0.0, method="POST", stream="post-1", status=400),
            s2c(refused, "post-1"),
            *copies(LEGACY.events),
        )
        misses: list[str] = []
        app = front_app(HttpReplayApp, legacy, on_miss=misses.append)

        async def body(client: httpx.AsyncClient) -> None:
            answer = await post(client, listed, **{"mcp-protocol-version": "2026-07-28"})
            error = answer.json()["error"]
            assert (answer.status_code, error["code"]) == (400, -32022)  # as a modern server
            assert "record it with this client" in error["message"]

        scenario(app, body)
        assert misses  # the replay reports it, and exits 1

    def test_a_modern_client_is_refused_so_where_a_legacy_one_needs_a_session(self) -> None:
        """A legacy client without a session gets 400; a 2026-07-28 client has no sessions
        to send, so it gets the replay's -32022 and how to record for it instead."""
        misses: list[str] = []
        app = front_app(HttpReplayApp, LEGACY, on_miss=misses.append)

        async def body(client: httpx.AsyncClient) -> None:
            modern = req(4, "tools/list", {"_meta": MODERN_META})
            answer = await post(client, modern, **{"mcp-protocol-version": "2026-07-28"})
            assert (answer.status_code, answer.json()["error"]["code"]) == (400, -32022)
            legacy = await post(client, req(5, "tools/list"))
            assert legacy.status_code == 400
            assert "not initialized" in legacy.json()["error"]["message"]

        scenario(app, body)
        assert len(misses) == 1
