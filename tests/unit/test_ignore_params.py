"""Ignored params: a volatile value never causes a miss, and a miss still shows it."""

from __future__ import annotations

from typing import Any

import pytest

from cassette.core.replay.matching import Candidate, FingerprintMatcher, get_strategy
from cassette.core.replay.sessions import ReplayPool
from cassette.errors import NotRecordedError, UsageError
from tests.unit.test_matching import call, req
from tests.unit.test_replayer import tape


def ignoring(*pointers: str, strategy: str = "default") -> Any:
    return get_strategy(strategy).ignoring(pointers)


def matcher(*messages: dict[str, Any], ignore: tuple[str, ...]) -> FingerprintMatcher:
    candidates = [Candidate(i, m, seq=i + 1) for i, m in enumerate(messages)]
    return FingerprintMatcher(candidates, ignoring(*ignore))


def test_an_ignored_argument_never_causes_a_miss() -> None:
    m = matcher(call("search", q="cats", ts=1), ignore=("/params/arguments/ts",))
    assert m.match(call("search", q="cats", ts=999)) == 0


def test_an_ignored_argument_absent_on_one_side_still_matches() -> None:
    m = matcher(call("search", q="cats", nonce="a"), ignore=("/params/arguments/nonce",))
    assert m.match(call("search", q="cats")) == 0


def test_other_params_ignore_too_and_nested_pointers_work() -> None:
    recorded = req("resources/read", {"uri": "file:///a", "opts": {"stamp": 1, "deep": True}})
    live = req("resources/read", {"uri": "file:///a", "opts": {"stamp": 2, "deep": True}})
    m = matcher(recorded, ignore=("/params/opts/stamp",))
    assert m.match(live) == 0
    other = req("resources/read", {"uri": "file:///a", "opts": {"stamp": 2, "deep": False}})
    with pytest.raises(NotRecordedError):
        matcher(recorded, ignore=("/params/opts/stamp",)).match(other)


def test_a_miss_for_another_reason_still_shows_the_ignored_value() -> None:
    m = matcher(call("search", q="cats", ts=1), ignore=("/params/arguments/ts",))
    with pytest.raises(NotRecordedError) as raised:
        m.match(call("search", q="dogs", ts=2))
    summary = raised.value.report.summary  # type: ignore[attr-defined]
    assert summary == (
        'tools/call "search" not recorded: arguments differ at /q: recorded "cats", '
        'received "dogs"; /ts: recorded 1, received 2 (ignored)'
    )


def test_without_ignore_the_value_misses() -> None:
    with pytest.raises(NotRecordedError):
        matcher(call("search", q="cats", ts=1), ignore=()).match(call("search", q="cats", ts=2))


@pytest.mark.parametrize("pointer", ["/arguments/ts", "ts", "/params", "/method"])
def test_a_pointer_outside_params_is_refused_with_an_example(pointer: str) -> None:
    with pytest.raises(UsageError, match=r"e\.g\. /params/arguments/timestamp"):
        get_strategy("default").ignoring([pointer])


def test_a_replay_session_honours_the_strategy_s_ignore_rules() -> None:
    recorded = tape(
        ("c2s", call("stamp", at="2026-01-01T00:00:00Z")),
        ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}),
    )
    sessions = ReplayPool(recorded, ignoring("/params/arguments/at"))
    reply = sessions.new().receive(call("stamp", at="2026-12-01T10:00:00Z"))
    assert reply.miss is None
    assert reply.messages[-1]["result"] == {"content": []}
