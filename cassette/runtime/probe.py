"""The surface probes: fresh starts of the recorded server, asked what any client may list.

A recorded session holds what its client asked; the clients a cassette serves ask more
(``cassette.core.eras.surface`` says what and why). So, beside the session, the recorder
reaches the same target again, once per probe of ``cassette.core.eras.surface.plan`` (a second,
short-lived server process each over stdio; one MCP session each, ended with its DELETE,
over streamable HTTP), all side by side, and holds what they answered in memory.

When the probes start: as soon as the cassette's header is out, during the session, not
after it. The header's era decides the plan, and clients end the recorder soon after
closing their side (the Python SDK's stdio client kills it a few seconds later), before a
slow server's second start could answer. Once started, the probes are finished (within
``PROBE_BOUND``) even when the session ends or the recording is stopped meanwhile.

In which order they start: the probes that listen for the server's own request start
first, the others once those have their listings. A listener's last part is a wait for
the server's timer, which costs no processor; starting every server at once would have
them all share the processor from the start, and the listeners' wait begin later.

When their lines are written: after the session, grouped, in the plan's order, each
probe's lines in the order it asked (``ProbeSession.kept``), every event named by
``meta.probe``. They are not the user's frames, so holding them in memory changes
nothing of the crash safety of the session's own lines, which are still on disk before
they are forwarded; and written in an order that does not depend on timing, an unchanged
re-recording keeps them line for line (``cassette.store.quiet``). They go through the
recorder, so they pass the same redaction gate and ``before_record`` hook as the session.

The server's own request: a probe whose set declares roots, its listings done, closes the
server's input and reads on (``_listen``) until the server asks for them, exits, or its
tail passes, since a server may ask such a client on its own after the handshake, input
closed or not (``cassette.core.eras.surface`` keeps that ``roots/list``). A server that
exits at the end of its input ends the wait at once; one that asks ends it as it asks.

Quiet: a probe that cannot start the server, is refused or does not finish within the
bound leaves no line; one line on the banner says what was probed and how long it took,
as soon as the probes are done (so a person, or a test, waiting on a client that has not
closed yet sees it while the session is still open).
A session that ends in an error (a failed write, a ``before_record`` hook that raised)
stops the recording as it is: its probes are stopped and nothing of them is written.
``--no-probe`` (``RecordConfig.probe``) turns it all off.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Awaitable, Callable
from typing import Final

import anyio

from cassette.core.eras.surface import Probe, ProbeSession, plan, surface_line
from cassette.core.eras.variants import client_capabilities
from cassette.core.wire.meta import PROBE
from cassette.errors import sole_exception
from cassette.runtime.sink import Sink
from cassette.transport import (
    ConnectOptions,
    Frame,
    Stoppable,
    Target,
    Upstream,
    UpstreamConnector,
)

__all__ = ["PROBE_BOUND", "PROBE_TAIL", "probe_surface", "probing_beside", "record_surface"]

#: Seconds each probe may take: a server start, its handshake and listings, its ending.
PROBE_BOUND: Final = 10.0
#: Seconds a probe that listens for the server's own request (``roots/list``: see
#: ``cassette.core.eras.surface``) reads on once its listings are done and its server's
#: input is closed, on a quiet machine (``tail_seconds``). A server that asks on a timer
#: after the handshake (server-everything) ends the wait as it asks; only a server that
#: ignores the end of its input and never asks uses the whole tail.
PROBE_TAIL: Final = 2.0
#: Seconds a probe's server gets once its stdin is closed before SIGTERM, then before
#: SIGKILL: it only listed, so nothing of it needs a graceful end, and a server that keeps
#: timers (server-everything) would otherwise hold the recording for the usual grace.
PROBE_GRACE: Final = (0.0, 0.5)


async def run_probe(
    plugin: UpstreamConnector,
    target: Target,
    probe: Probe,
    bound: float = PROBE_BOUND,
    listed: anyio.Event | None = None,
) -> list[ProbeSession]:
    """The conversations of one probe (and of the one it asks to follow, on a fresh
    connection), each finished; one that failed, or the bound cut, is left out.
    ``listed`` is set once its listings are done (or it ended without them)."""
    done: list[ProbeSession] = []
    current: Probe | None = probe
    try:
        with anyio.move_on_after(bound):
            while current is not None:
                session = ProbeSession(current)
                try:
                    await _converse(plugin, target, session, bound, listed)
                except Exception:  # a probe that fails proves nothing: no line is kept
                    break
                done.append(session)
                current = session.follow
    finally:
        if listed is not None:
            listed.set()
    return done


async def _converse(
    plugin: UpstreamConnector,
    target: Target,
    session: ProbeSession,
    bound: float,
    listed: anyio.Event | None,
) -> None:
    async with plugin.connect(target, ConnectOptions(timeout=bound)) as upstream:
        for data in session.opening():
            await upstream.send(Frame(data))
        while not session.done:
            frame = await upstream.receive()
            for data in session.heard(frame.data):
                await upstream.send(Frame(data))
        if listed is not None and session.follow is None:
            listed.set()
        await upstream.send_eof()
        if session.listens:
            await _listen(upstream, session)
        if isinstance(upstream, Stoppable):
            upstream.hurry(*PROBE_GRACE)


def tail_seconds() -> float:
    """``PROBE_TAIL``, stretched by the machine's load per core: a server's own timer
    fires late on a busy machine, and a recording made there keeps what a quiet one
    would (its lines must not depend on the machine's load)."""
    if sys.platform == "win32":  # no load average there
        return PROBE_TAIL
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # the load average could not be read
        return PROBE_TAIL
    return PROBE_TAIL * max(1.0, load)


async def _listen(upstream: Upstream, session: ProbeSession) -> None:
    """Its input closed, read what the server still says until it has asked its own
    request (``ProbeSession.listens``), exits, or its tail (``tail_seconds``) passes. A
    server that ignores the end of its input and asks nothing costs the whole tail: only
    a probe whose set declares roots listens, and the probes run side by side."""
    with anyio.move_on_after(tail_seconds()):
        while session.listens:
            try:
                frame = await upstream.receive()
            except Exception:  # the server exited, or its output ended: nothing more comes
                return
            session.heard(frame.data)  # its input is closed: nothing is answered


async def probe_surface(
    sink: Sink, plugin: UpstreamConnector, target: Target
) -> list[ProbeSession]:
    """Every probe of the plan for the session ``sink`` records, side by side; their
    conversations in the plan's order. None when the session has no era yet."""
    header = sink.recorder.header
    if header is None or sink.writer.closed:
        return []
    era = header.era or "legacy"
    opening = sink.recorder.opening
    recorded = client_capabilities(opening) if opening is not None else None
    probes = plan(era, recorded, header.protocol_version)
    found: list[list[ProbeSession]] = [[] for _ in probes]
    listed = {i: anyio.Event() for i, probe in enumerate(probes) if probe.listens}

    async def one(index: int) -> None:
        found[index] = await run_probe(plugin, target, probes[index], listed=listed.get(index))

    async def after_the_listeners(index: int) -> None:
        with anyio.move_on_after(PROBE_BOUND):
            for event in listed.values():
                await event.wait()
        await one(index)

    async with anyio.create_task_group() as tg:
        for index in range(len(probes)):
            tg.start_soon(one if index in listed or not listed else after_the_listeners, index)
    return [session for sessions in found for session in sessions]


def record_surface(sink: Sink, sessions: list[ProbeSession]) -> None:
    """Append what the probes kept, through the recorder, each line named by its probe."""
    for session in sessions:
        for direction, data, label in session.kept:
            if sink.writer.closed:  # a failed write: the file keeps its prefix
                return
            sink.put(sink.recorder.observe(direction, data, sink.clock(), {PROBE: label}))


async def probing_beside(
    sink: Sink,
    plugin: UpstreamConnector,
    target: Target,
    session: Awaitable[None],
    on_info: Callable[[str], None] | None = None,
) -> None:
    """Run ``session`` and, beside it, the surface probes as soon as the cassette's
    header is out; append what they kept once the session is over (see the module
    docstring), and tell ``on_info`` what was probed."""
    known = anyio.Event()
    sink.on_header = known.set
    found: list[ProbeSession] = []
    took: list[float] = []
    shielded = anyio.CancelScope(shield=True)  # a stop does not cut the probes short
    failed = False

    async def probe() -> None:
        await known.wait()
        with shielded:
            started = anyio.current_time()
            found.extend(await probe_surface(sink, plugin, target))
            took.append(anyio.current_time() - started)
            if on_info is not None:  # said now: a client may still be waiting to close
                on_info(surface_line(found, took[0]))

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(probe)
            try:
                await session
            except Exception:
                failed = True  # the session's own error: the recording stops as it is
                shielded.cancel()
                raise
            if not known.is_set():  # no era decided: nothing to probe for
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        inner = sole_exception(group)  # the session's own error, as it raised it
        if inner is group:
            raise
        inner.__suppress_context__ = True
        raise inner from inner.__cause__
    finally:
        if took and not failed:
            record_surface(sink, found)
