"""What a recording through mcp-remote holds, reproduced with real SDK clients.

mcp-remote (the npm stdio-to-HTTP bridge) first tests the connection with a client of its
own, in its own HTTP session: a legacy ``initialize`` (``mcp-remote-fallback-test``, no
capabilities) and nothing else. Then it forwards its local client's messages verbatim; a
dual-era local client (the Python SDK 2 default) sends ``server/discover`` and holds a
2026-07-28 session. Recorded through ``cassette record --upstream``, the connection test
is the first successful exchange; the recorder decides the era by the session that did the
work (2026-07-28), and keeps the connection test as the server's answer to a legacy client
(the legacy probe), so a replay serves the same sequence as the live server did.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from cassette.store.storage import Cassette
from tests.e2e.test_http_sdk import http_replay, recording_proxy
from tests.helpers.support import MODERN_SERVER, python_server, run

pytestmark = pytest.mark.e2e


async def _through_mcp_remote(url: str) -> tuple[str, str, Any]:
    """mcp-remote's connection test, then its local client's session: the protocol
    version each got, and the local client's tool result."""
    from mcp import Client

    async with Client(url, mode="legacy") as tested:  # type: ignore[arg-type]
        tested_version = str(tested.protocol_version)
    async with Client(url) as local:  # type: ignore[arg-type]
        result = await local.call_tool("add", {"a": 2, "b": 3})
        return tested_version, str(local.protocol_version), result.structured_content


def test_a_session_recorded_through_mcp_remote_keeps_its_clients_era(tmp_path: Path) -> None:
    tape = tmp_path / "remote.jsonl"
    server, port = python_server(MODERN_SERVER)
    with server:
        upstream = f"http://127.0.0.1:{port}/mcp"
        live = run(lambda: _through_mcp_remote(upstream))
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            recorded = run(lambda: _through_mcp_remote(url))
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert recorded == live
    assert live[:2] == ("2025-11-25", "2026-07-28")
    cassette = Cassette.load(tape)
    # the session that did the work decides the era; the connection test is the server's
    # answer to a legacy client, kept as the legacy probe (and the recorder sends none)
    assert cassette.header.era == "modern"
    probes = [e for e in cassette.events if (getattr(e, "meta", None) or {}).get("variant")]
    assert {e.meta["variant"] for e in probes} == {"legacy-probe"}
    assert probes[0].message["method"] == "initialize"
    assert probes[0].message["params"]["clientInfo"] == {"name": "mcp", "version": "0.1.0"}
    front, url = http_replay(tape)
    with front:
        replayed = run(lambda: _through_mcp_remote(url))
        front.stop()
    assert replayed == live
