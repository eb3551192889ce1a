"""Colour where a person reads, and nowhere else: ``show``, ``diff`` and ``verify`` on
stdout, a replay's misses on stderr, each run with that stream on a pseudo-terminal (a
real one, from ``pty``), then on the same terminal with ``NO_COLOR`` set, and into a
pipe. ``verify`` drives a live server (``tests/servers/waterfall_server.py``) and the
replay a real stdio session; nothing is mocked. POSIX only: Windows has no ``pty``.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import PY, ROOT

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals are POSIX"),
]

WATERFALL_SERVER = ROOT / "tests" / "servers" / "waterfall_server.py"
ESC = b"\x1b["
RED, GREEN, RESET = b"\x1b[31m", b"\x1b[32m", b"\x1b[0m"


def _environment(**extra: str) -> dict[str, str]:
    """This environment without any colour setting of the machine's, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env.pop("CASSETTE_LOG", None)
    return {**env, "TERM": "xterm", "WATERFALL_SLOW": "0", **extra}


def on_terminal(
    args: list[str], stream: str, env: dict[str, str], stdin: bytes = b""
) -> tuple[int, bytes, bytes]:
    """Run ``cassette ARGS`` with ``stream`` (stdout or stderr) on a pseudo-terminal and
    the other on a pipe: the exit code, what the terminal showed, what the pipe got. Both
    are read as they come (no side can fill and block), within a deadline."""
    import pty
    import termios

    master, slave = pty.openpty()
    mode = termios.tcgetattr(slave)
    mode[1] &= ~termios.OPOST  # bytes as written: no newline translation
    termios.tcsetattr(slave, termios.TCSANOW, mode)
    terminal_out = stream == "stdout"
    process = subprocess.Popen(
        [PY, "-m", "cassette", *args],
        stdin=subprocess.PIPE,
        stdout=slave if terminal_out else subprocess.PIPE,
        stderr=subprocess.PIPE if terminal_out else slave,
        env=env,
    )
    os.close(slave)
    assert process.stdin is not None
    process.stdin.write(stdin)
    process.stdin.close()
    pipe = process.stderr if terminal_out else process.stdout
    assert pipe is not None
    other = pipe.fileno()
    got: dict[int, bytearray] = {master: bytearray(), other: bytearray()}
    open_fds = set(got)
    deadline = time.monotonic() + 90
    try:
        while open_fds:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                pytest.fail(f"cassette {' '.join(args)} did not finish within 90 s")
            ready, _, _ = select.select(list(open_fds), [], [], remaining)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the terminal's last writer is gone
                    chunk = b""
                if chunk:
                    got[fd] += chunk
                else:
                    open_fds.discard(fd)
        code = process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        pipe.close()
        os.close(master)
    return code, bytes(got[master]), bytes(got[other])


def piped(args: list[str], env: dict[str, str], stdin: bytes = b"") -> tuple[int, bytes, bytes]:
    done = subprocess.run(
        [PY, "-m", "cassette", *args],
        input=stdin,
        capture_output=True,
        env=env,
        timeout=90,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _line(message: dict[str, Any], t: float, direction: str) -> str:
    event = {"kind": "message", "t": t, "dir": direction, "message": {"jsonrpc": "2.0", **message}}
    return json.dumps(event)


INITIALIZE = {
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "colour-test", "version": "1"},
    },
}
SERVED = {
    "id": 1,
    "result": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "waterfall-server", "version": "1.0"},
    },
}


def _call(msg_id: int, name: str, **arguments: object) -> dict[str, Any]:
    return {"id": msg_id, "method": "tools/call", "params": {"name": name, "arguments": arguments}}


def _text(msg_id: int, text: str, error: bool = False) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if error:
        result["isError"] = True
    return {"id": msg_id, "result": result}


