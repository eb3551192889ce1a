"""``new_episodes`` over streamable HTTP: what the replay front lacks, the live endpoint answers.

Theory of operation
-------------------
``HttpReplayApp`` answers every POST from its replayer first. Given an ``HttpExtender``, a
client request the replayer cannot answer (not recorded, or recorded and used up) is
handed to it instead of being answered with a miss error; the stdio counterpart is
``cassette.modes.episodes``, and the rules are the same:

* each replay session has a *live leg* of its own, opened on its first such request,
  never before, so an endpoint the cassette fully answers is never contacted. A legacy
  leg starts with a handshake of its own (the client's ``initialize``, or the recorded
  one if the client never sent one, then ``notifications/initialized``) and keeps the
  upstream's ``Mcp-Session-Id``; its answers are plumbing and go nowhere. A modern leg
  needs none: every request carries its envelope and its routing headers (forwarded as
  the client sent them);
* the request is POSTed as the client sent it, with the client's headers minus the
  session ones. Ids are not remapped: each POST carries its own answer, and the
  handshake (id ``cassette-mcp-handshake``) is over before anything is forwarded. The
  answer, JSON or an SSE stream, is relayed byte for byte, chunk by chunk; server
  requests on it reach the client, whose answers are POSTed to the leg;
* the exchange (the request, every message on its answer, the client's answers to the
  server's requests on it, a non-default status) is appended as **one write, under the
  cassette's lock, before the chunk holding the response is forwarded**, in the shape
  ``record_http`` writes, so the next run replays it with no upstream. Its POSTs get the
  next free ``post-N`` numbers and a legacy leg the next free session ordinal, read off
  the file under the lock (two processes extending one cassette never share one), so
  the file reads as a recording with one more client session. The exchange is redacted
  as the cassette was (its header names the salt and the rules);
* the handshake is not appended, nor is an answer without the JSON-RPC response (a
  recording with no answer would hang the next run), nor what the leg's server would
  say on a standalone GET stream (none is opened). ``initialize`` is never forwarded: a
  leg's handshake is its own. The client's notifications reach a leg once it is open
  (a cancellation must) but are not appended: what they cause on a live server travels
  on the GET stream the leg does not open.

An endpoint that cannot be reached leaves the request a miss, answered as in a replay.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final

import anyio
import attrs
import httpx

from cassette.core.jsonrpc import JSONObject, Kind, classify, classify_value, dumps_bytes
from cassette.core.matching import MissReport, Strategy
from cassette.core.model import Direction, Event, HttpEvent, MessageEvent, RawEvent, era_of
from cassette.core.replayer import Reply
from cassette.errors import TransportError
from cassette.modes.episodes import HANDSHAKE_TIMEOUT, acquire, describe_request, redactor_of
from cassette.store.lock import FileLock
from cassette.store.storage import Cassette, append_events
from cassette.transports._http import (
    LazyClient,
    Receive,
    Scope,
    Send,
    forwardable,
    send_simple,
    wait_for_disconnect,
)
from cassette.transports.sse_parser import SSEEvent, SSEParser

__all__ = ["HttpExtender", "serve_extending_http"]

HANDSHAKE_ID: Final = "cassette-mcp-handshake"
_SSE: Final = "text/event-stream"
_SSE_HEADERS: Final = [
    (b"content-type", _SSE.encode()),
    (b"cache-control", b"no-cache, no-transform"),
    (b"x-accel-buffering", b"no"),
]
# what a legacy client's request says about its replay session, not about the leg's
_SESSION_HEADERS: Final = frozenset({b"mcp-session-id", b"mcp-protocol-version", b"last-event-id"})
# what a modern request says about itself (its version and routing), kept as it came
_ROUTING_HEADERS: Final = frozenset({b"mcp-protocol-version", b"mcp-method", b"mcp-name"})
# Every stream name and session ordinal in a cassette line (keys as the codec writes them);
# a match inside a message only raises the maximum, which is harmless.
_STREAM_NUMBER: Final = re.compile(rb'"stream":"[a-z]+-(\d+)"')
_SESSION_NUMBER: Final = re.compile(rb'"session":(\d+)')

_UNREACHABLE: Final = (httpx.HTTPError, httpx.InvalidURL, TimeoutError)

Info = Callable[[str], None]


@attrs.frozen
class _Post:
    """The client's POST being answered: where its answer goes, and what with."""

    scope: Scope
    receive: Receive
    send: Send
    extra: list[tuple[bytes, bytes]]  # headers the replay adds (a new session's id)


