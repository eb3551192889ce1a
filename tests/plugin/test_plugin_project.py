"""The pytest plugin's project-level behaviours, black-box with pytester: the ``none``
ceiling in CI, ``[tool.cassette.pytest]``, ignored params, fault plans, unused
recordings, what a failing test's recording becomes, and the ``before_record`` hook.
Each inner suite drives the real episode server through ``server_command``."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from typing import Any

import pytest

from cassette import Cassette
from cassette.core.wire.model import Event, MessageEvent
from tests.plugin.test_plugin import ECHO, Suite


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def tape_of(suite: Suite, module: str, test: str = "test_echo") -> Cassette:
    return Cassette.load(suite.pytester.path / "cassettes" / module / f"{test}.jsonl")


def texts(tape: Cassette) -> list[str]:
    return [json.dumps(m) for m in tape.messages("s2c")]


def _c2s(events: Sequence[Event]) -> list[tuple[dict[str, Any], bool]]:
    """Each client message, and whether the recorder's probe sent it (``meta.probe``)."""
    return [
        (e.message, bool((e.meta or {}).get("probe")))
        for e in events
        if isinstance(e, MessageEvent) and e.dir == "c2s"
    ]


# -- CI safety --------------------------------------------------------------------------------


def test_none_in_the_environment_beats_a_once_marker_and_starts_nothing(suite: Suite) -> None:
    suite.write("test_ci", "pytestmark = pytest.mark.mcp_cassette(mode='once')\n" + ECHO)
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


def test_none_from_the_option_beats_a_once_marker_on_server_url_too(suite: Suite) -> None:
    suite.write(
        "test_ci_url",
        """
        @pytest.mark.mcp_cassette(mode="once")
        def test_url(mcp_cassette):
            mcp_cassette.server_url("http://127.0.0.1:9/mcp")
            raise AssertionError("server_url returned under mode none")
        """,
    )
    result = suite.run("--mcp-cassette-mode=none")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*mcp-cassette: cassettes/test_ci_url/test_url.jsonl: no such cassette, and "
            "mode none (from --mcp-cassette-mode) only replays, so nothing was started*"
        ]
    )
    assert "server_url returned" not in result.stdout.str()
    assert not (suite.pytester.path / "cassettes").exists()


def test_the_report_names_one_source_of_the_mode(suite: Suite) -> None:
    suite.write("test_src", ECHO)
    suite.run().assert_outcomes(passed=1)
    result = suite.run(MCP_CASSETTE_MODE="none", EXPECT="live:b")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*had no recording (mode none (from MCP_CASSETTE_MODE))*"])
    assert "(from --mode" not in result.stdout.str()
    assert "--mode-source" not in result.stdout.str()


# -- project configuration ------------------------------------------------------------------


def test_a_recorded_cassette_names_the_server_by_paths_relative_to_the_project(
    suite: Suite,
) -> None:
    """A committed cassette is the same on every machine: the server command in its
    header has the project's paths relative to the project (pyproject.toml's folder)."""
    import shutil
    import sys

    from cassette.runtime.record import portable_argv
    from tests.plugin.test_plugin import SERVER

    root = suite.pytester.path
    suite.pytester.makepyprojecttoml("[tool.cassette]\n")
    (root / "servers").mkdir()
    shutil.copy(SERVER, root / "servers" / "episode.py")
    suite.write(
        "test_paths",
        """
        def test_echo(mcp_cassette):
            here = os.path.abspath(".")
            argv = [sys.executable, os.path.join(here, "servers", "episode.py"),
                    "--log", os.path.join(here, "starts.log")]
            assert talk(mcp_cassette.server_command(argv), "a") == ["live:a"]
        """,
    )
    suite.run().assert_outcomes(passed=1)
    command = tape_of(suite, "test_paths").header.target["command"]
    python = portable_argv([sys.executable], root)[0]
    assert command == [python, "servers/episode.py", "--log", "starts.log"]
    assert suite.starts == 1


