"""``cassette prune`` on a real recording: the episode server, a session with secrets
(redacted as numbered placeholders) and a progress notification, replayed to a client
that makes only some of the calls, with ``--report``; and the pytest plugin's run report.
What stays is the old file's lines, byte for byte: the placeholders keep their numbers,
and the pruned cassette lints clean, scans clean and replays what was played."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, LineClient, record_command, replay_command

pytestmark = pytest.mark.e2e

SERVER = [PY, str(ROOT / "tests" / "servers" / "episode_server.py")]
# the shape of GitHub tokens (not real ones): redacted as [REDACTED:github:N]; the word
# before each tells the calls apart (a placeholder matches any live value)
TOKENS = [
    f"{word} ghp_" + part * 9
    for word, part in zip(("one", "two", "three"), ("A1b2", "C3d4", "E5f6"), strict=True)
]


def cassette(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PY, "-m", "cassette", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def session(argv: list[str], calls: list[str], cwd: Path) -> list[Any]:
    """Run a client through ``argv``: each call ``echo`` of a token's text, or
    ``progress`` (with a progress token)."""
    client = LineClient(argv, cwd=cwd)
    answers: list[Any] = []
    try:
        client.initialize()
        for call in calls:
            if call == "progress":
                params = {"name": "progress", "arguments": {}, "_meta": {"progressToken": 9}}
            else:
                params = {"name": "echo", "arguments": {"text": call}}
            answers.append(client.request("tools/call", params).get("result"))
        assert client.finish()[0] == 0
    finally:
        client.kill_group()
    return answers


def test_prune_drops_what_no_replay_played_and_keeps_the_rest_byte_for_byte(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "t.jsonl"
    session(record_command(tape, SERVER), [TOKENS[0], "progress", TOKENS[1], TOKENS[2]], tmp_path)
    recorded = tape.read_bytes()
    text = recorded.decode()
    assert all(f"[REDACTED:github:{n}]" in text for n in (1, 2, 3))
    assert "ghp_" not in text
    assert "notifications/progress" in text

    report = tmp_path / "run.jsonl"
    played = session(
        replay_command(tape, "--report", str(report)), [TOKENS[0], TOKENS[2]], tmp_path
    )
    assert [a["content"][0]["text"] for a in played] == [
        "live:one [REDACTED:github:1]",
        "live:three [REDACTED:github:3]",
    ]
    dry = cassette("prune", "t.jsonl", "--against", "run.jsonl", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.splitlines() == [
        'would prune: t.jsonl:7: tools/call "progress"',
        'would prune: t.jsonl:10: tools/call "echo"',
        "t.jsonl: would prune 2 recording(s) that none of 1 replay(s) played (5 line(s))",
    ]
    assert tape.read_bytes() == recorded

    done = cassette("prune", "t.jsonl", "--against", "run.jsonl", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # each call with its answer, and the progress notification between
    assert json.loads(done.stdout)["lines"] == [7, 8, 9, 10, 11]
    before, after = recorded.splitlines(keepends=True), tape.read_bytes().splitlines(keepends=True)
    assert after == [line for n, line in enumerate(before, start=1) if n not in range(7, 12)]
    left = tape.read_text()
    assert "[REDACTED:github:2]" not in left
    assert "notifications/progress" not in left
    assert "[REDACTED:github:1]" in left
    assert "[REDACTED:github:3]" in left  # not renumbered
    assert cassette("lint", "t.jsonl", cwd=tmp_path).returncode == 0
    assert cassette("redact", "--scan", "t.jsonl", cwd=tmp_path).returncode == 0
    Cassette.load(tape)
    again = session(replay_command(tape), [TOKENS[0], TOKENS[2]], tmp_path)
    assert again == played  # what was played is served as before

    # the run's report now names lines the cassette no longer holds: refused, unchanged
    stale = cassette("prune", "t.jsonl", "--against", "run.jsonl", cwd=tmp_path)
    assert stale.returncode == 3
    assert "the cassette changed since the run" in stale.stderr
    assert tape.read_bytes() == b"".join(after)


PLUGIN_TEST = """
import sys
sys.path.insert(0, {root!r})
from tests.helpers.support import LineClient

SERVER = {server!r}


def test_echo(mcp_cassette):
    client = LineClient(mcp_cassette.server_command(SERVER))
    try:
        client.initialize()
        for text in {texts!r}:
            client.request("tools/call", {{"name": "echo", "arguments": {{"text": text}}}})
        client.finish()
    finally:
        client.kill_group()
"""


def test_the_plugins_run_report_is_what_prune_goes_by(tmp_path: Path) -> None:
    def pytest_run(texts: list[str], *args: str) -> None:
        test = tmp_path / "test_echo.py"
        test.write_text(PLUGIN_TEST.format(root=str(ROOT), server=SERVER, texts=texts))
        done = subprocess.run(
            [PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(test), *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stdout + done.stderr

    pytest_run(["a", "b"])  # recorded
    tape = tmp_path / "cassettes" / "test_echo" / "test_echo.jsonl"
    pytest_run(["a"], "--mcp-cassette-report=run.jsonl", "--mcp-cassette-mode=none")
    facts = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [f["event"] for f in facts if f["event"] == "unplayed"] == ["unplayed"]
    done = cassette("prune", str(tape), "--against", "run.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '"b"' not in tape.read_text()
    assert '"a"' in tape.read_text()
    # the test replays the pruned cassette, and leaves nothing unplayed now
    pytest_run(["a"], "--mcp-cassette-mode=none", "--mcp-cassette-fail-on-unused")
