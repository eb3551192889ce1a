"""A legacy client's protocol revision, granted as the recorded server would grant it:
plain values in and out."""

from __future__ import annotations

import attrs

from cassette.core.eras.bridge import granted_version
from cassette.core.replay.replayer import Replayer
from tests.unit.test_replayer import Tape, req, res, tape


def test_an_older_legacy_revision_is_granted() -> None:
    assert granted_version("2025-06-18", "2025-11-25") == "2025-06-18"
    assert granted_version("2024-11-05", "2025-06-18") == "2024-11-05"


def test_a_newer_or_unknown_revision_gets_the_recorded_one() -> None:
    assert granted_version("2025-11-25", "2025-06-18") == "2025-06-18"
    assert granted_version("2026-07-28", "2025-06-18") == "2025-06-18"
    assert granted_version("1999-01-01", "2025-06-18") == "2025-06-18"
    assert granted_version(None, "2025-06-18") == "2025-06-18"


def test_evidence_of_what_the_server_supports_narrows_the_grant() -> None:
    listed = ["2026-07-28", "2025-11-25", "2025-06-18"]
    assert granted_version("2025-06-18", "2025-11-25", listed) == "2025-06-18"
    assert granted_version("2025-03-26", "2025-11-25", listed) == "2025-11-25"


def legacy_tape(version: str = "2025-11-25") -> Tape:
    return tape(
        ("c2s", req(0, "initialize", {"protocolVersion": version, "capabilities": {}})),
        ("s2c", res(0, {"protocolVersion": version, "capabilities": {"tools": {}}})),
        ("c2s", req(1, "tools/list")),
        ("s2c", res(1, {"tools": []})),
    )


def test_a_replay_grants_an_older_client_its_revision_silently() -> None:
    r = Replayer(legacy_tape())
    reply = r.receive(req(7, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}))
    (answer,) = reply.messages
    assert answer["id"] == 7
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    assert answer["result"]["capabilities"] == {"tools": {}}
    assert reply.warnings == ()
    # the recording itself is untouched: a second session is granted what it asks
    again = Replayer(legacy_tape())
    init = again.receive(req(1, "initialize", {"protocolVersion": "2025-11-25"}))
    assert init.messages[0]["result"]["protocolVersion"] == "2025-11-25"


def test_a_replay_answers_a_newer_client_the_recorded_revision_with_a_warning() -> None:
    r = Replayer(legacy_tape("2025-06-18"))
    reply = r.receive(req(1, "initialize", {"protocolVersion": "2025-11-25"}))
    assert reply.messages[0]["result"]["protocolVersion"] == "2025-06-18"
    (warning,) = reply.warnings
    assert "asked for protocol 2025-11-25" in warning
    assert "answers 2025-06-18" in warning


PROBED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {"listChanged": False}},
    "serverInfo": {"name": "probed", "version": "1"},
}


def probed_tape(listed: list[str]) -> Tape:
    """A 2026-07-28 session whose discovery lists ``listed``, then the recorder's probe."""
    envelope = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    discover = {"supportedVersions": listed, "capabilities": {"tools": {}}}
    base = tape(
        ("c2s", req(1, "server/discover", envelope)),
        ("s2c", res(1, discover)),
        ("c2s", req(2, "tools/list", envelope)),
        ("s2c", res(2, {"tools": [], "resultType": "complete"})),
        ("c2s", req("cassette-legacy-probe", "initialize", {"protocolVersion": "2025-11-25"})),
        ("s2c", res("cassette-legacy-probe", PROBED)),
        era="modern",
    )
    probe = {"variant": "legacy-probe"}
    events = (*base.events[:4], *(attrs.evolve(e, meta=probe) for e in base.events[4:]))
    return Tape(base.header, events)


def test_a_legacy_client_of_a_probed_modern_cassette_gets_the_probes_answer() -> None:
    r = Replayer(probed_tape(["2026-07-28"]))
    init = r.receive(req(0, "initialize", {"protocolVersion": "2025-06-18"}))
    (answer,) = init.messages
    assert answer["result"] == {**PROBED, "protocolVersion": "2025-06-18"}  # granted
    assert r.misses == []
    listed = r.receive(req(1, "tools/list"))
    assert listed.messages[0]["result"] == {"tools": []}  # the modern answer, translated


def test_a_probed_cassette_grants_only_what_its_discovery_lists() -> None:
    r = Replayer(probed_tape(["2026-07-28", "2025-11-25"]))
    init = r.receive(req(0, "initialize", {"protocolVersion": "2025-06-18"}))
    assert init.messages[0]["result"]["protocolVersion"] == "2025-11-25"


