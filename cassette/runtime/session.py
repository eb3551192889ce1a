"""The async glue: recording proxy and replay loops, and the harness-facing API.

This is the only module that owns task groups. It joins a transport's streams to the
sans-IO core: frames go in, records come out to the writer, replies go back. Ordering
rules that make a recording trustworthy live here:

* a frame is appended to the cassette *before* it is forwarded, so whatever the other
  side has seen is already on disk when a kill arrives (once the era is known; see
  ``Recorder`` for why the first exchange waits in memory);
* the proxy forwards frames byte for byte; the recorder only reads them;
* when the client finishes, the server's stdin is closed and the server is given time to
  exit; when the server finishes, its exit is recorded and the client sees end of stream.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any, Literal

import anyio
import anyio.abc
import attrs

from cassette.core.jsonrpc import JSONObject, Kind, classify, dumps_bytes, error_response
from cassette.core.matching import MissReport, Strategy
from cassette.core.model import ExitEvent
from cassette.core.recorder import Record, Recorder
from cassette.core.redaction import Redactor
from cassette.core.replayer import Replayer, Reply, Responder
from cassette.errors import CassetteError, TransportClosedError, UsageError
from cassette.registry import get_transport
from cassette.runtime.watchdog import Watchdog
from cassette.store.storage import Cassette, CassetteWriter
from cassette.transport import (
    Exited,
    Frame,
    FrameStream,
    SideEvent,
    StderrLine,
    Target,
    Upstream,
)

__all__ = [
    "ClientConnection",
    "RecordResult",
    "ReplayResult",
    "open_recording",
    "open_replay",
    "proxy",
    "record",
    "replay",
    "serve_replay",
]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Clock:
    """Seconds since the session started, rounded to the microsecond."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def __call__(self) -> float:
        return round(time.monotonic() - self._t0, 6)


@attrs.frozen
class RecordResult:
    """How a recording ended."""

    path: str
    exit_code: int | None
    events: int


@attrs.frozen
class ReplayResult:
    """How a replay ended: every miss it answered with an error."""

    misses: tuple[MissReport, ...]
    summary: str


class _Sink:
    """Recorder plus writer: observe, then append, in one step."""

    def __init__(self, recorder: Recorder, writer: CassetteWriter, clock: _Clock) -> None:
        self.recorder = recorder
        self.writer = writer
        self.clock = clock
        self.count = 0
        self.exit_recorded = False

    def put(self, records: list[Record]) -> None:
        if records:
            self.count += len(records)
            self.exit_recorded = self.exit_recorded or isinstance(records[-1], ExitEvent)
            self.writer.write(records)

    def frame(self, direction: str, frame: Frame) -> None:
        self.put(self.recorder.observe(direction, frame.data, self.clock()))  # type: ignore[arg-type]

    def side_event(self, event: SideEvent, passthrough: Callable[[bytes], None] | None) -> None:
        if isinstance(event, StderrLine):
            if passthrough is not None:
                passthrough(event.data)
            text = event.data.decode("utf-8", "replace").rstrip("\n")
            self.put(self.recorder.stderr(text, self.clock()))
        elif isinstance(event, Exited):
            self.put(self.recorder.exit(event.code, self.clock()))

    def finish(self) -> None:
        self.put(self.recorder.close())


async def _client_to_server(
    client: FrameStream, upstream: Upstream, sink: _Sink, watchdog: Watchdog | None
) -> None:
    server_gone = False
    while True:
        try:
            frame = await client.receive()
        except anyio.EndOfStream:
            break
        sink.frame("c2s", frame)
        if watchdog is not None:
            watchdog.client_frame(frame.data)
        if not server_gone:
            try:
                await upstream.send(frame)
            except TransportClosedError:
                server_gone = True  # keep recording what the client says; nobody hears it
    await upstream.close_input()


