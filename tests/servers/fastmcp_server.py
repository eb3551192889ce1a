"""The fastmcp 4.x server of the cross-client matrix (tests/e2e/test_client_matrix.py).

The same tools as dual_era_server.py, written the way a fastmcp user writes them: an echo, a
tool that reports progress and logs, and tools that need the client's elicitation
(``ctx.elicit``), sampling and roots (fastmcp 4 has no authoring API for those two, so
they go through the session as its docs say). fastmcp refuses server-to-client requests
on a 2026-07-28 session with a tool error: that is what a modern client observes, live
and on replay. Every output is deterministic; the start-up banner is off.

    fastmcp_server.py                stdio
    fastmcp_server.py http PORT      streamable HTTP on 127.0.0.1:PORT/mcp
    fastmcp_server.py sse PORT       legacy HTTP+SSE on 127.0.0.1:PORT/sse
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import anyio
from fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent

app = FastMCP("cassette-matrix-fastmcp", version="1.0.0", instructions="A fastmcp test server.")


@dataclass
class Name:
    name: str


@app.tool
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@app.tool
async def count(steps: int, ctx: Context) -> str:
    """Count to STEPS, a tenth of a second a step, reporting progress at each step and
    logging once (spaced like server-everything's long-running operation, so a client
    reads each update on its own, live)."""
    await ctx.info(f"counting to {steps}")
    for step in range(1, steps + 1):
        await anyio.sleep(0.1)
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@app.tool
async def greet(ctx: Context) -> str:
    """Greet someone, asking the client for their name (elicitation)."""
    answer = await ctx.elicit("What is your name?", Name)
    if answer.action != "accept":
        return f"no name ({answer.action})"
    return f"Hello, {answer.data.name}!"


@app.tool
async def write(topic: str, ctx: Context) -> str:
    """Ask the client's model to write about TOPIC (sampling)."""
    message = SamplingMessage(
        role="user", content=TextContent(type="text", text=f"Write about {topic}")
    )
    sampled = await ctx.session.create_message(messages=[message], max_tokens=16)
    content = sampled.content
    text = content.text if isinstance(content, TextContent) else type(content).__name__
    return f"{sampled.model} wrote: {text}"


@app.tool
async def roots(ctx: Context) -> str:
    """Name the client's roots (roots/list)."""
    listed = await ctx.session.list_roots()
    return ", ".join(f"{r.name}={r.uri}" for r in listed.roots) or "no roots"


@app.resource("memo://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the matrix"


@app.prompt
def hello() -> str:
    """A prompt without arguments."""
    return "Say hello."


@app.prompt
def review(code: str) -> str:
    """A prompt with an argument."""
    return f"Please review:\n{code}"


if __name__ == "__main__":
    match sys.argv[1:2]:
        case ["http"]:
            app.run("http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
        case ["sse"]:
            app.run("sse", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
        case _:
            app.run("stdio", show_banner=False)
