"""The recorder's probes, sans-IO (``cassette.core.eras.surface``): which probes a recording
gets, and each probe's conversation with plain values: what it sends, how it answers the
server's own requests, how it pages, and what it keeps."""

from __future__ import annotations

import json
from typing import Any

from cassette.core.eras.listings import listing_key
from cassette.core.eras.profiles import FITTED
from cassette.core.eras.surface import (
    MAX_PAGES,
    NO_HANDLER,
    ProbeSession,
    capability_sets,
    plan,
    surface_line,
)
from cassette.core.wire.mcp import LATEST_LEGACY, MODERN_VERSION

OFFERED = {"tools": {}, "prompts": {}}
CLAUDE = next(c for c in FITTED if c["name"] == "claude-code")


def sent(frames: list[bytes]) -> list[dict[str, Any]]:
    return [json.loads(f) for f in frames]


def answer(request: dict[str, Any], result: Any = None, error: Any = None) -> bytes:
    body = {"error": error} if error is not None else {"result": result}
    return json.dumps({"jsonrpc": "2.0", "id": request["id"], **body}).encode()


def test_the_sets_are_each_distinct_profile_then_the_recording_clients_own() -> None:
    names = [s.name for s in capability_sets({})]
    assert names[0] == "bare"
    assert "recorded" not in names  # the recording client declared nothing: bare's set
    assert len({json.dumps(s.capabilities, sort_keys=True) for s in capability_sets({})}) == len(
        names
    )
    own = {"sampling": {}, "experimental": {"x": {}}}
    sets = capability_sets(own, "2025-03-26")
    assert sets[-1].name == "recorded"
    assert sets[-1].capabilities == own
    assert sets[-1].version == "2025-03-26"
    assert capability_sets(None)[0].version == LATEST_LEGACY


def test_the_sets_are_one_per_listing_key_the_fewest_capabilities_probed() -> None:
    """A legacy server is started once per set: profiles a server cannot tell apart by
    what it may list by (``listing_key``) share one."""
    sets = capability_sets({})
    keys = [listing_key(s.capabilities) for s in sets]
    assert len(set(keys)) == len(keys)
    assert {listing_key(c["capabilities"]) for c in FITTED} == set(keys)  # each covered
    by_name = {s.name: s for s in sets}
    assert "inspector" not in by_name  # roots and extensions: Gemini CLI's roots probed
    assert by_name["gemini-cli"].capabilities == {"roots": {"listChanged": True}}
    assert by_name["gemini-cli"].version == "2025-06-18"  # what that client asks for
    assert {"py-sdk1", "ts-sdk1"}.isdisjoint(by_name)  # sdk-handlers' key
    # the recording client's own set joins only with a key no profile has
    assert "recorded" not in [s.name for s in capability_sets({"roots": {}, "x": {}})]


def test_a_legacy_recording_gets_a_session_per_set_the_first_asking_discover() -> None:
    probes = plan("legacy", {})
    assert [p.name for p in probes] == [f"legacy:{s.name}" for s in capability_sets({})]
    assert [p.discover for p in probes] == [True] + [False] * (len(probes) - 1)
    assert all(p.era == "legacy" and len(p.sets) == 1 for p in probes)


def test_a_modern_recording_gets_one_start_for_every_set_and_the_legacy_handshake() -> None:
    probes = plan("modern", {"roots": {}})
    assert [p.name for p in probes] == ["modern", "legacy:bare"]
    assert [s.name for s in probes[0].sets] == [s.name for s in capability_sets({"roots": {}})]
    assert probes[1].sets[0].capabilities == {}


def _legacy(name: str = "legacy:claude-code") -> ProbeSession:
    probe = next(p for p in plan("legacy", {}) if p.name == name)
    return ProbeSession(probe)


