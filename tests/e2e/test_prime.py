"""``new_episodes --prime``: a stateful server started for a missed request first gets
the session's earlier requests, so it answers from the state the recording had.

The notes server counts the notes it keeps. The cassette holds one ``add_note``; a test
that adds a second note misses, and the fresh server it starts has kept none: it says
"1 note(s) kept" where the live session would say 2. With ``--prime`` it is told about
the first note before the second, and says 2; nothing of the priming is appended.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT, LineClient

pytestmark = pytest.mark.e2e

NOTES = [PY, str(ROOT / "examples" / "notes_server.py")]


def add_notes(tape: Path, *texts: str, extra: tuple[str, ...] = ()) -> list[str]:
    argv = [PY, "-m", "cassette", "record", "-o", str(tape), *extra, "--", *NOTES]
    client = LineClient(argv)
    try:
        client.initialize()
        out = []
        for text in texts:
            reply = client.request("tools/call", {"name": "add_note", "arguments": {"text": text}})
            out.append(reply["result"]["content"][0]["text"])
        code, err = client.finish()
        assert code == 0, err
    finally:
        client.kill_group()
    return out


@pytest.mark.parametrize(("prime", "second"), [(False, "1 note(s) kept"), (True, "2 note(s) kept")])
def test_prime_replays_the_session_s_earlier_requests(
    tmp_path: Path, prime: bool, second: str
) -> None:
    tape = tmp_path / "notes.jsonl"
    assert add_notes(tape, "a") == ["1 note(s) kept"]
    recorded = len(list(Cassette.load(tape).messages("c2s")))
    extra = ("--mode", "new_episodes", *(("--prime",) if prime else ()))
    assert add_notes(tape, "a", "b", extra=extra) == ["1 note(s) kept", second]
    appended = [m for m in Cassette.load(tape).messages("c2s")][recorded:]
    calls = [m for m in appended if m.get("method") == "tools/call"]
    assert [c["params"]["arguments"]["text"] for c in calls] == ["b"]  # priming not kept
