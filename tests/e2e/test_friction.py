"""Small things a new user trips over: the printed client configuration serves what the
command served, ``check -- CMD``, a hint for a command given without ``--``, and stdio
``record``'s banner and summary."""

from __future__ import annotations

import json
import shlex
import subprocess
from pathlib import Path

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, Background, LineClient, run, scaled

pytestmark = pytest.mark.e2e

NOTES = [PY, str(ROOT / "examples" / "notes_server.py")]


def cassette(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *argv],
        input=stdin.decode(),
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    path = tmp_path / "notes.jsonl"
    client = LineClient([PY, "-m", "cassette", "record", "-o", str(path), "--", *NOTES])
    try:
        client.initialize()
        client.request("tools/call", {"name": "add_note", "arguments": {"text": "a"}})
        code, _ = client.finish()
        assert code == 0
    finally:
        client.kill_group()
    return path


def printed_config(stderr: str) -> dict:  # type: ignore[type-arg]
    text = stderr.split("client configuration:\n", 1)[1]
    config, _ = json.JSONDecoder().raw_decode(text)
    return config  # type: ignore[no-any-return]


def test_the_printed_configuration_serves_what_the_command_served(
    tape: Path, tmp_path: Path
) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('[[fault]]\nkind = "error"\nmethod = "tools/call"\ncode = -32050\n')
    shown = cassette(
        "replay",
        str(tape),
        "--strategy",
        "loose",
        "--ignore-param",
        "/params/arguments/x",
        "--faults",
        str(plan),
        "--answer-timeout",
        "5",
    )
    server = printed_config(shown.stderr)["mcpServers"]["notes"]
    assert server["args"][3:] == [
        str(tape),
        "--strategy",
        "loose",
        "--ignore-param",
        "/params/arguments/x",
        "--faults",
        str(plan.resolve()),
        "--answer-timeout",
        "5",
    ]
    # Pasted into a client, it injects the fault as the original command did.
    client = LineClient([server["command"], *server["args"]])
    try:
        client.initialize()
        reply = client.request("tools/call", {"name": "add_note", "arguments": {"text": "a"}})
        assert reply["error"]["code"] == -32050
    finally:
        client.kill_group()


def test_check_takes_the_server_command_after_a_double_dash() -> None:
    result = cassette("check", "--format", "json", "--", *NOTES)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["counts"]["tools"] == 1
    alias = cassette("check", "--format", "json", "--stdio", " ".join(NOTES))
    assert json.loads(alias.stdout) == json.loads(result.stdout)


def test_a_command_without_double_dash_gets_a_hint(tape: Path) -> None:
    for argv in (["replay", str(tape), "--mode", "once", *NOTES], ["check", *NOTES]):
        result = cassette(*argv)
        assert result.returncode == 2
        last = result.stderr.strip().splitlines()[-1]
        words = " ".join(NOTES)
        assert last.startswith(f"cassette: error: {argv[0]}: {words}: not a cassette or an option")
        assert "; a server command goes after --: cassette " in last
        assert last.endswith(f" -- {shlex.join(NOTES)}")


def test_stdio_record_says_what_it_records_and_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}},
    }
    result = cassette(
        "record", "-o", str(path), "--", *NOTES, stdin=json.dumps(init).encode() + b"\n"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"cassette: recording {' '.join(NOTES)} to {path} (stdio; redaction on)"
    written = len(path.read_text(encoding="utf-8").splitlines())
    assert written == len(Cassette.load(path).events) + 1  # the header, then the events
    assert (
        lines[-1] == f"cassette: wrote {written} line(s) to {path}; the server exited with code 0"
    )
    assert json.loads(result.stdout)["id"] == 1  # stdout stays the protocol's


def test_record_takes_http_for_streamable_http_as_replay_does(tmp_path: Path) -> None:
    """``record --transport http`` records a streamable-HTTP endpoint (here, a replay of
    a notes cassette on ``--front http``): the same short name ``replay`` takes."""
    import signal

    from mcp import Client

    tape = tmp_path / "notes.jsonl"
    client = LineClient([PY, "-m", "cassette", "record", "-o", str(tape), "--", *NOTES])
    try:
        client.initialize()
        client.request("tools/list", {})  # the SDK lists tools to check a call's result
        client.request("tools/call", {"name": "add_note", "arguments": {"text": "a"}})
        assert client.finish()[0] == 0
    finally:
        client.kill_group()
    url = r"(http://127\.0\.0\.1:\d+/\S*)"
    out = tmp_path / "over-http.jsonl"
    with Background([PY, "-m", "cassette", "replay", str(tape), "--front", "http"]) as upstream:
        endpoint = upstream.wait_for(r"serving on " + url).group(1)
        argv = [PY, "-m", "cassette", "record", "-o", str(out), "--transport", "http"]
        with Background([*argv, "--upstream", endpoint, "--port", "0"]) as proxy:
            front = proxy.wait_for(r"point your client at " + url).group(1)

            async def add_note() -> str:
                async with Client(front) as client:
                    result = await client.call_tool("add_note", {"text": "a"})
                    return str(result.content[0].text)  # type: ignore[union-attr]

            answer = run(add_note)
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    recorded = Cassette.load(out)
    assert recorded.header.transport == "streamable-http"
    assert answer in json.dumps(list(recorded.messages("s2c")))
