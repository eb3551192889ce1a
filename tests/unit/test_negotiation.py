"""The era-and-variant authority and the seams the replayer was split along: a custom
matcher written from public names declares its strictness, a variant group's state is one
value swapped whole, and an input round's retry comes back as a request to dispatch."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from cassette.core.jsonrpc import REPLAY_MISS
from cassette.core.matching import Candidate, Strategy
from cassette.core.negotiation import GroupState, Negotiation
from cassette.core.prepared import Prepared
from cassette.core.replayer import Replayer
from cassette.errors import NotRecordedError
from cassette.transports.streamable_http import HttpReplayApp
from tests.support import front_app
from tests.unit import test_http_front as http
from tests.unit.test_replayer import req, res, tape
from tests.unit.test_server_initiated import ANSWER, CALL, sampling_tape
from tests.unit.test_variants import SAMPLING, init, inspector_tape


class FirstOfMethod:
    """A matcher a user could write: public names only (``Candidate``, the errors)."""

    def __init__(self, candidates: Sequence[Candidate], strict: bool) -> None:
        self.strict = strict
        self._left = list(candidates)

    def match(self, message: dict[str, Any]) -> int:
        for candidate in self._left:
            if candidate.message.get("method") == message.get("method"):
                self._left.remove(candidate)
                return candidate.key
        raise NotRecordedError(f"{message.get('method')} was not recorded")


def _factory(strict: bool) -> Any:
    def make(candidates: Sequence[Candidate], strategy: str | Strategy) -> FirstOfMethod:
        return FirstOfMethod(candidates, strict)

    return make


def test_a_custom_matcher_declares_its_strictness() -> None:
    differing = res(0, {**ANSWER["result"], "model": "other-model"})
    lenient = Replayer(sampling_tape(), matcher_factory=_factory(False))
    lenient.receive(CALL)
    assert lenient.receive(differing).warnings
    assert lenient.misses == []
    strict = Replayer(sampling_tape(), matcher_factory=_factory(True))
    strict.receive(CALL)
    (error,) = strict.receive(differing).messages
    assert error["error"]["code"] == REPLAY_MISS
    assert strict.misses[0].kind == "answer-differs"


def test_the_built_in_strategies_declare_strictness() -> None:
    assert Replayer(tape()).matcher.strict is False
    assert Replayer(tape(), "strict").matcher.strict is True


def test_a_variant_group_state_is_one_value_kept_whole() -> None:
    r = Replayer(inspector_tape())
    main = r._state
    assert isinstance(main, GroupState)
    r.receive(init(1, {"roots": {}}))  # the inspector variant fits this client
    variant = r._state
    assert variant is not main
    assert variant.prepared is not main.prepared
    assert r.matcher is variant.matcher
    assert r._playback is variant.playback
    assert r._kept[id(main.prepared)] is main  # the group left, kept as it was


def test_the_authority_chooses_the_group_a_handshake_fits() -> None:
    prepared = Prepared.of(inspector_tape())
    terms = Negotiation(prepared, [])
    handshake = init(1, {"roots": {}})
    chosen = terms.heard(handshake, "initialize", "legacy", prepared)
    assert chosen is not None
    assert chosen[0] is prepared.variants[0]
    assert chosen[1]
    assert terms.heard(init(2, SAMPLING), "initialize", "legacy", prepared) is None
    assert terms.client_era == "legacy"


def test_an_unrecorded_ping_is_certain_and_discovery_is_not_a_legacy_method() -> None:
    terms = Negotiation(Prepared.of(tape()), [])
    assert terms.unrecorded(req(3, "ping"), "legacy", None) == res(3, {})
    lacks = terms.unrecorded(req(4, "server/discover"), "legacy", None)
    assert lacks is not None
    assert lacks["error"]["code"] == -32601


def test_a_legacy_client_unserved_by_a_modern_cassette_gets_400_and_no_session() -> None:
    """The recorded discovery lists no legacy revision: the replay refuses the
    ``initialize`` with -32022 (a miss naming how to record for it), the front answers
    400 as a modern-only server does, and keeps no session for that client."""
    modern = http.tape(
        "modern",
        http.c2s(http.req(1, "server/discover", {"_meta": http.MODERN_META}), "post-1"),
        http.s2c(http.res(1, {"supportedVersions": ["2026-07-28"]}), "post-1"),
    )
    misses: list[str] = []
    app = front_app(HttpReplayApp, modern, on_miss=misses.append)

    async def body(client: httpx.AsyncClient) -> None:
        init = await http.post(client, http.req(1, "initialize", {"protocolVersion": "2025-11-25"}))
        assert (init.status_code, init.json()["error"]["code"]) == (400, -32022)
        assert "mcp-session-id" not in init.headers
        assert "--era legacy" in init.json()["error"]["message"]

    http.scenario(app, body)
    assert app.sessions == {}
    assert len(misses) == 1


def _call(msg_id: Any, token: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "slow", "arguments": {}}
    if token is not None:
        params["_meta"] = {"progressToken": token}
    return req(msg_id, "tools/call", params)


def test_a_client_asking_for_progress_the_recording_never_got_is_warned_once() -> None:
    """The recording client asked for no progress, so the server sent none: a client that
    asks (a progressToken) gets none from the replay, and is told so once a session."""
    done = res(1, {"content": []})
    replayer = Replayer(tape(("c2s", _call(1)), ("s2c", done), ("c2s", _call(2)), ("s2c", done)))
    first = replayer.receive(_call(7, "tok-1"))
    assert first.messages[-1]["id"] == 7
    (warning,) = first.warnings
    assert "asks for progress on tools/call" in warning
    assert "the recording holds no progress notifications" in warning
    assert replayer.receive(_call(8, "tok-2")).warnings == ()  # once per session


def test_no_progress_warning_when_the_recording_client_asked_or_this_one_does_not() -> None:
    from tests.unit.test_replayer import progress

    asked = tape(
        ("c2s", _call(1, "rec")),
        ("s2c", progress("rec", 1)),
        ("s2c", res(1, {"content": []})),
        ("c2s", _call(2)),
        ("s2c", res(2, {"content": []})),
    )
    replayer = Replayer(asked)
    reply = replayer.receive(_call(5, "live"))
    assert reply.warnings == ()
    assert reply.messages[0]["params"]["progressToken"] == "live"  # the recorded progress
    assert Replayer(asked).receive(_call(6)).warnings == ()
