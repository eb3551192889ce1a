"""Serving a ``MockServer`` on the replay's fronts: stdio (or any frame transport) and
streamable HTTP. No I/O of its own: the stdio front runs ``cassette.runtime.session.replay`` with
the mock as its responder; the HTTP front is the replay's ``HttpReplayApp`` with the mock
answering every session, as for a legacy cassette recorded over stdio (``/mcp``, sessions
with ``Mcp-Session-Id``, the GET stream, DELETE).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from cassette._version import __version__
from cassette.core.model import Header, RecorderInfo
from cassette.errors import UsageError
from cassette.mock.server import MockServer
from cassette.registry import get_transport
from cassette.runtime.session import ReplayResult, replay
from cassette.store.storage import Cassette
from cassette.transport import FrameStream

__all__ = ["check_front", "serve_mock"]

#: What the HTTP front reads of a recording to know how to serve: legacy, stdio, no events.
_SERVED_AS: Final = Cassette(
    Header("stdio", RecorderInfo("cassette-mcp", __version__), "", era="legacy")
)
_HTTP_FRONTS: Final = frozenset({"http", "streamable-http"})


def check_front(front: str) -> Any:
    """The frame transport a mock serves on, or a ``UsageError`` for one it cannot (a
    network front other than streamable HTTP); ``None`` for the HTTP front."""
    if front in _HTTP_FRONTS:
        return None
    plugin = get_transport(front)
    if hasattr(plugin, "serve_cassette"):
        raise UsageError(f"a mock serves on stdio or http, not on {front!r}")
    return plugin


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
) -> list[ReplayResult]:
    """Serve a manifest until its stdio client leaves, or (HTTP) until cancelled.

    ``on_ready`` gets the HTTP front's URL once it listens; ``on_miss`` each request the
    manifest had no answer for; ``on_finish`` the result (its misses and their summary)
    when the serving ends, also by cancellation. A client message over
    ``max_message_bytes`` (default 64 MiB) is refused as by a replay: ``-32600`` on stdio,
    413 over HTTP.
    """
    from cassette.core.limits import DEFAULT_MAX_BYTES

    limit = DEFAULT_MAX_BYTES if max_message_bytes is None else max_message_bytes
    server = manifest if isinstance(manifest, MockServer) else MockServer(manifest, source=source)
    finish = on_finish or (lambda _result: None)
    results: list[ReplayResult] = []
    if front in _HTTP_FRONTS:
        from cassette.transports.streamable_http import HttpReplayApp, run_app

        app = HttpReplayApp(
            _SERVED_AS, bound_host=host, on_miss=on_miss, sessions=server, max_body=limit
        )
        try:
            await run_app(app, host, port, app.path, on_ready)
        finally:
            results.append(ReplayResult(tuple(server.misses), server.summary()))
            finish(results[-1])
        return results
    plugin = check_front(front)
    if hasattr(plugin, "line_limit"):  # stdio: drop an oversized line as it arrives
        plugin.line_limit = limit

    async def handle(stream: FrameStream) -> None:
        results.append(await replay(stream, server, on_miss=on_miss, max_message_bytes=limit))
        finish(results[-1])

    await plugin.serve(handle)
    return results
