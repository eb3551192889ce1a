"""The legacy HTTP+SSE transport without node: the replay front driven through ASGI by hand
(sessions, endpoint events, statuses, waits, misses), served for real once to check its
shutdown, and the recording proxy between a real client and a small fake 2024-11-05 server
(endpoint rewriting, byte-for-byte relay, what is recorded and what never is)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from cassette import Cassette, Header, HttpEvent, MessageEvent, ServeOptions, Target, TransportError
from cassette.core.wire.jsonrpc import REPLAY_MISS
from cassette.core.wire.model import RecorderInfo
from cassette.runtime import RecordConfig, RecordResult, ReplayOptions, record_proxy, serve_replay
from cassette.transport import Ready
from cassette.transports.http._http import Scope
from cassette.transports.http.sse import SseReplayApp, SseTransport
from cassette.transports.http.sse_parser import SSEEvent, SSEParser
from cassette.transports.http.streamable_http import run_app
from tests.helpers.support import front_app
from tests.unit.test_replayer import note, req, res

INIT = {
    "protocolVersion": "2024-11-05",
    "capabilities": {},
    "clientInfo": {"name": "t", "version": "0"},
}


def tape(transport: str, *events: Any, url: str | None = None) -> Cassette:
    header = Header(
        transport=transport,
        recorder=RecorderInfo("t", "0"),
        started_at="x",
        target={"url": url} if url else {"command": ["server"]},
        era="legacy",
        protocol_version="2024-11-05",
    )
    for seq, event in enumerate(events, start=1):
        object.__setattr__(event, "seq", seq)
    return Cassette(header, tuple(events))


def c2s(message: dict[str, Any], **meta: Any) -> MessageEvent:
    return MessageEvent(t=0.0, dir="c2s", message=message, meta=meta or None)


def s2c(message: dict[str, Any], **meta: Any) -> MessageEvent:
    return MessageEvent(t=0.0, dir="s2c", message=message, meta=meta or None)


ON_SSE = {"session": 1, "sse": True}
SSE_TAPE = tape(
    "sse",
    HttpEvent(t=0.0, method="GET", stream="get-1", status=200, session=1),
    c2s(req(0, "initialize", INIT), stream="post-2", session=1),
    s2c(res(0, {"protocolVersion": "2024-11-05", "capabilities": {}}), stream="get-1", **ON_SSE),
    c2s(note("notifications/initialized"), stream="post-3", session=1),
    c2s(
        req(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}}),
        stream="post-4",
        session=1,
    ),
    s2c(
        note("notifications/message", {"level": "info", "data": "echoing"}),
        stream="get-1",
        **ON_SSE,
    ),
    s2c(res(1, {"content": [{"type": "text", "text": "a"}]}), stream="get-1", **ON_SSE),
    c2s(req(2, "tools/call", {"name": "broken", "arguments": {}}), stream="post-5", session=1),
    HttpEvent(t=0.0, method="POST", stream="post-5", status=400, session=1),
    url="http://upstream.test/api/events",
)


# -- driving the ASGI app by hand ----------------------------------------------------------


class Call:
    """One HTTP exchange with an ASGI app: the request goes in, events come out as parsed."""

    def __init__(
        self,
        method: str,
        path: str,
        *,
        query: str = "",
        body: bytes = b"",
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        self.scope: Scope = {
            "type": "http",
            "method": method,
            "path": path,
            "query_string": query.encode(),
            "headers": [(b"host", b"127.0.0.1:9"), *headers],
        }
        self.body = body
        self.status: int | None = None
        self.content = b""
        self.ended = anyio.Event()  # the response is complete
        self.finished = anyio.Event()  # the app has returned
        self.gone = anyio.Event()  # set it to make the client disconnect
        self._parser = SSEParser()
        self._events_in, self._events = anyio.create_memory_object_stream[SSEEvent](100)
        self._asked = False

    async def receive(self) -> dict[str, Any]:
        if not self._asked:
            self._asked = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.gone.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            return
        chunk = message.get("body", b"")
        self.content += chunk
        for event in self._parser.feed(chunk):
            self._events_in.send_nowait(event)
        if not message.get("more_body"):
            self.ended.set()

    async def run(self, app: SseReplayApp) -> None:
        try:
            await app(self.scope, self.receive, self.send)
        finally:
            self.finished.set()

    async def event(self) -> SSEEvent:
        with anyio.fail_after(5):
            return await self._events.receive()

    async def message(self) -> Any:
        event = await self.event()
        assert event.type == "message", event
        return json.loads(event.data)


def drive(body: Callable[[anyio.abc.TaskGroup], Awaitable[None]]) -> None:
    async def go() -> None:
        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                await body(tg)
                tg.cancel_scope.cancel()

    anyio.run(go)


async def open_stream(app: SseReplayApp, tg: Any, path: str | None = None) -> tuple[Call, str]:
    call = Call("GET", path or app.path)
    tg.start_soon(call.run, app)
    first = await call.event()
    assert first.type == "endpoint"
    assert call.status == 200
    return call, first.data


JSON_BODY = ((b"content-type", b"application/json"),)


async def post(
    app: SseReplayApp, endpoint: str, message: Any, headers: tuple[Any, ...] = ()
) -> Call:
    """A POST as clients send it (``application/json``), with more ``headers``."""
    parts = urlsplit(endpoint)
    body = message if isinstance(message, bytes) else json.dumps(message).encode()
    call = Call("POST", parts.path, query=parts.query, body=body, headers=(*JSON_BODY, *headers))
    await app(call.scope, call.receive, call.send)
    return call


# -- the replay front ----------------------------------------------------------------------


def test_each_stream_is_a_session_with_its_own_id_endpoint_and_replayer() -> None:
    app = front_app(SseReplayApp, SSE_TAPE)
    assert app.path == "/api/events"  # the recorded upstream's stream path

    async def body(tg: Any) -> None:
        one, endpoint_one = await open_stream(app, tg)
        two, endpoint_two = await open_stream(app, tg)
        assert endpoint_one.startswith("/message?sessionId=")
        ids = {parse_qs(urlsplit(e).query)["sessionId"][0] for e in (endpoint_one, endpoint_two)}
        assert len(ids) == 2
        for stream, endpoint in ((one, endpoint_one), (two, endpoint_two)):
            answer = await post(app, endpoint, req(0, "initialize", INIT))
            assert (answer.status, answer.content) == (202, b"Accepted")
            # the same recording answers both: each session consumes its own copy
            assert (await stream.message())["result"]["protocolVersion"] == "2024-11-05"
        await post(app, endpoint_one, note("notifications/initialized"))
        await post(
            app, endpoint_one, req(1, "tools/call", {"name": "echo", "arguments": {"text": "a"}})
        )
        assert (await one.message())["method"] == "notifications/message"  # recorded order
        assert (await one.message())["result"]["content"][0]["text"] == "a"
        refused = await post(
            app, endpoint_one, req(2, "tools/call", {"name": "broken", "arguments": {}})
        )
        assert refused.status == 400  # the status the recorded server gave that POST

    drive(body)
    assert list(app.pool.result().misses) == []


def test_requests_the_endpoint_cannot_take() -> None:
    app = front_app(SseReplayApp, SSE_TAPE)

    async def body(tg: Any) -> None:
        _stream, endpoint = await open_stream(app, tg)
        assert (await post(app, "/message", req(0, "ping"))).status == 400  # no session
        unknown = await post(app, "/message?sessionId=feedface", req(0, "ping"))
        assert (unknown.status, unknown.content) == (404, b"Could not find session")
        assert (await post(app, endpoint, b"{not json")).status == 400
        # as the reference servers: one JSON-RPC message, sent as application/json
        assert (await post(app, endpoint, [req(0, "ping")])).status == 400
        assert (await post(app, endpoint, {**req(0, "ping"), "id": None})).status == 400
        plain = Call("POST", "/message", query=urlsplit(endpoint).query, body=b"{}")
        await app(plain.scope, plain.receive, plain.send)
        assert (plain.status, plain.content) == (400, b"Unsupported content-type: none")
        foreign = await post(
            app, endpoint, req(0, "ping"), headers=((b"origin", b"http://evil.example"),)
        )
        assert foreign.status == 403
        for method, path, status in (
            ("POST", app.path, 405),
            ("GET", "/message", 405),
            ("GET", "/elsewhere", 404),
        ):
            call = Call(method, path)
            await app(call.scope, call.receive, call.send)
            assert call.status == status, (method, path)
        evil = Call("GET", app.path, headers=((b"origin", b"http://evil.example"),))
        await app(evil.scope, evil.receive, evil.send)
        assert evil.status == 403

    drive(body)


def test_a_stdio_cassette_serves_over_sse_and_a_closed_stream_ends_its_session() -> None:
    stdio = tape(
        "stdio",
        c2s(req(1, "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": 5}})),
        s2c(note("notifications/progress", {"progressToken": 5, "progress": 1})),
        s2c(res(1, {"content": []})),
    )
    app = front_app(SseReplayApp, stdio)
    assert app.path == "/sse"

    async def body(tg: Any) -> None:
        stream, endpoint = await open_stream(app, tg)
        call = req(
            9, "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}}
        )
        assert (await post(app, endpoint, call)).status == 202  # no recorded status: 202
        progress = await stream.message()
        assert progress["params"]["progressToken"] == "p"  # the live request's token
        assert await stream.message() == res(9, {"content": []})  # and its id
        stream.gone.set()
        await stream.finished.wait()  # the stream's handler saw the client go
        assert (await post(app, endpoint, req(10, "ping"))).status == 404

    drive(body)


def test_a_miss_goes_out_on_the_stream_and_into_the_summary() -> None:
    misses: list[str] = []
    app = front_app(SseReplayApp, SSE_TAPE, on_miss=misses.append)

    async def body(tg: Any) -> None:
        stream, endpoint = await open_stream(app, tg)
        await post(app, endpoint, req(4, "tools/call", {"name": "nope", "arguments": {}}))
        error = await stream.message()
        assert (error["id"], error["error"]["code"]) == (4, REPLAY_MISS)

    drive(body)
    assert len(misses) == 1
    assert "nope" in app.pool.result().summary


def test_a_replayed_server_request_waits_for_the_clients_answer_then_times_out() -> None:
    sampling = req(0, "sampling/createMessage", {"messages": [], "maxTokens": 5})
    answer = res(0, {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
    recording = tape(
        "sse",
        c2s(req(1, "tools/call", {"name": "sample", "arguments": {}}), stream="post-2", session=1),
        s2c(sampling, stream="get-1", **ON_SSE),
        c2s(answer, stream="post-3", session=1),
        s2c(res(1, {"content": [{"type": "text", "text": "sampled"}]}), stream="get-1", **ON_SSE),
        url="http://upstream.test/sse",
    )
    app = front_app(SseReplayApp, recording, answer_timeout=0.2)

    async def body(tg: Any) -> None:
        stream, endpoint = await open_stream(app, tg)
        await post(app, endpoint, req(1, "tools/call", {"name": "sample", "arguments": {}}))
        asked = await stream.message()
        assert asked["method"] == "sampling/createMessage"
        await post(app, endpoint, {**answer, "id": asked["id"]})
        assert (await stream.message())["result"]["content"][0]["text"] == "sampled"
        # a second session that never answers: the request that waited fails in time
        other, other_endpoint = await open_stream(app, tg)
        await post(app, other_endpoint, req(1, "tools/call", {"name": "sample", "arguments": {}}))
        assert (await other.message())["method"] == "sampling/createMessage"
        failed = await other.message()
        assert failed["id"] == 1
        assert "did not answer" in failed["error"]["message"]

    drive(body)


class _Records(logging.Handler):
    """Keeps what a logger logged (uvicorn's own handlers do not propagate to caplog)."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_stopping_the_front_ends_open_streams_at_once() -> None:
    """The front ends its open streams itself when it stops, so uvicorn never waits out
    its graceful-shutdown timeout for them, nor cancels them at its end: uvicorn says so
    when it does, whatever the machine's speed (how long it took is no evidence)."""
    finished: list[str] = []
    uvicorn_said = _Records()

    async def go() -> list[str]:
        urls: list[str] = []
        ready = anyio.Event()

        def on_ready(url: str) -> None:
            urls.append(url)
            ready.set()

        with anyio.fail_after(20):
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    serve_replay,
                    SSE_TAPE,
                    ReplayOptions(
                        transport=SseTransport(),
                        listen=ServeOptions(on_ready=on_ready),
                        on_finish=lambda result: finished.append(result.summary),
                    ),
                )
                await ready.wait()
                logging.getLogger("uvicorn.error").addHandler(uvicorn_said)
                assert urls[0].endswith("/api/events")
                async with (
                    httpx.AsyncClient(timeout=10) as client,
                    client.stream("GET", urls[0]) as response,
                ):
                    assert response.headers["content-type"] == "text/event-stream"
                    lines = response.aiter_lines()
                    assert (await anext(lines)) == "event: endpoint"
                    tg.cancel_scope.cancel()  # stop the front while the stream is open
                    with anyio.CancelScope(shield=True):
                        rest = [line async for line in lines]  # ends cleanly, not cut off
        return rest

    try:
        rest = anyio.run(go)
    finally:
        logging.getLogger("uvicorn.error").removeHandler(uvicorn_said)
    assert rest[0].startswith("data: /message?sessionId=")
    assert not [m for m in uvicorn_said.messages if "graceful shutdown" in m], uvicorn_said.messages
    assert finished == [""]


