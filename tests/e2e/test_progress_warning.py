"""A cassette whose recording client asked for no progress has none to give: a client that
asks (a ``progressToken``) is told so once, on stderr and in the ``--log`` file, instead of
silently getting none where the live server would have sent some."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import OFFLINE_ENV, PY, ROOT, LineClient, record_command

pytestmark = pytest.mark.e2e

DUAL = [PY, str(ROOT / "tests" / "servers" / "dual_era_server.py")]


def _count(client: LineClient, msg_id: int, token: str | None) -> tuple[dict[str, Any], int]:
    """Call ``count`` (two steps); its answer and how many progress notifications came."""
    params: dict[str, Any] = {"name": "count", "arguments": {"steps": 2}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    client.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params})
    progress = 0
    while True:
        message = client.receive()
        if message.get("method") == "notifications/progress":
            progress += 1
        elif message.get("id") == msg_id and "method" not in message:
            return message, progress


def test_a_client_asking_for_progress_the_recording_lacks_is_told_in_the_log(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "t.jsonl"
    recording = LineClient(record_command(tape, DUAL, "--no-probe"))
    recording.initialize()
    recorded, none = _count(recording, 2, None)  # the recording client asks for no progress
    assert none == 0
    assert _count(recording, 3, None)[1] == 0
    assert recording.finish()[0] == 0

    live = LineClient(DUAL)
    live.initialize()
    assert _count(live, 2, "live-token")[1] == 2  # the live server sends it when asked
    live.finish()

    log = tmp_path / "replay.log"
    replay = LineClient(
        [PY, "-m", "cassette", "replay", str(tape), "--log", str(log)], env=OFFLINE_ENV
    )
    replay.initialize()
    answer, progress = _count(replay, 2, "tok")
    assert answer["result"] == recorded["result"]
    assert progress == 0
    again, _ = _count(replay, 3, "tok-2")  # told once a session
    assert "result" in again
    code, stderr = replay.finish()
    assert code == 0
    said = [line for line in log.read_text().splitlines() if "asks for progress" in line]
    assert len(said) == 1
    assert said[0].startswith("cassette: warning: the client asks for progress on tools/call")
    assert "the recording holds no progress notifications" in said[0]
    assert said[0] in stderr
