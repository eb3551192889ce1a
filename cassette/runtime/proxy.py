"""The frame proxy of a recording: client and server relayed both ways, each frame recorded
before it is forwarded.

Theory of operation
-------------------
Three tasks and one host:

* the client relay reads the client, records each frame and forwards it to the server;
  at the client's end of input it closes the server's input (``send_eof``). With an
  ``era`` (``record --era``), a client's opening of the other era is answered here, in
  the server's place, and recorded as the server's answer;
* the server relay (the host) reads the server, records each frame and forwards it to the
  client, until the server's output ends; then it records the server's exit and ends the
  client's stream, exactly as the real server's exit would;
* the ender waits for the client to finish, gives the server the shutdown grace to end by
  itself, then ends it through the transport (stdio: SIGTERM, then SIGKILL);
* the stopper waits for a stop (``stop``: the recorder was asked to end, by a signal or a
  harness): it stops listening to the client, closes the server's input and hurries its
  end (``Stoppable``), and the ender ends it at once.

A stop never cancels the server relay: what the server says while it ends (the answers
to requests in flight, its last stderr, its exit) is still recorded, and the cassette
closes with it. The whole stop is bounded by the transport's hurried times.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import anyio
import attrs

from cassette.core.replay.negotiation import refuse_other_era
from cassette.core.wire.deadlines import SHUTDOWN_GRACE, STOP_GRACE, STOP_KILL_AFTER
from cassette.core.wire.jsonrpc import classify, dumps_bytes
from cassette.errors import TransportClosedError
from cassette.runtime.sink import Sink
from cassette.runtime.watchdog import Watchdog
from cassette.transport import Frame, FrameStream, Stoppable, Upstream

__all__ = ["proxy"]

Warn = Callable[[str], None]


@attrs.define
class _Relay:
    """What both directions of a frame proxy share."""

    client: FrameStream
    upstream: Upstream
    sink: Sink
    watchdog: Watchdog | None
    #: one frame to the client at a time; ``None`` when the server relay is the client's
    #: only writer (no watchdog, no era answered here), which then takes no lock per answer
    lock: anyio.Lock | None
    era: str = "auto"

    async def to_client(self, frame: Frame) -> None:
        if self.lock is None:
            await self.client.send(frame)
            return
        async with self.lock:
            await self.client.send(frame)

    async def answered_here(self, frame: Frame) -> bool:
        """Answer, in the server's place, a client request of the era not recorded (``--era``);
        the answer is recorded as the server's."""
        if self.era == "auto" or not (
            b"server/discover" in frame.data or b"initialize" in frame.data
        ):
            return False
        answer = refuse_other_era(self.era, classify(frame.data).value)
        if answer is None:
            return False
        data = dumps_bytes(answer) + b"\n"
        self.sink.frame("s2c", data)
        with contextlib.suppress(TransportClosedError):
            await self.to_client(Frame(data))
        return True


async def _client_to_server(relay: _Relay) -> None:
    client, upstream, sink, watchdog = relay.client, relay.upstream, relay.sink, relay.watchdog
    server_gone = False
    while True:
        try:
            frame = await client.receive()
        except anyio.EndOfStream:
            break
        sink.frame("c2s", frame.data)
        if await relay.answered_here(frame):
            continue
        if watchdog is not None:
            watchdog.client_frame(frame.data)
        if not server_gone:
            try:
                await upstream.send(frame)
            except TransportClosedError:
                server_gone = True  # keep recording what the client says; nobody hears it
    await upstream.send_eof()


async def _relay_client(relay: _Relay, done: anyio.Event, scope: anyio.CancelScope) -> None:
    try:
        with scope:
            await _client_to_server(relay)
    finally:
        done.set()


async def _server_to_client(relay: _Relay) -> int | None:
    client, upstream, sink, watchdog = relay.client, relay.upstream, relay.sink, relay.watchdog
    client_gone = False
    while True:
        try:
            frame = await upstream.receive()
        except anyio.EndOfStream:
            break
        if watchdog is not None and watchdog.late_answer(frame.data):
            continue  # the client was answered in the server's place; this came too late
        sink.frame("s2c", frame.data)
        if not client_gone:
            try:
                await relay.to_client(frame)
            except TransportClosedError:
                client_gone = True
    code = await upstream.wait()
    sink.exit(code)
    await client.send_eof()
    return code


async def _end_after_client(
    upstream: Upstream, client_done: anyio.Event, stopping: anyio.Event
) -> None:
    """Once the client has finished, the server gets the shutdown grace to end by itself
    (none once a stop was asked for); a server that ignores end of input is then ended by
    the transport (stdio: terminate, then kill), so it never outlives its recording.
    Cancelled when it ends in time."""
    await client_done.wait()
    with anyio.move_on_after(SHUTDOWN_GRACE):
        await stopping.wait()
    with anyio.CancelScope(shield=True):
        await upstream.aclose()


async def _stop_when_asked(
    stopping: anyio.Event,
    relay: anyio.CancelScope,
    upstream: Upstream,
    client_done: anyio.Event,
) -> None:
    """A stop: no more from the client, and the server ends soon (see the module)."""
    await stopping.wait()
    relay.cancel()
    with anyio.CancelScope(shield=True):
        await upstream.send_eof()
    if isinstance(upstream, Stoppable):
        upstream.hurry(STOP_GRACE, STOP_KILL_AFTER)
    client_done.set()


async def proxy(
    client: FrameStream,
    upstream: Upstream,
    sink: Sink,
    *,
    upstream_timeout: float | None = None,
    on_warning: Warn | None = None,
    era: str = "auto",
    stop: anyio.Event | None = None,
) -> int | None:
    """Forward both ways until the server's output ends; returns its exit code.

    With ``upstream_timeout``, a request the server leaves unanswered that long gets an
    error in its place (see ``cassette.runtime.watchdog``); ``on_warning`` hears about each.
    With ``era`` (``legacy`` or ``modern``), the other era's opening is answered here.
    Setting ``stop`` ends the session gracefully (see the module docstring)."""
    watchdog = None
    if upstream_timeout is not None:
        watchdog = Watchdog(upstream_timeout, sink, client, on_warning or _print_warning)
    lock = watchdog.lock if watchdog is not None else None
    if lock is None and era != "auto":  # answered_here writes to the client too
        lock = anyio.Lock(fast_acquire=True)
    relay = _Relay(client, upstream, sink, watchdog, lock, era)
    client_done = anyio.Event()
    stopping = stop if stop is not None else anyio.Event()
    listening = anyio.CancelScope()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_relay_client, relay, client_done, listening)
        tg.start_soon(_end_after_client, upstream, client_done, stopping)
        tg.start_soon(_stop_when_asked, stopping, listening, upstream, client_done)
        if watchdog is not None:
            tg.start_soon(watchdog.run)
        code = await _server_to_client(relay)
        tg.cancel_scope.cancel()  # the server is gone: stop waiting for the client
    return code


def _print_warning(text: str) -> None:
    import sys

    print(f"cassette: warning: {text}", file=sys.stderr, flush=True)
