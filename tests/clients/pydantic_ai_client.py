"""Matrix driver: pydantic-ai's ``MCPToolset`` (pydantic-ai-slim[mcp]==2.68.0, in the main
.venv beside mcp==2.3.0), as a pydantic-ai agent uses it: the toolset lists the server's
tools and calls them (``direct_call_tool``), and reads its resources and prompts.

    pydantic_ai_client.py KIND stdio|http|sse TARGET...

Built on the fastmcp ``Client`` (its default ``mode``, auto). It declares no sampling,
elicitation or roots handler here (an agent given none), so those steps observe what the
server does without them. See common.py for the output.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Observer, Target, main
from fastmcp_client import transport

warnings.simplefilter("ignore")  # deprecations are not observations


async def session(target: Target, obs: Observer) -> None:
    from fastmcp import Client
    from pydantic_ai.mcp import MCPToolset

    spec = target.spec
    toolset: Any = MCPToolset(Client(transport(target)))
    async with toolset:
        obs.connected = True
        info = toolset.server_info
        obs.out["server"] = None if info is None else {"name": info.name, "version": info.version}

        async def names(call: Any, key: str) -> list[str]:
            return [str(getattr(item, key)) for item in await call()]

        def plain(call: Any) -> Any:
            """What pydantic-ai returns (dataclasses, models), as JSON values."""
            from pydantic_core import to_jsonable_python

            async def run() -> Any:
                return to_jsonable_python(await call(), exclude_none=True)

            return run

        await obs.step("tools", lambda: names(toolset.list_tools, "name"))
        await obs.step("resources", lambda: names(toolset.list_resources, "uri"))
        await obs.step("prompts", lambda: names(toolset.list_prompts, "name"))
        for step in ("echo", "progress", "sampling", "elicitation", "roots"):
            call = spec[step]
            await obs.step(
                step,
                plain(lambda call=call: toolset.direct_call_tool(call["name"], call["arguments"])),
            )
        await obs.step("read", plain(lambda: toolset.read_resource(spec["resource"])))
        args = spec["prompt_args"]
        await obs.step(
            "prompt_args", plain(lambda: toolset.get_prompt(args["name"], args["arguments"]))
        )


if __name__ == "__main__":
    sys.exit(main(session))
