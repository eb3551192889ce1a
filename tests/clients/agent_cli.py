"""Matrix driver: an AI agent as its users run it, Claude Code or Gemini CLI (pinned in
tests/node/package.json), against a local fake of its model API (fake_model_api.py).

    agent_cli.py --mode claude-code|gemini-cli KIND stdio|http|sse TARGET...

Each agent gets a home folder of its own (no settings, credentials or history of the
developer's), the server configured as its users configure one (``claude mcp add-json
--scope user``; ``mcpServers`` in ``~/.gemini/settings.json``), a fake API key, and its
model API at the fake's URL (``ANTHROPIC_BASE_URL``, ``GOOGLE_GEMINI_BASE_URL``); telemetry,
update checks and other traffic off. Then, each its own MCP session (over stdio each
starts the server again):

1. Claude Code only: ``claude mcp list``, its health check (``connected``: its status line
   says so). Gemini CLI's ``gemini mcp list`` checks the same way its turn connects, and
   costs a second start of a 100 MB bundle: its turn alone shows whether it connected;
2. ``-p PROMPT``, one headless turn: the fake model asks for the session's echo tool
   (session.json) and ends the turn with its result.

Output as common.py: ``connected``, ``tools`` (the server's tools the model was offered,
without the agent's prefix), ``echo`` (the tool's result as the agent handed it to the
model). An agent that cannot reach the server (no status ``Connected``, or no tool of the
server offered to the model) prints ``{"error": ..., "stage": "connect"}`` and exits 1.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Target, emit, parse_args

HERE = Path(__file__).resolve().parent
BIN = HERE.parent / "node" / "node_modules" / ".bin"
#: seconds one agent run may take (its start, the server's, two model turns)
AGENT_TIMEOUT = 120
#: the name the server is configured under (the agents prefix its tools with it)
NAME = "cassette"
#: how each agent prefixes an MCP tool's name for the model
PREFIXES = {"claude-code": f"mcp__{NAME}__", "gemini-cli": f"mcp_{NAME}_"}
QUIET = {
    # Claude Code: no update check, telemetry, error reports or other traffic; MCP tools
    # offered to the model directly, not behind its tool search
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "ENABLE_TOOL_SEARCH": "false",
    # Gemini CLI: the working folder trusted (headless runs refuse an untrusted one)
    "GEMINI_CLI_TRUST_WORKSPACE": "true",
    "NO_COLOR": "1",
}
#: the settings a Gemini CLI user running it headless on an API key has
GEMINI_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


class FakeModel:
    """fake_model_api.py in the background, scripted to call the session's echo tool."""

    def __init__(self, target: Target, out: Path) -> None:
        echo = target.spec["echo"]
        self.out = out
        argv = [sys.executable, str(HERE / "fake_model_api.py"), "--tool", echo["name"]]
        argv += ["--arguments", json.dumps(echo["arguments"]), "--out", str(out)]
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()  # it prints its URL once it listens
        found = re.search(r"http://\S+", line)
        if found is None:
            self.proc.kill()
            raise RuntimeError(f"the fake model API did not start: {line!r}")
        self.url = found.group(0)

    def seen(self) -> dict[str, Any]:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        return dict(json.loads(self.out.read_text("utf-8")))


def server_entry(agent: str, target: Target) -> dict[str, Any]:
    """The server, as the agent's configuration names it."""
    if target.transport == "stdio":
        entry: dict[str, Any] = {"command": target.where[0], "args": target.where[1:]}
        return entry if agent == "claude-code" else {**entry, "trust": True}
    if agent == "claude-code":
        return {"type": target.transport, "url": target.url}
    key = "httpUrl" if target.transport == "http" else "url"
    return {key: target.url, "trust": True}


def agent_env(agent: str, home: Path, model: FakeModel) -> dict[str, str]:
    keep = ("PATH", "LANG", "TMPDIR", "SYSTEMROOT")
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(QUIET, HOME=str(home), USERPROFILE=str(home))
    if agent == "claude-code":
        env.update(ANTHROPIC_BASE_URL=model.url, ANTHROPIC_API_KEY="sk-ant-fake-matrix-key")
    else:
        env.update(GOOGLE_GEMINI_BASE_URL=model.url, GEMINI_API_KEY="fake-matrix-gemini-key")
    return env


def configure(agent: str, target: Target, home: Path, env: dict[str, str]) -> None:
    entry = server_entry(agent, target)
    if agent == "claude-code":
        argv = [str(BIN / "claude"), "mcp", "add-json", "--scope", "user", NAME, json.dumps(entry)]
        run(argv, env, home)
        return
    settings = home / ".gemini" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({**GEMINI_SETTINGS, "mcpServers": {NAME: entry}}), "utf-8")


def run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=AGENT_TIMEOUT,
        check=False,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        raise RuntimeError(f"{Path(argv[0]).name} {argv[1]} exited {proc.returncode}: {tail[0]}")
    return proc.stdout + proc.stderr  # Gemini CLI lists its servers on stderr


def health(agent: str, env: dict[str, str], cwd: Path) -> str:
    """The agent's status line for the server (``mcp list``)."""
    out = run([str(BIN / ("claude" if agent == "claude-code" else "gemini")), "mcp", "list"],
              env, cwd)  # fmt: skip
    for line in out.splitlines():
        if line.lstrip("✓✔✗○✘ ").startswith(NAME + ":"):
            return line.rsplit(" - ", 1)[-1].strip()
    return "not listed"


def one_turn(agent: str, target: Target, env: dict[str, str], cwd: Path) -> None:
    prompt = f"Call the {target.spec['echo']['name']} tool."
    if agent == "claude-code":
        allowed = PREFIXES[agent] + target.spec["echo"]["name"]
        argv = [str(BIN / "claude"), "-p", prompt, "--allowedTools", allowed]
    else:
        argv = [str(BIN / "gemini"), "-p", prompt, "--yolo"]
    run([*argv, "--output-format", "json"], env, cwd)


def session(agent: str, target: Target) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agent-") as folder:
        home = Path(folder)
        model = FakeModel(target, home / "seen.json")
        try:
            env = agent_env(agent, home, model)
            configure(agent, target, home, env)
            status = health(agent, env, home) if agent == "claude-code" else "Connected"
            if "connected" in status.lower():
                one_turn(agent, target, env, home)
        finally:
            seen = model.seen()
    prefix = PREFIXES[agent]
    offered = seen.get("offered") or []
    tools = sorted(n[len(prefix) :] for n in offered if n.startswith(prefix))
    healthy = "connected" in status.lower()
    if not healthy or not tools:
        why = "the model was offered none of its tools" if healthy else f"mcp list: {status}"
        return {"error": why, "stage": "connect", "connected": False}
    results = seen.get("results") or []
    return {"connected": True, "tools": tools, "echo": results[0] if results else None}


def main() -> int:
    target = parse_args()
    if target.mode not in PREFIXES:
        raise SystemExit(f"--mode must be one of {sorted(PREFIXES)}")
    try:
        out = session(target.mode, target)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        out = {"error": str(exc).splitlines()[0], "stage": "connect"}
    emit(out)
    return 1 if out.get("stage") == "connect" else 0


if __name__ == "__main__":
    sys.exit(main())
