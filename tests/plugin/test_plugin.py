"""The pytest plugin, black-box with pytester: each inner run is a test suite of its own,
its tests drive a real stdio server (the episode server, which logs every start) through
``mcp_cassette.server_command``, and we look at outcomes, messages and files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from cassette import Cassette
from tests.helpers.support import ROOT

SERVER = ROOT / "tests" / "servers" / "episode_server.py"

PRELUDE = """
import os, sys
sys.path.insert(0, {root!r})
import pytest
from tests.helpers.support import LineClient

SERVER = [sys.executable, {server!r}, "--log", {log!r}, "--tag", os.environ.get("TAG", "live")]


def talk(command, *texts):
    client = LineClient(command)
    try:
        client.initialize()
        out = []
        for text in texts:
            reply = client.request("tools/call", {{"name": "echo", "arguments": {{"text": text}}}})
            out.append(reply["result"]["content"][0]["text"] if "result" in reply else reply)
        client.finish()
    finally:
        client.kill_group()
    return out


def expected():
    return os.environ.get("EXPECT", "live:a").split(",")
"""

ECHO = """
def test_echo(mcp_cassette):
    texts = [e.split(":", 1)[1] for e in expected()]
    assert talk(mcp_cassette.server_command(SERVER), *texts) == expected()
"""


class Suite:
    """An inner test suite in a pytester folder, with the server's start log."""

    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        self.log = pytester.path / "starts.log"
        monkeypatch.delenv("MCP_CASSETTE_MODE", raising=False)

    def write(self, name: str, body: str) -> Path:
        prelude = PRELUDE.format(root=str(ROOT), server=str(SERVER), log=str(self.log))
        return self.pytester.makepyfile(**{name: prelude + textwrap.dedent(body)})

    def run(self, *args: str, **env: str) -> pytest.RunResult:
        with self.monkeypatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            # In-process, ``cassette`` is already imported, so pytest cannot rewrite it.
            quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
            return self.pytester.runpytest("-p", "no:cacheprovider", *quiet, *args)

    @property
    def starts(self) -> int:
        """The server's starts for the tests' own sessions (the recorder's probes, which
        start it again beside a recording, are ``probes``)."""
        return self._lines("start") - self.probes

    @property
    def probes(self) -> int:
        """The server's starts the recorder's probes opened a session in."""
        return self._lines("probe")

    def _lines(self, word: str) -> int:
        text = self.log.read_text() if self.log.exists() else ""
        return sum(1 for line in text.splitlines() if line.split()[0] == word)


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def test_once_records_the_first_time_and_replays_after(suite: Suite) -> None:
    suite.write("test_once", ECHO)
    first = suite.run()
    first.assert_outcomes(passed=1)
    tape = suite.pytester.path / "cassettes" / "test_once" / "test_echo.jsonl"
    assert Cassette.load(tape).header.era == "legacy"
    assert suite.starts == 1
    first.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 recorded"])

    # A live server would now say "changed:a"; the replay still says what was recorded.
    second = suite.run(TAG="changed")
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 replayed"])
    assert suite.starts == 1


def test_none_fails_on_a_missing_cassette_naming_path_and_mode(suite: Suite) -> None:
    suite.write("test_ci", ECHO)
    result = suite.run(MCP_CASSETTE_MODE="none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mcp-cassette: cassettes/test_ci/test_echo.jsonl: no such cassette, and "
            "mode none (from MCP_CASSETTE_MODE) only replays, so nothing was started*"
        ]
    )
    assert suite.starts == 0
    assert not (suite.pytester.path / "cassettes").exists()


def test_all_records_again_replacing_the_cassette(suite: Suite) -> None:
    suite.write("test_all", ECHO)
    suite.run(TAG="old", EXPECT="old:a").assert_outcomes(passed=1)
    suite.run("--mcp-cassette-mode=rewrite", TAG="new", EXPECT="new:a").assert_outcomes(passed=1)
    assert suite.starts == 2
    suite.run(MCP_CASSETTE_MODE="none", EXPECT="new:a").assert_outcomes(passed=1)
    tape = suite.pytester.path / "cassettes" / "test_all" / "test_echo.jsonl"
    texts = [str(m) for m in Cassette.load(tape).messages("s2c")]
    assert not any("old:a" in t for t in texts)


def test_new_episodes_appends_what_the_cassette_lacks(suite: Suite) -> None:
    suite.write("test_grow", ECHO)
    suite.run().assert_outcomes(passed=1)
    grown = suite.run("--mcp-cassette-mode=new_episodes", EXPECT="live:a,live:b")
    grown.assert_outcomes(passed=1)
    grown.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 extended, 1 new episode(s) appended"])
    assert suite.starts == 2
    offline = suite.run(MCP_CASSETTE_MODE="none", EXPECT="live:a,live:b", TAG="gone")
    offline.assert_outcomes(passed=1)
    assert suite.starts == 2


