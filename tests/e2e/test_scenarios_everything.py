"""Scenarios against the pinned reference server: one file, no client code, recorded over
stdio, streamable HTTP and legacy SSE; the server's sampling, elicitation and roots
requests answered from the file; every cassette replayed to the official SDK client
with the server gone; and the SSE one verified against the live server, its three
questions answered from the cassette."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.e2e.test_http_sdk import http_replay, start_everything_http
from tests.e2e.test_sse_sdk import start_everything_sse
from tests.helpers.support import (
    EVERYTHING_JS,
    OFFLINE_ENV,
    PY,
    dump,
    node,
    replay_command,
    run,
    scaled,
    session_events,
    stdio_params,
)

pytestmark = pytest.mark.e2e

COMPLETE = (
    '{ complete = { prompt = "completable-prompt" }, '
    'argument = { name = "department", value = "Eng" } }'
)
STEPS = """
[answers]
sampling = "a sampled answer"
elicitation = { name = "Ada", check = true }
roots = [{ uri = "file:///work/project", name = "project" }]

[[scenarios]]
name = "tour"
steps = [
  { list = "tools" },
  { list = "prompts" },
  { list = "resources" },
  { list = "resource-templates" },
  { call = "echo", arguments = { message = "hello from a scenario" } },
  { call = "get-sum", arguments = { a = 1, b = 2 } },
  { prompt = "simple-prompt" },
  { read = "demo://resource/static/document/features.md" },
  COMPLETE,
  { log-level = "debug" },
  { subscribe = "demo://resource/static/document/features.md" },
  { method = "ping" },
  { call = "no-such-tool", expect-error = true },
]

