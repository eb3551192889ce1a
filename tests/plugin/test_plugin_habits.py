"""The plugin as a pytest-recording user reaches for it: ``--record-mode`` with or without
pytest-recording (it is in the test dependencies; ``-p no:recording`` makes a run where it
is absent), an ``mcp_cassette_config`` fixture for a module's or a class's settings, and
a matcher hook in a conftest. Each inner run drives the real episode server."""

from __future__ import annotations

import pytest

from tests.plugin.test_plugin import ECHO, Suite

MODE = """
def test_mode(mcp_cassette):
    assert (mcp_cassette.mode, mcp_cassette.mode_source) == tuple(os.environ["WANT"].split("|"))
"""
ABSENT = ("-p", "no:recording")  # pytest-recording installed, but not loaded


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    monkeypatch.delenv("CI", raising=False)
    return Suite(pytester, monkeypatch)


def test_record_mode_works_without_pytest_recording(suite: Suite) -> None:
    suite.write("test_peer", ECHO)
    result = suite.run(*ABSENT, "--record-mode=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mode none (from --record-mode) only replays*"])
    assert suite.starts == 0
    suite.write("test_modes", MODE)
    rewrite = suite.run(*ABSENT, "--record-mode=rewrite", "test_modes.py", WANT="all|--record-mode")
    rewrite.assert_outcomes(passed=1)
    typo = suite.run(*ABSENT, "--record-mode=nonee", "test_modes.py")
    assert typo.ret == pytest.ExitCode.USAGE_ERROR
    typo.stderr.fnmatch_lines(["*'nonee' (from --record-mode; did you mean none?)*"])
    helped = suite.run(*ABSENT, "--help")
    helped.stdout.fnmatch_lines(["*--record-mode=MODE*", "*registered by cassette-mcp*"])


def test_record_mode_is_pytest_recordings_when_it_is_loaded(suite: Suite) -> None:
    suite.write("test_modes", MODE)
    helped = suite.run("--help")
    helped.stdout.fnmatch_lines(["*--record-mode={once,new_episodes,none,all,rewrite}*"])
    assert "registered by cassette-mcp" not in helped.stdout.str()
    # its choices, its error: the option is the one it registered, read as it stands
    refused = suite.run("--record-mode=nonee", "test_modes.py")
    assert refused.ret == pytest.ExitCode.USAGE_ERROR
    refused.stderr.fnmatch_lines(["*argument --record-mode: invalid choice: 'nonee'*"])
    suite.run("--record-mode=none", "test_modes.py", WANT="none|--record-mode").assert_outcomes(
        passed=1
    )


def test_record_mode_is_not_registered_twice_when_a_conftest_loads_pytest_recording(
    suite: Suite,
) -> None:
    """Loaded by a conftest's ``pytest_plugins`` (the entry point blocked), pytest-recording
    registers ``--record-mode`` after every entry-point plugin: the plugin sees it and
    leaves the option to it."""
    suite.pytester.makeconftest('pytest_plugins = ["pytest_recording.plugin"]')
    suite.write("test_modes", MODE)
    result = suite.run(*ABSENT, "--record-mode=none", WANT="none|--record-mode")
    result.assert_outcomes(passed=1)


CONFIGURED = """
@pytest.fixture(scope="module")
def mcp_cassette_config():
    return {"mode": "none", "ignore": ["/params/arguments/at"], "strategy": "loose"}


def test_module(mcp_cassette):
    assert (mcp_cassette.mode, mcp_cassette.mode_source) == ("none", "mcp_cassette_config")
    assert mcp_cassette.ignore == ("/params/arguments/at",)
    assert mcp_cassette.strategy == "loose"


@pytest.mark.mcp_cassette(mode="all", strategy="strict")
def test_marker_wins(mcp_cassette):
    assert (mcp_cassette.mode, mcp_cassette.mode_source) == ("all", "@pytest.mark.mcp_cassette")
    assert mcp_cassette.strategy == "strict"
    assert mcp_cassette.ignore == ("/params/arguments/at",)


class TestClass:
    @pytest.fixture
    def mcp_cassette_config(self):
        return {"record_mode": "new_episodes", "allow_repeats": True}

    def test_class(self, mcp_cassette):
        assert (mcp_cassette.mode, mcp_cassette.mode_source) == (
            "new_episodes", "mcp_cassette_config")
        assert mcp_cassette.allow_repeats
        assert mcp_cassette.strategy == "default"  # the project's: the class replaced it all


def test_unconfigured_in_another_module_sees_nothing(mcp_cassette):
    pass
"""


