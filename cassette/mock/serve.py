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

from cassette.core.limits import DEFAULT_MAX_BYTES
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


_LISTEN_KEYWORDS = ("host", "port", "on_ready", "allowed_origins")
_POLICY_KEYWORDS = ("on_miss", "max_message_bytes", "faults", "on_fault")


async def serve_mock(
    manifest: Mapping[str, Any] | MockServer,
    options: MockOptions = MockOptions(),
    **legacy: Any,
) -> list[ReplayResult]:
    """Serve a manifest until its stdio client leaves, or (a network front) until cancelled.

    A client message over the policy's ``max_message_bytes`` (default 64 MiB) is refused
    as by a replay: ``-32600`` on stdio, 413 over HTTP. The keyword options of earlier
    releases (``front=``, ``port=``, ``on_miss=``, ...) still work, with a
    ``DeprecationWarning``.
    """
    if legacy:  # the keyword forms of earlier releases, and only they
        from cassette.runtime.keywords import deprecated_keywords

        deprecated_keywords(
            "serve_mock",
            "serve_mock(manifest, MockOptions(front=..., listen=ServeOptions(...), "
            "policy=DeliveryPolicy(...)))",
            legacy,
            (*_LISTEN_KEYWORDS, *_POLICY_KEYWORDS, "front", "source", "on_finish"),
        )
    if legacy:
        options = _options(options, legacy)
    server = manifest
    if not isinstance(server, MockServer):
        server = MockServer(server, source=options.source)
    return await serve(
        check_front(options.front),
        server,
        options=options.listen,
        policy=options.policy.finishing(options.on_finish),
    )


def _options(options: MockOptions, legacy: dict[str, Any]) -> MockOptions:
    """The keyword form's options, laid onto the value."""
    listen = {k: legacy.pop(k) for k in _LISTEN_KEYWORDS if k in legacy}
    if "allowed_origins" in listen:
        listen["allowed_origins"] = tuple(listen["allowed_origins"])
    policy = {k: legacy.pop(k) for k in _POLICY_KEYWORDS if k in legacy}
    policy["max_message_bytes"] = policy.get("max_message_bytes") or DEFAULT_MAX_BYTES
    return attrs.evolve(
        options,
        listen=attrs.evolve(options.listen, **listen),
        policy=attrs.evolve(options.policy, **policy),
        **legacy,
    )
