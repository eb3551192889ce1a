"""A small tool-using agent: a chat model over HTTP, MCP servers for its tools.

The loop is the one most agents run: list the tools of every MCP server, send the
conversation and the tools to the model (an OpenAI-compatible Chat Completions endpoint),
run each tool call the model asks for on its MCP server, send the results back, and stop
when the model answers in words. A tool call that times out is tried again once, and a
tool that still fails is reported to the model as a failed result, so one flaky server
does not sink the whole answer.

Nothing here knows about cassettes: the test (tests/test_agent.py) hands the agent
``mcp_cassette.server_command(...)`` where a deployment would hand it the server's own
command, and replays the model's HTTP answers with pytest-recording.

Run it for real with ``OPENAI_API_KEY=... python agent.py "What is the weather in Paris?"``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters
from mcp.types import REQUEST_TIMEOUT, TextContent

MODEL_URL = os.environ.get("AGENT_MODEL_URL", "https://api.openai.com/v1/chat/completions")
MODEL = os.environ.get("AGENT_MODEL", "gpt-4o-mini")
SYSTEM = "You answer briefly. Use the tools for facts you do not know."


@dataclass
class Answer:
    """What the agent said, and what it did on the way (for a test to check)."""

    text: str
    trace: list[str] = field(default_factory=list)


def _tool_spec(server: str, tool: Any) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": f"{server}__{tool.name}",
            "description": tool.description or "",
            "parameters": tool.input_schema,
        },
    }


async def _call(
    client: Client,
    name: str,
    arguments: dict[str, Any],
    trace: list[str],
    timeouts: tuple[float, float],
) -> str:
    """One tool call, and one retry after a timeout (``timeouts``: the first attempt's
    seconds, then the retry's); a failure becomes the result text."""
    for attempt, seconds in enumerate(timeouts, 1):
        try:
            result = await client.call_tool(name, arguments, read_timeout_seconds=seconds)
        except MCPError as exc:
            if exc.error.code == REQUEST_TIMEOUT and attempt == 1:
                trace.append(f"{name}: timed out, retrying")
                continue
            trace.append(f"{name}: failed: {exc.error.message}")
            return f"The tool failed: {exc.error.message}"
        trace.append(f"{name}: ok")
        return "\n".join(c.text for c in result.content if isinstance(c, TextContent))
    raise AssertionError("unreachable")  # pragma: no cover


async def run_agent(
    question: str,
    servers: Mapping[str, Sequence[str]],
    *,
    api_key: str,
    tool_timeout: float = 10.0,
    retry_timeout: float | None = None,
    max_turns: int = 6,
) -> Answer:
    """Answer ``question`` with the MCP servers ``servers`` (name -> command line).

    A tool call gets ``tool_timeout`` seconds; one that times out is tried again with
    ``retry_timeout`` (default: the same), since a server that was slow once may need
    longer the second time."""
    timeouts = (tool_timeout, tool_timeout if retry_timeout is None else retry_timeout)
    trace: list[str] = []
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, Client] = {}
        tools: list[dict[str, Any]] = []
        for server, command in servers.items():
            params = StdioServerParameters(command=command[0], args=list(command[1:]))
            client = await stack.enter_async_context(Client(params))
            clients[server] = client
            tools += [_tool_spec(server, t) for t in (await client.list_tools()).tools]
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question},
        ]
        model = await stack.enter_async_context(
            httpx.AsyncClient(headers={"authorization": f"Bearer {api_key}"}, timeout=60)
        )
        for _ in range(max_turns):
            response = await model.post(
                MODEL_URL, json={"model": MODEL, "messages": messages, "tools": tools}
            )
            response.raise_for_status()
            message = response.json()["choices"][0]["message"]
            messages.append(message)
            calls = message.get("tool_calls") or []
            if not calls:
                return Answer(message.get("content") or "", trace)
            for call in calls:
                server, _, tool = call["function"]["name"].partition("__")
                arguments = json.loads(call["function"]["arguments"] or "{}")
                text = await _call(clients[server], tool, arguments, trace, timeouts)
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": text})
    return Answer("I could not finish in time.", trace)


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    servers = {"weather": [sys.executable, os.path.join(here, "weather_server.py")]}
    question = sys.argv[1] if len(sys.argv) > 1 else "What is the weather in Paris?"
    answer = anyio.run(lambda: run_agent(question, servers, api_key=os.environ["OPENAI_API_KEY"]))
    print(answer.text)


if __name__ == "__main__":
    main()
