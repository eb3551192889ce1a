"""Matrix driver: the fastmcp 4.x ``Client`` (fastmcp==4.2.3, in the main .venv beside
mcp==2.3.0, which it is built on).

    fastmcp_client.py [--mode auto|legacy|2026-07-28] KIND stdio|http|sse TARGET...

fastmcp's default ``mode`` is ``auto`` like the SDK's. The ``*_mcp`` methods are used so the
driver sees the protocol results, not fastmcp's conveniences. See common.py for the output.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Observer, Target, main

warnings.simplefilter("ignore")  # deprecations are not observations


def transport(target: Target) -> Any:
    from fastmcp.client.transports import SSETransport, StdioTransport, StreamableHttpTransport

    if target.transport == "stdio":
        command, *args = target.where
        return StdioTransport(command=command, args=args, keep_alive=False)
    if target.transport == "sse":
        return SSETransport(target.url)
    return StreamableHttpTransport(target.url)


async def session(target: Target, obs: Observer) -> None:
    from fastmcp import Client
    from mcp import types as t

    spec, answers = target.spec, target.answers

    async def on_sampling(_messages: Any, params: Any, _ctx: Any) -> Any:
        obs.callbacks.append({"kind": "sampling", "params": params})
        return t.CreateMessageResult.model_validate(answers["sampling"])

    async def on_elicitation(_message: str, _type: Any, params: Any, _ctx: Any) -> Any:
        obs.callbacks.append({"kind": "elicitation", "params": params})
        return t.ElicitResult.model_validate(spec["elicitation_answer"])

    async def on_roots(_ctx: Any) -> Any:
        obs.callbacks.append({"kind": "roots"})
        return [t.Root.model_validate(root) for root in answers["roots"]]

    async def on_log(message: Any) -> None:
        obs.logs.append(message)

    client = Client(
        transport(target),
        mode=target.mode or "auto",
        sampling_handler=on_sampling,
        elicitation_handler=on_elicitation,
        roots=on_roots,
        log_handler=on_log,
    )
    async with client:
        obs.connected = True
        result = client.initialize_result
        obs.out["protocol"] = getattr(result, "protocol_version", None) or client.protocol_version
        info = result.server_info if result is not None else None
        obs.out["server"] = None if info is None else {"name": info.name, "version": info.version}
        await run_script(client, target, obs)


async def run_script(client: Any, target: Target, obs: Observer) -> None:
    spec = target.spec
    progress: list[list[Any]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append([value, total, message])

    async def names(call: Any, key: str) -> list[str]:
        return [str(getattr(item, key)) for item in await call()]

    await obs.step("set_level", lambda: client.set_logging_level(spec["log_level"]))
    await obs.step("tools", lambda: names(client.list_tools, "name"))
    await obs.step("resources", lambda: names(client.list_resources, "uri"))
    await obs.step("prompts", lambda: names(client.list_prompts, "name"))
    echo = spec["echo"]
    await obs.step("echo", lambda: client.call_tool_mcp(echo["name"], echo["arguments"]))
    slow = spec["progress"]
    await obs.step(
        "progress",
        lambda: client.call_tool_mcp(slow["name"], slow["arguments"], progress_handler=on_progress),
    )
    obs.out["progress_updates"] = progress
    await obs.step("prompt", lambda: client.get_prompt_mcp(spec["prompt"]["name"]))
    args = spec["prompt_args"]
    await obs.step("prompt_args", lambda: client.get_prompt_mcp(args["name"], args["arguments"]))
    await obs.step("read", lambda: client.read_resource_mcp(spec["resource"]))
    for step in [k for k in ("sampling", "elicitation", "roots", "gated") if k in spec]:
        call = spec[step]
        await obs.step(
            step, lambda call=call: client.call_tool_mcp(call["name"], call["arguments"])
        )


if __name__ == "__main__":
    sys.exit(main(session))
