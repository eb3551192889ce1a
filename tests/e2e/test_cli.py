"""The command line as a user meets it: exit codes, one-line errors, stdio discipline."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from cassette import Cassette, ExitEvent, RawEvent, StderrEvent
from tests.helpers.support import (
    PY,
    RAW_SERVER,
    ROOT,
    LineClient,
    record_command,
    replay_command,
    scaled,
    session_events,
)

pytestmark = pytest.mark.e2e
RAW = [PY, str(RAW_SERVER)]


def cli(
    *args: str, stdin: bytes = b"", timeout: float = 30, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [PY, "-m", "cassette", *args],
        input=stdin,
        capture_output=True,
        timeout=timeout,
        check=False,
        env=None if env is None else {**os.environ, **env},
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("cassette: error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def recorded(tmp_path: Path, name: str = "raw.jsonl") -> Path:
    tape = tmp_path / name
    client = LineClient(record_command(tape, RAW))
    client.initialize()
    client.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})
    code, _ = client.finish()
    assert code == 0
    return tape


def test_version_and_help() -> None:
    assert cli("--version").stdout.startswith("cassette-mcp ")
    for sub in ("record", "replay"):
        result = cli(sub, "--help")
        assert result.returncode == 0
        assert "usage:" in result.stdout


def test_record_keeps_everything_the_session_showed(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    cassette = Cassette.load(tape)
    assert cassette.header.era == "legacy"
    # The command line, with paths under the project relative to it: the same on every
    # machine (the interpreter of a venv in the checkout becomes .venv/bin/python).
    from cassette.runtime.record import portable_argv

    assert cassette.header.target["command"] == portable_argv(RAW, ROOT)
    assert not any(str(ROOT) in arg for arg in cassette.header.target["command"])
    kinds = [type(e) for e in cassette.events]
    assert StderrEvent in kinds
    assert RawEvent in kinds
    assert ExitEvent in kinds
    raw = next(e for e in cassette.events if isinstance(e, RawEvent))
    assert raw.text == "raw-server banner (not JSON-RPC)"
    ended = session_events(cassette)[-1]  # the recorder's probes come after the session
    assert isinstance(ended, ExitEvent)
    assert ended.code == 0
    stderr = [e.text for e in cassette.events if isinstance(e, StderrEvent)]
    assert stderr == ["raw-server: starting"]


def test_record_is_transparent_byte_for_byte(tmp_path: Path) -> None:
    direct = LineClient(RAW)
    through = LineClient(record_command(tmp_path / "t.jsonl", RAW))
    lines = []
    for client in (direct, through):
        seen = [client.readline()]  # the non-JSON banner line arrives first, verbatim
        client.send(
            b'{"jsonrpc":"2.0","id":1,"method":"tools/call",'
            b'"params":{"name":"echo","arguments":{"text":"\\u00e9 \xc3\xa9"}}}\r\n'
        )
        seen.append(client.readline())
        client.finish()
        lines.append(seen)
    assert lines[0] == lines[1]


def test_record_passes_stderr_through_and_names_the_server_exit_code(tmp_path: Path) -> None:
    """The server's own code is named on stderr, and record exits 5: passed on, a 3 or a 4
    would read as one of cassette's own errors."""
    tape = tmp_path / "crash.jsonl"
    client = LineClient(record_command(tape, RAW))
    client.initialize()
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 9,
            "method": "tools/call",
            "params": {"name": "crash", "arguments": {"code": 7}},
        }
    )
    assert client.readline() == b""  # the client sees end of file, as from the real server
    code, err = client.finish()
    assert code == 5
    assert "raw-server: crashing on request" in err
    assert err.endswith(
        f"cassette: the recorded server exited with code 7; the recording is in {tape}\n"
    )
    last = session_events(tape)[-1]
    assert isinstance(last, ExitEvent)
    assert last.code == 7


def test_record_refuses_to_overwrite_a_cassette(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    before = tape.read_bytes()
    # another client run: this process started the first recording, and a start from the
    # same live parent would be that client starting its server again (appended)
    another = {"CASSETTE_CLIENT_RUN": "another run"}
    result = cli("record", "-o", str(tape), "--", *RAW, env=another)
    assert result.returncode == 3
    assert "refusing to overwrite" in one_line_error(result)
    assert "appended only within the run that recorded it" in one_line_error(result)
    assert tape.read_bytes() == before


def test_record_usage_errors(tmp_path: Path) -> None:
    assert cli("record", "-o", str(tmp_path / "x.jsonl")).returncode == 2
    bad = cli("record", "-o", str(tmp_path / "x.jsonl"), "--strategy", "fuzzy", "--", *RAW)
    assert bad.returncode == 2
    assert "strict, default, loose" in one_line_error(bad)
    unknown = cli(
        "record", "-o", str(tmp_path / "x.jsonl"), "--transport", "carrier-pigeon", "--", *RAW
    )
    assert unknown.returncode == 2
    line = one_line_error(unknown)
    assert re.search(r"installed: .*stdio, streamable-http \(or http\)", line)
    assert "memory" not in line  # in-process only: nothing a person can name


def test_allow_origin_takes_origins_for_network_fronts_only(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    star = cli("replay", str(tape), "--front", "http", "--allow-origin", "*")
    assert star.returncode == 2
    assert "'*' is not an origin: give scheme://host[:port]" in one_line_error(star)
    path = cli("replay", str(tape), "--front", "sse", "--allow-origin", "https://a.example/app")
    assert path.returncode == 2
    assert "is not an origin" in one_line_error(path)
    allow = ("--allow-origin", "https://a.example")
    for command in (
        ("replay", str(tape), *allow),
        ("record", "-o", str(tmp_path / "x.jsonl"), *allow, "--", *RAW),
    ):
        stdio = cli(*command)
        assert stdio.returncode == 2
        assert "--allow-origin is for a network front or proxy" in one_line_error(stdio)


def test_record_of_a_missing_server_command_is_a_transport_error(tmp_path: Path) -> None:
    result = cli("record", "-o", str(tmp_path / "x.jsonl"), "--", "/nonexistent/server")
    assert result.returncode == 4
    assert "cannot start server" in one_line_error(result)


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (None, "no such cassette"),
        (b"", ":1: empty cassette"),
        (b'{"kind":"header","format":99,"transport":"stdio"}\n', "upgrade"),
        (
            b'{"kind":"header","format":1,"transport":"stdio","recorder":{"name":"x","version":"1"},'
            b'"started_at":"x"}\n{"kind":"message",BROKEN\n{"kind":"exit","t":1,"code":0}\n',
            ":2: not JSON",
        ),
    ],
    ids=["missing", "empty", "newer-format", "corrupt-middle-line"],
)
def test_replay_refuses_bad_cassettes_with_file_and_line(
    tmp_path: Path, content: bytes | None, expected: str
) -> None:
    tape = tmp_path / "bad.jsonl"
    if content is not None:
        tape.write_bytes(content)
    result = cli("replay", str(tape))
    assert result.returncode == 3
    line = one_line_error(result)
    assert str(tape) in line
    assert expected in line


