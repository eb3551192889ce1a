"""The public contract between cassette-mcp and a transport plugin: all a plugin author needs.

A transport moves *frames*: the bytes of one message exactly as the wire carries them (for
stdio, one line including its newline). It never parses JSON and never decides anything
about the protocol; the sans-IO core does that. This keeps a recording proxy transparent:
what the client sent is what the server receives, byte for byte.

What a transport can do is declared here as Protocols, and the runtime chooses what to do
with ``isinstance``; a plugin implements the ones that fit it:

* ``UpstreamConnector``: ``connect(target, options)`` reaches a live server (a recording
  proxy's upstream, a ``new_episodes`` live leg) and yields an ``Upstream``;
* ``FrameServer``: ``serve(handler, options)`` accepts clients and runs ``handler`` once
  per connection with a ``FrameStream`` to that client (stdio: the one client on our own
  stdin/stdout). Whatever answers the client (a cassette, a mock, a fault overlay) is the
  runtime's business: the handler owns the conversation;
* ``CassetteFront``: ``serve_sessions(sessions, options)``, for a network front whose
  exchanges carry more than frames (statuses, streams, sessions): it opens a
  ``ServedSession`` per client session from the ``SessionPool`` it is given and answers
  each request with what that session replies, routed the way its protocol routes it;
* ``RecordingFront``: ``record_proxy(upstream, tap, options)``, a recording proxy for such
  a network transport, reporting what passed to a ``Tap``.

A ``FrameStream`` may also be ``Drainable``: it can tell when the peer has *read* what was
sent (stdio can, from the pipe's unread bytes). The runtime then lets a client read the
notifications that precede a response before the response is written, so a client that
handles one read as one batch sees them first, as it did live.

Options reach a plugin as one frozen value per call (``ConnectOptions``, ``ServeOptions``,
``RecordOptions``): a new option is a new field with a default, so it never breaks a plugin
written before it. Streams use anyio's words: ``send_eof`` is a half-close (we finished
sending; we can still receive), ``aclose`` a full close. A foreign exception becomes ours
where it enters, through ``map_exceptions``. docs/transports.md is the full contract;
``cassette.testing.check_transport`` checks a plugin against it, and
``cassette.registry.register`` puts a plugin in the registry for a test without installing
it. The words (session, front, frame, ...) are defined in docs/architecture.md's glossary.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal, Protocol, runtime_checkable

import attrs

from cassette._origins import DEFAULT_HOST, _origins, normalize_origin
from cassette.core.replay.reply import Reply
from cassette.core.wire.limits import DEFAULT_MAX_BYTES
from cassette.errors import TransportClosedError, TransportError, map_exceptions

if TYPE_CHECKING:
    from cassette._record_options import RecordOptions
    from cassette._upstream import Exited, SideEvent, SideEventHandler, StderrLine, Target
    from cassette.core.wire.classified import Classified
    from cassette.core.wire.model import Recording

__all__ = [
    "DEFAULT_HOST",
    "DRAIN_DEADLINE",
    "CassetteFront",
    "Classified",
    "ConnectOptions",
    "Drainable",
    "Eager",
    "Emit",
    "Exited",
    "Frame",
    "FrameServer",
    "FrameStream",
    "Handler",
    "Outgoing",
    "Pushing",
    "Ready",
    "RecordOptions",
    "Recording",
    "RecordingFront",
    "Reply",
    "SecretTap",
    "ServeOptions",
    "ServedSession",
    "SessionPool",
    "SideEvent",
    "SideEventHandler",
    "StderrLine",
    "Stoppable",
    "Tap",
    "Target",
    "Transport",
    "TransportClosedError",
    "TransportError",
    "Upstream",
    "UpstreamConnector",
    "map_exceptions",
    "normalize_origin",
]

#: The longest a response that follows notifications waits for the client to read them
#: (``Drainable``): a client that stops reading gets the rest anyway.
DRAIN_DEADLINE: Final = 0.25


# -- values --------------------------------------------------------------------------------


@attrs.frozen(slots=True)
class Frame:
    """One message's bytes as carried; ``meta`` is transport-specific context, if any.

    Facts a transport may put in ``meta``: ``oversized`` (the line was over the size limit
    and dropped; its length), ``headers`` (an HTTP front: the client's request headers a
    live leg should carry on, credentials included; never recorded)."""

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
class Drainable(FrameStream, Protocol):
    """A frame stream that knows when the peer has read what was sent (optional).

    Why: a client that handles everything one read returns as one batch (the TypeScript
    SDK handles a response before the progress notifications that came in the same read,
    and drops them) needs what the live server sent apart to arrive apart. Yielding to
    the event loop between writes is not enough: the peer may not have run yet."""

    async def drained(self) -> bool:
        """Return once the peer has read every frame sent so far (``True``), or at once
        where that cannot be known (``False``). The caller bounds the wait."""
        ...


@runtime_checkable
class Eager(FrameStream, Protocol):
    """A frame stream that can do, without waiting, what it can do at once (optional).

    Why: a replay writes its answers when its reading loop would next wait for the
    client. A stream that says whether a frame is already there, and writes what the
    peer's pipe takes at once, lets that loop write the answers itself; otherwise a
    writer task is woken for every call, a task switch that was a fifth of a stdio
    call's instructions. What cannot be done at once is still done by awaiting."""

    def receive_ready(self) -> Frame | None:
        """A frame that is there without waiting, or ``None`` when getting one would wait
        (or the peer finished: ``receive`` then raises ``anyio.EndOfStream``)."""
        ...

    def send_ready(self, data: bytes) -> int:
        """Write as much of ``data`` as can be written without waiting (maybe nothing);
        the number of bytes written. ``TransportClosedError`` if the peer is gone."""
        ...


