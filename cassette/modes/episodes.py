"""``new_episodes``: replay what the cassette holds; what it lacks reaches the live server.

Theory of operation
-------------------
The client talks to a ``Replayer`` exactly as in a plain replay. A request the replayer
cannot answer (not recorded, or recorded and used up) is forwarded to the live server
instead of being answered with a miss error:

* the live server is started on the first such request, never before, so a session the
  cassette fully answers starts no server at all;
* the live server gets a handshake of its own before the forwarded request (legacy era):
  the client's ``initialize`` (or, if the client never sent one, the recorded one) and
  ``notifications/initialized``. Its answers are plumbing and go nowhere: the client had
  its handshake from the cassette. A modern-era session needs none: every request
  carries its own envelope;
* ids on the live leg are ours, since the client's could collide with the handshake's;
  the response goes back under the client's id, and a ``notifications/cancelled`` for a
  forwarded request is re-addressed. Progress tokens are the client's own, untouched;
* a live exchange (the client's request as the client sent it, every server message it
  caused, the client's answers to the server's requests) is appended to the cassette as
  **one write, under the cassette's lock, before its response is forwarded**: the next run
  replays it, and two processes extending one cassette never interleave lines. Server
  messages sent while no exchange is open are appended on their own as they come.

What is appended is redacted exactly as the cassette was (its header names the salt and
the rules). What the live server says outside the protocol (stderr, its exit) is not
appended: the cassette already holds a session's account of those. Raw stdout lines are
dropped.
An exchange still open when the session ends (the server never answered) is not appended,
because a recording with no answer would hang the next run.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final

import anyio
import anyio.abc
import attrs

from cassette.core.jsonrpc import (
    REPLAY_MISS,
    JSONObject,
    Kind,
    classify,
    dumps_bytes,
    error_response,
)
from cassette.core.matching import MissReport, Strategy
from cassette.core.model import Direction, MessageEvent
from cassette.core.redaction import Redactor, redact_argv
from cassette.core.replayer import Replayer, Reply
from cassette.errors import CassetteError, TransportClosedError, TransportError
from cassette.registry import get_transport
from cassette.runtime.session import ANSWER_TIMEOUT, _Delivery
from cassette.store.lock import FileLock
from cassette.store.storage import Cassette, append_events
from cassette.transport import Frame, FrameStream, SideEvent, StderrLine, Target, Upstream

__all__ = [
    "Appender",
    "ExtendResult",
    "describe_request",
    "file_appender",
    "redactor_of",
    "serve_extending",
]

#: How long the live server may take to start and answer its handshake.
HANDSHAKE_TIMEOUT: Final = 30.0
#: How long a live server may take to finish its output once the client is done.
DRAIN_TIMEOUT: Final = 10.0

Appender = Callable[[list[MessageEvent]], Awaitable[None]]


@attrs.frozen
class ExtendResult:
    """How a ``new_episodes`` session ended."""

    misses: tuple[MissReport, ...]  # requests neither the cassette nor the server answered
    summary: str
    appended: tuple[str, ...]  # one line per request answered live and appended
    started_server: bool


def file_appender(
    path: str | os.PathLike[str], *, on_wait: Callable[[], None] | None = None
) -> Appender:
    """Append to the cassette at ``path``, each batch under its lock."""
    lock = FileLock(path)

    async def append(events: list[MessageEvent]) -> None:
        await acquire(lock, on_wait)
        try:
            append_events(path, events)
        finally:
            lock.release()

    return append


async def acquire(lock: FileLock, on_wait: Callable[[], None] | None = None) -> None:
    """Wait for ``lock`` without blocking the event loop; cancellable while waiting."""
    told = False
    while not lock.try_acquire():
        if not told and on_wait is not None:
            on_wait()
            told = True
        await anyio.sleep(0.05)


def _frame(message: JSONObject) -> Frame:
    return Frame(dumps_bytes(message) + b"\n")


def describe_request(message: JSONObject) -> str:
    """A request for a person: its method, and a tool call's tool."""
    method = str(message.get("method"))
    params = message.get("params")
    if method == "tools/call" and isinstance(params, dict):
        return f'{method} "{params.get("name")}"'
    return method


