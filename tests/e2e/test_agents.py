"""Claude Code and Gemini CLI, run for real against replays (tests/clients/agent_cli.py: a
home of its own and a local fake of its model API). Gemini CLI and Claude Code calling a
replayed tool are cells of the cross-client matrix (tests/e2e/test_client_matrix.py).

server-everything lists tools by what the client declares: a Python SDK client that
declares nothing is offered fewer than Claude Code (roots, elicitation), and Gemini CLI
lists prompts and resources on connect, which that client never asks. The recorder probes
the server beside the session (``cassette.core.eras.surface``): every listing under each
capability set a shipped profile declares, so a plain recording offers each agent what
the live server offers it, with no variant.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import (
    NODE_DIR,
    PY,
    ROOT,
    everything_command,
    record_command,
    replay_command,
    run,
    scaled,
    stdio_params,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

AGENT = ROOT / "tests" / "clients" / "agent_cli.py"


async def tools_of(target: Any) -> list[str]:
    """The tools a Python SDK 2 client declaring nothing is offered (its default), after
    it called the echo tool as the agents' scripted session does (tests/clients)."""
    from mcp import Client

    async with Client(target) as client:
        tools = sorted(t.name for t in (await client.list_tools()).tools)
        await client.call_tool("echo", {"message": "hello matrix"})
        return tools


def needs(agent: str) -> Any:
    binary = NODE_DIR / "node_modules" / ".bin" / agent
    return pytest.mark.skipif(not binary.exists(), reason="run `npm ci --prefix tests/node`")


def agent(mode: str, kind: str, command: list[str], cwd: Path) -> dict[str, Any]:
    done = subprocess.run(
        [PY, str(AGENT), "--mode", mode, kind, "stdio", *command],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
        cwd=cwd,
    )
    return dict(json.loads(done.stdout.splitlines()[-1]))


def _plain_recording(tape: Path) -> list[str]:
    """Record server-everything with the Python SDK 2 client listing only its tools (how
    the SDKs and every agent framework connect) and calling echo; the tools it was
    offered."""
    recorded = run(lambda: tools_of(stdio_params(record_command(tape, everything_command()))))
    lines = [json.loads(line) for line in tape.read_text("utf-8").splitlines()[1:]]
    assert not any("variant" in (e.get("meta") or {}) for e in lines)
    assert any("probe" in (e.get("meta") or {}) for e in lines)
    return recorded


@needs("claude")
def test_claude_code_is_offered_its_live_tools_from_a_plain_recording(tmp_path: Path) -> None:
    tape = tmp_path / "everything.jsonl"
    recorded = _plain_recording(tape)
    live = agent("claude-code", "everything", everything_command(), tmp_path)
    assert len(live["tools"]) > len(recorded)  # roots, elicitation: more tools
    log = tmp_path / "replay.log"
    replayed = agent("claude-code", "everything", replay_command(tape, "--log", str(log)), tmp_path)
    assert replayed["tools"] == live["tools"]  # from the probe of its capabilities
    assert replayed["echo"] == live["echo"]
    assert "miss" not in log.read_text("utf-8")


@needs("gemini")
def test_gemini_cli_is_offered_the_live_tools_and_calls_one(tmp_path: Path) -> None:
    """Gemini CLI lists prompts and resources on connect: before the probes, a miss there
    made it drop the server (zero tools)."""
    tape = tmp_path / "everything.jsonl"
    _plain_recording(tape)
    live = agent("gemini-cli", "everything", everything_command(), tmp_path)
    replayed = agent("gemini-cli", "everything", replay_command(tape), tmp_path)
    assert replayed.get("error") is None, replayed
    assert replayed["tools"] == live["tools"]
    assert replayed["echo"] == live["echo"]
