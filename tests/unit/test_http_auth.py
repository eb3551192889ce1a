"""Credentials on the way to a live server: header templates expanded from the environment,
the recording proxy as a protected resource, a replay front that asks for a token, and a
request refused for its credentials left out of the session."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from cassette.core.redaction.headers import expand, parse_header, parse_headers, refusal
from cassette.core.wire.exchanges import cut
from cassette.core.wire.model import HttpEvent, MessageEvent
from cassette.errors import UsageError
from cassette.store.headers import templates
from cassette.transports.http._http import LazyClient
from cassette.transports.http._http_auth import RequireBearer, metadata_url, names, with_extra
from cassette.transports.http._http_record import RecordingProxy

TOKEN = "ghp_Zq8vKx2LmN4pRt6wYb1cDf3gHj5kMn7sQv9X"
UPSTREAM = "http://upstream.example:8000/mcp"
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "x"}}


# -- templates -----------------------------------------------------------------------------


def test_a_template_expands_from_the_environment_and_its_values_are_secrets() -> None:
    template = parse_header("Authorization: Bearer ${UPSTREAM_BEARER}")
    assert template.variables == ("UPSTREAM_BEARER",)
    expanded = expand([template], {"UPSTREAM_BEARER": TOKEN})
    assert expanded.headers == {"Authorization": f"Bearer {TOKEN}"}
    assert expanded.names == ("Authorization",)
    assert TOKEN in expanded.secrets
    assert f"Bearer {TOKEN}" in expanded.secrets


def test_an_unset_variable_is_refused_naming_the_header_and_the_variable() -> None:
    template = parse_header("X-Api: k-${PART_ONE}-${PART_TWO}")
    with pytest.raises(UsageError) as refused:
        expand([template], {"PART_ONE": "visible-part"})
    assert str(refused.value) == "--header X-Api: ${PART_TWO} is not set in the environment"
    with pytest.raises(UsageError):
        expand([template], {"PART_ONE": "a", "PART_TWO": ""})  # empty is not set either


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"Authorization Bearer {TOKEN}", "expected 'NAME: VALUE'"),
        (f"Bad Name: {TOKEN}", "is not a header name"),
        (f"Content-Type: {TOKEN}", "set by the transport"),
        ("X-Key: ${1BAD}", "not an environment variable's name"),
    ],
)
def test_a_bad_header_is_refused_without_showing_its_value(text: str, problem: str) -> None:
    with pytest.raises(UsageError) as refused:
        parse_header(text)
    assert problem in str(refused.value)
    assert TOKEN not in str(refused.value)


def test_a_value_a_header_cannot_carry_is_refused() -> None:
    with pytest.raises(UsageError, match="line break"):
        expand([parse_header("X-Key: ${V}")], {"V": "a\r\nInjected: yes"})
    with pytest.raises(UsageError, match="outside ASCII"):
        expand([parse_header("X-Key: ${V}")], {"V": "caf\u00e9"})


def test_the_command_line_replaces_the_projects_header_of_the_same_name() -> None:
    settings = {"headers": {"authorization": "Bearer ${PROJECT}", "X-Team": "core"}}
    found = templates(["Authorization: Bearer ${MINE}"], settings)
    assert [(t.name, t.template) for t in found] == [
        ("X-Team", "core"),
        ("Authorization", "Bearer ${MINE}"),
    ]
    with pytest.raises(UsageError, match="given twice"):
        parse_headers(["X-A: 1", "x-a: 2"])
    with pytest.raises(UsageError, match="must be a table"):
        templates([], {"headers": ["X-A: 1"]})


def test_the_refusal_names_the_credential_never_a_value() -> None:
    assert refusal(401, "the server", ["Authorization"]) == (
        "the server refused the credentials in Authorization (HTTP 401): check the value "
        "--header gives (and the variable it reads)"
    )
    assert "authorization flow" in refusal(401, "the server")
    assert "authorization flow" not in refusal(401, "the server", flow=False)
    assert "lack a permission" in refusal(403, "the server", ["X-Api-Key"])


def test_given_headers_replace_the_clients_own() -> None:
    client = [(b"authorization", b"Bearer client"), (b"accept", b"text/event-stream")]
    sent = with_extra(client, {"Authorization": "Bearer given"})
    assert sent == [("accept", "text/event-stream"), ("Authorization", "Bearer given")]


# -- the session -------------------------------------------------------------------------


def test_a_request_refused_for_its_credentials_is_no_part_of_the_session() -> None:
    answer = {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "x"}}
    events = [
        MessageEvent(t=0.0, dir="c2s", message=INIT, meta={"stream": "post-1"}, seq=1),
        HttpEvent(t=0.1, method="POST", stream="post-1", status=401, seq=2),
        MessageEvent(t=0.2, dir="c2s", message=INIT, meta={"stream": "post-2"}, seq=3),
        MessageEvent(t=0.3, dir="s2c", message=answer, meta={"stream": "post-2"}, seq=4),
    ]
    _, exchanges = cut(events)
    assert [(x.key, x.seq, x.answered) for x in exchanges] == [(0, 3, True)]


# -- the recording proxy -------------------------------------------------------------------


class Collect:
    def __init__(self) -> None:
        self.frames: list[tuple[str, bytes]] = []
        self.statuses: list[int] = []
        self.secrets: list[str] = []

    def frame(self, direction: str, data: bytes, meta: Any) -> None:
        self.frames.append((direction, data))

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        self.statuses.append(status)

    def secret(self, value: str) -> None:
        self.secrets.append(value)


class Upstream:
    """A protected resource: 401 with a challenge unless the token is right; its metadata
    at the URL the challenge names."""

    def __init__(self) -> None:
        self.seen: list[str | None] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/oauth-protected-resource/mcp":
            return httpx.Response(
                200,
                json={
                    "resource": UPSTREAM,
                    "authorization_servers": ["https://login.example/"],
                    "scopes_supported": ["mcp:tools"],
                },
            )
        self.seen.append(request.headers.get("authorization"))
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            challenge = (
                'Bearer error="invalid_token", resource_metadata="http://upstream.example:8000'
                '/.well-known/oauth-protected-resource/mcp"'
            )
            return httpx.Response(
                401, json={"error": "invalid_token"}, headers={"www-authenticate": challenge}
            )
        return httpx.Response(200, json={"jsonrpc": "2.0", "id": 1, "result": {}})


def proxy_for(upstream: Upstream, tap: Collect, **options: Any) -> RecordingProxy:
    proxy = RecordingProxy(UPSTREAM, tap, "127.0.0.1", **options)
    proxy._http = LazyClient(httpx.AsyncClient(transport=httpx.MockTransport(upstream)))
    return proxy


async def through(proxy: RecordingProxy, method: str, path: str, **kwargs: Any) -> httpx.Response:
    transport = httpx.ASGITransport(app=proxy)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as client:
        with anyio.fail_after(10):
            return await client.request(method, path, **kwargs)


def test_the_proxy_presents_itself_as_the_protected_resource() -> None:
    tap, upstream = Collect(), Upstream()
    proxy = proxy_for(upstream, tap)

    async def go() -> tuple[httpx.Response, httpx.Response]:
        refused = await through(proxy, "POST", "/mcp", json=INIT)
        metadata = await through(proxy, "GET", "/.well-known/oauth-protected-resource/mcp")
        await proxy.aclose()
        return refused, metadata

    refused, metadata = anyio.run(go)
    assert refused.status_code == 401
    ours = "http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"
    assert refused.headers["www-authenticate"] == (
        f'Bearer error="invalid_token", resource_metadata="{ours}"'
    )
    assert metadata.json() == {
        "resource": "http://127.0.0.1:9/mcp",
        "authorization_servers": ["https://login.example/"],
        "scopes_supported": ["mcp:tools"],
    }
    # the refusal is a status in the cassette; its body and the metadata are not
    assert tap.statuses == [401]
    assert [d for d, _ in tap.frames] == ["c2s"]
    assert metadata_url("http://127.0.0.1:9/mcp") == ours


@pytest.mark.parametrize(
    ("resource", "named"),
    [
        ("http://upstream.example:8000/mcp", True),
        ("http://upstream.example:8000/mcp/", True),
        ("HTTP://Upstream.Example:8000/mcp", True),
        ("http://upstream.example:8000", True),  # the origin: a parent of the path
        ("http://upstream.example:8000/", True),
        ("http://upstream.example:8000/mc", False),  # a prefix of the text, not a parent
        ("http://upstream.example:8000/mcp/deeper", False),
        ("http://upstream.example:8001/mcp", False),
        ("https://upstream.example:8000/mcp", False),
        ("http://elsewhere.example:8000/mcp", False),
        ("http://upstream.example:8000/mcp?tenant=b", False),
        ("http://upstream.example:8000/mcp#x", False),
        ("urn:upstream", False),
        (None, False),
        (["http://upstream.example:8000/mcp"], False),
    ],
)
def test_metadata_names_the_upstream_only_by_its_origin_and_path(
    resource: object, named: bool
) -> None:
    assert names(resource, UPSTREAM) is named


def test_an_announced_metadata_url_on_another_origin_is_not_a_place_to_look() -> None:
    from cassette.transports.http._http_auth import AuthFacade

    facade = AuthFacade(UPSTREAM, "/mcp", announced="http://attacker.example/.well-known/x")
    assert all(url.startswith("http://upstream.example:8000/") for url in facade.candidates())
    facade.announced = "http://upstream.example:8000/.well-known/oauth-protected-resource/x"
    assert facade.candidates()[0] == facade.announced


def test_the_proxy_sends_the_given_headers_and_reports_their_values_as_secrets() -> None:
    tap, upstream = Collect(), Upstream()
    proxy = proxy_for(upstream, tap, headers={"Authorization": f"Bearer {TOKEN}"})

    async def go() -> httpx.Response:
        answer = await through(proxy, "POST", "/mcp", json=INIT)
        await proxy.aclose()
        return answer

    assert anyio.run(go).status_code == 200
    assert upstream.seen == [f"Bearer {TOKEN}"]
    assert tap.statuses == []
    assert all(TOKEN.encode() not in data for _, data in tap.frames)


# -- a replay front that asks for a token --------------------------------------------------


async def inner(scope: Any, receive: Any, send: Any) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": body})


def test_require_bearer_checks_that_a_token_is_there_and_serves_its_metadata() -> None:
    app = RequireBearer(inner, "/mcp", "127.0.0.1", ("https://login.example/",))

    async def go() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9") as c:
            return [
                await c.post("/mcp", json=INIT),
                await c.post("/mcp", json=INIT, headers={"authorization": "Bearer anything"}),
                await c.get("/.well-known/oauth-protected-resource/mcp"),
                await c.get("/.well-known/oauth-protected-resource"),
                await c.post("/mcp", json=INIT, headers={"authorization": "Basic dXNlcjpwdw=="}),
            ]

    refused, served, metadata, root, basic = anyio.run(go)
    assert refused.status_code == 401
    assert refused.headers["www-authenticate"] == (
        'Bearer resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp"'
    )
    assert served.status_code == 200
    assert metadata.json() == {
        "resource": "http://127.0.0.1:9/mcp",
        "bearer_methods_supported": ["header"],
        "authorization_servers": ["https://login.example/"],
    }
    assert root.json() == metadata.json()
    assert basic.status_code == 401


# -- the command line ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "problem"),
    [
        (["record", "-o", "t.jsonl", "--header", "X-A: 1", "--", "node", "s.js"], "--upstream"),
        (["replay", "t.jsonl", "--auth-server", "https://login.example/"], "--require-auth"),
        (["replay", "t.jsonl", "--require-auth"], "--front http"),
        (["check", "--stdio", "node s.js", "--header", "X-A: 1"], "--url"),
    ],
)
def test_options_that_do_not_fit_together_are_one_line(
    argv: list[str], problem: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from cassette.cli.main import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.jsonl").write_text("")
    assert main(argv) == 2
    said = capsys.readouterr().err.strip().splitlines()
    assert len(said) == 1
    assert problem in said[0]


def test_a_mode_that_replays_needs_no_credentials(tmp_path: Any, monkeypatch: Any) -> None:
    """``record --mode once`` on a cassette that exists replays: a variable left unset
    is then no error (CI replays without the token)."""
    import argparse

    from cassette.cli.record import RecordCommand, add_parsers

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOT_SET_HERE", raising=False)
    (tmp_path / "t.jsonl").write_text("{}\n")
    top = argparse.ArgumentParser()
    add_parsers(top.add_subparsers())
    argv = ["record", "-o", "t.jsonl", "--upstream", UPSTREAM, "--mode", "once"]
    argv += ["--header", "Authorization: Bearer ${NOT_SET_HERE}"]
    args = top.parse_args(argv)
    args.mode_source = None
    command = RecordCommand.from_args(args)
    assert command.target.headers is None
    args = top.parse_args([*argv[:-4], "--mode", "all", *argv[-2:]])
    args.mode_source = None
    with pytest.raises(UsageError, match="NOT_SET_HERE"):
        RecordCommand.from_args(args)
