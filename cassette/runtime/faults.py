"""The fault overlay: a client session whose replies a fault plan may spoil, on every front.

Theory of operation
-------------------
``FaultedSession`` wraps one client session (a ``PolicyServedSession``: a cassette's replay, a
mock, an extension) and keeps its interface, so every front serves it unchanged; the
pool that opens conversations wraps each in one when its policy has a plan
(``cassette.runtime.conversation``). For each client request the session's ``Injector``
(``cassette.core.replay.faults``) says whether a fault replaces the answer:

* ``delay``: the request is answered as usual, ``seconds`` later, through the session's
  ``emit`` (a reply that is ``pending`` meanwhile, so an HTTP front holds the POST open
  and a stdio front goes on reading: other requests and cancellations are not held up);
* ``timeout``: no answer ever; a ``notifications/cancelled`` for it ends the wait (an HTTP
  front then ends that POST's stream without a response, as a live server does);
* ``error``: a JSON-RPC error with the rule's code, message and data;
* ``malformed``: a frame that is not JSON (the start of a response cut off, or the
  rule's ``text``) where the answer would be;
* ``disconnect``: the connection is cut without an answer (``Reply.drops``): stdio
  closes its stream, HTTP drops the request's connection mid-response;
* ``exit``: as ``disconnect``, and the serving stops as if the server process had exited
  with ``exit-code`` (the command exits with it).

A faulted request never reaches the responder, except a delayed one: its recording stays
unplayed, so a client that retries gets the recorded answer, as it would from a server
that failed once. The cassette is never modified.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import anyio
import anyio.abc

from cassette.core.replay.faults import FaultRule, Injector
from cassette.core.replay.reply import Reply
from cassette.core.wire.ids import id_key
from cassette.core.wire.jsonrpc import (
    Classified,
    JSONObject,
    Kind,
    RawFrame,
    classify,
    dumps,
    error_response,
)
from cassette.runtime.policy import ReplayResult, RuntimeServedSession, Say
from cassette.transport import Emit, Frame, Outgoing

__all__ = ["FaultedSession"]


class FaultedSession:
    """A client session with a fault plan laid over it (see the module docstring).

    ``tg`` runs delayed answers (without one, a delay holds the session's reading, as a
    single-threaded server would); ``on_exit`` is told the code of an ``exit`` fault, and
    once ``exited`` is set (by any session of the serving) every message is dropped: a
    front may take a moment to stop, and the server it stands for is gone already.
    """

    def __init__(
        self,
        inner: RuntimeServedSession,
        injector: Injector,
        emit: Emit,
        *,
        tg: anyio.abc.TaskGroup | None = None,
        on_fault: Say | None = None,
        on_exit: Callable[[int], None] | None = None,
        exited: anyio.Event | None = None,
    ) -> None:
        self.inner = inner
        self._exited = exited
        self._injector = injector
        self._emit = emit
        self._tg = tg
        self._on_fault = on_fault
        self._on_exit = on_exit
        self._unanswered: dict[object, object] = {}  # id key -> live id, timed out

    # -- the client session, unchanged -----------------------------------------------------

    @property
    def changed(self) -> anyio.Event:
        return self.inner.changed

    def start(self) -> Reply:
        return self.inner.start()

    def undelivered(self, server_id: object) -> Reply:
        return self.inner.undelivered(server_id)

    def remaining(self) -> float:
        return self.inner.remaining()

    def overdue(self) -> list[Reply]:
        return self.inner.overdue()

    def paces(self, reply: Reply) -> bool:
        return self.inner.paces(reply)

    def paced(self, reply: Reply) -> AsyncIterator[Sequence[Outgoing]]:
        return self.inner.paced(reply)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def result(self) -> ReplayResult:
        return self.inner.result()

    def end_of_input(self) -> Reply:
        if self._exited is not None and self._exited.is_set():
            return Reply()  # the server is gone: it says nothing more
        return self.inner.end_of_input()

    # -- where faults come in --------------------------------------------------------------

    async def receive(self, frame: Frame, classified: Classified | None = None) -> Reply:
        if classified is None:
            classified = classify(frame.data)
        if self._exited is not None and self._exited.is_set():
            return Reply(drops=True)  # the server is gone: nothing is answered any more
        if classified.kind is Kind.NOTIFICATION:
            await self._cancelled(classified.value)
        if classified.kind is not Kind.REQUEST:
            return await self.inner.receive(frame, classified)
        request: JSONObject = classified.value
        rule = self._injector.decide(request)
        if rule is None:
            return await self.inner.receive(frame, classified)
        if self._on_fault is not None:
            self._on_fault(f"{_label(request)}: injected {rule.describe()}")
        return await self._inject(rule, request, frame)

    async def _inject(self, rule: FaultRule, request: JSONObject, frame: Frame) -> Reply:
        request_id = request.get("id")
        if rule.kind == "delay":
            return await self._delay(rule.seconds, request_id, frame)
        if rule.kind == "timeout":
            self._unanswered[id_key(request_id)] = request_id
            return Reply(origin=request_id, pending=True)
        if rule.kind == "error":
            error = error_response(request_id, rule.code, rule.message)
            if rule.data is not None:
                error["error"]["data"] = rule.data
            return Reply((error,), metas=(None,), origin=request_id, responded=True)
        if rule.kind == "malformed":
            frame_bytes = _malformed(rule, request_id)
            return Reply((RawFrame(frame_bytes),), metas=(None,), origin=request_id, responded=True)
        if rule.kind == "exit" and self._on_exit is not None:
            self._on_exit(rule.exit_code)
        return Reply(origin=request_id, drops=True)

    async def _delay(self, seconds: float, request_id: object, frame: Frame) -> Reply:
        if self._tg is None:
            await anyio.sleep(seconds)
            return await self.inner.receive(frame)
        reply = await self.inner.receive(frame)
        if not reply.messages or reply.pending or reply.closes:
            return reply  # nothing of ours to hold back (a live answer comes on its own)
        self._tg.start_soon(self._later, seconds, reply)
        return Reply(origin=request_id, pending=True)

    async def _later(self, seconds: float, reply: Reply) -> None:
        await anyio.sleep(seconds)
        await self._emit(reply)

    async def _cancelled(self, note: JSONObject) -> None:
        """The client gave up on a request that timed out: an HTTP front may end its POST."""
        if note.get("method") != "notifications/cancelled":
            return
        params = note.get("params")
        request_id = params.get("requestId") if isinstance(params, dict) else None
        live = self._unanswered.pop(id_key(request_id), None)
        if live is not None:
            await self._emit(Reply(origin=live, responded=True))


def _label(request: JSONObject) -> str:
    method = str(request.get("method"))
    params = request.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return f'{method} "{name}"' if isinstance(name, str) else method


def _malformed(rule: FaultRule, request_id: Any) -> bytes:
    """The rule's text, or the start of a response torn off mid-way: what a server that
    crashed while writing leaves on the wire."""
    if rule.text is not None:
        return rule.text.encode("utf-8")
    return f'{{"jsonrpc":"2.0","id":{dumps(request_id)},"result":{{"content":[{{"type":'.encode()
