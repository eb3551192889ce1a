"""A small MCP server written with the official Python SDK, for modern-era (2026-07-28) tests.

The SDK's stdio server answers both eras; a client in ``auto`` mode discovers it and the
session is stateless and modern. Outputs are deterministic so a live run and a replay can
be compared exactly.
"""

from __future__ import annotations

import os
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, Resolve
from pydantic import BaseModel

app = MCPServer("cassette-test-modern", version="1.2.3")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@app.tool()
def greet(person: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet someone, asking for their name first (an input-required round trip)."""
    return f"Hello, {person.name}!"


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def shout(text: str) -> str:
    """Upper-case some text."""
    # CASSETTE_TEST_DRIFT=1 plays a server that changed since the recording (verify tests)
    return text.upper() + ("!" if os.environ.get("CASSETTE_TEST_DRIFT") == "1" else "")


@app.tool()
async def touch(ctx: Context) -> str:  # type: ignore[type-arg]
    """Announce that the tool list changed (to subscriptions/listen streams)."""
    await ctx.notify_tools_changed()
    return "touched"


@app.resource("memo://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the modern era"


@app.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    import sys

    # `modern_server.py` serves stdio; `modern_server.py http PORT` serves streamable HTTP.
    if sys.argv[1:2] == ["http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run("stdio")
