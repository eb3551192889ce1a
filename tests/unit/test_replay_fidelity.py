"""Replay fidelity for clients that behave like real ones, on plain values: pages named by
the cursors the recording handed out, polls that outlast the recording, ``loose`` that never
crosses a key, requests the recording never answered, a server that exited mid-call, and
frames that are not one JSON-RPC message."""

from __future__ import annotations

import json
from typing import Any

import attrs
import pytest

from cassette.core.replay.replayer import Replayer
from cassette.core.replay.reply import Reply
from cassette.core.wire.jsonrpc import REPLAY_MISS
from cassette.core.wire.model import Event, ExitEvent, Header, MessageEvent, RawEvent, RecorderInfo

HEADER = Header(transport="stdio", recorder=RecorderInfo("t", "0"), started_at="x", era="legacy")


@attrs.frozen
class Tape:
    header: Header
    events: tuple[Event, ...]


def tape(*items: tuple[str, Any] | Event) -> Tape:
    """Events in order: ``("c2s", message)``, ``("s2c", message)``, or any event as is."""
    events: list[Event] = []
    for i, item in enumerate(items):
        if isinstance(item, tuple):
            direction, message = item
            events.append(MessageEvent(t=float(i), dir=direction, message=message, seq=i + 1))
        else:
            events.append(attrs.evolve(item, t=float(i), seq=i + 1))  # type: ignore[misc]
    return Tape(HEADER, tuple(events))


def req(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def res(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def cancel(request_id: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": request_id},
    }


def answer(reply: Reply) -> Any:
    """The response of a reply (the last message), its result or its error."""
    last = reply.messages[-1]
    return last.get("result", last.get("error"))


# -- pages ---------------------------------------------------------------------------------


def paged() -> Tape:
    return tape(
        ("c2s", req(1, "tools/list")),
        ("s2c", res(1, {"tools": [{"name": "a"}], "nextCursor": "p2"})),
        ("c2s", req(2, "tools/list", {"cursor": "p2"})),
        ("s2c", res(2, {"tools": [{"name": "b"}], "nextCursor": "p3"})),
        ("c2s", req(3, "tools/list", {"cursor": "p3"})),
        ("s2c", res(3, {"tools": [{"name": "c"}]})),
    )


def list_all(replayer: Replayer, start: int) -> list[str]:
    names: list[str] = []
    cursor: str | None = None
    for n in range(start, start + 3):
        params = {"cursor": cursor} if cursor is not None else None
        result = answer(replayer.receive(req(n, "tools/list", params)))
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if cursor is None:
            break
    return names


@pytest.mark.parametrize("strategy", ["default", "loose"])
def test_listing_every_page_twice_gets_the_same_pages(strategy: str) -> None:
    replayer = Replayer(paged(), strategy)
    assert list_all(replayer, 10) == ["a", "b", "c"]
    assert list_all(replayer, 20) == ["a", "b", "c"]  # used to give only the last page
    assert replayer.misses == []


def test_a_cursor_selects_its_page_whatever_the_order() -> None:
    replayer = Replayer(paged())
    assert answer(replayer.receive(req(1, "tools/list", {"cursor": "p3"})))["tools"] == [
        {"name": "c"}
    ]
    assert answer(replayer.receive(req(2, "tools/list")))["tools"] == [{"name": "a"}]


def test_strict_refuses_the_second_listing_and_an_unknown_cursor_takes_the_next_page() -> None:
    strict = Replayer(paged(), "strict")
    assert list_all(strict, 10) == ["a", "b", "c"]
    again = strict.receive(req(20, "tools/list"))
    assert again.miss is not None
    assert again.miss.kind == "already-played"

    unknown = Replayer(paged())  # a cursor the recording never handed out: pages in order
    first = answer(unknown.receive(req(1, "tools/list", {"cursor": "elsewhere"})))
    second = answer(unknown.receive(req(2, "tools/list", {"cursor": "elsewhere-2"})))
    assert (first["tools"], second["tools"]) == ([{"name": "a"}], [{"name": "b"}])


# -- polls and keys ------------------------------------------------------------------------


def task(task_id: str, status: str) -> dict[str, Any]:
    return {"taskId": task_id, "status": status}


def polled() -> Tape:
    return tape(
        ("c2s", req(1, "tasks/get", {"taskId": "t1"})),
        ("s2c", res(1, task("t1", "working"))),
        ("c2s", req(2, "tasks/get", {"taskId": "t2"})),
        ("s2c", res(2, task("t2", "working"))),
        ("c2s", req(3, "tasks/get", {"taskId": "t1"})),
        ("s2c", res(3, task("t1", "completed"))),
        ("c2s", req(4, "prompts/get", {"name": "a"})),
        ("s2c", res(4, {"messages": ["from a"]})),
    )


def poll(replayer: Replayer, task_id: str, times: int) -> list[Any]:
    out: list[Any] = []
    for n in range(times):
        reply = replayer.receive(req(100 + n, "tasks/get", {"taskId": task_id}))
        out.append(answer(reply).get("status") if reply.miss is None else "miss")
    return out


@pytest.mark.parametrize("strategy", ["default", "loose"])
def test_a_poll_that_outlasts_the_recording_keeps_seeing_the_final_status(strategy: str) -> None:
    replayer = Replayer(polled(), strategy)
    assert poll(replayer, "t1", 5) == [
        "working",
        "completed",
        "completed",
        "completed",
        "completed",
    ]
    assert poll(replayer, "t2", 2) == ["working", "working"]  # never t1's status
    assert replayer.misses == []


def test_fewer_polls_than_recorded_are_fine_and_strict_refuses_more() -> None:
    assert poll(Replayer(polled()), "t1", 1) == ["working"]
    assert poll(Replayer(polled(), "strict"), "t1", 3) == ["working", "completed", "miss"]


def test_loose_never_answers_with_another_task_prompt_or_resource() -> None:
    replayer = Replayer(polled(), "loose")
    assert poll(replayer, "t3", 1) == ["miss"]  # used to get another task's status
    other = replayer.receive(req(9, "prompts/get", {"name": "b"}))
    assert other.miss is not None  # used to get prompt a's content
    assert "prompts/get" in other.miss.summary
    same = replayer.receive(req(10, "prompts/get", {"name": "a", "arguments": {"x": 1}}))
    assert answer(same) == {"messages": ["from a"]}  # loose: the same prompt, other arguments


# -- requests the recording never answered -------------------------------------------------


def cancelled_call() -> Tape:
    return tape(
        ("c2s", req(1, "tools/call", {"name": "slow"})),
        (
            "c2s",
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}},
        ),
        ("c2s", req(2, "ping")),
        ("s2c", res(2, {})),
    )


