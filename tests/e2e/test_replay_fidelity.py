"""Replay fidelity against real servers, with the official Python SDK client and raw JSON-RPC
where a client library hides the detail: a client that lists every page twice, a task polled
more and fewer times than recorded, a server that crashes mid-call, a call cancelled while
recording and not on replay, and frames the server ignored. Every wait is bounded: the two
no-answer cases show a replay ending instead of hanging."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    ROOT,
    LineClient,
    dump,
    everything_command,
    record_command,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e
FIDELITY = [PY, str(ROOT / "tests" / "servers" / "fidelity_server.py")]


async def list_everything(target: Any, *, times: int) -> list[list[str]]:
    """Every resource, page by page following nextCursor, ``times`` times over."""
    from mcp import Client

    listings: list[list[str]] = []
    async with Client(target) as client:
        for _ in range(times):
            uris: list[str] = []
            cursor: str | None = None
            while True:
                page = await client.list_resources(cursor=cursor, cache_mode="bypass")
                uris += [str(r.uri) for r in page.resources]
                cursor = page.next_cursor
                if cursor is None:
                    break
            listings.append(uris)
    return listings


@pytest.mark.parametrize("strategy", ["default", "loose"])
def test_listing_every_page_twice_replays_every_page_twice(tmp_path: Path, strategy: str) -> None:
    tape = tmp_path / "pages.jsonl"
    (live,) = run(lambda: list_everything(stdio_params(record_command(tape, FIDELITY)), times=1))
    assert len(live) == 25  # three pages
    params = stdio_params([*replay_command(tape), "--strategy", strategy], env=OFFLINE_ENV)
    replayed = run(lambda: list_everything(params, times=2))
    assert replayed == [live, live]  # used to give only the last page the second time


def record_task(tape: Path) -> tuple[list[str], dict[str, Any]]:
    """Start a task on server-everything and poll it until it completes (as its
    pollInterval asks, with a deadline); what each poll said, and the task's result."""
    client = LineClient(record_command(tape, everything_command()))
    try:
        client.initialize()
        created = client.request(
            "tools/call",
            {"name": "simulate-research-query", "arguments": {"topic": "cats"}, "task": {}},
        )
        task_id = created["result"]["task"]["taskId"]
        statuses: list[str] = []
        deadline = time.monotonic() + 60
        while not statuses or statuses[-1] == "working":
            assert time.monotonic() < deadline, statuses
            time.sleep(0.25)  # the client's own polling interval
            statuses.append(client.request("tasks/get", {"taskId": task_id})["result"]["status"])
        result = client.request("tasks/result", {"taskId": task_id})["result"]
    finally:
        client.finish()
    return statuses, {"task_id": task_id, "result": result}


def replay_polls(tape: Path, strategy: str, task_id: str, polls: int) -> list[str]:
    client = LineClient([*replay_command(tape), "-q", "--strategy", strategy], env=OFFLINE_ENV)
    try:
        client.initialize()
        client.request(
            "tools/call",
            {"name": "simulate-research-query", "arguments": {"topic": "cats"}, "task": {}},
        )
        seen = []
        for _ in range(polls):
            reply = client.request("tasks/get", {"taskId": task_id})
            seen.append(reply["result"]["status"] if "result" in reply else "miss")
    finally:
        client.finish()
    return seen


def test_a_task_polled_more_and_fewer_times_than_recorded(tmp_path: Path) -> None:
    tape = tmp_path / "task.jsonl"
    statuses, recorded = record_task(tape)
    assert statuses[-1] == "completed"
    task_id = recorded["task_id"]
    more = len(statuses) + 3
    for strategy in ("default", "loose"):
        seen = replay_polls(tape, strategy, task_id, more)
        assert seen == [*statuses, *["completed"] * 3], strategy  # used to miss
    assert replay_polls(tape, "default", task_id, 1) == statuses[:1]
    strict = replay_polls(tape, "strict", task_id, more)
    assert strict[: len(statuses)] == statuses
    assert set(strict[len(statuses) :]) == {"miss"}
    assert replay_polls(tape, "loose", "another-task", 1) == ["miss"]  # never another task's


async def crash_session(target: Any) -> tuple[str, str]:
    """Call ``fast``, then ``crash``: what the client saw of each."""
    from mcp import Client

    async with Client(target) as client:
        fast = dump(await client.call_tool("fast", {}))["content"][0]["text"]
        try:
            await client.call_tool("crash", {})
        except Exception as exc:  # the SDK's connection error: the server is gone
            return fast, type(exc).__name__
    return fast, "answered"


