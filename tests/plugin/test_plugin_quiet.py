"""The pytest plugin's ``all`` records again quietly: the same answers leave the cassette
byte-identical, a changed answer changes its own line only."""

from __future__ import annotations

import pytest

from tests.helpers.support import ROOT
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


STEADY = ROOT / "tests" / "servers" / "steady_server.py"
CLOCK = f"""
STEADY = [sys.executable, {str(STEADY)!r}]


def test_clock(mcp_cassette):
    client = LineClient(mcp_cassette.server_command(STEADY))
    try:
        client.initialize()
        reply = client.request("tools/call", {{"name": "clock", "arguments": {{}}}})
        assert "report made at" in reply["result"]["content"][0]["text"]
        client.finish()
    finally:
        client.kill_group()
"""


@pytest.mark.parametrize(
    "setting",
    [
        "@pytest.mark.mcp_cassette(keep_volatile=True)\n",
        "@pytest.fixture\ndef mcp_cassette_config():\n    return {'keep_volatile': True}\n\n",
    ],
    ids=["marker", "config-fixture"],
)
def test_keep_volatile_leaves_a_time_stamped_answer_as_it_was(suite: Suite, setting: str) -> None:
    suite.write("test_stamped", CLOCK)
    suite.run().assert_outcomes(passed=1)
    tape = suite.pytester.path / "cassettes" / "test_stamped" / "test_clock.jsonl"
    first = tape.read_bytes()
    suite.run("--mcp-cassette-mode=all").assert_outcomes(passed=1)
    assert tape.read_bytes() != first  # the time and the trace id moved: re-written
    tape.write_bytes(first)
    marked = CLOCK.replace("\ndef test_clock", "\n" + setting + "def test_clock")
    assert marked != CLOCK
    suite.write("test_stamped", marked)
    suite.run("--mcp-cassette-mode=all").assert_outcomes(passed=1)
    assert tape.read_bytes() == first  # recorded again, every old line kept
