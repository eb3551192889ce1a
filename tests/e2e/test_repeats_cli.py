"""``--allow-repeats`` (and ``allow-repeats`` in ``[tool.cassette]``): a tool called twice
but recorded once is answered again, and the end-of-run line counts it."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.support import PY, ROOT, LineClient, record_command, replay_command, scaled

pytestmark = pytest.mark.e2e

NOTES = [PY, str(ROOT / "examples" / "notes_server.py")]
NOTE = {"name": "add_note", "arguments": {"text": "a"}}


@pytest.fixture
def tape(tmp_path: Path) -> Path:
    path = tmp_path / "notes.jsonl"
    client = LineClient(record_command(path, NOTES))
    client.initialize()
    client.request("tools/call", NOTE)
    assert client.finish()[0] == 0
    return path


def twice(argv: list[str], cwd: Path | None = None) -> tuple[list[dict[str, object]], int, str]:
    client = LineClient(argv, cwd=cwd)
    client.initialize()
    replies = [client.request("tools/call", NOTE) for _ in range(2)]
    code, err = client.finish()
    return replies, code, err


def test_allow_repeats_answers_a_used_up_call_and_counts_it(tape: Path) -> None:
    replies, code, err = twice(replay_command(tape, "--allow-repeats"))
    assert code == 0, err
    assert replies[0]["result"] == replies[1]["result"]
    assert "cassette: 1 request(s) answered again with their last recording (allow_repeats)" in (
        err.splitlines()
    )


def test_without_it_the_miss_suggests_what_would_answer(tape: Path) -> None:
    replies, code, _ = twice(replay_command(tape))
    assert code == 1
    message = str(replies[1]["error"]["message"])  # type: ignore[index]
    assert "allow_repeats (--allow-repeats) would answer it again" in message
    assert "the loose strategy" not in message  # loose has nothing else of add_note


def test_the_project_setting_allows_repeats(tape: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.cassette]\nallow-repeats = true\n")
    replies, code, err = twice(replay_command(tape), cwd=tmp_path)
    assert code == 0, err
    assert "result" in replies[1]
    (tmp_path / "pyproject.toml").write_text('[tool.cassette]\nallow-repeats = "yes"\n')
    bad = subprocess.run(
        replay_command(tape),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=scaled(60),
        check=False,
    )
    assert bad.returncode == 2
    assert "[tool.cassette] allow-repeats must be true or false" in bad.stderr