# -- the recording proxy -------------------------------------------------------------------


class FakeLegacyServer:
    """A 2024-11-05 server in a few lines: an absolute endpoint URI with a secret session id,
    CRLF line endings, a comment before the first event, event ids, an error status."""

    SECRET = "s3cret-session"

    def __init__(self) -> None:
        self.port = 0
        self.send, self.receive = anyio.create_memory_object_stream[bytes](100)
        self.released = anyio.Event()  # a "slow" request is answered only once this is set

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["method"] == "GET":
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")],
                }
            )
            first = f": hello\r\nevent: endpoint\r\ndata: http://127.0.0.1:{self.port}/rpc?session_id={self.SECRET}\r\n\r\n"
            await send({"type": "http.response.body", "body": first.encode(), "more_body": True})
            async for chunk in self.receive:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        assert parse_qs(scope["query_string"].decode()) == {"session_id": [self.SECRET]}
        request = json.loads(body)
        if request.get("method") == "slow":
            await self.released.wait()
        status = 400 if request.get("method") == "bad" else 202
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": b"Accepted" if status == 202 else b"Bad"})
        if "id" in request and status == 202:
            answer = json.dumps(res(request["id"], {"echo": request["method"]}))
            self.send.send_nowait(f"id: 7\r\nevent: message\r\ndata: {answer}\r\n\r\n".encode())
            self.send.send_nowait(b"data:\r\n\r\n")  # a keep-alive