def write_tape(path: Path, report: str = "report: 3 regions, 12 stations") -> Path:
    """A recording of the waterfall server as it answers (``WATERFALL_REGIONS=3``), with
    a slow report and a failed upload."""
    header = {
        "kind": "header",
        "format": 1,
        "transport": "stdio",
        "recorder": {"name": "cassette-mcp", "version": "0"},
        "started_at": "2026-12-01T00:00:00Z",
        "era": "legacy",
        "protocol_version": "2025-11-25",
        "target": {"command": [PY, str(WATERFALL_SERVER)]},
    }
    lines = [
        json.dumps(header),
        _line(INITIALIZE, 0.01, "c2s"),
        _line(SERVED, 0.02, "s2c"),
        _line({"method": "notifications/initialized"}, 0.03, "c2s"),
        _line(_call(2, "lookup", key="oslo"), 0.04, "c2s"),
        _line(_text(2, "found oslo"), 0.05, "s2c"),
        _line(_call(3, "slow_report", period="week"), 0.06, "c2s"),
        _line(_text(3, report), 1.26, "s2c"),
        _line(_call(4, "flaky_upload", file="report.csv"), 1.27, "c2s"),
        _line(_text(4, "upload failed: storage quota exceeded", error=True), 1.28, "s2c"),
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    return write_tape(tmp_path / "waterfall.jsonl")


def test_show_paints_failures_on_a_terminal_only(tape: Path) -> None:
    code, shown, _ = on_terminal(["show", str(tape)], "stdout", _environment())
    assert code == 0
    assert RED + b"FAILED (tool error)" + RESET in shown
    assert RED + b"1 failed" + RESET in shown
    plain = shown.replace(RED, b"").replace(RESET, b"")
    assert ESC not in plain  # only the red marks, and nothing else changed
    code, bare, _ = on_terminal(["show", str(tape)], "stdout", _environment(NO_COLOR="1"))
    assert (code, bare) == (0, plain)
    code, out, _ = piped(["show", str(tape)], _environment())
    assert (code, out) == (0, plain)
    # asked for: into a pipe with FORCE_COLOR or --color always; never with --color never
    assert piped(["show", str(tape)], _environment(FORCE_COLOR="1"))[1] == shown
    assert piped(["show", str(tape), "--color", "always"], _environment(NO_COLOR="1"))[1] == shown
    never = on_terminal(["show", str(tape), "--color", "never"], "stdout", _environment())
    assert never[1] == plain
    # JSON is never painted
    as_json = on_terminal(["show", str(tape), "--format", "json"], "stdout", _environment())
    assert ESC not in as_json[1]


def test_diff_paints_removed_and_added_requests(tape: Path, tmp_path: Path) -> None:
    other = write_tape(tmp_path / "other.jsonl", "report: 4 regions, 12 stations")
    lines = other.read_text().splitlines()
    lines[4] = lines[4].replace('"oslo"', '"bergen"')  # another lookup: removed and added
    other.write_text("\n".join(lines) + "\n")
    args = ["diff", str(tape), str(other)]
    code, shown, _ = on_terminal(args, "stdout", _environment())
    assert code == 1
    assert RED + b'- tools/call lookup {"key":"oslo"}' in shown
    assert GREEN + b'+ tools/call lookup {"key":"bergen"}' in shown
    assert b"\x1b[33m~ tools/call slow_report" in shown
    code, bare, _ = on_terminal(args, "stdout", _environment(NO_COLOR="1"))
    assert code == 1
    assert ESC not in bare
    assert b'- tools/call lookup {"key":"oslo"}' in bare
    assert ESC not in piped(args, _environment())[1]


def test_verify_paints_each_status(tape: Path) -> None:
    drifted = _environment(WATERFALL_REGIONS="4")
    args = ["verify", str(tape), "--", PY, str(WATERFALL_SERVER)]
    code, shown, _ = on_terminal(args, "stdout", drifted)
    assert code == 1, shown
    assert RED + b"CHANGED" + RESET + b" " in shown
    assert GREEN + b"MATCH" + RESET + b" " in shown
    assert RED + b"1 CHANGED" + RESET in shown
    code, bare, _ = on_terminal(args, "stdout", {**drifted, "NO_COLOR": "1"})
    assert code == 1
    assert ESC not in bare
    assert b"CHANGED" in bare
    code, out, _ = piped(args, drifted)
    assert code == 1
    assert ESC not in out


def test_a_replays_misses_are_red_on_a_terminal(tape: Path) -> None:
    client = "\n".join(
        json.dumps({"jsonrpc": "2.0", **m})
        for m in (
            INITIALIZE,
            {"method": "notifications/initialized"},
            _call(2, "lookup", key="nowhere"),
        )
    ).encode()
    args = ["replay", str(tape), "-q"]
    code, said, answers = on_terminal(args, "stderr", _environment(), client)
    assert code == 1  # the miss
    assert b'"id":2' in answers
    assert ESC not in answers  # the protocol is never painted
    assert b"cassette: " + RED + b"miss:" + RESET + b' tools/call "lookup" not recorded' in said
    assert b"cassette: " + RED + b"1 request(s) had no recording:" + RESET in said
    code, bare, _ = on_terminal(args, "stderr", _environment(NO_COLOR="1"), client)
    assert code == 1
    assert ESC not in bare
    assert b'cassette: miss: tools/call "lookup" not recorded' in bare
    code, _, err = piped(args, _environment(), client)
    assert code == 1
    assert ESC not in err
    assert b"cassette: miss: " in err
