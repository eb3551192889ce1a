"""A modern cassette serves a legacy client, over stdio and streamable HTTP.

Recorded with the SDK 2 default client (``auto``: it discovers, so the session and the
cassette are 2026-07-28) against a dual-era server whose discovery lists the legacy
revisions it accepts (``tests/servers/dual_era_server.py``). The replay answers a legacy
client's ``initialize`` from that recorded discovery and strips the 2026-07-28-only
members from what follows: the SDK 2 client in ``mode="legacy"`` must observe on replay
what it observes against the live server. Before, it got "initialize was never recorded"
over stdio and a misleading 400 about an ``Mcp-Method`` header over HTTP.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import (
    OFFLINE_ENV,
    PY,
    ROOT,
    Background,
    dump,
    record_command,
    recording_over_http,
    replay_command,
    run,
    stdio_params,
    until_probed,
)

pytestmark = pytest.mark.e2e

DUAL_ERA = ROOT / "tests" / "servers" / "dual_era_server.py"
URL = r"(http://\S+)"


async def session(target: Any, mode: str, *, probed: Path | None = None) -> dict[str, Any]:
    """What a client observes: the version it settled on, and what its calls returned.
    ``probed``: the cassette being recorded, whose legacy probe the session stays open
    for (``tests.helpers.support.until_probed``)."""
    from mcp import Client

    async with Client(target, mode=mode) as client:  # type: ignore[arg-type]
        out = {
            "protocol": client.protocol_version,
            "tools": sorted(t.name for t in (await client.list_tools()).tools),
            "add": dump(await client.call_tool("add", {"a": 40, "b": 2})),
            "read": dump(await client.read_resource("memo://greeting")),
            "prompt": dump(await client.get_prompt("review", {"code": "y = 2"})),
        }
        if probed is not None:
            await until_probed(probed)
        return out


def _era(tape: Path) -> str:
    return str(json.loads(tape.read_text().splitlines()[0])["era"])


def test_legacy_client_replays_a_modern_stdio_cassette(tmp_path: Path) -> None:
    tape = tmp_path / "modern.jsonl"
    server = [PY, str(DUAL_ERA)]
    recorded = run(lambda: session(stdio_params(record_command(tape, server)), "auto"))
    assert recorded["protocol"] == "2026-07-28"
    assert _era(tape) == "modern"
    live = run(lambda: session(stdio_params(server), "legacy"))
    assert live["protocol"] != "2026-07-28"
    replay = stdio_params(replay_command(tape), env=OFFLINE_ENV)
    assert run(lambda: session(replay, "legacy")) == live
    assert run(lambda: session(replay, "auto")) == recorded  # its own client still is served


def test_legacy_client_replays_a_modern_http_cassette(tmp_path: Path) -> None:
    tape = tmp_path / "modern-http.jsonl"
    with recording_over_http(DUAL_ERA, tape) as (upstream, proxy_url, proxy):
        recorded = run(lambda: session(proxy_url, "auto"))
        assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        live = run(lambda: session(upstream, "legacy"))
    assert recorded["protocol"] == "2026-07-28"
    assert _era(tape) == "modern"
    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    with front:
        url = front.wait_for(r"serving on " + URL).group(1)
        assert run(lambda: session(url, "legacy")) == live
        assert run(lambda: session(url, "auto")) == recorded
        assert front.stop() == 0, front.output()
