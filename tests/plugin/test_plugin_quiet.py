"""The pytest plugin's ``all`` records again quietly: the same answers leave the cassette
byte-identical, a changed answer changes its own line only."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin import ECHO, Suite


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def test_all_leaves_an_unchanged_session_byte_identical(suite: Suite) -> None:
    suite.write("test_quiet", ECHO)
    suite.run(EXPECT="live:a,live:b").assert_outcomes(passed=1)
    tape = suite.pytester.path / "cassettes" / "test_quiet" / "test_echo.jsonl"
    first = tape.read_bytes()
    suite.run("--mcp-cassette-mode=all", EXPECT="live:a,live:b").assert_outcomes(passed=1)
    assert suite.starts == 2  # recorded again, for real
    assert tape.read_bytes() == first

    suite.run("--mcp-cassette-mode=all", TAG="new", EXPECT="new:a,new:b").assert_outcomes(passed=1)
    before, after = first.splitlines(), tape.read_bytes().splitlines()
    assert len(before) == len(after)
    differing = [n for n, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    # the header (its target's command names --tag new) and the two answers, nothing else
    assert [b"--tag" in after[0], *(b"new:" in after[n] for n in differing[1:])] == [True] * 3
    assert differing[0] == 0
    assert len(differing) == 3
