"""Matrix driver: langchain-mcp-adapters' ``MultiServerMCPClient`` in its default mode, as
a langchain agent uses it: ``get_tools()``, then each tool's ``ainvoke``. In that mode
every call opens a session of its own (over stdio, a fresh start of the server), so a
replay serves each start from the cassette's one session.

    .venv-mcp1/bin/python langchain_client.py KIND stdio|http|sse TARGET...

Runs in tests/clients/.venv-mcp1 (langchain-mcp-adapters 0.3.2 needs mcp<2). The
observations: ``tools`` (names), and what the echo and the prompt-with-arguments calls
returned. See common.py for the output.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Observer, Target, main


def connection(target: Target) -> dict[str, Any]:
    if target.transport == "stdio":
        command, *args = target.where
        return {"command": command, "args": args, "transport": "stdio"}
    kind = "sse" if target.transport == "sse" else "streamable_http"
    return {"url": target.url, "transport": kind}


async def session(target: Target, obs: Observer) -> None:
    from langchain_mcp_adapters.client import MultiServerMCPClient

    client = MultiServerMCPClient({"server": connection(target)})  # type: ignore[dict-item]
    tools = {tool.name: tool for tool in await client.get_tools()}
    obs.connected = True
    obs.out["tools"] = sorted(tools)
    echo = target.spec["echo"]

    async def call() -> Any:
        result = await tools[echo["name"]].ainvoke(echo["arguments"])
        blocks = result if isinstance(result, list) else [result]
        return [b.get("text") if isinstance(b, dict) else str(b) for b in blocks]

    await obs.step("echo", call)
    gated = target.spec.get("gated")
    if gated is not None:

        async def read() -> Any:
            result = await tools[gated["name"]].ainvoke(gated["arguments"])
            blocks = result if isinstance(result, list) else [result]
            return [b.get("text") if isinstance(b, dict) else str(b) for b in blocks]

        await obs.step("gated", read)
    args = target.spec["prompt_args"]
    await obs.step(
        "prompt_args",
        lambda: client.get_prompt("server", args["name"], arguments=args["arguments"]),
    )


if __name__ == "__main__":
    sys.exit(main(session))
