"""``new_episodes``: replay what the cassette holds; what it lacks reaches the live server.

Theory of operation
-------------------
An ``Extension`` is a ``cassette.runtime.FallbackFactory``: served through the one serve
path (``cassette.runtime.serve``), every client session gets a ``LiveLeg``, on any front.
The session talks to its ``Replayer`` exactly as in a plain replay; a request the replayer
cannot answer (not recorded, or recorded and used up) is handed to the leg instead of
being answered with a miss error:

* the live server is reached on the first such request, never before, so a session the
  cassette fully answers starts (or contacts) no server at all. It is reached through the
  transport the mode was given (an ``UpstreamConnector``): a command over stdio, a URL over
  streamable HTTP, SSE or a plugin's transport. Headers the client sent to an HTTP front
  (its credentials) go with the leg's requests; they are never written;
* a legacy-era leg gets a handshake of its own before the forwarded request: the
  client's ``initialize`` (or, if the client never sent one, the recorded one) and
  ``notifications/initialized``. Its answers are plumbing and go nowhere: the client had
  its handshake from the cassette. A modern-era leg needs none;
* ids on the leg are ours, since the client's could collide with the handshake's; the
  response goes back under the client's id, and a ``notifications/cancelled`` for a
  forwarded request is re-addressed. Progress tokens are the client's own, untouched;
* what the live server says reaches the client through the session's ``emit``, each
  message tagged with the client request it belongs to (the response's id; over HTTP the
  POST it travelled on; a progress token; else the one request in flight), so an HTTP
  front puts it on that request's stream;
* a live exchange (the client's request as the client sent it, every server message it
  caused, the client's answers to the server's requests) is appended as **one write,
  under the cassette's lock, before its response reaches the client**: the next run
  replays it, and two processes extending one cassette never interleave lines. What is
  appended is redacted by the one gate's policy (``cassette.store.gate.joined``): the
  built-in rules, the project's and the command's, the header's JSON Pointer paths and
  the values of the variables it names; the header's patterns are recognised by digest
  and must be given again by the project or the command (nothing read from a cassette is
  compiled), following the server's schemas as a recording does.
  In a cassette recorded over streamable HTTP it is shaped as that transport records:
  each POST a ``post-N`` stream numbered after what the file holds at the time
  of the write, the leg's session an ordinal of its own (legacy era).

Not appended: the leg's handshake; what the live server says outside the protocol
(stderr, its exit), of which the cassette already holds a session's account; raw output;
and an exchange still open when the session ends (the server never answered), because a
recording with no answer would hang the next run. A server that cannot be reached leaves
the request a miss, answered as in a replay, with a one-line reason.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

import anyio
import anyio.abc
import attrs

from cassette.core.recording.hooks import call_hook
from cassette.core.redaction.schemas import SchemaBook
from cassette.core.redaction.secret_rules import secret_header_values
from cassette.core.wire.deadlines import HANDSHAKE_TIMEOUT
from cassette.core.wire.ids import IdKey, id_key
from cassette.core.wire.jsonrpc import (
    REPLAY_MISS,
    Classified,
    JSONObject,
    Kind,
    classify,
    dumps_bytes,
    error_response,
)
from cassette.core.wire.meta import HEADERS, IN_REPLY_TO, SSE, STREAM
from cassette.core.wire.model import Direction, Event, MessageEvent, era_of
from cassette.errors import CassetteError, TransportClosedError, TransportError, sole_exception
from cassette.modes.append import Appender
from cassette.modes.episode import (
    ExtendOptions,
    carried_headers,
    describe_request,
    redactor_of,
)
from cassette.registry import get_connector
from cassette.runtime.sink import stderr_passthrough
from cassette.store.gate import shown, shown_argv
from cassette.store.gate import shown as shown_text
from cassette.store.storage import Cassette
from cassette.transport import (
    ConnectOptions,
    Emit,
    Frame,
    Reply,
    SideEvent,
    StderrLine,
    Target,
    Upstream,
)

__all__ = ["ExtendOptions", "Extension", "LiveLeg", "describe_request", "redactor_of"]

#: How long a live server may take to finish its output once the client is done.
DRAIN_TIMEOUT: Final = 10.0
Info = Callable[[str], None]
#: Requests a live leg never forwards: a handshake belongs to the session that makes it,
#: and appending a client's ``initialize`` to a modern-era cassette would break it.
_NEVER_FORWARDED: Final = frozenset({"initialize", "server/discover"})
#: what --prime never replays: the handshake is the leg's own, and a ping changes nothing
_LIFECYCLE: Final = _NEVER_FORWARDED | {"ping"}


class Extension:
    """``new_episodes`` for one serving: a ``LiveLeg`` per client session (see above).

    ``target`` is the live server, reached and reported as ``options`` say
    (``cassette.modes.episode.ExtendOptions``).
    """

    def __init__(
        self,
        cassette: Cassette,
        path: str | os.PathLike[str],
        target: Target,
        options: ExtendOptions = ExtendOptions(),
    ) -> None:
        self.cassette = cassette
        self.before_record = options.before_record
        #: replay the session's earlier requests to the fresh server before the missed one
        self.prime = options.prime
        self.target = target
        self.transport = options.transport
        self.on_info: Info = options.on_info or (lambda _text: None)
        self.on_appended = options.on_appended
        self.passthrough_stderr = options.passthrough_stderr
        self.modern = era_of(cassette.header) == "modern"
        self.recorded_version = cassette.header.protocol_version
        self.recorded_init = next(
            (m for m in cassette.messages("c2s") if m.get("method") == "initialize"), None
        )
        self.redactor = redactor_of(cassette, options.redactor)
        # One session for everything appended in this serving: a secret met in one
        # appended exchange is redacted wherever it recurs in the next.
        self.redaction = None if self.redactor is None else self.redactor.session()
        self.schemas = SchemaBook()
        for event in cassette.events:  # the tools the recording listed, with their schemas
            if isinstance(event, MessageEvent):
                self.schemas.schemas(event.dir, event.message, _stream_of(event.meta))
        self.appender = Appender(cassette, path, self.on_info)
        self.appended: list[str] = []
        self.started_server = False
        self._t0 = time.monotonic()
        self._base_t = cassette.events[-1].t if cassette.events else 0.0

    def __call__(self, emit: Emit, tg: anyio.abc.TaskGroup) -> LiveLeg:
        return LiveLeg(self, emit, tg)

    def now(self) -> float:
        """Times of appended events follow the cassette's last one."""
        return round(self._base_t + time.monotonic() - self._t0, 6)

    def describe_target(self) -> str:
        if self.target.url:
            return shown(self.target.url)
        return shown_argv(self.target.command)  # stderr ends up in CI logs


