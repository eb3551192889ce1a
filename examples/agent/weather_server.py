"""The MCP server the example agent uses: a forecast tool over stdio, built on the official
Python SDK. Its answers come from a small table, so a recording of it is the same every
time; the agent cannot tell it from a real weather service, which is the point."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

FORECASTS = {
    "paris": "Paris: 18°C, light rain until 15:00, then clearing.",
    "lisbon": "Lisbon: 24°C, sunny, light wind from the north.",
}

server = MCPServer("weather")


@server.tool()
def forecast(city: str) -> str:
    """Today's forecast for a city."""
    return FORECASTS.get(city.strip().lower(), f"No forecast for {city}.")


if __name__ == "__main__":
    server.run("stdio")
