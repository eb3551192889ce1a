"""The streamable-HTTP replay front's sessions: event streams, where each message of a
reply goes, and the delivery of every reply of a session onto its streams.

Kept apart from ``cassette.transports.http._http_replay`` (the ASGI app, which routes requests
to sessions and checks them as HTTP) so that a session's answers stay with the session,
and the app reads as what it does per request. Routing rules: a message recorded on a GET
stream goes to the session's GET stream; one recorded on a POST (or, for a cassette with no
such facts, any message of a request's reply) goes back on that POST, as an SSE stream when
the recording streamed it (or when there is more than the response to send).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from typing import Any, Final

import anyio
import attrs
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.wire.ids import IdKey, id_key
from cassette.core.wire.jsonrpc import Classified, Kind, dumps_bytes
from cassette.core.wire.mcp import SUBSCRIPTION_ID_META
from cassette.core.wire.meta import SSE, STREAM
from cassette.transport import Frame, Outgoing, Reply, ServedSession
from cassette.transports.http._http import (
    SSE_HEADERS,
    DropConnection,
    Receive,
    Send,
    send_simple,
    wait_for_disconnect,
)

__all__ = [
    "EventStream",
    "Serving",
    "SessionStreams",
    "as_stream",
    "goes_on_post",
    "is_listen",
    "outgoing",
    "request_on_get",
    "resume",
    "sender",
    "status_of",
]

_JSON: Final = b"application/json"


class EventStream:
    """One SSE response of a replay session: numbers its events and keeps them, so a client
    that lost the response can resume it where it lost it.

    Event ids are ``<stream>/<n>`` (``post-2/1``, ``get-1/4``): unique in the session and
    saying which stream they belong to, so a GET with ``Last-Event-ID`` finds the stream.
    Events are kept as they are made, whether or not the client is still reading (a client
    that dropped a POST's stream mid-way gets the rest on resuming); ``done`` says the
    stream has nothing more to come, and ``tail`` follows it until then.
    """

    def __init__(self, session: SessionStreams, kind: str) -> None:
        session.streams += 1
        self.kind = kind
        self.name = f"{kind}-{session.streams}"
        self.events: list[bytes] = []
        self.done = False
        self._grew = anyio.Event()
        session.history[self.name] = self

    def _id(self) -> bytes:
        return f"{self.name}/{len(self.events) + 1}".encode()

    def _keep(self, data: bytes) -> bytes:
        self.events.append(data)
        self._grew.set()
        self._grew = anyio.Event()
        return data

    def message(self, message: Any) -> bytes:
        data = b"id: " + self._id() + b"\nevent: message\ndata: " + dumps_bytes(message) + b"\n\n"
        return self._keep(data)

    def priming(self, retry: int | None) -> bytes:
        """The 2025-11-25 priming event (an id and empty data), and ``retry`` if recorded."""
        data = b"id: " + self._id() + b"\n"
        if retry is not None:
            data += b"retry: " + str(retry).encode() + b"\n"
        data += b"data: \n\n"
        return self._keep(data)

    def finish(self) -> None:
        """Nothing more will come on this stream (its reply is complete, or it closed)."""
        self.done = True
        self._grew.set()

    async def tail(self, after: int) -> AsyncIterator[bytes]:
        """The events after the first ``after``, in chunks as they come, until ``done``."""
        index = after
        while True:
            if index < len(self.events):
                chunk = b"".join(self.events[index:])
                index = len(self.events)
                yield chunk
            elif self.done:
                return
            else:
                await self._grew.wait()


@attrs.frozen
class Serving:
    """What the recording says about how its server answered, the same for every session:
    whether a message's recorded stream routes it (not for a legacy HTTP+SSE cassette,
    where everything travelled on the one GET stream), the recorded GET streams that
    resumed a POST's (``Last-Event-ID``), and the priming events recorded streams opened
    with (their ``retry``, by stream)."""

    by_stream: bool = True
    resumed: frozenset[str] = frozenset()
    priming: Mapping[str, int | None] = attrs.field(factory=dict)


class SessionStreams:
    """One replay session: its served session under the runtime, its standalone GET stream,
    the POST streams held open for the requests they carry, and the delivery of every
    reply onto them. The app routes a request to its session and checks it as HTTP; the
    session answers it (``answer``) and delivers what comes later (``later``, the
    conversation's ``emit``), so an answer never goes back through the app."""

    def __init__(self, now: float, serving: Serving = Serving()) -> None:
        self.serving = serving
        self.served: ServedSession
        self.sender: MemoryObjectSendStream[Any]
        self.receiver: MemoryObjectReceiveStream[Any]
        self.sender, self.receiver = anyio.create_memory_object_stream[Any](float("inf"))
        self.get_streams = 0  # standalone GET streams open right now
        self.got_get = False  # whether the client has opened one yet
        self.streams = 0  # SSE responses so far (names their events)
        self.history: dict[str, EventStream] = {}  # every SSE response, for resuming
        # requests whose POST is open, by id: what more arrives for one goes there (its
        # channel is made on first use: most requests are answered at once and need none)
        self.open: set[IdKey] = set()
        # open 2026-07-28 listen streams, by the live listen request's id: notifications
        # tagged with it go there, whichever request's replay sends them
        self.listens: dict[IdKey, MemoryObjectSendStream[Any]] = {}
        self._channels: dict[
            IdKey, tuple[MemoryObjectSendStream[Reply], MemoryObjectReceiveStream[Reply]]
        ] = {}
        self.used_at = now  # when a request last named it

    def idle_since(self, now: float) -> float:
        """Seconds nothing has used the session (0 while a stream or a POST is open)."""
        if self.get_streams or self.open:
            return 0.0
        return now - self.used_at

    def listen_for(self, message: Any) -> MemoryObjectSendStream[Any] | None:
        """The open listen stream a notification is tagged for, if any."""
        if not self.listens or not isinstance(message, dict) or "id" in message:
            return None
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        tag = meta.get(SUBSCRIPTION_ID_META) if isinstance(meta, dict) else None
        return self.listens.get(id_key(tag)) if tag is not None else None

    def push(self, messages: Sequence[Any]) -> None:
        for message in messages:
            try:
                self.sender.send_nowait(message)
            except anyio.ClosedResourceError:
                return

    def hold(self, key: IdKey) -> None:
        """Route what more comes for request ``key`` to its POST, from now on."""
        self.open.add(key)

    def channel(
        self, key: IdKey
    ) -> tuple[MemoryObjectSendStream[Reply], MemoryObjectReceiveStream[Reply]]:
        """Where what more comes for the open request ``key`` waits for its POST."""
        found = self._channels.get(key)
        if found is None:
            found = self._channels[key] = anyio.create_memory_object_stream[Reply](float("inf"))
        return found

    def release(self, key: IdKey) -> None:
        self.open.discard(key)
        found = self._channels.pop(key, None)
        if found is not None:
            found[0].close()

    def close(self) -> None:
        self.sender.close()
        for key in list(self.open):
            self.release(key)
        for stream in self.history.values():
            stream.finish()

    def resumable(self, last_event_id: str | None) -> tuple[EventStream, int] | None:
        """The stream a ``Last-Event-ID`` names, and how many of its events the client
        has; ``None`` for an id this session never gave."""
        name, _, number = (last_event_id or "").rpartition("/")
        stream = self.history.get(name)
        if stream is None or not number.isdigit() or int(number) > len(stream.events):
            return None
        return stream, int(number)

    async def standalone(self, rest: bytes, receive: Receive, send: Send) -> None:
        """The session's standalone GET stream, until the client closes it or the session
        ends; ``rest`` first (what an earlier GET stream had not delivered)."""
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        stream = EventStream(self, "get")
        self.get_streams += 1
        self.got_get = True
        write = sender(send)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
                with contextlib.suppress(anyio.BrokenResourceError, OSError):  # client gone
                    if rest:
                        await write(rest)
                    async for message in self.receiver:
                        await write(stream.message(message))
                tg.cancel_scope.cancel()
        finally:
            self.get_streams -= 1
            stream.finish()
        await _end(send)

    # -- delivery --------------------------------------------------------------------------

    async def ask(self, frame: Frame, classified: Classified) -> Reply:
        """The reply to a client message the front decoded (``classified``), with what a
        server request it cannot deliver is replaced by (``deliverable``)."""
        return self.deliverable(await self.served.receive(frame, classified))

    async def answer(
        self,
        send: Send,
        receive: Receive,
        reply: Reply,
        kind: Kind,
        *,
        key: IdKey | None,
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Answer the POST that carried a client message of ``kind`` with ``reply``, as the
        recorded server answered it; ``key``: the request's, held open (``hold``);
        ``extra``: headers the answer carries (a new session id)."""
        if reply.drops:
            await _drop(send, extra)
        if kind in (Kind.RESPONSE, Kind.ERROR):  # a client answer: what it unblocked
            await self.later(reply)
            await send_simple(send, 202, b"", headers=extra)
        elif key is not None and _incomplete(reply):
            _, more = self.channel(key)
            await self._hold_open(send, reply, more, extra)
        elif is_listen(reply):
            await self._listen(send, receive, reply)
        else:
            await self._respond(send, reply, kind, extra)

    def route(self, reply: Reply, *, carries_request: bool) -> list[bool]:
        """For each message of ``reply``: whether it goes back on the POST."""
        serving = self.serving
        return goes_on_post(
            reply,
            carries_request=carries_request,
            by_stream=serving.by_stream,
            resumed=serving.resumed,
        )

    def deliverable(self, reply: Reply) -> Reply:
        """A server request bound for a GET stream the client closed is dropped, as the
        live server drops it, and the replay goes on.

        Before the client's first GET stream it is kept for that stream instead, and the
        reply waits for the answer as for any request it sends. A client may open its GET
        stream whenever it likes, and the SDKs open it beside their first requests: the
        live server sent the request in its own time, when the stream was open, so only
        the replay's haste could find it missing. Going on then let the client finish
        before the request reached it (the result came first). A client that never opens
        one is treated as one that does not answer: the answer deadline fails what
        waited."""
        resumed = self.serving.resumed
        if not self.got_get:
            return reply
        while reply.awaiting and self.get_streams == 0 and request_on_get(reply, resumed):
            more = self.served.undelivered(reply.awaiting[0])
            reply = attrs.evolve(
                more,
                messages=reply.messages + more.messages,
                metas=reply.metas + more.metas,
                times=reply.times + more.times,
                origin=reply.origin,
            )
        return reply

    async def later(self, reply: Reply) -> None:
        """A reply that came later (after a client answer, live, overdue): to the POST of
        the request it belongs to while that is open, else to the GET stream."""
        key = id_key(reply.origin)
        if key in self.open:
            self.channel(key)[0].send_nowait(reply)
            return
        reply = self.deliverable(reply)
        async for group in self.served.paced(reply):
            self.push([message for message, _ in group])

    async def _respond(
        self, send: Send, reply: Reply, kind: Kind, extra: list[tuple[bytes, bytes]]
    ) -> None:
        """Answer a POST as it was recorded: a status, JSON, or an SSE stream."""
        on_post = self.route(reply, carries_request=kind in (Kind.REQUEST, Kind.BATCH))
        status = status_of(reply)
        posted = [out for out, here in zip(outgoing(reply), on_post, strict=True) if here]
        if not posted:
            await self._write(reply, on_post)
            await send_simple(send, status or 202, b"", headers=extra)
            return
        if as_stream(reply, posted):
            headers = [*SSE_HEADERS, *extra]
            await send({"type": "http.response.start", "status": status or 200, "headers": headers})
            stream = EventStream(self, "post")
            try:
                head = self._prime(stream, reply)
                await self._write(reply, on_post, write=sender(send), stream=stream, head=head)
            finally:
                stream.finish()
            await send({"type": "http.response.body", "body": b""})
            return
        await self._write(reply, on_post)
        await send_simple(send, status or 200, dumps_bytes(posted[-1][0]), _JSON, extra)

    async def _write(
        self,
        reply: Reply,
        on_post: Sequence[bool],
        *,
        write: Callable[[bytes], Awaitable[None]] | None = None,
        stream: EventStream | None = None,
        head: bytes = b"",
    ) -> None:
        """Send a reply's messages as the session paces them: those ``on_post`` as events
        of ``stream`` (through ``write``; none: the caller sends them itself), the rest onto
        the GET stream. ``head`` goes first (a priming event)."""
        index = 0
        async for group in self.served.paced(reply):
            chunk = head
            head = b""
            for message, _ in group:
                listen = self.listen_for(message)
                if listen is not None:  # caused here, sent on the live listen stream
                    with contextlib.suppress(anyio.ClosedResourceError):
                        listen.send_nowait(message)
                elif not on_post[index]:
                    self.push((message,))
                elif stream is not None:
                    chunk += stream.message(message)
                index += 1
            if chunk and write is not None:
                await write(chunk)
        if head and write is not None:
            await write(head)

    async def _listen(self, send: Send, receive: Receive, reply: Reply) -> None:
        """A 2026-07-28 ``subscriptions/listen`` stream: its recorded notifications
        (the acknowledgement first), then open until the client closes it."""
        on_post = self.route(reply, carries_request=True)
        await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
        stream = EventStream(self, "post")
        write = sender(send)
        key = id_key(reply.origin)
        tagged_in, tagged = anyio.create_memory_object_stream[Any](float("inf"))
        try:
            await self._write(reply, on_post, write=write, stream=stream)
            self.listens[key] = tagged_in
            async with anyio.create_task_group() as tg:
                tg.start_soon(_forward_events, tagged, stream, write)
                await wait_for_disconnect(receive, anyio.Event())
                tg.cancel_scope.cancel()
        finally:
            if self.listens.get(key) is tagged_in:
                del self.listens[key]
            tagged_in.close()
            stream.finish()

    def _prime(self, stream: EventStream, reply: Reply) -> bytes:
        """The priming event the recorded stream opened with, if it had one."""
        recorded = reply.exchange.stream if reply.exchange is not None else None
        priming = self.serving.priming
        if recorded is None or recorded not in priming:
            return b""
        return stream.priming(priming[recorded])

    async def _hold_open(
        self,
        send: Send,
        reply: Reply,
        more: MemoryObjectReceiveStream[Reply],
        extra: list[tuple[bytes, bytes]],
    ) -> None:
        """Answer as an SSE stream that stays open until the request has its response:
        what follows a client's answer, a live server's messages, or the error a server
        request left unanswered past its deadline gets."""
        served = self.served
        headers = [*SSE_HEADERS, *extra]
        status = status_of(reply) or 200
        await send({"type": "http.response.start", "status": status, "headers": headers})
        stream = EventStream(self, "post")
        write = sender(send)
        try:
            on_post = self.route(reply, carries_request=True)
            head = self._prime(stream, reply)
            await self._write(reply, on_post, write=write, stream=stream, head=head)
            while _incomplete(reply):
                with anyio.move_on_after(served.remaining()):
                    try:
                        reply = self.deliverable(await more.receive())
                    except anyio.EndOfStream:
                        break  # the front is stopping
                    on_post = self.route(reply, carries_request=True)
                    await self._write(reply, on_post, write=write, stream=stream)
                    continue
                for late in served.overdue():
                    await self.later(late)
        finally:
            stream.finish()
        await send({"type": "http.response.body", "body": b""})


async def resume(stream: EventStream, after: int, receive: Receive, send: Send) -> None:
    """A POST's stream resumed: the events after the ``after``-th, as they come, and the
    end with the POST's (its response included: exactly what the client lacked)."""
    await send({"type": "http.response.start", "status": 200, "headers": list(SSE_HEADERS)})
    write = sender(send)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_cancel_on_disconnect, receive, tg.cancel_scope)
        with contextlib.suppress(anyio.BrokenResourceError, OSError):  # client gone
            async for chunk in stream.tail(after):
                await write(chunk)
        tg.cancel_scope.cancel()
    await _end(send)


async def _end(send: Send) -> None:
    """End a streaming response (its client may have gone away just now)."""
    with contextlib.suppress(OSError):
        await send({"type": "http.response.body", "body": b""})


async def _cancel_on_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    """End a streaming response's work when its client goes away."""
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


def status_of(reply: Reply) -> int | None:
    """The status ``reply`` goes out with: the one its responder chose for this client
    (``Reply.status``: a legacy client of a modern cassette, a refused era), else the
    recorded one."""
    if reply.status is not None:
        return reply.status
    return reply.exchange.status if reply.exchange is not None else None


def _incomplete(reply: Reply) -> bool:
    """Whether more of a request's reply is still to come: the client's answer to a server
    request, a live answer, or the end of a wait for an answer the recording lacks."""
    return not reply.responded and bool(reply.awaiting or reply.pending or reply.unanswered)


async def _drop(send: Send, extra: list[tuple[bytes, bytes]]) -> None:
    """Cut the connection without an answer (a fault plan's disconnect): the response
    starts as an event stream, as a server that died mid-answer leaves it, and ends
    unterminated."""
    headers = [*SSE_HEADERS, *extra]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    raise DropConnection


async def _forward_events(
    messages: MemoryObjectReceiveStream[Any],
    stream: EventStream,
    write: Callable[[bytes], Awaitable[None]],
) -> None:
    """Write what other requests' replays send to a listen stream, as its events."""
    async for message in messages:
        await write(stream.message(message))


def is_listen(reply: Reply) -> bool:
    exchange = reply.exchange
    return (
        exchange is not None
        and exchange.message.get("method") == "subscriptions/listen"
        and not reply.responded
    )


def _standalone(stream: object, resumed: Collection[str]) -> bool:
    """Whether ``stream`` was a standalone GET stream, not a GET that resumed a POST's."""
    return isinstance(stream, str) and stream.startswith("get-") and stream not in resumed


def request_on_get(reply: Reply, resumed: Collection[str] = ()) -> bool:
    """Whether the server request the reply waits on was recorded on a standalone GET
    stream."""
    for message, meta in zip(reply.messages, reply.metas, strict=True):
        is_request = isinstance(message, dict) and "method" in message
        if is_request and message.get("id") == reply.awaiting[0]:
            return _standalone(meta.get(STREAM) if meta else None, resumed)
    return False


def goes_on_post(
    reply: Reply,
    *,
    carries_request: bool,
    by_stream: bool = True,
    resumed: Collection[str] = (),
) -> list[bool]:
    """For each message of a reply: whether it goes back on the POST (else the GET stream).

    ``by_stream`` is off for cassettes recorded on the legacy HTTP+SSE transport, where
    everything (responses included) travelled on the one GET stream: their streams say
    nothing about where a streamable-HTTP client expects a message. ``resumed`` names
    recorded GET streams that resumed a POST's (``Last-Event-ID``): what they carried
    belongs to that POST, which a client that keeps its stream gets it on.
    """
    out: list[bool] = []
    for _, meta in outgoing(reply):
        stream = meta.get(STREAM) if meta and by_stream else None
        recorded_on_get = _standalone(stream, resumed)
        out.append(not (recorded_on_get or (stream is None and not carries_request)))
    return out


def outgoing(reply: Reply) -> list[Outgoing]:
    metas = reply.metas
    return [(m, metas[i] if i < len(metas) else None) for i, m in enumerate(reply.messages)]


def sender(send: Send) -> Callable[[bytes], Awaitable[None]]:
    """Write chunks of a streaming response that has more to come."""

    async def write(chunk: bytes) -> None:
        await send({"type": "http.response.body", "body": chunk, "more_body": True})

    return write


def as_stream(reply: Reply, on_post: Sequence[Outgoing]) -> bool:
    if any(meta and meta.get(SSE) for _, meta in on_post):
        return True
    recorded_json = any(meta and meta.get(STREAM) for _, meta in on_post)
    return not recorded_json and len(on_post) > 1 and reply.exchange is not None
