"""Which recording answers a listing (``cassette.core.eras.listings``), with plain values: the
session recorded for the client, else the probe whose era and capabilities are the
client's, else the closest probe with a warning; pages; older cassettes as before."""

from __future__ import annotations

from typing import Any

import attrs

from cassette.core.eras.listings import distance, listing_key
from cassette.core.replay.replayer import Replayer
from cassette.core.wire.model import MessageEvent
from tests.unit.test_eras import modern_req, modern_tape
from tests.unit.test_replayer import note, req, res, tape
from tests.unit.test_variants import INIT_RESULT, init, legacy_session, tools_seen, with_variant

ROOTS = {"roots": {"listChanged": True}}
ELICIT = {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}
PROMPTS = {"prompts": [{"name": "greet"}]}


def tools(*names: str) -> dict[str, Any]:
    return {"tools": [{"name": n} for n in names]}


def with_probe(cassette: Any, name: str, *messages: tuple[str, dict[str, Any]]) -> Any:
    """``cassette`` with a probe's lines appended, each marked ``meta.probe``."""
    start = len(cassette.events) + 1
    extra = tuple(
        MessageEvent(t=0.0, dir=d, message=m, meta={"probe": name}, seq=start + i)  # type: ignore[arg-type]
        for i, (d, m) in enumerate(messages)
    )
    return attrs.evolve(cassette, events=(*cassette.events, *extra))


def legacy_probe(capabilities: dict[str, Any], listed: dict[str, Any]) -> list[Any]:
    ids = iter(range(1, 10))
    out: list[Any] = [("c2s", init("p0", capabilities)), ("s2c", res("p0", INIT_RESULT))]
    for method, result in listed.items():
        n = f"p{next(ids)}"
        out += [("c2s", req(n, method, {})), ("s2c", res(n, result))]
    return out


def probed() -> Any:
    """A plain recording (a bare client listed its tools) and the probes beside it."""
    main = tape(*legacy_session({}, tools("echo")))
    listed = {"tools/list": tools("echo"), "prompts/list": PROMPTS}
    main = with_probe(main, "legacy:bare", *legacy_probe({}, listed))
    roots = {"tools/list": tools("echo", "roots"), "prompts/list": PROMPTS}
    main = with_probe(main, "legacy:gemini-cli", *legacy_probe(ROOTS, roots))
    both = {"tools/list": tools("echo", "roots", "elicit"), "prompts/list": PROMPTS}
    return with_probe(main, "legacy:claude-code", *legacy_probe(ELICIT, both))


def test_distance_weighs_a_capability_over_a_sub_flag() -> None:
    assert distance(ROOTS, ROOTS) == 0
    assert distance(ELICIT, {"roots": {"listChanged": True}, "elicitation": {"form": {}}}) == 1
    assert distance({}, {"roots": {}}) == 4
    assert distance({}, {"experimental": {}}) == 2


def test_the_listing_key_is_what_a_server_may_list_by() -> None:
    assert listing_key(ELICIT) == {"roots", "elicitation.form", "elicitation.url"}
    # an empty elicitation object is form elicitation, as the protocol says
    assert listing_key({"elicitation": {}}) == listing_key({"elicitation": {"form": {}}})
    assert listing_key({"elicitation": {"url": {}}}) == {"elicitation.url"}
    # neither a promise of notifications nor an extension is something to list by
    inspector = {**ROOTS, "extensions": {"io.modelcontextprotocol/tasks": {}}}
    assert listing_key(inspector) == listing_key({"roots": {}}) == {"roots"}
    assert listing_key({"experimental": {"x": {}}}) == listing_key(None) == frozenset()


def test_a_client_of_a_probes_listing_key_gets_its_listing_with_nothing_to_tell() -> None:
    """The Inspector declares roots and extensions: the probe of roots is its key's."""
    replayer = Replayer(probed())
    replayer.receive(init(1, {"roots": {}, "extensions": {"io.modelcontextprotocol/tasks": {}}}))
    reply = replayer.receive(req(2, "tools/list"))
    assert reply.messages[-1]["result"] == tools("echo", "roots")
    assert not [w for w in reply.warnings if "probe" in w]
    assert replayer.misses == []


