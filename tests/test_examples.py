"""Every example in examples/ runs, and the README's replay command does what it says."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, node, scaled

EXAMPLES = ROOT / "examples"


def run(*argv: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        list(argv), input=stdin, capture_output=True, timeout=scaled(60), check=False, cwd=ROOT
    )


def test_harness_example_runs() -> None:
    result = run(PY, str(EXAMPLES / "harness.py"))
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode()
    assert "replay matched live" in out
    assert 'tools/call "add_note" not recorded' in out


def test_recorder_example_writes_a_cassette_that_lints_and_replays(tmp_path: Path) -> None:
    tape = tmp_path / "weather.jsonl"
    result = run(PY, str(EXAMPLES / "recorder.py"), str(tape))
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().splitlines() == [
        "wrote 7 events (legacy era) to weather.jsonl",
        "replayed: [REDACTED:github:1]",
    ]
    assert b"ghp_" not in tape.read_bytes()
    linted = run(PY, "-m", "cassette", "lint", str(tape))
    assert linted.returncode == 0, linted.stdout.decode() + linted.stderr.decode()
    again = run(PY, str(EXAMPLES / "recorder.py"), str(tape))  # never over a recording
    assert again.returncode == 1
    assert b"already holds a recording" in again.stderr


def replay_readme_requests(tape: Path) -> list[dict]:  # type: ignore[type-arg]
    requests = (EXAMPLES / "everything-requests.jsonl").read_bytes()
    result = run(PY, "-m", "cassette", "replay", str(tape), stdin=requests)
    assert result.returncode == 0, result.stderr.decode()
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_readme_replay_of_the_committed_cassette() -> None:
    replies = replay_readme_requests(EXAMPLES / "everything.jsonl")
    answers = {r["id"]: r for r in replies if "id" in r}
    assert sorted(answers) == [1, 2, 3, 4, 5]
    assert all("result" in r for r in answers.values())
    assert answers[3]["result"]["content"][0]["text"] == "Echo: hello from a cassette"


@pytest.mark.e2e
def test_record_everything_example_reproduces_the_committed_cassette(tmp_path: Path) -> None:
    node()
    tape = tmp_path / "everything.jsonl"
    result = run(PY, str(EXAMPLES / "record_everything.py"), str(tape))
    assert result.returncode == 0, result.stderr.decode()
    assert replay_readme_requests(tape) == replay_readme_requests(EXAMPLES / "everything.jsonl")
