"""The era machine (``cassette.core.replay.negotiation``) through its two entry points, with plain
values: ``before`` a request is matched (who the client is, which group answers it, what
the era rules answer instead) and ``after`` it was played (what the client is sent). And
the seams the replayer was split along: a custom matcher written from public names
declares its strictness, a variant group's state is one value kept whole, and an input
round's retry comes back as a request to answer as any other."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx

from cassette.core.eras.legacy_calls import announcement
from cassette.core.replay.era_answers import crosses, unrecorded
from cassette.core.replay.groups import Groups, GroupState
from cassette.core.replay.matching import Candidate, Strategy
from cassette.core.replay.negotiation import Negotiation
from cassette.core.replay.prepared import Prepared
from cassette.core.replay.replayer import Replayer
from cassette.core.replay.reply import Reply
from cassette.core.replay.waits import Waits
from cassette.core.wire.exchanges import Exchange
from cassette.core.wire.jsonrpc import REPLAY_MISS
from cassette.errors import NotRecordedError
from cassette.transports.http.streamable_http import HttpReplayApp
from tests.helpers.support import front_app
from tests.unit import test_http_front as http
from tests.unit.test_eras import WROTE, asking_tape, modern_req, modern_tape
from tests.unit.test_legacy_calls import refusing_tape
from tests.unit.test_replayer import req, res, tape
from tests.unit.test_server_initiated import ANSWER, CALL, RESULT, sampling_tape
from tests.unit.test_server_initiated import SAMPLING as ASKED
from tests.unit.test_variants import SAMPLING, init, inspector_tape

LEGACY_INIT = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {}}


def machine(recording: Any) -> tuple[Negotiation, Groups, Waits]:
    """A session's era machine over ``recording``, and the seat and waits it shares."""
    groups = Groups(Prepared.of(recording))
    waits = Waits([], None)
    return Negotiation(groups, waits), groups, waits


def played(live: dict[str, Any], exchange: Exchange) -> Reply:
    """The reply the replayer plays from ``exchange`` for ``live``: its recorded answer
    under the live id (what ``after`` is given for a matched request)."""
    (answer,) = [i.message for i in exchange.items if i.role == "response"]
    answer = {**answer, "id": live["id"]}
    return Reply((answer,), None, (None,), exchange, live["id"], responded=True)


def exchange_of(groups: Groups, method: str, index: int = 0) -> Exchange:
    """The ``index``-th recorded exchange of ``method`` in the group answering."""
    found = [x for x in groups.current.prepared.exchanges if x.message.get("method") == method]
    return found[index]


# -- before: who the client is, which group, what the era rules answer -----------------


def test_a_recorded_request_goes_to_the_matcher_and_its_reply_out_unchanged() -> None:
    terms, _, waits = machine(tape(("c2s", req(1, "tools/list")), ("s2c", res(1, {"tools": []}))))
    live = req(7, "tools/list")
    assert terms.before(live) is None
    reply = Reply((res(7, {"tools": []}),))
    assert terms.after(live, reply) is reply  # a client of the recording's era: nothing to do
    assert terms.client_era is None
    assert waits.misses == []


def test_the_authority_chooses_the_group_a_handshake_fits() -> None:
    terms, groups, _ = machine(inspector_tape())
    main = groups.current
    assert terms.before(init(1, {"roots": {}})) is None  # the inspector variant fits it
    assert groups.current.prepared is groups.main.variants[0]
    assert terms.client_era == "legacy"
    assert terms.before(init(2, SAMPLING)) is None  # a new handshake: the main recording
    assert groups.current.prepared is groups.main
    assert groups.current is not main  # adopted afresh: a new session starts over