async def _server_to_client(
    client: FrameStream, upstream: Upstream, sink: _Sink, watchdog: Watchdog | None
) -> int | None:
    client_gone = False
    while True:
        try:
            frame = await upstream.receive()
        except anyio.EndOfStream:
            break
        if watchdog is not None and watchdog.late_answer(frame.data):
            continue  # the client was answered in the server's place; this came too late
        sink.frame("s2c", frame)
        if not client_gone:
            try:
                if watchdog is None:
                    await client.send(frame)
                else:
                    async with watchdog.lock:
                        await client.send(frame)
            except TransportClosedError:
                client_gone = True
    code = await upstream.wait()
    sink.put(sink.recorder.exit(code, sink.clock()))
    await client.aclose()
    return code


async def proxy(
    client: FrameStream,
    upstream: Upstream,
    sink: _Sink,
    *,
    upstream_timeout: float | None = None,
    on_warning: Callable[[str], None] | None = None,
) -> int | None:
    """Forward both ways until the server's output ends; returns its exit code.

    With ``upstream_timeout``, a request the server leaves unanswered that long gets an
    error in its place (see ``cassette.runtime.watchdog``); ``on_warning`` hears about each."""
    watchdog = None
    if upstream_timeout is not None:
        warn = on_warning or (lambda text: print_err(f"cassette: warning: {text}"))
        watchdog = Watchdog(upstream_timeout, sink, client, warn)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_client_to_server, client, upstream, sink, watchdog)
        if watchdog is not None:
            tg.start_soon(watchdog.run)
        code = await _server_to_client(client, upstream, sink, watchdog)
        tg.cancel_scope.cancel()  # the server is gone: stop waiting for the client
    return code


def _stderr_passthrough(data: bytes) -> None:
    with contextlib.suppress(OSError):  # our stderr is gone; the line is still recorded
        os.write(2, data)


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
    on_warning: Callable[[str], None] | None = None,
) -> RecordResult:
    """Record a live server through a transparent proxy.

    ``client`` is the stream to the client; by default, our own stdin and stdout (what
    ``python -m cassette record`` does). The cassette is closed cleanly on cancellation.
    ``url`` is for frame transports that reach their server by address (a plugin's, such
    as a TCP one): it is the target instead of a command. ``upstream_timeout`` (seconds,
    default none: a tool call may rightly take minutes) answers a request the server
    leaves unanswered that long with an error, recorded; ``on_warning`` hears about it.
    """
    target = Target(command=tuple(command), url=url)
    plugin = get_transport(transport)
    redactor = _redactor(redactor)
    argv = list(command) if redactor is None else redactor.argv(command)
    header_target: dict[str, Any] = {"command": argv}
    if url is not None:
        header_target = {"url": url if redactor is None else redactor.text(url)}
    sink = _open_sink(
        path,
        transport,
        header_target,
        strategy=strategy,
        redactor=redactor,
        overwrite=overwrite,
        fsync=fsync,
    )
    stderr_out = _stderr_passthrough if passthrough_stderr else None
    code: int | None = None
    reached: list[Upstream] = []
    try:
        async with plugin.connect(
            target, on_side_event=lambda ev: sink.side_event(ev, stderr_out)
        ) as upstream:
            reached.append(upstream)
            if client is None:
                from cassette.transports.stdio import StdioClientStream

                client = StdioClientStream()
            code = await proxy(
                client, upstream, sink, upstream_timeout=upstream_timeout, on_warning=on_warning
            )
    finally:
        # Cancelled (a signal, a harness giving up): the transport has ended the server by
        # now; its exit still belongs in the cassette.
        if reached and not sink.exit_recorded:
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                sink.put(sink.recorder.exit(await reached[0].wait(), sink.clock()))
        sink.finish()
        sink.writer.close()
    return RecordResult(os.fspath(path), code, sink.count)


