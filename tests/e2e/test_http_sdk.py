"""End to end over streamable HTTP with the official Python SDK client and real servers.

Record through `cassette record --upstream`, stop the server, replay with
`cassette replay --front http`, and require identical results, in both eras; then cross
the fronts: a stdio recording served over HTTP and an HTTP recording served over stdio.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette, HttpEvent
from tests.helpers.support import EVERYTHING_JS as EVERYTHING
from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    Background,
    dump,
    everything_calls,
    everything_server,
    node,
    python_server,
    record_command,
    replay_command,
    run,
    scaled,
    stdio_params,
)

pytestmark = pytest.mark.e2e
URL = r"(http://127\.0\.0\.1:\d+/mcp)"


async def everything_session(target: Any) -> dict[str, Any]:
    """A scripted session: lists, tools (one twice, one with progress), a read, prompts."""
    from mcp import Client

    async with Client(target) as client:
        return {"protocol": client.protocol_version, **await everything_calls(client, "over http")}


def start_everything_http() -> tuple[Background, str]:
    server, port = everything_server("streamableHttp")
    return server, f"http://127.0.0.1:{port}/mcp"


def recording_proxy(tape: Path, upstream: str) -> tuple[Background, str]:
    proxy = Background(
        [PY, "-m", "cassette", "record", "-o", str(tape), "--upstream", upstream, "--port", "0"]
    )
    return proxy, proxy.wait_for(r"point your client at " + URL).group(1)


def http_replay(tape: Path) -> tuple[Background, str]:
    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    return front, front.wait_for(r"serving on " + URL).group(1)


def test_everything_over_http_recorded_then_replayed_offline(tmp_path: Path) -> None:
    tape = tmp_path / "everything-http.jsonl"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            live = run(lambda: everything_session(url))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert live["progress"] == [1.0, 2.0]

    cassette = Cassette.load(tape)
    assert cassette.header.transport == "streamable-http"
    assert cassette.header.era == "legacy"
    assert cassette.header.target == {"url": upstream}
    probe = next(cassette.messages("c2s"))
    assert probe["method"] == "server/discover"  # the failed probe stays recorded
    statuses = {(e.method, e.status) for e in cassette.events if isinstance(e, HttpEvent)}
    assert ("POST", 400) in statuses  # ... with the status the server gave it
    raw = tape.read_text()
    assert "mcp-session-id" not in raw.lower()  # header values are never stored

    front, url = http_replay(tape)
    with front:
        replayed = run(lambda: everything_session(url))
        assert front.stop() == 0, front.output()
    assert replayed == live


async def modern_session(target: Any) -> dict[str, Any]:
    from mcp import Client

    async with Client(target) as client:
        return {
            "protocol": client.protocol_version,
            "tools": dump(await client.list_tools()),
            "add": dump(await client.call_tool("add", {"a": 40, "b": 2})),
            "shout": dump(await client.call_tool("shout", {"text": "é modern"})),
            "read": dump(await client.read_resource("memo://greeting")),
            "prompt": dump(await client.get_prompt("review", {"code": "y = 2"})),
        }


def test_modern_era_over_http_recorded_then_replayed(tmp_path: Path) -> None:
    tape = tmp_path / "modern-http.jsonl"
    server, port = python_server(MODERN_SERVER)
    with server:
        proxy, url = recording_proxy(tape, f"http://127.0.0.1:{port}/mcp")
        with proxy:
            live = run(lambda: modern_session(url))
            assert proxy.stop(signal.SIGTERM) == 0, proxy.output()
    assert live["protocol"] == "2026-07-28"

    header = json.loads(tape.read_text().splitlines()[0])
    assert (header["era"], header["protocol_version"]) == ("modern", "2026-07-28")

    front, url = http_replay(tape)
    with front:
        replayed = run(lambda: modern_session(url))
        front.stop()
    assert replayed == live


def test_a_stdio_cassette_serves_over_http_and_an_http_cassette_over_stdio(
    tmp_path: Path,
) -> None:
    stdio_tape = tmp_path / "stdio.jsonl"
    live = run(
        lambda: everything_session(
            stdio_params(record_command(stdio_tape, [node(), str(EVERYTHING), "stdio"]))
        )
    )
    front, url = http_replay(stdio_tape)
    with front:
        over_http = run(lambda: everything_session(url))
        assert front.stop() == 0, front.output()
    assert over_http == live

    http_tape = tmp_path / "http.jsonl"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(http_tape, upstream)
        with proxy:
            live_http = run(lambda: everything_session(url))
            proxy.stop()
    over_stdio = run(
        lambda: everything_session(stdio_params(replay_command(http_tape), OFFLINE_ENV))
    )
    assert over_stdio == live_http


def test_recording_proxy_guards_and_keeps_header_values_out(tmp_path: Path) -> None:
    import httpx

    tape = tmp_path / "guarded.jsonl"
    secret = "s3cr3t-bearer-value-that-must-not-be-stored"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            }
            headers = {
                "accept": "application/json, text/event-stream",
                "authorization": f"Bearer {secret}",
            }
            with httpx.Client(timeout=20) as client:
                evil = client.post(
                    url, json=init, headers={**headers, "origin": "http://evil.example"}
                )
                assert evil.status_code == 403
                ok = client.post(url, json=init, headers=headers)
                assert ok.status_code == 200
                assert ok.headers["mcp-session-id"]
            # a second proxy on the same port fails with a message naming the port
            port = url.rsplit(":", 1)[1].split("/")[0]
            clash = Background(
                [
                    PY,
                    "-m",
                    "cassette",
                    "record",
                    "-o",
                    str(tmp_path / "x.jsonl"),
                    "--upstream",
                    upstream,
                    "--port",
                    port,
                ]
            )
            with clash:
                clash.wait_for(r"cassette: error")
                assert clash.proc.wait(timeout=scaled(20)) == 4
                assert f"port {port} on 127.0.0.1 is taken" in clash.output()
                assert "Traceback" not in clash.output()
            assert proxy.stop() == 0
    raw = tape.read_text()
    assert secret not in raw
    assert ok.headers["mcp-session-id"] not in raw
    assert Cassette.load(tape).header.era == "legacy"


def test_http_upstream_speaks_to_a_live_endpoint_as_a_client() -> None:
    import anyio

    from cassette import Frame, Target, get_transport

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "up", "version": "0"},
        },
    }

    async def talk(url: str) -> list[dict[str, Any]]:
        replies = []
        async with get_transport("streamable-http").connect(Target(url=url)) as upstream:
            await upstream.send(Frame(json.dumps(init).encode()))
            replies.append(json.loads((await upstream.receive()).data))
            await upstream.send(Frame(b'{"jsonrpc":"2.0","method":"notifications/initialized"}'))
            await upstream.send(Frame(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}'))
            replies.append(json.loads((await upstream.receive()).data))
            await upstream.send_eof()
            with anyio.fail_after(10):
                rest = [frame async for frame in _drain(upstream)]
            assert rest == []
        return replies

    server, upstream_url = start_everything_http()
    with server:
        init_reply, tools = run(lambda: talk(upstream_url))
    assert init_reply["result"]["serverInfo"]["name"] == "mcp-servers/everything"
    assert "echo" in [t["name"] for t in tools["result"]["tools"]]


async def _drain(upstream: Any) -> Any:
    import anyio

    while True:
        try:
            yield await upstream.receive()
        except anyio.EndOfStream:
            return


def test_many_client_sessions_in_one_recording_all_replay(tmp_path: Path) -> None:
    from mcp import Client

    tape = tmp_path / "sessions.jsonl"

    async def sessions(url: str) -> list[Any]:
        texts = []
        for word in ("one", "two", "three"):  # a test suite: one client session per test
            async with Client(url) as client:
                result = await client.call_tool("echo", {"message": word})
                texts.append(dump(result)["content"][0]["text"])
        return texts

    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            live = run(lambda: sessions(url))
            proxy.stop()
    recorded_sessions = {
        e.meta.get("session") for e in Cassette.load(tape).events if getattr(e, "meta", None)
    }
    assert {1, 2, 3} <= recorded_sessions
    front, url = http_replay(tape)
    with front:
        assert run(lambda: sessions(url)) == live == ["Echo: one", "Echo: two", "Echo: three"]
        assert front.stop() == 0, front.output()
