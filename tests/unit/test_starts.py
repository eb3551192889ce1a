"""Server starts in one cassette: splitting, counting, the run a start belongs to, the
replay's start counter and the recorder's note, with plain values and real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cassette.core.model import ExitEvent, Header, MessageEvent, RecorderInfo, StderrEvent
from cassette.core.sessions import ReplaySessions
from cassette.core.starts import count_starts, split_starts, start_of
from cassette.store.destination import Destination
from cassette.store.lock import FileLock
from cassette.store.start_append import tagged
from cassette.store.starts import (
    RUN_VAR,
    claim_start,
    client_run,
    next_start,
    remember,
    restart_number,
)
from cassette.store.storage import Cassette

HEADER = Header("stdio", RecorderInfo("cassette-mcp", "0"), "2026-01-01T00:00:00Z", era="legacy")


def message(direction: str, body: dict[str, Any], start: int | None = None) -> MessageEvent:
    meta = None if start is None else {"start": start}
    return MessageEvent(0.0, direction, {"jsonrpc": "2.0", **body}, meta)  # type: ignore[arg-type]


def session(text: str, start: int | None) -> list[Any]:
    """One start's session: initialize, then ``visit`` answered with ``text``."""
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c"}}
    result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {}}
    call = {"name": "visit", "arguments": {}}
    return [
        message("c2s", {"id": 0, "method": "initialize", "params": init}, start),
        message("s2c", {"id": 0, "result": result}, start),
        message("c2s", {"id": 1, "method": "tools/call", "params": call}, start),
        message("s2c", {"id": 1, "result": {"content": [{"type": "text", "text": text}]}}, start),
        ExitEvent(0.1, 0),
    ]


class Tape:
    def __init__(self, events: list[Any]) -> None:
        self.header = HEADER
        self.events = tuple(events)
        self.source = "t.jsonl"


def test_events_without_a_start_are_start_one_and_others_follow_their_message() -> None:
    events = [*session("a", None), StderrEvent(0.2, "bye"), *session("b", 2)]
    assert [start_of(e) for e in events[:4]] == [None] * 4
    assert start_of(events[-2]) == 2
    assert count_starts(events) == 2
    first, second = split_starts(Tape(events))
    assert (first.number, first.of, second.number, second.of) == (1, 2, 2, 2)
    assert len(first.events) == 6  # its exit and the stderr line after it
    assert len(second.events) == 5
    assert count_starts(session("a", None)) == 1
    assert len(split_starts(Tape(session("a", None)))) == 1


def test_a_start_is_tagged_and_timed_after_the_cassette() -> None:
    out = tagged(session("b", None), 3, after=2.5)
    assert [start_of(e) for e in out[:4]] == [3, 3, 3, 3]
    assert out[-1] == ExitEvent(2.6, 0)


def text_of(reply: Any) -> str:
    return str(reply.messages[-1]["result"]["content"][0]["text"])


def visit(responder: Any) -> str:
    responder.start()
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c"}}
    responder.receive({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": init})
    call = {"name": "visit", "arguments": {}}
    return text_of(
        responder.receive({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": call})
    )


def test_sessions_take_the_starts_in_order_and_begin_again_after_the_last() -> None:
    tape = Tape([*session("one", None), *session("two", 2)])
    pool = ReplaySessions(tape)
    unused = pool.new()  # an HTTP front's shared session: no client, no start taken
    assert [visit(pool.new()) for _ in range(3)] == ["one", "two", "one"]
    pool.release(unused)
    assert ReplaySessions(tape, first_start=2).starts == 2
    assert visit(ReplaySessions(tape, first_start=2).new()) == "two"


def test_a_miss_of_a_later_start_says_the_client_restarted_the_server() -> None:
    pool = ReplaySessions(Tape([*session("one", None), *session("two", 2)]), first_start=2)
    responder = pool.new()
    visit(responder)
    reply = responder.receive({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {}})
    assert reply.miss is not None
    described = responder.describe(reply.miss)
    assert "served from start 2 of 2: the client started the server again" in described
    assert "meta.start = N" in reply.messages[0]["error"]["message"]


def test_the_start_counter_goes_round_per_cassette_and_run(tmp_path: Path) -> None:
    assert [next_start(n, 3) for n in (0, 1, 2, 3)] == [1, 2, 3, 1]
    claims = [claim_start("digest", "run-a", 3, folder=tmp_path) for _ in range(4)]
    assert claims == [1, 2, 3, 1]
    assert claim_start("digest", "run-b", 3, folder=tmp_path) == 1  # another run
    assert claim_start("other", "run-a", 3, folder=tmp_path) == 1  # another cassette
    assert claim_start("digest", None, 3, folder=tmp_path) == 1  # no run: the first
    assert claim_start("digest", "run-a", 1, folder=tmp_path) == 1


def test_a_restart_is_the_same_run_finding_the_file_as_it_left_it(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    tape.write_text("one start\n")
    state = tmp_path / "state"
    assert restart_number(tape, "run-a", folder=state) is None  # nothing remembered
    remember(tape, "run-a", 1, folder=state)
    assert restart_number(tape, "run-a", folder=state) == 2
    assert restart_number(tape, "run-b", folder=state) is None
    assert restart_number(tape, None, folder=state) is None
    remember(tape, "run-a", 2, folder=state)
    assert restart_number(tape, "run-a", folder=state) == 3
    tape.write_text("recorded again\n")  # changed since the run left it
    assert restart_number(tape, "run-a", folder=state) is None
    note = next(state.iterdir())
    note.write_text(json.dumps({"run": "run-a", "starts": "x"}))
    assert restart_number(tape, "run-a", folder=state) is None


def test_a_loop_of_links_is_no_restart_and_no_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    state = tmp_path / "state"
    remember(loop, "run-a", 1, folder=state)
    assert restart_number(loop, "run-a", folder=state) is None


def test_the_client_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client_run({RUN_VAR: "test-1"}, tty=True) == "named:test-1"
    assert client_run({}, tty=True) is None  # a person at a terminal is no client
    run = client_run({}, tty=False)
    assert run is not None
    assert run.startswith(f"parent:{os.getppid()}:")
    assert client_run({}, tty=False) == run  # the same parent, the same run


def test_a_held_cassette_is_not_appended_to(tmp_path: Path) -> None:
    tape = tmp_path / "t.jsonl"
    Cassette(HEADER, tuple(session("one", None))).dump(tape)
    held = FileLock(tape)
    assert held.try_acquire()
    try:
        assert Destination.restart(tape, 2) is None
    finally:
        held.release()
    taken = Destination.restart(tape, 2)
    assert taken is not None
    assert taken.start == 2
    assert taken.writing.name == ".t.jsonl.start-2"
    taken.finish(False, happened=False)
