"""The plugin as vcrpy and pytest-recording users expect it (pytest-recording is in the
test dependencies, so its ``--record-mode`` option is the real one): pytest-recording's
``--record-mode`` is honoured for MCP cassettes, a CI run defaults to ``none``, and the
peers' marker spellings are understood (with a warning naming ours)."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin import ECHO, Suite

MODE = """
def test_mode(mcp_cassette):
    assert (mcp_cassette.mode, mcp_cassette.mode_source) == tuple(os.environ["WANT"].split("|"))
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    monkeypatch.delenv("CI", raising=False)
    return Suite(pytester, monkeypatch)


def test_pytest_recordings_record_mode_is_honoured_when_given(suite: Suite) -> None:
    suite.write("test_peer", ECHO)
    result = suite.run("--record-mode=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mode none (from --record-mode) only replays*"])
    assert suite.starts == 0
    suite.write("test_modes", MODE)
    rewrite = suite.run("--record-mode=rewrite", "test_modes.py", WANT="all|--record-mode")
    rewrite.assert_outcomes(passed=1)
    suite.run("test_modes.py", WANT="once|default").assert_outcomes(passed=1)
    # ours, when both are given, is the one in force
    both = suite.run(
        "--record-mode=none",
        "--mcp-cassette-mode=all",
        "test_modes.py",
        WANT="all|--mcp-cassette-mode",
    )
    both.assert_outcomes(passed=1)


def test_under_ci_the_default_is_none(suite: Suite) -> None:
    suite.write("test_ci", ECHO)
    result = suite.run(CI="true")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*no such cassette, and mode none (from CI=true) only replays*"])
    assert suite.starts == 0
    suite.write("test_modes", MODE)
    suite.run("test_modes.py", CI="false", WANT="once|default").assert_outcomes(passed=1)
    suite.run("test_modes.py", CI="0", WANT="once|default").assert_outcomes(passed=1)
    given = suite.run(
        "test_modes.py", "--mcp-cassette-mode=all", CI="1", WANT="all|--mcp-cassette-mode"
    )
    given.assert_outcomes(passed=1)


def test_peer_marker_spellings_are_understood_with_a_warning(suite: Suite) -> None:
    suite.write(
        "test_spelling",
        """
        @pytest.mark.mcp_cassette(record_mode="none", ignore_params=["/params/arguments/at"])
        def test_peer(mcp_cassette):
            assert (mcp_cassette.mode, mcp_cassette.ignore) == ("none", ("/params/arguments/at",))
        """,
    )
    result = suite.run()
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*@pytest.mark.mcp_cassette(record_mode=...) is the vcrpy / pytest-recording "
            "spelling; cassette-mcp calls it mode=...*",
            "*(ignore_params=...) is the vcrpy / pytest-recording spelling; cassette-mcp calls "
            "it ignore=...*",
        ]
    )


TWICE = """
def test_twice(mcp_cassette):
    texts = [e.split(":", 1)[1] for e in expected()]
    assert talk(mcp_cassette.server_command(SERVER), *texts) == expected()
"""


@pytest.mark.parametrize("spelling", ["allow_repeats", "allow_playback_repeats"])
def test_the_marker_allows_repeats(suite: Suite, spelling: str) -> None:
    suite.write("test_again", f"@pytest.mark.mcp_cassette({spelling}=True)" + TWICE)
    suite.run(EXPECT="live:a").assert_outcomes(passed=1)  # recorded once
    again = suite.run(MCP_CASSETTE_MODE="none", EXPECT="live:a,live:a")
    again.assert_outcomes(passed=1)  # called twice: the second gets the last answer again
    again.stdout.fnmatch_lines(
        ["mcp-cassette: sessions: 1 replayed, 1 answer(s) repeated (allow_repeats)"]
    )
    assert suite.starts == 1
    suite.write("test_again", TWICE)
    plain = suite.run(MCP_CASSETTE_MODE="none", EXPECT="live:a,live:a")
    plain.assert_outcomes(failed=1)
    plain.stdout.fnmatch_lines(["*allow_repeats (--allow-repeats) would answer it again*"])
