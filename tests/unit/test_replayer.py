"""The replayer: exchanges, causal order, id and token rewriting, misses, eras."""

from __future__ import annotations

from typing import Any

import attrs

from cassette.core.replay.replayer import Replayer
from cassette.core.wire.jsonrpc import METHOD_NOT_FOUND, REPLAY_MISS
from cassette.core.wire.model import (
    Era,
    Event,
    Header,
    MessageEvent,
    RawEvent,
    RecorderInfo,
    StderrEvent,
)


@attrs.frozen
class Tape:
    header: Header
    events: tuple[Event, ...]


def tape(*messages: tuple[str, dict[str, Any]], era: Era | None = "legacy") -> Tape:
    header = Header(transport="stdio", recorder=RecorderInfo("t", "0"), started_at="x", era=era)
    events = tuple(
        MessageEvent(t=float(i), dir=d, message=m, seq=i + 1)  # type: ignore[arg-type]
        for i, (d, m) in enumerate(messages)
    )
    return Tape(header, events)


def req(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def res(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def progress(token: Any, n: int) -> dict[str, Any]:
    return note("notifications/progress", {"progressToken": token, "progress": n})


def test_response_takes_the_live_id() -> None:
    r = Replayer(tape(("c2s", req(1, "tools/list")), ("s2c", res(1, {"tools": []}))))
    assert r.receive(req("abc", "tools/list")).messages == (res("abc", {"tools": []}),)


def test_progress_reaches_the_client_before_the_result_with_the_live_token() -> None:
    call = req(4, "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": 4}})
    r = Replayer(
        tape(
            ("c2s", call),
            ("s2c", progress(4, 1)),
            ("s2c", progress(4, 2)),
            ("s2c", res(4, {"content": []})),
        )
    )
    live = req(77, "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": "p"}})
    out = r.receive(live).messages
    assert out == (progress("p", 1), progress("p", 2), res(77, {"content": []}))


def test_progress_is_dropped_when_the_live_request_asked_for_none() -> None:
    call = req(4, "tools/call", {"name": "slow", "arguments": {}, "_meta": {"progressToken": 4}})
    r = Replayer(tape(("c2s", call), ("s2c", progress(4, 1)), ("s2c", res(4, {}))))
    out = r.receive(req(5, "tools/call", {"name": "slow", "arguments": {}})).messages
    assert out == (res(5, {}),)


def test_interleaved_requests_get_their_own_notifications() -> None:
    a = req(1, "tools/call", {"name": "a", "arguments": {}, "_meta": {"progressToken": "ta"}})
    b = req(2, "tools/call", {"name": "b", "arguments": {}, "_meta": {"progressToken": "tb"}})
    r = Replayer(
        tape(
            ("c2s", a),
            ("c2s", b),
            ("s2c", progress("ta", 1)),
            ("s2c", res(2, "B")),
            ("s2c", res(1, "A")),
        )
    )
    assert r.receive(req(10, "tools/call", b["params"])).messages == (res(10, "B"),)
    out = r.receive(req(11, "tools/call", a["params"])).messages
    assert out == (progress("ta", 1), res(11, "A"))


def test_notifications_after_the_response_follow_it() -> None:
    changed = note("notifications/tools/list_changed")
    r = Replayer(tape(("c2s", req(1, "tools/list")), ("s2c", res(1, [])), ("s2c", changed)))
    assert r.receive(req(1, "tools/list")).messages == (res(1, []), changed)


def test_client_notification_replays_what_it_caused() -> None:
    changed = note("notifications/tools/list_changed")
    r = Replayer(tape(("c2s", note("notifications/initialized")), ("s2c", changed)))
    assert r.receive(note("notifications/initialized")).messages == (changed,)
    assert r.receive(note("notifications/initialized")).messages == ()  # played once


def test_unknown_notification_gets_nothing_and_is_no_miss() -> None:
    r = Replayer(tape())
    assert r.receive(note("notifications/cancelled", {"requestId": 1})).messages == ()
    assert r.misses == []


def test_ping_is_answered_even_if_never_recorded() -> None:
    r = Replayer(tape())
    assert r.receive(req(9, "ping")).messages == (res(9, {}),)
    assert r.misses == []


