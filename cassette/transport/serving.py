"""What the runtime hands a network front: the sessions it serves, and the front that
takes them.

A ``CassetteFront`` (streamable HTTP, SSE) serves client sessions whose exchanges carry
more than frames: statuses, streams, sessions. It is given a ``SessionPool``, opens a
``ServedSession`` per client session from it, and answers each request with what that
session replies, routed the way its protocol routes it (``Reply.metas`` and the reply's
other facts say how the recorded server answered). A plugin that only moves frames
(``cassette.transport.plugin``) never needs this module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cassette.core.replay.reply import Reply
from cassette.transport.plugin import Frame, ServeOptions, Transport

if TYPE_CHECKING:
    from cassette.core.wire.classified import Classified
    from cassette.core.wire.model import Recording

__all__ = ["CassetteFront", "Emit", "Outgoing", "ServedSession", "SessionPool"]


#: One message to write and the transport facts it was recorded with (``None``: made up
#: by the replay, such as a miss error), so a front can route it to the right stream.
Outgoing = tuple[Any, Mapping[str, Any] | None]
#: How a front delivers a reply that comes on its own, not as the answer to what the client
#: just sent (a live server's message under ``new_episodes``).
Emit = Callable[[Reply], Awaitable[None]]


class ServedSession(Protocol):
    """One client's session as a front serves it: answered by the runtime under its one
    delivery policy. (Not the MCP SDK's ``ClientSession``, which is a client's side.)

    The front hands it what the client sends and writes what it replies; the session owns
    everything else: matching, miss and warning reporting, size limits, pacing, the
    answer deadlines of server requests, and what is said at the end. A reply's facts
    (``Reply.metas``, ``exchange``, ``awaiting``, ``responded``, ``pending``) tell a front
    how the recorded server answered, so it can route each message as its protocol does.
    """

    def start(self) -> Reply:
        """What the server says before the client says anything (usually nothing)."""
        ...

    async def receive(self, frame: Frame, classified: Classified | None = None) -> Reply:
        """The reply to one client message (a stdio line, an HTTP body); ``classified``:
        the frame as the front already decoded it (``cassette.core.wire.jsonrpc.classify``), so
        it is decoded once."""
        ...

    def undelivered(self, server_id: object) -> Reply:
        """The front could not deliver server request ``server_id`` (a live server drops
        what it cannot send): go on as if it had not been sent."""
        ...

    def remaining(self) -> float:
        """Seconds until the next server request's answer is due (``inf``: none is
        awaited). A front that waits for the client bounds its wait with this..."""
        ...

    def overdue(self) -> list[Reply]:
        """...and then writes these: each overdue server request failed, the request that
        waited on it answered with an error (a test must never hang)."""
        ...

    def paced(self, reply: Reply) -> AsyncIterator[Sequence[Outgoing]]:
        """The reply's messages in groups to write at once, each group when it is due
        (every message at once, unless the replay reproduces recorded gaps)."""
        ...

    async def aclose(self) -> None:
        """The client session ended (its stream closed, DELETE, the front stopping)."""
        ...


class SessionPool(Protocol):
    """Every client session a network front serves, and how to serve them.

    ``recording`` says how the recorded server was reached (its header: era, transport,
    target URL) and what its HTTP exchanges showed (statuses, streams): a front serves
    each session as that server did. ``open`` starts a session; ``emit`` is how the front
    delivers what comes on its own (see ``Emit``)."""

    @property
    def recording(self) -> Recording: ...

    def open(self, emit: Emit) -> ServedSession: ...


@runtime_checkable
class CassetteFront(Transport, Protocol):
    """A network front: serves client sessions whose exchanges carry more than frames."""

    async def serve_sessions(self, sessions: SessionPool, options: ServeOptions) -> None:
        """Serve ``sessions`` until cancelled; cancellation is the normal way this ends, and
        then the front stops gracefully (its open streams end at once)."""
        ...
