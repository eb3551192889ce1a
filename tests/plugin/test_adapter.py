"""cassette.adapters.mcp_sdk: the official Python SDK talking to a cassette in this
process (no subprocess for the replay, no port), and recording an in-process session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from cassette.core.wire.model import MessageEvent
from cassette.errors import CassetteExistsError, CassetteNotFoundError
from tests.helpers.support import PY, ROOT, client_starts, run

SERVER = ROOT / "tests" / "servers" / "episode_server.py"
EVERYTHING = ROOT / "examples" / "everything.jsonl"


def server(log: Path, tag: str = "live") -> list[str]:
    return [PY, str(SERVER), "--log", str(log), "--tag", tag]


def starts(log: Path) -> int:
    return client_starts(log)  # the recorder's probes apart


def test_client_session_replays_a_cassette_in_process() -> None:
    from mcp import ClientSession
    from mcp.shared.exceptions import MCPError

    from cassette.adapters.mcp_sdk import replay_transport

    transport = replay_transport(EVERYTHING)

    async def scenario() -> tuple[Any, ...]:
        async with transport as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            tools = await session.list_tools()
            echo = await session.call_tool("echo", {"message": "hello from a cassette"})
            with pytest.raises(MCPError) as miss:
                await session.call_tool("echo", {"message": "never recorded"})
            return init, tools, echo, str(miss.value)

    init, tools, echo, miss = run(scenario, timeout=30)
    assert init.server_info.name == "mcp-servers/everything"
    assert "echo" in [t.name for t in tools.tools]
    assert echo.content[0].text == "Echo: hello from a cassette"
    assert 'tools/call "echo" not recorded' in miss
    assert 'recorded "hello from a cassette", received "never recorded"' in miss
    assert len(transport.misses) == 1
    assert transport.misses[0] in miss
    assert len(transport.result.misses) == 1


def test_client_records_in_process_and_the_recording_replays(tmp_path: Path) -> None:
    from mcp import Client

    from cassette.adapters.mcp_sdk import record_transport, replay_transport

    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"

    async def session(transport: Any) -> list[str]:
        async with Client(transport, mode="legacy") as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            echo = await client.call_tool("echo", {"message": "x"})
            return [*tools, echo.content[0].text]

    live = run(lambda: session(record_transport(server(log), tape)), timeout=30)
    assert live == ["echo", "count", "progress", "live:"]  # the tool reads "text", not "message"
    assert starts(log) == 1
    assert Cassette.load(tape).header.protocol_version is not None

    replayed = run(lambda: session(replay_transport(tape)), timeout=30)
    assert replayed == live
    assert starts(log) == 1

    # like `cassette record`: an existing recording is not overwritten by accident
    with pytest.raises(CassetteExistsError):
        run(lambda: session(record_transport(server(log), tape)), timeout=30)
    assert starts(log) == 1


def test_cassette_transport_follows_the_record_mode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp import Client

    from cassette.adapters.mcp_sdk import cassette_transport

    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    monkeypatch.setenv("MCP_CASSETTE_MODE", "none")
    with pytest.raises(CassetteNotFoundError, match=r"mode none \(from MCP_CASSETTE_MODE\)"):
        cassette_transport(tape, server(log))
    assert starts(log) == 0

    async def session(mode: str | None, tag: str) -> str:
        transport = cassette_transport(tape, server(log, tag), mode=mode)
        async with Client(transport, mode="legacy") as client:
            reply = await client.call_tool("echo", {"text": "a"})
        return str(reply.content[0].text)

    assert run(lambda: session("once", "first"), timeout=30) == "first:a"
    assert run(lambda: session("once", "second"), timeout=30) == "first:a"  # replayed
    assert run(lambda: session(None, "third"), timeout=30) == "first:a"  # env: none
    assert starts(log) == 1
    assert run(lambda: session("all", "fourth"), timeout=30) == "fourth:a"
    assert starts(log) == 2


def test_new_episodes_in_the_modern_era_needs_no_handshake(tmp_path: Path) -> None:
    from mcp import Client

    from cassette.adapters.mcp_sdk import cassette_transport

    tape = tmp_path / "modern.jsonl"
    command = [PY, str(ROOT / "tests" / "servers" / "modern_server.py")]

    async def add(mode: str, a: int, b: int) -> tuple[str, Any]:
        transport = cassette_transport(tape, command, mode=mode)
        async with Client(transport) as client:
            version = client.protocol_version
            reply = await client.call_tool("add", {"a": a, "b": b})
        return version, reply.structured_content

    assert run(lambda: add("once", 20, 22), timeout=60) == ("2026-07-28", {"result": 42})
    assert Cassette.load(tape).header.era == "modern"
    # a new call, stateless: the live server answers it with no initialize of its own
    assert run(lambda: add("new_episodes", 1, 2), timeout=60) == ("2026-07-28", {"result": 3})
    # (the recorder's own probes, a legacy one among them, are no session's: meta.probe)
    events = Cassette.load(tape).events
    methods = [
        e.message.get("method")
        for e in events
        if isinstance(e, MessageEvent) and e.dir == "c2s" and not (e.meta or {}).get("probe")
    ]
    assert "initialize" not in methods
    assert run(lambda: add("none", 1, 2), timeout=60) == ("2026-07-28", {"result": 3})


ECHO = {"message": "hello from a cassette"}
ECHOED = "Echo: hello from a cassette"


def faulted_calls(kind: str, **params: Any) -> tuple[list[Any], Any]:
    """Two echo calls through ``replay_transport(..., faults=...)``, the first faulted:
    each call's text or the error it raised, and what leaving the transport raised."""
    from mcp import Client

    from cassette.adapters.mcp_sdk import replay_transport

    rule = {"kind": kind, "method": "tools/call", "name": "echo", "nth": 1, **params}
    transport = replay_transport(EVERYTHING, faults=[rule])
    outcomes: list[Any] = []

    async def scenario() -> None:
        async with Client(transport) as client:
            # far from any delay in the plan: only a stalled machine could change it
            for seconds in (0.5 if kind == "timeout" else 60.0, 60.0):
                try:
                    result = await client.session.call_tool(
                        "echo", ECHO, read_timeout_seconds=seconds
                    )
                    outcomes.append(result.content[0].text)
                except Exception as exc:
                    outcomes.append(exc)

    try:
        run(scenario, timeout=120)
    except Exception as exc:
        return outcomes, exc
    return outcomes, None


