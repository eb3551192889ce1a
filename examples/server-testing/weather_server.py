"""A small weather MCP server written with the official Python SDK: the server under test
in docs/test-your-server.md.

Its answers are what a real server's look like: plain text (``greet``), JSON as text with
a wall-clock field (``forecast``), a tool that asks the client's model before answering
(``summarize``, sampling), and a resource.
"""

import json
import time
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent

app = MCPServer("weather", version="1.0.0")


@app.tool()
def greet(name: str) -> str:
    """Greet someone."""
    return f"Hello, {name}."


@app.tool(structured_output=False)
def forecast(city: str) -> str:
    """Tomorrow's weather for a city, as JSON."""
    report = {"city": city, "tempC": 4, "conditions": "snow", "generatedAt": time.time()}
    return json.dumps(report)


def ask_model(text: str) -> Sample:
    question = SamplingMessage(
        role="user", content=TextContent(type="text", text=f"Summarize: {text}")
    )
    return Sample([question], max_tokens=50)


@app.tool()
def summarize(text: str, summary: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Summarize a text with the client's model."""
    said = summary.content.text if isinstance(summary.content, TextContent) else ""
    return f"Summary: {said}"


@app.resource("weather://stations")
def stations() -> str:
    """The stations, as JSON."""
    return json.dumps({"stations": ["Blindern", "Vigra"]})


if __name__ == "__main__":
    app.run("stdio")
