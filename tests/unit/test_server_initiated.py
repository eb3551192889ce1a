"""The replay schedule of server-initiated traffic, on plain values: causal placement,
server ids, waiting for the client's answer, differing answers, timeouts, cancellation,
log levels, and the 2026-07-28 input-required round trip."""

from __future__ import annotations

from typing import Any

from cassette.core.replay.replayer import Replayer
from cassette.core.wire.jsonrpc import REPLAY_MISS
from tests.unit.test_replayer import note, req, res, tape

CALL = req(7, "tools/call", {"name": "sample", "arguments": {}})
SAMPLING = req(0, "sampling/createMessage", {"messages": [], "maxTokens": 10})
ANSWER = res(0, {"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"})
AFTER = note("notifications/message", {"level": "info", "data": "sampled"})
RESULT = res(7, {"content": [{"type": "text", "text": "done"}]})


def sampling_tape(**kwargs: Any) -> Any:
    return tape(
        ("c2s", CALL),
        ("s2c", SAMPLING),
        ("c2s", ANSWER),
        ("s2c", AFTER),
        ("s2c", RESULT),
        **kwargs,
    )


def test_server_request_is_sent_in_place_then_the_replay_waits_for_the_answer() -> None:
    r = Replayer(sampling_tape())
    first = r.receive(req(40, "tools/call", CALL["params"]))
    assert first.messages == ({**SAMPLING, "id": 0},)
    assert first.awaiting == (0,)
    assert first.origin == 40
    assert not first.responded
    assert r.waiting == (0,)
    then = r.receive(ANSWER)
    assert then.messages == (AFTER, res(40, RESULT["result"]))
    assert then.responded
    assert then.origin == 40
    assert r.waiting == ()


def test_server_ids_are_the_sessions_own_sequence() -> None:
    r = Replayer(
        tape(
            ("c2s", CALL),
            ("s2c", {**SAMPLING, "id": 5}),
            ("c2s", {**ANSWER, "id": 5}),
            ("s2c", RESULT),
            ("c2s", {**CALL, "id": 8}),
            ("s2c", {**SAMPLING, "id": 6}),
            ("c2s", {**ANSWER, "id": 6}),
            ("s2c", {**RESULT, "id": 8}),
        )
    )
    assert r.receive(CALL).messages[0]["id"] == 0
    r.receive(ANSWER)
    assert r.receive({**CALL, "id": 9}).messages[0]["id"] == 1
    assert r.receive({**ANSWER, "id": 1}).messages == (res(9, RESULT["result"]),)


def test_a_differing_answer_is_a_warning_naming_the_path() -> None:
    r = Replayer(sampling_tape())
    r.receive(CALL)
    changed = res(0, {**ANSWER["result"], "model": "other-model"})
    then = r.receive(changed)
    assert then.messages[-1] == RESULT
    (warning,) = then.warnings
    assert "sampling/createMessage" in warning
    assert '/model: recorded "m", received "other-model"' in warning
    assert r.misses == []


def test_under_strict_a_differing_answer_is_a_miss() -> None:
    r = Replayer(sampling_tape(), "strict")
    r.receive(CALL)
    then = r.receive(res(0, {**ANSWER["result"], "model": "other-model"}))
    (error,) = then.messages
    assert error["id"] == 7
    assert error["error"]["code"] == REPLAY_MISS
    assert "/model" in error["error"]["message"]
    assert r.misses[0].kind == "answer-differs"


def test_no_answer_in_time_fails_the_request_that_waited() -> None:
    r = Replayer(sampling_tape())
    r.receive(CALL)
    expired = r.expire(0)
    (error,) = expired.messages
    assert error["id"] == 7
    assert "did not answer sampling/createMessage (id 0)" in error["error"]["message"]
    assert r.misses[0].kind == "no-answer"
    assert r.receive(ANSWER).messages == ()  # too late: nothing waits for it any more


def test_cancelled_request_stops_its_replay() -> None:
    r = Replayer(sampling_tape())
    r.receive(CALL)
    cancelled = r.receive(note("notifications/cancelled", {"requestId": 7}))
    assert cancelled.messages == ()
    assert r.waiting == ()
    assert r.receive(ANSWER).messages == ()


def test_an_unrecorded_answer_is_not_waited_for() -> None:
    r = Replayer(tape(("c2s", CALL), ("s2c", SAMPLING), ("s2c", RESULT)))
    played = r.receive(CALL)
    assert played.messages == ({**SAMPLING, "id": 0}, RESULT)
    assert played.awaiting == ()


def log(level: str, data: str) -> dict[str, Any]:
    return note("notifications/message", {"level": level, "data": data})


def test_legacy_logging_honours_the_live_level() -> None:
    r = Replayer(
        tape(
            ("c2s", req(1, "logging/setLevel", {"level": "debug"})),
            ("s2c", res(1, {})),
            ("c2s", CALL),
            ("s2c", log("debug", "noise")),
            ("s2c", log("error", "bad")),
            ("s2c", RESULT),
        )
    )
    assert r.receive(CALL).messages == (log("debug", "noise"), log("error", "bad"), RESULT)
    r = Replayer(
        tape(
            ("c2s", req(1, "logging/setLevel", {"level": "debug"})),
            ("s2c", res(1, {})),
            ("c2s", CALL),
            ("s2c", log("debug", "noise")),
            ("s2c", log("error", "bad")),
            ("s2c", RESULT),
        )
    )
    level = r.receive(req(1, "logging/setLevel", {"level": "warning"}))
    assert level.messages == (res(1, {}),)  # the live level is the client's to choose
    assert r.receive(CALL).messages == (log("error", "bad"), RESULT)


