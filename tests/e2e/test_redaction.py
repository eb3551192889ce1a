"""Secrets never reach a cassette: checked on the raw bytes of files written by real
recordings, and a test that sends a live secret still matches its redacted recording."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    dump,
    everything_command,
    record_command,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e
SECRET = "sk-live-" + "Q7w" * 10
GITHUB = "ghp_" + "Zz09" * 10


async def env_session(target: Any) -> dict[str, Any]:
    from mcp import Client

    async with Client(target) as client:
        env = dump(await client.call_tool("get-env", {}))
        echo = dump(await client.call_tool("echo", {"message": f"token {GITHUB} inside"}))
        schema = [t.input_schema for t in (await client.list_tools()).tools]
    return {"env": env, "echo": echo, "schema": schema}


def test_secrets_in_tool_output_arguments_and_command_line_never_reach_the_file(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "secrets.jsonl"
    command = record_command(tape, [*everything_command(), f"--api-key={SECRET}"])
    env = {**os.environ, "MY_API_TOKEN": SECRET, "GITHUB_TOKEN": GITHUB}
    live = run(lambda: env_session(stdio_params(command, env)))
    assert SECRET in str(live["env"])  # the server really did print it

    raw = tape.read_bytes()
    assert SECRET.encode() not in raw
    assert GITHUB.encode() not in raw
    assert b"[REDACTED:" in raw  # named by the rule that met it first (env, argument)

    # The live test sends the real token; it is redacted like the recording and matches.
    replayed = run(lambda: env_session(stdio_params(replay_command(tape), OFFLINE_ENV)))
    assert replayed["echo"] == {
        **live["echo"],
        "content": [{**live["echo"]["content"][0], "text": replayed["echo"]["content"][0]["text"]}],
    }
    echoed = replayed["echo"]["content"][0]["text"]
    assert "[REDACTED:" in echoed  # GITHUB_TOKEN's value: met first in the environment
    assert GITHUB not in echoed
    assert replayed["schema"] == live["schema"]  # schemas with maxTokens & co. stay intact


def test_user_rules_from_pyproject_and_the_command_line(tmp_path: Path) -> None:
    from tests.helpers.support import RAW_SERVER, LineClient

    (tmp_path / "pyproject.toml").write_text(
        '[tool.cassette.redact]\npatterns = ["acct-[0-9]{6}"]\nenv = ["NOTE_SECRET"]\n'
    )
    tape = tmp_path / "rules.jsonl"
    argv = [
        PY,
        "-m",
        "cassette",
        "record",
        "-o",
        str(tape),
        "--redact-path",
        "/params/arguments/who",
        "--",
        PY,
        str(RAW_SERVER),
    ]
    client = LineClient(argv, env={"NOTE_SECRET": "correct horse battery"}, cwd=tmp_path)
    try:
        client.initialize()
        text = "acct-123456 says correct horse battery"
        client.request(
            "tools/call", {"name": "echo", "arguments": {"text": text, "who": "ada lovelace"}}
        )
        code, _ = client.finish()
    finally:
        client.kill_group()
    assert code == 0
    raw = tape.read_bytes()
    for secret in (b"acct-123456", b"correct horse battery", b"ada lovelace"):
        assert secret not in raw
    assert b'"env":["NOTE_SECRET"]' in raw  # the name is kept, the value never


def test_no_redact_warns_and_writes_as_is(tmp_path: Path) -> None:
    from tests.helpers.support import RAW_SERVER, LineClient

    tape = tmp_path / "plain.jsonl"
    client = LineClient(
        [PY, "-m", "cassette", "record", "-o", str(tape), "--no-redact", "--", PY, str(RAW_SERVER)]
    )
    try:
        client.initialize()
        client.request("tools/call", {"name": "echo", "arguments": {"text": GITHUB}})
        code, err = client.finish()
    finally:
        client.kill_group()
    assert code == 0
    assert "redaction is off" in err
    assert GITHUB.encode() in tape.read_bytes()