@attrs.define
class _Episode:
    """One forwarded request's exchange, kept until its response arrives."""

    request: JSONObject
    stream: str  # this process's name for its POST, until it is appended
    events: list[Event] = attrs.field(factory=list)
    responded: bool = False


@attrs.define
class _Leg:
    """One replay session's connection to the live endpoint."""

    init: JSONObject | None = None  # the client's initialize, for the handshake
    ready: bool = False
    failed: str | None = None
    session_id: str | None = None
    version: str | None = None
    ordinal: int | None = None  # its session in the cassette, fixed by its first append
    lock: anyio.Lock = attrs.field(factory=anyio.Lock)
    # live server requests sent on a forwarded request's stream, by id
    server_requests: dict[object, _Episode] = attrs.field(factory=dict)


class HttpExtender:
    """The fall-through of an ``HttpReplayApp`` to ``upstream`` (see the module docstring).

    ``on_appended`` gets each request answered live (as the client sent it), once its
    exchange is in the cassette.
    """

    def __init__(
        self,
        cassette: Cassette,
        path: str | os.PathLike[str],
        upstream: str,
        *,
        on_info: Info,
        on_appended: Callable[[JSONObject], None] | None = None,
        upstream_timeout: float = 60.0,
    ) -> None:
        self.path = Path(path)
        self.upstream = upstream
        self.on_info = on_info
        self.on_appended = on_appended
        self.upstream_timeout = upstream_timeout
        self.modern = era_of(cassette.header) == "modern"
        self.recorded_version = cassette.header.protocol_version
        self.recorded_init = next(
            (m for m in cassette.messages("c2s") if m.get("method") == "initialize"), None
        )
        self.redactor = redactor_of(cassette)
        self.appended: list[str] = []
        self._lock = FileLock(self.path)
        self._appending = anyio.Lock()  # one FileLock, taken by one task at a time
        self._legs: dict[object, _Leg] = {}
        self._http = LazyClient()
        self._streams = 0  # local names of this process's POSTs, renumbered when appended
        self._t0 = time.monotonic()
        self._base_t = cassette.events[-1].t if cassette.events else 0.0

    async def aclose(self) -> None:
        """End the live legs' sessions upstream (a courtesy) and close the client."""
        if not self._http.opened:
            return
        for leg in self._legs.values():
            if leg.session_id:
                with contextlib.suppress(httpx.HTTPError), anyio.move_on_after(5):
                    await self._http().delete(self.upstream, headers=self._session(leg))
        await self._http.aclose()

    # -- what the replay front hands over ------------------------------------------------

    async def took(
        self,
        owner: object,
        body: bytes,
        reply: Reply,
        *,
        scope: Scope,
        receive: Receive,
        send: Send,
        extra: list[tuple[bytes, bytes]],
    ) -> bool:
        """Whether the POST ``body`` of replay session ``owner`` was answered here (live);
        otherwise the replay answers it with ``reply``, its own answer."""
        leg = self._legs.setdefault(owner, _Leg())
        post = _Post(scope, receive, send, extra)
        classified = classify(body)
        message = classified.value
        if classified.kind is Kind.REQUEST:
            return await self._request(leg, post, body, message, reply)
        if classified.kind in (Kind.RESPONSE, Kind.ERROR):
            return await self._answer(leg, post, body, message)
        initialized = classified.kind is Kind.NOTIFICATION and (
            message.get("method") == "notifications/initialized"  # the leg had its own
        )
        if classified.kind is Kind.NOTIFICATION and leg.ready and not initialized:
            with anyio.move_on_after(self.upstream_timeout):
                await self._post_quietly(leg, post, body, answer=False)
        return False

    async def _request(
        self, leg: _Leg, post: _Post, body: bytes, message: JSONObject, reply: Reply
    ) -> bool:
        if message.get("method") == "initialize":
            leg.init = message
            return False
        if reply.miss is None or not await self._ensure_live(leg, post.scope):
            return False
        return await self._forward(leg, post, body, message)

    async def _answer(self, leg: _Leg, post: _Post, body: bytes, message: JSONObject) -> bool:
        """The client answered a server request: the leg's, if it sent one with that id."""
        episode = leg.server_requests.pop(_key(message.get("id")), None)
        if episode is None:
            return False
        self._add(episode, "c2s", message, {}, self._stream())
        await self._post_quietly(leg, post, body, answer=True)
        return True

    # -- the live leg ----------------------------------------------------------------------

    async def _ensure_live(self, leg: _Leg, scope: Scope) -> bool:
        async with leg.lock:
            if leg.ready or leg.failed is not None:
                return leg.ready
            self.on_info(f"reaching {self.upstream} for a request the cassette lacks")
            init = leg.init or self.recorded_init
            if not self.modern and init is not None:
                try:
                    with anyio.fail_after(HANDSHAKE_TIMEOUT):
                        await self._handshake(leg, scope, init)
                except (*_UNREACHABLE, TransportError) as exc:
                    leg.failed = str(exc) or type(exc).__name__
                    self.on_info(f"the server could not answer: {leg.failed}")
                    return False
            leg.ready = True
            return True

    async def _handshake(self, leg: _Leg, scope: Scope, init: JSONObject) -> None:
        request: JSONObject = {"jsonrpc": "2.0", "id": HANDSHAKE_ID, "method": "initialize"}
        if "params" in init:
            request["params"] = init["params"]
        headers = self._headers(leg, scope, plain=True)
        response = await self._http().post(
            self.upstream, content=dumps_bytes(request), headers=headers
        )
        answer = next((m for m in _messages(response) if m.get("id") == HANDSHAKE_ID), {})
        result = answer.get("result")
        if not isinstance(result, dict):
            error = answer.get("error")
            reason = (
                error.get("message") if isinstance(error, dict) else f"HTTP {response.status_code}"
            )
            raise TransportError(f"the server refused its initialize: {reason}")
        leg.session_id = response.headers.get("mcp-session-id")
        version = result.get("protocolVersion")
        leg.version = version if isinstance(version, str) else None
        if self.recorded_version and leg.version != self.recorded_version:
            self.on_info(
                f"warning: the server now speaks {leg.version}; "
                f"the cassette was recorded at {self.recorded_version}"
            )
        initialized = dumps_bytes({"jsonrpc": "2.0", "method": "notifications/initialized"})
        await self._http().post(
            self.upstream, content=initialized, headers=self._headers(leg, scope, plain=True)
        )

    def _session(self, leg: _Leg) -> dict[str, str]:
        headers: dict[str, str] = {}
        if leg.session_id:
            headers["mcp-session-id"] = leg.session_id
        if leg.version and not self.modern:
            headers["mcp-protocol-version"] = leg.version
        return headers

    def _headers(self, leg: _Leg, scope: Scope, *, plain: bool = False) -> list[tuple[str, str]]:
        """The client's headers (credentials included) with the leg's session ones; a
        handshake's (``plain``) also drops the client request's routing headers."""
        drop = _SESSION_HEADERS if plain or not self.modern else _SESSION_HEADERS - _ROUTING_HEADERS
        if plain:
            drop |= _ROUTING_HEADERS
        kept = [
            (k.decode("latin-1"), v.decode("latin-1"))
            for k, v in forwardable(scope["headers"])
            if k not in drop
        ]
        if plain:
            kept = [(k, v) for k, v in kept if k not in ("accept", "content-type")]
            kept += [("accept", f"application/json, {_SSE}"), ("content-type", "application/json")]
        return [*kept, *self._session(leg).items()]

    async def _post_quietly(self, leg: _Leg, post: _Post, body: bytes, *, answer: bool) -> None:
        """POST a client notification or answer to the leg; what the leg says back is
        plumbing, but a client answer's own POST gets the upstream's status."""
        status = 502
        try:
            response = await self._http().post(
                self.upstream, content=body, headers=self._headers(leg, post.scope)
            )
            status = response.status_code
        except _UNREACHABLE as exc:
            self.on_info(f"the server could not take a message: {exc}")
        if answer:
            await send_simple(post.send, status, b"", headers=post.extra)

    async def _forward(self, leg: _Leg, post: _Post, body: bytes, message: JSONObject) -> bool:
        """Relay the leg's answer to ``message``; False if the leg could not be reached."""
        client = self._http()
        request = client.build_request(
            "POST", self.upstream, headers=self._headers(leg, post.scope), content=body
        )
        try:
            with anyio.fail_after(self.upstream_timeout):
                response = await client.send(request, stream=True)
        except _UNREACHABLE as exc:
            self.on_info(f"the server could not answer {describe_request(message)}: {exc}")
            return False
        episode = _Episode(message, self._stream())
        self._add(episode, "c2s", message, {})
        status = response.status_code
        if status != 200:
            http = HttpEvent(t=self._now(), method="POST", stream=episode.stream, status=status)
            episode.events.append(http)
        try:
            if response.headers.get("content-type", "").startswith(_SSE):
                await self._relay_events(leg, post, response, episode)
            else:
                content = await response.aread()
                if content.strip():
                    await self._on_data(leg, episode, content, {})
                media = response.headers.get("content-type", "application/json")
                await send_simple(post.send, status, content, media.encode("latin-1"), post.extra)
        finally:
            await response.aclose()
            if not episode.responded:
                what = describe_request(message)
                self.on_info(f"the server never answered {what}; it was not appended")
        return True

    async def _relay_events(
        self, leg: _Leg, post: _Post, response: httpx.Response, episode: _Episode
    ) -> None:
        """Relay an SSE answer chunk by chunk as it comes, each chunk's events kept first."""
        headers = [*_SSE_HEADERS, *post.extra]
        start = {"type": "http.response.start", "status": response.status_code, "headers": headers}
        await post.send(start)
        parser = SSEParser()
        gone = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait_for_disconnect, post.receive, gone)
            try:
                async for chunk in response.aiter_raw():
                    await self._on_events(leg, episode, parser.feed(chunk))
                    if gone.is_set():
                        break
                    body = {"type": "http.response.body", "body": chunk, "more_body": True}
                    await post.send(body)
                else:
                    await self._on_events(leg, episode, parser.close())
                    await post.send({"type": "http.response.body", "body": b""})
            except (httpx.HTTPError, OSError):
                pass  # the upstream stream broke: the client sees its end as it is
            finally:
                tg.cancel_scope.cancel()

    async def _on_events(self, leg: _Leg, episode: _Episode, events: Iterable[SSEEvent]) -> None:
        for event in events:
            meta: dict[str, Any] = {"sse": True}
            if event.last_event_id:
                meta["event_id"] = event.last_event_id
            if event.type != "message":
                meta["event"] = event.type
            if event.retry is not None:
                meta["retry"] = event.retry
            await self._on_data(leg, episode, event.data.encode("utf-8"), meta)

    async def _on_data(
        self, leg: _Leg, episode: _Episode, data: bytes, meta: Mapping[str, Any]
    ) -> None:
        """One frame of the answer, kept as the recorder keeps it: a message, or raw (an
        SSE priming event, a batch)."""
        classified = classify(data)
        if classified.is_message:
            await self._on_message(leg, episode, classified.value, meta)
            return
        text = data.decode("utf-8", "replace")
        kept = text if self.redactor is None else self.redactor.text(text)
        shown = {"stream": episode.stream, **meta}
        episode.events.append(RawEvent(t=self._now(), dir="s2c", text=kept, meta=shown))

    async def _on_message(
        self, leg: _Leg, episode: _Episode, message: JSONObject, meta: Mapping[str, Any]
    ) -> None:
        """Keep a message of the answer; the response completes the exchange, which is
        appended before the client can see it."""
        kind = classify_value(message)
        self._add(episode, "s2c", message, meta)
        if kind is Kind.REQUEST:
            leg.server_requests[_key(message["id"])] = episode
        is_response = kind in (Kind.RESPONSE, Kind.ERROR)
        answers = is_response and _key(message.get("id")) == _key(episode.request.get("id"))
        if answers and not episode.responded:
            episode.responded = True
            with anyio.CancelScope(shield=True):
                await self._append(leg, episode.events, episode.request)

    # -- the cassette ----------------------------------------------------------------------

    def _waiting(self) -> None:
        self.on_info(f"waiting for {self.path}: another process holds it")

    def _stream(self) -> str:
        self._streams += 1
        return f"local-{self._streams}"

    def _now(self) -> float:
        return round(self._base_t + time.monotonic() - self._t0, 6)

    def _add(
        self,
        episode: _Episode,
        direction: Direction,
        message: JSONObject,
        meta: Mapping[str, Any],
        stream: str | None = None,
    ) -> None:
        """Keep a message of ``episode``, redacted as the cassette was; ``stream`` names the
        POST it travelled on when that is not the episode's own (a client's answer)."""
        kept = message if self.redactor is None else self.redactor.value(message)
        shown = {"stream": stream or episode.stream, **meta}
        episode.events.append(MessageEvent(t=self._now(), dir=direction, message=kept, meta=shown))

    async def _append(self, leg: _Leg, events: list[Event], request: JSONObject) -> None:
        """One write under the cassette's lock, numbered after what the file holds now."""
        async with self._appending:
            await acquire(self._lock, self._waiting)
            try:
                data = self.path.read_bytes()
                streams = max((int(n) for n in _STREAM_NUMBER.findall(data)), default=0)
                if leg.ordinal is None and not self.modern:
                    sessions = _SESSION_NUMBER.findall(data)
                    leg.ordinal = max((int(n) for n in sessions), default=0) + 1
                append_events(self.path, _renumbered(events, streams + 1, leg.ordinal))
            finally:
                self._lock.release()
        self.appended.append(describe_request(request))
        if self.on_appended is not None:
            self.on_appended(request)


