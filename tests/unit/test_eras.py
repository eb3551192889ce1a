"""Serving a client of the other era, and a client's capabilities: plain values in and out."""

from __future__ import annotations

from typing import Any

from cassette.core.eras.bridge import (
    client_era,
    initialize_from_discover,
    is_input_required,
    legacy_shape,
    legacy_status,
    legacy_versions,
)
from cassette.core.replay.replayer import Replayer
from cassette.core.wire.jsonrpc import REPLAY_MISS
from tests.unit.test_replayer import note, req, res, tape

ENVELOPE = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
DISCOVER = {
    "supportedVersions": ["2026-07-28", "2025-06-18", "2025-11-25"],
    "capabilities": {"tools": {}, "logging": {}},
    "serverInfo": {"name": "demo", "version": "1.0"},
    "instructions": "be nice",
}


def modern_req(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return req(msg_id, method, {**(params or {}), "_meta": dict(ENVELOPE)})


def modern_tape(*more: tuple[str, dict[str, Any]], discover: dict[str, Any] = DISCOVER) -> Any:
    return tape(
        ("c2s", modern_req(1, "server/discover")), ("s2c", res(1, discover)), *more, era="modern"
    )


def test_client_era_reads_the_message() -> None:
    assert client_era(req(1, "initialize")) == "legacy"
    assert client_era(req(1, "server/discover")) == "modern"
    assert client_era(modern_req(1, "tools/list")) == "modern"
    assert client_era(req(1, "tools/list")) is None


def test_legacy_versions_newest_first_and_only_legacy() -> None:
    assert legacy_versions(DISCOVER) == ["2025-11-25", "2025-06-18"]
    assert legacy_versions({"supportedVersions": ["2026-07-28"]}) == []
    assert legacy_versions({}) == []


def test_initialize_from_discover_gives_the_asked_version_when_listed() -> None:
    asked = initialize_from_discover(DISCOVER, "2025-06-18")
    assert asked is not None
    assert asked["protocolVersion"] == "2025-06-18"
    assert asked["serverInfo"] == {"name": "demo", "version": "1.0"}
    assert asked["instructions"] == "be nice"
    newest = initialize_from_discover(DISCOVER, "2024-11-05")
    assert newest is not None
    assert newest["protocolVersion"] == "2025-11-25"
    assert initialize_from_discover({"supportedVersions": ["2026-07-28"]}, "2025-06-18") is None


def test_legacy_shape_drops_only_modern_members() -> None:
    message = res(
        3,
        {
            "tools": [],
            "resultType": "complete",
            "ttlMs": 5,
            "_meta": {"io.modelcontextprotocol/x": 1, "mine": 2},
        },
    )
    assert legacy_shape(message) == res(3, {"tools": [], "_meta": {"mine": 2}})
    plain = res(3, {"tools": []})
    assert legacy_shape(plain) == plain
    assert legacy_shape([1]) == [1]


def test_legacy_status_answers_an_error_at_200() -> None:
    """A modern server's 404 for Method not found would end a legacy client's session."""
    assert legacy_status(404) == 200
    assert legacy_status(400) == 200
    assert legacy_status(202) == 202
    assert legacy_status(None) is None


def test_input_required_is_recognised() -> None:
    assert is_input_required(res(1, {"resultType": "input_required"}))
    assert not is_input_required(res(1, {"resultType": "complete"}))
    assert not is_input_required("x")


def test_legacy_client_on_modern_cassette_is_served_from_discover() -> None:
    r = Replayer(
        modern_tape(
            ("c2s", modern_req(2, "tools/list")),
            ("s2c", res(2, {"tools": [{"name": "echo"}], "resultType": "complete", "ttlMs": 10})),
        )
    )
    init = r.receive(req(7, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    (answer,) = init.messages
    assert answer["id"] == 7
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["capabilities"] == DISCOVER["capabilities"]
    assert init.miss is None
    assert r.receive(note("notifications/initialized")).messages == ()
    (tools,) = r.receive(req(8, "tools/list")).messages
    assert tools == res(8, {"tools": [{"name": "echo"}]})
    assert not r.misses


def test_legacy_client_on_modern_cassette_gets_log_messages_as_legacy_sessions_do() -> None:
    """A 2026-07-28 server logs only at the level a request's ``_meta`` asks; a legacy
    session gets every message until ``logging/setLevel`` says otherwise. A legacy client
    of a modern cassette is a legacy session: the recorded messages reach it."""
    log = {"jsonrpc": "2.0", "method": "notifications/message"}
    info = {**log, "params": {"level": "info", "data": "counting"}}
    debug = {**log, "params": {"level": "debug", "data": "detail"}}
    recorded = modern_tape(
        ("c2s", modern_req(2, "tools/call", {"name": "count"})),
        ("s2c", info),
        ("s2c", debug),
        ("s2c", res(2, {"content": [], "resultType": "complete"})),
    )
    r = Replayer(recorded)
    r.receive(req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    first = r.receive(req(3, "tools/call", {"name": "count"})).messages
    assert first == (info, debug, res(3, {"content": []}))
    leveled = Replayer(recorded)
    leveled.receive(req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    leveled.receive(req(4, "logging/setLevel", {"level": "info"}))
    second = leveled.receive(req(5, "tools/call", {"name": "count"})).messages
    assert second == (info, res(5, {"content": []}))
    modern = Replayer(recorded)
    modern.receive(modern_req(1, "server/discover"))
    (only,) = modern.receive(modern_req(3, "tools/call", {"name": "count"})).messages
    assert only["id"] == 3  # a modern request that asked for no level: no log messages


def test_legacy_client_on_modern_only_cassette_gets_unsupported_version() -> None:
    r = Replayer(modern_tape(discover={"supportedVersions": ["2026-07-28"]}))
    reply = r.receive(req(1, "initialize", {"protocolVersion": "2025-06-18"}))
    (error,) = reply.messages
    assert error["error"]["code"] == -32022
    assert error["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-06-18"}
    assert "record --era legacy" in error["error"]["message"]
    assert reply.miss is not None


def test_modern_client_on_legacy_cassette_gets_unsupported_version() -> None:
    r = Replayer(
        tape(
            ("c2s", req(1, "initialize", {"protocolVersion": "2025-06-18"})),
            ("s2c", res(1, {"protocolVersion": "2025-06-18", "capabilities": {}})),
            ("c2s", req(2, "tools/list")),
            ("s2c", res(2, {"tools": []})),
        )
    )
    probe = r.receive(modern_req(5, "server/discover"))
    assert probe.messages[0]["error"]["code"] == -32601  # a legacy server's answer
    reply = r.receive(modern_req(6, "tools/list"))
    (error,) = reply.messages
    assert error["error"]["code"] == -32022
    assert error["error"]["data"]["supported"] == ["2025-06-18"]
    assert reply.miss is not None


def test_input_required_to_a_legacy_client_is_an_error_naming_it() -> None:
    r = Replayer(
        modern_tape(
            ("c2s", modern_req(2, "tools/call", {"name": "ask"})),
            ("s2c", res(2, {"resultType": "input_required", "inputRequests": {}})),
        )
    )
    r.receive(req(1, "initialize", {"protocolVersion": "2025-11-25"}))
    reply = r.receive(req(3, "tools/call", {"name": "ask"}))
    (error,) = reply.messages
    assert error["id"] == 3
    assert error["error"]["code"] == REPLAY_MISS
    assert "input_required" in error["error"]["message"]
    assert reply.miss is not None


SAMPLE = {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]}
WROTE = {"role": "assistant", "content": {"type": "text", "text": "a haiku"}, "model": "m"}


def asking_tape() -> Any:
    """A modern tool call that asked for sampling the 2026-07-28 way, then completed."""
    asked = {"k": {"method": "sampling/createMessage", "params": SAMPLE}}
    retry = {"name": "ask", "inputResponses": {"k": WROTE}, "requestState": "S"}
    return modern_tape(
        ("c2s", modern_req(2, "tools/call", {"name": "ask"})),
        (
            "s2c",
            res(2, {"resultType": "input_required", "inputRequests": asked, "requestState": "S"}),
        ),
        ("c2s", modern_req(3, "tools/call", retry)),
        ("s2c", res(3, {"content": [{"type": "text", "text": "done"}], "resultType": "complete"})),
    )


def legacy_client(recorded: Any, capabilities: dict[str, Any]) -> Replayer:
    r = Replayer(recorded)
    r.receive(req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": capabilities}))
    return r


def test_input_required_reaches_a_legacy_client_as_server_requests() -> None:
    """As the live dual-era server does on a legacy session: it asks with sampling/
    createMessage, and the client's answer gets the result the recording holds next."""
    r = legacy_client(asking_tape(), {"sampling": {}})
    asked = r.receive(req(9, "tools/call", {"name": "ask"}))
    (request,) = asked.messages
    assert request == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "sampling/createMessage",
        "params": SAMPLE,
    }
    assert asked.awaiting == (0,)
    assert not asked.responded
    assert r.waiting == (0,)
    done = r.receive(res(0, WROTE))
    assert done.messages == (res(9, {"content": [{"type": "text", "text": "done"}]}),)
    assert done.origin == 9
    assert done.responded
    assert not done.warnings
    assert not r.misses
    assert r.waiting == ()


def test_input_round_answered_differently_is_a_warning() -> None:
    r = legacy_client(asking_tape(), {"sampling": {}})
    r.receive(req(9, "tools/call", {"name": "ask"}))
    done = r.receive(res(0, {**WROTE, "model": "other"}))
    assert done.messages[0]["id"] == 9
    assert any("inputResponses differ" in w for w in done.warnings)


def test_input_round_the_client_cannot_or_does_not_answer_is_a_miss() -> None:
    undeclared = legacy_client(asking_tape(), {})
    (error,) = undeclared.receive(req(9, "tools/call", {"name": "ask"})).messages
    assert error["error"]["code"] == REPLAY_MISS
    assert "input_required" in error["error"]["message"]
    silent = legacy_client(asking_tape(), {"sampling": {}})
    silent.receive(req(9, "tools/call", {"name": "ask"}))
    expired = silent.expire(0)
    (failed,) = expired.messages
    assert failed["id"] == 9
    assert failed["error"]["code"] == REPLAY_MISS
    assert expired.miss is not None
    assert silent.waiting == ()


def test_set_level_is_answered_as_the_recorded_capabilities_say() -> None:
    logs = Replayer(
        tape(
            ("c2s", req(1, "initialize")),
            ("s2c", res(1, {"protocolVersion": "2025-06-18", "capabilities": {"logging": {}}})),
        )
    )
    logs.receive(req(1, "initialize"))
    (ok,) = logs.receive(req(2, "logging/setLevel", {"level": "debug"})).messages
    assert ok == res(2, {})
    quiet = Replayer(
        tape(
            ("c2s", req(1, "initialize")),
            ("s2c", res(1, {"protocolVersion": "2025-06-18", "capabilities": {}})),
        )
    )
    quiet.receive(req(1, "initialize"))
    # No logging capability: the live server has no handler, so JSON-RPC's answer, no miss
    (absent,) = quiet.receive(req(2, "logging/setLevel", {"level": "debug"})).messages
    assert absent["error"] == {"code": -32601, "message": "Method not found"}
    assert quiet.misses == []
    unknown = Replayer(tape(("c2s", req(1, "tools/list")), ("s2c", res(1, {"tools": []}))))
    # No handshake recorded: the recording cannot tell, so a miss
    (miss,) = unknown.receive(req(2, "logging/setLevel", {"level": "debug"})).messages
    assert miss["error"]["code"] == REPLAY_MISS


def test_ping_and_set_level_from_a_2026_07_28_client_are_not_found() -> None:
    """That revision removed both: its servers answer -32601, whatever they advertise."""
    modern = Replayer(modern_tape())
    modern.receive(modern_req(1, "server/discover"))
    for msg_id, method in ((2, "ping"), (3, "logging/setLevel")):
        (answer,) = modern.receive(modern_req(msg_id, method, {"level": "info"})).messages
        assert answer["error"] == {"code": -32601, "message": "Method not found"}, method
    assert modern.misses == []


def roots_tape() -> Any:
    return tape(
        ("c2s", req(1, "initialize", {"capabilities": {"roots": {}}})),
        ("s2c", res(1, {"protocolVersion": "2025-06-18", "capabilities": {}})),
        ("c2s", req(2, "tools/call", {"name": "list_roots"})),
        ("s2c", req(0, "roots/list")),
        ("c2s", res(0, {"roots": []})),
        ("s2c", res(2, {"content": []})),
    )


def test_server_request_for_an_undeclared_capability_is_not_sent() -> None:
    r = Replayer(roots_tape())
    r.receive(req(1, "initialize", {"capabilities": {}}))
    reply = r.receive(req(2, "tools/call", {"name": "list_roots"}))
    assert reply.messages == (res(2, {"content": []}),)
    assert any("roots/list" in w for w in reply.warnings)
    assert reply.miss is None


def test_declared_capability_keeps_the_server_request() -> None:
    r = Replayer(roots_tape())
    r.receive(req(1, "initialize", {"capabilities": {"roots": {}}}))
    reply = r.receive(req(2, "tools/call", {"name": "list_roots"}))
    (ask,) = reply.messages
    assert ask["method"] == "roots/list"
    assert reply.awaiting == (ask["id"],)


def test_undeclared_capability_is_a_miss_under_strict() -> None:
    r = Replayer(roots_tape(), "strict")
    r.receive(req(1, "initialize", {"capabilities": {}}))
    reply = r.receive(req(2, "tools/call", {"name": "list_roots"}))
    assert reply.miss is not None
    assert "roots/list" in reply.miss.summary


def test_absent_null_and_empty_spell_the_same_request() -> None:
    from cassette.core.replay.matching import fingerprint

    bare = fingerprint(req(1, "prompts/get", {"name": "p"}))
    assert fingerprint(req(2, "prompts/get", {"name": "p", "arguments": {}})) == bare
    assert fingerprint(req(2, "prompts/get", {"name": "p", "arguments": None})) == bare
    assert fingerprint(req(2, "prompts/get", {"name": "p", "arguments": {"a": "1"}})) != bare
    call = fingerprint(req(1, "tools/call", {"name": "t"}))
    assert fingerprint(req(2, "tools/call", {"name": "t", "arguments": {}})) == call
    assert fingerprint(req(2, "tools/call", {"name": "t", "arguments": None})) == call
    assert fingerprint(req(2, "tools/call", {"name": "t", "arguments": {"x": None}})) != call
    assert fingerprint(req(1, "resources/list")) == fingerprint(req(1, "resources/list", {}))
    assert fingerprint(req(1, "tools/list", {"x": []})) != fingerprint(req(1, "tools/list"))


def test_fastmcp_prompt_without_arguments_replays_a_recording_with_them() -> None:
    r = Replayer(
        tape(
            ("c2s", req(1, "prompts/get", {"name": "p", "arguments": {}})),
            ("s2c", res(1, {"messages": []})),
        )
    )
    assert r.receive(req(9, "prompts/get", {"name": "p"})).messages == (res(9, {"messages": []}),)


def test_era_refusal_answers_the_other_eras_opening() -> None:
    from cassette.core.eras.bridge import era_refusal

    probe = era_refusal("legacy", modern_req(1, "server/discover"))
    assert probe is not None
    assert probe["error"]["code"] == -32601
    init = era_refusal("modern", req(2, "initialize", {"protocolVersion": "2025-06-18"}))
    assert init is not None
    assert init["error"]["code"] == -32022
    assert init["error"]["data"] == {"supported": ["2026-07-28"], "requested": "2025-06-18"}
    assert era_refusal("auto", req(3, "initialize")) is None
    assert era_refusal("legacy", req(3, "initialize")) is None
    assert era_refusal("modern", modern_req(4, "server/discover")) is None
    assert era_refusal("legacy", note("server/discover")) is None  # not a request


def test_served_clients_follows_the_table() -> None:
    from cassette.core.eras.bridge import recorded_handshake, served_clients

    events = modern_tape().events
    assert recorded_handshake(events) == DISCOVER
    assert "legacy clients" in served_clients("modern", DISCOVER)
    assert "need --era legacy" in served_clients("modern", {"supportedVersions": ["2026-07-28"]})
    assert "dual-era" in served_clients("legacy", None)
