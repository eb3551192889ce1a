"""A client that writes its requests and reads no answer, through real pipes.

The replay writes answers from its reading loop when a write can be done at once
(``cassette.transport.Eager``). When the pipe to the client is full, what is left must go
to the writer task, and the reading loop must go on reading: a loop that waited on its own
write would stop reading the client, whose writes would then block too, and both
processes would wait for ever."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from cassette.core.wire.model import Header, MessageEvent, RecorderInfo
from cassette.store.storage import Cassette
from cassette.transports._fdio import unread_counter
from tests.helpers.support import kill_tree, replay_command

CALLS = 400  # ~190 KB of answers: three times what a pipe holds
DEADLINE = 20.0


def call(msg_id: int) -> dict[str, object]:
    arguments = {"message": f"hello {msg_id}"}
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": arguments},
    }


def answer(msg_id: int) -> dict[str, object]:
    text = f"Echo: hello {msg_id} " + "x" * 400
    return {"jsonrpc": "2.0", "id": msg_id, "result": {"content": [{"type": "text", "text": text}]}}


def write_tape(path: Path) -> None:
    header = Header(
        transport="stdio", recorder=RecorderInfo("t", "0"), started_at="x", era="legacy"
    )
    events = []
    for n in range(1, CALLS + 1):
        events.append(MessageEvent(t=n * 0.01, dir="c2s", message=call(n), seq=2 * n - 1))
        events.append(MessageEvent(t=n * 0.01 + 0.005, dir="s2c", message=answer(n), seq=2 * n))
    Cassette(header, tuple(events)).dump(path)


def consumed(unread: Callable[[], int | None], deadline: float) -> bool:
    """Whether the replay reads all we wrote to its stdin before ``deadline``."""
    while time.monotonic() < deadline:
        if unread() == 0:
            return True
        time.sleep(0.0005)  # the condition is polled; nothing waits on a guess
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIONREAD on a pipe is Linux's")
def test_a_client_that_does_not_read_its_answers_is_still_read(tmp_path: Path) -> None:
    tape = tmp_path / "many.jsonl"
    write_tape(tape)
    proc = subprocess.Popen(
        replay_command(tape, "-q"),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    unread = unread_counter(proc.stdin.fileno())
    assert unread is not None
    try:
        # One request at a time, each read by the replay before the next is written, and
        # no answer read: the answers fill the pipe to us after about 140 requests.
        for n in range(1, CALLS + 1):
            proc.stdin.write(json.dumps(call(n)).encode() + b"\n")
            proc.stdin.flush()
            assert consumed(unread, time.monotonic() + DEADLINE), (
                f"the replay stopped reading at request {n}, its output full"
            )
        proc.stdin.close()
        out = proc.stdout.read()
        assert proc.wait(DEADLINE) == 0
    finally:
        kill_tree(proc)
    answers = [json.loads(line) for line in out.splitlines()]
    assert [a["id"] for a in answers] == list(range(1, CALLS + 1))
    assert answers[-1] == answer(CALLS)
