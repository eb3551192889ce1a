"""The configurable limits and the stdio upstream timeout, through the real command line:
a replay refuses what is over its size or depth limit and answers the next line; a bad
value is a one-line usage error; a recording answers for a server that does not answer,
and a replay of that cassette gives the client the same error."""

from __future__ import annotations

import json
import subprocess
from importlib.resources import files
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from cassette.core.wire.model import MessageEvent, RawEvent
from cassette.store.storage import Cassette
from tests.e2e.test_cli import RAW, cli, one_line_error, recorded
from tests.helpers.support import PY, LineClient, record_command, replay_command, scaled


def cli_in(cwd: Path, *args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """``cli`` run from ``cwd``, where a pyproject.toml may say something."""
    result = subprocess.run(
        [PY, "-m", "cassette", *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        timeout=scaled(30),
        check=False,
    )
    return subprocess.CompletedProcess(
        result.args, result.returncode, result.stdout.decode(), result.stderr.decode()
    )


def call(msg_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def lines(*messages: dict[str, Any] | bytes) -> bytes:
    return b"".join(m if isinstance(m, bytes) else json.dumps(m).encode() + b"\n" for m in messages)


@pytest.mark.parametrize("mode", [[], ["--mode", "none"]], ids=["plain", "mode-none"])
def test_replay_with_a_small_size_limit_refuses_a_larger_line_and_answers_the_next(
    tmp_path: Path, mode: list[str]
) -> None:
    tape = recorded(tmp_path)
    big = json.dumps(call(1, "echo", text="x" * 2000)).encode() + b"\n"
    result = cli(
        "replay",
        "-q",
        str(tape),
        *mode,
        "--max-message-bytes",
        "1KiB",
        stdin=big + lines(call(2, "echo", text="hi")),
    )
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["error"]["code"] == -32600, result.stderr
    assert f"a line of {len(big)} bytes is over the size limit" in replies[0]["error"]["message"]
    assert replies[1]["id"] == 2
    assert replies[1]["result"]["content"][0]["text"] == "hi"


def test_the_size_limit_comes_from_pyproject_when_not_given(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    (tmp_path / "pyproject.toml").write_text('[tool.cassette]\nmax-message-bytes = "100B"\n')
    result = cli_in(
        tmp_path, "replay", "-q", str(tape), stdin=lines(call(1, "echo", text="y" * 200))
    )
    assert json.loads(result.stdout.splitlines()[0])["error"]["code"] == -32600


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--max-message-bytes", "lots", "bad size 'lots'"),
        ("--max-message-bytes", "0", "at least 1 byte"),
        ("--max-message-bytes", "5 parsecs", "bad size"),
        ("--max-depth", "deep", "invalid int value"),
        ("--max-depth", "0", "--max-depth must be at least 1"),
    ],
)
def test_a_bad_limit_is_a_one_line_usage_error(
    tmp_path: Path, option: str, value: str, says: str
) -> None:
    tape = recorded(tmp_path)
    result = cli("replay", "-q", str(tape), option, value)
    assert result.returncode == 2
    assert says in one_line_error(result)


def test_a_bad_limit_in_pyproject_is_a_usage_error_naming_the_key(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.cassette]\nmax-depth = -3\n")
    result = cli_in(tmp_path, "replay", "-q", str(tape))
    assert result.returncode == 2
    assert "[tool.cassette] max-depth" in one_line_error(result)


def test_replay_refuses_json_deeper_than_the_depth_limit_and_answers_the_next(
    tmp_path: Path,
) -> None:
    tape = recorded(tmp_path)
    deep = b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":' + b"[" * 9 + b"]" * 9 + b"}}\n"
    result = cli(
        "replay",
        "-q",
        str(tape),
        "--max-depth",
        "8",
        stdin=deep + lines(call(2, "echo", text="hi")),
    )
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert replies[0]["error"] == {
        "code": -32700,
        "message": "Parse error: JSON nested deeper than 8 levels",
    }
    assert replies[1]["result"]["content"][0]["text"] == "hi"


def test_replay_refuses_a_cassette_deeper_than_the_limit_naming_its_line(tmp_path: Path) -> None:
    tape = recorded(tmp_path)
    result = cli("replay", "-q", str(tape), "--max-depth", "2")
    assert result.returncode == 3
    error = one_line_error(result)
    assert f"{tape}:" in error
    assert "nested deeper than the limit of 2 levels" in error


def test_record_answers_for_a_server_that_does_not_answer_and_replay_says_the_same(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "hang.jsonl"
    client = LineClient(record_command(tape, RAW, "--upstream-timeout", "0.5"))
    client.initialize()
    client.send(call(2, "hold"))
    error = client.receive()  # the server holds its answer: the recorder answers instead
    assert error["id"] == 2
    assert error["error"] == {
        "code": -32000,
        "message": "cassette-mcp: the server did not answer within 0.5 s",
    }
    client.send(call(3, "release"))  # the server now sends the held answer, then this one
    after = client.receive()
    assert after["id"] == 3, after  # the late answer to 2 was not forwarded
    code, stderr = client.finish()
    assert code == 0
    warnings = [line for line in stderr.splitlines() if "did not answer request 2" in line]
    assert warnings == [
        "cassette: warning: the server did not answer request 2 (tools/call) within 0.5 s; "
        "the client got an error in its place"
    ]

    events = Cassette.load(tape).events
    synthetic = [
        e.message
        for e in events
        if isinstance(e, MessageEvent) and e.meta == {"synthetic": "upstream-timeout"}
    ]
    assert synthetic == [error]
    late = [e.text for e in events if isinstance(e, RawEvent) and e.meta == {"late": True}]
    assert len(late) == 1
    assert json.loads(late[0] or "")["result"]["content"][0]["text"] == "late"
    schema = json.loads((files("cassette") / "schema" / "cassette-v1.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    for line in tape.read_text().splitlines():
        assert list(validator.iter_errors(json.loads(line))) == [], line
    lint = cli("lint", str(tape))
    assert lint.returncode == 0, lint.stdout + lint.stderr

    replay = LineClient(replay_command(tape))
    replay.initialize()
    assert (
        replay.request("tools/call", {"name": "hold", "arguments": {}})["error"] == error["error"]
    )
    released = replay.request("tools/call", {"name": "release", "arguments": {}})
    assert released["result"]["content"][0]["text"] == "released"
    code, stderr = replay.finish()
    assert code == 0, stderr