def test_the_clients_listing_key_comes_before_the_fewest_differences() -> None:
    """A probe one sub-flag away (URL elicitation, which some servers list by) loses to
    the probe of the client's key, however many other members that one lacks."""
    main = tape(*legacy_session({}, tools("echo")))
    form = {"elicitation": {"form": {}}, "extensions": {"a": {}}, "experimental": {"b": {}}}
    main = with_probe(main, "legacy:form", *legacy_probe(form, {"tools/list": tools("form")}))
    both = {"elicitation": {"form": {}, "url": {}}}
    main = with_probe(main, "legacy:url", *legacy_probe(both, {"tools/list": tools("url")}))
    client = {**form, "elicitation": {"form": {}, "url": {}}}
    assert distance(form, client) < distance(both, client)
    assert tools_seen(Replayer(main), client) == ["url"]


def test_the_recording_client_is_answered_from_its_own_session() -> None:
    replayer = Replayer(probed())
    assert tools_seen(replayer, {}) == ["echo"]
    assert replayer.main_matcher.unconsumed() == []  # its own recording played


def test_a_client_of_other_capabilities_gets_the_probe_of_its_own() -> None:
    assert tools_seen(Replayer(probed()), ROOTS) == ["echo", "roots"]
    replayer = Replayer(probed())
    replayer.receive(init(7, ELICIT))
    reply = replayer.receive(req(8, "tools/list"))
    assert reply.messages[-1]["result"] == tools("echo", "roots", "elicit")
    assert reply.messages[-1]["id"] == 8
    assert reply.warnings == ()  # a probe of exactly its capabilities: nothing to tell
    assert replayer.misses == []


def test_a_connect_time_listing_no_session_recorded_is_answered_from_the_probe() -> None:
    replayer = Replayer(probed())
    replayer.receive(init(1, {}))
    reply = replayer.receive(req(2, "prompts/list"))
    assert reply.messages[-1]["result"] == PROMPTS
    assert replayer.misses == []
    again = replayer.receive(req(3, "prompts/list"))  # listed again: the same answer
    assert again.messages[-1]["result"] == PROMPTS


def test_the_closest_probe_answers_other_capabilities_with_one_warning() -> None:
    replayer = Replayer(probed())
    replayer.receive(init(1, {"roots": {}, "sampling": {}}))
    reply = replayer.receive(req(2, "tools/list"))
    assert reply.messages[-1]["result"] == tools("echo", "roots")  # gemini-cli's: roots
    (warning,) = [w for w in reply.warnings if "probe" in w]
    assert "legacy:gemini-cli" in warning
    later = replayer.receive(req(3, "prompts/list"))
    assert not [w for w in later.warnings if "probe" in w]  # once per session


def test_a_listing_nobody_recorded_is_still_a_miss() -> None:
    replayer = Replayer(probed())
    replayer.receive(init(1, {}))
    reply = replayer.receive(req(2, "resources/list"))
    assert "error" in reply.messages[-1]
    assert len(replayer.misses) == 1


def test_pages_replay_page_by_page_from_the_probe_that_handed_out_the_cursor() -> None:
    main = tape(*legacy_session({}, tools("echo")))
    pages = [
        ("c2s", init("p0", ROOTS)),
        ("s2c", res("p0", INIT_RESULT)),
        ("c2s", req("p1", "tools/list", {})),
        ("s2c", res("p1", {**tools("a"), "nextCursor": "two"})),
        ("c2s", req("p2", "tools/list", {"cursor": "two"})),
        ("s2c", res("p2", tools("b"))),
    ]
    replayer = Replayer(with_probe(main, "legacy:gemini-cli", *pages))
    replayer.receive(init(1, ROOTS))
    first = replayer.receive(req(2, "tools/list"))
    assert first.messages[-1]["result"] == {**tools("a"), "nextCursor": "two"}
    second = replayer.receive(req(3, "tools/list", {"cursor": "two"}))
    assert second.messages[-1]["result"] == tools("b")


