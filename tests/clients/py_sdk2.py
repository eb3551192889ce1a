"""Matrix driver: the official Python SDK 2.x ``Client`` (mcp==2.3.0, the main .venv).

    py_sdk2.py --mode auto|legacy|2026-07-28 KIND stdio|http|sse TARGET...

``--mode`` is the ``Client``'s own (default ``auto``: probe ``server/discover``, fall back
to ``initialize``). Over SSE the SDK's ``sse_client`` is handed to the same ``Client``.
See common.py for the output.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import Observer, Target, main

warnings.simplefilter("ignore")  # deprecations (logging, SEP-2577) are not observations


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


def transport(target: Target) -> Any:
    if target.transport == "stdio":
        from mcp.client.stdio import StdioServerParameters

        command, *args = target.where
        return StdioServerParameters(command=command, args=args)
    if target.transport == "sse":
        from mcp.client.sse import sse_client

        return sse_client(target.url)
    return target.url


async def session(target: Target, obs: Observer) -> None:
    from mcp import Client
    from mcp import types as t

    spec, answers = target.spec, target.answers

    async def on_sampling(_ctx: Any, params: t.CreateMessageRequestParams) -> Any:
        obs.callbacks.append({"kind": "sampling", "params": dump(params)})
        return t.CreateMessageResult.model_validate(answers["sampling"])

    async def on_elicitation(_ctx: Any, params: Any) -> Any:
        obs.callbacks.append({"kind": "elicitation", "params": dump(params)})
        return t.ElicitResult.model_validate(spec["elicitation_answer"])

    async def on_roots(_ctx: Any) -> Any:
        obs.callbacks.append({"kind": "roots"})
        return t.ListRootsResult.model_validate({"roots": answers["roots"]})

    async def on_log(params: t.LoggingMessageNotificationParams) -> None:
        obs.logs.append(dump(params))

    client = Client(
        transport(target),
        mode=target.mode or "auto",
        sampling_callback=on_sampling,
        elicitation_callback=on_elicitation,
        list_roots_callback=on_roots,
        logging_callback=on_log,
        log_level=spec["log_level"],
        cache=None,  # every call reaches the server (or the replay): nothing is served locally
    )
    async with client:
        obs.connected = True
        obs.out["protocol"] = client.protocol_version
        info = client.server_info
        obs.out["server"] = None if info is None else {"name": info.name, "version": info.version}
        await run_script(client, target, obs)


async def run_script(client: Any, target: Target, obs: Observer) -> None:
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
    await obs.step("echo", lambda: dumped(client.call_tool(echo["name"], echo["arguments"])))
    slow = spec["progress"]
    await obs.step(
        "progress",
        lambda: dumped(
            client.call_tool(slow["name"], slow["arguments"], progress_callback=on_progress)
        ),
    )
    obs.out["progress_updates"] = progress
    await obs.step("prompt", lambda: dumped(client.get_prompt(spec["prompt"]["name"])))
    args = spec["prompt_args"]
    await obs.step(
        "prompt_args", lambda: dumped(client.get_prompt(args["name"], args["arguments"]))
    )
    await obs.step("read", lambda: dumped(client.read_resource(spec["resource"])))
    for step in [k for k in ("sampling", "elicitation", "roots", "gated") if k in spec]:
        call = spec[step]
        await obs.step(
            step, lambda call=call: dumped(client.call_tool(call["name"], call["arguments"]))
        )


async def dumped(awaitable: Any) -> Any:
    return dump(await awaitable)


if __name__ == "__main__":
    sys.exit(main(session))
