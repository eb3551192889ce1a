"""``mcp_cassette.verify``, black-box with pytester: a server's test suite that is a
scenarios file and one test per scenario. The first run records the cassettes; with
``MCP_CASSETTE_MODE=none`` (CI) each test verifies its cassette against the live server;
a deliberately changed server fails with the diff; ``--mcp-cassette-mode=all`` accepts
the change; and the next CI run passes."""

from __future__ import annotations

import json
import shutil
import textwrap

import pytest

from cassette import Cassette
from tests.helpers.support import PY, ROOT

pytestmark = pytest.mark.e2e

DRIFT_SERVER = ROOT / "tests" / "servers" / "drift_server.py"

SCENARIOS = f"""\
format = 1
cassettes = "cassettes"

[target]
command = [{json.dumps(PY)}, {json.dumps(str(DRIFT_SERVER))}]

[answers]
sampling = "Snow, then sun."

[[scenarios]]
name = "forecast"
steps = [
  {{ list = "tools" }},
  {{ call = "greet", arguments = {{ name = "Ada" }} }},
  {{ call = "forecast", arguments = {{ city = "Oslo" }} }},
]

[[scenarios]]
name = "summary"
steps = [
  {{ call = "summarize", arguments = {{ text = "A long report about snow." }} }},
]
"""

SUITE = """
from pathlib import Path

import pytest

from cassette.client import load_scenarios

SCENARIOS = Path(__file__).parent / "weather.toml"


@pytest.mark.mcp_cassette(scenarios="weather.toml")
@pytest.mark.parametrize("scenario", load_scenarios(SCENARIOS).names)
def test_weather(mcp_cassette, scenario):
    mcp_cassette.verify(scenario=scenario, ignore_keys=["generatedAt"]).assert_ok()
"""


class Suite:
    def __init__(self, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pytester = pytester
        self.monkeypatch = monkeypatch
        monkeypatch.delenv("MCP_CASSETTE_MODE", raising=False)
        monkeypatch.delenv("DRIFT", raising=False)
        (pytester.path / "weather.toml").write_text(SCENARIOS)
        self.tapes = pytester.path / "cassettes"

    def write(self, body: str, name: str = "test_weather") -> None:
        self.pytester.makepyfile(**{name: textwrap.dedent(body)})

    def run(self, *args: str, **env: str) -> pytest.RunResult:
        with self.monkeypatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            quiet = ("-W", "ignore::pytest.PytestAssertRewriteWarning")
            return self.pytester.runpytest("-p", "no:cacheprovider", *quiet, *args)


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def test_record_then_verify_in_ci_then_accept_an_intended_change(suite: Suite) -> None:
    suite.write(SUITE)

    # a fresh checkout in CI has nothing to verify against: fail, record nothing
    ci = suite.run(MCP_CASSETTE_MODE="none")
    ci.assert_outcomes(failed=2)
    ci.stdout.fnmatch_lines(["*cassettes/forecast.jsonl: no such cassette, and mode none*"])
    assert not suite.tapes.exists()

    first = suite.run()  # mode once: the missing cassettes are recorded from the scenarios
    first.assert_outcomes(passed=2)
    first.stdout.fnmatch_lines(["mcp-cassette: sessions: 2 recorded"])
    assert sorted(p.name for p in suite.tapes.iterdir()) == ["forecast.jsonl", "summary.jsonl"]
    assert "sampling/createMessage" in (suite.tapes / "summary.jsonl").read_text()

    ci = suite.run(MCP_CASSETTE_MODE="none")
    ci.assert_outcomes(passed=2)
    ci.stdout.fnmatch_lines(["mcp-cassette: sessions: 2 verified"])

    drifted = suite.run(MCP_CASSETTE_MODE="none", DRIFT="1")
    drifted.assert_outcomes(passed=1, failed=1)  # summary's answer did not change
    drifted.stdout.fnmatch_lines(
        [
            "*AssertionError: the server drifted:",
            '*CHANGED             tools/call greet {"name":"Ada"}  (*forecast.jsonl:*)',
            '*    /result/content/0/text: "Hello, Ada." -> "Hello, Ada!"',
            "*    /result/content/0/text#/tempC: 4 -> 5",
        ]
    )
    before = (suite.tapes / "forecast.jsonl").read_text()

    accepted = suite.run("--mcp-cassette-mode=all", DRIFT="1")
    accepted.assert_outcomes(passed=2)
    accepted.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 verified, 1 updated"])
    assert (suite.tapes / "forecast.jsonl").read_text() != before

    suite.run(MCP_CASSETTE_MODE="none", DRIFT="1").assert_outcomes(passed=2)


def test_verify_a_cassette_recorded_elsewhere_against_a_command(suite: Suite) -> None:
    suite.write(SUITE)
    suite.run().assert_outcomes(passed=2)  # records cassettes/forecast.jsonl
    tape = suite.pytester.path / "cassettes" / "test_plain" / "test_greet.jsonl"
    tape.parent.mkdir()
    shutil.copy(suite.tapes / "forecast.jsonl", tape)
    suite.write(
        f"""
        import pytest

        SERVER = [{PY!r}, {str(DRIFT_SERVER)!r}]


        def test_greet(mcp_cassette):
            report = mcp_cassette.verify(SERVER, ignore_keys=["generatedAt"])
            assert report.ok, report.text()
            assert [v.status for v in report.verdicts] == ["MATCH"] * 4  # discover, 3 calls


        def test_drift_is_a_value(mcp_cassette):
            report = mcp_cassette.verify(SERVER, name="other")


        def test_no_server_no_scenarios(mcp_cassette):
            mcp_cassette.verify()
        """,
        name="test_plain",
    )
    result = suite.run("test_plain.py", DRIFT="0")
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_drift_is_a_value*",
            "*mcp-cassette: *other.jsonl: no cassette to verify; record it first*",
            "*test_no_server_no_scenarios*",
            "*mcp-cassette: mcp_cassette.verify needs the server (its command line or URL)*",
        ]
    )
    assert Cassette.load(tape).header.era is not None
