"""A weather server written with the official Python SDK's ``MCPServer``, in two versions,
for the server-testing tests (scenarios, ``verify``, ``--update``, the pytest fixture).

``DRIFT=1`` plays the same server after a deliberate change, one of each kind a server
author makes:

* a tool renamed: ``lookup_station`` becomes ``find_station``;
* a schema changed: ``convert`` takes a required ``precision``;
* a text that differs: ``greet`` ends with "!" instead of ".";
* a field inside JSON text: ``forecast`` answers JSON as text, and its ``tempC`` changes.

In both versions ``forecast`` carries ``generatedAt`` (the wall clock, so every run
differs: a volatile field to ignore by key), and ``summarize`` asks the client's model
(``sampling/createMessage``; in 2026-07-28 sessions as an ``input_required`` round trip)
before answering, so a verify must answer the server. ``DRIFT_PROMPT=1`` changes the
wording of that question; ``DRIFT_ASK=1`` makes ``greet`` ask the model too, a question
no recording of the unchanged server holds. ``account`` echoes ``WEATHER_TOKEN``: a
secret in an answer.

    drift_server.py                 stdio (both eras: the SDK serves legacy and 2026-07-28)
    drift_server.py http PORT       streamable HTTP
    drift_server.py sse PORT        legacy HTTP+SSE
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resolve import Resolve, Sample
from mcp_types import CreateMessageResult, SamplingMessage, TextContent

DRIFT = os.environ.get("DRIFT") == "1"
app = MCPServer("weather", version="2.0.0" if DRIFT else "1.0.0")


def ask_mood(name: str) -> Sample:
    text = TextContent(type="text", text=f"How should I greet {name}?")
    return Sample([SamplingMessage(role="user", content=text)], max_tokens=10)


if os.environ.get("DRIFT_ASK") == "1":

    @app.tool()
    def greet(name: str, mood: Annotated[CreateMessageResult, Resolve(ask_mood)]) -> str:
        """Greet someone, in the mood the client's model suggests."""
        return f"Hello, {name}{'!' if DRIFT else '.'}"

else:

    @app.tool()
    def greet(name: str) -> str:  # type: ignore[misc]
        """Greet someone."""
        return f"Hello, {name}{'!' if DRIFT else '.'}"


@app.tool(structured_output=False)  # JSON as text, as many servers answer
def forecast(city: str) -> str:
    """Tomorrow's weather for a city, as JSON."""
    report = {
        "city": city,
        "tempC": 5 if DRIFT else 4,
        "conditions": "snow",
        "generatedAt": time.time(),
    }
    return json.dumps(report)


if DRIFT:

    @app.tool()
    def convert(amount: float, currency: str, precision: int) -> str:
        """Convert an amount to euros."""
        return f"{round(amount * 0.5, precision)} EUR from {currency}"

    @app.tool()
    def find_station(station_id: str) -> str:
        """Find a weather station."""
        return f"station {station_id}: Blindern"

else:

    @app.tool()
    def convert(amount: float, currency: str) -> str:  # type: ignore[misc]
        """Convert an amount to euros."""
        return f"{round(amount * 0.5, 2)} EUR from {currency}"

    @app.tool()
    def lookup_station(station_id: str) -> str:
        """Find a weather station."""
        return f"station {station_id}: Blindern"


def ask_model(text: str) -> Sample:
    wording = "Sum up in five words" if os.environ.get("DRIFT_PROMPT") == "1" else "Summarize"
    message = SamplingMessage(
        role="user", content=TextContent(type="text", text=f"{wording}: {text}")
    )
    return Sample([message], max_tokens=50)


@app.tool()
def summarize(text: str, summary: Annotated[CreateMessageResult, Resolve(ask_model)]) -> str:
    """Summarize a text with the client's model."""
    content = summary.content
    said = content.text if isinstance(content, TextContent) else str(content)
    return f"Summary: {said}"


@app.tool()
def account() -> str:
    """Who the server is signed in as: echoes its credential, as careless servers do."""
    return f"signed in with {os.environ.get('WEATHER_TOKEN', 'no token')}{'!' if DRIFT else ''}"


@app.resource("weather://stations")
def stations() -> str:
    """The stations, as JSON."""
    return json.dumps({"stations": ["Blindern", "Vigra"], "count": 2})


@app.prompt()
def brief(city: str) -> str:
    """A forecast briefing."""
    return f"Brief me on {city}."


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    elif sys.argv[1:2] == ["sse"]:
        app.run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run("stdio")