def test_project_config_sets_folder_mode_and_strategy(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml(
        """
        [tool.cassette.pytest]
        cassette-dir = "recorded"
        mode = "once"
        strategy = "strict"
        """
    )
    suite.write(
        "test_cfg",
        ECHO
        + """
def test_settings(mcp_cassette):
    assert mcp_cassette.mode_source == "[tool.cassette.pytest] mode"
    assert mcp_cassette.strategy == "strict"
    assert mcp_cassette.path.parent.parent.name == "recorded"
""",
    )
    suite.run().assert_outcomes(passed=2)
    tape = Cassette.load(suite.pytester.path / "recorded" / "test_cfg" / "test_echo.jsonl")
    assert tape.header.target["strategy"] == "strict"
    assert not (suite.pytester.path / "cassettes").exists()


def test_a_bad_project_setting_stops_the_run_naming_file_and_line(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml(
        """
        [tool.cassette.pytest]
        cassette-dir = "recorded"
        mdoe = "none"
        """
    )
    suite.write("test_any", ECHO)
    result = suite.run()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*pyproject.toml:3: [[]tool.cassette.pytest[]] mdoe is not a setting (did you mean "
            "mode?); use cassette-dir*"
        ]
    )
    assert suite.starts == 0


# -- ignored params ---------------------------------------------------------------------------

SEND_B = """
@pytest.mark.mcp_cassette("cassettes/test_rec/test_echo.jsonl", mode="none", {extra})
def test_send_b(mcp_cassette):
    assert talk(mcp_cassette.server_command(SERVER), "b") == ["live:a"]
"""


def test_an_ignored_argument_never_misses_and_a_miss_still_shows_it(suite: Suite) -> None:
    suite.write("test_rec", ECHO)
    suite.run().assert_outcomes(passed=1)
    suite.write("test_ignored", SEND_B.format(extra="ignore='/params/arguments/text'"))
    suite.run("test_ignored.py").assert_outcomes(passed=1)
    suite.write("test_strict", SEND_B.format(extra="strategy='default'"))
    missed = suite.run("test_strict.py")
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(['*arguments differ at /text: recorded "a", received "b"*'])
    assert suite.starts == 1


def test_project_ignore_params_apply_to_every_test(suite: Suite) -> None:
    suite.write("test_rec", ECHO)
    suite.run().assert_outcomes(passed=1)
    suite.pytester.makepyprojecttoml(
        """
        [tool.cassette]
        ignore-params = ["/params/arguments/text"]
        """
    )
    suite.write("test_project", SEND_B.format(extra="strategy='default'"))
    suite.run("test_project.py").assert_outcomes(passed=1)


# -- faults -----------------------------------------------------------------------------------

FAULTED = """
@pytest.mark.mcp_cassette("cassettes/test_rec/test_echo.jsonl")
def test_faulted(mcp_cassette):
    plan = [{"kind": "error", "method": "tools/call", "code": -32050, "message": "quota", "nth": 1}]
    command = mcp_cassette.server_command(SERVER, faults=plan)
    first, retry = talk(command, "a", "a")
    assert first["error"] == {"code": -32050, "message": "quota"}
    assert retry == "live:a"
"""


def test_a_fault_plan_reaches_the_client_and_the_retry_replays(suite: Suite) -> None:
    suite.write("test_rec", ECHO)
    suite.run().assert_outcomes(passed=1)
    suite.write("test_faults", FAULTED)
    suite.run("test_faults.py").assert_outcomes(passed=1)
    assert suite.starts == 1  # the faulted run never started the server


def test_a_fault_plan_over_a_missing_cassette_fails_before_recording(suite: Suite) -> None:
    suite.write("test_faults", FAULTED)
    result = suite.run()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*test_echo.jsonl: a fault plan is laid over a replay, and mode once would record it*"]
    )
    assert suite.starts == 0


def test_a_marker_plan_file_applies_to_the_test(suite: Suite) -> None:
    suite.write("test_rec", ECHO)
    suite.run().assert_outcomes(passed=1)
    (suite.pytester.path / "plan.toml").write_text(
        '[[fault]]\nkind = "error"\nmethod = "tools/call"\ncode = -1\n'
    )
    suite.write(
        "test_marked",
        """
        @pytest.mark.mcp_cassette("cassettes/test_rec/test_echo.jsonl", faults="plan.toml")
        def test_marked(mcp_cassette):
            assert talk(mcp_cassette.server_command(SERVER), "a")[0]["error"]["code"] == -1
        """,
    )
    suite.run("test_marked.py").assert_outcomes(passed=1)


# -- unused recordings --------------------------------------------------------------------------

