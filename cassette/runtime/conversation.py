"""The one delivery policy: how every front answers every client, whatever answers it.

Theory of operation
-------------------
A *responder* answers client messages, sans-IO: a cassette's ``Replayer``, a mock
manifest's ``MockServer``, anything with the ``Responder`` interface. A *front* carries
messages to and from clients: stdio, streamable HTTP, SSE, a plugin's. Between the two
sits a ``PolicyServedSession`` per client session; it is the only place that decides

* what a miss or a warning tells the person (``DeliveryPolicy.on_miss`` / ``on_warning``);
* how big a client message may be (an oversized one gets ``Invalid Request`` and the
  session goes on);
* how long a server request may wait for the client's answer, and a client request the
  recording never answered may wait for the client to cancel it (``Deadlines``: the front
  asks ``remaining`` and ``overdue``, and what is overdue fails with an error, so nothing
  can hang a session);
* when each message of a reply goes out (``paced``: at once, or with the recorded gaps);
* what a responder cannot answer, when a ``Fallback`` is given (``new_episodes``: the live
  server answers, and its messages come through the front's ``emit``);
* what is said at the end (``ReplayResult``: the misses and their summary).

A front only routes: it asks the conversation for a reply and writes each message where
its protocol puts it. So a feature added here (a pacing rule, a fault overlay) works on
every front without touching one. ``PolicySessionPool`` hands out policy sessions to a front
(``cassette.transport.SessionPool``) and gathers what they report.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.abc

from cassette.core.replay.reply import Reply
from cassette.core.replay.sessions import EndsInput, Responder, ResponderPool
from cassette.core.wire.deadlines import Deadlines
from cassette.core.wire.ids import id_key
from cassette.core.wire.jsonrpc import (
    INVALID_REQUEST,
    SINGLE_MESSAGES,
    Kind,
    classify,
    error_response,
)
from cassette.core.wire.meta import OVERSIZED
from cassette.core.wire.model import Recording
from cassette.errors import UsageError
from cassette.runtime.policy import DeliveryPolicy, ReplayResult, RuntimeServedSession
from cassette.transport import Emit, Frame, Outgoing

if TYPE_CHECKING:
    from cassette.core.redaction.redactor import Redactor
    from cassette.core.wire.classified import Classified

__all__ = [
    "DeliveryPolicy",
    "Fallback",
    "FallbackFactory",
    "PolicyServedSession",
    "PolicySessionPool",
    "ReplayResult",
    "shown_policy",
]


class Fallback(Protocol):
    """What a session's responder cannot answer, answered live (``new_episodes``).

    One per client session. ``seen`` is offered every client message first and returns
    True for one that belongs to the live side alone (the client's answer to a request
    the live server sent); ``take`` is offered each request the responder missed and
    returns True when the live server will answer it: its messages then come through the
    session's ``emit``, the response last. ``aclose`` ends the live side, if it began.
    """

    async def seen(self, frame: Frame, classified: Classified) -> bool: ...

    async def take(self, request: dict[str, Any], frame: Frame) -> bool: ...

    async def aclose(self) -> None: ...


#: Makes a session's fallback, given how the session's front delivers what comes on its
#: own, and the task group the live side may run tasks in for as long as the serving lasts.
FallbackFactory = Callable[[Emit, anyio.abc.TaskGroup], Fallback]


class PolicyServedSession:
    """One client session under the delivery policy (``cassette.transport.ServedSession``)."""

    def __init__(
        self,
        responder: Responder,
        policy: DeliveryPolicy,
        fallback: Fallback | None = None,
        on_close: Callable[[PolicyServedSession], None] | None = None,
    ) -> None:
        self.responder = responder
        self.policy = policy
        self.fallback = fallback
        self._deadlines = Deadlines(policy.answer_timeout)
        self._on_close = on_close
        self.changed = anyio.Event()  # set when a deadline is added (a watcher re-plans)
        self.closed = False

    # -- what the front asks ---------------------------------------------------------------

    def start(self) -> Reply:
        return self._settle(self.responder.start())

    async def receive(self, frame: Frame, classified: Classified | None = None) -> Reply:
        reply = self.receive_now(frame, classified)
        if reply is not None:
            return reply
        assert self.fallback is not None
        return await self._receive_or_fall_back(frame, self.fallback, classified)

    @property
    def always_at_once(self) -> bool:
        """Every reply without waiting: no live fallback, no pacing (``AnswersAtOnce``)."""
        return self.fallback is None and self.policy.pacing is None

    def receive_now(self, frame: Frame, classified: Classified | None = None) -> Reply | None:
        """``receive`` where it needs no waiting (no live fallback), else ``None``: a
        frame front calls it first, which spares it a coroutine per message."""
        return self.receive_data_now(frame.data, frame.meta, classified)

    def receive_data_now(
        self,
        data: bytes,
        meta: Mapping[str, Any] | None = None,
        classified: Classified | None = None,
    ) -> Reply | None:
        """``receive_now`` of a frame's two fields, for a ``Pushing`` stream, which hands
        them over without building a ``Frame``. ``classified``: the frame as its front
        already decoded it (a network front checks a body before it is answered), so it
        is not decoded again."""
        if meta is not None or len(data) > self.policy.max_message_bytes:
            refused = self._oversized(data, meta)
            if refused is not None:
                return refused
        if self.fallback is None:
            if classified is None:
                return self._settle(self.responder.receive_frame(data))
            return self._settle(self._answer(data, classified))
        return None

    def undelivered(self, server_id: object) -> Reply:
        self._deadlines.clear(server_id)
        return self._settle(self.responder.undelivered(server_id))

    def remaining(self) -> float:
        return self._deadlines.remaining(anyio.current_time())

    def overdue(self) -> list[Reply]:
        waiting = set(map(id_key, self.responder.waiting))
        out: list[Reply] = []
        from cassette.runtime.unanswered import NoAnswer  # a deadline was met: rare

        for late in self._deadlines.overdue(anyio.current_time()):
            if isinstance(late, NoAnswer):
                out.append(self._settle(self.responder.give_up(late.request_id)))
            elif id_key(late) in waiting:
                out.append(self._settle(self.responder.expire(late)))
        return out

    def paces(self, reply: Reply) -> bool:
        """Whether ``paced`` will wait before some of ``reply``'s messages."""
        return (
            self.policy.pacing is not None
            and reply.since is not None
            and bool(reply.messages)
            and len(reply.times) == len(reply.messages)
        )

    async def paced(self, reply: Reply) -> AsyncIterator[Sequence[Outgoing]]:
        items = _outgoing(reply)
        if not items:
            return
        pacing = self.policy.pacing
        if pacing is None or reply.since is None or len(reply.times) != len(items):
            yield items
            return
        group: list[Outgoing] = []
        for item, delay in zip(items, pacing.delays(reply.times, reply.since), strict=True):
            if delay > 0:
                if group:
                    yield group
                    group = []
                await anyio.sleep(delay)
            group.append(item)
        if group:
            yield group

    async def aclose(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.fallback is not None:
                with anyio.CancelScope(shield=True):
                    await self.fallback.aclose()
        finally:
            if self._on_close is not None:
                self._on_close(self)

    def end_of_input(self) -> Reply:
        """What the responder says when the client's input ends (``EndsInput``), if it
        says anything then."""
        if isinstance(self.responder, EndsInput):
            return self._settle(self.responder.end_of_input())
        return Reply()

    def result(self) -> ReplayResult:
        """The session's misses and their summary, for the end of the run."""
        return ReplayResult(tuple(self.responder.misses), self.responder.summary())

    # -- the policy ------------------------------------------------------------------------

    def _oversized(self, data: bytes, meta: Mapping[str, Any] | None) -> Reply | None:
        size = meta.get(OVERSIZED) if meta else None
        if len(data) > self.policy.max_message_bytes:
            size = len(data)
        if size is None:
            return None
        text = f"cassette-mcp: a line of {size} bytes is over the size limit"
        return Reply((error_response(None, INVALID_REQUEST, text),), metas=(None,))

    def _answer(self, data: bytes, classified: Classified) -> Reply:
        """The responder's reply to a frame decoded once already: a single message as
        its value; anything else (a batch, a frame that is no message, which a recording
        may hold as a raw exchange) as it came."""
        if classified.kind in SINGLE_MESSAGES:
            return self.responder.receive(classified.value)
        return self.responder.receive_frame(data)

    async def _receive_or_fall_back(
        self, frame: Frame, fallback: Fallback, classified: Classified | None
    ) -> Reply:
        if classified is None:
            classified = classify(frame.data)
        if await fallback.seen(frame, classified):
            return Reply()  # the client answered the live server
        reply = self._answer(frame.data, classified)
        if reply.miss is not None and classified.kind is Kind.REQUEST:
            request = classified.value
            if await fallback.take(request, frame):
                self.responder.misses.remove(reply.miss)  # answered after all: not a miss
                return Reply(origin=request.get("id"), pending=True)
        return self._settle(reply)

    def _settle(self, reply: Reply) -> Reply:
        """Tell the person what the reply says, and start the clock on what it awaits."""
        # what a person reads passes the one gate: the project's rules too (a CI log)
        if reply.miss is not None and self.policy.on_miss is not None:
            self.policy.on_miss(_shown(self.responder.describe(reply.miss)))
        if self.policy.on_warning is not None:
            for warning in reply.warnings:
                self.policy.on_warning(_shown(warning))
        if reply.awaiting or reply.unanswered:
            now = anyio.current_time()
            for server_id in reply.awaiting:
                self._deadlines.start(server_id, now)
            if reply.unanswered:
                from cassette.runtime.unanswered import NoAnswer

                self._deadlines.start(NoAnswer(reply.origin), now)
            self.changed.set()
            self.changed = anyio.Event()
        return reply


class PolicySessionPool:
    """Hands conversations to a front (``cassette.transport.SessionPool``), one per client
    session, each with its own responder from ``responders``, and gathers their results.

    ``tg`` is where fallbacks run their live side; it must outlive every session (the
    serving function owns it). A pool without one serves no fallback."""

    def __init__(
        self,
        responders: ResponderPool,
        policy: DeliveryPolicy = DeliveryPolicy(),
        *,
        fallback: FallbackFactory | None = None,
        tg: anyio.abc.TaskGroup | None = None,
    ) -> None:
        if fallback is not None and tg is None:
            raise UsageError("a fallback needs the task group its live side runs in")
        self.responders = responders
        self.policy = policy
        self._fallback = fallback
        self._tg = tg
        self._open: dict[int, PolicyServedSession] = {}
        self._ids = itertools.count()
        self.on_close: Callable[[PolicyServedSession], None] | None = None
        #: set when a fault plan made the server exit, with its code
        self.exit_code: int | None = None
        self.exited = anyio.Event()

    @property
    def recording(self) -> Recording:
        return self.responders.recording

    def open(self, emit: Emit) -> RuntimeServedSession:
        """A new client session; with a fault plan in the policy, the plan laid over it."""
        fallback = None
        if self._fallback is not None:
            assert self._tg is not None
            fallback = self._fallback(emit, self._tg)
        number = next(self._ids)
        conversation = PolicyServedSession(
            self.responders.new(),
            self.policy,
            fallback,
            on_close=lambda c: self._closed(number, c),
        )
        self._open[number] = conversation
        plan = self.policy.faults
        if plan is None:
            return conversation
        from cassette.runtime.faults import FaultedSession  # only a fault plan needs it

        return FaultedSession(
            conversation,
            plan.injector(),
            emit,
            tg=self._tg,
            on_fault=self.policy.on_fault,
            on_exit=self._exit,
            exited=self.exited,
        )

    def _exit(self, code: int) -> None:
        """An ``exit`` fault: whoever serves the pool stops serving (see ``exit_code``)."""
        if self.exit_code is None:
            self.exit_code = code
        self.exited.set()

    def _closed(self, number: int, conversation: PolicyServedSession) -> None:
        self._open.pop(number, None)
        if self.on_close is not None:
            self.on_close(conversation)
        self.responders.release(conversation.responder)

    async def aclose(self) -> None:
        """End every session still open (the front stopped)."""
        for conversation in list(self._open.values()):
            await conversation.aclose()

    def result(self) -> ReplayResult:
        """Every session's misses so far, and their summary."""
        misses = tuple(self.responders.misses)
        return ReplayResult(misses, self.responders.summary(), self.exit_code)


def _outgoing(reply: Reply) -> list[Outgoing]:
    metas = reply.metas
    return [(m, metas[i] if i < len(metas) else None) for i, m in enumerate(reply.messages)]


def shown_policy() -> Redactor:
    """The gate's policy for what a person reads (``cassette.store.gate.display``), which
    ``replay_pool`` hands the core's replayer unless told another: imported when a miss
    or a warning first needs it, never by a clean session."""
    from cassette.store.gate import display

    return display()


def _shown(text: str) -> str:
    """A miss or a warning as a person may see it: through the one redaction gate, which a
    clean session (nothing to report) never imports."""
    from cassette.store.gate import shown

    return shown(text)