def test_miss_is_an_error_to_that_request_alone() -> None:
    call = req(1, "tools/call", {"name": "echo", "arguments": {"message": "hello"}})
    r = Replayer(tape(("c2s", call), ("s2c", res(1, "ok"))))
    reply = r.receive(req(3, "tools/call", {"name": "echo", "arguments": {"message": "bye"}}))
    (error,) = reply.messages
    assert error["id"] == 3
    assert error["error"]["code"] == REPLAY_MISS
    assert '/message: recorded "hello", received "bye"' in error["error"]["message"]
    assert "closest recording: line 2" in error["error"]["message"]
    assert error["error"]["data"]["closestLine"] == 2
    assert reply.miss is not None
    # the session goes on: the recorded call still answers
    assert r.receive(req(4, "tools/call", call["params"])).messages == (res(4, "ok"),)
    assert "1 request(s) had no recording" in r.summary()


def test_miss_message_names_the_file_when_known() -> None:
    @attrs.frozen
    class Named(Tape):
        source: str = "tapes/x.jsonl"

    base = tape(("c2s", req(1, "tools/call", {"name": "t", "arguments": {"a": 1}})))
    r = Replayer(Named(base.header, base.events))
    (error,) = r.receive(req(2, "tools/call", {"name": "t", "arguments": {"a": 2}})).messages
    assert "closest recording: tapes/x.jsonl:2" in error["error"]["message"]


def test_legacy_cassette_answers_unrecorded_discover_like_a_legacy_server() -> None:
    r = Replayer(tape(("c2s", req(1, "initialize")), ("s2c", res(1, {}))))
    (error,) = r.receive(req(1, "server/discover")).messages
    assert error["error"]["code"] == METHOD_NOT_FOUND
    assert r.misses == []


def test_recorded_failed_probe_is_replayed_as_recorded() -> None:
    failed = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "nope"}}
    r = Replayer(tape(("c2s", req(1, "server/discover")), ("s2c", failed)))
    assert r.receive(req(5, "server/discover")).messages == ({**failed, "id": 5},)


def test_modern_only_cassette_refuses_initialize_as_its_server_would() -> None:
    # The recorded server listed no legacy revision: a live one answers -32022, so does the
    # replay (it used to answer the cassette's own -32001 miss); it still counts as a miss.
    r = Replayer(tape(("c2s", req(1, "server/discover")), ("s2c", res(1, {})), era="modern"))
    reply = r.receive(req(2, "initialize"))
    (error,) = reply.messages
    assert error["error"]["code"] == -32022
    assert reply.miss is not None
    assert r.misses


def test_raw_and_stderr_events_are_not_replayed() -> None:
    base = tape(("c2s", req(1, "tools/list")), ("s2c", res(1, [])))
    events = (
        base.events[0],
        RawEvent(t=0.5, dir="s2c", text="log line"),
        StderrEvent(t=0.6, text="more log"),
        base.events[1],
    )
    r = Replayer(Tape(base.header, events))
    assert r.receive(req(2, "tools/list")).messages == (res(2, []),)


def test_preamble_is_sent_at_start() -> None:
    hello = note("notifications/message", {"level": "info", "data": "hi"})
    r = Replayer(tape(("s2c", hello), ("c2s", req(1, "ping")), ("s2c", res(1, {}))))
    assert r.start().messages == (hello,)


def test_frames_that_are_not_json_rpc_get_protocol_errors() -> None:
    r = Replayer(tape())
    (parse,) = r.receive_frame(b"this is not json\n").messages
    assert parse["error"]["code"] == -32700
    assert parse["id"] is None
    (invalid,) = r.receive_frame(b'{"hello": 1}\n').messages
    assert invalid["error"]["code"] == -32600


def test_blank_lines_get_no_answer() -> None:
    r = Replayer(tape())
    assert r.receive_frame(b"\n").messages == ()
    assert r.receive_frame(b"  \r\n").messages == ()


def test_batch_is_answered_with_an_array() -> None:
    r = Replayer(tape(("c2s", req(1, "tools/list")), ("s2c", res(1, []))))
    out = r.receive([req(7, "tools/list"), note("notifications/initialized"), req(8, "ping")])
    assert out.messages == ([res(7, []), res(8, {})],)


def test_client_ids_may_be_reused_across_the_session() -> None:
    r = Replayer(
        tape(
            ("c2s", req(1, "tools/call", {"name": "a", "arguments": {}})),
            ("s2c", res(1, "A")),
            ("c2s", req(1, "tools/call", {"name": "b", "arguments": {}})),
            ("s2c", res(1, "B")),
        )
    )
    assert r.receive(req(1, "tools/call", {"name": "b", "arguments": {}})).messages == (
        res(1, "B"),
    )
    assert r.receive(req(1, "tools/call", {"name": "a", "arguments": {}})).messages == (
        res(1, "A"),
    )
