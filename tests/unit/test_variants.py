"""Variant sessions (issue 14): one cassette, a group per client the live server answered
differently, and each replayed session served by the group its handshake fits."""

from __future__ import annotations

from typing import Any

import attrs
import pytest

from cassette.core.eras.variant_plan import recorded_client
from cassette.core.eras.variants import Fit, choose, split
from cassette.core.replay.replayer import Replayer
from cassette.core.replay.sessions import ReplayPool
from cassette.core.tape.codec import decode, encode_line
from cassette.core.wire.model import MessageEvent
from cassette.errors import CassetteFormatError
from tests.unit.test_eras import DISCOVER, ENVELOPE, modern_req
from tests.unit.test_replayer import note, req, res, tape

SAMPLING = {"sampling": {}, "roots": {}}
ROOTS = {"roots": {"listChanged": True}}
BOTH_TOOLS = {"tools": [{"name": "echo"}, {"name": "sample"}]}
ONE_TOOL = {"tools": [{"name": "echo"}]}


def init(msg_id: Any, capabilities: dict[str, Any], version: str = "2025-06-18") -> Any:
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": {}}
    return req(msg_id, "initialize", params)


INIT_RESULT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {}}


def with_variant(main: Any, name: str, *messages: tuple[str, dict[str, Any]]) -> Any:
    """``main`` with a variant session appended, its events marked ``meta.variant``."""
    start = len(main.events) + 1
    extra = tuple(
        MessageEvent(t=float(i), dir=d, message=m, meta={"variant": name}, seq=start + i)  # type: ignore[arg-type]
        for i, (d, m) in enumerate(messages)
    )
    return attrs.evolve(main, events=(*main.events, *extra))


def legacy_session(capabilities: dict[str, Any], tools: Any) -> list[tuple[str, Any]]:
    return [
        ("c2s", init(1, capabilities)),
        ("s2c", res(1, INIT_RESULT)),
        ("c2s", note("notifications/initialized")),
        ("c2s", req(2, "tools/list")),
        ("s2c", res(2, tools)),
    ]


def inspector_tape() -> Any:
    main = tape(*legacy_session(SAMPLING, BOTH_TOOLS))
    return with_variant(main, "inspector", *legacy_session(ROOTS, ONE_TOOL))


def tools_seen(replayer: Replayer, capabilities: dict[str, Any]) -> list[str]:
    replayer.receive(init(7, capabilities))
    replayer.receive(note("notifications/initialized"))
    reply = replayer.receive(req(8, "tools/list"))
    return [t["name"] for t in reply.messages[-1]["result"]["tools"]]


def test_split_keeps_a_cassette_without_variants_whole() -> None:
    events = list(tape(*legacy_session(SAMPLING, BOTH_TOOLS)).events)
    main, variants = split(events)
    assert main is events
    assert variants == {}
    main, variants = split(inspector_tape().events)
    assert len(main) == 5
    assert list(variants) == ["inspector"]
    assert len(variants["inspector"]) == 5


def test_each_client_is_answered_from_the_session_its_capabilities_fit() -> None:
    cassette = inspector_tape()
    assert tools_seen(Replayer(cassette), ROOTS) == ["echo"]
    assert tools_seen(Replayer(cassette), SAMPLING) == ["echo", "sample"]


def test_a_client_no_session_fits_exactly_is_answered_from_the_closest() -> None:
    # elicitation only: the inspector session (roots) differs by two names, the main one
    # (sampling and roots) by three, and lists a tool only a sampling client is offered
    assert tools_seen(Replayer(inspector_tape()), {"elicitation": {}}) == ["echo"]
    # as far from both: the main recording
    both = {"elicitation": {}, "sampling": {}}
    assert tools_seen(Replayer(inspector_tape()), both) == ["echo", "sample"]


def test_the_order_of_preference_capabilities_then_era_then_the_main_recording() -> None:
    fits = [
        Fit("modern", frozenset({"sampling", "roots"})),
        Fit("legacy", frozenset({"roots"})),
        Fit("legacy", frozenset({"sampling", "roots"})),
    ]
    assert choose(fits, init(1, SAMPLING)) == 2  # same capabilities, same era
    assert choose(fits, init(1, ROOTS)) == 1
    # the same capabilities beat the same era: nothing can make up a tool listed only to others
    assert choose(fits[:2], init(1, SAMPLING)) == 0
    assert choose(fits[1:], modern_req(1, "server/discover")) == 0  # a tie: the first
    assert choose(fits, init(1, {"elicitation": {}})) == 1  # the same era, the first one


