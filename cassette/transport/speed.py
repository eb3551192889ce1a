"""Optional speed-ups a frame stream may offer: the runtime checks each with ``isinstance``
and works without them.

Each departs from the plain ``FrameStream`` for a measured reason (docs/architecture.md,
"Speed exceptions", has the figures): ``Drainable`` keeps notifications apart from the
response that follows them, for clients that handle one read as one batch; ``Eager`` and
``Pushing`` let a replay answer from its reading loop or the reader's callback instead of
waking a task per line; ``Stoppable`` lets a recorder hurry its server's ending.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Protocol, runtime_checkable

from cassette.transport.plugin import Frame, FrameStream, Upstream

__all__ = ["DRAIN_DEADLINE", "Drainable", "Eager", "Pushing", "Stoppable"]

#: The longest a response that follows notifications waits for the client to read them
#: (``Drainable``): a client that stops reading gets the rest anyway.
DRAIN_DEADLINE: Final = 0.25


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
    writer task is woken for every call, a task switch that cost a good part of a
    stdio call (docs/architecture.md, "Speed exceptions", has the figure). What cannot be done at
    once is still done by awaiting."""

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
    and resumes its chain of coroutines each time, a good part of a stdio call
    (docs/architecture.md, "Speed exceptions", has the figure). A replay whose answers
    need no waiting (no live fallback, no pacing) answers from the reader's callback
    instead."""

    def push_frames(
        self,
        handle: Callable[[bytes, Mapping[str, Any] | None], bool] | None,
        idle: Callable[[], bool] | None,
    ) -> None:
        """While ``receive`` waits, give each frame read to ``handle`` on the event loop
        (not in a task), as a ``Frame``'s two fields, ``data`` and ``meta`` (no frozen
        ``Frame`` is built per line: the ``Pushing`` row of the speed-exceptions table),
        and call ``idle`` when no more is there without waiting. Either returns False to
        stop: the waiting ``receive`` then raises ``anyio.EndOfStream``; an exception
        either raises is raised by the waiting ``receive``. ``None`` stops the pushing."""
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
