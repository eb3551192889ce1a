"""Recording: a transparent proxy between a client and a live server, writing the cassette.

Two shapes, chosen by what the transport can do (``cassette.transport``):

* a frame transport that reaches its server (``UpstreamConnector``: stdio, or a plugin
  such as TCP) records with ``record``: the client is a frame stream (by default our own
  stdin and stdout), the server the transport's ``Upstream``, and ``proxy`` relays both
  ways;
* a network transport with a ``RecordingFront`` (streamable HTTP, SSE) records with
  ``record_proxy``: the plugin serves the proxy and reports what passed to a ``Tap``.

Ordering rules that make a recording trustworthy:

* a frame is appended to the cassette *before* it is forwarded (``Sink``), so whatever the
  other side has seen is on disk when a kill arrives;
* the proxy forwards frames byte for byte; the recorder only reads them;
* when the client finishes, the server gets end of input (``send_eof``) and time to exit;
  when the server finishes, its exit is recorded and the client sees end of stream.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from typing import Any, Literal

import anyio
import attrs

from cassette.core.deadlines import SHUTDOWN_GRACE
from cassette.core.eras import ERA_CHOICES, era_refusal
from cassette.core.jsonrpc import classify, dumps_bytes
from cassette.core.redaction import Redactor, secret_environment
from cassette.errors import TransportClosedError, UsageError
from cassette.registry import get_connector, get_transport
from cassette.runtime.sink import Sink, SinkTap, open_sink, stderr_passthrough
from cassette.runtime.watchdog import Watchdog
from cassette.transport import (
    ConnectOptions,
    Frame,
    FrameStream,
    RecordingFront,
    RecordOptions,
    ServeOptions,
    Target,
    Transport,
    Upstream,
)

__all__ = [
    "RecordConfig",
    "RecordResult",
    "print_err",
    "proxy",
    "record",
    "record_http",
    "record_proxy",
    "record_session",
]

Warn = Callable[[str], None]


def default_redactor() -> Redactor:
    """The built-in rules, plus the value of every variable of this process's environment
    whose name says it is secret (the server inherits them, and may print them)."""
    return Redactor.configured(environ=os.environ)


def _redactor(choice: Redactor | Literal["default"] | None) -> Redactor | None:
    """Redaction is on unless the caller turned it off (``None``)."""
    return default_redactor() if choice == "default" else choice


@attrs.frozen(kw_only=True)
class RecordConfig:
    """What a recording is, decided once by its caller (the CLI, a mode, a harness).

    ``redactor`` is on by default; ``None`` writes secrets as they are. ``strategy`` is
    stored in the header for replays to use by default. ``upstream_timeout`` (seconds)
    answers a request the server leaves unanswered that long with an error, recorded
    (stdio: none by default, since a tool call may rightly take minutes; HTTP: the
    transport's 60 s); ``on_warning`` hears about each.
    """

    path: str | os.PathLike[str]
    transport: str | Transport = "stdio"
    overwrite: bool = False
    fsync: bool = False
    strategy: str | None = None
    redactor: Redactor | None = attrs.field(factory=default_redactor, converter=_redactor)
    passthrough_stderr: bool = True
    upstream_timeout: float | None = None
    on_warning: Warn | None = None
    #: the era to record in (``cassette.core.eras.era_refusal``): ``auto`` lets the client
    #: choose; ``legacy`` or ``modern`` answers the other era's opening in the server's place
    era: str = attrs.field(default="auto", validator=attrs.validators.in_(ERA_CHOICES))


@attrs.frozen
class RecordResult:
    """How a recording ended."""

    path: str
    exit_code: int | None
    events: int


def print_err(text: str) -> None:
    """One line for a person, on stderr (stdout may be carrying protocol)."""
    import sys

    print(text, file=sys.stderr, flush=True)


def _warn(config: RecordConfig) -> Warn:
    return config.on_warning or (lambda text: print_err(f"cassette: warning: {text}"))


# -- the frame proxy -----------------------------------------------------------------------


async def _end_after_client(upstream: Upstream, client_done: anyio.Event) -> None:
    """Once the client has finished, the server gets the shutdown grace to end by itself;
    a server that ignores end of input is then ended by the transport (stdio: terminate,
    then kill), so it never outlives its recording. Cancelled when it ends in time."""
    await client_done.wait()
    await anyio.sleep(SHUTDOWN_GRACE)
    with anyio.CancelScope(shield=True):
        await upstream.aclose()


@attrs.define
class _Relay:
    """What both directions of a frame proxy share."""

    client: FrameStream
    upstream: Upstream
    sink: Sink
    watchdog: Watchdog | None
    lock: anyio.Lock  # one frame to the client at a time
    era: str = "auto"

    async def to_client(self, frame: Frame) -> None:
        async with self.lock:
            await self.client.send(frame)

    async def answered_here(self, frame: Frame) -> bool:
        """Answer, in the server's place, a client request of the era not recorded (``--era``);
        the answer is recorded as the server's."""
        if self.era == "auto" or not (
            b"server/discover" in frame.data or b"initialize" in frame.data
        ):
            return False
        answer = era_refusal(self.era, classify(frame.data).value)
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


async def _relay_client(relay: _Relay, client_done: anyio.Event) -> None:
    try:
        await _client_to_server(relay)
    finally:
        client_done.set()


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


async def proxy(
    client: FrameStream,
    upstream: Upstream,
    sink: Sink,
    *,
    upstream_timeout: float | None = None,
    on_warning: Warn | None = None,
    era: str = "auto",
) -> int | None:
    """Forward both ways until the server's output ends; returns its exit code.

    With ``upstream_timeout``, a request the server leaves unanswered that long gets an
    error in its place (see ``cassette.runtime.watchdog``); ``on_warning`` hears about each.
    With ``era`` (``legacy`` or ``modern``), the other era's opening is answered here."""
    watchdog = None
    if upstream_timeout is not None:
        warn = on_warning or (lambda text: print_err(f"cassette: warning: {text}"))
        watchdog = Watchdog(upstream_timeout, sink, client, warn)
    lock = watchdog.lock if watchdog is not None else anyio.Lock(fast_acquire=True)
    relay = _Relay(client, upstream, sink, watchdog, lock, era)
    client_done = anyio.Event()
    async with anyio.create_task_group() as tg:
        tg.start_soon(_relay_client, relay, client_done)
        tg.start_soon(_end_after_client, upstream, client_done)
        if watchdog is not None:
            tg.start_soon(watchdog.run)
        code = await _server_to_client(relay)
        tg.cancel_scope.cancel()  # the server is gone: stop waiting for the client
    return code


def _open(config: RecordConfig, plugin: Transport, target: Target) -> Sink:
    """A fresh recording of ``target``: the header names it (a URL, else the command line;
    the recorder redacts it) and the transport that carried it. Secret-named variables of
    the server's own environment are redacted wherever they appear, as ours are."""
    redactor = config.redactor
    if redactor is not None and target.env:
        redactor = redactor.with_literals(secret_environment(target.env))
    described: dict[str, Any]
    described = {"url": target.url} if target.url is not None else {"command": list(target.command)}
    return open_sink(
        config.path,
        plugin.name,
        described,
        strategy=config.strategy,
        redactor=redactor,
        overwrite=config.overwrite,
        fsync=config.fsync,
    )


async def record_session(
    target: Target, config: RecordConfig, client: FrameStream | None = None
) -> RecordResult:
    """Record the live server at ``target`` through a frame proxy, to ``config.path``.

    ``client`` is the stream to the client; by default, our own stdin and stdout (what
    ``cassette record`` does). The cassette is closed cleanly on cancellation, with the
    server's exit in it."""
    plugin = get_connector(config.transport)
    sink = _open(config, plugin, target)
    stderr_out = stderr_passthrough if config.passthrough_stderr else None
    options = ConnectOptions(on_side_event=lambda event: sink.side_event(event, stderr_out))
    code: int | None = None
    reached: list[Upstream] = []
    try:
        async with plugin.connect(target, options) as upstream:
            reached.append(upstream)
            if client is None:
                from cassette.transports.stdio import StdioClientStream

                client = StdioClientStream()
            try:
                code = await proxy(
                    client,
                    upstream,
                    sink,
                    upstream_timeout=config.upstream_timeout,
                    on_warning=_warn(config),
                    era=config.era,
                )
            finally:
                with anyio.CancelScope(shield=True):
                    await client.aclose()
    finally:
        # Cancelled (a signal, a harness giving up): the transport has ended the server by
        # now; its exit still belongs in the cassette.
        if reached and not sink.exit_recorded:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                sink.exit(await reached[0].wait())
        sink.finish()
    return RecordResult(os.fspath(config.path), code, sink.count)


async def record(
    command: Sequence[str],
    path: str | os.PathLike[str],
    *,
    client: FrameStream | None = None,
    transport: str = "stdio",
    overwrite: bool = False,
    fsync: bool = False,
    strategy: str | None = None,
    passthrough_stderr: bool = True,
    redactor: Redactor | Literal["default"] | None = "default",
    url: str | None = None,
    upstream_timeout: float | None = None,
    on_warning: Warn | None = None,
) -> RecordResult:
    """Record a live server through a transparent proxy (the keyword form of
    ``record_session``, for harnesses).

    ``url`` is for frame transports that reach their server by address (a plugin's, such
    as a TCP one): it is the target instead of a command."""
    config = RecordConfig(
        path=path,
        transport=transport,
        overwrite=overwrite,
        fsync=fsync,
        strategy=strategy,
        redactor=redactor,
        passthrough_stderr=passthrough_stderr,
        upstream_timeout=upstream_timeout,
        on_warning=on_warning,
    )
    return await record_session(Target(command=tuple(command), url=url), config, client)


# -- the network proxy ---------------------------------------------------------------------


def recording_front(transport: str | Transport) -> RecordingFront:
    """The plugin's recording proxy, or a ``UsageError`` saying it has none."""
    plugin = get_transport(transport) if isinstance(transport, str) else transport
    if not isinstance(plugin, RecordingFront):
        raise UsageError(f"transport {plugin.name!r} cannot record an upstream URL")
    return plugin


async def record_proxy(
    upstream: str, config: RecordConfig, listen: ServeOptions = ServeOptions()
) -> RecordResult:
    """Record a live network endpoint through the transport's local reverse proxy, until
    cancelled. Point the client at the URL ``listen.on_ready`` receives; every client
    session that passes through is kept in the one cassette."""
    plugin = recording_front(config.transport)
    sink = _open(config, plugin, Target(url=upstream))
    options = RecordOptions(
        host=listen.host,
        port=listen.port,
        max_message_bytes=listen.max_message_bytes,
        on_ready=listen.on_ready,
        upstream_timeout=config.upstream_timeout,
        allowed_origins=listen.allowed_origins,
        era=config.era,
    )
    try:
        await plugin.record_proxy(upstream, SinkTap(sink), options)
    finally:
        sink.finish()
    return RecordResult(os.fspath(config.path), None, sink.count)


async def record_http(
    upstream: str,
    path: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    overwrite: bool = False,
    fsync: bool = False,
    strategy: str | None = None,
    on_ready: Callable[[str], None] | None = None,
    transport: str = "streamable-http",
    redactor: Redactor | Literal["default"] | None = "default",
    upstream_timeout: float | None = None,
    max_message_bytes: int | None = None,
) -> RecordResult:
    """The keyword form of ``record_proxy``: record ``upstream`` until cancelled. A
    request body over ``max_message_bytes`` (default 64 MiB) gets 413."""
    config = RecordConfig(
        path=path,
        transport=transport,
        overwrite=overwrite,
        fsync=fsync,
        strategy=strategy,
        redactor=redactor,
        upstream_timeout=upstream_timeout,
    )
    listen = ServeOptions(host=host, port=port, on_ready=on_ready)
    if max_message_bytes is not None:
        listen = attrs.evolve(listen, max_message_bytes=max_message_bytes)
    return await record_proxy(upstream, config, listen)
