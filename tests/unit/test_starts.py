"""Server starts in one cassette: splitting, counting, the run a start belongs to, the
replay's start counter and the recorder's note, with plain values and real files."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from cassette.core.replay.sessions import ReplayPool
from cassette.core.replay.starts import count_starts, split_starts, start_of
from cassette.core.wire.model import ExitEvent, Header, MessageEvent, RecorderInfo, StderrEvent
from cassette.store.destination import Destination
from cassette.store.lock import FileLock
from cassette.store.run_note import claiming, join, settle, sibling
from cassette.store.start_append import tagged
from cassette.store.starts import RUN_VAR, claim_start, client_run, next_start
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
    pool = ReplayPool(tape)
    unused = pool.new()  # an HTTP front's shared session: no client, no start taken
    assert [visit(pool.new()) for _ in range(3)] == ["one", "two", "one"]
    pool.release(unused)
    assert ReplayPool(tape, first_start=2).starts == 2
    assert visit(ReplayPool(tape, first_start=2).new()) == "two"


def test_a_miss_of_a_later_start_says_the_client_restarted_the_server() -> None:
    pool = ReplayPool(Tape([*session("one", None), *session("two", 2)]), first_start=2)
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


def test_the_client_run(monkeypatch: pytest.MonkeyPatch) -> None:
    assert client_run({RUN_VAR: "test-1"}, tty=True) == "named:test-1"
    assert client_run({}, tty=True) is None  # a person at a terminal is no client
    run = client_run({}, tty=False)
    assert run is not None
    assert run.startswith(f"parent:{os.getppid()}:")
    assert client_run({}, tty=False) == run  # the same parent, the same run


def first_start(tape: Path, run: str, state: Path) -> Any:
    """The run's first start takes the cassette: ticket 1, its lock held while it runs."""
    held = FileLock(tape)
    assert held.try_acquire()
    with claiming(tape, run, folder=state) as claim:
        assert claim.joined is None
        ticket = claim.took()
    tape.write_bytes(Cassette(HEADER, tuple(session("one", None))).dumps())
    return ticket, held


def later(tape: Path, run: str, state: Path, text: str) -> Any:
    """A later start of ``run``: joined, its session written to its sibling."""
    ticket = join(tape, run, folder=state)
    assert ticket is not None
    ticket.writing.write_bytes(Cassette(HEADER, tuple(session(text, None))).dumps())
    return ticket


def texts(tape: Path) -> list[tuple[int | None, str]]:
    return [
        (start_of(e), e.message["result"]["content"][0]["text"])
        for e in Cassette.load(tape).events
        if e.kind == "message" and "content" in (e.message.get("result") or {})
    ]


def test_a_start_that_overlaps_the_first_joins_the_run_and_waits_for_it(tmp_path: Path) -> None:
    tape, state = tmp_path / "t.jsonl", tmp_path / "state"
    first, held = first_start(tape, "run-a", state)
    assert join(tape, "run-b", folder=state) is None  # another run: a recording of its own
    second = later(tape, "run-a", state, "two")
    assert (first.ticket, second.ticket) == (1, 2)
    assert second.writing == sibling(tape, 2)
    assert settle(second, True, holding=None) is None  # the first start still runs
    assert second.writing.exists()
    assert settle(first, True, holding=held) is None  # the first start is the cassette
    held.release()
    assert texts(tape) == [(None, "one"), (2, "two")]
    assert not second.writing.exists()
    third = later(tape, "run-a", state, "three")  # the file as the run left it: a restart
    assert third.ticket == 3
    assert settle(third, True, holding=None) == 3
    assert count_starts(Cassette.load(tape).events) == 3


def test_starts_are_appended_in_the_order_they_began_and_a_failed_one_leaves_no_gap(
    tmp_path: Path,
) -> None:
    tape, state = tmp_path / "t.jsonl", tmp_path / "state"
    first, held = first_start(tape, "run-a", state)
    second = later(tape, "run-a", state, "two")
    third = later(tape, "run-a", state, "three")
    fourth = later(tape, "run-a", state, "four")
    assert settle(fourth, True, holding=None) is None
    assert settle(second, False, holding=None) is None  # failed: dropped, no number
    assert settle(first, True, holding=held) is None
    held.release()
    assert texts(tape) == [(None, "one")]  # the third still runs: the fourth waits for it
    assert settle(third, True, holding=None) == 2
    assert texts(tape) == [(None, "one"), (2, "three"), (3, "four")]


def test_a_start_whose_recorder_died_is_dropped(tmp_path: Path) -> None:
    tape, state = tmp_path / "t.jsonl", tmp_path / "state"
    first, held = first_start(tape, "run-a", state)
    dead = later(tape, "run-a", state, "lost")
    assert dead.own is not None
    dead.own.release()  # as the kernel does for a killed recorder
    assert settle(first, True, holding=held) is None
    held.release()
    assert not dead.writing.exists()
    assert texts(tape) == [(None, "one")]


def test_when_the_first_start_failed_the_next_becomes_the_cassette(tmp_path: Path) -> None:
    tape, state = tmp_path / "t.jsonl", tmp_path / "state"
    first, held = first_start(tape, "run-a", state)
    second = later(tape, "run-a", state, "two")
    tape.unlink()  # the first start failed: set aside as t.jsonl.failed
    assert settle(first, False, holding=held) is None
    held.release()
    assert settle(second, True, holding=None) == 1
    assert texts(tape) == [(None, "two")]


def test_a_changed_file_or_another_run_is_no_restart(tmp_path: Path) -> None:
    tape, state = tmp_path / "t.jsonl", tmp_path / "state"
    first, held = first_start(tape, "run-a", state)
    assert settle(first, True, holding=held) is None
    held.release()
    assert join(tape, None, folder=state) is None
    assert join(tape, "run-b", folder=state) is None
    tape.write_text(tape.read_text() + "\n")  # changed since the run left it
    assert join(tape, "run-a", folder=state) is None
    note = next(p for p in state.iterdir() if p.suffix == ".json")
    note.write_text(json.dumps({"run": "run-a", "tickets": "x", "open": {}}))
    assert join(tape, "run-a", folder=state) is None


def test_a_loop_of_links_is_no_restart_and_no_error(tmp_path: Path) -> None:
    loop = tmp_path / "loop.jsonl"
    os.symlink(loop, loop)
    state = tmp_path / "state"
    with claiming(loop, "run-a", folder=state) as claim:
        claim.took()
    assert join(loop, "run-a", folder=state) is not None  # the first start is open


def test_a_later_start_holds_the_cassette_only_when_nobody_does(tmp_path: Path) -> None:
    tape, state = tmp_path / "t.jsonl", tmp_path / "state"
    first, held = first_start(tape, "run-a", state)
    overlapping = Destination.later_start(later(tape, "run-a", state, "two"))
    assert overlapping.lock is None  # the first start holds it
    assert overlapping.writing.name == ".t.jsonl.start-2"
    assert overlapping.start == 2
    assert settle(first, True, holding=held) is None
    held.release()
    assert overlapping.finish(True) is None
    assert overlapping.appended == 2
    sequential = Destination.later_start(later(tape, "run-a", state, "three"))
    assert sequential.lock is not None  # nobody held it: another run goes to a sibling
    assert sequential.lock.held
    sequential.finish(False, happened=False)
    assert not sequential.lock.held
    assert texts(tape) == [(None, "one"), (2, "two")]
