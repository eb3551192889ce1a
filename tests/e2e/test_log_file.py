"""``--log FILE`` and ``CASSETTE_LOG``: what ``record`` and ``replay`` print for people
also lands in a file, for clients that hide a server's stderr."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.support import MODERN_SERVER, OFFLINE_ENV, PY, LineClient, record_command

pytestmark = pytest.mark.e2e


def test_record_and_replay_log_to_a_file(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "record.log"
    recording = LineClient(record_command(tape, [PY, str(MODERN_SERVER)], "--log", str(log)))
    recording.initialize()
    recording.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert recording.finish()[0] == 0
    assert f"logging to {log}" in log.read_text()
    assert "wrote " in log.read_text()
    replay_log = tmp_path / "replay.log"
    env = {**OFFLINE_ENV, "CASSETTE_LOG": str(replay_log)}
    replay = LineClient([PY, "-m", "cassette", "replay", str(tape)], env=env)
    replay.initialize()
    missed = replay.request("tools/call", {"name": "add", "arguments": {"a": 9, "b": 9}})
    assert "error" in missed
    code, stderr = replay.finish()
    assert code == 1
    text = replay_log.read_text()
    assert f"logging to {replay_log}" in text
    assert "replaying " in text  # the banner
    assert "miss: " in text
    assert all(line in stderr for line in text.splitlines())  # the very lines of stderr