def test_marker_beats_option_beats_environment_but_none_is_a_ceiling(suite: Suite) -> None:
    suite.write(
        "test_precedence",
        """
        @pytest.mark.mcp_cassette(mode="once")
        def test_marker(mcp_cassette):
            assert (mcp_cassette.mode, mcp_cassette.mode_source) == tuple(
                os.environ["MARKED"].split("|"))

        def test_unmarked(mcp_cassette):
            assert (mcp_cassette.mode, mcp_cassette.mode_source) == tuple(
                os.environ["WANT"].split("|"))
        """,
    )
    suite.run(
        "--mcp-cassette-mode=all",
        MARKED="once|@pytest.mark.mcp_cassette",
        WANT="all|--mcp-cassette-mode",
    ).assert_outcomes(passed=2)
    # none from the environment (or the option) wins over the option and the marker alike
    suite.run(
        "--mcp-cassette-mode=all",
        MCP_CASSETTE_MODE="none",
        MARKED="none|MCP_CASSETTE_MODE",
        WANT="none|MCP_CASSETTE_MODE",
    ).assert_outcomes(passed=2)
    suite.run(
        "--mcp-cassette-mode=none",
        MARKED="none|--mcp-cassette-mode",
        WANT="none|--mcp-cassette-mode",
    ).assert_outcomes(passed=2)
    suite.run(MARKED="once|@pytest.mark.mcp_cassette", WANT="once|default").assert_outcomes(
        passed=2
    )


def test_marker_mode_none_wins_over_an_option_that_would_record(suite: Suite) -> None:
    suite.write("test_pinned", "pytestmark = pytest.mark.mcp_cassette(mode='none')\n" + ECHO)
    result = suite.run("--mcp-cassette-mode=all")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*mode none (from @pytest.mark.mcp_cassette)*"])
    assert suite.starts == 0


@pytest.mark.parametrize(
    ("args", "env"),
    [(("--mcp-cassette-mode=sometimes",), {}), ((), {"MCP_CASSETTE_MODE": "sometimes"})],
)
def test_an_unknown_mode_stops_the_run_listing_the_valid_ones(
    suite: Suite, args: tuple[str, ...], env: dict[str, str]
) -> None:
    suite.write("test_any", ECHO)
    result = suite.run(*args, **env)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*unknown record mode 'sometimes'*once, none, all (or its synonym rewrite), new_episodes*"]
    )
    assert suite.starts == 0


@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_mode_variable_stops_the_run_instead_of_recording(
    suite: Suite, value: str
) -> None:
    # ``MCP_CASSETTE_MODE=`` in a CI file once meant ``once``: live calls in CI.
    suite.write("test_any", ECHO)
    result = suite.run(MCP_CASSETTE_MODE=value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*MCP_CASSETTE_MODE is set but empty*once, none, all (or its synonym rewrite)*"]
    )
    assert suite.starts == 0


def test_an_unknown_marker_mode_errors_that_test_only(suite: Suite) -> None:
    suite.write(
        "test_marks",
        """
        @pytest.mark.mcp_cassette(mode="sometimes")
        def test_bad(mcp_cassette):
            pass

        @pytest.mark.mcp_cassette(tape="x.jsonl")
        def test_unknown_argument(mcp_cassette):
            pass

        def test_fine(mcp_cassette):
            pass
        """,
    )
    result = suite.run()
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*unknown record mode 'sometimes' (from @pytest.mark.mcp_cassette)*",
            "*takes a path and the keywords path, mode, strategy, ignore, faults, "
            "fail_on_unused, record_on_failure, scenarios, scenario, allow_repeats, "
            "keep_volatile, probe; got tape*",
        ],
        consecutive=False,
    )
    # one line each: no second report of the error the message was made from
    assert "During handling of the above exception" not in result.stdout.str()
    assert result.stdout.str().count("unknown record mode 'sometimes'") == 2  # error + summary


def test_a_mistyped_marker_argument_gets_the_one_meant(suite: Suite) -> None:
    suite.write(
        "test_typos",
        """
        @pytest.mark.mcp_cassette(mod="none")
        def test_keyword(mcp_cassette):
            pass

        @pytest.mark.mcp_cassette(mode="nonee")
        def test_value(mcp_cassette):
            pass
        """,
    )
    result = suite.run("--mcp-cassette-mode=nnoe")
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # the option's typo stops the run
    result.stderr.fnmatch_lines(
        ["*unknown record mode 'nnoe' (from --mcp-cassette-mode; did you mean none?)*"]
    )
    result = suite.run()
    result.assert_outcomes(errors=2)
    result.stdout.fnmatch_lines(
        [
            "*got mod= (did you mean mode=?)*",
            "*unknown record mode 'nonee' (from @pytest.mark.mcp_cassette; did you mean none?)*",
        ],
        consecutive=False,
    )
    assert suite.starts == 0


