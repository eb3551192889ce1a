"""Recording authenticated servers over streamable HTTP, with real counterparts.

Servers are built with the official SDK's auth support (tests/servers/auth_server.py):
one takes a bearer token; one is a protected resource behind its own local authorization
server (OAuth 2.1, dynamic registration, PKCE). Clients are the SDK's: a plain one that
sends no credentials, and one with the SDK's OAuth client provider. What must hold:

* a token given with ``--header`` from the environment reaches the server, the cassette
  keeps the header's name and never its value, and the replay needs no credentials;
* the authorization flow completes through the recording proxy (the proxy presents
  itself as the protected resource), nothing of it (token, code, client secret) is in
  any byte written or line printed, and the replay answers the same client without it;
* ``replay --require-auth`` asks for a token as a protected resource would.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from cassette import Cassette
from tests.helpers.support import (
    LISTENING,
    OFFLINE_ENV,
    PY,
    Background,
    listening,
    replay_command,
    run,
    scaled,
)

pytestmark = pytest.mark.e2e
SERVER = Path(__file__).resolve().parent.parent / "servers" / "auth_server.py"
URL = r"(http://127\.0\.0\.1:\d+/mcp)"
#: a realistic-looking, fake personal access token
TOKEN = "ghp_Zq8vKx2LmN4pRt6wYb1cDf3gHj5kMn7sQv9X"


def start_bearer_server() -> tuple[Background, str]:
    server = Background([PY, str(SERVER), "bearer", "0"], env={"FIXTURE_BEARER_TOKEN": TOKEN})
    port = listening(server)
    return server, f"http://127.0.0.1:{port}/mcp"


def start_oauth_server() -> tuple[Background, str, str]:
    server = Background([PY, str(SERVER), "oauth", "0", "0"])
    ready = server.wait_for(rf"auth fixture ready: {LISTENING} {LISTENING}")
    as_port, port = ready.group(1, 2)
    return server, f"http://127.0.0.1:{as_port}/", f"http://127.0.0.1:{port}/mcp"


def recording_proxy(
    tape: Path, upstream: str, *extra: str, env: dict[str, str] | None = None
) -> tuple[Background, str]:
    argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--upstream", upstream]
    proxy = Background([*argv, "--port", "0", *extra], env=env)
    return proxy, proxy.wait_for(r"point your client at " + URL).group(1)


def http_replay(tape: Path, *extra: str) -> tuple[Background, str]:
    front = Background(
        [*replay_command(tape), "--front", "http", "--port", "0", *extra], env=OFFLINE_ENV
    )
    return front, front.wait_for(r"serving on " + URL).group(1)


async def plain_session(url: str) -> list[str]:
    """A client that sends no credentials: two tool calls."""
    from mcp import Client

    async with Client(url) as client:
        return await _calls(client)


async def _calls(client: Any) -> list[str]:
    echoed = await client.call_tool("echo", {"message": "hi"})
    who = await client.call_tool("whoami", {})
    return [echoed.content[0].text, who.content[0].text]


class Store:
    """The OAuth client's token storage, kept so the test knows what must never leak."""

    def __init__(self) -> None:
        self.tokens: Any = None
        self.client: Any = None

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client_info: Any) -> None:
        self.client = client_info


async def oauth_session(url: str, store: Store, codes: list[str]) -> list[str]:
    """The SDK's OAuth client provider logs in (a user who approves at once: the
    authorization server's redirect is followed by hand), then makes the same calls."""
    import httpx2
    from mcp import Client
    from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import OAuthClientMetadata

    redirect: dict[str, str | None] = {}

    async def approve(authorization_url: str) -> None:
        async with httpx2.AsyncClient(timeout=10) as http:
            answer = await http.get(authorization_url)
        assert answer.status_code == 302, answer.text
        query = parse_qs(urlsplit(answer.headers["location"]).query)
        redirect["code"] = query["code"][0]
        redirect["state"] = query.get("state", [None])[0]
        codes.append(query["code"][0])

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=str(redirect["code"]), state=redirect["state"])

    metadata = OAuthClientMetadata(
        client_name="cassette-auth-test",
        redirect_uris=["http://127.0.0.1:9/callback"],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method="client_secret_post",
    )
    provider = OAuthClientProvider(url, metadata, store, approve, callback)
    async with (
        httpx2.AsyncClient(auth=provider, timeout=20) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await _calls(client)


def written_bytes(folder: Path) -> str:
    """Every file under ``folder``, as text (a cassette, a set-aside session, a lock)."""
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file()
    )