def test_a_variant_group_state_is_one_value_kept_whole() -> None:
    terms, groups, _ = machine(inspector_tape())
    main = groups.current
    assert isinstance(main, GroupState)
    terms.before(init(1, {"roots": {}}))
    variant = groups.current
    assert variant is not main
    assert variant.prepared is not main.prepared
    assert groups.kept(main.prepared) is main  # the group left, kept as it was
    r = Replayer(inspector_tape())
    r.receive(init(1, {"roots": {}}))
    assert r.matcher is not r.main_matcher  # the replayer answers from the seat's group


def test_a_modern_request_on_a_legacy_cassette_is_refused_before_matching() -> None:
    terms, _, waits = machine(tape(("c2s", req(1, "initialize")), ("s2c", res(1, LEGACY_INIT))))
    refused = terms.before(modern_req(5, "tools/list"))
    assert isinstance(refused, Reply)
    (error,) = refused.messages
    assert error["error"]["code"] == -32022
    assert (refused.status, refused.refuses_era) == (400, True)
    assert waits.misses == [refused.miss]
    assert terms.client_era == "modern"


def test_a_legacy_initialize_on_a_modern_cassette_is_answered_from_the_discovery() -> None:
    terms, groups, waits = machine(modern_tape())
    answer = terms.before(init(1, {}, version="2025-06-18"))
    assert isinstance(answer, Reply)
    (message,) = answer.messages
    assert message["result"]["protocolVersion"] == "2025-06-18"
    assert groups.current.playback.modern is False  # log messages as a legacy session's
    assert waits.misses == []
    assert terms.client_era == "legacy"


def test_the_capability_warning_made_before_is_told_after_once() -> None:
    recorded = tape(
        ("c2s", init(1, {"sampling": {}})),
        ("s2c", res(1, LEGACY_INIT)),
        ("c2s", CALL),
        ("s2c", ASKED),
        ("c2s", ANSWER),
        ("s2c", RESULT),
    )
    terms, _, _ = machine(recorded)
    handshake = init(1, {})  # the recording's client declared sampling; the server asked
    assert terms.before(handshake) is None
    (warning,) = terms.after(handshake, Reply((res(1, LEGACY_INIT),))).warnings
    assert "the recorded server reacted to sampling" in warning
    again = init(2, {})
    terms.before(again)
    assert terms.after(again, Reply((res(2, LEGACY_INIT),))).warnings == ()


def test_which_requests_the_era_rules_answer_is_a_function_of_values() -> None:
    assert crosses("initialize", "legacy", "modern")  # a legacy client, a modern recording
    assert not crosses("initialize", "legacy", "legacy")
    assert crosses("tools/list", "modern", "legacy")  # the 2026-07-28 envelope on legacy
    assert not crosses("server/discover", "modern", "legacy")  # the recording says -32601
    assert not crosses("tools/list", None, "legacy")
    assert not crosses("tools/list", "modern", "modern")


def test_what_the_recording_makes_certain_is_a_function_of_values() -> None:
    assert unrecorded(req(3, "ping"), "legacy", None, None, None) == res(3, {})
    lacks = unrecorded(req(4, "server/discover"), "legacy", None, None, None)
    assert lacks is not None
    assert lacks["error"]["code"] == -32601
    logs = {"capabilities": {"logging": {}}}
    level = req(5, "logging/setLevel", {"level": "info"})
    assert unrecorded(level, "legacy", logs, "legacy", None) == res(5, {})
    modern = unrecorded(level, "modern", None, "modern", None)  # 2026-07-28 removed it
    assert modern is not None
    assert modern["error"]["code"] == -32601


# -- after: what the client is sent ------------------------------------------------------