def code_of(outcome: Any) -> int:
    from mcp import MCPError

    assert isinstance(outcome, MCPError), f"expected the SDK's MCPError, got {outcome!r}"
    return outcome.error.code


def test_a_fault_plan_in_process_timeout_and_error_reach_the_caller() -> None:
    from mcp.types import REQUEST_TIMEOUT

    (first, retry), left = faulted_calls("timeout")
    assert code_of(first) == REQUEST_TIMEOUT
    assert retry == ECHOED  # the faulted call left its recording for the retry
    assert left is None

    (first, retry), left = faulted_calls("error", code=-32050, message="quota", data={"n": 7})
    assert code_of(first) == -32050
    assert (first.error.message, first.error.data) == ("quota", {"n": 7})
    assert retry == ECHOED
    assert left is None


def test_a_fault_plan_in_process_disconnect_and_exit_close_the_connection() -> None:
    from mcp.types import CONNECTION_CLOSED

    from cassette.errors import FaultExit

    for kind in ("disconnect", "exit"):
        (first, retry), left = faulted_calls(kind, **({"exit-code": 3} if kind == "exit" else {}))
        assert code_of(first) == CONNECTION_CLOSED, kind
        assert code_of(retry) == CONNECTION_CLOSED, kind  # the session is gone
        if kind == "exit":  # a crashed server is an error when the transport is left
            assert isinstance(left, FaultExit)
            assert left.code == 3
        else:
            assert left is None