@pytest.mark.parametrize("variable", ["GITHUB_TOKEN", "UPSTREAM_BEARER"])
def test_a_bearer_token_from_the_environment_is_sent_and_never_recorded(
    tmp_path: Path, variable: str
) -> None:
    """``UPSTREAM_BEARER`` is not a secret-looking name: its value is redacted because the
    header took it, not because of its name."""
    tape = tmp_path / "bearer.jsonl"
    server, upstream = start_bearer_server()
    with server:
        header = f"Authorization: Bearer ${{{variable}}}"
        proxy, url = recording_proxy(tape, upstream, "--header", header, env={variable: TOKEN})
        with proxy:
            live = run(lambda: plain_session(url), timeout=30)
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert live[0] == "Echo: hi"
    assert live[1] == f"called with {TOKEN}"  # the client got what the server said
    raw = tape.read_text()
    assert TOKEN not in raw
    assert TOKEN not in proxy.output()
    assert TOKEN not in written_bytes(tmp_path)
    cassette = Cassette.load(tape)
    assert cassette.header.target == {"url": upstream, "headers": ["Authorization"]}

    front, replay_url = http_replay(tape)
    with front:
        replayed = run(lambda: plain_session(replay_url), timeout=30)
    assert replayed[0] == "Echo: hi"
    assert replayed[1].startswith("called with [REDACTED")


def test_an_unset_variable_is_refused_before_anything_is_recorded(tmp_path: Path) -> None:
    import subprocess

    tape = tmp_path / "never.jsonl"
    argv = [PY, "-m", "cassette", "record", "-o", str(tape), "--upstream"]
    argv += ["http://127.0.0.1:9/mcp", "--header", "Authorization: Bearer ${NOT_SET_ANYWHERE}"]
    done = subprocess.run(argv, capture_output=True, timeout=scaled(30), check=False)
    assert done.returncode == 2
    lines = done.stderr.decode().strip().splitlines()
    assert lines == [
        "cassette: error: --header Authorization: ${NOT_SET_ANYWHERE} is not set in the environment"
    ]
    assert list(tmp_path.iterdir()) == []


def test_a_refused_token_is_one_line_naming_the_header(tmp_path: Path) -> None:
    tape = tmp_path / "refused.jsonl"
    server, upstream = start_bearer_server()
    wrong = "ghp_Wr0ngWr0ngWr0ngWr0ngWr0ngWr0ngWr0ng1"
    with server:
        header = "Authorization: Bearer ${UPSTREAM_BEARER}"
        proxy, url = recording_proxy(
            tape, upstream, "--header", header, env={"UPSTREAM_BEARER": wrong}
        )
        with proxy:
            with pytest.raises(Exception):  # noqa: B017, PT011 (the SDK's own error types)
                run(lambda: plain_session(url), timeout=30)
            proxy.wait_for("refused the credentials in Authorization")
            proxy.stop(signal.SIGINT)
    told = [line for line in proxy.lines if "401" in line]
    assert len(told) == 1, proxy.output()
    assert "Traceback" not in proxy.output()
    assert wrong not in proxy.output()
    assert wrong not in written_bytes(tmp_path)


def test_the_oauth_flow_goes_through_the_proxy_and_the_replay_needs_none(tmp_path: Path) -> None:
    tape = tmp_path / "oauth.jsonl"
    import httpx

    store, codes = Store(), []
    server, issuer, upstream = start_oauth_server()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            live = run(lambda: oauth_session(url, store, codes), timeout=30)
            # the proxy is the protected resource the client saw, at the upstream's server
            well_known = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
            metadata = httpx.get(well_known, timeout=10).json()
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
    assert metadata["resource"] == url
    assert metadata["authorization_servers"] == [issuer]
    token = store.tokens.access_token
    assert live == ["Echo: hi", f"called with {token}"]
    assert codes
    assert store.client is not None
    secrets = [token, *codes, store.client.client_id, store.client.client_secret]
    assert all(secrets)
    written, printed = written_bytes(tmp_path), proxy.output()
    for secret in secrets:
        assert secret not in written
        assert secret not in printed
    assert "asks for credentials (HTTP 401)" in printed  # the first 401, said once
    cassette = Cassette.load(tape)
    assert cassette.header.target == {"url": upstream}
    methods = [m.get("method") for m in cassette.messages("c2s")]
    assert "tools/call" in methods
    # the request refused before the login is kept as a status only: no body, no header
    assert [e.status for e in cassette.events if getattr(e, "status", None) == 401]

    front, replay_url = http_replay(tape)
    again = Store()
    with front:  # the same client: never asked to log in
        replayed = run(lambda: oauth_session(replay_url, again, []), timeout=30)
    assert again.tokens is None
    assert replayed[0] == "Echo: hi"
    assert replayed[1].startswith("called with [REDACTED")
    assert token not in front.output()
    front, replay_url = http_replay(tape)
    with front:  # a client with no credentials at all
        replayed = run(lambda: plain_session(replay_url), timeout=30)
    assert replayed[0] == "Echo: hi"


