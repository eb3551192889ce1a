"""The contract between the session loops and a transport plugin.

A transport moves *frames*: the bytes of one message exactly as the wire carries them (for
stdio, one line including its newline). It never parses JSON and never decides anything
about the protocol; the sans-IO core does that. This keeps a recording proxy transparent:
what the client sent is what the server receives, byte for byte.

A plugin implements ``Transport``. It has two sides:

* ``connect(target)`` reaches a live server (the recording proxy's upstream) and yields an
  ``Upstream``: a frame stream plus the process-like lifecycle a server has (no more input,
  wait for the end). Things the server says outside the protocol (stderr lines, its exit)
  are reported through the ``on_side_event`` callback as they happen.
* ``serve(handler)`` accepts clients and runs ``handler`` once per connection with a
  ``FrameStream`` to that client; it returns when the transport has no more clients to
  serve (stdio: the one client on our own stdin/stdout went away).

Streams follow anyio's conventions: ``receive`` raises ``anyio.EndOfStream`` when the peer
has finished, ``send`` raises ``TransportClosedError`` when the peer is gone, and both are
cancellable at any point without losing a frame that was already returned.

A network transport whose exchanges carry more than frames (statuses, streams, sessions)
also implements the optional ``CassetteFront`` (serve a whole cassette) and
``RecordingFront`` (a recording proxy reporting to a ``Tap``). docs/transports.md is the
full contract for plugin authors; ``cassette.testing.check_transport`` checks a plugin
against it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import attrs

if TYPE_CHECKING:
    from cassette.core.matching import MissReport, Strategy
    from cassette.core.model import Recording

__all__ = [
    "CassetteFront",
    "Exited",
    "Frame",
    "FrameStream",
    "Handler",
    "Ready",
    "RecordingFront",
    "SideEvent",
    "SideEventHandler",
    "StderrLine",
    "Tap",
    "Target",
    "Transport",
    "Upstream",
]


@attrs.frozen(slots=True)
class Frame:
    """One message's bytes as carried; ``meta`` is transport-specific context, if any."""

    data: bytes
    meta: Mapping[str, Any] | None = None


@attrs.frozen(slots=True)
class Target:
    """What to reach: a command to spawn (stdio) or a URL (network transports)."""

    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None


@attrs.frozen(slots=True)
class StderrLine:
    """The server wrote one line on stderr (``data`` keeps its newline, verbatim)."""

    data: bytes


@attrs.frozen(slots=True)
class Exited:
    """The server process ended with ``code`` (negative: killed by that signal)."""

    code: int | None


SideEvent = StderrLine | Exited
SideEventHandler = Callable[[SideEvent], None]


@runtime_checkable
class FrameStream(Protocol):
    """An ordered, bidirectional stream of frames to one peer."""

    async def send(self, frame: Frame) -> None:
        """Deliver one frame; raises ``TransportClosedError`` if the peer is gone."""
        ...

    async def receive(self) -> Frame:
        """The next frame; raises ``anyio.EndOfStream`` once the peer has finished."""
        ...

    async def aclose(self) -> None:
        """Finish our side: the peer sees end of stream."""
        ...


class Upstream(FrameStream, Protocol):
    """A live server reached through a transport."""

    async def close_input(self) -> None:
        """The client has finished: tell the server (stdio closes its stdin)."""
        ...

    async def wait(self) -> int | None:
        """Wait until the server is gone; its exit code where there is one."""
        ...


Handler = Callable[[FrameStream], Awaitable[None]]


class Tap(Protocol):
    """Where a recording proxy reports what passed (the session turns it into records).

    ``frame`` takes the bytes of one message exactly as carried and the transport facts
    worth keeping (never header values); ``http`` takes an HTTP exchange's status.
    """

    def frame(self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any]) -> None:
        """One message passed."""
        ...

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        """An HTTP exchange got a status worth recording."""
        ...


class Transport(Protocol):
    """A transport plugin, registered under ``name`` in the ``cassette.transports`` group."""

    name: ClassVar[str]

    def connect(
        self, target: Target, *, on_side_event: SideEventHandler | None = None
    ) -> AbstractAsyncContextManager[Upstream]:
        """Reach a live server; leaving the context ends it (gracefully, then by force)."""
        ...

    async def serve(self, handler: Handler) -> None:
        """Accept clients and run ``handler`` for each until there are no more."""
        ...


#: Called once a network front listens, with the URL clients should use.
Ready = Callable[[str], None]


@runtime_checkable
class CassetteFront(Protocol):
    """Optional, for network fronts: serve a whole cassette (``cassette replay --front``).

    A front whose exchanges carry facts a duplex frame stream cannot (HTTP statuses,
    streams, sessions) implements this instead of answering through ``serve``. It listens
    on ``host``/``port`` (port 0: any free one), calls ``on_ready`` with its URL once
    clients can connect, gives every client session its own ``Replayer``, reports each miss
    through ``on_miss`` and each warning through ``on_warning``, fails a replayed server
    request the client leaves unanswered for ``answer_timeout`` seconds, and runs until
    cancelled. Cancellation is the normal way it ends: it then stops gracefully and calls
    ``on_finish`` with every miss of every session and their summary.
    """

    async def serve_cassette(
        self,
        recording: Recording,
        *,
        strategy: str | Strategy = "default",
        host: str = "127.0.0.1",
        port: int = 0,
        on_miss: Callable[[str], None] | None = None,
        on_ready: Ready | None = None,
        on_finish: Callable[[list[MissReport], str], None] | None = None,
        on_warning: Callable[[str], None] | None = None,
        answer_timeout: float = 30.0,
    ) -> None:
        """Serve ``recording`` until cancelled."""
        ...


@runtime_checkable
class RecordingFront(Protocol):
    """Optional, for network transports: a recording proxy (``cassette record --upstream``).

    It listens on ``host``/``port``, calls ``on_ready`` with the URL to give the client,
    forwards every exchange to ``upstream`` and reports what passed to ``tap``, each frame
    before it is forwarded, until cancelled.
    """

    async def record_proxy(
        self,
        upstream: str,
        tap: Tap,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        on_ready: Ready | None = None,
    ) -> None:
        """Proxy and record until cancelled."""
        ...