def test_a_legacy_probe_lists_what_the_handshake_offers_and_keeps_it_in_order() -> None:
    session = _legacy()
    (init,) = sent(session.opening())
    assert init["method"] == "initialize"
    assert init["params"]["capabilities"] == CLAUDE["capabilities"]
    assert init["params"]["protocolVersion"] == CLAUDE["legacy_version"]
    out = sent(session.heard(answer(init, {"capabilities": OFFERED})))
    assert [m["method"] for m in out] == ["notifications/initialized", "tools/list"]
    # the server asks for roots meanwhile: answered as Claude Code answers it
    (roots,) = sent(session.heard(b'{"jsonrpc":"2.0","id":0,"method":"roots/list"}'))
    assert roots == {"jsonrpc": "2.0", "id": 0, **CLAUDE["answers"]["roots/list"]}
    (sampling,) = sent(session.heard(b'{"jsonrpc":"2.0","id":1,"method":"sampling/x"}'))
    assert sampling["error"] == NO_HANDLER["error"]  # no handler: what such a client says
    assert session.heard(b'{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}') == []
    assert session.heard(b"not json") == []
    (prompts,) = sent(session.heard(answer(out[1], {"tools": [{"name": "a"}]})))
    assert prompts["method"] == "prompts/list"
    assert session.heard(answer(prompts, {"prompts": []})) == []
    assert session.done
    kept = [(d, json.loads(data).get("method"), label) for d, data, label in session.kept]
    assert kept == [
        ("c2s", "initialize", "legacy:claude-code"),
        ("s2c", None, "legacy:claude-code"),
        ("c2s", "tools/list", "legacy:claude-code"),
        ("s2c", None, "legacy:claude-code"),
        ("c2s", "prompts/list", "legacy:claude-code"),
        ("s2c", None, "legacy:claude-code"),
        ("s2c", "roots/list", "legacy:claude-code"),  # the server's own request, last
    ]
    assert session.listings == 2
    assert not session.listens  # it was asked for roots already: nothing to wait for


def _listed(session: ProbeSession) -> None:
    """Take ``session`` through its handshake and a tools-only listing."""
    (init,) = sent(session.opening())
    if init["method"] == "server/discover":  # the first probe: refused, a legacy server
        (init,) = sent(session.heard(answer(init, error={"code": -32601, "message": "no"})))
    out = sent(session.heard(answer(init, {"capabilities": {"tools": {}}})))
    assert session.heard(answer(out[1], {"tools": []})) == []
    assert session.done


def test_a_probe_declaring_roots_listens_for_its_servers_own_request() -> None:
    """A server may ask a client that declares roots for them on its own, after the
    listings (server-everything's timer), even once its input is closed: a probe whose set
    declares roots listens for it, keeps it after the listings wherever it came, answers
    nothing once done, and stops listening when it has it."""
    session = _legacy("legacy:gemini-cli")
    _listed(session)
    assert session.listens
    before = list(session.kept)
    asked = b'{"jsonrpc":"2.0","id":0,"method":"roots/list"}'
    assert session.heard(b'{"jsonrpc":"2.0","method":"notifications/message"}') == []
    assert session.heard(asked) == []  # its input is closed: nothing is answered
    assert session.kept == [*before, ("s2c", asked, "legacy:gemini-cli")]
    assert not session.listens
    assert session.heard(b'{"jsonrpc":"2.0","id":1,"method":"roots/list"}') == []
    assert session.kept[-1][1] == asked  # the first one is kept, once


def test_a_probe_that_cannot_be_asked_for_roots_never_listens() -> None:
    """The bare probe declares nothing a server's own request needs; a refused handshake
    keeps nothing, a request heard before it included."""
    bare = _legacy("legacy:bare")
    _listed(bare)
    assert not bare.listens
    assert bare.heard(b'{"jsonrpc":"2.0","id":0,"method":"roots/list"}') == []
    assert all(json.loads(d).get("method") != "roots/list" for _, d, _ in bare.kept)
    refused = _legacy("legacy:gemini-cli")
    (init,) = sent(refused.opening())
    refused.heard(b'{"jsonrpc":"2.0","id":0,"method":"roots/list"}')
    refused.heard(answer(init, error={"code": -32602, "message": "unsupported"}))
    assert refused.done
    assert refused.kept == []
    assert not refused.listens


