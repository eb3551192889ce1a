"""One writer per cassette: concurrent ``record`` runs on one path never interleave.

An MCP client may start its configured server command twice at once. Here two and four
plain ``cassette record -o same.jsonl`` processes, each in front of the pinned
server-everything, run at the same time (all started before any session begins), each
with a session of its own (an ``echo`` with its own text). Afterwards there are exactly as
many cassettes as recorders (``same.jsonl``, ``same.2.jsonl``, ...), each one session
whole: it reads, ``lint`` finds no error, and it holds exactly its own echo. Each run was
told where it went.

``CASSETTE_STRESS_ROUNDS`` repeats it (the issue asks for 20 rounds of four; the regular
suite runs two of each).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from cassette.core.model import MessageEvent
from cassette.store.storage import Cassette
from cassette.tools.lint import lint_cassette
from tests.support import LineClient, everything_command, record_command

ROUNDS = int(os.environ.get("CASSETTE_STRESS_ROUNDS", "2"))


def _echoes(tape: Cassette) -> list[str]:
    return [
        e.message["params"]["arguments"]["message"]
        for e in tape.events
        if isinstance(e, MessageEvent)
        and e.dir == "c2s"
        and e.message.get("method") == "tools/call"
    ]


def _record_at_once(folder: Path, writers: int) -> list[str]:
    """``writers`` recorders of one path, overlapping; returns what each said on stderr."""
    tape = folder / "same.jsonl"
    server = everything_command()
    clients = [LineClient(record_command(tape, server)) for _ in range(writers)]
    try:
        for number, client in enumerate(clients):
            client.initialize()
            said = {"name": "echo", "arguments": {"message": f"session {number}"}}
            assert client.request("tools/call", said)["result"]["content"][0]["text"].endswith(
                f"session {number}"
            )
        results = [client.finish() for client in clients]
    finally:
        for client in clients:
            if client.proc.poll() is None:
                client.kill_group()
    assert [code for code, _ in results] == [0] * writers
    return [err for _, err in results]


@pytest.mark.parametrize("writers", [2, 4])
@pytest.mark.parametrize("round_", range(ROUNDS))
def test_concurrent_recorders_each_write_a_whole_cassette_of_their_own(
    tmp_path: Path, writers: int, round_: int
) -> None:
    said = _record_at_once(tmp_path, writers)
    names = sorted(p.name for p in tmp_path.iterdir())
    wanted = ["same.jsonl", *(f"same.{n}.jsonl" for n in range(2, writers + 1))]
    assert names == sorted(wanted)  # no lock, staging or failed file left behind
    echoes: list[str] = []
    for name in wanted:
        tape = Cassette.load(tmp_path / name)
        assert tape.warnings == ()  # no line cut or skipped
        assert [f for f in lint_cassette(tape) if f.severity == "error"] == []
        assert len(_echoes(tape)) == 1  # one session's messages, none of another's
        echoes += _echoes(tape)
    assert sorted(echoes) == sorted(f"session {n}" for n in range(writers))
    moved = [line for err in said for line in err.splitlines() if "is being recorded by" in line]
    assert len(moved) == writers - 1
    for line in moved:
        assert re.fullmatch(
            r"cassette: .*same\.jsonl is being recorded by process \d+; this session is "
            r"recorded to .*same\.\d\.jsonl",
            line,
        )