@attrs.define
class _Pending:
    """A request we sent the live server: the client's (with its id) or our handshake."""

    client_id: object = None
    handshake: bool = False
    answer: JSONObject | None = None
    done: anyio.Event = attrs.field(factory=anyio.Event)


class _Extender:
    """One client session of ``serve_extending`` (see the module docstring)."""

    def __init__(
        self,
        client: FrameStream,
        cassette: Cassette,
        target: Target,
        *,
        strategy: str | Strategy,
        transport: str,
        appender: Appender,
        on_miss: Callable[[str], None] | None,
        on_info: Callable[[str], None],
        passthrough_stderr: bool,
    ) -> None:
        self.client = client
        self.replayer = Replayer(cassette, strategy)
        self.header = cassette.header
        self.target = target
        self.transport = transport
        self.appender = appender
        self.on_miss = on_miss
        self.on_info = on_info
        self.passthrough_stderr = passthrough_stderr
        self.recorded_init = next(
            (m for m in cassette.messages("c2s") if m.get("method") == "initialize"), None
        )
        self.client_init: JSONObject | None = None
        self.redactor = redactor_of(cassette)
        self._t0 = time.monotonic()
        self._base_t = cassette.events[-1].t if cassette.events else 0.0
        self.tg: anyio.abc.TaskGroup | None = None  # owns the live server
        self.delivery: _Delivery | None = None  # replayed replies (lock shared with ours)
        self.live: Upstream | None = None
        self.live_failed: str | None = None
        self.started_server = False
        self.client_done = anyio.Event()
        self.live_eof = anyio.Event()
        self._send_lock = anyio.Lock()
        self._next_id = 0
        self.pending: dict[int, _Pending] = {}
        self.forwarded: dict[object, int] = {}  # client id -> our id, while in flight
        self.server_requests: set[object] = set()  # live server requests awaiting the client
        self.open = 0  # exchanges in flight: forwarded requests plus server requests
        self.batch: list[MessageEvent] = []
        self.appended: list[str] = []
        self.client_gone = False

    # -- the client side -----------------------------------------------------------------

    async def to_client(self, messages: Sequence[Any]) -> None:
        """Send what the live server said; one lock orders it with the replayed replies."""
        if not messages or self.client_gone:
            return
        data = b"".join(dumps_bytes(m) + b"\n" for m in messages)
        async with self._send_lock:
            try:
                await self.client.send(Frame(data))
            except TransportClosedError:
                self.client_gone = True

    async def deliver(self, reply: Reply) -> None:
        """Send what the cassette answers, as a plain replay does (waiting for the client's
        answers to replayed server requests, with their timeout, and warning)."""
        if self.delivery is None or self.client_gone:
            return
        try:
            await self.delivery.deliver(reply)
        except TransportClosedError:
            self.client_gone = True

    async def on_client_frame(self, frame: Frame) -> None:
        classified = classify(frame.data)
        message = classified.value
        if classified.kind is Kind.REQUEST:
            await self._request(message)
        elif classified.kind in (Kind.RESPONSE, Kind.ERROR) and self._answers_live(message):
            await self._answer_to_live(message)
        elif classified.kind is Kind.NOTIFICATION:
            await self.deliver(self.replayer.receive(message))
            await self._notification_to_live(message)
        else:
            await self.deliver(self.replayer.receive_frame(frame.data))

    async def _request(self, message: JSONObject) -> None:
        if message.get("method") == "initialize":
            self.client_init = message
        reply = self.replayer.receive(message)
        if reply.miss is None:
            await self.deliver(reply)
            return
        if await self._ensure_live() and await self._forward(message):
            self.replayer.misses.remove(reply.miss)  # answered after all: not a miss
            return
        if self.on_miss is not None:
            self.on_miss(self.replayer.describe(reply.miss))
        await self.deliver(reply)

    def _answers_live(self, message: JSONObject) -> bool:
        return self.live is not None and message.get("id") in self.server_requests

    async def _answer_to_live(self, message: JSONObject) -> None:
        self.server_requests.discard(message.get("id"))
        self.open -= 1
        self._add("c2s", message)
        await self._send_live(message)
        await self._flush_if_settled()

    async def _notification_to_live(self, message: JSONObject) -> None:
        if self.live is None or message.get("method") == "notifications/initialized":
            return
        params = message.get("params")
        if message.get("method") == "notifications/cancelled" and isinstance(params, dict):
            ours = self.forwarded.get(params.get("requestId"))
            if ours is not None:
                message = {**message, "params": {**params, "requestId": ours}}
        self._add("c2s", message)
        await self._send_live(message)
        await self._flush_if_settled()

    # -- the live side -------------------------------------------------------------------

    async def _ensure_live(self) -> bool:
        if self.live is not None:
            return True
        if self.live_failed is not None or self.tg is None:
            return False
        command = " ".join(redact_argv(self.target.command))  # stderr ends up in CI logs
        self.on_info(f"starting the server for a request the cassette lacks: {command}")
        try:
            await self.tg.start(self._run_live)
        except Exception as raised:  # reported to the person; the request is then a miss
            exc = _unwrap(raised)
            if not isinstance(exc, CassetteError | OSError | TimeoutError):
                raise
            self.live_failed = str(exc) or type(exc).__name__
            self.on_info(f"the server could not answer: {self.live_failed}")
            return False
        return True

    async def _run_live(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        plugin = get_transport(self.transport)
        async with (
            plugin.connect(self.target, on_side_event=self._side_event) as upstream,
            anyio.create_task_group() as tg,
        ):
            self.started_server = True
            tg.start_soon(self._pump_live, upstream)
            with anyio.fail_after(HANDSHAKE_TIMEOUT):
                await self._handshake(upstream)
            self.live = upstream
            task_status.started()
            await self.client_done.wait()
            await upstream.close_input()
            with anyio.move_on_after(DRAIN_TIMEOUT):
                await self.live_eof.wait()
            tg.cancel_scope.cancel()

    async def _handshake(self, upstream: Upstream) -> None:
        init = self.client_init or self.recorded_init
        if self.replayer.era == "modern" or init is None:
            return
        pending = _Pending(handshake=True)
        ours = self._new_id()
        self.pending[ours] = pending
        request = {"jsonrpc": "2.0", "id": ours, "method": "initialize"}
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
        recorded = self.header.protocol_version
        if recorded and result.get("protocolVersion") != recorded:
            self.on_info(
                f"warning: the server now speaks {result.get('protocolVersion')}; "
                f"the cassette was recorded at {recorded}"
            )
        await upstream.send(_frame({"jsonrpc": "2.0", "method": "notifications/initialized"}))

    async def _forward(self, message: JSONObject) -> bool:
        ours = self._new_id()
        client_id = message["id"]
        self.pending[ours] = _Pending(client_id=client_id)
        self.forwarded[client_id] = ours
        self.open += 1
        mark = len(self.batch)
        self._add("c2s", message)
        if await self._send_live({**message, "id": ours}):
            self.appended.append(describe_request(message))
            return True
        self.pending.pop(ours, None)
        self.forwarded.pop(client_id, None)
        self.open -= 1
        del self.batch[mark:]
        return False

    async def _send_live(self, message: JSONObject) -> bool:
        if self.live is None:
            return False
        try:
            await self.live.send(_frame(message))
        except TransportClosedError as exc:
            self._live_gone(f"the server stopped reading: {exc}")
            return False
        return True

    async def _pump_live(self, upstream: Upstream) -> None:
        try:
            while True:
                try:
                    frame = await upstream.receive()
                except anyio.EndOfStream:
                    break
                await self._on_live_frame(frame)
        finally:
            self.live_eof.set()
            self._live_gone("the server exited")
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
            self.on_info("the server exited in the middle of an exchange; it was not appended")
            self.batch = []
        if not self.client_done.is_set():
            reason = f"cassette-mcp: {self.live_failed or 'the server exited'} before answering"
            await self.to_client([error_response(cid, REPLAY_MISS, reason) for cid in unanswered])

    def _live_gone(self, reason: str) -> None:
        if self.live is not None or self.live_failed is None:
            self.live_failed = reason
        self.live = None

    async def _on_live_frame(self, frame: Frame) -> None:
        classified = classify(frame.data)
        if not classified.is_message:
            return
        message: JSONObject = classified.value
        if classified.kind in (Kind.RESPONSE, Kind.ERROR):
            msg_id = message.get("id")
            pending = self.pending.pop(msg_id, None) if isinstance(msg_id, int) else None
            if pending is None:
                return
            if pending.handshake:
                pending.answer = message
                pending.done.set()
                return
            self.forwarded.pop(pending.client_id, None)
            answer = {**message, "id": pending.client_id}
            self.open -= 1
            self._add("s2c", answer)
            await self._flush_if_settled()
            await self.to_client([answer])
            return
        if self.live is None:
            return  # said during our handshake: plumbing the client must not see
        if classified.kind is Kind.REQUEST:
            self.server_requests.add(message["id"])
            self.open += 1
        self._add("s2c", message)
        await self._flush_if_settled()
        await self.to_client([message])

    def _side_event(self, event: SideEvent) -> None:
        if isinstance(event, StderrLine) and self.passthrough_stderr:
            with contextlib.suppress(OSError):
                os.write(2, event.data)

    # -- the cassette --------------------------------------------------------------------

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _add(self, direction: Direction, message: JSONObject) -> None:
        t = round(self._base_t + time.monotonic() - self._t0, 6)
        kept = message if self.redactor is None else self.redactor.value(message)
        self.batch.append(MessageEvent(t=t, dir=direction, message=kept))

    async def _flush_if_settled(self) -> None:
        if self.open == 0 and self.batch:
            events, self.batch = self.batch, []
            with anyio.CancelScope(shield=True):
                await self.appender(events)

    def finish(self) -> None:
        if self.batch:
            self.on_info(
                f"{len(self.batch)} message(s) of an exchange the server never finished "
                "were not appended"
            )
            self.batch = []


def redactor_of(cassette: Cassette) -> Redactor | None:
    """What is appended is redacted as the cassette was (same salt, same rules)."""
    info = cassette.header.redaction
    if not info:
        return None
    names = info.get("env", ())
    literals = [v for n in names if isinstance(n, str) and (v := os.environ.get(n))]
    return Redactor.from_header(info, literals)


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def serve_extending(
    client: FrameStream,
    cassette: Cassette,
    command: Sequence[str],
    *,
    appender: Appender,
    strategy: str | Strategy = "default",
    transport: str = "stdio",
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    on_miss: Callable[[str], None] | None = None,
    on_info: Callable[[str], None] | None = None,
    passthrough_stderr: bool = True,
    answer_timeout: float = ANSWER_TIMEOUT,
) -> ExtendResult:
    """Serve one client from ``cassette``; requests it lacks go to ``command``, started
    lazily, and are appended through ``appender`` (see the module docstring)."""

    def info(text: str) -> None:
        if on_info is not None:
            on_info(text)
        else:
            sys.stderr.write(f"cassette: {text}\n")

    target = Target(command=tuple(command), env=env, cwd=cwd)
    ext = _Extender(
        client,
        cassette,
        target,
        strategy=strategy,
        transport=transport,
        appender=appender,
        on_miss=on_miss,
        on_info=info,
        passthrough_stderr=passthrough_stderr,
    )
    async with anyio.create_task_group() as live_tg:
        ext.tg = live_tg
        async with anyio.create_task_group() as replies_tg:
            ext.delivery = _Delivery(
                client,
                ext.replayer,
                replies_tg,
                on_miss=None,  # a miss may still be answered live: _request reports it
                on_warning=lambda text: info(f"warning: {text}"),
                answer_timeout=answer_timeout,
                pacing=None,
            )
            ext._send_lock = ext.delivery.lock
            await ext.deliver(ext.replayer.start())
            while not ext.client_gone:
                try:
                    frame = await client.receive()
                except anyio.EndOfStream:
                    break
                await ext.on_client_frame(frame)
            replies_tg.cancel_scope.cancel()  # nobody is left to wait for answers from
        ext.client_done.set()  # the live server, if started, winds down in its own time
    ext.finish()
    await client.aclose()
    replayer = ext.replayer
    return ExtendResult(
        tuple(replayer.misses), replayer.summary(), tuple(ext.appended), ext.started_server
    )
