"""The fixture with a client that starts the server once per call: langchain-mcp-adapters
in its default mode (from tests/clients/.venv-mcp1). The first run records every start,
a second run with ``MCP_CASSETTE_MODE=none`` and no server reachable passes."""

from __future__ import annotations

import pytest

from tests.e2e.test_per_call_starts import LANGCHAIN, MCP1_PY, STARTS_SERVER
from tests.helpers.support import OFFLINE_ENV
from tests.plugin.test_plugin import Suite

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not MCP1_PY.exists(), reason="tests/clients/.venv-mcp1 is missing"),
]

PER_CALL = """
import json, subprocess

COUNTER = os.path.join(os.getcwd(), "server.count")


# the server numbers its starts: the recorder's probes, which start it again, would count
@pytest.mark.mcp_cassette(probe=False)
def test_agent(mcp_cassette):
    command = mcp_cassette.server_command([sys.executable, {server!r}, COUNTER])
    done = subprocess.run(
        [{python!r}, {driver!r}, *command], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {{"tools": ["echo", "visit"], "calls": ["start 2", "echo: hi", "start 4"]}}
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def test_langchain_per_call_through_the_fixture_records_then_replays(suite: Suite) -> None:
    body = PER_CALL.format(server=str(STARTS_SERVER), python=str(MCP1_PY), driver=str(LANGCHAIN))
    suite.write("test_per_call", body)
    first = suite.run()
    first.assert_outcomes(passed=1)
    first.stdout.fnmatch_lines(["mcp-cassette: sessions: 4 recorded"])
    counter = suite.pytester.path / "server.count"
    assert counter.read_text() == "4"
    counter.unlink()  # a live server would now answer "start 1" first

    second = suite.run(MCP_CASSETTE_MODE="none", **OFFLINE_ENV)
    second.assert_outcomes(passed=1)
    second.stdout.fnmatch_lines(["mcp-cassette: sessions: 4 replayed"])
    assert not counter.exists()  # no server was started


TWO_STARTS = """
def test_restarts(mcp_cassette):
    command = mcp_cassette.server_command(SERVER)
    assert talk(command, "1") == ["live:1"]
    assert talk(command, os.environ.get("SECOND", "2"))[0] in ("live:2", "live:x")
"""


def test_a_miss_in_a_later_session_of_the_fixture_says_the_client_started_it_again(
    suite: Suite,
) -> None:
    suite.write("test_two", TWO_STARTS)
    suite.run().assert_outcomes(passed=1)
    folder = suite.pytester.path / "cassettes" / "test_two"
    assert {"test_restarts.jsonl", "test_restarts.2.jsonl"} <= {p.name for p in folder.iterdir()}

    missed = suite.run(MCP_CASSETTE_MODE="none", SECOND="x")
    missed.assert_outcomes(failed=1)
    missed.stdout.fnmatch_lines(
        [
            "*cassettes/test_two/test_restarts.2.jsonl:",
            "*(session 2 of this server: the client started it again; each start of a "
            "test's server has a numbered cassette of its own)",
        ]
    )
