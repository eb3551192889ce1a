"""Issue 16 end to end: no planted secret reaches a cassette, over stdio and streamable HTTP;
``redact --scan`` finds every one in a ``--no-redact`` cassette; the redacted cassette
replays to the official SDK client (whose output-schema validation must pass), also when
the live request carries different secrets than the recorded one.

The server is ``tests/servers/secrets_server.py``; the fake credentials and where they
travel are in ``tests/helpers/secret_corpus.py``. Every check is on the raw bytes of the file.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.secret_corpus import (
    ARGUMENTS,
    CORPUS,
    ENVIRONMENT,
    HTTP_ONLY,
    STDIO_ONLY,
    fragments,
)
from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    ROOT,
    Background,
    dump,
    python_server,
    record_command,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e
SERVER = ROOT / "tests" / "servers" / "secrets_server.py"
URL = r"(http://127\.0\.0\.1:\d+/mcp)"


def login_arguments(**changes: Any) -> dict[str, Any]:
    args: dict[str, Any] = {
        "user": "ada",
        "password": CORPUS["dictionary_password"],
        "pin": int(CORPUS["pin"]),
        "otp": CORPUS["otp"],
        "auth": CORPUS["json_auth"],
        "credentials": [CORPUS["listed_credential_a"], CORPUS["listed_credential_b"]],
        "settings": {
            "pass": CORPUS["json_pass"],
            "pwd": CORPUS["json_pwd"],
            "secret": {"nested": CORPUS["nested_secret"]},
            "retries": 3,
        },
    }
    return {**args, **changes}


async def secrets_session(target: Any, login: dict[str, Any] | None = None) -> dict[str, Any]:
    """One session that makes the server handle every planted value."""
    from mcp import Client

    async with Client(target) as client:
        out: dict[str, Any] = {"tools": [t.name for t in (await client.list_tools()).tools]}
        out["login"] = dump(await client.call_tool("login", login or login_arguments()))
        message = f"my key {CORPUS['google_api']} and token {CORPUS['github_classic']}"
        out["echo"] = dump(await client.call_tool("echo", {"message": message}))
        out["session"] = dump(await client.call_tool("session_info", {}))
        for name in ("environment", "command_line", "keys", "whoami", "account"):
            out[name] = dump(await client.call_tool(name, {}))
        echoed = (login or {}).get("echoed", CORPUS["echoed"])
        out["forms"] = dump(await client.call_tool("forms", {"password": echoed}))
    return out


def planted_in(raw: bytes, names: set[str]) -> list[str]:
    """The planted values (or identifying fragments) found in ``raw``."""
    found = []
    for name in sorted(names):
        value = CORPUS[name]
        if value.isdigit():  # a PIN or OTP: as a number of its own, not inside a timestamp
            if re.search(rb"(?<![0-9.])" + value.encode() + rb"(?![0-9])", raw):
                found.append(name)
            continue
        if (
            any(piece.encode() in raw for piece in fragments(value))
            or json.dumps(value)[1:-1].encode() in raw
        ):
            found.append(name)
    return found


def record_stdio(tape: Path, *extra: str) -> dict[str, Any]:
    command = record_command(tape, [PY, str(SERVER), *ARGUMENTS], *extra)
    env = {**os.environ, **ENVIRONMENT}
    return run(lambda: secrets_session(stdio_params(command, env)))


STDIO_PLANTED = set(CORPUS) - HTTP_ONLY


def test_stdio_recording_writes_no_planted_value_and_replays_with_other_secrets(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "secrets.jsonl"
    live = record_stdio(tape)
    shown = json.dumps(live)
    assert CORPUS["env_db_pass"] in shown  # the server really leaked them
    assert CORPUS["cli_secret_key"] in shown
    assert live["session"]["structuredContent"]["token"] == int(CORPUS["pin"])

    raw = tape.read_bytes()
    assert planted_in(raw, STDIO_PLANTED) == []
    assert b"salt" not in raw.split(b"\n", 1)[0]  # nothing to confirm a guess with
    scan = subprocess.run(
        [PY, "-m", "cassette", "redact", str(tape), "--scan"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert scan.returncode == 0, scan.stdout
    assert "no secrets found" in scan.stdout

    # A replay with different secrets (a CI token is not the developer's) still matches,
    # and the SDK client validates the structured content against the output schema.
    other = login_arguments(password="winter2024", pin=1234, otp="000111", auth="other-auth-1")
    replayed = run(lambda: secrets_session(stdio_params(replay_command(tape), OFFLINE_ENV), other))
    assert replayed["tools"] == live["tools"]
    session = replayed["session"]
    assert session["isError"] is False
    assert session["structuredContent"]["authorization"] in ("admin", "reader")
    assert isinstance(session["structuredContent"]["token"], int)
    assert "[REDACTED:" in replayed["login"]["content"][0]["text"]
    assert replayed["login"]["isError"] is False
    # the SDK validated the structured content against the output schema's pattern
    account = replayed["account"]["structuredContent"]
    assert re.fullmatch(r"ak_[0-9a-f]{16}", account["apiKey"])
    assert account["apiKey"] != CORPUS["patterned_key"]


def test_scan_finds_every_planted_value_in_a_no_redact_cassette(tmp_path: Path) -> None:
    tape = tmp_path / "plain.jsonl"
    record_stdio(tape, "--no-redact")
    raw = tape.read_bytes()
    assert set(planted_in(raw, STDIO_PLANTED)) == STDIO_PLANTED  # all there, in clear

    scan = subprocess.run(
        [PY, "-m", "cassette", "redact", str(tape), "--scan", "--format", "json"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert scan.returncode == 1
    flagged = {f["line"] for f in json.loads(scan.stdout)["secrets"]}
    lines = raw.split(b"\n")
    for number, line in enumerate(lines, start=1):
        leaked = planted_in(line, STDIO_PLANTED)
        assert not leaked or number in flagged, f"line {number} leaks {leaked} unflagged"

    clean = tmp_path / "clean.jsonl"
    done = subprocess.run(
        [PY, "-m", "cassette", "redact", str(tape), "-o", str(clean)],
        check=False,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert planted_in(clean.read_bytes(), STDIO_PLANTED) == []
    lint = subprocess.run(
        [PY, "-m", "cassette", "lint", str(clean)], check=False, capture_output=True
    )
    assert lint.returncode == 0, lint.stdout


def http_target(url: str) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {
        "Authorization": f"Bearer {CORPUS['bearer_opaque']}",
        "X-Api-Key": CORPUS["x_api_key"],
        "Cookie": f"session={CORPUS['cookie_session']}",
    }
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))


def test_http_recording_writes_no_planted_value_and_replays(tmp_path: Path) -> None:
    server, port = python_server(SERVER, "http", *ARGUMENTS, env=ENVIRONMENT)
    query = f"token={CORPUS['query_token']}&api_key={CORPUS['query_api_key']}"
    upstream = f"http://svc:{CORPUS['url_token_user']}@127.0.0.1:{port}/mcp?{query}"
    tape = tmp_path / "secrets-http.jsonl"
    with server:
        proxy = Background(
            [PY, "-m", "cassette", "record", "-o", str(tape), "--upstream", upstream, "--port", "0"]
        )
        with proxy:
            url = proxy.wait_for(r"point your client at " + URL).group(1)
            live = run(lambda: secrets_session(http_target(url)))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        printed = proxy.output()
    echoed = json.dumps(live["whoami"])  # the server echoed the client's credentials
    assert CORPUS["x_api_key"] in echoed, echoed
    assert CORPUS["cookie_session"] in echoed
    assert CORPUS["query_token"] in json.dumps(live["whoami"])
    assert planted_in(printed.encode(), set(CORPUS)) == []  # nothing on our stderr either

    raw = tape.read_bytes()
    assert planted_in(raw, set(CORPUS) - STDIO_ONLY) == []

    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    with front:
        url = front.wait_for(r"serving on " + URL).group(1)
        other = login_arguments(password="autumn-leaves", pin=9999)
        replayed = run(lambda: secrets_session(http_target(url), other))
        assert front.stop() == 0, front.output()
    assert replayed["session"]["isError"] is False
    assert replayed["tools"] == live["tools"]