def test_a_probe_reads_what_the_server_says_within_the_frame_limits() -> None:
    """The probe's frames go through the one classifier (``cassette.core.wire.jsonrpc``):
    a line nested past the depth limit or over the size limit is no message to it, and
    neither raises."""
    import contextvars

    from cassette.core.wire.limits import Limits, use_limits

    session = _legacy()
    (init,) = sent(session.opening())
    deep = b'{"jsonrpc":"2.0","id":0,"method":"roots/list","params":' + b"[" * 300 + b"]" * 300
    assert session.heard(deep + b"}") == []
    big = b'{"jsonrpc":"2.0","id":0,"method":"roots/list","params":{"p":"' + b"x" * 2000 + b'"}}'

    def under_a_smaller_limit() -> list[bytes]:
        use_limits(Limits(max_message_bytes=1024))
        return session.heard(big)

    assert contextvars.copy_context().run(under_a_smaller_limit) == []
    (roots,) = sent(session.heard(big))  # within the default limit, it is answered
    assert roots["id"] == 0
    out = sent(session.heard(answer(init, {"capabilities": OFFERED})))
    assert [m["method"] for m in out] == ["notifications/initialized", "tools/list"]


def test_a_listing_is_read_page_by_page_up_to_the_bound() -> None:
    session = _legacy()
    (init,) = sent(session.opening())
    request = sent(session.heard(answer(init, {"capabilities": {"tools": {}}})))[1]
    cursors = []
    for page in range(MAX_PAGES + 5):
        out = sent(session.heard(answer(request, {"tools": [], "nextCursor": f"p{page}"})))
        if not out:
            break
        request = out[0]
        cursors.append(request["params"]["cursor"])
    assert cursors == [f"p{n}" for n in range(MAX_PAGES - 1)]
    assert session.done
    assert session.listings == MAX_PAGES


def test_a_refused_handshake_keeps_nothing() -> None:
    session = _legacy()
    (init,) = sent(session.opening())
    assert session.heard(answer(init, error={"code": -32600, "message": "no"})) == []
    assert session.done
    assert session.kept == []


def test_the_first_legacy_probe_asks_discover_and_drops_a_refusal() -> None:
    session = _legacy("legacy:bare")
    (discover,) = sent(session.opening())
    assert discover["method"] == "server/discover"
    (init,) = sent(session.heard(answer(discover, error={"code": -32601, "message": "x"})))
    assert init["method"] == "initialize"
    session.heard(answer(init, {"capabilities": {}}))
    assert session.done  # it offers no listing
    assert [json.loads(d)["id"] for _, d, _ in session.kept] == [init["id"], init["id"]]
    assert session.follow is None


def test_a_server_that_discovers_is_kept_as_modern_and_the_legacy_probe_follows() -> None:
    session = _legacy("legacy:bare")
    (discover,) = sent(session.opening())
    served = {"supportedVersions": [MODERN_VERSION], "capabilities": OFFERED}
    assert session.heard(answer(discover, served)) == []
    assert session.done
    assert [label for _, _, label in session.kept] == ["modern", "modern"]
    assert session.follow is not None
    assert session.follow.name == "legacy:bare"
    assert not session.follow.discover


def test_a_modern_probe_lists_for_every_set_in_the_envelope() -> None:
    probe = plan("modern", {})[0]
    session = ProbeSession(probe)
    (discover,) = sent(session.opening())
    request = sent(session.heard(answer(discover, {"capabilities": {"tools": {}}})))[0]
    said = []
    while request is not None:
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == MODERN_VERSION
        said.append(meta["io.modelcontextprotocol/clientCapabilities"])
        out = sent(session.heard(answer(request, {"tools": []})))
        request = out[0] if out else None
    assert said == [s.capabilities for s in probe.sets]
    labels = [label for _, _, label in session.kept]
    assert labels[:2] == ["modern", "modern"]
    assert labels[2::2] == [f"modern:{s.name}" for s in probe.sets]


def test_the_banner_line_says_what_was_probed_and_how_long_it_took() -> None:
    done = _legacy()
    (init,) = sent(done.opening())
    listing = sent(done.heard(answer(init, {"capabilities": {"tools": {}}})))[1]
    done.heard(answer(listing, {"tools": []}))
    line = surface_line([done], 0.42)
    assert line == "probed the surface: 1 era, 1 capability set, 1 listing in 0.4 s"
    assert "no probe was answered" in surface_line([], 10.0)


def test_an_error_with_a_null_id_answers_the_request_in_flight() -> None:
    """Over HTTP a legacy server refuses a request sent without a session with an error
    whose id is null: the probe's discover, which then goes on with initialize."""
    session = _legacy("legacy:bare")
    session.opening()
    refusal = b'{"jsonrpc":"2.0","error":{"code":-32000,"message":"no session"},"id":null}'
    (init,) = sent(session.heard(refusal))
    assert init["method"] == "initialize"
