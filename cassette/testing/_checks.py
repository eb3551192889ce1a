"""The transport check-suite: run a plugin through the properties every transport must have.

Theory of operation
-------------------
Each property is checked on connections of its own, so one failure cannot hide another,
and under a deadline, so a hang is reported as a failure instead of hanging the caller.
A property either passes, fails with a reason naming what the plugin did and what the
contract says instead, or is skipped because nothing was given to check it with.

Two sides of a plugin can be checked, each with the same client-side properties:

* the **connect** side (``target``): the plugin reaches a live server. Any MCP server
  will do for the standard properties; when the server is the reference peer
  (``cassette.testing.peer``), the exact ones run too (raw lines byte for byte, a burst of
  notifications in order, the server ending the session);
* the **serve** side (``client``): the check-suite serves the reference peer through
  ``serve(handler)`` and reaches it with the ``client`` factory the author passes.

Network fronts (``record_proxy``/``serve_cassette``) are round-tripped through the
plugin's own client side: record through the proxy, replay through the front, compare.

Layout
------
This module is the runner (and checks the plugin's shape); the rest of the suite lives in
private modules, each importing only the ones below it: ``_record_replay`` (the
record/replay round trips), ``_properties`` (the stream properties), ``_sides`` (one client
connection and the two sides), ``_report`` (the report types) and ``_util``.
"""

from __future__ import annotations

import inspect
import socket
import tempfile
from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import anyio

from cassette.registry import available, load_transport
from cassette.testing._properties import (
    _cancellation,
    _end_of_stream,
    _error_conversion,
    _framing,
    _ordering,
    _round_trip,
)
from cassette.testing._record_replay import _record_replay_connect, _record_replay_serve
from cassette.testing._report import CheckReport, CheckResult, TransportCheckError, _Failure
from cassette.testing._sides import (
    ClientFactory,
    _ConnectSide,
    _peer_handler,
    _ServeSide,
    _serving,
    _Side,
)
from cassette.testing._util import _leaves
from cassette.transport import Target, Transport

__all__ = [
    "PROPERTIES",
    "CheckReport",
    "CheckResult",
    "ClientFactory",
    "TransportCheckError",
    "check_transport",
    "check_transport_sync",
]

#: The properties, in the order they are checked (the serve side prefixes ``serve: ``).
PROPERTIES: Final = (
    "plugin",
    "round trip",
    "framing",
    "ordering",
    "cancellation",
    "end of stream",
    "error conversion",
    "record/replay",
)

# What serve_replay hands a network front's serve_cassette / record_proxy.
_FRONT_KEYWORDS: Final = (
    "strategy",
    "host",
    "port",
    "on_miss",
    "on_ready",
    "on_finish",
    "on_warning",
    "answer_timeout",
)
_PROXY_KEYWORDS: Final = ("host", "port", "on_ready")


# -- the shape of the plugin ---------------------------------------------------------------


def _plugin_shape(plugin: Transport, registered: str | None) -> str:
    name = getattr(type(plugin), "name", None)
    if not isinstance(name, str) or not name:
        raise _Failure("the plugin class needs a `name` class attribute (a non-empty str)")
    if registered is not None:
        if name != registered:
            raise _Failure(f"registered as {registered!r} but its `name` says {name!r}")
        if registered not in available():
            raise _Failure(f"{registered!r} is not listed by cassette.available()")
    for method in ("connect", "serve"):
        if not callable(getattr(plugin, method, None)):
            raise _Failure(f"the plugin has no `{method}` method")
    notes = []
    for method, keywords in (
        ("serve_cassette", _FRONT_KEYWORDS),
        ("record_proxy", _PROXY_KEYWORDS),
    ):
        function = getattr(plugin, method, None)
        if function is None:
            continue
        parameters = inspect.signature(function).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        missing = [k for k in keywords if k not in parameters and not takes_any]
        if missing:
            raise _Failure(f"`{method}` must accept the keywords {', '.join(missing)}")
        notes.append(method)
    return f"network front: {', '.join(notes)}" if notes else ""


# -- running it all ------------------------------------------------------------------------


class _Run:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.results: list[CheckResult] = []

    async def check(self, name: str, run: Callable[[], Awaitable[str]]) -> None:
        try:
            with anyio.fail_after(self.timeout):
                detail = await run()
        except Exception as exc:
            # A plugin's task group may have wrapped what went wrong: report the cause.
            leaf = _leaves(exc)[0]
            if isinstance(leaf, _Failure):
                text = str(leaf)
            elif isinstance(leaf, TimeoutError):
                text = f"did not finish within {self.timeout:g} s (a hang, or a lost frame)"
            else:
                text = f"raised {type(leaf).__name__}: {leaf}"
            self.results.append(CheckResult(name, "failed", text))
        else:
            self.results.append(CheckResult(name, "passed", detail))

    def skip(self, name: str, why: str) -> None:
        self.results.append(CheckResult(name, "skipped", why))