async def _record_sse(upstream: str, config: RecordConfig, *, on_ready: Ready) -> RecordResult:
    """A recording proxy on a free port, telling ``on_ready`` where (``serving`` says)."""
    return await record_proxy(upstream, config, ServeOptions(on_ready=on_ready))


@asynccontextmanager
async def serving(start: Callable[..., Awaitable[Any]]) -> AsyncIterator[str]:
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(start, on_ready=on_ready))
        await ready.wait()
        yield urls[0]
        tg.cancel_scope.cancel()


def test_the_recording_proxy_rewrites_the_endpoint_relays_bytes_and_keeps_the_session_out(
    tmp_path: Path,
) -> None:
    upstream = FakeLegacyServer()
    path = tmp_path / "proxy.jsonl"

    async def go() -> list[bytes]:
        async def upstream_app(on_ready: Any) -> None:
            def ready(url: str) -> None:
                upstream.port = int(urlsplit(url).port or 0)
                on_ready(url)

            await run_app(upstream, "127.0.0.1", 0, "/events", ready)

        with anyio.fail_after(20):
            async with serving(upstream_app) as upstream_url:
                recorder = partial(
                    _record_sse, upstream_url, RecordConfig(path=path, transport="sse")
                )
                async with serving(recorder) as proxy_url, httpx.AsyncClient(timeout=10) as client:
                    assert urlsplit(proxy_url).path == "/events"
                    async with client.stream("GET", proxy_url) as stream:
                        chunks = stream.aiter_raw()
                        head = await anext(chunks)
                        assert head == b"event: endpoint\ndata: /rpc?session_id=s3cret-session\n\n"
                        endpoint = (
                            urlsplit(proxy_url)
                            ._replace(path="/rpc", query=f"session_id={upstream.SECRET}")
                            .geturl()
                        )
                        accepted = await client.post(endpoint, json=req(1, "initialize", INIT))
                        assert (accepted.status_code, accepted.text) == (202, "Accepted")
                        relayed = [await anext(chunks)]
                        refused = await client.post(endpoint, json=req(2, "bad"))
                        assert refused.status_code == 400
                        origin = {"origin": "http://evil.example"}
                        assert (
                            await client.post(endpoint, json=req(3, "x"), headers=origin)
                        ).status_code == 403
                upstream.send.close()  # the fake's stream ends with the test
                return relayed

    relayed = anyio.run(go)
    assert relayed[0].startswith(b"id: 7\r\nevent: message\r\ndata: ")  # verbatim, CRLF and all
    text = path.read_text()
    assert FakeLegacyServer.SECRET not in text
    cassette = Cassette.load(path)
    assert cassette.header.transport == "sse"
    assert cassette.header.era == "legacy"  # the answer on the stream was paired with its POST
    assert [where(e) for e in cassette.events[:3]] == [
        ("http", None, "get-1"),
        ("message", "c2s", "post-2"),
        ("message", "s2c", "get-1"),
    ]
    answer = cassette.events[2]
    assert isinstance(answer, MessageEvent)
    assert answer.meta == {"stream": "get-1", "session": 1, "sse": True, "event_id": "7"}
    statuses = [
        (e.method, e.stream, e.status, e.session)
        for e in cassette.events
        if isinstance(e, HttpEvent)
    ]
    assert statuses == [("GET", "get-1", 200, 1), ("POST", "post-3", 400, 1)]


