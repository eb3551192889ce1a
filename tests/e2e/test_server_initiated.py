"""Server-initiated traffic end to end: sampling, elicitation, roots, progress and logging
recorded from the reference server with the official Python SDK client's callbacks, then
replayed with the server absent: the callbacks see the same requests, the results match."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.helpers.support import (
    OFFLINE_ENV,
    dump,
    everything_command,
    record_command,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e


class Callbacks:
    """The client's side of server-initiated traffic, remembering what it was asked."""

    def __init__(self) -> None:
        self.seen: dict[str, list[Any]] = {
            "sampling": [],
            "elicitation": [],
            "roots": [],
            "log": [],
            "progress": [],
        }

    async def sampling(self, _ctx: Any, params: Any) -> Any:
        from mcp import types

        self.seen["sampling"].append(dump(params))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="a sampled answer"),
            model="test-model",
        )

    async def elicitation(self, _ctx: Any, params: Any) -> Any:
        from mcp import types

        self.seen["elicitation"].append(dump(params))
        return types.ElicitResult(action="accept", content={"name": "Ada", "check": True})

    async def roots(self, _ctx: Any) -> Any:
        from mcp import types

        self.seen["roots"].append("asked")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])

    async def logging(self, params: Any) -> None:
        self.seen["log"].append(dump(params))

    async def progress(self, value: float, total: float | None, _message: str | None) -> None:
        self.seen["progress"].append((value, total))


async def callbacks_session(target: Any) -> dict[str, Any]:
    """A client with every callback, driving the reference server's trigger tools."""
    from mcp import Client

    calls = Callbacks()
    seen = calls.seen
    sampling, elicitation, roots = calls.sampling, calls.elicitation, calls.roots
    logging, progress = calls.logging, calls.progress

    async with Client(
        target,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
        logging_callback=logging,
    ) as client:
        out: dict[str, Any] = {"tools": sorted(t.name for t in (await client.list_tools()).tools)}
        out["sampling"] = dump(
            await client.call_tool("trigger-sampling-request", {"prompt": "hello", "maxTokens": 20})
        )
        out["elicitation"] = dump(await client.call_tool("trigger-elicitation-request", {}))
        out["roots"] = dump(await client.call_tool("get-roots-list", {}))
        out["long"] = dump(
            await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.2, "steps": 2},
                progress_callback=progress,
            )
        )
    out["seen"] = seen
    return out


def test_callbacks_see_the_same_requests_live_and_replayed(tmp_path: Path) -> None:
    tape = tmp_path / "server-initiated.jsonl"
    live = run(lambda: callbacks_session(stdio_params(record_command(tape, everything_command()))))
    assert "trigger-sampling-request" in live["tools"]
    assert len(live["seen"]["sampling"]) == 1
    assert len(live["seen"]["elicitation"]) == 1
    assert live["seen"]["progress"] == [(1.0, 2.0), (2.0, 2.0)]

    methods = [
        m.get("method") for m in Cassette.load(tape).messages("s2c") if "id" in m and "method" in m
    ]
    assert "sampling/createMessage" in methods
    assert "elicitation/create" in methods

    replayed = run(lambda: callbacks_session(stdio_params(replay_command(tape), OFFLINE_ENV)))
    assert replayed == live


def test_replay_waits_for_the_answer_and_reports_a_different_one(tmp_path: Path) -> None:
    """A raw client: the replay sends the recorded sampling request, then stops until the
    client answers; a different answer is a warning on stderr, and the session goes on."""
    import json

    from tests.helpers.support import LineClient

    tape = tmp_path / "sampling.jsonl"
    run(lambda: callbacks_session(stdio_params(record_command(tape, everything_command()))))
    client = LineClient(replay_command(tape))
    try:
        client.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"sampling": {}, "elicitation": {}, "roots": {}},
            },
        )
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 50,
                "method": "tools/call",
                "params": {
                    "name": "trigger-sampling-request",
                    "arguments": {"prompt": "hello", "maxTokens": 20},
                },
            }
        )
        while True:  # skip anything else the server says first (list_changed, roots/list ...)
            message = client.receive()
            if message.get("method") == "sampling/createMessage":
                break
        assert isinstance(message["id"], int)
        client.send(
            {
                "jsonrpc": "2.0",
                "id": message["id"],
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "something else"},
                    "model": "test-model",
                },
            }
        )
        while True:
            reply = client.receive()
            if reply.get("id") == 50:
                break
        assert "result" in reply
        code, err = client.finish()
    finally:
        client.kill_group()
    assert code == 0
    assert "differs from the recording at /content/text" in err
    assert json.dumps("a sampled answer") in err


def test_callbacks_over_http_live_and_replayed(tmp_path: Path) -> None:
    from tests.e2e.test_http_sdk import http_replay, recording_proxy, start_everything_http

    tape = tmp_path / "server-initiated-http.jsonl"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            live = run(lambda: callbacks_session(url))
            assert proxy.stop() == 0, proxy.output()
    assert len(live["seen"]["sampling"]) == 1
    front, url = http_replay(tape)
    with front:
        replayed = run(lambda: callbacks_session(url))
        assert front.stop() == 0, front.output()
    assert replayed == live