def test_without_a_probe_the_refusal_names_the_variant_command() -> None:
    base = probed_tape(["2026-07-28"])
    r = Replayer(Tape(base.header, base.events[:4]))
    (error,) = r.receive(req(0, "initialize", {"protocolVersion": "2025-11-25"})).messages
    assert error["error"]["code"] == -32022
    assert "cassette variant TAPE --as legacy" in error["error"]["message"]


def roots_tape() -> Tape:
    """A client with roots, and a server that asked it for them during a call."""
    return tape(
        ("c2s", req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": ROOTS})),
        ("s2c", res(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})),
        ("c2s", req(1, "tools/call", {"name": "files"})),
        ("s2c", req(0, "roots/list")),
        ("c2s", res(0, {"roots": []})),
        ("s2c", res(1, {"content": []})),
    )


ROOTS = {"roots": {"listChanged": True}}


def test_a_client_without_a_capability_the_server_reacted_to_is_warned_once() -> None:
    r = Replayer(roots_tape())
    init = r.receive(req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    (warning,) = init.warnings
    assert "declares capabilities none" in warning
    assert "recorded with roots" in warning
    assert "reacted to roots" in warning
    again = r.receive(req(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}}))
    assert again.warnings == ()


def test_the_same_capabilities_or_ones_the_server_ignored_bring_no_warning() -> None:
    same = Replayer(roots_tape())
    asked = {"protocolVersion": "2025-11-25", "capabilities": ROOTS}
    assert same.receive(req(0, "initialize", asked)).warnings == ()
    other = Replayer(roots_tape())
    sampling = {"protocolVersion": "2025-11-25", "capabilities": {**ROOTS, "sampling": {}}}
    assert other.receive(req(0, "initialize", sampling)).warnings == ()


def test_a_recording_where_the_server_asked_nothing_says_it_cannot_tell() -> None:
    """server-everything lists more tools to a client declaring roots and elicitation,
    and asks nothing of a client declaring none: a recording of that client cannot show
    it, and a replay to Claude Code says which capabilities differ all the same."""
    r = Replayer(
        tape(
            ("c2s", req(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})),
            ("s2c", res(0, {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}})),
        )
    )
    claude = {"roots": {"listChanged": True}, "elicitation": {"form": {}, "url": {}}}
    asked = {"protocolVersion": "2025-11-25", "capabilities": claude}
    (warning,) = r.receive(req(0, "initialize", asked)).warnings
    assert "declares capabilities elicitation, roots" in warning
    assert "recorded with none" in warning
    assert "cannot show whether the server answers by them" in warning


def test_a_legacy_client_of_a_probed_cassette_sets_its_log_level_as_the_probe_shows() -> None:
    """fastmcp's 2026-07-28 discovery advertises no logging (that era removed
    logging/setLevel) but its legacy initialize does: a legacy client's unrecorded
    logging/setLevel is answered as that legacy handshake shows, not refused."""
    base = probed_tape(["2026-07-28"])
    logs = {**PROBED, "capabilities": {"tools": {}, "logging": {}}}
    events = (
        *base.events[:5],
        attrs.evolve(base.events[5], message=res("cassette-legacy-probe", logs)),
    )
    r = Replayer(Tape(base.header, events))
    r.receive(req(0, "initialize", {"protocolVersion": "2025-11-25"}))
    (answer,) = r.receive(req(1, "logging/setLevel", {"level": "info"})).messages
    assert answer == res(1, {})
    assert r.misses == []


def test_a_legacy_client_sets_its_log_level_where_a_modern_session_recorded_one() -> None:
    """The recorded 2026-07-28 client sent logging/setLevel too, and the server answered
    it that era's way: a legacy client still gets what the probe's handshake shows."""
    base = probed_tape(["2026-07-28"])
    logs = {**PROBED, "capabilities": {"tools": {}, "logging": {}}}
    envelope = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}
    modern = tape(
        ("c2s", req(3, "logging/setLevel", {**envelope, "level": "info"})),
        ("s2c", {"jsonrpc": "2.0", "id": 3, "error": {"code": -32601, "message": "no"}}),
        era="modern",
    ).events
    probe = (
        base.events[4],
        attrs.evolve(base.events[5], message=res("cassette-legacy-probe", logs)),
    )
    r = Replayer(Tape(base.header, (*base.events[:4], *modern, *probe)))
    r.receive(req(0, "initialize", {"protocolVersion": "2025-11-25"}))
    (answer,) = r.receive(req(1, "logging/setLevel", {"level": "info"})).messages
    assert answer == res(1, {})
