"""Repeats on request: a used-up request of any method gets its last answer again when
the strategy allows repeats (counted), and an "already played" miss suggests only what
would answer it."""

from __future__ import annotations

import pytest

from cassette.core.replay.matching import Candidate, FingerprintMatcher, get_strategy
from cassette.core.replay.strategies import repeating
from cassette.errors import AlreadyPlayedError
from tests.unit.test_matching import call


def matcher(
    *messages: dict[str, object], strategy: str = "default", allow: bool = False
) -> FingerprintMatcher:
    chosen = repeating(get_strategy(strategy), allow)
    return FingerprintMatcher([Candidate(i, m, seq=i + 1) for i, m in enumerate(messages)], chosen)


@pytest.mark.parametrize("strategy", ["strict", "default", "loose"])
def test_a_tool_called_twice_but_recorded_once_gets_its_answer_again(strategy: str) -> None:
    m = matcher(call("add_note", text="a"), strategy=strategy, allow=True)
    assert m.match(call("add_note", text="a")) == 0
    assert m.match(call("add_note", text="a")) == 0
    assert m.match(call("add_note", text="a")) == 0
    assert m.repeats == 2
    with pytest.raises(Exception, match="not recorded"):
        m.match(call("add_note", text="b"))  # a repeat never borrows another's answer


def test_the_last_of_several_recordings_is_the_one_repeated() -> None:
    m = matcher(call("roll"), call("roll"), allow=True)
    assert [m.match(call("roll")) for _ in range(4)] == [0, 1, 1, 1]
    assert m.repeats == 2


@pytest.mark.parametrize("strategy", ["strict", "default", "loose"])
def test_without_the_opt_in_a_repeat_misses_under_every_strategy(strategy: str) -> None:
    m = matcher(call("add_note", text="a"), strategy=strategy)
    m.match(call("add_note", text="a"))
    with pytest.raises(AlreadyPlayedError) as raised:
        m.match(call("add_note", text="a"))
    assert m.repeats == 0
    summary = raised.value.report.summary
    assert "allow_repeats (--allow-repeats) would answer it again" in summary
    # nothing else of add_note is left to play, so loose would not help: it is not offered
    assert "the loose strategy" not in summary


def test_loose_is_suggested_only_when_it_would_answer() -> None:
    m = matcher(call("add_note", text="a"), call("add_note", text="b"))
    m.match(call("add_note", text="a"))
    with pytest.raises(AlreadyPlayedError) as raised:
        m.match(call("add_note", text="a"))
    summary = raised.value.report.summary
    assert "the loose strategy would answer it with another recording of it" in summary
    loose = matcher(call("add_note", text="a"), call("add_note", text="b"), strategy="loose")
    loose.match(call("add_note", text="a"))
    assert loose.match(call("add_note", text="a")) == 1  # as promised


def test_allowing_repeats_leaves_read_only_repeats_uncounted() -> None:
    m = matcher({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, allow=True)
    for _ in range(3):
        assert m.match({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}) == 0
    assert m.repeats == 0  # a listing repeats under default anyway: nothing to count
