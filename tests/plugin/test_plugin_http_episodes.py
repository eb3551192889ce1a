"""``new_episodes`` over streamable HTTP through ``mcp_cassette.server_url``: the official
Python SDK client against real servers in HTTP mode, the pinned reference server (legacy
era, sessions) and a Python-SDK server (modern era, stateless). A recorded call replays, a
new one reaches the server and is appended, and the grown cassette then answers both with
the server gone; a cassette that answers everything never contacts the server."""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest

from cassette import Cassette
from tests.helpers.support import MODERN_SERVER, OFFLINE_ENV, everything_server, python_server
from tests.plugin.test_plugin import Suite

pytestmark = pytest.mark.e2e

HTTP_SUITE = """
import os
import anyio
from mcp import Client

CALLS = {
    "echo": ("echo", {"message": "from pytest"}, "Echo: from pytest"),
    "sum": ("get-sum", {"a": 2, "b": 40}, "42"),
    "shout": ("shout", {"text": "é modern"}, "É MODERN"),
    "add": ("add", {"a": 40, "b": 2}, "42"),
}


def test_http(mcp_cassette):
    url = mcp_cassette.server_url(os.environ["SERVER_URL"])
    wanted = [CALLS[name] for name in os.environ["CALLS"].split(",")]

    async def go():
        with anyio.fail_after(60):
            async with Client(url) as client:
                return [await client.call_tool(tool, args) for tool, args, _ in wanted]

    results = anyio.run(go)
    for (_, _, expected), result in zip(wanted, results, strict=True):
        assert not result.is_error
        assert expected in result.content[0].text
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Suite:
    suite = Suite(pytester, monkeypatch)
    pytester.makepyfile(test_agent=HTTP_SUITE)
    return suite


@attrs.frozen
class Server:
    """A real streamable-HTTP server: how to start it, and a recorded and a new call."""

    era: str
    recorded: str  # the call the first run records
    new: str  # the call only the second run makes (its answer says 42)

    @contextlib.contextmanager
    def running(self) -> Iterator[int]:
        """The server, running for the block on a port of its own: yields the port."""
        if self.era == "legacy":
            server, port = everything_server("streamableHttp")
        else:
            server, port = python_server(MODERN_SERVER)
        with server:
            yield port


SERVERS = [Server("legacy", "echo", "sum"), Server("modern", "shout", "add")]


def tool_calls(tape: Path) -> list[str]:
    cassette = Cassette.load(tape)
    assert not cassette.warnings
    return [
        m["params"]["name"] for m in cassette.messages("c2s") if m.get("method") == "tools/call"
    ]


@pytest.mark.parametrize("server", SERVERS, ids=lambda s: s.era)
def test_new_episodes_over_http_appends_a_miss_that_then_replays_offline(
    suite: Suite, server: Server
) -> None:
    tape = suite.pytester.path / "cassettes" / "test_agent" / "test_http.jsonl"
    both = f"{server.recorded},{server.new}"
    with server.running() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        first = suite.run(SERVER_URL=url, CALLS=server.recorded)
        first.assert_outcomes(passed=1)
        first.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 recorded"])
        assert Cassette.load(tape).header.era == server.era
        recorded_calls = tool_calls(tape)
        recorded = tape.read_bytes()

        grown = suite.run("--mcp-cassette-mode=new_episodes", SERVER_URL=url, CALLS=both)
        grown.assert_outcomes(passed=1)
        grown.stdout.fnmatch_lines(
            ["mcp-cassette: sessions: 1 extended, 1 new episode(s) appended"]
        )
    # the recorded call replayed (not appended again); the new one went live and was
    # appended, request and answer, after everything recorded
    text = tape.read_text()
    assert text.startswith(recorded.decode())
    new_tool = tool_calls(tape)[-1]
    assert tool_calls(tape) == [*recorded_calls, new_tool]
    added = [json.loads(line) for line in text[len(recorded.decode()) :].splitlines()]
    request, *_, response = added
    assert request["message"]["params"]["name"] == new_tool
    assert [e["dir"] for e in added] == ["c2s"] + ["s2c"] * (len(added) - 1)
    assert response["message"]["id"] == request["message"]["id"]
    assert "42" in json.dumps(response["message"]["result"])
    # tied together as the recorder ties a POST: one new stream (and, where the server
    # keeps sessions, one new client session)
    before = [json.loads(line).get("meta") or {} for line in recorded.decode().splitlines()]
    assert {e["meta"]["stream"] for e in added} == {request["meta"]["stream"]}
    assert request["meta"]["stream"] not in {meta.get("stream") for meta in before}
    sessions = {e["meta"].get("session") for e in added}
    if server.era == "legacy":
        assert sessions == {max(meta.get("session") or 0 for meta in before) + 1}
    else:
        assert sessions == {None}

    # CI: the server stopped, mode none: both calls answer from the cassette
    offline = suite.run(SERVER_URL=url, CALLS=both, MCP_CASSETTE_MODE="none", **OFFLINE_ENV)
    offline.assert_outcomes(passed=1)
    offline.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 replayed"])
    assert tool_calls(tape) == [*recorded_calls, new_tool]


def test_new_episodes_over_http_never_contacts_the_server_when_nothing_misses(
    suite: Suite,
) -> None:
    tape = suite.pytester.path / "cassettes" / "test_agent" / "test_http.jsonl"
    with SERVERS[0].running() as port:
        suite.run(SERVER_URL=f"http://127.0.0.1:{port}/mcp", CALLS="echo,sum").assert_outcomes(
            passed=1
        )
    recorded = tape.read_bytes()

    # the upstream is a socket that never accepts: a connection would wait in its backlog
    with socket.create_server(("127.0.0.1", 0)) as trap:
        trap.setblocking(False)
        upstream = f"http://127.0.0.1:{trap.getsockname()[1]}/mcp"
        again = suite.run("--mcp-cassette-mode=new_episodes", SERVER_URL=upstream, CALLS="echo,sum")
        again.assert_outcomes(passed=1)
        again.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 extended"])
        again.stdout.no_fnmatch_line("*new episode*")
        with pytest.raises(BlockingIOError):
            trap.accept()  # nobody ever connected
    assert tape.read_bytes() == recorded


FAULTED_HTTP = """
import os
import anyio
from mcp import Client, MCPError


