"""The ``claude mcp add`` and ``gemini mcp add`` lines a stdio replay's banner prints,
pasted as they are into the pinned Claude Code and Gemini CLI (tests/node), each with a
home folder and a project folder of its own and no network: the server each registers is
the one the configuration block names, and the agent's own health check (``mcp list``)
connects to the replay it starts."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support import NODE_DIR, PY, ROOT, scaled

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.timeout(300),
    pytest.mark.skipif(sys.platform == "win32", reason="the lines are quoted for cmd there"),
]

BIN = NODE_DIR / "node_modules" / ".bin"
#: a name to quote, and options the lines must carry through each agent's own parser
TAPE = "every thing.jsonl"
OPTIONS = ("--strategy", "loose", "--ignore-param", "/params/arguments/now", "--allow-repeats")
#: each agent's update checks, telemetry and other traffic off (tests/clients/agent_cli.py)
QUIET = {
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "NO_COLOR": "1",
}


def needs(agent: str) -> Any:
    return pytest.mark.skipif(not (BIN / agent).exists(), reason="run `npm ci --prefix tests/node`")


def printed(tape: Path) -> tuple[dict[str, Any], dict[str, list[str]]]:
    """The configuration block a replay of ``tape`` prints, and its add lines as argv by
    agent (the replay ends at once: its client, stdin, is closed)."""
    done = subprocess.run(
        [PY, "-m", "cassette", "replay", str(tape), *OPTIONS],
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
    assert set(added) == {"claude", "gemini"}
    return config, added


def pasted(argv: list[str], tmp_path: Path) -> tuple[dict[str, str], Path]:
    """``argv`` run as a person would paste it, the agent being the pinned one, in a
    project folder with a home of its own; the environment and folder to run it in."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir(exist_ok=True)
    project.mkdir(exist_ok=True)
    keep = ("PATH", "LANG", "TMPDIR")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(QUIET, HOME=str(home), USERPROFILE=str(home))
    agent(argv, env, project)
    return env, project


def agent(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout + done.stderr  # Gemini CLI lists its servers on stderr


def status(listed: str, name: str) -> str:
    """The agent's health check's word for the server ``name`` (``mcp list``)."""
    for line in listed.splitlines():
        if line.lstrip("✓✔✗○✘ ").startswith(name + ":"):
            return line.rsplit(" - ", 1)[-1].strip()
    return f"not listed in {listed!r}"


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    path = tmp_path / TAPE
    path.write_bytes((ROOT / "examples" / "everything.jsonl").read_bytes())
    return path


@needs("claude")
def test_the_claude_line_registers_the_replay_and_claude_code_connects(
    tape: Path, tmp_path: Path
) -> None:
    config, added = printed(tape)
    ((name, server),) = config["mcpServers"].items()
    env, project = pasted(added["claude"], tmp_path)
    settings = json.loads((tmp_path / "home" / ".claude.json").read_text("utf-8"))
    registered = settings["projects"][str(project)]["mcpServers"][name]
    assert [registered["command"], *registered["args"]] == [server["command"], *server["args"]]
    assert status(agent(["claude", "mcp", "list"], env, project), name) == "✔ Connected"


@needs("gemini")
def test_the_gemini_line_registers_the_replay_and_gemini_cli_connects(
    tape: Path, tmp_path: Path
) -> None:
    config, added = printed(tape)
    ((name, server),) = config["mcpServers"].items()
    env, project = pasted(added["gemini"], tmp_path)
    settings = json.loads((project / ".gemini" / "settings.json").read_text("utf-8"))
    registered = settings["mcpServers"][name]
    assert [registered["command"], *registered["args"]] == [server["command"], *server["args"]]
    assert status(agent(["gemini", "mcp", "list"], env, project), name) == "Connected"
