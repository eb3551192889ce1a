"""Every writer gets its policy from the one gate: a project pattern and a command-line
rule reach ``new_episodes`` and ``verify --update``, a joined cassette never loses a rule,
and a bad rule is one line, exit 2, no file."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, RAW_SERVER, LineClient, scaled

pytestmark = pytest.mark.e2e

PROJECT = '[tool.cassette.redact]\npatterns = ["acct-[0-9]{6}"]\n'

# A server that prints an account number it takes from its environment.
ACCOUNT_SERVER = """\
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    r = {"jsonrpc": "2.0", "id": m["id"]}
    if m["method"] == "initialize":
        r["result"] = {"protocolVersion": m["params"]["protocolVersion"],
                       "capabilities": {"tools": {}},
                       "serverInfo": {"name": "acct", "version": "1"}}
    elif m["method"] == "tools/list":
        r["result"] = {"tools": [{"name": "account", "inputSchema": {"type": "object"}}]}
    else:
        text = "signed in as " + os.environ["ACCT"] + " holder " + os.environ["HOLDER"]
        r["result"] = {"content": [{"type": "text", "text": text}]}
    sys.stdout.write(json.dumps(r) + "\\n")
    sys.stdout.flush()
"""


def cassette(*args: str) -> list[str]:
    return [PY, "-m", "cassette", *args]


def without_input(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command run to its end with nothing on its standard input, as text."""
    return subprocess.run(
        argv, input="", capture_output=True, text=True, timeout=scaled(60), cwd=cwd, check=False
    )


def session(
    argv: list[str], cwd: Path, arguments: dict[str, str], tool: str = "echo"
) -> tuple[int, str]:
    client = LineClient(argv, cwd=cwd)
    try:
        client.initialize()
        client.request("tools/call", {"name": tool, "arguments": arguments})
        return client.finish()
    finally:
        client.kill_group()


def test_new_episodes_appends_with_the_projects_and_the_recordings_rules(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    tape = tmp_path / "t.jsonl"
    record = cassette(
        "record",
        "-o",
        str(tape),
        "--redact-path",
        "/params/arguments/who",
        "--",
        PY,
        str(RAW_SERVER),
    )
    code, _ = session(record, tmp_path, {"text": "acct-111111", "who": "ada lovelace"})
    assert code == 0
    extend = cassette("replay", str(tape), "--mode", "new_episodes", "--", PY, str(RAW_SERVER))
    code, err = session(
        extend, tmp_path, {"text": "note acct-222222", "who": "grace hopper"}, "say"
    )
    assert code == 0, err
    raw = tape.read_text()
    assert "appended" in err
    assert raw.count("\n") > 8
    for secret in ("acct-111111", "acct-222222", "ada lovelace", "grace hopper"):
        assert secret not in raw
        assert secret not in err, err


def test_an_extension_without_the_pattern_it_was_recorded_with_is_refused(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    record = cassette(
        "record", "-o", str(tape), "--redact-pattern", "acct-[0-9]{6}", "--", PY, str(RAW_SERVER)
    )
    assert session(record, tmp_path, {"text": "acct-111111"})[0] == 0
    before = tape.read_bytes()
    extend = cassette("replay", str(tape), "--mode", "new_episodes", "--", PY, str(RAW_SERVER))
    result = without_input(extend, tmp_path)
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if "acct-[0-9]{6}" in line]
    assert len(lines) == 1
    assert "--redact-pattern" in lines[0]
    assert tape.read_bytes() == before


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (["--redact-path", "params/arguments/who"], "not a JSON Pointer"),
        (["--redact-env", "$NOTE"], "not a variable name"),
        (["--redact-pattern", "("], "not a regular expression"),
    ],
)
def test_a_bad_rule_is_one_line_exit_2_and_no_file(
    tmp_path: Path, option: list[str], words: str
) -> None:
    tape = tmp_path / "t.jsonl"
    record = cassette("record", "-o", str(tape), *option, "--", PY, str(RAW_SERVER))
    result = without_input(record, tmp_path)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert words in result.stderr
    assert not tape.exists()
    assert list(tmp_path.iterdir()) == []


def test_verify_takes_the_redaction_options_and_update_writes_no_secret(tmp_path: Path) -> None:
    server = tmp_path / "acct_server.py"
    server.write_text(ACCOUNT_SERVER)
    tape = tmp_path / "a.jsonl"
    env = {**os.environ, "ACCT": "acct-111111", "HOLDER": "ada"}
    record = cassette(
        "record", "-o", str(tape), "--redact-pattern", "acct-[0-9]{6}", "--", PY, str(server)
    )
    client = LineClient(record, env=env, cwd=tmp_path)
    try:
        client.initialize()
        client.request("tools/call", {"name": "account", "arguments": {}})
        assert client.finish()[0] == 0
    finally:
        client.kill_group()
    assert "acct-111111" not in tape.read_text()

    def verify(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cassette("verify", tape.name, *extra, "--", PY, str(server)),
            capture_output=True,
            text=True,
            timeout=scaled(120),
            cwd=tmp_path,
            env={**os.environ, "ACCT": "acct-222222", "HOLDER": "grace"},
            check=False,
        )

    refused = verify()  # the pattern the cassette was redacted with is not given
    assert refused.returncode == 2
    assert "acct-[0-9]{6}" in refused.stderr
    drift = verify("--redact-pattern", "acct-[0-9]{6}")
    assert drift.returncode == 1, drift.stdout + drift.stderr  # "grace" is new
    assert "acct-222222" not in drift.stdout + drift.stderr
    update = verify("--redact-pattern", "acct-[0-9]{6}", "--update")
    assert update.returncode == 0, update.stdout + update.stderr
    assert "acct-222222" not in update.stdout + update.stderr
    assert "acct-222222" not in tape.read_text()
    assert "grace" in tape.read_text()