@pytest.mark.mcp_cassette("cassettes/test_agent/test_http.jsonl")
def test_faulted(mcp_cassette):
    plan = [{"kind": "error", "name": "shout", "nth": 1, "code": -32050, "message": "busy"}]
    url = mcp_cassette.server_url(os.environ["SERVER_URL"], faults=plan)

    async def go():
        with anyio.fail_after(60):
            async with Client(url) as client:
                try:
                    await client.call_tool("shout", {"text": "é modern"})
                except MCPError as exc:
                    first = exc.error.code
                retry = await client.call_tool("shout", {"text": "é modern"})
                return first, retry.content[0].text

    assert anyio.run(go) == (-32050, "É MODERN")
"""


def test_server_url_lays_a_fault_plan_over_its_replay(suite: Suite) -> None:
    with SERVERS[1].running() as port:
        url = f"http://127.0.0.1:{port}/mcp"
        suite.run(SERVER_URL=url, CALLS="shout").assert_outcomes(passed=1)
    suite.pytester.makepyfile(test_faulted="import pytest\n" + FAULTED_HTTP)
    # the server is gone: the faulted run replays, in-process, under the plan
    faulted = suite.run("test_faulted.py", SERVER_URL=url, **OFFLINE_ENV)
    faulted.assert_outcomes(passed=1)
    faulted.stdout.fnmatch_lines(["mcp-cassette: sessions: 1 replayed"])