@runtime_checkable
class Pushing(Eager, Protocol):
    """An ``Eager`` stream that hands frames to a callback as the event loop reads them
    (optional).

    Why: a task that waits for each line is woken through the event loop twice per line
    (the loop runs the reader's callback, which wakes the task, which the loop runs next)
    and resumes its chain of coroutines each time: a sixth of a stdio call's
    instructions. A replay whose answers need no waiting (no live fallback, no pacing)
    answers from the reader's callback instead."""

    def push_frames(
        self,
        handle: Callable[[bytes, Mapping[str, Any] | None], bool] | None,
        idle: Callable[[], bool] | None,
    ) -> None:
        """While ``receive`` waits, give each frame read to ``handle`` on the event loop
        (not in a task), as a ``Frame``'s two fields, ``data`` and ``meta`` (building a
        frozen ``Frame`` per line was 3% of a stdio call), and call ``idle`` when no more
        is there without waiting. Either returns False to stop: the waiting ``receive``
        then raises ``anyio.EndOfStream``; an exception either raises is raised by the
        waiting ``receive``. ``None`` stops the pushing."""
        ...


@runtime_checkable
class Upstream(FrameStream, Protocol):
    """A live server reached through a transport: a frame stream plus the lifecycle a
    server has. ``send_eof`` tells it the client finished (stdio closes its stdin)."""

    async def wait(self) -> int | None:
        """Wait until the server is gone; its exit code where there is one."""
        ...


@runtime_checkable
class Stoppable(Upstream, Protocol):
    """An upstream whose ending can be hurried (optional).

    Why: a recorder asked to stop (SIGTERM, Ctrl-C) must end its server before whoever
    asked loses patience (the TypeScript SDK kills a server 2 s after SIGTERM), yet still
    record what the server says meanwhile. ``aclose`` then ends the server within the
    hurried times instead of the usual grace."""

    def hurry(self, grace: float, kill_after: float) -> None:
        """End within ``grace`` seconds from now by asking, then ``kill_after`` by force."""
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


# -- what the runtime gives a network front ------------------------------------------------

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
class CassetteFront(Transport, Protocol):
    """A network front: serves client sessions whose exchanges carry more than frames."""

    async def serve_sessions(self, sessions: SessionPool, options: ServeOptions) -> None:
        """Serve ``sessions`` until cancelled; cancellation is the normal way this ends, and
        then the front stops gracefully (its open streams end at once)."""
        ...


@runtime_checkable
class RecordingFront(Transport, Protocol):
    """A recording proxy for a network transport."""

    async def record_proxy(self, upstream: str, tap: Tap, options: RecordOptions) -> None:
        """Forward every exchange to ``upstream``, reporting what passed to ``tap`` (each
        frame before it is forwarded), until cancelled."""
        ...


# ``RecordOptions`` and the values of reaching a live server (``Target``, its side events)
# are built on first use (a replay never records), ``Recording`` too (the model's module is
# not needed to write a plugin's streams).
if not TYPE_CHECKING:
    from cassette._lazy import lazy_exports, publish

    # defined inside, exported here; Reply's annotations name types imported for type
    # checking only, so there is nothing to resolve (and this runs on a replay's start-up)
    publish(Reply, __name__, resolve=False)
    publish(normalize_origin, __name__)

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "Classified": "cassette.core.wire.classified",
            **dict.fromkeys(
                ("Exited", "SideEvent", "SideEventHandler", "StderrLine", "Target"),
                "cassette._upstream",
            ),
            "RecordOptions": "cassette._record_options",
            "Recording": "cassette.core.wire.model",
        },
        [*globals(), *__all__],
    )