class _SinkTap:
    """A recording proxy's ``Tap``: what it reports becomes records in the cassette."""

    def __init__(self, sink: _Sink) -> None:
        self.sink = sink

    def frame(self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any]) -> None:
        recorder = self.sink.recorder
        self.sink.put(recorder.observe(direction, data, self.sink.clock(), dict(meta)))

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        self.sink.put(self.sink.recorder.http(method, stream, status, self.sink.clock(), session))


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
    """Record a live HTTP endpoint through a local reverse proxy, until cancelled.

    Point the client at the URL ``on_ready`` receives. Every client session that passes
    through is kept in the one cassette. A request body over ``max_message_bytes``
    (default 64 MiB) gets 413.
    """
    plugin = get_transport(transport)
    record_proxy = getattr(plugin, "record_proxy", None)
    if record_proxy is None:
        raise UsageError(f"transport {transport!r} cannot record an upstream URL")
    redactor = _redactor(redactor)
    header_target: dict[str, Any] = {
        "url": upstream if redactor is None else redactor.text(upstream)
    }
    sink = _open_sink(
        path,
        transport,
        header_target,
        strategy=strategy,
        redactor=redactor,
        overwrite=overwrite,
        fsync=fsync,
    )
    try:
        options: dict[str, Any] = {}
        if upstream_timeout is not None:
            options["upstream_timeout"] = upstream_timeout
        if max_message_bytes is not None:
            options["max_message_bytes"] = max_message_bytes
        await record_proxy(
            upstream, _SinkTap(sink), host=host, port=port, on_ready=on_ready, **options
        )
    finally:
        sink.finish()
        sink.writer.close()
    return RecordResult(os.fspath(path), None, sink.count)


def _open_sink(
    path: str | os.PathLike[str],
    transport: str,
    target: dict[str, Any],
    *,
    strategy: str | None,
    redactor: Redactor | None,
    overwrite: bool,
    fsync: bool,
) -> _Sink:
    """A fresh recording's recorder and writer: the header names what was recorded
    (``target``, already redacted) and the strategy a replay should use by default."""
    if strategy is not None:
        target = {**target, "strategy": strategy}
    recorder = Recorder(
        transport=transport, started_at=_now_iso(), target=target, redactor=redactor
    )
    writer = CassetteWriter(path, overwrite=overwrite, fsync=fsync).open()
    return _Sink(recorder, writer, _Clock())


def _redactor(choice: Redactor | Literal["default"] | None) -> Redactor | None:
    """Redaction is on unless the caller turned it off (``None``)."""
    return Redactor() if choice == "default" else choice


def _encode_out(messages: tuple[Any, ...]) -> bytes:
    return b"".join(dumps_bytes(m) + b"\n" for m in messages)


@attrs.frozen
class Pacing:
    """Reproduce recorded delays between server messages: ``scale`` times each recorded gap,
    but never more than ``cap`` seconds per gap."""

    scale: float = 1.0
    cap: float = 5.0

    def delay(self, gap: float) -> float:
        return min(max(gap, 0.0) * self.scale, self.cap)


#: Seconds a replay waits for the client's answer to a server request before failing the
#: request that waited (the live server would have waited too; a test must not hang).
ANSWER_TIMEOUT = 30.0


class _Delivery:
    """Sends replies to one client in order; watches answers the replay waits for."""

    def __init__(
        self,
        client: FrameStream,
        replayer: Responder,
        tg: anyio.abc.TaskGroup,
        *,
        on_miss: Callable[[str], None] | None,
        on_warning: Callable[[str], None] | None,
        answer_timeout: float,
        pacing: Pacing | None,
    ) -> None:
        self.client, self.replayer, self.tg = client, replayer, tg
        self.on_miss, self.on_warning = on_miss, on_warning
        self.answer_timeout, self.pacing = answer_timeout, pacing
        # fast_acquire: an uncontended acquire does not yield to the event loop, which
        # would cost a loop iteration on every call of a replay (replies are rarely
        # contended: only a timed-out server request races the main loop).
        self.lock = anyio.Lock(fast_acquire=True)

    async def deliver(self, reply: Reply) -> None:
        if reply.miss is not None and self.on_miss is not None:
            self.on_miss(self.replayer.describe(reply.miss))
        for warning in reply.warnings:
            if self.on_warning is not None:
                self.on_warning(warning)
        if reply.messages:
            async with self.lock:
                await self._send(reply)
        for server_id in reply.awaiting:
            self.tg.start_soon(self._watch, server_id)

    async def _send(self, reply: Reply) -> None:
        if not reply.messages:
            return
        if self.pacing is None or reply.since is None:
            await self.client.send(Frame(_encode_out(reply.messages)))
            return
        last = reply.since
        for message, t in zip(
            reply.messages, reply.times or (last,) * len(reply.messages), strict=True
        ):
            await anyio.sleep(self.pacing.delay(t - last))
            last = t
            await self.client.send(Frame(_encode_out((message,))))

    async def _watch(self, server_id: object) -> None:
        await anyio.sleep(self.answer_timeout)
        if server_id in self.replayer.waiting:
            await self.deliver(self.replayer.expire(server_id))