def test_modern_logging_only_for_requests_that_asked() -> None:
    asked = {"name": "t", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "info"}}
    events = (
        ("c2s", req(1, "tools/call", asked)),
        ("s2c", log("info", "hello")),
        ("s2c", res(1, {})),
    )
    r = Replayer(tape(*events, era="modern"))
    assert r.receive(req(2, "tools/call", asked)).messages == (log("info", "hello"), res(2, {}))
    r = Replayer(tape(*events, era="modern"))
    silent = {"name": "t", "arguments": {}}
    assert r.receive(req(2, "tools/call", silent)).messages == (res(2, {}),)


def test_input_required_round_trip_matches_the_retry() -> None:
    first = req(1, "prompts/get", {"name": "p", "arguments": {}})
    need = res(
        1,
        {
            "resultType": "input_required",
            "inputRequests": {"who": {"method": "elicitation/create", "params": {}}},
            "requestState": "opaque-123",
        },
    )
    retry = req(
        2,
        "prompts/get",
        {
            "name": "p",
            "arguments": {},
            "inputResponses": {"who": {"action": "accept"}},
            "requestState": "opaque-123",
        },
    )
    done = res(2, {"resultType": "complete", "messages": []})
    r = Replayer(tape(("c2s", first), ("s2c", need), ("c2s", retry), ("s2c", done), era="modern"))
    assert r.receive({**first, "id": 10}).messages == ({**need, "id": 10},)
    live_retry = {**retry, "id": 11}
    assert r.receive(live_retry).messages == ({**done, "id": 11},)
    assert r.misses == []
    r = Replayer(tape(("c2s", first), ("s2c", need), ("c2s", retry), ("s2c", done), era="modern"))
    r.receive(first)
    changed = {
        **retry,
        "params": {**retry["params"], "inputResponses": {"who": {"action": "decline"}}},
    }
    reply = r.receive(changed)
    assert reply.messages == ({**done, "id": 2},)
    assert "inputResponses differ" in reply.warnings[0]
    assert '/who/action: recorded "accept", received "decline"' in reply.warnings[0]


def test_a_listen_stream_does_not_replay_its_recorded_end() -> None:
    listen = req("listen-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    ack = note(
        "notifications/subscriptions/acknowledged",
        {"_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"}},
    )
    closed = {
        "jsonrpc": "2.0",
        "id": "listen-1",
        "error": {"code": -32000, "message": "Connection closed"},
    }
    r = Replayer(tape(("c2s", listen), ("s2c", ack), ("s2c", closed), era="modern"))
    reply = r.receive(listen)
    assert reply.messages == (ack,)  # open until the client closes it, as live
    assert not reply.responded


def test_subscription_tags_follow_the_live_listen_request() -> None:
    tag = "io.modelcontextprotocol/subscriptionId"
    listen = req("listen-1", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    ack = note("notifications/subscriptions/acknowledged", {"_meta": {tag: "listen-1"}})
    touch = req(2, "tools/call", {"name": "touch", "arguments": {}})
    changed = note("notifications/tools/list_changed", {"_meta": {tag: "listen-1"}})
    r = Replayer(
        tape(
            ("c2s", listen),
            ("s2c", ack),
            ("c2s", touch),
            ("s2c", changed),
            ("s2c", res(2, "ok")),
            era="modern",
        )
    )
    (live_ack,) = r.receive({**listen, "id": "listen-7"}).messages
    assert live_ack["params"]["_meta"][tag] == "listen-7"
    live_changed, _ = r.receive(touch).messages
    assert live_changed["params"]["_meta"][tag] == "listen-7"


def test_an_unrecorded_listen_is_acknowledged_as_the_recorded_server_would() -> None:
    """A client that listens where the recording's client did not (Claude Code, on a
    Python SDK recording) gets what any 2026-07-28 server answers: an acknowledgement of
    the lists the recorded handshake says can change, and a stream left open; no miss."""
    tag = "io.modelcontextprotocol/subscriptionId"
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    discover = req(0, "server/discover", {"_meta": envelope})
    capabilities = {"tools": {"listChanged": True}, "prompts": {"listChanged": False}}
    found = res(0, {"supportedVersions": ["2026-07-28"], "capabilities": capabilities})
    r = Replayer(tape(("c2s", discover), ("s2c", found), era="modern"))
    r.receive(discover)
    asked = {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}
    listen = req("listen:0", "subscriptions/listen", {"_meta": envelope, "notifications": asked})
    reply = r.receive(listen)
    assert r.misses == []
    assert not reply.responded
    (ack,) = reply.messages
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    granted = {"toolsListChanged": True}
    assert ack["params"] == {"_meta": {tag: "listen:0"}, "notifications": granted}