def test_the_config_fixture_gives_per_module_and_per_class_settings(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml('[tool.cassette.pytest]\nstrategy = "default"\n')
    suite.write("test_configured", CONFIGURED)
    suite.write(
        "test_plain",
        """
        def test_plain(mcp_cassette):
            assert (mcp_cassette.mode, mcp_cassette.mode_source) == ("once", "default")
            assert mcp_cassette.strategy == "default"  # the project's
        """,
    )
    result = suite.run("-W", "always::pytest.PytestWarning")
    result.assert_outcomes(passed=5)
    # pytest-recording's spelling, in the fixture too: taken, with a warning naming ours
    result.stdout.fnmatch_lines(
        ["*mcp_cassette_config(record_mode=...) is the vcrpy / pytest-recording spelling*"]
    )


def test_the_config_fixture_is_beaten_by_a_ceiling_and_checked(suite: Suite) -> None:
    suite.pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def mcp_cassette_config():
            return {"mode": "all", "stratgy": "loose"}
        """
    )
    suite.write("test_any", MODE)
    result = suite.run()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*mcp_cassette_config takes a path and the keywords*"
            "got stratgy= (did you mean strategy=?)*"
        ]
    )
    suite.pytester.makeconftest(
        """
        import pytest

        @pytest.fixture
        def mcp_cassette_config():
            return {"mode": "all"}
        """
    )
    suite.run(MCP_CASSETTE_MODE="none", WANT="none|MCP_CASSETTE_MODE").assert_outcomes(passed=1)
    suite.run(WANT="all|mcp_cassette_config").assert_outcomes(passed=1)


def test_a_mistyped_mode_in_the_config_fixture_is_reported_even_under_a_marker(
    suite: Suite,
) -> None:
    suite.write(
        "test_typo",
        """
        @pytest.fixture(scope="module")
        def mcp_cassette_config():
            return {"mode": "nnoe"}

        @pytest.mark.mcp_cassette(mode="once")
        def test_marked(mcp_cassette):
            pass
        """,
    )
    result = suite.run()
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*unknown record mode 'nnoe' (from mcp_cassette_config; did you mean none?)*"]
    )


SEND_B = """
def test_echo(mcp_cassette):
    assert talk(mcp_cassette.server_command(SERVER), "b") == ["live:a"]
    assert (mcp_cassette.strategy, mcp_cassette.ignore) == ("loose", ("/params/arguments/text",))
"""


def test_a_conftest_hook_supplies_the_matching_of_a_test(suite: Suite) -> None:
    suite.write("test_echo_it", ECHO)
    suite.run().assert_outcomes(passed=1)  # recorded: echo "a" answered "live:a"
    assert suite.starts == 1
    suite.write("test_echo_it", SEND_B)
    # without the hook, "b" is no recorded request
    suite.run(MCP_CASSETTE_MODE="none").assert_outcomes(failed=1)
    suite.pytester.makeconftest(
        """
        def pytest_mcp_cassette_matching(item, matching):
            assert matching.strategy is None and matching.ignore == []
            matching.strategy = "loose"
            matching.ignore.append("/params/arguments/text")
        """
    )
    result = suite.run(MCP_CASSETTE_MODE="none")
    result.assert_outcomes(passed=1)
    assert suite.starts == 1  # nothing went live: the replay answered "b" with "a"'s answer


def test_what_a_hook_leaves_is_checked(suite: Suite) -> None:
    suite.pytester.makeconftest(
        """
        def pytest_mcp_cassette_matching(item, matching):
            matching.strategy = "fuzzy"
        """
    )
    suite.write("test_any", MODE)
    result = suite.run(WANT="once|default")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        ["*unknown strategy 'fuzzy'; choose one of: strict, default, loose*"]
    )