def test_a_probe_then_initialize_chooses_again() -> None:
    """A dual-era client probes ``server/discover`` first and falls back to ``initialize``:
    the fallback is its session, and chooses the group that answers it."""
    main = tape(
        ("c2s", modern_req(1, "server/discover", {"_meta": {**ENVELOPE}})),
        ("s2c", res(1, {**DISCOVER, "supportedVersions": ["2026-07-28"]})),
        ("c2s", modern_req(2, "tools/list")),
        ("s2c", res(2, BOTH_TOOLS)),
        era="modern",
    )
    cassette = with_variant(main, "legacy", *legacy_session({}, ONE_TOOL))
    replayer = Replayer(cassette)
    assert replayer.era == "modern"
    probe = replayer.receive(req(1, "server/discover", {"_meta": dict(ENVELOPE)}))
    assert "result" in probe.messages[0]
    assert tools_seen(replayer, {}) == ["echo"]
    assert replayer.era == "legacy"
    assert replayer.misses == []


def test_the_group_stays_once_a_session_is_under_way() -> None:
    replayer = Replayer(inspector_tape())
    assert tools_seen(replayer, ROOTS) == ["echo"]
    replayer.receive(init(9, SAMPLING))  # a second initialize: not a new session
    reply = replayer.receive(req(10, "tools/list"))
    assert reply.messages[-1]["result"] == ONE_TOOL


def test_unplayed_counts_the_main_recording_only() -> None:
    sessions = ReplayPool(inspector_tape())
    first = sessions.new()
    tools_seen(first, ROOTS)
    sessions.release(first)
    # the main recording's two requests were not played; the variant's never count
    assert [seq for seq, _ in sessions.unplayed()] == [1, 4]
    second = sessions.new()
    tools_seen(second, SAMPLING)
    sessions.release(second)
    assert sessions.unplayed() == []


def test_a_variant_is_a_meta_member_the_reader_checks() -> None:
    cassette = inspector_tape()
    data = b"".join(encode_line(e) for e in (cassette.header, *cassette.events))
    assert b'"meta":{"variant":"inspector"}' in data
    decoded = decode(data, "t.jsonl")
    assert [e.meta for e in decoded.events][-1] == {"variant": "inspector"}
    bad = data.replace(b'{"variant":"inspector"}', b'{"variant":7}', 1)
    with pytest.raises(CassetteFormatError, match=r"meta\.variant: must be a string"):
        decode(bad, "t.jsonl")


def test_recorded_client_keeps_what_a_variant_sends_again_and_answers() -> None:
    session = tape(
        ("c2s", modern_req(1, "server/discover")),
        ("s2c", res(1, DISCOVER)),
        ("c2s", req(2, "tools/call", {"name": "ask", "_meta": {**ENVELOPE, "progressToken": 5}})),
        (
            "s2c",
            res(
                2,
                {
                    "resultType": "input_required",
                    "inputRequests": {"k": {"method": "elicitation/create", "params": {}}},
                },
            ),
        ),
        ("c2s", modern_req(3, "tools/call", {"name": "ask", "inputResponses": {"k": {"a": 1}}})),
        ("s2c", res(3, {"content": []})),
        ("c2s", modern_req(4, "ping")),
        ("s2c", res(4, {})),
        ("s2c", req(90, "roots/list")),
        ("c2s", res(90, {"roots": [{"uri": "file:///x"}]})),
        ("s2c", req(91, "sampling/createMessage")),
        ("c2s", {"jsonrpc": "2.0", "id": 91, "error": {"code": -32603, "message": "no"}}),
        ("c2s", modern_req(5, "tools/list")),  # never answered: not sent again
        era="modern",
    )
    client = recorded_client("modern", list(session.events))
    assert client.era == "modern"
    # the cassette's line of each request (the header is line 1); the envelope is dropped
    assert client.requests == ((4, "tools/call", {"name": "ask", "_meta": {"progressToken": 5}}),)
    assert client.answers == {
        "elicitation/create": {"result": {"a": 1}},
        "roots/list": {"result": {"roots": [{"uri": "file:///x"}]}},
        "sampling/createMessage": {"error": {"code": -32603, "message": "no"}},
    }


