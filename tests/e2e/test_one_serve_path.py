"""What the one serve path gives every front, end to end with the official Python SDK and
the pinned reference server: recorded gaps reproduced on HTTP and SSE (``--pace
recorded`` used to be ignored there), ``--upstream-timeout`` on the SSE recording proxy
(it used to exit 70 with a TypeError), and record modes, ``new_episodes`` included, over
legacy HTTP+SSE (they used to be streamable HTTP only)."""

from __future__ import annotations

import json
import signal
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from cassette import Cassette, MessageEvent
from tests.e2e.test_sse_sdk import everything_session, over_sse, start_everything_sse
from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    Background,
    dump,
    everything_command,
    record_command,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e
URL = r"(http://127\.0\.0\.1:\d+/\S*)"
#: server-everything's long-running operation: 3 progress steps over 1.5 s, 0.5 s apart
STEPS, DURATION = 3, 1.5
#: what a timer may fire early by (a millisecond in Node, a clock tick in asyncio), with room
SLACK = 0.01


async def long_call(client_target: Any) -> tuple[list[tuple[float, float]], dict[str, Any]]:
    """Call the long-running operation; each progress value the client saw, with how long
    after the call started (the client's own clock) it saw it."""
    from mcp import Client

    seen: list[tuple[float, float]] = []
    async with Client(client_target) as client:
        start = anyio.current_time()  # before the request is sent, so never after it arrived

        async def on_progress(value: float, _total: float | None, _message: str | None) -> None:
            seen.append((value, anyio.current_time() - start))

        result = await client.call_tool(
            "trigger-long-running-operation",
            {"duration": DURATION, "steps": STEPS},
            progress_callback=on_progress,
        )
    return seen, dump(result)


def recorded_offsets(tape: Path) -> list[float]:
    """When each progress notification came, in seconds after the recorder saw the call
    (the cassette's clock): what a paced replay must wait before sending each."""
    events = [e for e in Cassette.load(tape).events if isinstance(e, MessageEvent)]
    call = next(e.t for e in events if e.message.get("method") == "tools/call")
    progress = [e.t for e in events if e.message.get("method") == "notifications/progress"]
    return [t - call for t in progress]


def test_pace_recorded_reproduces_the_recorded_gaps_on_http_and_sse(tmp_path: Path) -> None:
    """Only lower bounds are asserted, never how long anything took: on a loaded machine
    every message may come late, but a paced one can never come early. The recorder stamps
    the call before forwarding it and each notification after reading it, and the server
    waits a step before each one, so the k-th recorded offset is at least k steps. The
    replay waits the recorded gaps one after another from the call's arrival, and the
    client's clock starts before its call is sent, so the client sees the k-th notification
    no sooner than its recorded offset. An unpaced replay sends all three at once, well
    before the second step's offset."""
    tape = tmp_path / "long.jsonl"
    _, live = run(lambda: long_call(stdio_params(record_command(tape, everything_command()))))
    offsets = recorded_offsets(tape)
    step = DURATION / STEPS
    assert len(offsets) == STEPS
    # Node's timers may fire up to a millisecond early, hence the slack.
    assert all(t >= k * (step - SLACK) for k, t in enumerate(offsets, 1)), offsets

    for front, target in (("http", lambda url: url), ("sse", over_sse_transport)):
        # No cap: each recorded gap is waited in full, so the offsets are the lower bounds.
        argv = [*replay_command(tape), "--front", front, "--pace", "recorded"]
        argv += ["--pace-cap", "3600", "-q"]
        with Background(argv, env=OFFLINE_ENV) as server:
            url = server.wait_for("serving on " + URL).group(1)
            seen, replayed = run(partial(long_call, target(url)))
            assert server.stop(signal.SIGINT) == 0, server.output()
        assert replayed == live
        assert [value for value, _ in seen] == [float(k) for k in range(1, STEPS + 1)]
        for recorded, (_, when) in zip(offsets, seen, strict=True):
            assert when >= recorded - SLACK, (front, offsets, seen)


def over_sse_transport(url: str) -> Any:
    from mcp.client.sse import sse_client

    return sse_client(url)


def test_the_sse_recording_proxy_takes_upstream_timeout(tmp_path: Path) -> None:
    tape = tmp_path / "sse.jsonl"
    server, upstream = start_everything_sse()
    with server:
        argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "sse"]
        argv += ["--upstream", upstream, "--upstream-timeout", "5", "--port", "0"]
        with Background(argv) as proxy:
            url = proxy.wait_for(r"point your client at " + URL).group(1)
            live = run(lambda: everything_session(over_sse(url)))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert "Traceback" not in proxy.output()
    assert live["progress"] == [1.0, 2.0]
    assert Cassette.load(tape).header.transport == "sse"


def sse_mode(tape: Path, upstream: str, mode: str, report: Path) -> tuple[Background, str]:
    argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "sse"]
    argv += ["--upstream", upstream, "--mode", mode, "--report", str(report), "--port", "0"]
    server = Background(argv, env=OFFLINE_ENV if mode == "none" else None)
    return server, server.wait_for(r"point your client at " + URL).group(1)


async def sse_calls(url: str, *, grown: bool) -> dict[str, Any]:
    from mcp.client.session import ClientSession

    async with over_sse(url)() as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        out = {"echo": dump(await session.call_tool("echo", {"message": "hi"}))}
        if grown:
            out["sum"] = dump(await session.call_tool("get-sum", {"a": 2, "b": 3}))
    return out


def test_new_episodes_over_sse_appends_a_miss_that_then_replays_offline(tmp_path: Path) -> None:
    tape, report = tmp_path / "t.jsonl", tmp_path / "report.jsonl"
    server, upstream = start_everything_sse()
    with server:
        recording, url = sse_mode(tape, upstream, "once", report)
        with recording:
            run(lambda: sse_calls(url, grown=False))
            assert recording.stop(signal.SIGTERM) == 0, recording.output()
        recorded = tape.read_text()

        extending, url = sse_mode(tape, upstream, "new_episodes", report)
        with extending:
            live = run(lambda: sse_calls(url, grown=True))
            assert extending.stop(signal.SIGTERM) == 0, extending.output()
    assert "Echo: hi" in json.dumps(live["echo"])
    assert "5" in json.dumps(live["sum"])
    assert "appended a new episode to" in extending.output()
    facts = [json.loads(line) for line in report.read_text().splitlines()]
    assert [f["action"] for f in facts if f["event"] == "session"] == ["record", "extend"]
    assert [f["method"] for f in facts if f["event"] == "episode"] == ["tools/call"]
    assert tape.read_text().startswith(recorded)
    assert not Cassette.load(tape).warnings
    lint = subprocess.run(
        [PY, "-m", "cassette", "lint", str(tape)], capture_output=True, text=True, check=False
    )
    assert lint.returncode == 0, lint.stdout + lint.stderr  # appended as a recording reads

    replaying, url = sse_mode(tape, upstream, "none", report)  # the server is gone
    with replaying:
        replayed = run(lambda: sse_calls(url, grown=True))
        assert replaying.stop(signal.SIGTERM) == 0, replaying.output()
    assert replayed == live