async def check_transport(
    transport: str | Transport,
    *,
    target: Target | None = None,
    client: ClientFactory | None = None,
    unreachable: Target | None = None,
    deadline: float = 10.0,
    raise_on_failure: bool = True,
) -> CheckReport:
    """Check a transport plugin against the contract in docs/transports.md.

    ``transport`` is a registered name (the registration is checked too) or a plugin
    instance. ``target`` is a live server the plugin's ``connect`` reaches: any MCP server,
    or, for the exact checks, the reference peer (``python -m cassette.testing.peer`` over
    stdio; ``cassette.testing.ReferencePeer`` behind anything else). ``client`` reaches the
    plugin's ``serve`` (see ``ClientFactory``); the check-suite serves the reference peer
    there. ``unreachable`` is a target nothing answers at (by default one is made up from
    ``target``). Each property gets ``deadline`` seconds.

    Returns the report; raises ``TransportCheckError`` (an ``AssertionError``) naming every
    failed property unless ``raise_on_failure`` is false.
    """
    run = _Run(deadline)
    registered = transport if isinstance(transport, str) else None
    plugin: Transport | None = None
    try:
        plugin = load_transport(transport)() if isinstance(transport, str) else transport
    except Exception as exc:
        run.results.append(CheckResult("plugin", "failed", f"{type(exc).__name__}: {exc}"))
    if plugin is not None:
        found = plugin
        await run.check("plugin", lambda: _async(_plugin_shape, found, registered))
        name = registered or str(getattr(type(plugin), "name", "plugin"))
        await _connect_side(run, plugin, name, target, unreachable)
        if client is not None:
            await _serve_side(run, plugin, name, client)
    label = registered or str(getattr(type(plugin), "name", transport))
    report = CheckReport(label, tuple(run.results))
    if raise_on_failure and report.failed:
        raise TransportCheckError(report)
    return report


async def _connect_side(
    run: _Run, plugin: Transport, name: str, target: Target | None, unreachable: Target | None
) -> None:
    checks: list[tuple[str, Callable[[_Side], Awaitable[str]]]] = [
        ("round trip", _round_trip),
        ("framing", _framing),
        ("ordering", _ordering),
        ("cancellation", _cancellation),
        ("end of stream", _end_of_stream),
    ]
    if target is None:
        for label, _ in checks:
            run.skip(label, "no target given (a live server for connect)")
    else:
        side = _ConnectSide(plugin, target)
        for label, prop in checks:
            await run.check(label, partial(prop, side))
    bad = unreachable or _unreachable(target)
    await run.check("error conversion", partial(_error_conversion, plugin, target, bad))
    if target is None:
        run.skip("record/replay", "no target given")
    else:
        await run.check("record/replay", partial(_record_replay_connect, plugin, name, target))


async def _serve_side(run: _Run, plugin: Transport, name: str, client: ClientFactory) -> None:
    checks: list[tuple[str, Callable[[_Side], Awaitable[str]]]] = [
        ("round trip", _round_trip),
        ("framing", _framing),
        ("ordering", _ordering),
        ("cancellation", _cancellation),
        ("end of stream", _end_of_stream),
    ]

    async def served(prop: Callable[[_Side], Awaitable[str]]) -> str:
        async with _serving(plugin, _peer_handler) as address:
            return await prop(_ServeSide(client, address))

    for label, prop in checks:
        await run.check(f"serve: {label}", partial(served, prop))
    await run.check("serve: record/replay", partial(_record_replay_serve, plugin, name, client))


def check_transport_sync(transport: str | Transport, **options: Any) -> CheckReport:
    """``check_transport`` for synchronous code (a plain pytest test)."""
    return anyio.run(partial(check_transport, transport, **options))


# -- small helpers -------------------------------------------------------------------------


async def _async(function: Callable[..., str], *args: Any) -> str:
    return function(*args)


def _unreachable(target: Target | None) -> Target:
    """A target like ``target`` that nothing answers at."""
    if target is None:
        return Target()
    if target.url:
        parts = urlsplit(target.url)
        with socket.socket() as sock:  # a port that was free a moment ago: nobody listens
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return Target(url=urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}")))
    missing = Path(tempfile.gettempdir()) / "cassette-check" / "no-such-server"
    return Target(command=(str(missing),))
