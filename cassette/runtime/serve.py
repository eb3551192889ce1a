"""The one serve path: any responder, on any front, under the one delivery policy.

``serve(front, responders, ...)`` is the only function that puts something that answers
clients (a cassette's replay sessions, a mock manifest, a ``new_episodes`` extension, a
fault overlay) on a transport. It asks the plugin what it can do, never how:

* a ``CassetteFront`` (streamable HTTP, SSE) gets the ``SessionPool`` and routes each
  conversation's replies as its protocol does;
* a ``FrameServer`` (stdio, memory, a plugin's TCP) gets a handler that runs
  ``serve_frames`` (``cassette.runtime.frames``) for each client stream.

The delivery rules themselves (misses, warnings, size limits, deadlines, pacing) are the
``PolicyServedSession``'s, so every front keeps them the same way.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import attrs

from cassette.core.replay.matching import Strategy
from cassette.core.replay.sessions import Responder, ResponderPool
from cassette.core.wire.model import Recording
from cassette.errors import FaultExit, UsageError
from cassette.registry import get_transport
from cassette.runtime.conversation import (
    DeliveryPolicy,
    FallbackFactory,
    PolicySessionPool,
    ReplayResult,
)
from cassette.runtime.frames import serve_frames
from cassette.runtime.replay_pool import ReplayOptions, replay_pool
from cassette.transport import (
    CassetteFront,
    FrameServer,
    FrameStream,
    ServeOptions,
    Transport,
)

if TYPE_CHECKING:
    from cassette.core.replay.misses import MissReport

__all__ = [
    "ReplayOptions",
    "replay",
    "replay_sessions",
    "serve",
    "serve_frames",
    "serve_replay",
]

Finish = Callable[[ReplayResult], None]


def front_of(front: str | Transport) -> Transport:
    """The plugin serving as a front, or a ``UsageError`` for one that serves no clients."""
    plugin = get_transport(front) if isinstance(front, str) else front
    if not isinstance(plugin, CassetteFront | FrameServer):
        raise UsageError(f"transport {plugin.name!r} cannot serve clients")
    return plugin


async def serve(
    front: str | Transport,
    responders: ResponderPool,
    *,
    options: ServeOptions = ServeOptions(),
    policy: DeliveryPolicy = DeliveryPolicy(),
    fallback: FallbackFactory | None = None,
) -> list[ReplayResult]:
    """Serve ``responders`` on ``front`` until it has no more clients, or until cancelled.

    ``policy.on_finish`` gets each result as it is known, also when the serving ends by
    cancellation: one per client for a frame server, one for all sessions when a network
    front stops. The plugin is given the policy's size limit."""
    on_finish = policy.on_finish
    plugin = front_of(front)
    options = attrs.evolve(options, max_message_bytes=policy.max_message_bytes)
    results: list[ReplayResult] = []

    def finished(result: ReplayResult) -> None:
        results.append(result)
        if on_finish is not None:
            on_finish(result)

    async with anyio.create_task_group() as tg:
        pool = PolicySessionPool(responders, policy, fallback=fallback, tg=tg)
        try:
            with anyio.CancelScope() as serving:
                tg.start_soon(_stop_on_exit, pool, serving)
                if isinstance(plugin, CassetteFront):
                    await _serve_sessions(plugin, pool, options, finished)
                else:
                    assert isinstance(plugin, FrameServer)
                    handler = partial(_serve_one, pool=pool, finished=finished)
                    await plugin.serve(handler, options)
        finally:
            tg.cancel_scope.cancel()  # live legs, if any, end with the serving
    if pool.exit_code is not None:
        raise FaultExit(pool.exit_code)
    return results


async def _stop_on_exit(pool: PolicySessionPool, serving: anyio.CancelScope) -> None:
    """A fault plan's ``exit``: the front stops, as the server process would have."""
    await pool.exited.wait()
    serving.cancel()


async def _serve_sessions(
    plugin: CassetteFront, pool: PolicySessionPool, options: ServeOptions, finished: Finish
) -> None:
    try:
        await plugin.serve_sessions(pool, options)
    finally:
        with anyio.CancelScope(shield=True):
            await pool.aclose()
        finished(pool.result())


async def _serve_one(stream: FrameStream, *, pool: PolicySessionPool, finished: Finish) -> None:
    finished(await serve_frames(stream, pool))


async def replay(
    client: FrameStream, responder: Responder, policy: DeliveryPolicy = DeliveryPolicy()
) -> ReplayResult:
    """Serve one client from ``responder`` (a ``Replayer``, a ``MockServer``) until the
    client finishes, as ``policy`` says (misses, limits, pacing, a fault plan):
    ``serve_frames`` for a harness that has a stream in hand. An ``exit`` fault raises
    ``FaultExit``."""
    pool = PolicySessionPool(_One(responder), policy)
    result = await serve_frames(client, pool)
    if pool.exit_code is not None:
        raise FaultExit(pool.exit_code)
    return result


class _One:
    """A responder pool of the one responder a harness brought."""

    def __init__(self, responder: Responder) -> None:
        self._responder = responder

    @property
    def recording(self) -> Recording:
        raise UsageError("a single responder has no recording to serve a network front from")

    def new(self) -> Responder:
        return self._responder

    def release(self, responder: Responder) -> None:
        """The harness's one responder is its own: nothing to let go of."""

    @property
    def misses(self) -> list[MissReport]:
        return list(self._responder.misses)

    def summary(self) -> str:
        return self._responder.summary()


def replay_sessions(
    recording: Recording | str | os.PathLike[str],
    strategy: str | Strategy | None = None,
    *,
    policy: DeliveryPolicy = DeliveryPolicy(),
) -> PolicySessionPool:
    """The sessions of a cassette, as a network front serves them: what to pass to a front's
    ASGI app to mount it in-process (``HttpReplayApp(replay_sessions(tape))``). ``strategy``
    ``None``: the cassette's recorded one, else ``default`` (``replay_pool``)."""
    # an app of one's own is a network front: each client session a start of its own
    options = ReplayOptions(strategy=strategy, transport="streamable-http")
    return PolicySessionPool(replay_pool(recording, options), policy)


async def serve_replay(
    cassette: Recording | str | os.PathLike[str], options: ReplayOptions = ReplayOptions()
) -> list[ReplayResult]:
    """Serve a cassette (loaded, or a file's path) until it has no more clients, or until
    cancelled: ``serve`` with the pool ``replay_pool`` makes of it, as ``cassette replay``
    serves it."""
    return await serve(
        options.transport,
        replay_pool(cassette, options),
        options=options.listen,
        policy=options.policy.finishing(options.on_finish),
    )