async def replay(
    client: FrameStream,
    replayer: Responder,
    *,
    on_miss: Callable[[str], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    answer_timeout: float = ANSWER_TIMEOUT,
    pacing: Pacing | None = None,
    max_message_bytes: int | None = None,
) -> ReplayResult:
    """Serve one client from a replayer (or any ``Responder``) until the client finishes.

    A frame over ``max_message_bytes`` (or one the transport already dropped as oversized)
    gets an ``Invalid Request`` error and the session goes on."""
    async with anyio.create_task_group() as tg:
        delivery = _Delivery(
            client,
            replayer,
            tg,
            on_miss=on_miss,
            on_warning=on_warning,
            answer_timeout=answer_timeout,
            pacing=pacing,
        )
        try:
            await delivery.deliver(replayer.start())
            while True:
                try:
                    frame = await client.receive()
                except anyio.EndOfStream:
                    break
                oversized = frame.meta.get("oversized") if frame.meta else None
                if max_message_bytes is not None and len(frame.data) > max_message_bytes:
                    oversized = len(frame.data)
                if oversized is not None:
                    text = f"cassette-mcp: a line of {oversized} bytes is over the size limit"
                    await delivery.deliver(Reply((error_response(None, -32600, text),)))
                    continue
                await delivery.deliver(replayer.receive_frame(frame.data))
        except TransportClosedError:
            pass  # the client stopped reading: the session is over
        tg.cancel_scope.cancel()
    await client.aclose()
    return ReplayResult(tuple(replayer.misses), replayer.summary())


async def serve_replay(
    cassette: Cassette,
    *,
    strategy: str | Strategy = "default",
    transport: str = "stdio",
    on_miss: Callable[[str], None] | None = None,
    host: str = "127.0.0.1",
    port: int = 0,
    on_ready: Callable[[str], None] | None = None,
    on_finish: Callable[[ReplayResult], None] | None = None,
    on_warning: Callable[[str], None] | None = None,
    answer_timeout: float = ANSWER_TIMEOUT,
    pacing: Pacing | None = None,
    max_message_bytes: int | None = None,
) -> list[ReplayResult]:
    """Serve a cassette on a transport until it has no more clients.

    A network front serves any number of clients until it is cancelled; ``on_finish``
    gets each session's result (a network front: one for all, when it stops), also when
    the serving ends by cancellation. A client message over ``max_message_bytes``
    (default 64 MiB) is refused: ``-32600`` on stdio (the line is never kept), 413 over
    HTTP.
    """
    plugin = get_transport(transport)
    limit: dict[str, Any] = {}
    if max_message_bytes is not None:
        limit["max_message_bytes"] = max_message_bytes
        if hasattr(plugin, "line_limit"):  # stdio: drop the line as it arrives
            plugin.line_limit = max_message_bytes
    results: list[ReplayResult] = []
    finish = on_finish or (lambda _result: None)
    serve_cassette = getattr(plugin, "serve_cassette", None)
    if serve_cassette is not None:

        def report(misses: list[MissReport], summary: str) -> None:
            results.append(ReplayResult(tuple(misses), summary))
            finish(results[-1])

        await serve_cassette(
            cassette,
            strategy=strategy,
            host=host,
            port=port,
            on_miss=on_miss,
            on_ready=on_ready,
            on_finish=report,
            on_warning=on_warning,
            answer_timeout=answer_timeout,
            **limit,
        )
        return results

    async def handle(stream: FrameStream) -> None:
        result = await replay(
            stream,
            Replayer(cassette, strategy, environ=os.environ),
            on_miss=on_miss,
            on_warning=on_warning,
            answer_timeout=answer_timeout,
            pacing=pacing,
            max_message_bytes=max_message_bytes,
        )
        results.append(result)
        finish(results[-1])

    await plugin.serve(handle)
    return results


# -- the harness API -----------------------------------------------------------------------


class ClientConnection:
    """A harness's side of a session: send and receive JSON-RPC messages as dicts.

    ``request`` is the convenience most harnesses want: it numbers the request, waits for
    the response with that id, and keeps every other message it saw in ``received``.
    """

    def __init__(self, stream: FrameStream) -> None:
        self.stream = stream
        self.received: list[JSONObject] = []
        self._next_id = 0
        self._lines: list[JSONObject] = []

    async def send(self, message: JSONObject) -> None:
        """Send one message."""
        await self.stream.send(Frame(dumps_bytes(message) + b"\n"))

    async def receive(self) -> JSONObject:
        """The next JSON-RPC message from the server (other output is skipped)."""
        while not self._lines:
            frame = await self.stream.receive()
            for line in frame.data.splitlines():
                classified = classify(line)
                if classified.kind is Kind.BATCH:
                    self._lines.extend(classified.value)
                elif classified.is_message:
                    self._lines.append(classified.value)
        return self._lines.pop(0)

    async def request(self, method: str, params: JSONObject | None = None) -> JSONObject:
        """Send a request and return its response message (result or error)."""
        self._next_id += 1
        msg_id = self._next_id
        message: JSONObject = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)
        while True:
            reply = await self.receive()
            if reply.get("id") == msg_id and "method" not in reply:
                return reply
            self.received.append(reply)

    async def notify(self, method: str, params: JSONObject | None = None) -> None:
        """Send a notification."""
        message: JSONObject = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        await self.send(message)

    async def aclose(self) -> None:
        """Finish the session from the client's side."""
        await self.stream.aclose()