def test_a_server_that_crashes_mid_call_crashes_the_replay_there(tmp_path: Path) -> None:
    tape = tmp_path / "crash.jsonl"
    live = run(lambda: crash_session(stdio_params(record_command(tape, FIDELITY))))
    assert live[0] == "fast"
    assert live[1] != "answered"
    exits = [e for e in Cassette.load(tape).events if getattr(e, "kind", "") == "exit"]
    assert exits[0].code == 3  # type: ignore[attr-defined]

    replayed = run(lambda: crash_session(stdio_params(replay_command(tape), env=OFFLINE_ENV)))
    assert replayed[0] == "fast"
    assert replayed[1] != "answered"  # the call fails and the session ends, as live

    client = LineClient([*replay_command(tape), "-q"], env=OFFLINE_ENV)
    client.initialize()
    error = client.request("tools/call", {"name": "crash", "arguments": {}})
    assert "the recorded server exited while it was open" in error["error"]["message"]
    assert client.readline() == b""  # stdout closed, as when the live server died
    code, err = client.finish()
    assert code == 1
    assert "the recorded server exited while it was open" in err  # the summary says why


def test_a_call_cancelled_while_recording_is_failed_after_the_answer_timeout(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "cancelled.jsonl"
    client = LineClient(record_command(tape, FIDELITY))
    client.initialize()
    client.send(req(10, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}))
    client.send(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10}}
    )
    assert client.request("tools/call", {"name": "fast", "arguments": {}})["result"]
    client.finish()
    assert Cassette.load(tape).events  # recorded, the slow call never answered
    lint = LineClient([PY, "-m", "cassette", "lint", str(tape)])
    code, _ = lint.finish()
    assert code == 0  # a cancelled call is information, not an error (it used to exit 1)

    replay = LineClient([*replay_command(tape), "-q", "--answer-timeout", "1"], env=OFFLINE_ENV)
    replay.initialize()
    replay.send(req(10, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}))
    assert replay.request("tools/call", {"name": "fast", "arguments": {}})["result"]
    error = replay.receive(timeout=20)  # bounded: the answer timeout, not forever
    assert error["id"] == 10
    assert "the client cancelled it while recording" in error["error"]["message"]
    code, err = replay.finish()
    assert code == 1  # a miss
    assert "no recorded answer" in err

    # A client that cancels it too, as the recorded one did, gets nothing, and no miss.
    calm = LineClient([*replay_command(tape), "-q", "--answer-timeout", "1"], env=OFFLINE_ENV)
    calm.initialize()
    calm.send(req(10, "tools/call", {"name": "slow", "arguments": {"seconds": 30}}))
    calm.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 10}})
    assert calm.request("tools/call", {"name": "fast", "arguments": {}})["result"]
    assert calm.finish()[0] == 0


def req(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


EDGE_FRAMES = [
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}\n',
    b'{"jsonrpc":"2.0","id":1.5,"method":"ping"}\n',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}\n',
    b'{"id":41,"method":"ping"}\n',
    b'{"jsonrpc":"2.0","id":42,"result":{},"error":{"code":1,"message":"both"}}\n',
    b'[{"jsonrpc":"2.0","id":43,"method":"ping"},{"jsonrpc":"2.0","id":44,"method":"tools/list"}]\n',
]


def edge_session(client: LineClient) -> list[list[Any]]:
    """Each edge frame, then a ping: what came back before the ping's answer."""
    client.initialize()
    seen: list[list[Any]] = []
    for n, frame in enumerate(EDGE_FRAMES):
        client.send(frame)
        ping_id = 100 + n
        client.send(req(ping_id, "ping"))
        before: list[Any] = []
        while True:
            message = json.loads(client.readline())
            if isinstance(message, dict) and message.get("id") == ping_id:
                break
            before.append(message)
        seen.append(before)
    client.finish()
    return seen


def test_frames_the_server_ignored_or_refused_replay_as_recorded(tmp_path: Path) -> None:
    tape = tmp_path / "edges.jsonl"
    live = edge_session(LineClient(record_command(tape, FIDELITY)))
    replayed = edge_session(LineClient([*replay_command(tape), "-q"], env=OFFLINE_ENV))
    assert replayed == live


