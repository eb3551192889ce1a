"""A 2026-07-28 recording of a fastmcp server, replayed to a legacy client: fastmcp cannot
ask a 2026-07-28 client anything, so the recording holds its refusal of the sampling tool,
where the live server asks a legacy client with ``sampling/createMessage`` and succeeds.
Tool calls are never run again at record time; the replay serves the recorded refusal
and announces it: once in its log, and in the error it answers, naming the tool and
``cassette variant TAPE --as legacy`` (cassette/core/eras/legacy_calls.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cassette.core.eras.legacy_calls import announcement
from tests.helpers.support import PY, ROOT, record_command, replay_command, run, stdio_params

pytestmark = pytest.mark.e2e

FASTMCP = [PY, str(ROOT / "tests" / "servers" / "fastmcp_server.py")]


async def write_twice(target: Any, mode: str) -> list[Any]:
    """The sampling tool called twice by the Python SDK 2 client in ``mode``, with a
    sampling callback (so a live legacy session is asked, and answers)."""
    from mcp import Client
    from mcp import types as t

    async def sample(_ctx: Any, _params: Any) -> Any:
        return t.CreateMessageResult(
            role="assistant", content=t.TextContent(type="text", text="a haiku"), model="m"
        )

    out = []
    async with Client(target, mode=mode, sampling_callback=sample) as client:
        for _ in range(2):
            result = await client.call_tool("write", {"topic": "tapes"})
            out.append((result.is_error, [c.text for c in result.content]))  # type: ignore[union-attr]
    return out


def test_a_legacy_client_is_told_the_tools_legacy_behaviour_was_not_recorded(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "fastmcp.jsonl"
    recorded = run(lambda: write_twice(stdio_params(record_command(tape, FASTMCP)), "auto"))
    assert all(is_error for is_error, _ in recorded)  # fastmcp refused the modern client
    live = run(lambda: write_twice(stdio_params(FASTMCP), "legacy"))
    assert live == [(False, ["m wrote: a haiku"])] * 2  # a legacy client is asked, live

    log = tmp_path / "replay.log"
    replay = stdio_params(replay_command(tape, "--log", str(log)))
    served = run(lambda: write_twice(replay, "legacy"))
    said = f"cassette-mcp: {announcement('write')}"
    for (is_error, texts), (_, refused) in zip(served, recorded, strict=True):
        assert is_error
        assert texts == [*refused, said]  # the recorded refusal, and what it cannot show
    assert "cassette variant TAPE --as legacy records it" in said
    warned = [line for line in log.read_text("utf-8").splitlines() if "warning:" in line]
    told = [line for line in warned if announcement("write") in line]
    assert len(told) == 1, warned  # once in the log, however often the tool is called
