"""A 2026-07-28 listen stream gets a change event when the call that caused it replays.

Live, ``tools/call touch`` makes the modern test server announce a tool-list change on
every open ``subscriptions/listen`` stream. The replay used to send that event the
moment the listen opened, before the call (over HTTP, where it travelled on the listen's
stream); now it is sent with the call that caused it, on the live listen stream, tagged
with the live listen's id. The client observes, in order: the call's result, then the
event (the event arrives while the client waits for it after the call).
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    Background,
    record_command,
    recording_over_http,
    replay_command,
    run,
    stdio_params,
)

pytestmark = pytest.mark.e2e
URL = r"(http://\S+)"


async def listen_then_touch(target: Any) -> list[str]:
    """Open a listen stream, record whether an event came before the call, call touch,
    then wait for the event the call causes."""
    from mcp import Client

    seen: list[str] = []
    async with Client(target) as client, client.listen(tools_list_changed=True) as sub:
        events = sub.__aiter__()
        with anyio.move_on_after(0.5):  # an event that came too early shows up here
            seen.append(f"early {type(await events.__anext__()).__name__}")
        result = await client.call_tool("touch", {})
        seen.append(f"touch {result.structured_content or result.content[0].text}")  # type: ignore[union-attr]
        with anyio.fail_after(10):
            seen.append(f"event {type(await events.__anext__()).__name__}")
    return seen


def test_listen_events_follow_their_cause_over_http(tmp_path: Path) -> None:
    tape = tmp_path / "listen.jsonl"
    with recording_over_http(MODERN_SERVER, tape) as (_, url, proxy):
        live = run(lambda: listen_then_touch(url))
        assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert live[0].startswith("touch")  # no event before the call, live
    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    with front:
        url = front.wait_for(r"serving on " + URL).group(1)
        assert run(lambda: listen_then_touch(url)) == live


def test_listen_events_follow_their_cause_over_stdio(tmp_path: Path) -> None:
    tape = tmp_path / "listen-stdio.jsonl"
    live = run(
        lambda: listen_then_touch(stdio_params(record_command(tape, [PY, str(MODERN_SERVER)])))
    )
    assert live[0].startswith("touch")
    replay = stdio_params(replay_command(tape), env=OFFLINE_ENV)
    assert run(lambda: listen_then_touch(replay)) == live