def where(event: Any) -> tuple[str, str | None, str | None]:
    if isinstance(event, HttpEvent):
        return "http", None, event.stream
    return event.kind, getattr(event, "dir", None), (event.meta or {}).get("stream")


def test_the_sse_upstream_reaches_a_server_and_converts_failures() -> None:
    async def go() -> None:
        app = front_app(SseReplayApp, SSE_TAPE)
        with anyio.fail_after(20):
            async with serving(partial(run_app, app, "127.0.0.1", 0, app.path)) as url:
                async with SseTransport().connect(Target(url=url)) as upstream:
                    await upstream.send(_frame(req(0, "initialize", INIT)))
                    answer = json.loads((await upstream.receive()).data)
                    assert answer["result"]["protocolVersion"] == "2024-11-05"
                with pytest.raises(TransportError, match="404"):
                    async with SseTransport().connect(
                        Target(url=url.replace("/api/events", "/nope"))
                    ):
                        pass

    anyio.run(go)


def _frame(message: Any) -> Any:
    from cassette import Frame

    return Frame(json.dumps(message).encode() + b"\n")


def test_an_answer_takes_the_live_requests_id() -> None:
    app = front_app(SseReplayApp, SSE_TAPE)

    async def body(tg: Any) -> None:
        stream, endpoint = await open_stream(app, tg)
        await post(app, endpoint, req("live-7", "initialize", INIT))
        assert (await stream.message())["id"] == "live-7"

    drive(body)


