"""verify: a recording against the live server-everything, and against a server that drifted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.support import (
    MODERN_SERVER,
    PY,
    ROOT,
    LineClient,
    closed_port,
    everything_command,
    everything_server,
    python_server,
    record_command,
    run,
    scaled,
)

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
        timeout=scaled(120),
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
    # no server given: the one the header recorded (verify used to refuse, exit 2)
    no_command = subprocess.run(
        [PY, "-m", "cassette", "verify", str(tape)], capture_output=True, text=True, check=False
    )
    assert no_command.returncode == 0, no_command.stderr
    assert no_command.stdout.splitlines()[-1].endswith(": 3 MATCH")
    no_tape = subprocess.run(
        [PY, "-m", "cassette", "verify"], capture_output=True, text=True, check=False
    )
    assert no_tape.returncode == 2
    dead = verify(tape, [sys.executable, "-c", "pass"])
    assert dead.returncode == 2
    # the same line whether our write or the server's exit came first
    assert dead.stderr.splitlines()[-1] == "cassette: error: the server closed the connection"
    assert "Traceback" not in dead.stderr


WARNING = "cassette: warning: verify re-runs the recorded calls for real\n"


def cassette_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *args],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        env={**os.environ, **(env or {})},
    )


def test_recordings_verify_against_server_everything_over_http(tmp_path: Path) -> None:
    import signal

    from tests.e2e.test_http_sdk import recording_proxy

    tape = tmp_path / "check-http.jsonl"
    s, port = everything_server("streamableHttp")
    with s:
        url = f"http://127.0.0.1:{port}/mcp"
        from_stdio = cassette_cli(
            "verify", str(ROOT / "examples" / "everything.jsonl"), "--upstream", url
        )
        proxy, proxy_url = recording_proxy(tape, url)
        with proxy:  # an HTTP recording whose client probed server/discover first
            assert cassette_cli("check", "--url", proxy_url).returncode == 0
            assert proxy.stop(signal.SIGTERM) == 0, proxy.output()
        from_http = cassette_cli("verify", str(tape), "--upstream", url)
    assert from_stdio.returncode == 0, from_stdio.stdout + from_stdio.stderr
    assert from_stdio.stdout.splitlines()[-1].endswith(": 4 MATCH")
    assert from_stdio.stderr == WARNING  # not a terminal: no progress bar, nothing else
    # the probe is re-sent before initialize, so the server refuses it as it did then
    assert from_http.returncode == 0, from_http.stdout + from_http.stderr
    assert from_http.stdout.splitlines()[0].startswith("MATCH               server/discover")
    assert from_http.stdout.splitlines()[-1] == f"{tape}: 5 MATCH"


SHOUT_DRIFT = [
    '    /result/content/0/text: "QUIET" -> "QUIET!"',
    '    /result/structuredContent/result: "QUIET" -> "QUIET!"',
]


def test_a_modern_recording_is_verified_without_a_handshake(tmp_path: Path) -> None:
    from tests.e2e.test_stdio_sdk import modern_session

    tape = tmp_path / "modern.jsonl"
    server = [PY, str(MODERN_SERVER)]
    run(lambda: modern_session(record_command(tape, server)))
    same = cassette_cli("verify", str(tape), "--", *server)
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.splitlines()[0].startswith("MATCH               server/discover")
    assert same.stdout.splitlines()[-1] == f"{tape}: 9 MATCH"
    changed = cassette_cli("verify", str(tape), "--", *server, env={"CASSETTE_TEST_DRIFT": "1"})
    assert changed.returncode == 1, changed.stdout + changed.stderr
    lines = changed.stdout.splitlines()
    at = lines.index(next(x for x in lines if x.startswith("CHANGED")))
    assert lines[at].startswith('CHANGED             tools/call shout {"text":"quiet"}')
    assert lines[at + 1 : at + 3] == SHOUT_DRIFT
    assert lines[-1] == f"{tape}: 1 CHANGED, 8 MATCH"


def test_a_modern_http_recording_is_verified_with_upstream(tmp_path: Path) -> None:
    import signal

    from tests.e2e.test_http_sdk import modern_session, recording_proxy

    tape = tmp_path / "modern-http.jsonl"
    server, port = python_server(MODERN_SERVER)
    drifted, drifted_port = python_server(MODERN_SERVER, env={"CASSETTE_TEST_DRIFT": "1"})
    with server, drifted:
        upstream = f"http://127.0.0.1:{port}/mcp"
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            run(lambda: modern_session(url))
            assert proxy.stop(signal.SIGTERM) == 0, proxy.output()
        same = cassette_cli("verify", str(tape), "--upstream", upstream)
        changed = cassette_cli(
            "verify", str(tape), "--upstream", f"http://127.0.0.1:{drifted_port}/mcp"
        )
        checked = cassette_cli("check", "--url", upstream)
    # check's auto era discovers the modern server over HTTP too (the same headers)
    assert checked.stdout.splitlines()[1] == "protocol: 2026-07-28 (modern era)", checked.stderr
    # without MCP-Protocol-Version, Mcp-Method and Mcp-Name the server answers 400 -32020
    assert same.returncode == 0, same.stdout + same.stderr
    assert same.stdout.splitlines()[-1] == f"{tape}: 6 MATCH"
    assert changed.returncode == 1, changed.stdout + changed.stderr
    lines = changed.stdout.splitlines()
    assert lines[3].startswith('CHANGED             tools/call shout {"text":"é modern"}')
    assert lines[4] == '    /result/content/0/text: "É MODERN" -> "É MODERN!"'
    assert lines[-1] == f"{tape}: 1 CHANGED, 5 MATCH"


def test_exit_codes_of_the_server_options(
    drift_tape: tuple[Path, list[str]], tmp_path: Path
) -> None:
    tape, server = drift_tape
    with closed_port() as port:
        closed = cassette_cli("verify", str(tape), "--upstream", f"http://127.0.0.1:{port}/mcp")
    assert closed.returncode == 2, closed.stdout + closed.stderr
    assert closed.stderr.splitlines()[-1].startswith("cassette: error: ")
    assert "Traceback" not in closed.stderr
    assert closed.stdout == ""
    usage = [
        ("--upstream", "http://127.0.0.1:1/mcp", "--", *server),  # both
        ("--upstream", "ftp://example/mcp"),  # not HTTP
        ("--timeout", "soon", "--", *server),
        ("--frobnicate", "--", *server),
    ]
    for extra in usage:
        result = cassette_cli("verify", str(tape), *extra)
        assert result.returncode == 2, (extra, result.stderr)
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert result.stderr.startswith("cassette: error: "), result.stderr
    refusing = tmp_path / "refusing.py"
    refusing.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    error = {'code': -32603, 'message': 'no'}\n"
        "    print(json.dumps({'jsonrpc': '2.0', 'id': m['id'], 'error': error}), flush=True)\n"
    )
    refused = cassette_cli("verify", str(tape), "--", sys.executable, str(refusing))
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.splitlines()[-1] == (
        "cassette: error: the live server refused initialize: "
        '{"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "no"}}'
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not a cassette\n")
    for unreadable in (bad, tmp_path / "absent.jsonl"):
        result = cassette_cli("verify", str(unreadable), "--", *server)
        assert result.returncode == 3, result.stderr
        assert result.stderr.startswith(f"cassette: error: {unreadable}"), result.stderr
        assert "Traceback" not in result.stderr
