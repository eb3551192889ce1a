"""A legacy client asking for an older revision than the recorded one is granted it, as
the live server grants it (Gemini CLI's SDK asks for 2025-06-18; a cassette recorded by the
Python SDK holds 2025-11-25, and a client given a revision it did not ask for may drop the
server).

Recorded with the SDK 2 client in legacy mode (2025-11-25); replayed to the SDK 1.x client
made to ask for 2025-06-18, which must observe what it observes live.
"""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_cross_era import session
from tests.e2e.test_record_era import _add
from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    ROOT,
    Background,
    probe_log,
    record_command,
    recording_over_http,
    replay_command,
    run,
    scaled,
    stdio_params,
)

pytestmark = pytest.mark.e2e

DUAL_ERA = ROOT / "tests" / "servers" / "dual_era_server.py"
MCP1_PY = ROOT / "tests" / "clients" / ".venv-mcp1" / "bin" / "python"

#: An SDK 1.x client that asks for 2025-06-18 (its LATEST_PROTOCOL_VERSION is read at
#: initialize time), prints the version it got and a tool call's text.
OLDER_CLIENT = """
import json, sys, anyio
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters, stdio_client
types.LATEST_PROTOCOL_VERSION = "2025-06-18"

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:], env=json.loads(
        sys.stdin.read() or "null"))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as client:
            init = await client.initialize()
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            add = await client.call_tool("add", {"a": 40, "b": 2})
            print(json.dumps({"protocol": init.protocolVersion, "tools": tools,
                              "add": [c.text for c in add.content]}))

anyio.run(main)
"""


def older_client(command: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    done = subprocess.run(
        [str(MCP1_PY), "-c", OLDER_CLIENT, *command],
        input=json.dumps(env),
        capture_output=True,
        text=True,
        timeout=scaled(90),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


@pytest.mark.skipif(not MCP1_PY.exists(), reason="the SDK 1.x client is not installed")
def test_an_older_legacy_client_gets_its_own_revision_on_replay(tmp_path: Path) -> None:
    tape = tmp_path / "legacy.jsonl"
    server = [PY, str(DUAL_ERA)]
    recorded = run(lambda: session(stdio_params(record_command(tape, server)), "legacy"))
    assert recorded["protocol"] == "2025-11-25"
    live = older_client(server)
    assert live["protocol"] == "2025-06-18"
    replay = replay_command(tape)
    assert older_client(replay, OFFLINE_ENV) == live


def test_a_plain_http_recording_probes_and_serves_legacy_clients(tmp_path: Path) -> None:
    """Over streamable HTTP each probe is an MCP session of its own, ended with its DELETE;
    the legacy one's ``initialize`` lets the replay's HTTP front serve a legacy client of
    the 2026-07-28 cassette, as the server did."""
    tape = tmp_path / "modern-http.jsonl"
    with recording_over_http(MODERN_SERVER, tape) as (upstream, proxy_url, proxy):
        recorded = run(lambda: _add(proxy_url))
        assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        live = run(lambda: _add(upstream, "legacy"))
    assert recorded[0] == "2026-07-28"
    lines = [json.loads(line) for line in tape.read_text().splitlines()]
    assert lines[0]["era"] == "modern"
    assert any(_legacy_handshake_probe(e) for e in lines)
    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    with front:
        url = front.wait_for(r"serving on (http://\S+)").group(1)
        assert run(lambda: _add(url, "legacy")) == live
        assert run(lambda: _add(url)) == recorded
        assert front.stop() == 0, front.output()


MCP23 = ROOT / "tests" / "servers" / "mcp23_server.py"


def _legacy_handshake_probe(event: dict[str, Any]) -> bool:
    """A line of the recorder's legacy probe: its ``initialize``."""
    message = event.get("message") or {}
    probe = (event.get("meta") or {}).get("probe")
    return probe == "legacy:bare" and message.get("method") == "initialize"


def test_a_plain_stdio_recording_of_a_slow_server_keeps_its_probe(tmp_path: Path) -> None:
    """The probes run during the session, beside it: a Python server's slow further starts
    answer them while the session is open (the SDK 2 stdio client ends the recorder a few
    seconds after closing its side, so the session waits until the recorder says the probes
    are done, a condition, rather than betting on the machine's speed). The server's
    discovery lists only 2026-07-28 (mcp 2.3.0's default): the probe is what lets the
    cassette serve a legacy client, as the live server does."""
    tape = tmp_path / "mcp23.jsonl"
    server = [PY, str(MCP23)]
    recording = stdio_params(record_command(tape, server, "--log", str(probe_log(tape))))
    recorded = run(lambda: session(recording, "auto", probed=tape))
    assert recorded["protocol"] == "2026-07-28"
    lines = [json.loads(line) for line in tape.read_text().splitlines()]
    assert lines[0]["era"] == "modern"
    assert any(_legacy_handshake_probe(e) for e in lines)
    live = run(lambda: session(stdio_params(server), "legacy"))
    assert run(lambda: session(stdio_params(replay_command(tape), OFFLINE_ENV), "legacy")) == live