def test_the_recording_proxy_answers_a_slow_upstream_with_504_and_records_it(
    tmp_path: Path,
) -> None:
    """``record --transport sse --upstream URL --upstream-timeout S``: the option reaches
    the SSE proxy (it used to be a TypeError there), and a POST the upstream does not
    answer in time gets 504, recorded as a status the replay gives again."""
    upstream = FakeLegacyServer()
    path = tmp_path / "slow.jsonl"

    async def go() -> httpx.Response:
        async def upstream_app(on_ready: Any) -> None:
            def ready(url: str) -> None:
                upstream.port = int(urlsplit(url).port or 0)
                on_ready(url)

            await run_app(upstream, "127.0.0.1", 0, "/events", ready)

        with anyio.fail_after(20):
            async with serving(upstream_app) as upstream_url:
                config = RecordConfig(path=path, transport="sse", upstream_timeout=0.5)
                recorder = partial(_record_sse, upstream_url, config)
                async with (
                    serving(recorder) as proxy_url,
                    httpx.AsyncClient(timeout=10) as client,
                    client.stream("GET", proxy_url) as stream,
                ):
                    await anext(stream.aiter_raw())  # the endpoint event
                    endpoint = (
                        urlsplit(proxy_url)
                        ._replace(path="/rpc", query=f"session_id={upstream.SECRET}")
                        .geturl()
                    )
                    slow = await client.post(endpoint, json=req(1, "slow"))
                upstream.released.set()
                upstream.send.close()
                return slow

    slow = anyio.run(go)
    assert slow.status_code == 504
    assert "did not answer within 0.5 s" in slow.text
    # Nothing succeeded in this session, so it is no cassette: it is kept beside it.
    assert not path.exists()
    statuses = [
        (e.method, e.stream, e.status)
        for e in Cassette.load(tmp_path / "slow.jsonl.failed").events
        if isinstance(e, HttpEvent)
    ]
    assert ("POST", "post-2", 504) in statuses
