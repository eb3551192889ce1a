"""verify: a recording against the live server-everything, and against a server that drifted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import PY, ROOT, LineClient, everything_command, record_command

pytestmark = pytest.mark.e2e

# A tiny server whose answers change with DRIFT: the text of "greet", the error of "fail",
# and whether "gone" exists at all.
SERVER = """
import json, os, sys
drift = os.environ.get("DRIFT") == "1"
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    method, params = m["method"], m.get("params") or {}
    reply = {"jsonrpc": "2.0", "id": m["id"]}
    if method == "initialize":
        reply["result"] = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "drift", "version": "1"}}
    elif method == "tools/call" and params["name"] == "greet":
        text = "Hello, " + params["arguments"]["who"] + ("!" if drift else ".")
        reply["result"] = {"content": [{"type": "text", "text": text}],
                           "_meta": {"at": os.getpid()}}
    elif method == "tools/call" and params["name"] == "fail" and not drift:
        reply["error"] = {"code": -32000, "message": "boom"}
    elif method == "tools/call" and params["name"] == "fail":
        reply["result"] = {"content": []}
    elif method == "ping" and not drift:
        reply["result"] = {}
    else:
        reply["error"] = {"code": -32601, "message": "Method not found"}
    print(json.dumps(reply), flush=True)
"""


def verify(
    tape: Path, server: list[str], *extra: str, drift: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DRIFT": "1" if drift else "0"}
    return subprocess.run(
        [PY, "-m", "cassette", "verify", str(tape), *extra, "--", *server],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


@pytest.fixture
def drift_tape(tmp_path: Path) -> tuple[Path, list[str]]:
    script = tmp_path / "drift_server.py"
    script.write_text(SERVER)
    server = [sys.executable, str(script)]
    tape = tmp_path / "drift.jsonl"
    client = LineClient(record_command(tape, server), env={**os.environ, "DRIFT": "0"})
    client.initialize()
    client.request("tools/call", {"name": "greet", "arguments": {"who": "Ada"}})
    client.request("tools/call", {"name": "fail", "arguments": {}})
    client.request("ping")
    code, _ = client.finish()
    assert code == 0
    return tape, server


def test_unchanged_server_matches(drift_tape: tuple[Path, list[str]]) -> None:
    tape, server = drift_tape
    result = verify(tape, server)
    assert result.returncode == 0, result.stderr
    assert "verify re-runs the recorded calls for real" in result.stderr
    assert result.stdout.splitlines()[-1] == f"{tape}: 3 MATCH"


def test_drifted_server_is_classified(drift_tape: tuple[Path, list[str]]) -> None:
    tape, server = drift_tape
    result = verify(tape, server, drift=True)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("CHANGED             tools/call greet")
    assert lines[1] == '    /result/content/0/text: "Hello, Ada." -> "Hello, Ada!"'
    assert lines[2].startswith("ERROR-SHAPE-CHANGED tools/call fail")
    assert lines[3] == "    recorded error, live result"
    assert lines[4].startswith("MISSING             ping")
    assert lines[-1] == f"{tape}: 1 CHANGED, 1 ERROR-SHAPE-CHANGED, 1 MISSING"
    ignored = verify(tape, server, "--ignore", "/result/content", drift=True)
    assert ignored.stdout.splitlines()[0].startswith("MATCH               tools/call greet")


def test_the_committed_example_still_matches_server_everything() -> None:
    result = verify(ROOT / "examples" / "everything.jsonl", everything_command())
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1].endswith(": 4 MATCH")


def test_usage_and_server_errors_exit_2(drift_tape: tuple[Path, list[str]], tmp_path: Path) -> None:
    tape, _ = drift_tape
    no_command = subprocess.run(
        [PY, "-m", "cassette", "verify", str(tape)], capture_output=True, text=True, check=False
    )
    assert no_command.returncode == 2
    dead = verify(tape, [sys.executable, "-c", "pass"])
    assert dead.returncode == 2
    assert dead.stderr.splitlines()[-1].startswith("cassette: error:")
    assert "Traceback" not in dead.stderr
