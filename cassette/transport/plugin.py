"""What a transport plugin implements: all a plugin author needs to read.

A transport moves *frames*: the bytes of one message exactly as the wire carries them (for
stdio, one line including its newline). It never parses JSON and never decides anything
about the protocol; the sans-IO core does that. This keeps a recording proxy transparent:
what the client sent is what the server receives, byte for byte.

A plugin is a ``Transport`` registered under its ``name`` in the ``cassette.transports``
entry-point group, and implements the capabilities that fit it; the runtime chooses what
to do with ``isinstance``:

* ``UpstreamConnector``: ``connect(target, options)`` reaches a live server (a recording
  proxy's upstream, a ``new_episodes`` live leg) and yields an ``Upstream``;
* ``FrameServer``: ``serve(handler, options)`` accepts clients and runs ``handler`` once
  per connection with a ``FrameStream`` to that client (stdio: the one client on our own
  stdin/stdout). Whatever answers the client is the runtime's business: the handler owns
  the conversation;
* ``RecordingFront``: ``record_proxy(upstream, tap, options)``, a recording proxy for a
  network transport, reporting what passed to a ``Tap``;
* ``CassetteFront`` (``cassette.transport.serving``), for a network front whose exchanges
  carry more than frames (statuses, streams, sessions).

Options reach a plugin as one frozen value per call (``ConnectOptions``, ``ServeOptions``,
``RecordOptions``): a new option is a new field with a default, so it never breaks a plugin
written before it. Streams use anyio's words: ``send_eof`` is a half-close (we finished
sending; we can still receive), ``aclose`` a full close. A foreign exception becomes ours
where it enters, through ``cassette.errors.map_exceptions``. The optional speed-ups a
stream may offer are in ``cassette.transport.speed``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, runtime_checkable

import attrs

from cassette._origins import DEFAULT_HOST, _origins
from cassette.core.wire.limits import DEFAULT_MAX_BYTES

if TYPE_CHECKING:
    from cassette._record_options import RecordOptions
    from cassette._upstream import SideEventHandler, Target

__all__ = [
    "ConnectOptions",
    "Frame",
    "FrameServer",
    "FrameStream",
    "Handler",
    "Ready",
    "RecordingFront",
    "SecretTap",
    "ServeOptions",
    "Tap",
    "Transport",
    "Upstream",
    "UpstreamConnector",
]


# -- values --------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Frame:
    """One message's bytes as carried; ``meta`` is transport-specific context, if any.

    The members ``meta`` may hold, what each says and which a cassette keeps, are one
    table: ``cassette.core.wire.meta`` (a frame's own facts, such as ``oversized`` and
    ``headers``, are never recorded)."""

    data: bytes
    meta: Mapping[str, Any] | None = None


#: Called once a front listens, with what a client needs to reach it (a URL).
Ready = Callable[[str], None]


@attrs.frozen(kw_only=True)
class ConnectOptions:
    """How ``connect`` reaches a live server.

    ``on_side_event`` hears what the server says outside the protocol (stderr lines, its
    exit) as it happens; ``timeout`` bounds how long reaching it may take (``None``: the
    transport's own default). ``standalone_stream`` asks a transport whose server may
    speak outside any request (streamable HTTP's GET stream) to listen there once a
    session exists, as SDK clients do, so the server's own requests sent there (a
    ``roots/list`` after the handshake) reach the client; a plugin without such a stream
    ignores it."""

    on_side_event: SideEventHandler | None = None
    timeout: float | None = None
    standalone_stream: bool = False


@attrs.frozen(kw_only=True)
class ServeOptions:
    """How a front serves clients.

    A network front listens on ``host``/``port`` (port 0: any free one) and calls
    ``on_ready`` with its URL once clients can connect; a ``FrameServer`` calls it too, with
    whatever a client needs to reach it (stdio, whose client is already there, need not).
    A client message over ``max_message_bytes`` is refused as early as the transport can
    (stdio drops the line as it arrives, HTTP answers 413); the runtime refuses any that
    gets through.

    ``allowed_origins`` are browser origins (as ``normalize_origin`` writes them) a network
    front answers besides this machine's own (loopback ones), with CORS headers and
    preflights; a page from any other ``Origin`` still gets 403. Default: none.

    ``require_auth`` (an HTTP front): a request without a bearer token gets 401 and a
    challenge naming the front's own protected resource metadata, which lists
    ``authorization_servers``. A token's presence is checked, never its validity.

    ``max_sessions`` (a front with sessions, as streamable HTTP's): the most sessions open
    at once; opening one more ends the least recently used, whose next request gets 404,
    the status the specification gives for a session the server ended (a client then
    opens a new one). It bounds memory, which an idle timeout alone does not."""

    host: str = DEFAULT_HOST
    port: int = 0
    max_message_bytes: int = DEFAULT_MAX_BYTES
    on_ready: Ready | None = None
    allowed_origins: tuple[str, ...] = attrs.field(default=(), converter=_origins)
    require_auth: bool = False
    authorization_servers: tuple[str, ...] = ()
    max_sessions: int = 1000


# -- streams -------------------------------------------------------------------------------


@runtime_checkable
class FrameStream(Protocol):
    """An ordered, bidirectional stream of frames to one peer.

    ``receive`` raises ``anyio.EndOfStream`` once the peer has finished, on that and every
    later call; ``send`` raises ``TransportClosedError`` once the peer is gone. Both may be
    cancelled at any point without losing a frame that was already returned."""

    async def send(self, frame: Frame) -> None:
        """Deliver one frame; raises ``TransportClosedError`` if the peer is gone."""
        ...

    async def receive(self) -> Frame:
        """The next frame; raises ``anyio.EndOfStream`` once the peer has finished."""
        ...

    async def send_eof(self) -> None:
        """Half-close: we finished sending (the peer sees end of stream); receiving goes
        on. Calling it again does nothing."""
        ...

    async def aclose(self) -> None:
        """Full close: both directions, and whatever the stream holds. Idempotent."""
        ...


@runtime_checkable
class Upstream(FrameStream, Protocol):
    """A live server reached through a transport: a frame stream plus the lifecycle a
    server has. ``send_eof`` tells it the client finished (stdio closes its stdin)."""

    async def wait(self) -> int | None:
        """Wait until the server is gone; its exit code where there is one."""
        ...


Handler = Callable[[FrameStream], Awaitable[None]]


class Tap(Protocol):
    """Where a recording proxy reports what passed (the runtime turns it into records).

    ``frame`` takes the bytes of one message exactly as carried and the transport facts
    worth keeping (never header values or session ids), before the message is forwarded;
    ``http`` takes an HTTP exchange's status when a replay must give it again.
    """

    def frame(self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any]) -> None:
        """One message passed."""
        ...

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        """An HTTP exchange got a status worth recording."""
        ...


@runtime_checkable
class SecretTap(Protocol):
    """A ``Tap`` that also takes credentials a client sent in HTTP headers (an
    ``Authorization`` value, a cookie). They are never written; a recording proxy reports
    them so that a server echoing one back does not put it in the cassette."""

    def secret(self, value: str) -> None:
        """A value to redact wherever it appears in the session."""
        ...


# -- what a transport can do ---------------------------------------------------------------


@runtime_checkable
class Transport(Protocol):
    """A transport plugin, registered under ``name`` in the ``cassette.transports`` group.
    It implements one or more of the capabilities below."""

    name: ClassVar[str]


@runtime_checkable
class UpstreamConnector(Transport, Protocol):
    """Reaches a live server."""

    def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AbstractAsyncContextManager[Upstream]:
        """An async context manager yielding the ``Upstream``; leaving it ends the server
        (gracefully, then by force), shielded from cancellation. Failing to reach it is a
        ``TransportError``."""
        ...


@runtime_checkable
class FrameServer(Transport, Protocol):
    """Accepts clients as frame streams."""

    async def serve(self, handler: Handler, options: ServeOptions) -> None:
        """Run ``handler`` once per client, concurrently, until there will be no more
        clients (stdio) or until cancelled (a listener)."""
        ...


@runtime_checkable
class RecordingFront(Transport, Protocol):
    """A recording proxy for a network transport."""

    async def record_proxy(self, upstream: str, tap: Tap, options: RecordOptions) -> None:
        """Forward every exchange to ``upstream``, reporting what passed to ``tap`` (each
        frame before it is forwarded), until cancelled."""
        ...
