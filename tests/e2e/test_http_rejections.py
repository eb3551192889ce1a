"""Legacy streamable HTTP: what the server refused for want of a session stays refused.

Recorded against server-everything: a ``tools/list`` sent before any session (refused,
400) and a GET without a session (refused, with an error body), then a proper session
that lists the tools. On replay, the refusal used to answer the valid in-session
``tools/list`` (status included: a 400 for a good request), and the refused GET's error
body came out on the session's GET stream. Now a refusal answers only a request refused
the same way, and a refused GET's body belongs to no exchange.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.test_http_sdk import URL, recording_proxy, start_everything_http
from tests.helpers.support import OFFLINE_ENV, Background, replay_command

pytestmark = pytest.mark.e2e

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def _json(response: httpx.Response) -> Any:
    """A JSON body, or the last ``data:`` of an SSE body."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads([d for d in data if d][-1])
    return response.json()


def session(url: str, *, refused_first: bool) -> dict[str, Any]:
    """Raw HTTP: optionally the refused requests first, then a session that lists tools and
    opens its GET stream for a moment."""
    out: dict[str, Any] = {}
    with httpx.Client(timeout=20) as client:
        if refused_first:
            out["sessionless list"] = client.post(url, json=LIST, headers=HEADERS).status_code
            sse = {"accept": "text/event-stream"}
            out["sessionless GET"] = client.get(url, headers=sse).status_code
        init = client.post(url, json=INIT, headers=HEADERS)
        sid = init.headers["mcp-session-id"]
        inside = {**HEADERS, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        client.post(url, json=note, headers=inside)
        listed = client.post(url, json=LIST, headers=inside)
        out["list"] = (listed.status_code, "tools" in _json(listed).get("result", {}))
        client.delete(url, headers=inside)
    return out


def test_refusals_answer_only_what_is_refused_the_same_way(tmp_path: Path) -> None:
    tape = tmp_path / "refused.jsonl"
    server, upstream = start_everything_http()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            live = session(url, refused_first=True)
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert live == {"sessionless list": 400, "sessionless GET": 400, "list": (200, True)}
    front = Background([*replay_command(tape), "--front", "http", "--port", "0"], env=OFFLINE_ENV)
    with front:
        front_url = front.wait_for(r"serving on " + URL).group(1)
        # a client that never sends the refused requests gets a good answer to its good one
        assert session(front_url, refused_first=False) == {"list": (200, True)}
        assert session(front_url, refused_first=True) == live
        assert front.stop() == 0, front.output()
