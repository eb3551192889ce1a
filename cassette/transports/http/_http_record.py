"""The streamable-HTTP recording proxy: an ASGI reverse proxy that records as it relays.

Theory of operation
-------------------
Every request to the upstream path is forwarded with its body verbatim and its headers
minus hop-by-hop ones; the response comes back the same way. An SSE response is relayed
chunk by chunk as it arrives, never buffered, and parsed on the side by our WHATWG parser,
so each event is recorded before the chunk that completed it is forwarded. Recording
happens through a ``Tap`` (the session owns the recorder and the file).

What is recorded, per HTTP exchange (a ``stream`` named ``post-N``, ``get-N``,
``delete-N`` in arrival order):

* the POST body as one client frame (a batch stays one frame, kept raw);
* a JSON response body as one server frame; each SSE event's data as one server frame,
  with ``sse: true`` and its event id;
* an ``HttpEvent`` for every GET and DELETE and for a POST with a non-default status.

Client sessions are numbered in the order their ``Mcp-Session-Id`` first appears; the id
itself, like every other header value, never reaches the cassette.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import urlsplit

import anyio
import attrs
import httpx

from cassette.core.redaction.redactor import redact_text
from cassette.core.redaction.secret_rules import secret_header_values
from cassette.core.replay.negotiation import refuse_other_era
from cassette.core.wire.jsonrpc import Kind, classify, dumps_bytes, error_response
from cassette.core.wire.meta import EVENT, EVENT_ID, RETRY, SESSION, SSE, STREAM
from cassette.transport import SecretTap, Tap
from cassette.transports.http._http import (
    BODY_LIMIT,
    Guard,
    LazyClient,
    Receive,
    Scope,
    Send,
    forwardable,
    header,
    read_body,
    send_simple,
    wait_for_disconnect,
)
from cassette.transports.http._http_auth import AuthFacade, auth_refusal, with_extra
from cassette.transports.http.sse_parser import SSEEvent, SSEParser

__all__ = ["RecordingProxy"]

_SESSION_HEADER: Final = "mcp-session-id"
_FORBIDDEN: Final = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Forbidden origin"}}',
    b"application/json",
)


def _default_status(body_kind: Kind) -> int:
    return 200 if body_kind is Kind.REQUEST else 202


def joined_query(upstream: str, query: str) -> str:
    """The upstream URL with the client's query added: after ``&`` when the upstream URL
    has a query of its own (``?`` twice would hand the server a parameter named
    ``x?y``), after ``?`` otherwise."""
    if not query:
        return upstream
    if "?" not in upstream:
        return f"{upstream}?{query}"
    return upstream + ("" if upstream.endswith(("?", "&")) else "&") + query


@attrs.define
class _Pass:
    """One HTTP exchange going through the proxy."""

    method: str
    stream: str
    meta: dict[str, Any]
    body_kind: Kind


class RecordingProxy:
    """ASGI app: reverse proxy to ``upstream`` that records through ``tap``."""

    def __init__(
        self,
        upstream: str,
        tap: Tap,
        bound_host: str,
        upstream_timeout: float = 60.0,
        max_body: int = BODY_LIMIT,
        *,
        allowed_origins: Sequence[str] = (),
        era: str = "auto",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.upstream_timeout = upstream_timeout
        self.era = era
        self.max_body = max_body
        self.upstream = upstream
        self.path = urlsplit(upstream).path or "/"
        self.tap = tap
        self.guard = Guard(bound_host, _FORBIDDEN, allowed_origins=tuple(allowed_origins))
        self._counter = itertools.count(1)
        self._sessions: dict[str, int] = {}
        self._http = LazyClient(jar=False)  # each client's cookies are its own
        self.extra = dict(headers or {})  # given by the person recording; never recorded
        self.auth = AuthFacade(upstream, self.path)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _upstream_failed(
        self, send: Send, ex: _Pass, session: int | None, body: bytes, exc: Exception
    ) -> None:
        """The upstream could not answer: the client gets a JSON-RPC error saying why (502,
        or 504 when it did not answer in time), and the cassette records the status."""
        timed_out = isinstance(exc, TimeoutError)
        status = 504 if timed_out else 502
        why = (
            f"did not answer within {self.upstream_timeout:g} s"
            if timed_out
            else f"is unreachable ({type(exc).__name__}: {exc})"
        )
        self.tap.http(ex.method, ex.stream, status, session)
        parsed = classify(body)
        msg_id = parsed.value.get("id") if parsed.kind is Kind.REQUEST else None
        shown = redact_text(self.upstream)  # the client's error may end up in a log
        error = error_response(msg_id, -32000, f"cassette-mcp: upstream {shown} {why}")
        await send_simple(send, status, dumps_bytes(error), b"application/json")

    def _session(self, value: str | None) -> int | None:
        if not value:
            return None
        if value not in self._sessions:
            self._sessions[value] = len(self._sessions) + 1
        return self._sessions[value]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        admitted = await self.guard.admit(scope, receive, send)
        if admitted is None:
            return
        send = admitted
        if self.auth.answers(scope):  # the authorization flow's discovery: not recorded
            await self.auth.serve(scope, send, self._http())
            return
        if scope["path"] != self.path:
            await send_simple(send, 404, b"Not Found", b"text/plain")
            return
        body = await read_body(receive, self.max_body, send=send)
        if body is None:
            return
        await self._relay(scope, receive, send, body)

    async def _relay(self, scope: Scope, receive: Receive, send: Send, body: bytes) -> None:
        method = scope["method"]
        stream = f"{method.lower()}-{next(self._counter)}"
        session = self._session(header(scope, _SESSION_HEADER.encode()))
        meta: dict[str, Any] = {STREAM: stream}
        if session is not None:
            meta[SESSION] = session
        body_kind = classify(body).kind if body else Kind.NOT_JSON
        if isinstance(self.tap, SecretTap):
            for value in secret_header_values(scope["headers"]):
                self.tap.secret(value)
        if method == "POST" and body:
            self.tap.frame("c2s", body, dict(meta))
            if await self._answered_here(send, body, _Pass(method, stream, meta, body_kind)):
                return
        url = joined_query(self.upstream, scope["query_string"].decode())
        request = self._http().build_request(
            method, url, headers=with_extra(forwardable(scope["headers"]), self.extra), content=body
        )
        try:
            with anyio.fail_after(self.upstream_timeout):
                response = await self._http().send(request, stream=True)
        except (httpx.HTTPError, TimeoutError) as exc:
            failed = _Pass(method, stream, meta, body_kind)
            await self._upstream_failed(send, failed, session, body, exc)
            return
        try:
            ex = _Pass(method, stream, meta, body_kind)
            await self._respond(send, receive, response, ex, scope)
        finally:
            await response.aclose()

    async def _answered_here(self, send: Send, body: bytes, ex: _Pass) -> bool:
        """``--era``: the other era's opening answered here, as a server of the named era
        answers it (``cassette.core.replay.negotiation.refuse_other_era``), and recorded as the
        server's: the ``server/discover`` probe gets 200 with ``-32601``, an ``initialize``
        400 with ``-32022``."""
        if self.era == "auto":
            return False
        answer = refuse_other_era(self.era, classify(body).value)
        if answer is None:
            return False
        status = 400 if self.era == "modern" else 200
        if status != _default_status(ex.body_kind):
            self.tap.http(ex.method, ex.stream, status, ex.meta.get(SESSION))
        data = dumps_bytes(answer)
        self.tap.frame("s2c", data, ex.meta)
        await send_simple(send, status, data, b"application/json")
        return True

    async def _respond(
        self, send: Send, receive: Receive, response: httpx.Response, ex: _Pass, scope: Scope
    ) -> None:
        meta = ex.meta
        new_session = self._session(response.headers.get(_SESSION_HEADER))
        if new_session is not None:
            meta[SESSION] = new_session
        status = response.status_code
        if ex.method != "POST" or status != _default_status(ex.body_kind):
            self.tap.http(ex.method, ex.stream, status, meta.get(SESSION))
        headers = forwardable(response.headers.raw)
        if auth_refusal(status, headers):  # its status is all the cassette keeps of it
            content = await response.aread()
            headers = self.auth.rewrite(scope, headers)
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": content})
            return
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            await self._relay_events(send, receive, response, meta)
            return
        content = await response.aread()
        if content.strip():
            self.tap.frame("s2c", content, meta)
        await send({"type": "http.response.body", "body": content})

    async def _relay_events(
        self, send: Send, receive: Receive, response: httpx.Response, meta: Mapping[str, Any]
    ) -> None:
        parser = SSEParser()
        gone = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_for_disconnect, receive, gone)
            try:
                async for chunk in response.aiter_raw():
                    self._record_events(parser.feed(chunk), meta)
                    if gone.is_set():
                        break
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                else:
                    self._record_events(parser.close(), meta)
                    await send({"type": "http.response.body", "body": b""})
            except (httpx.HTTPError, OSError):
                pass  # the upstream stream broke: the client sees its end as it is
            finally:
                tg.cancel_scope.cancel()

    def _record_events(self, events: list[SSEEvent], meta: Mapping[str, Any]) -> None:
        for event in events:
            event_meta = {**meta, SSE: True}
            if event.last_event_id:
                event_meta[EVENT_ID] = event.last_event_id
            if event.type != "message":
                event_meta[EVENT] = event.type
            if event.retry is not None:
                event_meta[RETRY] = event.retry
            self.tap.frame("s2c", event.data.encode("utf-8"), event_meta)