def test_replay_can_require_a_token_and_send_the_client_to_log_in(tmp_path: Path) -> None:
    """With ``--require-auth`` the replay front is a protected resource: the SDK's OAuth
    client is refused, reads the front's metadata, logs in at the authorization server it
    names (a local one here), and is served once it sends a token."""
    import httpx

    tape = tmp_path / "oauth.jsonl"
    server, issuer, upstream = start_oauth_server()
    with server:
        proxy, url = recording_proxy(tape, upstream)
        with proxy:
            run(lambda: oauth_session(url, Store(), []), timeout=30)
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        front, replay_url = http_replay(tape, "--require-auth", "--auth-server", issuer)
        with front:
            refused = httpx.post(replay_url, json={}, timeout=10)
            assert refused.status_code == 401
            challenge = refused.headers["www-authenticate"]
            metadata_url = challenge.split('resource_metadata="')[1].rstrip('"')
            metadata = httpx.get(metadata_url, timeout=10).json()
            assert metadata["resource"] == replay_url
            assert metadata["authorization_servers"] == [issuer]
            store = Store()
            replayed = run(lambda: oauth_session(replay_url, store, []), timeout=30)
            assert store.tokens is not None  # it logged in to be served
    assert replayed[0] == "Echo: hi"


def test_verify_sends_the_header_and_says_which_one_a_run_lacks(tmp_path: Path) -> None:
    import subprocess

    tape = tmp_path / "bearer.jsonl"
    server, upstream = start_bearer_server()
    with server:
        header = "Authorization: Bearer ${UPSTREAM_BEARER}"
        env = {"UPSTREAM_BEARER": TOKEN}
        proxy, url = recording_proxy(tape, upstream, "--header", header, env=env)
        with proxy:
            run(lambda: plain_session(url), timeout=30)
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        verify = [PY, "-m", "cassette", "verify", str(tape), "--upstream", upstream]
        sent = subprocess.run(
            [*verify, "--header", header, "--format", "json"],
            capture_output=True,
            timeout=scaled(60),
            check=False,
            env={**_environ(), **env},
        )
        assert sent.returncode == 0, sent.stderr.decode()
        assert TOKEN not in sent.stdout.decode() + sent.stderr.decode()
        lacking = subprocess.run(verify, capture_output=True, timeout=scaled(60), check=False)
    said = lacking.stderr.decode()
    assert "recorded sending the header(s) Authorization" in said
    assert lacking.returncode == 1  # every answer is now a refusal
    assert "ERROR-SHAPE-CHANGED" in lacking.stdout.decode()
    report = json.loads(sent.stdout)
    assert {r["status"] for r in report["requests"]} == {"MATCH"}


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


FIXTURE_SUITE = """
import os
import anyio
from mcp import Client


def test_bearer(mcp_cassette):
    url = mcp_cassette.server_url(
        os.environ["SERVER_URL"], headers={"Authorization": "Bearer ${UPSTREAM_BEARER}"}
    )

    async def go():
        with anyio.fail_after(30):
            async with Client(url) as client:
                return (await client.call_tool("echo", {"message": "fixture"})).content[0].text

    assert anyio.run(go) == "Echo: fixture"
"""


def test_the_fixture_sends_headers_from_the_environment_and_replays_without(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.plugin.test_plugin import Suite

    suite = Suite(pytester, monkeypatch)
    pytester.makepyfile(test_agent=FIXTURE_SUITE)
    tape = pytester.path / "cassettes" / "test_agent" / "test_bearer.jsonl"
    server, upstream = start_bearer_server()
    with server:
        unset = suite.run(SERVER_URL=upstream)  # recording, and the variable is not set
        unset.assert_outcomes(failed=1)
        unset.stdout.fnmatch_lines(["*${UPSTREAM_BEARER} is not set in the environment*"])
        assert not tape.exists()
        first = suite.run(SERVER_URL=upstream, UPSTREAM_BEARER=TOKEN)
        first.assert_outcomes(passed=1)
    assert Cassette.load(tape).header.target["headers"] == ["Authorization"]
    assert TOKEN not in tape.read_text()
    # CI: no server, no token, mode none: the replay needs neither
    offline = suite.run(SERVER_URL=upstream, MCP_CASSETTE_MODE="none", **OFFLINE_ENV)
    offline.assert_outcomes(passed=1)


def test_variant_sends_the_header_and_never_writes_its_value(tmp_path: Path) -> None:
    import subprocess

    tape = tmp_path / "bearer.jsonl"
    server, upstream = start_bearer_server()
    header = "Authorization: Bearer ${UPSTREAM_BEARER}"
    env = {"UPSTREAM_BEARER": TOKEN}
    with server:
        proxy, url = recording_proxy(tape, upstream, "--header", header, env=env)
        with proxy:
            run(lambda: plain_session(url), timeout=30)
            assert proxy.stop(signal.SIGINT) == 0, proxy.output()
        argv = [PY, "-m", "cassette", "variant", str(tape), "--as", "legacy", "--header", header]
        done = subprocess.run(
            argv, capture_output=True, timeout=scaled(60), check=False, env={**_environ(), **env}
        )
    assert done.returncode == 0, done.stderr.decode()
    assert "variant legacy: sent" in done.stderr.decode()
    whoami = [
        m["result"]["content"][0]["text"]
        for m in Cassette.load(tape).messages("s2c")
        if "called with" in json.dumps(m)
    ]
    assert len(whoami) == 2  # the main recording's and the variant's
    assert TOKEN not in written_bytes(tmp_path)
