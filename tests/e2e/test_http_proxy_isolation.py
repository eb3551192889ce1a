"""Nothing the recording proxy touches is anyone else's: real clients, a real upstream.

The upstream is tests/servers/visitor_server.py (streamable HTTP on loopback), which says
what the proxy sent it. What must hold:

* each client session reaches the upstream with exactly the ``Cookie`` header its client
  sent: the proxy keeps no jar, so a client that keeps no cookies sends none, and one
  session's affinity cookie never rides on another's request;
* the proxy serves RFC 9728 protected resource metadata only when it comes from the
  upstream's own origin and its ``resource`` names the upstream: a challenge pointing to
  another origin is never followed (that origin gets no request), and metadata naming a
  foreign resource is not served.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from http.cookiejar import CookieJar, DefaultCookiePolicy
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.support import PY, Background, listening, recording_over_http, run

pytestmark = pytest.mark.e2e
SERVER = Path(__file__).resolve().parent.parent / "servers" / "visitor_server.py"
WELL_KNOWN = "/.well-known/oauth-protected-resource"


async def said(client: Any) -> str:
    answer = await client.call_tool("cookie", {})
    return str(answer.content[0].text)


def test_each_client_session_reaches_the_upstream_with_its_own_cookies_only(
    tmp_path: Path,
) -> None:
    async def sessions(url: str) -> list[str]:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        refuse_all = DefaultCookiePolicy(allowed_domains=[])  # a client that keeps none
        out = []
        async with Client(url) as keeper:  # the SDK's client keeps the cookie it is set
            out.append(await said(keeper))
            async with (
                httpx2.AsyncClient(cookies=CookieJar(refuse_all), timeout=20) as http,
                Client(streamable_http_client(url, http_client=http)) as forgetful,
            ):
                out.append(await said(forgetful))
            async with Client(url) as other:
                out.append(await said(other))
            out.append(await said(keeper))
        return out

    with recording_over_http(SERVER, tmp_path / "t.jsonl", "--no-probe") as (_, url, proxy):
        heard = run(lambda: sessions(url))
        proxy.stop()
    assert heard == [
        "visitor=v1 | initialize: none",
        "none | initialize: none",  # it sent none: the proxy added none (v1 or its own v2)
        "visitor=v3 | initialize: none",
        "visitor=v1 | initialize: none",
    ]


@contextmanager
def proxied(tmp_path: Path, mode: str, other: str | None = None) -> Iterator[tuple[str, str]]:
    """The visitor server with ``--auth mode`` and the recording proxy before it: the
    upstream's URL and the proxy's."""
    argv = [PY, str(SERVER), "http", "0", "--auth", mode, *([other] if other else [])]
    with Background(argv) as server:
        port = listening(server)
        upstream = f"http://127.0.0.1:{port}/mcp"
        record = [PY, "-m", "cassette", "record", "-o", str(tmp_path / f"{mode}.jsonl")]
        with Background([*record, "--upstream", upstream, "--port", "0"]) as proxy:
            url = proxy.wait_for(r"point your client at (http://\S+)").group(1)
            yield upstream, url
            proxy.stop()


async def discover(url: str) -> tuple[int, str, int, Any]:
    """What a client's OAuth discovery meets: the 401 of its first request, then the
    proxy's metadata (the suffixed well-known URL, as RFC 9728 has it)."""
    import httpx2

    async with httpx2.AsyncClient(timeout=20) as http:
        first = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
            headers={"accept": "application/json, text/event-stream"},
        )
        origin = url.rsplit("/mcp", 1)[0]
        metadata = await http.get(f"{origin}{WELL_KNOWN}/mcp")
        body = metadata.json() if metadata.status_code == 200 else None
        return (
            first.status_code,
            first.headers.get("www-authenticate", ""),
            metadata.status_code,
            body,
        )


def test_metadata_whose_resource_names_the_upstream_is_served_as_the_proxys(
    tmp_path: Path,
) -> None:
    for mode in ("own", "parent"):
        with proxied(tmp_path, mode) as (_upstream, url):
            status, challenge, served, body = run(lambda url=url: discover(url))
        assert status == 401
        assert f'resource_metadata="{url.rsplit("/mcp", 1)[0]}{WELL_KNOWN}/mcp"' in challenge
        assert served == 200, mode
        assert body["resource"] == url  # the proxy presents itself as the resource
        assert body["authorization_servers"] == ["http://127.0.0.1:9/"]


def test_metadata_naming_a_foreign_resource_is_not_served(tmp_path: Path) -> None:
    with proxied(tmp_path, "foreign", "https://elsewhere.example/mcp") as (_upstream, url):
        status, _challenge, served, body = run(lambda: discover(url))
    assert status == 401
    assert served == 404
    assert body is None


class Lure:
    """Another origin, on a port of its own: it serves protected resource metadata naming
    whatever ``resource`` says (the upstream, once it is known) at every path, and notes
    each path it is asked for. In this process, so its port is known before the upstream
    that names it starts, and the upstream's URL after."""

    def __init__(self) -> None:
        import http.server
        import threading

        self.resource = ""
        self.fetched: list[str] = []
        lure = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                lure.fetched.append(self.path)
                body = json.dumps({"resource": lure.resource}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                """Quiet: what it was asked is in ``fetched``."""

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Lure:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_challenge_naming_another_origin_is_never_followed(tmp_path: Path) -> None:
    with Lure() as lure:
        lure_url = f"http://127.0.0.1:{lure.port}{WELL_KNOWN}"
        with proxied(tmp_path, "elsewhere", lure_url) as (upstream, url):
            lure.resource = upstream  # metadata naming the upstream, on another origin
            status, challenge, served, body = run(lambda: discover(url))
    assert status == 401
    assert lure_url not in challenge  # the client is pointed at the proxy's own metadata
    assert served == 404
    assert body is None
    assert lure.fetched == []