@attrs.define
class _Pending:
    """A request we sent the live server: the client's (with its id) or our handshake."""

    client_id: object = None
    handshake: bool = False
    request: JSONObject | None = None
    stream: str | None = None  # its POST, in an HTTP cassette's shape
    answer: JSONObject | None = None
    done: anyio.Event = attrs.field(factory=anyio.Event)


class LiveLeg:
    """One client session's live side (a ``cassette.runtime.Fallback``)."""

    def __init__(self, extension: Extension, emit: Emit, tg: anyio.abc.TaskGroup) -> None:
        self.ext = extension
        self.emit = emit
        self.tg = tg
        self.client_init: JSONObject | None = None
        self.headers: dict[str, str] | None = None
        self.live: Upstream | None = None
        self.failed: str | None = None
        self.client_done = anyio.Event()
        self.drained = anyio.Event()  # the live server's output ended
        self.finished = anyio.Event()  # the live side is over
        self.started = False
        self.ordinal: int | None = None  # its session in an HTTP cassette, fixed on append
        self._next_id = 0
        self._streams = 0
        self.pending: dict[int, _Pending] = {}
        self.forwarded: dict[IdKey, int] = {}  # client id -> our id, while in flight
        self.tokens: dict[IdKey, object] = {}  # progress token -> client id
        self.server_requests: dict[IdKey, str | None] = {}  # awaiting the client: stream
        self.open = 0  # exchanges in flight: forwarded requests plus server requests
        self.batch: list[Event] = []
        self.answered: list[JSONObject] = []  # forwarded requests of ``batch``, answered
        self.history: list[JSONObject] = []  # the client's requests so far, for priming
        self.missed: JSONObject | None = None  # the request that started the live side

    # -- what the conversation offers ------------------------------------------------------

    async def seen(self, frame: Frame, classified: Classified) -> bool:
        message = classified.value
        if classified.kind is Kind.REQUEST and message.get("method") == "initialize":
            self.client_init = message
        elif classified.kind is Kind.REQUEST and message.get("method") not in _LIFECYCLE:
            self.history.append(message)
        elif classified.kind in (Kind.RESPONSE, Kind.ERROR):
            key = id_key(message.get("id"))
            if self.live is not None and key in self.server_requests:
                await self._answer_to_live(message, self.server_requests.pop(key))
                return True
        elif classified.kind is Kind.NOTIFICATION:
            await self._notification_to_live(message)
        return False

    async def take(self, request: dict[str, Any], frame: Frame) -> bool:
        if request.get("method") in _NEVER_FORWARDED:
            return False  # the leg's handshake is its own: the client's stays a miss
        if self.headers is None:
            self.headers = carried_headers(frame.meta)
            raw = frame.meta.get(HEADERS) if frame.meta else None
            if raw and self.ext.redaction is not None:  # a live server may echo them back
                for value in secret_header_values(raw):
                    self.ext.redaction.remember(value, "header")
        if self.live is None:
            self.missed = request
        return await self._ensure_live() and await self._forward(request)

    async def aclose(self) -> None:
        self.client_done.set()
        if self.started:
            with anyio.move_on_after(DRAIN_TIMEOUT + 5):
                await self.finished.wait()
        if self.batch:
            self.ext.on_info(
                f"{len(self.batch)} message(s) of an exchange the server never finished "
                "were not appended"
            )
            self.batch = []

    # -- the client side -------------------------------------------------------------------

    async def _answer_to_live(self, message: JSONObject, stream: str | None) -> None:
        self.open -= 1
        self._add("c2s", message, stream=self._stream() if stream is not None else None)
        await self._send_live(message)
        await self._flush_if_settled()

    async def _notification_to_live(self, message: JSONObject) -> None:
        if self.live is None or message.get("method") == "notifications/initialized":
            return
        params = message.get("params")
        if message.get("method") == "notifications/cancelled" and isinstance(params, dict):
            ours = self.forwarded.get(id_key(params.get("requestId")))
            if ours is not None:
                message = {**message, "params": {**params, "requestId": ours}}
        await self._send_live(message)

    async def _to_client(self, message: JSONObject, origin: object, *, responded: bool) -> None:
        if self.client_done.is_set():
            return
        pending = origin is not None and not responded
        await self.emit(
            Reply((message,), metas=(None,), origin=origin, responded=responded, pending=pending)
        )

    # -- the live side ---------------------------------------------------------------------

    async def _ensure_live(self) -> bool:
        if self.live is not None:
            return True
        if self.failed is not None or self.client_done.is_set():
            return False
        where = self.ext.describe_target()
        if self.ext.target.url:
            self.ext.on_info(f"reaching {where} for a request the cassette lacks")
        else:
            self.ext.on_info(f"starting the server for a request the cassette lacks: {where}")
        try:
            await self.tg.start(self._run_live)
        except Exception as raised:  # reported to the person; the request is then a miss
            exc = sole_exception(raised)
            if not isinstance(exc, CassetteError | OSError | TimeoutError):
                raise
            self.failed = str(exc) or type(exc).__name__
            self.ext.on_info(f"the server could not answer: {self.failed}")
            return False
        return True

    async def _run_live(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        target = self.ext.target
        if self.headers and target.url:
            target = attrs.evolve(target, headers={**(target.headers or {}), **self.headers})
        options = ConnectOptions(on_side_event=self._side_event)
        self.started = True
        try:
            async with (
                get_connector(self.ext.transport).connect(target, options) as upstream,
                anyio.create_task_group() as tg,
            ):
                self.ext.started_server = True
                tg.start_soon(self._pump_live, upstream)
                with anyio.fail_after(HANDSHAKE_TIMEOUT):
                    await self._handshake(upstream)
                if self.ext.prime:
                    await self._prime(upstream)
                self.live = upstream
                task_status.started()
                await self.client_done.wait()
                await upstream.send_eof()
                with anyio.move_on_after(DRAIN_TIMEOUT):
                    await self.drained.wait()
                tg.cancel_scope.cancel()
        finally:
            self.finished.set()

    async def _handshake(self, upstream: Upstream) -> None:
        init = self.client_init or self.ext.recorded_init
        if self.ext.modern or init is None:
            return
        pending = _Pending(handshake=True)
        ours = self._new_id()
        self.pending[ours] = pending
        request: JSONObject = {"jsonrpc": "2.0", "id": ours, "method": "initialize"}
        if "params" in init:
            request["params"] = init["params"]
        await upstream.send(_frame(request))
        await pending.done.wait()
        answer = pending.answer or {}
        result = answer.get("result")
        if not isinstance(result, dict):
            error = answer.get("error")
            reason = error.get("message") if isinstance(error, dict) else "no answer"
            raise TransportError(f"the server refused its initialize: {reason}")
        recorded = self.ext.recorded_version
        if recorded and result.get("protocolVersion") != recorded:
            self.ext.on_info(
                f"warning: the server now speaks {result.get('protocolVersion')}; "
                f"the cassette was recorded at {recorded}"
            )
        await upstream.send(_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    async def _prime(self, upstream: Upstream) -> None:
        """``--prime``: a fresh server never saw what the client did earlier in this session
        (the cassette answered it), so a stateful server would answer the missed request
        from the wrong state. Send it the session's earlier requests first, in order; their
        answers are waited for and dropped (never appended, never shown to the client)."""
        earlier: list[JSONObject] = []
        for request in self.history:
            if request is self.missed:
                break
            earlier.append(request)
        for request in earlier:
            ours = self._new_id()
            pending = self.pending[ours] = _Pending(handshake=True)
            await upstream.send(_frame({**request, "id": ours}))
            with anyio.fail_after(HANDSHAKE_TIMEOUT):
                await pending.done.wait()
        if earlier:
            self.ext.on_info(f"primed the server with {len(earlier)} earlier request(s)")

    async def _forward(self, message: JSONObject) -> bool:
        ours = self._new_id()
        client_id = message["id"]
        stream = self._stream() if self.ext.appender.http else None
        self.pending[ours] = _Pending(client_id=client_id, request=message, stream=stream)
        self.forwarded[id_key(client_id)] = ours
        token = _progress_token(message)
        if token is not None:
            self.tokens[id_key(token)] = client_id
        self.open += 1
        mark = len(self.batch)
        self._add("c2s", message, stream=stream)
        if await self._send_live({**message, "id": ours}):
            return True
        self.pending.pop(ours, None)
        self.forwarded.pop(id_key(client_id), None)
        self.open -= 1
        del self.batch[mark:]
        return False

    async def _send_live(self, message: JSONObject) -> bool:
        if self.live is None:
            return False
        try:
            await self.live.send(_frame(message))
        except TransportClosedError as exc:
            self._gone(f"the server stopped reading: {exc}")
            return False
        return True

    async def _pump_live(self, upstream: Upstream) -> None:
        try:
            while True:
                try:
                    frame = await upstream.receive()
                except anyio.EndOfStream:
                    break
                except TransportError as exc:
                    self._gone(str(exc))
                    break
                await self._on_live_frame(frame)
        finally:
            self.drained.set()
            self._gone(self.failed or "the server exited")
            with anyio.CancelScope(shield=True):
                await self._abandon()

    async def _abandon(self) -> None:
        """The server is gone: nothing in flight will be answered, or appended."""
        unanswered = [p.client_id for p in self.pending.values() if not p.handshake]
        for pending in self.pending.values():
            pending.done.set()  # a handshake waiting for its answer gets none
        self.pending.clear()
        self.forwarded.clear()
        self.server_requests.clear()
        self.open = 0
        if self.batch:
            self.ext.on_info("the server exited in the middle of an exchange; it was not appended")
            self.batch = []
        reason = f"cassette-mcp: {self.failed or 'the server exited'} before answering"
        for client_id in unanswered:
            error = error_response(client_id, REPLAY_MISS, reason)
            await self._to_client(error, client_id, responded=True)

    def _gone(self, reason: str) -> None:
        if self.live is not None or self.failed is None:
            self.failed = reason
        self.live = None

    async def _on_live_frame(self, frame: Frame) -> None:
        classified = classify(frame.data)
        if not classified.is_message:
            return
        message: JSONObject = classified.value
        if classified.kind in (Kind.RESPONSE, Kind.ERROR):
            await self._on_response(message, frame.meta)
            return
        if self.live is None:
            return  # said during our handshake: plumbing the client must not see
        owner = self._owner(message, frame.meta)
        stream = owner.stream if owner is not None else None
        if classified.kind is Kind.REQUEST:
            self.server_requests[id_key(message["id"])] = stream
            self.open += 1
        self._add("s2c", message, stream=stream, meta=_sse(frame.meta))
        await self._flush_if_settled()
        origin = owner.client_id if owner is not None else None
        await self._to_client(message, origin, responded=False)

    async def _on_response(self, message: JSONObject, meta: Mapping[str, Any] | None) -> None:
        msg_id = message.get("id")
        pending = self.pending.pop(msg_id, None) if isinstance(msg_id, int) else None
        if pending is None:
            return
        if pending.handshake:
            pending.answer = message
            pending.done.set()
            return
        self.forwarded.pop(id_key(pending.client_id), None)
        answer = {**message, "id": pending.client_id}
        self.open -= 1
        self._add("s2c", answer, stream=pending.stream, meta=_sse(meta))
        if pending.request is not None:
            self.answered.append(pending.request)
        await self._flush_if_settled()
        await self._to_client(answer, pending.client_id, responded=True)

    def _owner(self, message: JSONObject, meta: Mapping[str, Any] | None) -> _Pending | None:
        """The forwarded request a live server message belongs to, as far as it shows."""
        ours = meta.get(IN_REPLY_TO) if meta else None
        if isinstance(ours, int) and ours in self.pending:
            return self.pending[ours]
        token = _progress_token(message)
        client_id = self.tokens.get(id_key(token)) if token is not None else None
        if client_id is not None:
            mine = self.forwarded.get(id_key(client_id))
            if mine is not None and mine in self.pending:
                return self.pending[mine]
        in_flight = [p for p in self.pending.values() if not p.handshake]
        return in_flight[0] if len(in_flight) == 1 else None

    def _side_event(self, event: SideEvent) -> None:
        if isinstance(event, StderrLine) and self.ext.passthrough_stderr:
            stderr_passthrough(event.data)

    # -- the cassette ----------------------------------------------------------------------

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _stream(self) -> str:
        self._streams += 1
        return f"local-{self._streams}"

    def _add(
        self,
        direction: Direction,
        message: JSONObject,
        *,
        stream: str | None = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        session = self.ext.redaction
        schemas = None
        if session is not None:  # learnt from what passed, whatever the hook keeps
            schemas = self.ext.schemas.schemas(direction, message, stream)
        hook = self.ext.before_record
        if hook is not None:
            say = shown_text if session is None else session.text
            hooked = call_hook(hook, message, direction, say)
            if hooked is None:
                return  # the hook dropped it: what passed is unchanged, only not kept
            message = hooked
        kept, pointers = message, None
        if session is not None:
            kept, found = session.message(message, schemas)
            pointers = found or None
        shown: dict[str, Any] | None = None
        if stream is not None:
            shown = {STREAM: stream, **(meta or {})}
        event = MessageEvent(
            t=self.ext.now(), dir=direction, message=kept, meta=shown, redacted=pointers
        )
        self.batch.append(event)

    async def _flush_if_settled(self) -> None:
        if self.open != 0 or not self.batch:
            return
        events, self.batch = self.batch, []
        done, self.answered = self.answered, []
        with anyio.CancelScope(shield=True):
            await self.ext.appender.append(events, self)
        for request in done:
            self.ext.appended.append(describe_request(request))
            if self.ext.on_appended is not None:
                self.ext.on_appended(request)


def _stream_of(meta: Mapping[str, Any] | None) -> object:
    return meta.get(STREAM) if meta else None


def _frame(message: JSONObject) -> Frame:
    return Frame(dumps_bytes(message) + b"\n")


def _progress_token(message: JSONObject) -> object:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if isinstance(meta, dict):
        return meta.get("progressToken")
    return params.get("progressToken") if isinstance(params, dict) else None


def _sse(meta: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Whether the leg's answer came as an event stream (an HTTP cassette keeps that)."""
    return {SSE: True} if meta and meta.get(SSE) else None