TWO = """
def test_echo(mcp_cassette):
    assert talk(mcp_cassette.server_command(SERVER), *os.environ["SEND"].split(",")) == [
        "live:" + t for t in os.environ["SEND"].split(",")]
    print("UNPLAYED", mcp_cassette.unplayed)
"""


def test_unused_recordings_are_listed_and_fail_on_request(suite: Suite) -> None:
    suite.write("test_two", TWO)
    suite.run(SEND="a,b").assert_outcomes(passed=1)
    quiet = suite.run("-s", SEND="a")
    quiet.assert_outcomes(passed=1)
    quiet.stdout.fnmatch_lines(
        ['*UNPLAYED *cassettes/test_two/test_echo.jsonl:*: tools/call "echo"*']
    )
    strict = suite.run("--mcp-cassette-fail-on-unused", SEND="a")
    strict.assert_outcomes(failed=1)
    strict.stdout.fnmatch_lines(
        [
            "*mcp-cassette: 1 recording(s) were never played by this test:*",
            '*cassettes/test_two/test_echo.jsonl:*: tools/call "echo"*',
        ]
    )
    suite.run("--mcp-cassette-fail-on-unused", SEND="a,b").assert_outcomes(passed=1)


def test_fail_on_unused_from_the_marker_and_the_project(suite: Suite) -> None:
    suite.write("test_two", TWO)
    suite.run(SEND="a,b").assert_outcomes(passed=1)
    suite.write(
        "test_two",
        "pytestmark = pytest.mark.mcp_cassette(fail_on_unused=True)\n" + textwrap.dedent(TWO),
    )
    suite.run(SEND="a").assert_outcomes(failed=1)
    suite.write("test_two", TWO)
    suite.pytester.makepyprojecttoml("[tool.cassette.pytest]\nfail-on-unused = true\n")
    suite.run(SEND="a").assert_outcomes(failed=1)


# -- a failing test's recording ------------------------------------------------------------------

FAILS = """
def test_echo(mcp_cassette):
    talk(mcp_cassette.server_command(SERVER), *os.environ["SEND"].split(","))
    assert os.environ.get("PASS") == "1", "the agent got it wrong"
"""


def test_a_test_that_fails_while_recording_leaves_no_cassette(suite: Suite) -> None:
    suite.write("test_fail", FAILS)
    failed = suite.run(SEND="a")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(
        [
            "*the test failed, so what it recorded was taken back:*",
            "*cassettes/test_fail/test_echo.jsonl: removed (recorded by this test)*",
        ]
    )
    assert not (suite.pytester.path / "cassettes" / "test_fail" / "test_echo.jsonl").exists()
    kept = suite.run("--mcp-cassette-record-on-failure", SEND="a")
    kept.assert_outcomes(failed=1)
    kept.stdout.fnmatch_lines(
        [
            "*the test failed; kept what it recorded (cassettes/test_fail/test_echo.jsonl), "
            "as --mcp-cassette-record-on-failure asks*"
        ]
    )
    assert "live:a" in "".join(texts(tape_of(suite, "test_fail")))


def test_record_on_failure_from_the_marker_and_the_project_says_which(suite: Suite) -> None:
    marked = "pytestmark = pytest.mark.mcp_cassette(record_on_failure=True)\n" + FAILS
    suite.write("test_fail", marked)
    kept = suite.run(SEND="a")
    kept.assert_outcomes(failed=1)
    kept.stdout.fnmatch_lines(["*as @pytest.mark.mcp_cassette(record_on_failure=True) asks*"])
    assert "live:a" in "".join(texts(tape_of(suite, "test_fail")))

    suite.write("test_project", FAILS)
    suite.pytester.makepyprojecttoml("[tool.cassette.pytest]\nrecord-on-failure = true\n")
    kept = suite.run("test_project.py", SEND="b")
    kept.assert_outcomes(failed=1)
    kept.stdout.fnmatch_lines(["*as record-on-failure in [[]tool.cassette.pytest[]] asks*"])
    assert "live:b" in "".join(texts(tape_of(suite, "test_project")))

    # the marker's False beats the project's True: taken back
    unmarked = "pytestmark = pytest.mark.mcp_cassette(record_on_failure=False)\n" + FAILS
    suite.write("test_marked_off", unmarked)
    dropped = suite.run("test_marked_off.py", SEND="c")
    dropped.assert_outcomes(failed=1)
    dropped.stdout.fnmatch_lines(["*the test failed, so what it recorded was taken back:*"])
    assert not list((suite.pytester.path / "cassettes" / "test_marked_off").glob("*.jsonl"))


