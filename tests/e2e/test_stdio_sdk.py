"""End to end over stdio with the official Python SDK client and real servers.

Each test records a scripted session through `python -m cassette record`, then replays the
cassette with no server reachable (PATH points nowhere) and requires identical results.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from cassette.core.wire.model import MessageEvent
from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    dump,
    everything_command,
    record_command,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e


async def everything_session(
    command: list[str], env: dict[str, str] | None = None
) -> dict[str, Any]:
    """The scripted session: discovery, lists, several tools (one twice), reads, prompts."""
    from mcp import Client

    out: dict[str, Any] = {}
    progress: list[tuple[float, float | None]] = []

    async def on_progress(value: float, total: float | None, _message: str | None) -> None:
        progress.append((value, total))

    async with Client(stdio_params(command, env)) as client:
        out["protocol"] = client.protocol_version
        out["server"] = dump(client.server_info)
        out["tools"] = [t.name for t in (await client.list_tools()).tools]
        resources = (await client.list_resources()).resources
        out["resources"] = [str(r.uri) for r in resources]
        out["templates"] = dump(await client.list_resource_templates())
        out["prompts"] = [p.name for p in (await client.list_prompts()).prompts]
        out["echo"] = dump(await client.call_tool("echo", {"message": "hello"}))
        out["echo_again"] = dump(await client.call_tool("echo", {"message": "hello"}))
        out["sum"] = dump(await client.call_tool("get-sum", {"a": 2, "b": 40}))
        out["image"] = dump(await client.call_tool("get-tiny-image", {}))
        out["long"] = dump(
            await client.call_tool(
                "trigger-long-running-operation",
                {"duration": 0.3, "steps": 3},
                progress_callback=on_progress,
            )
        )
        out["read"] = [dump(await client.read_resource(r.uri)) for r in resources[:2]]
        out["prompt"] = dump(await client.get_prompt("simple-prompt"))
        out["args_prompt"] = dump(await client.get_prompt("args-prompt", {"city": "Oslo"}))
    out["progress"] = progress
    return out


def test_everything_recorded_then_replayed_offline_gives_identical_results(tmp_path: Path) -> None:
    tape = tmp_path / "everything.jsonl"
    live = run(lambda: everything_session(record_command(tape, everything_command())))
    assert "echo" in live["tools"]
    assert live["progress"] == [(1.0, 3.0), (2.0, 3.0), (3.0, 3.0)]

    cassette = Cassette.load(tape)
    assert cassette.header.era == "legacy"
    assert cassette.header.protocol_version == live["protocol"]
    methods = [m.get("method") for m in cassette.messages("c2s")]
    assert methods[:2] == ["server/discover", "initialize"]  # the failed probe stays recorded

    replayed = run(lambda: everything_session(replay_command(tape), env=OFFLINE_ENV))
    assert replayed == live


def test_unrecorded_call_gets_a_fast_error_naming_the_nearest_recording(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    tape = tmp_path / "echo.jsonl"

    async def record_echo() -> None:
        async with Client(stdio_params(record_command(tape, everything_command()))) as client:
            await client.call_tool("echo", {"message": "recorded"})

    run(record_echo)

    async def replay_other() -> tuple[str, Any]:
        async with Client(stdio_params(replay_command(tape), OFFLINE_ENV)) as client:
            with pytest.raises(MCPError) as info:
                await client.call_tool("echo", {"message": "never recorded"})
            ok = await client.call_tool("echo", {"message": "recorded"})
            return str(info.value), dump(ok)

    message, ok = run(replay_other, timeout=30)
    assert 'tools/call "echo" not recorded' in message
    assert '/message: recorded "recorded", received "never recorded"' in message
    assert f"closest recording: {tape}:" in message
    assert ok["content"][0]["text"] == "Echo: recorded"


async def modern_session(command: list[str], env: dict[str, str] | None = None) -> dict[str, Any]:
    from mcp import Client

    async with Client(stdio_params(command, env)) as client:
        return {
            "protocol": client.protocol_version,
            "server": dump(client.server_info),
            "tools": dump(await client.list_tools()),
            "add": dump(await client.call_tool("add", {"a": 20, "b": 22})),
            "shout": dump(await client.call_tool("shout", {"text": "quiet"})),
            "add_again": dump(await client.call_tool("add", {"a": 20, "b": 22})),
            "resources": dump(await client.list_resources()),
            "read": dump(await client.read_resource("memo://greeting")),
            "prompts": dump(await client.list_prompts()),
            "prompt": dump(await client.get_prompt("review", {"code": "x = 1"})),
        }


def test_modern_era_session_records_as_modern_and_replays(tmp_path: Path) -> None:
    tape = tmp_path / "modern.jsonl"
    live = run(lambda: modern_session(record_command(tape, [PY, str(MODERN_SERVER)])))
    assert live["protocol"] == "2026-07-28"
    assert live["add"]["structuredContent"] == {"result": 42}

    header = json.loads(tape.read_text().splitlines()[0])
    assert header["era"] == "modern"
    assert header["protocol_version"] == "2026-07-28"
    # (the recorder's own probes, a legacy one among them, are no session's: meta.probe)
    sent = [
        e.message
        for e in Cassette.load(tape).events
        if isinstance(e, MessageEvent) and e.dir == "c2s" and not (e.meta or {}).get("probe")
    ]
    assert not any(m.get("method") == "initialize" for m in sent)

    replayed = run(lambda: modern_session(replay_command(tape), env=OFFLINE_ENV))
    assert replayed == live
