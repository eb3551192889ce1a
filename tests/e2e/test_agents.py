"""Claude Code, run for real against replays (tests/clients/agent_cli.py: a home of its
own and a local fake of its model API). Gemini CLI and Claude Code calling a replayed tool
are cells of the cross-client matrix (tests/e2e/test_client_matrix.py).

server-everything lists tools by what the client declares: a Python SDK client that
declares nothing is offered fewer than Claude Code (roots, elicitation). A replay of that
recording to Claude Code says in its log which capabilities differ; after ``cassette
variant TAPE --as claude-code`` Claude Code is offered what it is live.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support import (
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
    """The tools a Python SDK 2 client declaring nothing is offered (its default)."""
    from mcp import Client

    async with Client(target) as client:
        return sorted(t.name for t in (await client.list_tools()).tools)


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


@needs("claude")
def test_claude_code_is_offered_its_own_tools_after_its_variant(tmp_path: Path) -> None:
    tape = tmp_path / "everything.jsonl"
    recorded = run(lambda: tools_of(stdio_params(record_command(tape, everything_command()))))
    live = agent("claude-code", "everything", everything_command(), tmp_path)
    assert len(live["tools"]) > len(recorded)  # roots, elicitation: more tools
    log = tmp_path / "replay.log"
    plain = agent("claude-code", "everything", replay_command(tape, "--log", str(log)), tmp_path)
    assert plain["tools"] == recorded  # what the recorded client was offered
    said = log.read_text("utf-8")
    assert "the client declares capabilities elicitation, roots" in said
    variant = subprocess.run(
        [PY, "-m", "cassette", "variant", str(tape), "--as", "claude-code"],
        capture_output=True,
        text=True,
        timeout=scaled(300),
        check=False,
    )
    assert variant.returncode == 0, variant.stderr
    replayed = agent("claude-code", "everything", replay_command(tape), tmp_path)
    assert replayed["tools"] == live["tools"]