def test_a_failing_new_episodes_test_takes_back_what_it_appended(suite: Suite) -> None:
    suite.write("test_fail", FAILS)
    suite.run(SEND="a", PASS="1").assert_outcomes(passed=1)
    path = suite.pytester.path / "cassettes" / "test_fail" / "test_echo.jsonl"
    before = path.read_bytes()
    failed = suite.run("--mcp-cassette-mode=new_episodes", SEND="a,b")
    failed.assert_outcomes(failed=1)
    failed.stdout.fnmatch_lines(["*test_echo.jsonl: 1 appended episode(s) removed*"])
    assert path.read_bytes() == before
    suite.run("--mcp-cassette-mode=new_episodes", SEND="a,b", PASS="1").assert_outcomes(passed=1)
    assert "live:b" in "".join(texts(tape_of(suite, "test_fail")))


# -- before_record ----------------------------------------------------------------------------

HOOKED = """
def scrub(message, direction):
    if direction == "s2c" and "result" in message and "content" in message["result"]:
        message["result"]["content"][0]["text"] = "scrubbed"
    return message


def test_echo(mcp_cassette):
    assert talk(mcp_cassette.server_command(SERVER, before_record=scrub), "a") == ["live:a"]
"""


def test_before_record_changes_what_is_written_not_what_passes(suite: Suite) -> None:
    suite.write("test_hook", HOOKED)
    suite.run().assert_outcomes(passed=1)
    written = "".join(texts(tape_of(suite, "test_hook")))
    assert "scrubbed" in written
    assert "live:a" not in written


def test_a_project_before_record_hook_changes_and_drops_messages(suite: Suite) -> None:
    (suite.pytester.path / "hooks.py").write_text(
        "def mark(message, direction):\n"
        "    if message.get('method') == 'notifications/initialized':\n"
        "        return None\n"
        "    return message if direction == 's2c' else {**message, 'x-marked': True}\n"
    )
    suite.pytester.makepyprojecttoml('[tool.cassette]\nbefore-record = "hooks.py:mark"\n')
    suite.write("test_project_hook", ECHO)
    suite.run().assert_outcomes(passed=1)
    events = tape_of(suite, "test_project_hook").events
    sent = [m for m, probe in _c2s(events) if not probe]
    assert [m.get("method") for m in sent] == ["initialize", "tools/call"]  # one dropped
    assert all(m.get("x-marked") for m in sent)
    # the recorder's probes pass the same hook: their requests are marked too
    probed = [m for m, probe in _c2s(events) if probe]
    assert probed
    assert all(m.get("x-marked") for m in probed)
    # what was written still replays: the hook changed the cassette, not the session
    suite.run(MCP_CASSETTE_MODE="none", TAG="gone").assert_outcomes(passed=1)


# -- the server's stderr ------------------------------------------------------------------------

WHEREVER = """
def test_where(mcp_cassette):
    client = LineClient(mcp_cassette.server_command([sys.executable, {server!r}]))
    try:
        client.initialize()
        assert client.request("tools/call", {{"name": "where", "arguments": {{}}}})["result"]
        client.finish()
    finally:
        client.kill_group()
"""


def test_the_projects_stderr_setting_reaches_the_plugins_recordings(suite: Suite) -> None:
    from cassette.core.wire.model import StderrEvent
    from tests.helpers.support import ROOT

    body = WHEREVER.format(server=str(ROOT / "tests" / "servers" / "wherever_server.py"))
    suite.pytester.makepyprojecttoml("[tool.cassette]\n")
    suite.write("test_said", body)
    suite.run().assert_outcomes(passed=1)
    said = tape_of(suite, "test_said", "test_where")
    assert [e for e in said.events if isinstance(e, StderrEvent)]  # kept by default
    suite.pytester.makepyprojecttoml("[tool.cassette]\nstderr = false\n")
    suite.write("test_quiet", body)
    suite.run("test_quiet.py").assert_outcomes(passed=1)
    quiet = tape_of(suite, "test_quiet", "test_where")
    assert not [e for e in quiet.events if isinstance(e, StderrEvent)]


# -- redaction: the project's rules reach the plugin's writes -----------------------------------