@asynccontextmanager
async def open_recording(
    command: Sequence[str],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    transport: str = "stdio",
) -> AsyncIterator[ClientConnection]:
    """Spawn a server, record everything to ``path``, and hand the harness the client side."""
    from cassette.transports.memory import memory_pair

    harness_end, proxy_end = memory_pair()
    result: list[RecordResult] = []

    async def run() -> None:
        result.append(
            await record(
                command,
                path,
                client=proxy_end,
                overwrite=overwrite,
                transport=transport,
                passthrough_stderr=False,
            )
        )

    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        connection = ClientConnection(harness_end)
        try:
            yield connection
        finally:
            await harness_end.aclose()  # the client is done; the proxy winds the server down


@asynccontextmanager
async def open_replay(
    cassette: Cassette | str | os.PathLike[str], *, strategy: str | Strategy = "default"
) -> AsyncIterator[ClientConnection]:
    """Serve a cassette in-process and hand the harness a connection to it."""
    tape = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
    from cassette.transports.memory import MemoryTransport  # not on the stdio path

    transport = MemoryTransport()
    async with anyio.create_task_group() as tg:

        async def handle(stream: FrameStream) -> None:
            await replay(stream, Replayer(tape, strategy, environ=os.environ))

        tg.start_soon(transport.serve, handle)
        stream = transport.open_connection()
        try:
            yield ClientConnection(stream)
        finally:
            await stream.aclose()
            transport.stop()


def print_err(text: str) -> None:
    """One line for a person, on stderr (stdout may be carrying protocol)."""
    print(text, file=sys.stderr, flush=True)


__all__ += ["CassetteError", "print_err"]
