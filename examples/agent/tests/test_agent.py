"""The example agent, tested offline: the model through pytest-recording (vcrpy), the MCP
server through cassette-mcp's ``mcp_cassette`` fixture.

Both kinds of recording are committed beside this file (``cassettes/test_agent/``): the
model's HTTP exchanges as vcrpy YAML, the MCP sessions as cassette-mcp JSONL. In CI
neither a model key nor the network is needed (``--block-network``, and
``MCP_CASSETTE_MODE=none`` so a missing MCP cassette fails instead of starting a server).

The second test lays a fault plan over the first test's MCP recording: the forecast tool
never answers the first call (a timeout), and the agent must retry and still answer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from agent import run_agent

from cassette.pytest_plugin import MCPCassette

SERVER = [sys.executable, str(Path(__file__).resolve().parent.parent / "weather_server.py")]
# A real key only matters when re-recording; the committed cassettes never hold one.
KEY = os.environ.get("OPENAI_API_KEY", "sk-proj-example-0000000000000000000000000000")
QUESTION = "What is the weather in Paris today?"
RECORDED = "cassettes/test_agent/test_the_agent_answers_with_the_forecast.jsonl"


@pytest.fixture(scope="module")
def vcr_config() -> dict[str, object]:
    # The model is matched on the request body too: a change in what the agent sends
    # (a lost tool result, a different prompt) is a failure, not a stale answer.
    return {"filter_headers": ["authorization"], "match_on": ["method", "uri", "body"]}


@pytest.mark.vcr
def test_the_agent_answers_with_the_forecast(mcp_cassette: MCPCassette) -> None:
    servers = {"weather": mcp_cassette.server_command(SERVER)}
    answer = anyio.run(lambda: run_agent(QUESTION, servers, api_key=KEY))
    assert "light rain" in answer.text
    assert answer.trace == ["forecast: ok"]


@pytest.mark.vcr
@pytest.mark.mcp_cassette(
    RECORDED,
    faults=[{"kind": "timeout", "method": "tools/call", "name": "forecast", "nth": 1}],
)
def test_the_agent_recovers_when_the_server_times_out(mcp_cassette: MCPCassette) -> None:
    servers = {"weather": mcp_cassette.server_command(SERVER)}
    # The faulted call never answers, so its half-second timeout always fires; the retry
    # gets a minute for the recorded answer's milliseconds. Neither outcome depends on
    # the machine's speed.
    answer = anyio.run(
        lambda: run_agent(QUESTION, servers, api_key=KEY, tool_timeout=0.5, retry_timeout=60)
    )
    assert "light rain" in answer.text
    assert answer.trace == ["forecast: timed out, retrying", "forecast: ok"]