SECRET_TALK = """
@pytest.mark.mcp_cassette(mode="{mode}")
def test_secret(mcp_cassette):
    replies = talk(mcp_cassette.server_command(SERVER), "{text}")
    assert replies[0].endswith("{text}") or "[REDACTED:" in replies[0]
"""


def test_the_projects_patterns_reach_recordings_and_appended_episodes(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml('[tool.cassette.redact]\npatterns = ["acct-[0-9]{6}"]\n')
    suite.write("test_red", SECRET_TALK.format(mode="once", text="note acct-123456"))
    suite.run().assert_outcomes(passed=1)
    path = suite.pytester.path / "cassettes" / "test_red" / "test_secret.jsonl"
    assert "acct-123456" not in path.read_text()
    suite.write("test_red", SECRET_TALK.format(mode="new_episodes", text="more acct-654321"))
    suite.run().assert_outcomes(passed=1)
    raw = path.read_text()
    assert "acct-654321" not in raw
    assert "more [REDACTED:" in raw  # an episode was appended, redacted
    # numbered on after the recording's: the new value does not get the old one's placeholder
    assert "note [REDACTED:user:1]" in raw
    assert "more [REDACTED:user:2]" in raw


def test_the_projects_pii_setting_reaches_recordings_and_appended_episodes(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml("[tool.cassette.redact]\npii = true\n")
    suite.write("test_pii", SECRET_TALK.format(mode="once", text="mail ada@corp.example.com"))
    suite.run().assert_outcomes(passed=1)
    path = suite.pytester.path / "cassettes" / "test_pii" / "test_secret.jsonl"
    raw = path.read_text()
    assert "ada@corp" not in raw
    assert "mail redacted-1@example.invalid" in raw
    assert '"pii":true' in raw.splitlines()[0]  # the header says the rules ran
    suite.write("test_pii", SECRET_TALK.format(mode="new_episodes", text="call +47 987 65 432"))
    suite.run().assert_outcomes(passed=1)
    raw = path.read_text()
    assert "987 65 432" not in raw
    assert "call +15550100001" in raw


def test_a_bad_redaction_rule_in_the_project_fails_before_recording(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml('[tool.cassette.redact]\npaths = ["params/arguments/x"]\n')
    suite.write("test_bad", SECRET_TALK.format(mode="once", text="hello"))
    result = suite.run()  # the served command stops in one line: its client sees it end
    result.assert_outcomes(failed=1)
    assert not (suite.pytester.path / "cassettes").exists()  # the first run writes nothing
    assert suite.starts == 0


# -- the recorder's probes ------------------------------------------------------------------


def _probe_lines(tape: Cassette) -> int:
    return sum(1 for e in tape.events if (getattr(e, "meta", None) or {}).get("probe"))


def test_a_recording_probes_the_server_beside_the_session_by_default(suite: Suite) -> None:
    suite.write("test_probed", ECHO)
    suite.run().assert_outcomes(passed=1)
    assert suite.starts == 1
    assert suite.probes >= 1  # the server was started again, for the probes
    assert _probe_lines(tape_of(suite, "test_probed")) > 0


@pytest.mark.parametrize(
    ("marker", "pyproject"),
    [
        ("@pytest.mark.mcp_cassette(probe=False)", None),
        ("", "[tool.cassette.pytest]\nprobe = false\n"),
        ("", "[tool.cassette]\nprobe = false\n"),
    ],
    ids=["marker", "pytest-config", "project-config"],
)
def test_probes_are_turned_off_by_the_marker_or_the_config(
    suite: Suite, marker: str, pyproject: str | None
) -> None:
    if pyproject is not None:
        suite.pytester.makepyprojecttoml(pyproject)
    suite.write("test_unprobed", marker + ECHO)
    suite.run().assert_outcomes(passed=1)
    assert suite.starts == 1
    assert suite.probes == 0
    assert _probe_lines(tape_of(suite, "test_unprobed")) == 0


def test_a_marker_turns_probes_on_where_the_config_turns_them_off(suite: Suite) -> None:
    suite.pytester.makepyprojecttoml("[tool.cassette.pytest]\nprobe = false\n")
    suite.write("test_probed_again", "@pytest.mark.mcp_cassette(probe=True)" + ECHO)
    suite.run().assert_outcomes(passed=1)
    assert suite.probes >= 1
