"""Browser clients on every HTTP front: the preflight live server-everything answers, the
recording proxy, the replay and the mock answer too, for this machine's pages and those
``--allow-origin`` names; a page from anywhere else still gets 403."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import pytest

from tests.e2e.test_http_sdk import start_everything_http
from tests.helpers.http_probes import INIT, JSON
from tests.helpers.support import OFFLINE_ENV, PY, Background, replay_command

pytestmark = pytest.mark.e2e

LOCAL = "http://localhost:6274"  # the MCP Inspector's page
APP = "https://app.example.com"
ASKED = "content-type,mcp-session-id,mcp-protocol-version"


def preflight(url: str, origin: str) -> httpx.Response:
    headers = {
        "origin": origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": ASKED,
    }
    return httpx.options(url, headers=headers, timeout=20)


def check_browser_access(url: str, *, may_post: bool = True) -> None:
    """What a front must answer pages: its own machine's and APP yes, others 403."""
    for origin in (LOCAL, APP):
        answer = preflight(url, origin)
        assert answer.status_code == 204, (origin, answer.text)
        assert answer.headers["access-control-allow-origin"] == origin
        assert "POST" in answer.headers["access-control-allow-methods"]
        assert answer.headers["access-control-allow-headers"] == ASKED
    assert preflight(url, "https://evil.example").status_code == 403
    if may_post:
        opened = httpx.post(url, json=INIT, headers={**JSON, "origin": APP}, timeout=20)
        assert opened.status_code == 200
        assert opened.headers.get_list("access-control-allow-origin") == [APP]
        assert "mcp-session-id" in opened.headers["access-control-expose-headers"]


def test_preflights_live_through_the_proxy_on_replay_and_from_a_mock(tmp_path: Path) -> None:
    tape = tmp_path / "browser.jsonl"
    server, upstream = start_everything_http()
    with server:
        live = preflight(upstream, LOCAL)
        assert live.status_code == 204  # server-everything lets any page in
        assert live.headers["access-control-allow-origin"] == "*"
        assert "POST" in live.headers["access-control-allow-methods"]
        assert live.headers["access-control-allow-headers"] == ASKED
        command = [PY, "-m", "cassette", "record", "-o", str(tape), "--upstream", upstream]
        with Background([*command, "--port", "0", "--allow-origin", APP]) as proxy:
            url = proxy.wait_for(r"point your client at (http://\S+)").group(1)
            check_browser_access(url)  # the upstream's "*" is replaced by the page's origin
            assert proxy.stop() == 0, proxy.output()

    replay = [*replay_command(tape), "--front", "http", "--port", "0", "--allow-origin", APP]
    with Background(replay, env=OFFLINE_ENV) as front:
        check_browser_access(front.wait_for(r"serving on (http://\S+)").group(1))
        front.stop()

    manifest = tmp_path / "mock.json"
    manifest.write_text(json.dumps({"manifest": 1, "server": {"name": "m", "version": "1"}}))
    mock = [PY, "-m", "cassette", "mock", str(manifest), "-q", "--front", "sse", "--port", "0"]
    with Background([*mock, "--allow-origin", APP], env=OFFLINE_ENV) as front:
        url = front.wait_for(r"serving on (http://\S+)").group(1)
        check_browser_access(url, may_post=False)  # the event stream's URL
        front.stop(signal.SIGINT)