def enveloped(msg_id: Any, method: str, capabilities: dict[str, Any]) -> Any:
    meta = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": capabilities}
    return req(msg_id, method, {"_meta": meta})


def modern_session(capabilities: dict[str, Any], tools: Any) -> list[tuple[str, Any]]:
    return [
        ("c2s", enveloped(1, "server/discover", capabilities)),
        ("s2c", res(1, DISCOVER)),
        ("c2s", enveloped(2, "tools/list", capabilities)),
        ("s2c", res(2, tools)),
    ]


def test_over_stateless_http_each_request_is_answered_from_the_group_its_envelope_fits() -> None:
    """One replayer serves every 2026-07-28 client of an HTTP front: each request's
    envelope says who asks, and each group goes on from where it was left."""
    main = tape(*modern_session(SAMPLING, BOTH_TOOLS), era="modern")
    replayer = Replayer(with_variant(main, "bare", *modern_session({}, ONE_TOOL)))

    def listed(msg_id: int, capabilities: dict[str, Any]) -> Any:
        reply = replayer.receive(enveloped(msg_id, "tools/list", capabilities))
        return reply.messages[-1]["result"]

    replayer.receive(enveloped(1, "server/discover", SAMPLING))
    assert listed(2, SAMPLING) == BOTH_TOOLS
    assert listed(3, {}) == ONE_TOOL
    assert listed(4, SAMPLING) == BOTH_TOOLS
    assert replayer.misses == []


def test_a_client_that_never_ran_a_handshake_is_known_by_its_envelope() -> None:
    """The SDK's 2026-07-28 mode adopts the revision without ``server/discover``: its
    capabilities and name are in every request's envelope, and a variant keeps them."""
    capabilities = {"sampling": {}, "roots": {}}
    meta = {
        **ENVELOPE,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "sdk", "version": "2"},
    }
    session = tape(
        ("c2s", req(1, "tools/list", {"_meta": meta})),
        ("s2c", res(1, ONE_TOOL)),
        era="modern",
    )
    client = recorded_client("modern", list(session.events))
    assert client.capabilities == capabilities
    assert client.client_info == {"name": "sdk", "version": "2"}
    assert client.requests == ((2, "tools/list", {}),)


def test_a_recording_without_a_handshake_is_chosen_by_its_envelope() -> None:
    """A 2026-07-28 client that never probed (the SDK's 2026-07-28 mode) recorded the
    main session; its legacy variant must not take that same client's requests."""
    main = tape(
        ("c2s", enveloped(1, "tools/list", SAMPLING)),
        ("s2c", res(1, BOTH_TOOLS)),
        era="modern",
    )
    cassette = with_variant(main, "legacy", *legacy_session(SAMPLING, ONE_TOOL))
    replayer = Replayer(cassette)
    first = replayer.receive(enveloped(5, "tools/list", SAMPLING))
    assert first.messages[-1]["result"] == BOTH_TOOLS
    second = replayer.receive(enveloped(6, "tools/list", SAMPLING))
    assert second.messages[-1]["result"] == BOTH_TOOLS
    assert replayer.misses == []
    assert tools_seen(Replayer(cassette), SAMPLING) == ["echo"]  # a legacy client: its own


def test_a_probe_goes_to_a_group_that_can_answer_it() -> None:
    """No recorded ``server/discover`` in the main group (its client never probed): a
    dual-era client's probe is answered by the legacy variant, as a legacy server answers
    it, so the client falls back to ``initialize`` there, with no miss."""
    main = tape(
        ("c2s", enveloped(1, "tools/list", SAMPLING)),
        ("s2c", res(1, BOTH_TOOLS)),
        era="modern",
    )
    replayer = Replayer(with_variant(main, "legacy", *legacy_session(SAMPLING, ONE_TOOL)))
    probe = replayer.receive(enveloped(1, "server/discover", SAMPLING))
    assert probe.messages[0]["error"]["code"] == -32601
    assert tools_seen(replayer, SAMPLING) == ["echo"]
    assert replayer.misses == []
