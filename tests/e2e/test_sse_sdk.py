"""End to end over legacy HTTP+SSE with the official Python SDK's SSE client and the
reference server in `sse` mode: record through `cassette record --transport sse`, stop
the server, replay with `cassette replay --front sse`, and require identical results; then
across fronts, and the front's guards (foreign origin and host, a taken port)."""

from __future__ import annotations

import signal
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette, HttpEvent, MessageEvent
from tests.helpers.support import EVERYTHING_JS as EVERYTHING
from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    Background,
    everything_calls,
    everything_server,
    node,
    record_command,
    replay_command,
    run,
    scaled,
    session_events,
    stdio_params,
)

pytestmark = pytest.mark.e2e
URL = r"(http://127\.0\.0\.1:\d+/sse)"
Streams = Callable[[], AbstractAsyncContextManager[Any]]


async def everything_session(streams: Streams) -> dict[str, Any]:
    """A scripted session: lists, tools (one twice, one with progress), a read, a prompt."""
    from mcp.client.session import ClientSession

    async with streams() as (read, write), ClientSession(read, write) as session:
        init = await session.initialize()
        out = {"protocol": init.protocol_version, "server": init.server_info.name}
        return {**out, **await everything_calls(session, "over sse")}


def over_sse(url: str, seen: list[str] | None = None) -> Streams:
    from mcp.client.sse import sse_client

    return lambda: sse_client(url, on_session_created=(seen.append if seen is not None else None))


def over_stdio(command: list[str], env: dict[str, str] | None = None) -> Streams:
    from mcp.client.stdio import stdio_client

    return lambda: stdio_client(stdio_params(command, env))


def start_everything_sse() -> tuple[Background, str]:
    server, port = everything_server("sse")
    return server, f"http://127.0.0.1:{port}/sse"


def sse_front(tape: Path, *extra: str) -> tuple[Background, str]:
    front = Background([*replay_command(tape), "--front", "sse", *extra], env=OFFLINE_ENV)
    return front, front.wait_for(r"serving on " + URL).group(1)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[str]]:
    """One live session against the reference server, recorded through the SSE proxy."""
    tape = tmp_path_factory.mktemp("sse") / "everything-sse.jsonl"
    seen: list[str] = []
    server, upstream = start_everything_sse()
    with server:
        argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "sse"]
        proxy = Background([*argv, "--upstream", upstream, "--port", "0"])
        with proxy:
            url = proxy.wait_for(r"point your client at " + URL).group(1)
            live = run(lambda: everything_session(over_sse(url, seen)))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    return tape, live, seen


def test_everything_over_sse_recorded_then_replayed_offline(
    recorded: tuple[Path, dict[str, Any], list[str]],
) -> None:
    tape, live, seen = recorded
    assert live["progress"] == [1.0, 2.0]
    assert live["server"] == "mcp-servers/everything"

    cassette = Cassette.load(tape)
    assert cassette.header.transport == "sse"
    assert (cassette.header.era, cassette.header.protocol_version) == ("legacy", live["protocol"])
    assert cassette.header.target["url"].endswith("/sse")
    events = session_events(cassette)  # the recorder's probes: sessions of their own
    sent = [e for e in events if isinstance(e, MessageEvent) and e.dir == "c2s"]
    said = [e for e in events if isinstance(e, MessageEvent) and e.dir == "s2c"]
    assert all(e.meta and e.meta["stream"].startswith("post-") for e in sent)
    assert {e.meta["stream"] for e in said if e.meta} == {"get-1"}
    assert {e.meta.get("session") for e in sent + said if e.meta} == {1}
    gets = [(e.method, e.stream, e.status) for e in cassette.events if isinstance(e, HttpEvent)]
    assert gets == [("GET", "get-1", 200)]  # every POST got the default 202
    assert seen  # the client saw the upstream's session id, through the rewritten endpoint
    assert seen[0] not in tape.read_text()  # ... and the cassette never did

    front, url = sse_front(tape)
    with front:
        replayed = run(lambda: everything_session(over_sse(url)))
        assert front.stop() == 0, front.output()
    assert replayed == live


def test_an_sse_cassette_serves_over_stdio_and_a_stdio_cassette_over_sse(
    recorded: tuple[Path, dict[str, Any], list[str]], tmp_path: Path
) -> None:
    tape, live, _seen = recorded
    over_stdio_replay = run(
        lambda: everything_session(over_stdio(replay_command(tape), OFFLINE_ENV))
    )
    assert over_stdio_replay == live

    stdio_tape = tmp_path / "stdio.jsonl"
    command = record_command(stdio_tape, [node(), str(EVERYTHING), "stdio"])
    live_stdio = run(lambda: everything_session(over_stdio(command)))
    front, url = sse_front(stdio_tape)
    with front:
        replayed = run(lambda: everything_session(over_sse(url)))
        assert front.stop() == 0, front.output()
    assert replayed == live_stdio


def test_the_front_refuses_foreign_origins_and_names_a_taken_port(
    recorded: tuple[Path, dict[str, Any], list[str]],
) -> None:
    import httpx

    tape, _live, _seen = recorded
    front, url = sse_front(tape)
    with front:
        with httpx.Client(timeout=10) as client:
            evil = client.get(url, headers={"origin": "http://evil.example"})
            assert evil.status_code == 403
            rebinding = client.get(url, headers={"host": "evil.example"})
            assert rebinding.status_code == 403
        port = url.rsplit(":", 1)[1].split("/")[0]
        clash = Background([*replay_command(tape), "--front", "sse", "--port", port])
        with clash:
            clash.wait_for(r"cassette: error")
            assert clash.proc.wait(timeout=scaled(20)) == 4
            assert f"port {port} on 127.0.0.1 is taken" in clash.output()
            assert "Traceback" not in clash.output()
        assert front.stop() == 0, front.output()


def test_an_sse_cassette_serves_over_streamable_http(
    recorded: tuple[Path, dict[str, Any], list[str]],
) -> None:
    from mcp.client.streamable_http import streamable_http_client

    tape, live, _seen = recorded
    front = Background([*replay_command(tape), "--front", "http"], env=OFFLINE_ENV)
    with front:
        url = front.wait_for(r"serving on (http://127\.0\.0\.1:\d+/sse)").group(1)
        assert run(lambda: everything_session(lambda: streamable_http_client(url))) == live
