"""Serving a ``MockServer`` on any front, through the runtime's one serve path.

A mock is a responder like a cassette's replayer, so ``cassette.runtime.serve`` puts it on
stdio, streamable HTTP (``/mcp``, sessions with ``Mcp-Session-Id``, the GET stream,
DELETE: as a legacy cassette recorded over stdio is served), SSE, or a plugin's front,
under the same delivery policy (misses reported, size limits, the summary at the end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.limits import DEFAULT_MAX_BYTES
from cassette.mock.server import MockServer
from cassette.runtime.conversation import DeliveryPolicy, ReplayResult
from cassette.runtime.serve import front_of, serve
from cassette.transport import ServeOptions, Transport

__all__ = ["check_front", "serve_mock"]

_ALIASES: Final = {"http": "streamable-http"}


def check_front(front: str) -> Transport:
    """The plugin a mock serves on, or an error for one that serves no clients."""
    return front_of(_ALIASES.get(front, front))


async def serve_mock(
    manifest: Mapping[str, Any] | MockServer,
    *,
    front: str = "stdio",
    host: str = "127.0.0.1",
    port: int = 0,
    source: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    on_miss: Callable[[str], None] | None = None,
    on_finish: Callable[[ReplayResult], None] | None = None,
    max_message_bytes: int | None = None,
    allowed_origins: Sequence[str] = (),
) -> list[ReplayResult]:
    """Serve a manifest until its stdio client leaves, or (a network front) until cancelled.

    ``on_ready`` gets a network front's URL once it listens; ``on_miss`` each request the
    manifest had no answer for; ``on_finish`` the result (its misses and their summary)
    when the serving ends, also by cancellation. A client message over
    ``max_message_bytes`` (default 64 MiB) is refused as by a replay: ``-32600`` on stdio,
    413 over HTTP. ``allowed_origins`` are web pages' origins a network front admits
    besides this machine's (``ServeOptions.allowed_origins``).
    """
    server = manifest if isinstance(manifest, MockServer) else MockServer(manifest, source=source)
    policy = DeliveryPolicy(on_miss=on_miss)
    policy = attrs.evolve(policy, max_message_bytes=max_message_bytes or DEFAULT_MAX_BYTES)
    options = ServeOptions(
        host=host, port=port, on_ready=on_ready, allowed_origins=tuple(allowed_origins)
    )
    return await serve(
        check_front(front), server, options=options, policy=policy, on_finish=on_finish
    )