def test_replay_stdout_is_protocol_only_and_banner_has_client_config(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25"},
    }
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}},
    }
    stdin = "".join(json.dumps(m) + "\n" for m in (init, call)).encode()
    result = cli("replay", str(tape), stdin=stdin)
    assert result.returncode == 0, result.stderr
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2]
    assert replies[1]["result"]["content"][0]["text"] == "hi"
    config, _ = json.JSONDecoder().raw_decode(result.stderr[result.stderr.index("{") :])
    server = next(iter(config["mcpServers"].values()))
    assert server["command"] == PY
    assert server["args"] == ["-m", "cassette", "replay", str(tape.resolve())]


def test_replay_exits_1_and_summarises_misses(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    call = {
        "jsonrpc": "2.0",
        "id": 5,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "other"}},
    }
    result = cli("replay", "-q", str(tape), stdin=(json.dumps(call) + "\n").encode())
    assert result.returncode == 1
    reply = json.loads(result.stdout)
    assert reply["id"] == 5
    assert "not recorded" in reply["error"]["message"]
    assert "cassette: miss:" in result.stderr
    assert "1 request(s) had no recording" in result.stderr


POSIX_SIGNALS = pytest.mark.skipif(
    sys.platform == "win32", reason="POSIX signals: Windows has no SIGTERM delivery or SIGKILL"
)


@POSIX_SIGNALS
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_ends_the_server_and_closes_the_cassette(
    tmp_path: Path, sig: signal.Signals
) -> None:
    tape = tmp_path / "signalled.jsonl"
    client = LineClient(record_command(tape, RAW))
    try:
        client.initialize()
        client.request("tools/call", {"name": "echo", "arguments": {"text": "before the signal"}})
        os.kill(client.proc.pid, sig)
        client.proc.wait(timeout=scaled(20))
        assert client.proc.returncode == 128 + sig
    finally:
        client.kill_group()
    cassette = Cassette.load(tape)
    assert not cassette.warnings
    texts = json.dumps([m for m in cassette.messages("s2c")])
    assert "before the signal" in texts
    # the server's end was seen and recorded (the recorder's probes, if any, after it)
    assert isinstance(session_events(cassette)[-1], ExitEvent)


@POSIX_SIGNALS
def test_sigkill_mid_session_leaves_a_readable_prefix(tmp_path: Path) -> None:
    tape = tmp_path / "killed.jsonl"
    client = LineClient(record_command(tape, RAW))
    sent, received = [], []
    try:
        received.append(client.initialize())
        for n in range(5):
            params = {"name": "echo", "arguments": {"text": f"call {n}"}}
            received.append(client.request("tools/call", params))
            sent.append(params)
        os.kill(client.proc.pid, signal.SIGKILL)
        client.proc.wait(timeout=scaled(10))
    finally:
        client.kill_group()
    cassette = Cassette.load(tape)
    s2c = [m for m in cassette.messages("s2c")]
    # everything the client received was on disk before it was forwarded
    for reply in received:
        assert reply in s2c
    calls = [m["params"] for m in cassette.messages("c2s") if m.get("method") == "tools/call"]
    assert calls == sent


def test_replay_with_the_python_module_and_the_script_agree(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    script = Path(PY).parent / "cassette"
    if not script.exists():
        pytest.skip("the cassette script is not installed next to this interpreter")
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    stdin = (json.dumps(call) + "\n").encode()
    a = subprocess.run(
        [str(script), "replay", "-q", str(tape)],
        input=stdin,
        capture_output=True,
        timeout=scaled(30),
        check=False,
    )
    b = subprocess.run(
        replay_command(tape), input=stdin, capture_output=True, timeout=scaled(30), check=False
    )
    assert a.stdout == b.stdout
    assert a.stdout


def test_replay_refuses_a_line_over_the_limit_and_answers_the_next(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    huge = (
        b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"'
        + b"x" * (65 * 1024 * 1024)
        + b'"}}\n'
    )
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}},
    }
    result = cli(
        "replay", "-q", str(tape), stdin=huge + (json.dumps(call) + "\n").encode(), timeout=60
    )
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["error"]["code"] == -32600
    assert "over the size limit" in replies[0]["error"]["message"]
    assert replies[1]["id"] == 2
    assert replies[1]["result"]["content"][0]["text"] == "hi"