def _renumbered(events: list[Event], first: int, session: int | None) -> list[Event]:
    """Local stream names become the file's next ``post-N``; the leg's session is added."""
    names: dict[str, str] = {}

    def name(local: str) -> str:
        return names.setdefault(local, f"post-{first + len(names)}")

    out: list[Event] = []
    for event in events:
        if isinstance(event, HttpEvent):
            out.append(attrs.evolve(event, stream=name(event.stream), session=session))
        elif isinstance(event, MessageEvent | RawEvent) and event.meta is not None:
            meta = dict(event.meta)
            head: dict[str, Any] = {"stream": name(str(meta.pop("stream")))}
            if session is not None:
                head["session"] = session
            out.append(attrs.evolve(event, meta={**head, **meta}))
        else:
            out.append(event)
    return out


def _messages(response: httpx.Response) -> list[JSONObject]:
    """The JSON-RPC messages of a whole (read) response, JSON or SSE."""
    if response.headers.get("content-type", "").startswith(_SSE):
        parser = SSEParser()
        frames = [e.data for e in (*parser.feed(response.content), *parser.close())]
    else:
        frames = [response.text]
    classified = [classify(frame) for frame in frames]
    return [c.value for c in classified if c.is_message]


def _key(value: object) -> object:
    return (type(value).__name__, value)


async def serve_extending_http(
    cassette: Cassette,
    extender: HttpExtender,
    *,
    strategy: str | Strategy = "default",
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
    on_miss: Info | None = None,
    on_finish: Callable[[list[MissReport], str], None] | None = None,
    max_message_bytes: int | None = None,
) -> None:
    """Serve ``cassette`` as ``HttpReplayApp`` does, falling through to ``extender``,
    until cancelled; ``on_finish`` then gets the misses left and their summary."""
    from cassette.transports._http import BODY_LIMIT
    from cassette.transports._http_replay import HttpReplayApp
    from cassette.transports.streamable_http import run_app

    app = HttpReplayApp(
        cassette,
        strategy,
        bound_host=host,
        on_miss=on_miss,
        extender=extender,
        max_body=BODY_LIMIT if max_message_bytes is None else max_message_bytes,
    )
    try:
        stop = getattr(app, "stop_streams", None)
        await run_app(app, host, port, app.path, on_ready, on_stop=stop)
    finally:
        with anyio.CancelScope(shield=True):
            await extender.aclose()
        if on_finish is not None:
            on_finish(app.misses, app.summary())