def test_a_variant_recorded_for_the_client_wins_over_the_probes() -> None:
    cassette = with_variant(probed(), "gemini", *legacy_session(ROOTS, tools("variant")))
    assert tools_seen(Replayer(cassette), ROOTS) == ["variant"]


def _modern_with_probes() -> Any:
    main = modern_tape(("c2s", modern_req(2, "tools/list")), ("s2c", res(2, tools("echo"))))
    legacy = legacy_probe({}, {"tools/list": tools("echo", "legacy-shaped")})
    return with_probe(main, "legacy:bare", *legacy)


def test_a_legacy_client_of_a_modern_recording_gets_the_legacy_probes_listing() -> None:
    replayer = Replayer(_modern_with_probes())
    opened = replayer.receive(init(1, {}))
    assert opened.messages[-1]["result"]["protocolVersion"] == "2025-06-18"
    replayer.receive(note("notifications/initialized"))
    reply = replayer.receive(req(2, "tools/list"))
    assert reply.messages[-1]["result"] == tools("echo", "legacy-shaped")


def test_a_modern_client_is_answered_from_modern_recordings_only() -> None:
    replayer = Replayer(_modern_with_probes())
    replayer.receive(modern_req(1, "server/discover"))
    reply = replayer.receive(modern_req(2, "tools/list"))
    assert reply.messages[-1]["result"] == tools("echo")


def test_a_cassette_with_the_older_legacy_probe_variant_replays_as_before() -> None:
    main = modern_tape(("c2s", modern_req(2, "tools/list")), ("s2c", res(2, tools("echo"))))
    older = with_variant(
        main,
        "legacy-probe",
        ("c2s", init("cassette-legacy-probe", {})),
        ("s2c", res("cassette-legacy-probe", {**INIT_RESULT, "serverInfo": {"name": "x"}})),
    )
    replayer = Replayer(older)
    opened = replayer.receive(init(1, {}))
    assert opened.messages[-1]["result"]["serverInfo"] == {"name": "x"}
    reply = replayer.receive(req(2, "tools/list"))  # translated from the modern session
    assert reply.messages[-1]["result"] == tools("echo")


ASKED = {"jsonrpc": "2.0", "id": 0, "method": "roots/list"}


def asked_roots() -> Any:
    """A plain recording, and the probe of roots that the server asked for them (after
    its listings, as the recorder keeps it)."""
    main = tape(*legacy_session({}, tools("echo")))
    listed = legacy_probe(ROOTS, {"tools/list": tools("echo", "roots")})
    return with_probe(main, "legacy:gemini-cli", *listed, ("s2c", ASKED))


def test_a_client_of_the_probes_key_is_asked_for_roots_when_its_input_ends() -> None:
    """The server asked the probe declaring roots of its own accord: a client of that
    listing key whose input ends is asked too, under the session's next server id; the
    probe's request is never played as part of a listing."""
    replayer = Replayer(asked_roots())
    assert tools_seen(replayer, {"roots": {}}) == ["echo", "roots"]
    listed = replayer.receive(req(9, "tools/list"))
    assert all("method" not in m for m in listed.messages)
    assert replayer.end_of_input().messages == (ASKED,)
    assert replayer.end_of_input().messages == ()  # asked once
    assert replayer.misses == []


def test_nothing_is_asked_at_the_end_of_a_client_that_cannot_be_or_was() -> None:
    """Not a client without roots, not one whose own session was recorded by a client of
    its key (what the server asked it is in that session), not before a handshake."""
    assert Replayer(asked_roots()).end_of_input().messages == ()
    bare = Replayer(asked_roots())
    tools_seen(bare, {})
    assert bare.end_of_input().messages == ()
    own = tape(*legacy_session(ROOTS, tools("echo", "roots")))
    listed = legacy_probe(ROOTS, {"tools/list": tools("echo", "roots")})
    recorded_for_it = Replayer(with_probe(own, "legacy:gemini-cli", *listed, ("s2c", ASKED)))
    tools_seen(recorded_for_it, {"roots": {"listChanged": True}})
    assert recorded_for_it.end_of_input().messages == ()
