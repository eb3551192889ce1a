"""A miss is redacted without touching our own words: the values it quotes go through the
gate as values, the sentence around them stays as we wrote it. Real recordings of the
steady server (tests/servers/steady_server.py), replayed to a real line client: the
error the client gets, the miss line on stderr and the end-of-run account."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import PY, ROOT, LineClient

pytestmark = pytest.mark.e2e
STEADY = ROOT / "tests" / "servers" / "steady_server.py"
RECORDED = "tk-live-1234-abcd-ZyXw"
LIVE = "tk-other-9876-wxyz-QpOn"


def greet(argv: list[str], cwd: Path, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
    client = LineClient(argv, cwd=cwd)
    try:
        client.initialize()
        reply = client.request("tools/call", {"name": "greet", "arguments": arguments})
        _code, said = client.finish()
    finally:
        client.kill_group()
    return reply, said


def recorded(tmp_path: Path, *options: str) -> None:
    argv = [PY, "-m", "cassette", "record", "-o", "t.jsonl", *options, "--", PY, str(STEADY)]
    reply, said = greet(argv, tmp_path, {"name": "Ada", "token": RECORDED})
    assert "result" in reply, said


def replayed(tmp_path: Path, arguments: dict[str, Any]) -> tuple[str, str]:
    """The client's error (its message, then its data), and what the replay said."""
    reply, said = greet([PY, "-m", "cassette", "replay", "t.jsonl", "-q"], tmp_path, arguments)
    error = reply["error"]
    return f"{error['message']}\n{json.dumps(error.get('data'))}", said


def test_an_argument_named_token_keeps_our_words(tmp_path: Path) -> None:
    recorded(tmp_path)
    error, said = replayed(tmp_path, {"name": "Ada"})
    words = '/token: recorded "[REDACTED:key:1]", received (absent)'
    assert words in error
    miss = [line for line in said.splitlines() if line.startswith("cassette: miss:")]
    assert len(miss) == 1
    assert words in miss[0]
    assert f'  - tools/call "greet" not recorded: arguments differ at {words}' in said
    assert "[REDACTED:assignment" not in error + said


def test_the_values_a_miss_quotes_are_redacted_both_recorded_and_received(
    tmp_path: Path,
) -> None:
    recorded(tmp_path, "--no-redact")  # the recording holds its token as it was
    assert RECORDED in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    error, said = replayed(tmp_path, {"name": "Ada", "token": LIVE})
    for text in (error, said):
        assert RECORDED not in text
        assert LIVE not in text
        assert "/token: recorded " in text
        assert ", received " in text
    assert "[REDACTED:assignment" not in error + said
    assert '"path": "/token"' in error  # the data names the path, its values redacted
