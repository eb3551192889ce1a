"""Cross-language replay: record with the Python SDK, replay to the TypeScript SDK.

The cassette is recorded by the official Python client (mcp 2.3.0, mode ``auto``: it
probes ``server/discover``, gets -32601 from the legacy server, then runs ``initialize``)
talking to the real ``server-everything`` through ``cassette record``. Then the official
TypeScript client (SDK v1, which only sends ``initialize``) runs one scripted session,
``tests/node/ts_client.mjs``, twice: against the live server and against
``cassette replay`` of the tape, with no real server behind it. Both runs must print
the same JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.support import EVERYTHING_JS, NODE_DIR, session_events
from tests.helpers.support import node as _node

pytestmark = pytest.mark.e2e

TS_CLIENT = NODE_DIR / "ts_client.mjs"

TIMEOUT = 60  # seconds, for every subprocess and for the recording session

ECHO_ARGS = {"message": "hello from ts"}
SUM_ARGS = {"a": 2, "b": 3}


async def _record(tape: Path) -> str:
    """Run the scripted session with the Python SDK through ``cassette record``."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters
    from mcp.types import TextContent

    server = ["node", str(EVERYTHING_JS), "stdio"]
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "cassette", "record", "-o", str(tape), "--", *server]
    )
    with anyio.fail_after(TIMEOUT):
        async with Client(params) as client:
            tools = await client.list_tools()
            assert "echo" in [t.name for t in tools.tools]
            resources = await client.list_resources()
            await client.list_resource_templates()
            await client.list_prompts()
            for _ in range(2):
                echo = await client.call_tool("echo", ECHO_ARGS)
                assert echo.content == [TextContent(type="text", text="Echo: hello from ts")]
            await client.call_tool("get-sum", SUM_ARGS)
            first_uri = str(resources.resources[0].uri)
            await client.read_resource(first_uri)
            await client.get_prompt("simple-prompt")
    return first_uri


def _run_ts_client(node: str, *server_command: str) -> tuple[dict[str, Any], str]:
    """Run ts_client.mjs against SERVER_COMMAND; return its JSON output and its stderr."""
    argv = [node, str(TS_CLIENT), *server_command]
    try:
        proc = subprocess.run(
            argv, capture_output=True, text=True, timeout=TIMEOUT, cwd=NODE_DIR, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{argv} timed out after {TIMEOUT}s; stderr:\n{exc.stderr!r}")
    assert proc.returncode == 0, (
        f"{argv} exited {proc.returncode}; stderr:\n{proc.stderr}\nstdout:\n{proc.stdout}"
    )
    try:
        return json.loads(proc.stdout), proc.stderr
    except json.JSONDecodeError as exc:
        pytest.fail(
            f"{argv} printed no JSON ({exc}); stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
        )


def _client_methods(tape: Path) -> list[str]:
    methods = []
    for line in tape.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry.get("kind") == "message" and entry.get("dir") == "c2s":
            methods.append(entry["message"].get("method"))
    return methods


def test_typescript_client_replays_a_python_recorded_cassette(tmp_path: Path) -> None:
    node = _node()
    tape = tmp_path / "everything.jsonl"

    first_uri = anyio.run(_record, tape)

    # The tape holds the Python client's handshake (discover probe, then initialize) and
    # the same requests the TypeScript script makes. Its last entry is the recorded
    # server's exit: the recording proxy and the real server are gone before the replay.
    methods = _client_methods(tape)
    assert methods[:2] == ["server/discover", "initialize"], methods
    assert methods.count("tools/call") == 3, methods
    assert session_events(tape)[-1].kind == "exit"  # the recorder's probes come after it

    # Two live runs gave byte-identical output while this test was written (nothing in
    # this session of server-everything 2026.8.31 is time-dependent), so no field is
    # excluded from the comparison.
    live, live_err = _run_ts_client(node, "node", str(EVERYTHING_JS), "stdio")
    replayed, replay_err = _run_ts_client(
        node, sys.executable, "-m", "cassette", "replay", str(tape)
    )

    # Non-trivial: the live session really exercised the server.
    assert live["serverVersion"]["name"] == "mcp-servers/everything", live_err
    assert live["protocolVersion"], live_err
    assert "echo" in live["tools"], live_err
    assert live["resources"][0] == first_uri
    assert live["resourceTemplates"], live_err
    assert "simple-prompt" in live["prompts"], live_err
    for key in ("echo1", "echo2"):
        assert live[key]["content"] == [{"type": "text", "text": "Echo: hello from ts"}]
    assert live["getSum"]["content"][0]["text"] == "The sum of 2 and 3 is 5."
    assert live["readResource"]["contents"][0]["uri"] == first_uri
    assert live["simplePrompt"]["messages"], live_err

    assert "cassette: miss:" not in replay_err, replay_err
    assert replayed == live, f"replay differs from live; replay stderr:\n{replay_err}"
