"""Serving a ``MockServer`` on any front, through the runtime's one serve path.

A mock is a responder like a cassette's replayer, so ``cassette.runtime.serve`` puts it on
stdio, streamable HTTP (``/mcp``, sessions with ``Mcp-Session-Id``, the GET stream,
DELETE: as a legacy cassette recorded over stdio is served), SSE, or a plugin's front,
under the same delivery policy (misses reported, size limits, the summary at the end).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import attrs

from cassette.mock.server import MockServer
from cassette.registry import canonical
from cassette.runtime.conversation import DeliveryPolicy, ReplayResult
from cassette.runtime.serve import front_of, serve
from cassette.transport import ServeOptions, Transport

__all__ = ["MockOptions", "check_front", "serve_mock"]


def check_front(front: str) -> Transport:
    """The plugin a mock serves on, or an error for one that serves no clients."""
    return front_of(canonical(front))


@attrs.frozen(kw_only=True)
class MockOptions:
    """How ``serve_mock`` serves a manifest: on ``front`` (``stdio``, ``http``, ``sse``, a
    plugin's), listening as ``listen`` says (its ``on_ready`` gets a network front's URL,
    its ``allowed_origins`` the web pages admitted besides this machine's), delivering as
    ``policy`` says (misses, the size limit, a fault plan); ``on_finish`` hears the result
    when the serving ends, also by cancellation. ``source`` names the manifest in
    messages when it is given as a mapping."""

    front: str = "stdio"
    listen: ServeOptions = ServeOptions()
    policy: DeliveryPolicy = DeliveryPolicy()
    on_finish: Callable[[ReplayResult], None] | None = None
    source: str | None = None


async def serve_mock(
    manifest: Mapping[str, Any] | MockServer, options: MockOptions = MockOptions()
) -> list[ReplayResult]:
    """Serve a manifest until its stdio client leaves, or (a network front) until cancelled.

    A client message over the policy's ``max_message_bytes`` (default 64 MiB) is refused
    as by a replay: ``-32600`` on stdio, 413 over HTTP.
    """
    server = manifest
    if not isinstance(server, MockServer):
        server = MockServer(server, source=options.source)
    return await serve(
        check_front(options.front),
        server,
        options=options.listen,
        policy=options.policy.finishing(options.on_finish),
    )
