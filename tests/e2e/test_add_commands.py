"""The ``claude mcp add`` and ``gemini mcp add`` lines a stdio replay's banner prints,
pasted as they are into the pinned Claude Code and Gemini CLI (tests/node), each with a
home folder and a project folder of its own and no network: the server each registers is
the one the configuration block names, and the agent's own health check (``mcp list``,
read as the cross-client matrix reads it: tests/clients/agent_cli.py) connects to the
replay it starts."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.clients import agent_cli
from tests.helpers.support import PY, ROOT, scaled

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(300),
    pytest.mark.skipif(sys.platform == "win32", reason="the lines are quoted for cmd there"),
]

#: options the lines must carry through each agent's own parser (Gemini CLI's takes any
#: option it does not know as the server's): every one a replay's configuration repeats,
#: with ``--faults`` (a plan for tool calls, which a health check makes none of)
OPTIONS = (
    *("--strategy", "loose", "--ignore-param", "/params/arguments/now", "--allow-repeats"),
    *("--pace", "recorded", "--pace-scale", "0.5", "--pace-cap", "1"),
    *("--answer-timeout", "5", "--max-message-bytes", "1048576", "--max-depth", "64"),
)
AGENTS = {"claude": "claude-code", "gemini": "gemini-cli"}


def printed(tape: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The configuration block a replay of ``tape`` prints, and its add lines as argv by
    agent (the replay ends at once: its client, stdin, is closed)."""
    plan = tape.with_name("faults.toml")
    plan.write_text('[[fault]]\nkind = "error"\nmethod = "tools/call"\ncode = -32050\n')
    done = subprocess.run(
        [PY, "-m", "cassette", "replay", str(tape), *OPTIONS, "--faults", str(plan)],
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr
    block = done.stderr.split("client configuration:\n", 1)[1]
    config, end = json.JSONDecoder().raw_decode(block)
    lines = block[end:].splitlines()
    assert lines[1] == "or add it with one command:"
    added = {argv[0]: argv for argv in map(shlex.split, lines[2:4])}
    assert set(added) == set(AGENTS)
    return config, added


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    """The README's cassette, in a folder whose name the lines must quote, named so the
    server is the matrix driver's (``agent_cli.NAME``)."""
    folder = tmp_path / "my tapes"
    folder.mkdir()
    path = folder / f"{agent_cli.NAME}.jsonl"
    path.write_bytes((ROOT / "examples" / "everything.jsonl").read_bytes())
    return path


@pytest.mark.parametrize("agent", sorted(AGENTS))
def test_the_printed_line_registers_the_replay_and_the_agent_connects(
    agent: str, tape: Path, tmp_path: Path
) -> None:
    if not (agent_cli.BIN / agent).exists():
        pytest.skip("run `npm ci --prefix tests/node`")
    config, added = printed(tape)
    server = config["mcpServers"][agent_cli.NAME]
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
    env.update(agent_cli.QUIET, HOME=str(home), USERPROFILE=str(home))
    agent_cli.run([str(agent_cli.BIN / agent), *added[agent][1:]], env, project)
    if agent == "claude":  # this project, for this user alone (the default scope)
        settings = json.loads((home / ".claude.json").read_text("utf-8"))
        registered = settings["projects"][str(project)]["mcpServers"][agent_cli.NAME]
    else:  # this project's settings (the default scope)
        settings = json.loads((project / ".gemini" / "settings.json").read_text("utf-8"))
        registered = settings["mcpServers"][agent_cli.NAME]
    assert [registered["command"], *registered["args"]] == [server["command"], *server["args"]]
    status = agent_cli.health(AGENTS[agent], env, project)  # "✔ Connected", "Disconnected"
    assert status.split()[-1] == "Connected", status