[[scenarios]]
name = "asks"
description = "the server asks its client three times; the file answers"
steps = [
  { list = "tools" },
  { call = "trigger-sampling-request", arguments = { prompt = "hello", maxTokens = 20 } },
  { call = "trigger-elicitation-request" },
  { call = "get-roots-list" },
]
""".replace("COMPLETE", COMPLETE)


def write_scenarios(folder: Path, target: str) -> Path:
    path = folder / "everything.toml"
    path.write_text(f'format = 1\ncassettes = "tapes"\n\n[target]\n{target}\n{STEPS}')
    return path


def record(scenarios: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", "record", "--scenarios", str(scenarios), *extra],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


def recorded_result(tape: Path, tool: str) -> Any:
    """The recorded answer to ``tools/call tool``, as the cassette has it."""
    cassette = Cassette.load(tape)
    ids = [
        m["id"]
        for m in cassette.messages("c2s")
        if m.get("method") == "tools/call" and m["params"]["name"] == tool
    ]
    return next(
        m["result"] for m in cassette.messages("s2c") if "result" in m and m.get("id") == ids[0]
    )


async def sdk_tour(target: Any) -> dict[str, Any]:
    """The official SDK client doing what the "tour" scenario did."""
    from mcp import Client

    async with Client(target) as client:
        return {
            "tools": sorted(t.name for t in (await client.list_tools()).tools),
            "echo": dump(await client.call_tool("echo", {"message": "hello from a scenario"})),
            "sum": dump(await client.call_tool("get-sum", {"a": 1, "b": 2})),
            "prompt": dump(await client.get_prompt("simple-prompt")),
            "read": dump(await client.read_resource("demo://resource/static/document/features.md")),
        }


async def sdk_asks(target: Any) -> dict[str, Any]:
    """The official SDK client with callbacks doing what the "asks" scenario did: the
    replay asks it what the server asked, and it answers what the file answered."""
    from mcp import Client, types

    async def sampling(_ctx: Any, _params: Any) -> Any:
        content = types.TextContent(type="text", text="a sampled answer")
        return types.CreateMessageResult(
            role="assistant", content=content, model="cassette-scenario", stopReason="endTurn"
        )

    async def elicitation(_ctx: Any, _params: Any) -> Any:
        return types.ElicitResult(action="accept", content={"name": "Ada", "check": True})

    async def roots(_ctx: Any) -> Any:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work/project", name="project")])

    async with Client(
        target,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        list_roots_callback=roots,
    ) as client:
        return {
            "sampling": dump(
                await client.call_tool(
                    "trigger-sampling-request", {"prompt": "hello", "maxTokens": 20}
                )
            ),
            "elicitation": dump(await client.call_tool("trigger-elicitation-request", {})),
            "roots": dump(await client.call_tool("get-roots-list", {})),
        }


def texts(result: Any) -> list[str]:
    return [c.get("text") for c in result["content"]]


def check_tour(tape: Path, replayed: dict[str, Any]) -> None:
    assert "echo" in replayed["tools"]
    # the file declared sampling and was offered its tool; the SDK client declares none and
    # is offered what the live server lists to such a client (the recorder's probes)
    assert "trigger-sampling-request" not in replayed["tools"]
    assert replayed["echo"]["content"][0]["text"] == "Echo: hello from a scenario"
    assert texts(replayed["echo"]) == texts(recorded_result(tape, "echo"))
    assert "3" in replayed["sum"]["content"][0]["text"]
    assert replayed["prompt"]["messages"]
    assert replayed["read"]["contents"][0]["text"]


def check_asks(tape: Path, replayed: dict[str, Any]) -> None:
    assert "a sampled answer" in replayed["sampling"]["content"][0]["text"]
    assert "Ada" in json.dumps(replayed["elicitation"])
    assert "file:///work/project" in json.dumps(replayed["roots"])
    for tool, key in (
        ("trigger-sampling-request", "sampling"),
        ("trigger-elicitation-request", "elicitation"),
        ("get-roots-list", "roots"),
    ):
        assert texts(replayed[key]) == texts(recorded_result(tape, tool))


def test_scenarios_over_stdio_record_and_replay_to_the_sdk_client(tmp_path: Path) -> None:
    target = f'command = [{json.dumps(node())}, {json.dumps(str(EVERYTHING_JS))}, "stdio"]'
    scenarios = write_scenarios(tmp_path, target)
    result = record(scenarios)
    assert result.returncode == 0, result.stderr
    tapes = tmp_path / "tapes"
    assert result.stderr.splitlines() == [
        f"cassette: scenario tour: 13 step(s) recorded in {tapes / 'tour.jsonl'}",
        f"cassette: scenario asks: 4 step(s) recorded in {tapes / 'asks.jsonl'}",
    ]
    tour = Cassette.load(tapes / "tour.jsonl")
    assert (tour.header.transport, tour.header.era) == ("stdio", "legacy")
    methods = [m.get("method") for m in tour.messages("c2s")]
    # the auto era probes first, as a dual-era client does, then the handshake
    assert methods[:3] == ["server/discover", "initialize", "notifications/initialized"]
    for method in ("resources/templates/list", "completion/complete", "logging/setLevel"):
        assert method in methods
    asked = [  # the session's: the probes' lines after it hold a roots/list of their own
        e.message["method"]
        for e in session_events(tapes / "asks.jsonl")
        if getattr(e, "dir", None) == "s2c" and "method" in e.message and "id" in e.message
    ]
    assert asked == ["sampling/createMessage", "elicitation/create", "roots/list"]

    replay = stdio_params(replay_command(tapes / "tour.jsonl"), OFFLINE_ENV)
    check_tour(tapes / "tour.jsonl", run(lambda: sdk_tour(replay)))
    replay = stdio_params(replay_command(tapes / "asks.jsonl"), OFFLINE_ENV)
    check_asks(tapes / "asks.jsonl", run(lambda: sdk_asks(replay)))


def test_scenarios_over_streamable_http_record_the_http_session(tmp_path: Path) -> None:
    server, upstream = start_everything_http()
    with server:
        scenarios = write_scenarios(tmp_path, f'url = "{upstream}"')
        result = record(scenarios, "-o", str(tmp_path / "http"))
    assert result.returncode == 0, result.stderr
    tape = tmp_path / "http" / "asks.jsonl"
    cassette = Cassette.load(tape)
    assert cassette.header.transport == "streamable-http"
    assert cassette.header.target == {"url": upstream}
    assert any(type(e).__name__ == "HttpEvent" for e in cassette.events)  # an HTTP recording

    front, url = http_replay(tape)
    with front:
        check_asks(tape, run(lambda: sdk_asks(url)))
    front, url = http_replay(tmp_path / "http" / "tour.jsonl")
    with front:
        check_tour(tmp_path / "http" / "tour.jsonl", run(lambda: sdk_tour(url)))


def test_scenarios_over_legacy_sse(tmp_path: Path) -> None:
    server, upstream = start_everything_sse()
    with server:
        scenarios = write_scenarios(tmp_path, f'url = "{upstream}"\ntransport = "sse"')
        result = record(scenarios, "--scenario", "asks")
        assert result.returncode == 0, result.stderr
        tape = tmp_path / "tapes" / "asks.jsonl"
        # verify over SSE: the server's three questions answered from the cassette
        check = [PY, "-m", "cassette", "verify", str(tape), "--transport", "sse"]
        verified = subprocess.run(
            [*check, "--upstream", upstream],
            capture_output=True,
            text=True,
            timeout=scaled(120),
            check=False,
        )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # the auto era's server/discover probe, tools/list and the three calls that ask
    assert verified.stdout.splitlines()[-1] == f"{tape}: 5 MATCH"
    assert not (tmp_path / "tapes" / "tour.jsonl").exists()  # only the one asked for
    assert Cassette.load(tape).header.transport == "sse"
    replay = stdio_params(replay_command(tape), OFFLINE_ENV)
    check_asks(tape, run(lambda: sdk_asks(replay)))
