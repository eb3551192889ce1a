"""The plugin with real counterparts: the official Python SDK client against the pinned
reference server (stdio and streamable HTTP), recorded once and replayed with the server
unavailable; and an xdist run whose workers share one cassette."""

from __future__ import annotations

import json
import textwrap

import pytest

from cassette import Cassette
from tests.helpers.support import EVERYTHING_JS, OFFLINE_ENV, ROOT, everything_server, node
from tests.plugin.test_plugin import SERVER, Suite

pytestmark = pytest.mark.e2e

SDK_SUITE = """
import os
import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

SERVER = os.environ["SERVER"].split("|")


def session(target):
    # what an agent would do: list, then call three tools (one reporting progress)

    async def go():
        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        with anyio.fail_after(60):
            async with Client(target) as client:
                tools = [t.name for t in (await client.list_tools()).tools]
                echo = await client.call_tool("echo", {"message": "from pytest"})
                total = await client.call_tool("get-sum", {"a": 2, "b": 40})
                slow = await client.call_tool(
                    "trigger-long-running-operation", {"duration": 0.2, "steps": 2},
                    progress_callback=on_progress,
                )
        return tools, echo.content[0].text, total.content[0].text, slow.is_error, progress

    return anyio.run(go)


def check(result):
    tools, echo, total, failed, progress = result
    assert "echo" in tools
    assert echo == "Echo: from pytest"
    assert "42" in total
    assert not failed
    assert progress == [1.0, 2.0]


def test_stdio_agent(mcp_cassette):
    command = mcp_cassette.server_command(SERVER)
    check(session(StdioServerParameters(command=command[0], args=command[1:])))


def test_http_agent(mcp_cassette):
    check(session(mcp_cassette.server_url(os.environ["SERVER_URL"])))
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    return Suite(pytester, monkeypatch)


def test_sdk_suite_records_once_then_replays_with_no_server(suite: Suite) -> None:
    node_path = node()
    live, port = everything_server("streamableHttp")
    with live:
        suite.pytester.makepyfile(test_agent=SDK_SUITE)
        first = suite.run(
            SERVER=f"{node_path}|{EVERYTHING_JS}|stdio", SERVER_URL=f"http://127.0.0.1:{port}/mcp"
        )
        # what the live server went through, should the HTTP recording not reach it
        code = live.proc.poll()
        state = "running" if code is None else f"exited with {code}"
        assert first.ret == 0, f"live server {state}; its output:\n{live.output()}"
        first.assert_outcomes(passed=2)
        first.stdout.fnmatch_lines(["mcp-cassette: sessions: 2 recorded"])
    folder = suite.pytester.path / "cassettes" / "test_agent"
    stdio = Cassette.load(folder / "test_stdio_agent.jsonl")
    http = Cassette.load(folder / "test_http_agent.jsonl")
    assert (stdio.header.transport, http.header.transport) == ("stdio", "streamable-http")
    assert any(m.get("method") == "tools/call" for m in http.messages("c2s"))

    # CI: replay only, the server gone (stopped, and its command points nowhere)
    second = suite.run(
        SERVER="/nonexistent/node|server.js",
        SERVER_URL=f"http://127.0.0.1:{port}/mcp",
        MCP_CASSETTE_MODE="none",
        **OFFLINE_ENV,
    )
    second.assert_outcomes(passed=2)
    second.stdout.fnmatch_lines(["mcp-cassette: sessions: 2 replayed"])


XDIST_SUITE = """
pytestmark = pytest.mark.mcp_cassette("shared.jsonl")


@pytest.mark.parametrize("n", range(6))
def test_worker(mcp_cassette, n):
    assert talk(mcp_cassette.server_command(SERVER), f"t{n}") == [f"live:t{n}"]
"""


def test_xdist_workers_extend_one_cassette_without_interleaving(suite: Suite) -> None:
    suite.write("test_parallel", XDIST_SUITE)
    result = suite.pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-n", "2", "--mcp-cassette-mode=new_episodes"
    )
    result.assert_outcomes(passed=6)
    # one session found the cassette missing and recorded it (holding the lock); each other
    # found it recorded by then, and appended its one new call
    result.stdout.fnmatch_lines(
        ["mcp-cassette: sessions: 1 recorded, 5 extended, 5 new episode(s) appended"]
    )
    tape = suite.pytester.path / "shared.jsonl"
    cassette = Cassette.load(tape)
    assert not cassette.warnings
    calls = [m for m in cassette.messages("c2s") if m.get("method") == "tools/call"]
    assert sorted(m["params"]["arguments"]["text"] for m in calls) == [f"t{n}" for n in range(6)]
    for line in tape.read_text().splitlines():
        json.loads(line)  # whole lines only
    assert suite.starts == 6
    assert not list(suite.pytester.path.glob(".*.lock"))

    replayed = suite.pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    replayed.assert_outcomes(passed=6)
    replayed.stdout.fnmatch_lines(["mcp-cassette: sessions: 6 replayed"])
    assert suite.starts == 6


def test_the_plugin_can_be_turned_off(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        textwrap.dedent(
            """
            def test_needs_it(mcp_cassette):
                pass
            """
        )
    )
    result = pytester.runpytest_subprocess("-p", "no:cassette", "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*fixture 'mcp_cassette' not found*"])
    assert ROOT.exists()
    assert SERVER.exists()
