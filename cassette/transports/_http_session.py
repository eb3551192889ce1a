"""The streamable-HTTP replay front's bookkeeping, sans HTTP: sessions, event streams, and
where each message of a reply goes.

Kept apart from ``cassette.transports._http_replay`` (the ASGI app) so the app reads as
what it does per request. Routing rules: a message recorded on a GET stream goes to the
session's GET stream; one recorded on a POST (or, for a cassette with no such facts, any
message of a request's reply) goes back on that POST, as an SSE stream when the recording
streamed it (or when there is more than the response to send).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.ids import IdKey
from cassette.core.jsonrpc import dumps_bytes
from cassette.transport import ClientSession, Outgoing, Reply
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
    """One SSE response of a replay session: numbers its events and keeps them for resuming.

    Event ids are ``<stream>/<n>`` (``post-2/1``, ``get-1/4``): unique in the session and
    saying which stream they belong to, so a GET with ``Last-Event-ID`` can resume it.
    """

    def __init__(self, session: Session, kind: str) -> None:
        session.streams += 1
        self.name = f"{kind}-{session.streams}"
        self.events: list[bytes] = []
        session.history[self.name] = self.events

    def _id(self) -> bytes:
        return f"{self.name}/{len(self.events) + 1}".encode()

    def message(self, message: Any) -> bytes:
        data = b"id: " + self._id() + b"\nevent: message\ndata: " + dumps_bytes(message) + b"\n\n"
        self.events.append(data)
        return data

    def priming(self, retry: int | None) -> bytes:
        """The 2025-11-25 priming event (an id and empty data), and ``retry`` if recorded."""
        data = b"id: " + self._id() + b"\n"
        if retry is not None:
            data += b"retry: " + str(retry).encode() + b"\n"
        data += b"data: \n\n"
        self.events.append(data)
        return data


class Session:
    """One replay session: its conversation with the runtime, its standalone GET stream,
    and the POST streams held open for the requests they carry."""

    def __init__(self) -> None:
        self.conversation: ClientSession
        self.sender: MemoryObjectSendStream[Any]
        self.receiver: MemoryObjectReceiveStream[Any]
        self.sender, self.receiver = anyio.create_memory_object_stream[Any](float("inf"))
        self.get_streams = 0  # standalone GET streams open right now
        self.streams = 0  # SSE responses so far (names their events)
        self.history: dict[str, list[bytes]] = {}  # events sent, per stream, for resuming
        # requests whose POST is open, by id: what more arrives for one goes there (its
        # channel is made on first use: most requests are answered at once and need none)
        self.open: set[IdKey] = set()
        self._channels: dict[
            IdKey, tuple[MemoryObjectSendStream[Reply], MemoryObjectReceiveStream[Reply]]
        ] = {}

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


def is_listen(reply: Reply) -> bool:
    exchange = reply.exchange
    return (
        exchange is not None
        and exchange.message.get("method") == "subscriptions/listen"
        and not reply.responded
    )


def request_on_get(reply: Reply) -> bool:
    """Whether the server request the reply waits on was recorded on a GET stream."""
    for message, meta in zip(reply.messages, reply.metas, strict=True):
        is_request = isinstance(message, dict) and "method" in message
        if is_request and message.get("id") == reply.awaiting[0]:
            stream = meta.get("stream") if meta else None
            return isinstance(stream, str) and stream.startswith("get-")
    return False


def goes_on_post(reply: Reply, *, carries_request: bool, by_stream: bool = True) -> list[bool]:
    """For each message of a reply: whether it goes back on the POST (else the GET stream).

    ``by_stream`` is off for cassettes recorded on the legacy HTTP+SSE transport, where
    everything (responses included) travelled on the one GET stream: their streams say
    nothing about where a streamable-HTTP client expects a message.
    """
    out: list[bool] = []
    for _, meta in outgoing(reply):
        stream = meta.get("stream") if meta and by_stream else None
        recorded_on_get = isinstance(stream, str) and stream.startswith("get-")
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
