"""The HTTP fronts refuse what the live servers refuse, status by status, in both eras.

Each test sends the raw probes of ``tests.helpers.http_probes`` (malformed and edge requests) to a
live server, records a valid session from it through ``cassette record --upstream``, and
sends the same probes to ``cassette replay`` of that recording. Every outcome (status, and
the JSON-RPC error code when there is one) must be the live one, except the differences
listed here, each the specification's answer where the reference server departs from it
(docs/transports.md has the table and the reasons).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_http_sdk import http_replay, recording_proxy, start_everything_http
from tests.helpers import http_probes
from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    Background,
    everything_server,
    python_server,
    replay_command,
)

pytestmark = pytest.mark.e2e

GONE = ((400, -32000), (404, -32001))  # server-everything's router answers 400; the spec 404
LEGACY_DIFFERENCES = {
    "POST with an unknown session id": GONE,
    "GET with an unknown session id": GONE,
    "DELETE with an unknown session id": GONE,
    "POST after DELETE": GONE,
    "GET after DELETE": GONE,
    "PUT": ((404, None), (405, -32000)),  # an express route 404, the SDK transport 405
    "POST from a foreign Origin": ((200, None), (403, -32600)),  # it has no Origin check
}
MODERN_DIFFERENCES = {
    # the SDK routes a request without the header to its legacy, session path
    "POST without MCP-Protocol-Version": ((400, -32600), (400, -32020)),
    "OPTIONS preflight from http://localhost:6274": ((405, -32600), (204, None)),  # no CORS
    "POST from a foreign Origin": ((403, None), (403, -32600)),  # a plain-text 403 body
}
SSE_DIFFERENCES = {
    "GET the POST endpoint": ((404, None), (405, None)),
    "POST to the stream path": ((404, None), (405, None)),
    "POST from a foreign Origin": ((202, None), (403, None)),
}


def differences(live: dict[str, Any], replayed: dict[str, Any]) -> dict[str, Any]:
    assert list(live) == list(replayed)
    return {name: (live[name], replayed[name]) for name in live if live[name] != replayed[name]}


def test_streamable_http_legacy_era_answers_as_server_everything(tmp_path: Path) -> None:
    tape = tmp_path / "legacy.jsonl"
    server, upstream = start_everything_http()
    with server:
        live = http_probes.run(http_probes.LEGACY, upstream)
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            http_probes.record_legacy(url)
            assert proxy.stop() == 0, proxy.output()
    front, url = http_replay(tape)
    with front:
        replayed = http_probes.run(http_probes.LEGACY, url)
        front.stop()
    assert live["POST with MCP-Protocol-Version: 1999-01-01"] == (400, -32000)
    assert live["POST with Accept: application/json"] == (406, -32000)
    assert live["POST with Content-Type: text/plain"] == (415, -32000)
    assert differences(live, replayed) == LEGACY_DIFFERENCES


def test_streamable_http_modern_era_answers_as_the_python_sdk(tmp_path: Path) -> None:
    tape = tmp_path / "modern.jsonl"
    server, port = python_server(MODERN_SERVER)
    with server:
        upstream = f"http://127.0.0.1:{port}/mcp"
        live = http_probes.run(http_probes.MODERN, upstream)
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            http_probes.record_modern(url)
            assert proxy.stop() == 0, proxy.output()
    front, url = http_replay(tape)
    with front:
        replayed = http_probes.run(http_probes.MODERN, url)
        front.stop()
    unsupported = "POST with an unsupported version (header and envelope)"
    assert live[unsupported] == replayed[unsupported] == (400, -32022)
    assert replayed["POST a batch of two requests"] == replayed["POST a request with id: null"]
    assert replayed["POST a request with id: null"] == (400, -32600)
    assert differences(live, replayed) == MODERN_DIFFERENCES


def test_legacy_sse_answers_as_server_everything(tmp_path: Path) -> None:
    tape = tmp_path / "sse.jsonl"
    everything, port = everything_server("sse")
    with everything:
        upstream = f"http://127.0.0.1:{port}/sse"
        # server-everything never answers a POST for a session it does not have: not probed
        live = http_probes.run_sse(upstream, skip=http_probes.SSE_UNANSWERED)
        record = [PY, "-m", "cassette", "record", "-o", str(tape), "--transport", "sse"]
        proxy = Background([*record, "--upstream", upstream, "--port", "0"])
        with proxy:
            url = proxy.wait_for(r"point your client at (http://\S+)").group(1)
            http_probes.record_sse(url)
            assert proxy.stop() == 0, proxy.output()
    front = Background([*replay_command(tape), "--front", "sse", "--port", "0"], env=OFFLINE_ENV)
    with front:
        url = front.wait_for(r"serving on (http://\S+)").group(1)
        replayed = http_probes.run_sse(url)
        front.stop()
    assert {name: replayed.pop(name) for name in sorted(http_probes.SSE_UNANSWERED)} == {
        "POST after the stream closed": (404, None),
        "POST with an unknown sessionId": (404, None),
        "POST without a sessionId": (400, None),
    }
    assert live["POST with Content-Type: text/plain"] == (400, None)
    assert differences(live, replayed) == SSE_DIFFERENCES