def test_a_stdio_recording_of_callbacks_replays_over_http(tmp_path: Path) -> None:
    from tests.e2e.test_http_sdk import http_replay

    tape = tmp_path / "callbacks-stdio.jsonl"
    live = run(lambda: callbacks_session(stdio_params(record_command(tape, everything_command()))))
    front, url = http_replay(tape)
    with front:
        replayed = run(lambda: callbacks_session(url))
        assert front.stop() == 0, front.output()
    assert replayed["sampling"] == live["sampling"]
    assert replayed["elicitation"] == live["elicitation"]
    assert replayed["seen"]["sampling"] == live["seen"]["sampling"]
    assert replayed["seen"]["elicitation"] == live["seen"]["elicitation"]
    assert replayed["seen"]["progress"] == live["seen"]["progress"]


async def input_required_session(target: Any) -> dict[str, Any]:
    from mcp import Client, types

    asked: list[Any] = []

    async def elicitation(_ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(dump(params))
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async with Client(target, elicitation_callback=elicitation) as client:
        out = {"protocol": client.protocol_version}
        out["greet"] = dump(await client.call_tool("greet", {}))
        out["add"] = dump(await client.call_tool("add", {"a": 1, "b": 1}))
    out["asked"] = asked
    return out


def test_modern_input_required_round_trip_replays_on_stdio_and_http(tmp_path: Path) -> None:
    from tests.e2e.test_http_sdk import http_replay
    from tests.helpers.support import MODERN_SERVER, PY

    tape = tmp_path / "input-required.jsonl"
    live = run(
        lambda: input_required_session(stdio_params(record_command(tape, [PY, str(MODERN_SERVER)])))
    )
    assert live["protocol"] == "2026-07-28"
    assert live["greet"]["content"][0]["text"] == "Hello, Ada!"
    assert len(live["asked"]) == 1
    results = [m.get("result", {}) for m in Cassette.load(tape).messages("s2c")]
    assert any(r.get("resultType") == "input_required" for r in results)

    over_stdio = run(
        lambda: input_required_session(stdio_params(replay_command(tape), OFFLINE_ENV))
    )
    assert over_stdio == live
    front, url = http_replay(tape)
    with front:
        over_http = run(lambda: input_required_session(url))
        assert front.stop() == 0, front.output()
    assert over_http == live


async def sse_callbacks_session(url: str) -> dict[str, Any]:
    """The callbacks session over the legacy HTTP+SSE transport (ClientSession API)."""
    from mcp.client.session import ClientSession
    from mcp.client.sse import sse_client

    calls = Callbacks()
    seen = calls.seen
    sampling, elicitation, roots = calls.sampling, calls.elicitation, calls.roots

    async with (
        sse_client(url) as (read, write),
        ClientSession(
            read,
            write,
            sampling_callback=sampling,
            elicitation_callback=elicitation,
            list_roots_callback=roots,
        ) as session,
    ):
        await session.initialize()
        out: dict[str, Any] = {
            "sampling": dump(
                await session.call_tool(
                    "trigger-sampling-request", {"prompt": "hi", "maxTokens": 9}
                )
            ),
            "elicitation": dump(await session.call_tool("trigger-elicitation-request", {})),
        }
    out["seen"] = {k: seen[k] for k in ("sampling", "elicitation")}
    return out


def test_callbacks_over_legacy_sse_live_and_replayed(tmp_path: Path) -> None:
    import signal

    from tests.e2e.test_sse_sdk import URL, sse_front, start_everything_sse
    from tests.helpers.support import PY, Background

    tape = tmp_path / "callbacks-sse.jsonl"
    server, upstream = start_everything_sse()
    with server:
        argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "sse"]
        proxy = Background([*argv, "--upstream", upstream, "--port", "0"])
        with proxy:
            url = proxy.wait_for(r"point your client at " + URL).group(1)
            live = run(lambda: sse_callbacks_session(url))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert len(live["seen"]["sampling"]) == 1
    front, url = sse_front(tape, "--port", "0")
    with front:
        replayed = run(lambda: sse_callbacks_session(url))
        assert front.stop() == 0, front.output()
    assert replayed == live


async def listen_session(target: Any) -> dict[str, Any]:
    import anyio
    from mcp import Client

    async with Client(target) as client:
        async with client.listen(tools_list_changed=True) as subscription:
            touched = dump(await client.call_tool("touch", {}))
            with anyio.fail_after(10):
                event = await subscription.__anext__()
        return {"touched": touched, "event": type(event).__name__}


def test_modern_subscription_stream_replays_over_stdio(tmp_path: Path) -> None:
    from tests.helpers.support import MODERN_SERVER, PY

    tape = tmp_path / "listen.jsonl"
    live = run(
        lambda: listen_session(stdio_params(record_command(tape, [PY, str(MODERN_SERVER)]))),
        timeout=40,
    )
    assert live["touched"]["content"][0]["text"] == "touched"
    assert live["event"] == "ToolsListChanged"
    methods = [m.get("method") for m in Cassette.load(tape).messages("s2c")]
    assert "notifications/subscriptions/acknowledged" in methods
    replayed = run(
        lambda: listen_session(stdio_params(replay_command(tape), OFFLINE_ENV)), timeout=40
    )
    assert replayed == live


def test_a_stdio_recorded_subscription_replays_over_http(tmp_path: Path) -> None:
    from tests.e2e.test_http_sdk import http_replay
    from tests.helpers.support import MODERN_SERVER, PY

    tape = tmp_path / "listen.jsonl"
    live = run(
        lambda: listen_session(stdio_params(record_command(tape, [PY, str(MODERN_SERVER)]))),
        timeout=40,
    )
    front, url = http_replay(tape)
    with front:
        replayed = run(lambda: listen_session(url), timeout=40)
        front.stop()
    assert replayed == live
