"""The streamable-HTTP replay front's bookkeeping, sans HTTP: sessions, event streams, and
where each message of a reply goes.

Kept apart from ``cassette.transports._http_replay`` (the ASGI app) so the app reads as
what it does per request. Routing rules: a message recorded on a GET stream goes to the
session's GET stream; one recorded on a POST (or, for a cassette with no such facts, any
message of a request's reply) goes back on that POST, as an SSE stream when the recording
streamed it (or when there is more than the response to send).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.ids import IdKey, id_key
from cassette.core.jsonrpc import dumps_bytes
from cassette.core.mcp import SUBSCRIPTION_ID_META
from cassette.transport import Outgoing, Reply, ServedSession
from cassette.transports._http import Send

__all__ = [
    "EventStream",
    "Session",
    "as_stream",
    "goes_on_post",
    "is_listen",
    "outgoing",
    "request_on_get",
    "sender",
]


class EventStream:
    """One SSE response of a replay session: numbers its events and keeps them, so a client
    that lost the response can resume it where it lost it.

    Event ids are ``<stream>/<n>`` (``post-2/1``, ``get-1/4``): unique in the session and
    saying which stream they belong to, so a GET with ``Last-Event-ID`` finds the stream.
    Events are kept as they are made, whether or not the client is still reading (a client
    that dropped a POST's stream mid-way gets the rest on resuming); ``done`` says the
    stream has nothing more to come, and ``tail`` follows it until then.
    """

    def __init__(self, session: Session, kind: str) -> None:
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


class Session:
    """One replay session: its conversation with the runtime, its standalone GET stream,
    and the POST streams held open for the requests they carry."""

    def __init__(self, now: float) -> None:
        self.conversation: ServedSession
        self.sender: MemoryObjectSendStream[Any]
        self.receiver: MemoryObjectReceiveStream[Any]
        self.sender, self.receiver = anyio.create_memory_object_stream[Any](float("inf"))
        self.get_streams = 0  # standalone GET streams open right now
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
            return _standalone(meta.get("stream") if meta else None, resumed)
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
        stream = meta.get("stream") if meta and by_stream else None
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
    if any(meta and meta.get("sse") for _, meta in on_post):
        return True
    recorded_json = any(meta and meta.get("stream") for _, meta in on_post)
    return not recorded_json and len(on_post) > 1 and reply.exchange is not None
