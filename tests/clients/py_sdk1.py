"""Matrix driver: the official Python SDK 1.x ``ClientSession`` (mcp==1.30.0, in its own
virtual environment tests/clients/.venv-mcp1, made by scripts/test.sh).

    .venv-mcp1/bin/python py_sdk1.py KIND stdio|http|sse TARGET...

SDK 1.x knows only the ``initialize`` handshake. See common.py for the output.
"""

from __future__ import annotations

import sys
import warnings
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Observer, Target, main

warnings.simplefilter("ignore")  # deprecations are not observations


def streams(target: Target) -> Any:
    if target.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters, stdio_client

        command, *args = target.where
        return stdio_client(StdioServerParameters(command=command, args=args))
    if target.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(target.url)
    from mcp.client.streamable_http import streamablehttp_client

    return streamablehttp_client(target.url)


async def session(target: Target, obs: Observer) -> None:
    from mcp import ClientSession
    from mcp import types as t

    spec, answers = target.spec, target.answers

    async def on_sampling(_ctx: Any, params: t.CreateMessageRequestParams) -> Any:
        obs.callbacks.append({"kind": "sampling", "params": params})
        return t.CreateMessageResult.model_validate(answers["sampling"])

    async def on_elicitation(_ctx: Any, params: Any) -> Any:
        obs.callbacks.append({"kind": "elicitation", "params": params})
        return t.ElicitResult.model_validate(spec["elicitation_answer"])

    async def on_roots(_ctx: Any) -> Any:
        obs.callbacks.append({"kind": "roots"})
        return t.ListRootsResult.model_validate({"roots": answers["roots"]})

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        obs.logs.append(params)

    async with AsyncExitStack() as stack:
        read, write, *_ = await stack.enter_async_context(streams(target))
        client = await stack.enter_async_context(
            ClientSession(
                read,
                write,
                sampling_callback=on_sampling,
                elicitation_callback=on_elicitation,
                list_roots_callback=on_roots,
                logging_callback=on_log,
            )
        )
        init = await client.initialize()
        obs.connected = True
        obs.out["protocol"] = init.protocolVersion
        obs.out["server"] = {"name": init.serverInfo.name, "version": init.serverInfo.version}
        await run_script(client, target, obs)


async def run_script(client: Any, target: Target, obs: Observer) -> None:
    from pydantic import AnyUrl

    spec = target.spec
    progress: list[list[Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    async def names(call: Any, attr: str, key: str) -> list[str]:
        return [str(getattr(item, key)) for item in getattr(await call(), attr)]

    await obs.step("set_level", lambda: client.set_logging_level(spec["log_level"]))
    await obs.step("tools", lambda: names(client.list_tools, "tools", "name"))
    await obs.step("resources", lambda: names(client.list_resources, "resources", "uri"))
    await obs.step("prompts", lambda: names(client.list_prompts, "prompts", "name"))
    echo = spec["echo"]
    await obs.step("echo", lambda: client.call_tool(echo["name"], echo["arguments"]))
    slow = spec["progress"]
    await obs.step(
        "progress",
        lambda: client.call_tool(slow["name"], slow["arguments"], progress_callback=on_progress),
    )
    obs.out["progress_updates"] = progress
    await obs.step("prompt", lambda: client.get_prompt(spec["prompt"]["name"]))
    args = spec["prompt_args"]
    await obs.step("prompt_args", lambda: client.get_prompt(args["name"], args["arguments"]))
    await obs.step("read", lambda: client.read_resource(AnyUrl(spec["resource"])))
    for step in [k for k in ("sampling", "elicitation", "roots", "gated") if k in spec]:
        call = spec[step]
        await obs.step(step, lambda call=call: client.call_tool(call["name"], call["arguments"]))


if __name__ == "__main__":
    sys.exit(main(session))
