"""Raw HTTP probes: the same malformed and edge requests, sent to a live server and to the
replay front of a cassette recorded from it, so their statuses can be compared one by one.

No client library: each probe is the request a misbehaving (or merely unusual) client
sends, written with httpx by hand. ``run`` gives each probe's status (``None``: no answer
in time) in order; a probe may depend on those before it (a session, a DELETE), so they
always run in the listed order. ``python -m tests.helpers.http_probes ERA URL`` prints them: the
table in docs/transports.md was made this way.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs
import httpx

BOTH = "application/json, text/event-stream"
JSON = {"accept": BOTH, "content-type": "application/json"}
LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
PREFLIGHT = {
    "origin": "http://localhost:6274",  # the MCP Inspector's own page
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type,mcp-session-id",
}
FOREIGN = "http://evil.example"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": MODERN_VERSION,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
}


@attrs.define
class Ctx:
    """What the probes of one run share: the client, the URL, the session they opened."""

    client: httpx.Client
    url: str
    session: str = ""
    endpoint: str = ""  # legacy HTTP+SSE: where to POST

    def post(self, body: Any, **headers: str) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.client.post(self.url, content=content, headers=headers)

    def in_session(self, **extra: str) -> dict[str, str]:
        return {
            **JSON,
            "mcp-session-id": self.session,
            "mcp-protocol-version": LEGACY_VERSION,
            **extra,
        }


@attrs.frozen
class Probe:
    name: str
    send: Callable[[Ctx], httpx.Response]


def _without(headers: dict[str, str], name: str) -> dict[str, str]:
    return {k: v for k, v in headers.items() if k != name}


# -- streamable HTTP, legacy era (server-everything) ---------------------------------------


def _second_get(ctx: Ctx) -> httpx.Response:
    headers = {"accept": "text/event-stream", "mcp-session-id": ctx.session}
    with ctx.client.stream("GET", ctx.url, headers=headers) as first:
        assert first.status_code == 200
        return ctx.client.get(ctx.url, headers=headers)


def _initialize(ctx: Ctx) -> httpx.Response:
    response = ctx.post(INIT, **JSON)
    ctx.session = response.headers.get("mcp-session-id", "")
    ctx.post(INITIALIZED, **ctx.in_session())
    return response


def _get(ctx: Ctx, **headers: str) -> httpx.Response:
    return ctx.client.get(ctx.url, headers=headers)


LEGACY = [
    Probe("POST initialize", _initialize),
    Probe("POST tools/list in the session", lambda c: c.post(LIST, **c.in_session())),
    Probe("POST tools/list without a session", lambda c: c.post(LIST, **JSON)),
    Probe(
        "POST with an unknown session id",
        lambda c: c.post(LIST, **c.in_session(**{"mcp-session-id": "nope"})),
    ),
    Probe(
        "POST with MCP-Protocol-Version: 1999-01-01",
        lambda c: c.post(LIST, **c.in_session(**{"mcp-protocol-version": "1999-01-01"})),
    ),
    Probe(
        "POST with Content-Type: text/plain",
        lambda c: c.post(LIST, **c.in_session(**{"content-type": "text/plain"})),
    ),
    Probe(
        "POST without Content-Type",
        lambda c: c.post(LIST, **_without(c.in_session(), "content-type")),
    ),
    Probe(
        "POST with Accept: application/json",
        lambda c: c.post(LIST, **c.in_session(accept="application/json")),
    ),
    Probe(
        "POST with Accept: text/event-stream",
        lambda c: c.post(LIST, **c.in_session(accept="text/event-stream")),
    ),
    Probe("POST with Accept: */*", lambda c: c.post(LIST, **c.in_session(accept="*/*"))),
    Probe("POST with no Accept", lambda c: c.post(LIST, **c.in_session(accept=""))),
    Probe("POST a body that is not JSON", lambda c: c.post(b"{nope", **c.in_session())),
    Probe(
        "POST a batch of two requests",
        lambda c: c.post([LIST, {**LIST, "id": 3}], **c.in_session()),
    ),
    Probe("POST a request with id: null", lambda c: c.post({**LIST, "id": None}, **c.in_session())),
    Probe(
        "POST a request without jsonrpc",
        lambda c: c.post({"id": 5, "method": "tools/list"}, **c.in_session()),
    ),
    Probe(
        "POST a response nobody asked for",
        lambda c: c.post({"jsonrpc": "2.0", "id": 77, "result": {}}, **c.in_session()),
    ),
    Probe("POST initialize inside the session", lambda c: c.post(INIT, **c.in_session())),
    Probe("GET without a session", lambda c: _get(c, accept="text/event-stream")),
    Probe(
        "GET with an unknown session id",
        lambda c: _get(c, accept="text/event-stream", **{"mcp-session-id": "nope"}),
    ),
    Probe(
        "GET with Accept: application/json",
        lambda c: _get(c, accept="application/json", **{"mcp-session-id": c.session}),
    ),
    Probe("GET while the session's GET stream is open", _second_get),
    Probe("PUT", lambda c: c.client.put(c.url, json=LIST, headers=c.in_session())),
    Probe(
        "OPTIONS preflight from http://localhost:6274",
        lambda c: c.client.options(c.url, headers=PREFLIGHT),
    ),
    Probe("POST from a foreign Origin", lambda c: c.post(INIT, **JSON, origin=FOREIGN)),
    Probe(
        "DELETE with an unknown session id",
        lambda c: c.client.delete(c.url, headers={"mcp-session-id": "nope"}),
    ),
    Probe("DELETE without a session", lambda c: c.client.delete(c.url)),
    Probe(
        "DELETE the session",
        lambda c: c.client.delete(c.url, headers={"mcp-session-id": c.session}),
    ),
    Probe("POST after DELETE", lambda c: c.post(LIST, **c.in_session())),
    Probe(
        "GET after DELETE",
        lambda c: _get(c, accept="text/event-stream", **{"mcp-session-id": c.session}),
    ),
]


def record_legacy(url: str) -> None:
    """The valid session the legacy probes are replayed from."""
    with httpx.Client(timeout=20) as client:
        ctx = Ctx(client, url)
        assert _initialize(ctx).status_code == 200
        assert ctx.post(LIST, **ctx.in_session()).status_code == 200
        headers = {"accept": "text/event-stream", "mcp-session-id": ctx.session}
        with client.stream("GET", url, headers=headers) as stream:
            assert stream.status_code == 200
        assert client.delete(url, headers={"mcp-session-id": ctx.session}).status_code == 200


# -- streamable HTTP, modern era (the Python SDK) -------------------------------------------


def modern_request(msg_id: int, method: str, version: str = MODERN_VERSION, **params: Any) -> Any:
    envelope = {**ENVELOPE, "io.modelcontextprotocol/protocolVersion": version}
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": method,
        "params": {**params, "_meta": envelope},
    }


def routing(
    method: str, name: str | None = None, version: str = MODERN_VERSION, **extra: str
) -> dict[str, str]:
    headers = {**JSON, "mcp-protocol-version": version, "mcp-method": method}
    if name is not None:
        headers["mcp-name"] = name
    return {**headers, **extra}


ADD = modern_request(2, "tools/call", name="add", arguments={"a": 1, "b": 2})
MODERN_LIST = modern_request(3, "tools/list")
MODERN = [
    Probe(
        "POST server/discover",
        lambda c: c.post(modern_request(1, "server/discover"), **routing("server/discover")),
    ),
    Probe("POST tools/call", lambda c: c.post(ADD, **routing("tools/call", "add"))),
    Probe(
        "POST with an unsupported version (header and envelope)",
        lambda c: c.post(
            modern_request(3, "tools/list", "2099-01-01"),
            **routing("tools/list", version="2099-01-01"),
        ),
    ),
    Probe(
        "POST whose MCP-Protocol-Version disagrees with the envelope",
        lambda c: c.post(MODERN_LIST, **routing("tools/list", version="2099-01-01")),
    ),
    Probe(
        "POST without MCP-Protocol-Version",
        lambda c: c.post(MODERN_LIST, **_without(routing("tools/list"), "mcp-protocol-version")),
    ),
    Probe(
        "POST whose Mcp-Method disagrees", lambda c: c.post(MODERN_LIST, **routing("tools/call"))
    ),
    Probe("POST whose Mcp-Name disagrees", lambda c: c.post(ADD, **routing("tools/call", "other"))),
    Probe(
        "POST without Mcp-Method",
        lambda c: c.post(MODERN_LIST, **_without(routing("tools/list"), "mcp-method")),
    ),
    Probe(
        "POST without the _meta envelope",
        lambda c: c.post(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, **routing("tools/list")
        ),
    ),
    Probe(
        "POST with Content-Type: text/plain",
        lambda c: c.post(MODERN_LIST, **routing("tools/list", **{"content-type": "text/plain"})),
    ),
    Probe(
        "POST with Accept: application/json",
        lambda c: c.post(MODERN_LIST, **routing("tools/list", accept="application/json")),
    ),
    Probe(
        "POST with Accept: */*",
        lambda c: c.post(MODERN_LIST, **routing("tools/list", accept="*/*")),
    ),
    Probe("POST with no Accept", lambda c: c.post(MODERN_LIST, **routing("tools/list", accept=""))),
    Probe("POST a body that is not JSON", lambda c: c.post(b"{nope", **routing("tools/list"))),
    Probe(
        "POST a batch of two requests",
        lambda c: c.post([MODERN_LIST, {**MODERN_LIST, "id": 4}], **routing("tools/list")),
    ),
    Probe(
        "POST a request with id: null",
        lambda c: c.post({**MODERN_LIST, "id": None}, **routing("tools/list")),
    ),
    Probe(
        "POST a response nobody asked for",
        lambda c: c.post({"jsonrpc": "2.0", "id": 77, "result": {}}, **routing("tools/list")),
    ),
    Probe(
        "POST a notification",
        lambda c: c.post(
            {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 9}},
            **routing("notifications/cancelled"),
        ),
    ),
    Probe(
        "GET",
        lambda c: _get(c, accept="text/event-stream", **{"mcp-protocol-version": MODERN_VERSION}),
    ),
    Probe(
        "DELETE", lambda c: c.client.delete(c.url, headers={"mcp-protocol-version": MODERN_VERSION})
    ),
    Probe(
        "OPTIONS preflight from http://localhost:6274",
        lambda c: c.client.options(c.url, headers=PREFLIGHT),
    ),
    Probe(
        "POST from a foreign Origin",
        lambda c: c.post(MODERN_LIST, **routing("tools/list", origin=FOREIGN)),
    ),
]


def record_modern(url: str) -> None:
    with httpx.Client(timeout=20) as client:
        ctx = Ctx(client, url)
        for probe in MODERN[:2]:
            assert probe.send(ctx).status_code == 200
        assert ctx.post(MODERN_LIST, **routing("tools/list")).status_code == 200


# -- legacy HTTP+SSE (server-everything in sse mode) ----------------------------------------


@contextmanager
def sse_session(client: httpx.Client, url: str) -> Iterator[tuple[str, Iterator[str]]]:
    """An open event stream: the URL its ``endpoint`` event names, and its lines."""
    with client.stream("GET", url, headers={"accept": "text/event-stream"}) as stream:
        lines = stream.iter_lines()
        endpoint = next(line[5:].strip() for line in lines if line.startswith("data:"))
        yield str(httpx.URL(url).join(endpoint)), lines


def _sse_post(ctx: Ctx, body: Any, url: str | None = None, **headers: str) -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return ctx.client.post(url or ctx.endpoint, content=content, headers=headers)


def _elsewhere(ctx: Ctx, query: str) -> str:
    return str(httpx.URL(ctx.endpoint).copy_with(query=query.encode() or None))


CT = {"content-type": "application/json"}
SSE = [
    Probe("POST initialize", lambda c: _sse_post(c, INIT, **CT)),
    Probe("POST tools/list", lambda c: _sse_post(c, LIST, **CT)),
    Probe(
        "POST with Content-Type: text/plain",
        lambda c: _sse_post(c, LIST, **{"content-type": "text/plain"}),
    ),
    Probe("POST without Content-Type", lambda c: _sse_post(c, LIST)),
    Probe("POST a body that is not JSON", lambda c: _sse_post(c, b"{nope", **CT)),
    Probe("POST a batch", lambda c: _sse_post(c, [LIST], **CT)),
    Probe("POST a request with id: null", lambda c: _sse_post(c, {**LIST, "id": None}, **CT)),
    Probe("GET the POST endpoint", lambda c: c.client.get(c.endpoint)),
    Probe("POST to the stream path", lambda c: c.client.post(c.url, json=LIST, headers=CT)),
    Probe(
        "OPTIONS preflight from http://localhost:6274",
        lambda c: c.client.options(c.endpoint, headers=PREFLIGHT),
    ),
    Probe("POST from a foreign Origin", lambda c: _sse_post(c, LIST, **CT, origin=FOREIGN)),
    # server-everything never answers these three: its router only logs them
    Probe("POST without a sessionId", lambda c: _sse_post(c, LIST, _elsewhere(c, ""), **CT)),
    Probe(
        "POST with an unknown sessionId",
        lambda c: _sse_post(c, LIST, _elsewhere(c, "sessionId=nope"), **CT),
    ),
]


#: Probed after the event stream closed (the session ended).
def _post_once_closed(ctx: Ctx, deadline: float = 10.0) -> httpx.Response:
    """POST after the client closed its stream. The server learns of the closing on its own
    time (the stream's connection and the POST's are separate), so a 202 that comes before
    it has is retried until the deadline: the probe reports the answer once it has."""
    import time

    end = time.monotonic() + deadline
    while True:
        response = _sse_post(ctx, LIST, **CT)
        if response.status_code != 202 or time.monotonic() > end:
            return response
        time.sleep(0.05)


SSE_CLOSED = Probe("POST after the stream closed", _post_once_closed)
SSE_UNANSWERED = frozenset(
    {"POST without a sessionId", "POST with an unknown sessionId", SSE_CLOSED.name}
)


def record_sse(url: str) -> None:
    with httpx.Client(timeout=20) as client, sse_session(client, url) as (endpoint, lines):
        for body in (INIT, INITIALIZED, LIST):
            assert client.post(endpoint, json=body).status_code == 202
            if "id" in body:
                next(
                    line
                    for line in lines
                    if line.startswith("data:") and f'"id":{body["id"]}' in line
                )


# -- running them ---------------------------------------------------------------------------


#: What a probe got: the status and, when the body is a JSON-RPC error, its code (no
#: answer in time: ``None``).
Outcome = tuple[int, int | None] | None


def _outcome(probe: Probe, ctx: Ctx) -> Outcome:
    try:
        response = probe.send(ctx)
    except httpx.TimeoutException:
        return None
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        error = None
    return response.status_code, error.get("code") if isinstance(error, dict) else None


def shown(outcome: Outcome) -> str:
    """An outcome as the table in docs/transports.md writes it."""
    if outcome is None:
        return "no answer"
    status, code = outcome
    return f"{status}" if code is None else f"{status} ({code})"


def run(
    probes: list[Probe], url: str, *, timeout: float = 20, skip: frozenset[str] = frozenset()
) -> dict[str, Outcome]:
    """Each probe's outcome, in order (``None``: no answer within ``timeout`` seconds)."""
    with httpx.Client(timeout=timeout) as client:
        ctx = Ctx(client, url)
        return {p.name: _outcome(p, ctx) for p in probes if p.name not in skip}


def run_sse(
    url: str, *, timeout: float = 20, skip: frozenset[str] = frozenset()
) -> dict[str, Outcome]:
    with httpx.Client(timeout=timeout) as client:
        ctx = Ctx(client, url)
        with sse_session(client, url) as (endpoint, _lines):
            ctx.endpoint = endpoint
            out = {p.name: _outcome(p, ctx) for p in SSE if p.name not in skip}
        if SSE_CLOSED.name not in skip:
            out[SSE_CLOSED.name] = _outcome(SSE_CLOSED, ctx)
        return out


def main(argv: list[str]) -> int:
    era, url = argv
    statuses = (
        run_sse(url, timeout=3) if era == "sse" else run(LEGACY if era == "legacy" else MODERN, url)
    )
    for name, outcome in statuses.items():
        print(f"| {name} | {shown(outcome)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
