"""An MCP server written with the official Python SDK's low-level ``Server``, for the
replay-fidelity tests.

* tool ``crash``: logs a message, then exits the whole process in the middle of the call,
  as a server that crashes mid-call does (the client never gets an answer);
* tool ``slow``: answers after ``seconds`` (a call a client may cancel, or that runs
  beside a fast one); tool ``fast``: answers at once;
* ``resources/list``: 25 resources, 10 to a page, with opaque cursors (a client that lists
  everything follows ``nextCursor``); ``resources/read`` reads one.

Outputs are deterministic, so a live run and a replay can be compared exactly.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PAGE = 10
ITEMS = [f"page://item/{n:02d}" for n in range(25)]
TOOLS = [
    types.Tool(name="crash", description="Die mid-call.", inputSchema={"type": "object"}),
    types.Tool(
        name="slow",
        description="Answer after a while.",
        inputSchema={"type": "object", "properties": {"seconds": {"type": "number"}}},
    ),
    types.Tool(name="fast", description="Answer at once.", inputSchema={"type": "object"}),
]


def cursor_of(offset: int) -> str:
    return base64.b64encode(f"offset={offset}".encode()).decode()


def offset_of(cursor: str | None) -> int:
    return int(base64.b64decode(cursor).decode().split("=")[1]) if cursor else 0


async def list_tools(_ctx: Any, _params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    arguments = params.arguments or {}
    if params.name == "crash":
        await ctx.session.send_log_message(level="info", data="about to crash")
        sys.stdout.flush()
        os._exit(3)
    if params.name == "slow":
        seconds = float(arguments.get("seconds", 0.5))
        await anyio.sleep(seconds)
        text = f"slept {seconds}"
    else:
        text = "fast"
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def list_resources(
    _ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    start = offset_of(params.cursor if params is not None else None)
    page = [
        types.Resource(uri=uri, name=uri.rsplit("/", 1)[1]) for uri in ITEMS[start : start + PAGE]
    ]
    more = start + PAGE < len(ITEMS)
    return types.ListResourcesResult(
        resources=page, nextCursor=cursor_of(start + PAGE) if more else None
    )


async def read_resource(
    _ctx: Any, params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    uri = str(params.uri)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, text=f"contents of {uri}")]
    )


server = Server(
    "cassette-test-fidelity",
    version="1.0.0",
    on_list_tools=list_tools,
    on_call_tool=call_tool,
    on_list_resources=list_resources,
    on_read_resource=read_resource,
)


async def main() -> None:
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
