"""langchain-mcp-adapters in its default mode: the stdio server is started once per call.

    .venv-mcp1/bin/python langchain_per_call.py COMMAND [ARG...]
    .venv-mcp1/bin/python langchain_per_call.py http://HOST:PORT/mcp

Lists the tools (one start), then calls ``visit``, ``echo`` and ``visit`` again (a start
each), and prints one JSON object of what it saw: the tool names and each call's text.
Runs in tests/clients/.venv-mcp1 (langchain-mcp-adapters 0.3.2 needs mcp<2).
"""

import asyncio
import json
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient


async def main(command: list[str]) -> dict:
    if command[0].startswith("http"):  # each call opens a streamable HTTP session
        server = {"url": command[0], "transport": "streamable_http"}
    else:
        server = {"command": command[0], "args": command[1:], "transport": "stdio"}
    client = MultiServerMCPClient({"server": server})
    tools = {tool.name: tool for tool in await client.get_tools()}
    calls = []
    for name, arguments in (("visit", {}), ("echo", {"text": "hi"}), ("visit", {})):
        result = await tools[name].ainvoke(arguments)
        blocks = result if isinstance(result, list) else [result]
        calls.append(" ".join(b["text"] if isinstance(b, dict) else str(b) for b in blocks))
    return {"tools": sorted(tools), "calls": calls}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1:]))))