def test_a_legacy_client_of_a_modern_recording_gets_its_shape_and_status() -> None:
    terms, groups, _ = machine(modern_tape())
    terms.before(init(1, {}))
    live = req(2, "tools/list")
    recorded = Exchange(key=0, message=modern_req(9, "tools/list"), seq=9, status=404)
    answer = res(2, {"tools": [], "resultType": "complete", "ttlMs": 5})
    reply = Reply((answer,), None, (None,), recorded, 2, responded=True)
    sent = terms.after(live, reply)
    assert sent.messages == (res(2, {"tools": []}),)  # the 2026-07-28-only members go
    assert sent.status == 200  # a legacy server answers an error at 200
    alone = terms.after(None, reply)  # a reply to no client message: its status only
    assert alone.messages == reply.messages
    assert alone.status == 200
    assert groups.current.prepared.era == "modern"


def test_an_older_legacy_revision_is_granted_after_playing() -> None:
    terms, groups, _ = machine(tape(("c2s", init(1, {})), ("s2c", res(1, LEGACY_INIT))))
    older = init(3, {}, version="2025-03-26")
    assert terms.before(older) is None
    sent = terms.after(older, played(older, exchange_of(groups, "initialize")), matched=True)
    assert sent.messages[0]["result"]["protocolVersion"] == "2025-03-26"
    assert sent.warnings == ()
    newer = init(4, {}, version="2099-01-01")
    terms.before(newer)
    kept = terms.after(newer, played(newer, exchange_of(groups, "initialize")), matched=True)
    assert kept.messages[0]["result"]["protocolVersion"] == "2025-06-18"
    (warning,) = kept.warnings
    assert "grants no newer revision" in warning


def test_a_legacy_call_is_announced_once_per_tool_and_noted_in_its_errors() -> None:
    terms, groups, _ = machine(refusing_tape())
    terms.before(init(1, {}))
    first = req(9, "tools/call", {"name": "write"})
    assert terms.before(first) is None
    sent = terms.after(first, played(first, exchange_of(groups, "tools/call")), matched=True)
    assert sent.warnings == (announcement("write"),)
    texts = [item["text"] for item in sent.messages[0]["result"]["content"]]
    assert texts[-1] == f"cassette-mcp: {announcement('write')}"
    assert "resultType" not in sent.messages[0]["result"]
    again = req(10, "tools/call", {"name": "write"})
    terms.before(again)
    told = terms.after(again, played(again, exchange_of(groups, "tools/call", 1)), matched=True)
    assert told.warnings == ()  # once per tool
    assert told.messages[0]["result"]["content"][-1]["text"] == texts[-1]  # every error says it


def test_input_required_becomes_an_input_round_whose_answers_make_the_retry() -> None:
    terms, groups, waits = machine(asking_tape())
    terms.before(init(1, {"sampling": {}}))
    call = req(9, "tools/call", {"name": "ask"})
    assert terms.before(call) is None
    asked = terms.after(call, played(call, exchange_of(groups, "tools/call")), matched=True)
    (request,) = asked.messages
    assert (request["method"], request["id"]) == ("sampling/createMessage", 0)
    assert asked.awaiting == (0,)
    assert not asked.responded
    assert waits.waiting == (0,)
    retry = waits.round_answered(res(0, WROTE))
    assert isinstance(retry, dict)  # the recorded retry, for the replayer to answer
    assert retry["id"] == 9
    assert retry["params"]["inputResponses"] == {"k": WROTE}
    assert retry["params"]["requestState"] == "S"
    assert waits.waiting == ()


# -- through the replayer ------------------------------------------------------------------


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


def test_the_replayer_asks_the_machine_at_two_points_only() -> None:
    """The split holds: ``Replayer`` reaches its era machine through one attribute, at
    construction, before, after and the client's era, keeps none of its flags, and stays
    a small module (under 350 lines)."""
    from pathlib import Path

    import cassette.core.replay.replayer as module

    source = Path(module.__file__).read_text(encoding="utf-8")
    assert len(source.splitlines()) < 350
    assert source.count("self._terms") <= 4
    assert source.count("self._terms.") == 3  # before, after, client_era
    for flag in ("_shaping", "_pending", "_choosing", "_told", "_kept", "_noted"):
        assert flag not in source, flag


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
