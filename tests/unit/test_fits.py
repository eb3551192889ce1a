"""Which clients each session of a cassette fits (``cassette.core.eras.fits``), from plain
cassettes: the line ``show`` and the banner print per session, decided by the rule a
replay chooses sessions by."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cassette.core.eras.fits import sessions
from cassette.store.storage import Cassette

HEADER = {
    "kind": "header",
    "format": 1,
    "transport": "stdio",
    "recorder": {"name": "test", "version": "0"},
    "started_at": "2026-01-01T00:00:00Z",
}
SERVER = {"capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}


def _message(direction: str, message: dict[str, Any], variant: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {"kind": "message", "t": 0.0, "dir": direction, "message": message}
    if variant is not None:
        line["meta"] = {"variant": variant}
    return line


def _legacy(
    capabilities: dict[str, Any], variant: str | None = None, version: str = "2025-11-25"
) -> list[dict[str, Any]]:
    params = {"protocolVersion": version, "capabilities": capabilities, "clientInfo": {}}
    ask = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    answer = {"jsonrpc": "2.0", "id": 1, "result": {**SERVER, "protocolVersion": version}}
    return [_message("c2s", ask, variant), _message("s2c", answer, variant)]


def _modern(capabilities: dict[str, Any], listed: list[str]) -> list[dict[str, Any]]:
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }
    ask = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta}}
    answer = {"jsonrpc": "2.0", "id": 1, "result": {**SERVER, "supportedVersions": listed}}
    return [_message("c2s", ask), _message("s2c", answer)]


def _lines(era: str, *events: dict[str, Any]) -> tuple[str, list[str]]:
    header = {**HEADER, "era": era}
    data = "".join(json.dumps(line) + "\n" for line in (header, *events))
    tape = Cassette.loads(data.encode(), "t.jsonl")
    return sessions(tape.era, tape.events)


def test_a_bare_legacy_recording_fits_the_bare_client_and_is_closest_for_the_others() -> None:
    served, lines = _lines("legacy", *_legacy({}))
    assert served.startswith("serves legacy clients")
    (line,) = lines
    assert line == (
        "session main: serves legacy 2024-10-07 to 2025-11-25; recorded with no "
        "capabilities; fits bare; closest for inspector (+roots), claude-code (+elicitation "
        "+roots), gemini-cli (+roots), sdk-handlers (+elicitation +roots +sampling), py-sdk1 "
        "(+elicitation +roots +sampling), ts-sdk1 (+elicitation +roots +sampling), ai-sdk "
        "(+elicitation)"
    )


def test_a_variant_session_is_the_one_its_client_fits() -> None:
    events = [*_legacy({}), *_legacy({"roots": {}, "elicitation": {}}, "claude-code")]
    _, lines = _lines("legacy", *events)
    # a client one capability away from both goes to the main recording (ties do)
    assert lines[0].endswith(
        "recorded with no capabilities; fits bare; closest for inspector (+roots), "
        "gemini-cli (+roots), ai-sdk (+elicitation)"
    )
    assert lines[1] == (
        "session claude-code: serves legacy 2024-10-07 to 2025-11-25; recorded with "
        "elicitation, roots; fits claude-code; closest for sdk-handlers (+sampling), py-sdk1 "
        "(+sampling), ts-sdk1 (+sampling)"
    )


def test_an_older_recorded_revision_serves_only_itself_and_older() -> None:
    _, lines = _lines("legacy", *_legacy({"roots": {}}, version="2025-03-26"))
    assert lines[0].startswith("session main: serves legacy 2024-10-07 to 2025-03-26;")
    assert "fits inspector, gemini-cli" in lines[0]


def test_a_modern_only_recording_names_the_clients_no_session_serves() -> None:
    served, lines = _lines("modern", *_modern({}, ["2026-07-28"]))
    assert "legacy-only clients need" in served
    assert lines == [
        "session main: serves 2026-07-28; recorded with no capabilities; fits bare; closest "
        "for claude-code (+elicitation +roots), sdk-handlers (+elicitation +roots +sampling), "
        "ai-sdk (+elicitation)",  # the dual-era clients take a 2026-07-28 session
        "no session serves inspector, gemini-cli, py-sdk1, ts-sdk1 (legacy clients): record "
        "one with cassette variant TAPE --as legacy",
    ]


def test_a_discovery_listing_legacy_revisions_serves_those() -> None:
    _, lines = _lines("modern", *_modern({}, ["2026-07-28", "2025-06-18", "2025-11-25"]))
    assert lines[0].startswith("session main: serves 2026-07-28, legacy 2025-06-18 to 2025-11-25;")
    assert len(lines) == 1  # every known client is served


def test_the_recorders_probe_serves_legacy_clients_from_the_main_session() -> None:
    probe = _legacy({}, "legacy-probe")
    served, lines = _lines("modern", *_modern({"roots": {}}, ["2026-07-28"]), *probe)
    assert "the server answered a legacy probe" in served
    assert lines == [
        "session main: serves 2026-07-28, legacy 2024-10-07 to 2025-11-25 (probed); recorded "
        "with roots; fits inspector, gemini-cli; closest for bare (-roots), claude-code "
        "(+elicitation), sdk-handlers (+elicitation +sampling), py-sdk1 (+elicitation "
        "+sampling), ts-sdk1 (+elicitation +sampling), ai-sdk (+elicitation -roots)"
    ]


def test_a_legacy_variant_of_a_modern_cassette_serves_the_legacy_clients() -> None:
    events = [*_modern({}, ["2026-07-28"]), *_legacy({"roots": {}}, "legacy")]
    served, lines = _lines("modern", *events)
    assert served == "serves 2026-07-28 and dual-era clients, and legacy ones from a variant"
    assert lines[0] == (
        "session main: serves 2026-07-28; recorded with no capabilities; fits bare; closest "
        "for ai-sdk (+elicitation)"  # a dual-era client: the 2026-07-28 session is its era's
    )
    assert lines[1].startswith("session legacy: serves legacy")
    assert "fits inspector, gemini-cli; closest for claude-code (+elicitation)" in lines[1]


# -- how each known client is answered: the verdicts the banner's first line words ----------

INSPECTOR = {"roots": {"listChanged": True}}


def _probe(name: str, capabilities: dict[str, Any]) -> list[dict[str, Any]]:
    """A legacy probe of the recorder's, as it writes one: its handshake and one listing."""
    meta = {"probe": name}
    params = {"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {}}
    asked = {"jsonrpc": "2.0", "id": "p1", "method": "initialize", "params": params}
    result = {**SERVER, "protocolVersion": "2025-11-25"}
    listing = {"jsonrpc": "2.0", "id": "p2", "method": "tools/list", "params": {}}
    tools = {"jsonrpc": "2.0", "id": "p2", "result": {"tools": []}}
    lines = [
        _message("c2s", asked),
        _message("s2c", {"jsonrpc": "2.0", "id": "p1", "result": result}),
        _message("c2s", listing),
        _message("s2c", tools),
    ]
    return [{**line, "meta": meta} for line in lines]


def _every_profile_probed() -> list[dict[str, Any]]:
    from cassette.core.eras.surface import capability_sets

    return [e for s in capability_sets({}) for e in _probe(f"legacy:{s.name}", s.capabilities)]


def _asking_for_roots() -> list[dict[str, Any]]:
    """A session recorded with roots in which the server asked for them."""
    ask = {"jsonrpc": "2.0", "id": "s1", "method": "roots/list"}
    told = {"jsonrpc": "2.0", "id": "s1", "result": {"roots": []}}
    return [*_legacy({"roots": {}}), _message("s2c", ask), _message("c2s", told)]


def _tape(era: str, events: list[dict[str, Any]]) -> Cassette:
    header = {**HEADER, "era": era}
    data = "".join(json.dumps(line) + "\n" for line in (header, *events))
    return Cassette.loads(data.encode(), "t.jsonl")


def _hows(tape: Cassette) -> dict[str, str]:
    from cassette.core.eras.fits import survey

    return {v.name: v.how for v in survey(tape.era, tape.events).verdicts}


def test_probes_for_each_clients_capabilities_answer_their_listings_as_live() -> None:
    tape = _tape("legacy", [*_legacy({}), *_every_profile_probed()])
    assert _hows(tape) == {
        "bare": "fits",
        "inspector": "probed",
        "claude-code": "probed",
        "gemini-cli": "probed",
        "sdk-handlers": "probed",
        "py-sdk1": "probed",
        "ts-sdk1": "probed",
        "ai-sdk": "probed",
    }
    _, lines = sessions(tape.era, tape.events)
    assert lines[0].endswith(
        "recorded with no capabilities; fits bare; listings as live (probed) for inspector "
        "(+roots), claude-code (+elicitation +roots), gemini-cli (+roots), sdk-handlers "
        "(+elicitation +roots +sampling), py-sdk1 (+elicitation +roots +sampling), ts-sdk1 "
        "(+elicitation +roots +sampling), ai-sdk (+elicitation)"
    )
    assert lines[1].startswith("probed surface (the recorder's own sessions")


def test_a_probe_for_other_capabilities_leaves_the_caveat() -> None:
    tape = _tape("legacy", [*_legacy({}), *_probe("legacy:gemini-cli", INSPECTOR)])
    assert _hows(tape) == {
        "bare": "fits",
        "inspector": "probed",  # its listing key is roots, as Gemini CLI's (extensions aside)
        "claude-code": "unknown",
        "gemini-cli": "probed",
        "sdk-handlers": "unknown",
        "py-sdk1": "unknown",
        "ts-sdk1": "unknown",
        "ai-sdk": "unknown",
    }


def test_what_the_server_asked_for_decides_between_a_caveat_and_no_difference() -> None:
    tape = _tape("legacy", _asking_for_roots())
    assert _hows(tape) == {
        "bare": "reacted",  # it would not be asked for roots, as the recording's client was
        "inspector": "fits",
        "claude-code": "unused",  # elicitation: the server asks only for roots
        "gemini-cli": "fits",
        "sdk-handlers": "unused",
        "py-sdk1": "unused",
        "ts-sdk1": "unused",
        "ai-sdk": "reacted",  # elicitation alone: no roots to be asked for
    }
    _, lines = sessions(tape.era, tape.events)
    assert lines[0].endswith(
        "recorded with roots; fits inspector, gemini-cli; no difference for claude-code "
        "(+elicitation, which the server does not ask for), sdk-handlers (+elicitation "
        "+sampling, which the server does not ask for), py-sdk1 (+elicitation +sampling, which "
        "the server does not ask for), ts-sdk1 (+elicitation +sampling, which the server does "
        "not ask for); closest for bare (-roots, which the server asks for), ai-sdk "
        "(+elicitation -roots, which the server asks for)"
    )


def test_a_variant_for_other_capabilities_makes_every_difference_a_caveat() -> None:
    tape = _tape("legacy", [*_legacy({}), *_legacy({"roots": {}, "elicitation": {}}, "cc")])
    hows = _hows(tape)
    assert hows["claude-code"] == hows["bare"] == "fits"
    assert hows["inspector"] == hows["gemini-cli"] == "varies"


def test_a_modern_only_recording_refuses_the_legacy_only_clients() -> None:
    tape = _tape("modern", _modern({}, ["2026-07-28"]))
    assert _hows(tape) == {
        "bare": "fits",
        "inspector": "refused",
        "claude-code": "unknown",
        "gemini-cli": "refused",
        "sdk-handlers": "unknown",
        "py-sdk1": "refused",  # legacy only, as the Inspector and Gemini CLI
        "ts-sdk1": "refused",
        "ai-sdk": "unknown",
    }


def _replay_warns(tape: Cassette, client: dict[str, Any]) -> bool:
    """Whether a replay of ``tape`` warns ``client`` (a profile) of its capabilities."""
    from cassette.core.eras.fits import _handshake
    from cassette.core.replay.replayer import Replayer

    handshake = _handshake(client, client.get("era") or tape.era)
    reply = Replayer(tape).receive({**handshake, "id": 1})
    return any("the client declares capabilities" in w for w in reply.warnings)


@pytest.mark.parametrize(
    "events",
    [
        _legacy({}),
        [*_legacy({}), *_every_profile_probed()],
        [*_legacy({}), *_probe("legacy:gemini-cli", INSPECTOR)],
        _asking_for_roots(),
        [*_legacy({}), *_legacy({"roots": {}, "elicitation": {}}, "cc")],
    ],
    ids=["plain", "probed", "one-probe", "asking", "variant"],
)
def test_the_verdicts_warn_of_exactly_what_the_replay_warns_of(
    events: list[dict[str, Any]],
) -> None:
    """The banner's caveats are the replay's own capability warnings, client by client."""
    from cassette.core.eras.fits import survey
    from cassette.core.eras.profiles import FITTED

    tape = _tape("legacy", events)
    found = {v.name: v for v in survey(tape.era, tape.events).verdicts}
    for client in FITTED:
        assert found[client["name"]].caveat == _replay_warns(tape, client), client["name"]