def concurrent_calls(client: LineClient) -> list[Any]:
    """Send a slow call and a fast one in one write (the client does not wait between
    them); the ids of the answers, in the order they came."""
    client.initialize()
    slow = req(50, "tools/call", {"name": "slow", "arguments": {"seconds": 0.6}})
    fast = req(51, "tools/call", {"name": "fast", "arguments": {}})
    client.send((json.dumps(slow) + "\n" + json.dumps(fast) + "\n").encode())
    order = [client.receive()["id"], client.receive()["id"]]
    client.finish()
    return order


def test_concurrent_calls_are_answered_in_the_order_the_recording_shows(tmp_path: Path) -> None:
    tape = tmp_path / "concurrent.jsonl"
    live = concurrent_calls(LineClient(record_command(tape, FIDELITY)))
    assert live == [51, 50]  # the fast call first, live
    replayed = concurrent_calls(LineClient([*replay_command(tape), "-q"], env=OFFLINE_ENV))
    assert replayed == live  # used to be the slow call's whole exchange first
    argv = [*replay_command(tape), "-q", "--pace", "recorded"]
    paced = concurrent_calls(LineClient(argv, env=OFFLINE_ENV))
    assert paced == live  # used to hold the fast call behind the slow one's recorded delay


def test_new_episodes_with_a_legacy_client_keeps_a_modern_cassette_lint_clean(
    tmp_path: Path,
) -> None:
    from tests.helpers.support import MODERN_SERVER

    tape = tmp_path / "modern.jsonl"

    async def modern() -> str:
        from mcp import Client

        # --no-probe: a cassette that cannot tell the server accepts legacy clients
        server = stdio_params(record_command(tape, [PY, str(MODERN_SERVER)], "--no-probe"))
        async with Client(server) as client:
            await client.call_tool("add", {"a": 1, "b": 2})
            return str(client.protocol_version)

    assert run(modern) == "2026-07-28"
    argv = [*replay_command(tape), "--mode", "new_episodes", "--", PY, str(MODERN_SERVER)]
    legacy = LineClient(argv)
    # a legacy handshake: refused as the modern-only server refuses it (-32022), a miss
    assert legacy.initialize()["error"]["code"] == -32022
    legacy.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    legacy.finish()
    events = [json.loads(line) for line in tape.read_text().splitlines()[1:]]
    methods = [e["message"].get("method") for e in events if e.get("kind") == "message"]
    assert "initialize" not in methods  # never forwarded, never appended
    lint = LineClient([PY, "-m", "cassette", "lint", str(tape)])
    assert lint.finish()[0] == 0


def test_a_recorded_crash_ends_the_http_session_and_the_sse_stream(tmp_path: Path) -> None:
    """The same crash, replayed on the network fronts: over streamable HTTP the call's POST
    ends with the error naming why and the session is gone (404 after it); over SSE the
    stream carries the error and then ends, as when the live server died."""
    import httpx

    from tests.helpers.support import Background

    tape = tmp_path / "crash.jsonl"
    # legacy, so both fronts serve it with sessions (the SSE transport is legacy only)
    run(lambda: crash_session(stdio_params(record_command(tape, FIDELITY, "--era", "legacy"))))
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "r", "version": "0"},
        },
    }
    crash = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "crash", "arguments": {}},
    }
    with Background(
        [*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV
    ) as front:
        url = front.wait_for(r"serving on (http://\S+)").group(1)
        with httpx.Client(timeout=20) as http:
            opened = http.post(url, json=init, headers=headers)
            session = {**headers, "mcp-session-id": opened.headers["mcp-session-id"]}
            failed = http.post(url, json=crash, headers=session)
            assert "the recorded server exited while it was open" in failed.text
            assert http.post(url, json=crash, headers=session).status_code == 404  # gone
        assert front.stop() == 1  # a miss: the call had no answer
    with Background(
        [*replay_command(tape), "--front", "sse", "--port", "0"], env=OFFLINE_ENV
    ) as front:
        url = front.wait_for(r"serving on (http://\S+)").group(1)
        with httpx.Client(timeout=20) as http, http.stream("GET", url) as stream:
            lines = stream.iter_lines()
            endpoint = next(line[6:] for line in lines if line.startswith("data: "))
            post_url = str(httpx.URL(url).join(endpoint))
            assert http.post(post_url, json=init).status_code == 202
            assert http.post(post_url, json=crash).status_code == 202
            rest = list(lines)  # ends: the stream closes after the error, as live
        assert any("the recorded server exited while it was open" in line for line in rest)