HOOK = """\
def scrub(message, direction):
    if message.get("method") == "tools/call":
        raise ValueError("cannot scrub " + message["params"]["arguments"]["text"])
    return message
"""


def test_a_failing_hook_is_one_line_naming_it_and_the_cassette_stays_readable(
    tmp_path: Path,
) -> None:
    from cassette import Cassette

    (tmp_path / "hooks.py").write_text(HOOK)
    tape = tmp_path / "t.jsonl"
    token = "ghp_" + "Zz09" * 9
    record = cassette(
        "record", "-o", str(tape), "--before-record", "hooks.py:scrub", "--", PY, str(RAW_SERVER)
    )
    client = LineClient(record, cwd=tmp_path)
    try:
        client.initialize()
        client.send(
            {
                "jsonrpc": "2.0",
                "id": 9,
                "method": "tools/call",
                "params": {"name": "echo", "arguments": {"text": token}},
            }
        )
        code, err = client.finish()
    finally:
        client.kill_group()
    lines = [line for line in err.splitlines() if "scrub" in line]
    assert len(lines) == 1, err
    assert "ValueError" in lines[0]
    assert token not in err
    assert code != 0
    if tape.exists():
        Cassette.load(tape)  # readable: no half-written line
        assert token not in tape.read_text()


def test_a_miss_prints_no_value_the_projects_rules_or_secret_variables_redact(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    tape = tmp_path / "t.jsonl"
    record = cassette("record", "-o", str(tape), "--", PY, str(RAW_SERVER))
    assert session(record, tmp_path, {"text": "hello"})[0] == 0
    env_secret = "Vv1Bb9Nn" + "Zq8Lm2Xr7Tt5"
    client = LineClient(
        cassette("replay", str(tape)), env={"DEPLOY_TOKEN": env_secret}, cwd=tmp_path
    )
    try:
        client.initialize()
        reply = client.request(
            "tools/call",
            {"name": "other", "arguments": {"note": f"acct-333333 and {env_secret}"}},
        )
        _code, err = client.finish()
    finally:
        client.kill_group()
    assert "error" in reply
    assert "miss" in err.lower() or "no recording" in err.lower(), err
    for secret in ("acct-333333", env_secret):
        assert secret not in err, err


def test_a_variant_keeps_the_rules_the_cassette_was_recorded_with(tmp_path: Path) -> None:
    server = tmp_path / "acct_server.py"
    server.write_text(ACCOUNT_SERVER)
    tape = tmp_path / "a.jsonl"
    record = cassette(
        "record", "-o", str(tape), "--redact-pattern", "acct-[0-9]{6}", "--", PY, str(server)
    )
    client = LineClient(record, env={"ACCT": "acct-111111", "HOLDER": "ada"}, cwd=tmp_path)
    try:
        client.initialize()
        client.request("tools/call", {"name": "account", "arguments": {}})
        assert client.finish()[0] == 0
    finally:
        client.kill_group()

    def variant(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            cassette("variant", tape.name, "--as", "inspector", *extra),
            capture_output=True,
            text=True,
            timeout=scaled(120),
            cwd=tmp_path,
            env={**os.environ, "ACCT": "acct-222222", "HOLDER": "grace"},
            check=False,
        )

    refused = variant()
    assert refused.returncode == 2, refused.stderr
    assert "acct-[0-9]{6}" in refused.stderr
    done = variant("--redact-pattern", "acct-[0-9]{6}")
    assert done.returncode == 0, done.stderr
    raw = tape.read_text()
    assert "holder grace" in raw  # the variant was recorded
    assert "acct-222222" not in raw
    assert "acct-222222" not in done.stdout + done.stderr


@pytest.mark.parametrize("recorded", [[], ["--no-redact"]], ids=["redacted", "no-redact"])
def test_the_error_a_miss_sends_the_client_holds_no_value_the_projects_rules_redact(
    tmp_path: Path, recorded: list[str]
) -> None:
    """The client's error, stderr and ``--log`` all pass the gate's policy (the project's
    pattern too, which the core cannot read), on a redacted cassette and on one recorded
    without redaction."""
    (tmp_path / "pyproject.toml").write_text(PROJECT)
    tape, log = tmp_path / "t.jsonl", tmp_path / "replay.log"
    record = cassette("record", *recorded, "-o", str(tape), "--", PY, str(RAW_SERVER))
    assert session(record, tmp_path, {"text": "hello"})[0] == 0
    env_secret = "Qq4Ww8Ee" + "Rr2Tt6Yy1Uu"
    client = LineClient(
        cassette("replay", "--log", str(log), str(tape)),
        env={"DEPLOY_TOKEN": env_secret},
        cwd=tmp_path,
    )
    try:
        client.initialize()
        # the recorded tool with other arguments: the miss names the closest recording
        # and the differing value, which is what must not leak
        reply = client.request(
            "tools/call", {"name": "echo", "arguments": {"text": f"acct-444444 {env_secret}"}}
        )
        _code, err = client.finish()
    finally:
        client.kill_group()
    error = json.dumps(reply["error"])
    assert "acct-" in error or "REDACTED" in error, error  # the diff is told, redacted
    for secret in ("acct-444444", env_secret):
        assert secret not in error
        assert secret not in err, err
        assert secret not in log.read_text()
