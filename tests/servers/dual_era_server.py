"""The dual-era test server: the official Python SDK's ``MCPServer``, with a truthful
``server/discover``.

Like any server built on mcp 2.x it answers both eras: a client that opens with
``server/discover`` gets a 2026-07-28 session, one that opens with ``initialize`` a legacy
one. But the SDK's default discovery lists only 2026-07-28, so a recording of it could not
prove that a legacy client would have been served (``tests/e2e/test_record_era.py`` uses
``modern_server.py`` for that case). This one lists every revision it accepts, as a dual-era
server should; a modern cassette of it serves legacy clients too (``cassette.core.eras.bridge``).

Its tools cover the cross-client matrix's scripted session (tests/clients/session.json) and
tests/e2e/test_cross_era.py: an echo, an adder, a tool that reports progress and logs, and
one tool each that needs the client's sampling, elicitation and roots (server-to-client
requests on a legacy session, ``input_required`` rounds on a modern one). Every output is
deterministic.

    dual_era_server.py                 stdio
    dual_era_server.py http PORT       streamable HTTP on 127.0.0.1:PORT/mcp
    dual_era_server.py sse PORT        legacy HTTP+SSE on 127.0.0.1:PORT/sse
"""

from __future__ import annotations

import sys
import warnings
from typing import Annotated, Any

import anyio
import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.resolve import Elicit, ListRoots, Resolve, Sample
from mcp.types import CreateMessageResult, ListRootsResult, SamplingMessage, TextContent
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel

warnings.simplefilter("ignore")  # the SDK's deprecation warnings (logging, SEP-2577) are noise here

app = MCPServer("cassette-dual-era", version="1.0.0", instructions="A dual-era test server.")


class Name(BaseModel):
    name: str


def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


def ask_model(topic: str) -> Sample:
    return Sample(
        [
            SamplingMessage(
                role="user", content=TextContent(type="text", text=f"Write about {topic}")
            )
        ],
        max_tokens=16,
    )


def ask_roots() -> ListRoots:
    return ListRoots()


@app.tool()
def echo(message: str) -> str:
    """Echo the message back."""
    return f"Echo: {message}"


@app.tool()
async def count(steps: int, ctx: Context) -> str:  # type: ignore[type-arg]
    """Count to STEPS, a tenth of a second a step, reporting progress at each step and
    logging once (spaced like server-everything's long-running operation, so a client
    reads each update on its own, live)."""
    await ctx.info(f"counting to {steps}")
    for step in range(1, steps + 1):
        await anyio.sleep(0.1)
        await ctx.report_progress(step, steps, f"step {step}")
    return f"counted to {steps}"


@app.tool()
def greet(person: Annotated[Name, Resolve(ask_name)]) -> str:
    """Greet someone, asking the client for their name (elicitation)."""
    return f"Hello, {person.name}!"


@app.tool()
def write(topic: str, sampled: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Ask the client's model to write about TOPIC (sampling)."""
    content = sampled.content
    text = content.text if isinstance(content, TextContent) else type(content).__name__
    return f"{sampled.model} wrote: {text}"


@app.tool()
def roots(listed: Annotated[ListRootsResult, Resolve(ask_roots)]) -> str:
    """Name the client's roots (roots/list)."""
    return ", ".join(f"{r.name}={r.uri}" for r in listed.roots) or "no roots"


@app.resource("memo://greeting")
def greeting() -> str:
    """A fixed greeting."""
    return "hello from the matrix"


@app.prompt()
def hello() -> str:
    """A prompt without arguments."""
    return "Say hello."


@app.prompt()
def review(code: str) -> str:
    """A prompt with an argument."""
    return f"Please review:\n{code}"


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def truthful_discovery() -> None:
    """List every revision this server accepts in ``server/discover`` (the SDK's documented
    way: replace the discover handler). mcp23_server.py runs the same app without it."""
    server = app._lowlevel_server
    default = server._handle_discover

    async def discover(ctx: Any, params: types.RequestParams) -> types.DiscoverResult:
        result = await default(ctx, params)
        versions = [*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)]
        return result.model_copy(update={"supported_versions": versions})

    server.add_request_handler("server/discover", types.RequestParams, discover)


def serve(argv: list[str]) -> None:
    """Serve ``app`` as ``argv`` says: stdio, ``http PORT`` or ``sse PORT``."""
    match argv[:1]:
        case ["http"]:
            app.run("streamable-http", host="127.0.0.1", port=int(argv[1]))
        case ["sse"]:
            app.run("sse", host="127.0.0.1", port=int(argv[1]))
        case _:
            app.run("stdio")


if __name__ == "__main__":
    truthful_discovery()
    serve(sys.argv[1:])
