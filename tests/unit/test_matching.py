"""The matcher: fingerprints, consumption order, strategies and miss diagnostics."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cassette.core.replay.matching import (
    Candidate,
    FingerprintMatcher,
    MissReport,
    canonical,
    fingerprint,
    get_strategy,
)
from cassette.errors import AlreadyPlayedError, NotRecordedError, UsageError


def req(method: str, params: dict[str, Any] | None = None, msg_id: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return req("tools/call", {"name": name, "arguments": arguments})


def matcher(*messages: dict[str, Any], strategy: str = "default") -> FingerprintMatcher:
    return FingerprintMatcher(
        [Candidate(i, m, seq=i + 1) for i, m in enumerate(messages)], strategy
    )


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=10,
)


class TestFingerprint:
    def test_lifecycle_calls_match_by_method_alone(self) -> None:
        a = req("initialize", {"protocolVersion": "2025-06-18", "clientInfo": {"name": "a"}})
        b = req("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"roots": {}}})
        assert fingerprint(a) == fingerprint(b) == ("initialize", "", "")
        assert fingerprint(req("server/discover", {"_meta": {"x": 1}}))[0] == "server/discover"

    def test_tools_call_uses_name_and_canonical_arguments(self) -> None:
        assert fingerprint(call("echo", a=1, b=2)) == fingerprint(
            req("tools/call", {"arguments": {"b": 2, "a": 1}, "name": "echo"})
        )
        assert fingerprint(call("echo", a=1)) != fingerprint(call("echo", a=2))
        assert fingerprint(call("echo", a=1)) != fingerprint(call("other", a=1))

    def test_meta_and_cursor_are_ignored(self) -> None:
        plain = req("resources/read", {"uri": "x://1"})
        noisy = req("resources/read", {"uri": "x://1", "_meta": {"progressToken": 7}})
        assert fingerprint(plain) == fingerprint(noisy)
        page1 = req("tools/list", {})
        page2 = req("tools/list", {"cursor": "abc"})
        assert fingerprint(page1) == fingerprint(page2)

    def test_tools_call_meta_is_ignored(self) -> None:
        a = req("tools/call", {"name": "t", "arguments": {}, "_meta": {"progressToken": 1}})
        b = req("tools/call", {"name": "t", "arguments": {}, "_meta": {"progressToken": 99}})
        assert fingerprint(a) == fingerprint(b)

    @given(json_values)
    def test_canonical_ignores_key_order(self, value: Any) -> None:
        def shuffle(v: Any) -> Any:
            if isinstance(v, dict):
                return {k: shuffle(v[k]) for k in reversed(list(v))}
            if isinstance(v, list):
                return [shuffle(x) for x in v]
            return v

        assert canonical(value) == canonical(shuffle(value))

    @given(json_values, json_values)
    def test_fingerprint_equal_iff_arguments_equal_as_json(self, a: Any, b: Any) -> None:
        # absent and null arguments are spelled {} (docs/matching.md)
        same = canonical({} if a is None else a) == canonical({} if b is None else b)
        fa = fingerprint(req("tools/call", {"name": "t", "arguments": a}))
        fb = fingerprint(req("tools/call", {"name": "t", "arguments": b}))
        assert (fa == fb) == same


class TestConsumption:
    def test_first_unconsumed_wins_in_recorded_order(self) -> None:
        m = matcher(call("echo", x=1), call("echo", x=1), call("echo", x=1))
        assert [m.match(call("echo", x=1)) for _ in range(3)] == [0, 1, 2]

    def test_tool_recorded_once_called_twice_is_already_played(self) -> None:
        m = matcher(call("echo", x=1))
        m.match(call("echo", x=1))
        with pytest.raises(AlreadyPlayedError) as info:
            m.match(call("echo", x=1))
        report = info.value.report
        assert isinstance(report, MissReport)
        assert report.kind == "already-played"
        assert report.closest_line == 2
        assert "recorded 1 time(s)" in str(info.value)

    def test_default_replays_last_listing_again(self) -> None:
        m = matcher(req("tools/list"), req("initialize"))
        assert m.match(req("tools/list")) == 0
        assert m.match(req("tools/list")) == 0
        assert m.match(req("initialize")) == 1
        assert m.match(req("initialize")) == 1

    def test_strict_refuses_repeated_listing(self) -> None:
        m = matcher(req("tools/list"), strategy="strict")
        m.match(req("tools/list"))
        with pytest.raises(AlreadyPlayedError):
            m.match(req("tools/list"))

    def test_loose_falls_back_to_next_unconsumed_of_same_tool(self) -> None:
        m = matcher(call("echo", x=1), call("echo", x=2), call("sum", a=1), strategy="loose")
        assert m.match(call("echo", x=99)) == 0
        assert m.match(call("echo", x=2)) == 1
        with pytest.raises(NotRecordedError):
            m.match(call("echo", x=3))  # every echo used; loose never crosses to another tool

    def test_default_does_not_fall_back(self) -> None:
        m = matcher(call("echo", x=1))
        with pytest.raises(NotRecordedError):
            m.match(call("echo", x=2))

    def test_fallback_consumption_is_shared_with_exact_queue(self) -> None:
        m = matcher(call("echo", x=1), call("echo", x=2), strategy="loose")
        assert m.match(call("echo", x=7)) == 0  # takes the x=1 recording by fallback
        assert m.match(call("echo", x=1)) == 1  # x=1 is used up: falls back to x=2
        with pytest.raises(AlreadyPlayedError):
            m.match(call("echo", x=2))  # and x=2 went with it

    def test_unconsumed_lists_what_was_never_played(self) -> None:
        m = matcher(req("tools/list"), call("a"), call("b"))
        m.match(call("b"))
        assert [c.key for c in m.unconsumed()] == [0, 1]

    @given(st.lists(st.sampled_from(["a", "b", "c"]), max_size=30))
    def test_each_recording_is_played_at_most_once_under_strict(self, names: list[str]) -> None:
        m = matcher(*(call(n) for n in names), strategy="strict")
        played: list[int] = []
        for n in ["a", "b", "c"] * (len(names) + 1):
            with contextlib.suppress(NotRecordedError, AlreadyPlayedError):
                played.append(m.match(call(n)))
        assert sorted(played) == list(range(len(names)))


class TestDiagnostics:
    def test_names_argument_path_with_both_values(self) -> None:
        m = matcher(call("echo", message="hello", n=1))
        with pytest.raises(NotRecordedError) as info:
            m.match(call("echo", message="bye", n=1))
        text = str(info.value)
        assert 'tools/call "echo" not recorded' in text
        assert '/message: recorded "hello", received "bye"' in text
        report = info.value.report
        assert isinstance(report, MissReport)
        assert report.closest_line == 2
        assert [d.path for d in report.diffs] == ["/message"]

    def test_closest_is_the_one_with_fewest_differences(self) -> None:
        m = matcher(call("f", a=1, b=1, c=1), call("f", a=1, b=2, c=3))
        with pytest.raises(NotRecordedError) as info:
            m.match(call("f", a=1, b=2, c=4))
        report = info.value.report
        assert isinstance(report, MissReport)
        assert report.closest_line == 3
        assert [d.path for d in report.diffs] == ["/c"]

    def test_unknown_tool_lists_recorded_tools(self) -> None:
        m = matcher(call("echo"), call("sum"))
        with pytest.raises(NotRecordedError, match=r"recorded tools: echo, sum"):
            m.match(call("nope"))

    def test_unknown_method_lists_recorded_methods(self) -> None:
        m = matcher(req("tools/list"), call("echo"))
        with pytest.raises(NotRecordedError, match=r"prompts/list was never recorded"):
            m.match(req("prompts/list"))

    def test_missing_argument_is_reported_as_absent(self) -> None:
        m = matcher(call("f", a=1, b=2))
        with pytest.raises(NotRecordedError, match=r"/b: recorded 2, received \(absent\)"):
            m.match(call("f", a=1))

    def test_json_types_matter(self) -> None:
        m = matcher(call("f", a=1))
        with pytest.raises(NotRecordedError, match=r"/a: recorded 1, received true"):
            m.match(call("f", a=True))

    def test_miss_data_is_structured(self) -> None:
        m = matcher(call("f", a=1))
        with pytest.raises(NotRecordedError) as info:
            m.match(call("f", a=2))
        report = info.value.report
        assert isinstance(report, MissReport)
        assert report.as_data() == {
            "kind": "not-recorded",
            "method": "tools/call",
            "closestLine": 2,
            "diffs": [{"path": "/a", "recorded": 1, "received": 2}],
        }


def test_unknown_strategy_lists_valid_ones() -> None:
    with pytest.raises(UsageError, match="strict, default, loose"):
        get_strategy("fuzzy")