def test_a_request_cancelled_while_recording_is_failed_at_its_deadline_naming_why() -> None:
    replayer = Replayer(cancelled_call())
    waiting = replayer.receive(req(7, "tools/call", {"name": "slow"}))
    assert waiting.unanswered
    assert waiting.messages == ()
    assert replayer.misses == []  # not yet: the live client may cancel it too
    failed = replayer.give_up(7)
    error = failed.messages[0]
    assert (error["id"], error["error"]["code"]) == (7, REPLAY_MISS)
    assert "the client cancelled it while recording" in error["error"]["message"]
    assert failed.responded
    assert [m.kind for m in replayer.misses] == ["no-answer"]


def test_a_live_cancellation_settles_it_with_no_answer() -> None:
    replayer = Replayer(cancelled_call())
    assert replayer.receive(req(7, "tools/call", {"name": "slow"})).unanswered
    replayer.receive(cancel(7))
    settled = replayer.give_up(7)
    assert (settled.messages, settled.responded, settled.origin) == ((), True, 7)
    assert replayer.misses == []


def test_a_server_exit_mid_call_fails_the_call_at_once_and_ends_the_session() -> None:
    crash = tape(
        ("c2s", req(1, "tools/call", {"name": "crash"})),
        ("s2c", {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "bye"}}),
        ExitEvent(t=0.0, code=1),
    )
    reply = Replayer(crash).receive(req(5, "tools/call", {"name": "crash"}))
    assert reply.closes
    assert reply.messages[0]["method"] == "notifications/message"  # what came before the exit
    error = reply.messages[-1]
    assert error["id"] == 5
    assert "the recorded server exited while it was open" in error["error"]["message"]
    assert reply.miss is not None
    assert reply.miss.kind == "no-answer"


def test_an_exit_after_every_answer_closes_nothing() -> None:
    ended = tape(("c2s", req(1, "ping")), ("s2c", res(1, {})), ExitEvent(t=0.0, code=0))
    reply = Replayer(ended).receive(req(1, "ping"))
    assert not reply.closes
    assert answer(reply) == {}


# -- frames that are not one message -------------------------------------------------------


def raw(direction: str, text: str) -> RawEvent:
    return RawEvent(t=0.0, dir=direction, text=text)  # type: ignore[arg-type]


def test_a_frame_the_server_ignored_is_ignored_and_its_answers_never_attach_elsewhere() -> None:
    null_id = '{"jsonrpc":"2.0","id":null,"method":"ping"}'
    float_id = '{"jsonrpc":"2.0","id":1.5,"method":"ping"}'
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "Invalid"}}
    recording = tape(
        ("c2s", req(1, "tools/list")),
        ("s2c", res(1, {"tools": []})),
        raw("c2s", null_id),
        raw("c2s", float_id),
        ("s2c", error),
    )
    replayer = Replayer(recording)
    ignored = replayer.receive_frame(null_id)
    assert ignored.messages == ()  # live, the server said nothing: neither does the replay
    spaced = json.dumps(json.loads(float_id), indent=1)  # the same frame, other spacing
    assert replayer.receive_frame(spaced).messages == (error,)
    listing = replayer.receive(req(2, "tools/list"))
    assert listing.messages == (res(2, {"tools": []}),)  # no foreign answer glued on
    never = replayer.receive_frame('{"jsonrpc":"2.0","id":true,"method":"ping"}')
    assert never.messages[0]["error"]["code"] == -32600  # never recorded: the standard error


def test_a_recorded_batch_is_answered_as_recorded() -> None:
    batch = '[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"x"}]'
    nope = {"code": -32601, "message": "nope"}
    answers = json.dumps([res(1, {}), {"jsonrpc": "2.0", "id": 2, "error": nope}])
    replayer = Replayer(tape(raw("c2s", batch), raw("s2c", answers)))
    reply = replayer.receive_frame(batch)
    assert reply.messages == (json.loads(answers),)
    assert reply.responded