def test_a_miss_fails_the_test_that_caused_it_with_the_diagnostics(suite: Suite) -> None:
    suite.write(
        "test_miss",
        """
        pytestmark = pytest.mark.mcp_cassette("shared.jsonl")

        def test_swallows_the_error(mcp_cassette):
            talk(mcp_cassette.server_command(SERVER), os.environ.get("TEXT", "a"))

        def test_asserts_on_the_result(mcp_cassette):
            assert talk(mcp_cassette.server_command(SERVER), os.environ.get("TEXT", "a")) == [
                "live:a"]
        """,
    )
    suite.run().assert_outcomes(passed=2)
    assert suite.starts == 1  # one recording; the second test replayed it (mode once)

    result = suite.run(TEXT="b")
    result.assert_outcomes(failed=2)
    text = result.stdout.str()
    # the test that ignored the error fails with the diagnostics as its message
    assert "test_swallows_the_error _" in text
    result.stdout.fnmatch_lines(
        [
            "mcp-cassette: 1 request(s) had no recording (mode once):",
            "  shared.jsonl:",
            '    - tools/call "echo" not recorded: arguments differ at /text: recorded "a", '
            'received "b" (closest recording: *shared.jsonl:*)',
            "  To record what is missing: --mcp-cassette-mode=new_episodes *",
        ]
    )
    # the test that failed by itself keeps its own failure and gets the diagnostics beside it
    result.stdout.fnmatch_lines(["*Captured mcp-cassette call*", '*recorded "a", received "b"*'])
    assert suite.starts == 1


def test_cassette_paths_sessions_and_names(suite: Suite) -> None:
    suite.write(
        "test_paths",
        """
        @pytest.mark.parametrize("q", ["a b/c", "plain"])
        def test_param(mcp_cassette, q):
            assert talk(mcp_cassette.server_command(SERVER), q) == [f"live:{q}"]

        class TestGroup:
            def test_method(self, mcp_cassette):
                assert talk(mcp_cassette.server_command(SERVER), "m") == ["live:m"]

        @pytest.mark.mcp_cassette("tapes/custom.jsonl", strategy="strict")
        def test_marked(mcp_cassette):
            assert mcp_cassette.path.parts[-2:] == ("tapes", "custom.jsonl")
            assert mcp_cassette.strategy == "strict"
            assert talk(mcp_cassette.server_command(SERVER), "k") == ["live:k"]

        def test_sessions(mcp_cassette):
            command = mcp_cassette.server_command(SERVER)
            assert talk(command, "1") == ["live:1"]
            assert talk(command, "2") == ["live:2"]
            assert talk(mcp_cassette.server_command(SERVER, name="other"), "3") == ["live:3"]
        """,
    )
    suite.run().assert_outcomes(passed=5)
    folder = suite.pytester.path / "cassettes" / "test_paths"
    names = sorted(p.name for p in folder.iterdir())
    assert names[0].startswith("TestGroup.test_method")
    assert [n for n in names if n.startswith("test_param[a_b_c]-")]  # made file-safe
    assert "test_param[plain].jsonl" in names
    assert {"test_sessions.jsonl", "test_sessions.2.jsonl", "test_sessions.other.jsonl"} <= set(
        names
    )
    custom = Cassette.load(suite.pytester.path / "tapes" / "custom.jsonl")
    assert custom.header.target["strategy"] == "strict"  # kept for the replays
    assert suite.starts == 7
    # each session replays its own cassette, in start order
    suite.run(MCP_CASSETTE_MODE="none", TAG="gone").assert_outcomes(passed=5)
    assert suite.starts == 7


def test_the_default_mode_replays_from_a_read_only_checkout(suite: Suite) -> None:
    # Bazel and Nix sandboxes: the cassettes are there and nothing may be written. A
    # read-only bind mount, since the tests run as root, for whom chmod stops nothing.
    import subprocess

    suite.write("test_ro", ECHO)
    suite.run().assert_outcomes(passed=1)
    folder = suite.pytester.path / "cassettes"
    steps = (
        ["mount", "--bind", str(folder), str(folder)],
        ["mount", "-o", "remount,ro,bind", str(folder)],
    )
    try:
        for step in steps:
            made = subprocess.run(step, capture_output=True, check=False)
            if made.returncode != 0:
                pytest.skip(f"cannot make a read-only bind mount: {made.stderr.decode()}")
        again = suite.run(TAG="changed")
        again.assert_outcomes(passed=1)
        again.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 replayed"])
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True, check=False)
    assert suite.starts == 1
