"""The transport check-suite: run a plugin through the properties every transport must have.

Theory of operation
-------------------
Each property is checked on connections of its own, so one failure cannot hide another,
and under a deadline, so a hang is reported as a failure instead of hanging the caller.
A property either passes, fails with a reason naming what the plugin did and what the
contract says instead, or is skipped because nothing was given to check it with.

What is checked follows from the contract in ``cassette.transport``: the capabilities a
plugin implements (``isinstance`` against each Protocol, as the runtime chooses) decide
which properties apply, and each method is checked against the signature its Protocol
declares. Two sides of a plugin can be checked, each with the same client-side properties:

* the **connect** side (an ``UpstreamConnector``, given ``target``): the plugin reaches a
  live server. Any MCP server will do for the standard properties; when the server is the
  reference peer (``cassette.testing.peer``), the exact ones run too (raw lines byte for
  byte, a burst of notifications in order, the server ending the session);
* the **serve** side (a ``FrameServer``, given ``client``): the check-suite serves the
  reference peer through ``serve(handler, options)`` and reaches it with the ``client``
  factory the author passes, at the address ``serve`` reports through ``on_ready``; then
  a recorded session is served there by the runtime's one serve path.

Network fronts (``RecordingFront`` and ``CassetteFront``) are round-tripped through the
plugin's own client side: record through the proxy, replay through the front, compare.

Layout
------
This module is the runner (and checks the plugin's shape); the rest of the suite lives in
private modules, each importing only the ones below it: ``_record_replay`` (the
record/replay round trips), ``_properties`` (the stream properties), ``_sides`` (one client
connection and the two sides), ``_report`` (the report types) and ``_util``.
"""

from __future__ import annotations

import contextlib
import inspect
import socket
import tempfile
from collections.abc import Awaitable, Callable, Iterator
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
from cassette.transport import (
    CassetteFront,
    FrameServer,
    RecordingFront,
    Target,
    Transport,
    UpstreamConnector,
)

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

#: The capabilities of the contract, each with the method its Protocol declares.
CAPABILITIES: Final[tuple[tuple[type, Callable[[Any], Callable[..., Any]]], ...]] = (
    (UpstreamConnector, lambda plugin: plugin.connect),
    (FrameServer, lambda plugin: plugin.serve),
    (CassetteFront, lambda plugin: plugin.serve_sessions),
    (RecordingFront, lambda plugin: plugin.record_proxy),
)


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
    found = []
    for capability, method_of in CAPABILITIES:
        if isinstance(plugin, capability):
            _same_parameters(method_of(plugin), method_of(capability), capability.__name__)
            found.append(capability.__name__)
    if not found:
        names = ", ".join(c.__name__ for c, _ in CAPABILITIES)
        raise _Failure(f"the plugin implements none of the capabilities: {names}")
    return ", ".join(found)


def _same_parameters(
    method: Callable[..., Any], protocol: Callable[..., Any], capability: str
) -> None:
    """``method`` takes at least the parameters its Protocol declares, by those names; any
    more must have defaults (the runtime never passes them)."""
    declared = inspect.signature(protocol).parameters
    actual = inspect.signature(method).parameters
    name = method.__name__
    wanted = [p for p in declared if p != "self"]
    given = list(actual)
    if given[: len(wanted)] != wanted and not any(
        p.kind is inspect.Parameter.VAR_POSITIONAL for p in actual.values()
    ):
        raise _Failure(
            f"`{name}` must take ({', '.join(wanted)}) as {capability} declares, "
            f"not ({', '.join(given)})"
        )
    extra = [
        p.name
        for p in list(actual.values())[len(wanted) :]
        if p.default is inspect.Parameter.empty
        and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if extra:
        raise _Failure(f"`{name}` has parameters the runtime never passes: {', '.join(extra)}")


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
        if client is not None and isinstance(plugin, FrameServer):
            await _serve_side(run, plugin, name, client)
        elif client is not None:
            run.skip("serve: round trip", "not a FrameServer (it serves no frame streams)")
    label = registered or str(getattr(type(plugin), "name", transport))
    report = CheckReport(label, tuple(run.results))
    if raise_on_failure and report.failed:
        raise TransportCheckError(report)
    return report


async def _connect_side(
    run: _Run, plugin: Transport, name: str, target: Target | None, unreachable: Target | None
) -> None:
    labels = ("round trip", "framing", "ordering", "cancellation", "end of stream")
    if not isinstance(plugin, UpstreamConnector):
        for label in (*labels, "error conversion", "record/replay"):
            run.skip(label, "not an UpstreamConnector (it reaches no live server)")
        return
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
    with contextlib.ExitStack() as held:
        bad = unreachable or held.enter_context(_unreachable(target))
        await run.check("error conversion", partial(_error_conversion, plugin, target, bad))
    if target is None:
        run.skip("record/replay", "no target given")
    else:
        await run.check("record/replay", partial(_record_replay_connect, plugin, name, target))


async def _serve_side(run: _Run, plugin: FrameServer, name: str, client: ClientFactory) -> None:
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


@contextlib.contextmanager
def _unreachable(target: Target | None) -> Iterator[Target]:
    """A target like ``target`` that nothing answers at, for as long as the block runs.

    For a URL, a loopback port this process binds and never listens on: a connection is
    refused, and no other process can take the port meanwhile (one that was merely free a
    moment ago could be taken by anything on a busy machine, which would then answer)."""
    if target is None:
        yield Target()
    elif target.url:
        parts = urlsplit(target.url)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            yield Target(url=urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}")))
    else:
        missing = Path(tempfile.gettempdir()) / "cassette-check" / "no-such-server"
        yield Target(command=(str(missing),))
