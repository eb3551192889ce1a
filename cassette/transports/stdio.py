"""stdio: newline-delimited JSON-RPC over a child's pipes, or over our own stdin/stdout.

Theory of operation
-------------------
``connect`` spawns the server command with anyio's process API (an argv list, never a
shell string, so quoting cannot differ between platforms) and frames its stdout into
lines. Its stderr is read by a task of its own and reported line by line as
``StderrLine`` side events, verbatim. When the client has finished, ``send_eof``
closes the server's stdin; the specification's shutdown order follows if it does not
exit on its own: wait ``grace`` seconds, terminate, wait ``kill_after`` more, kill.
Leaving the context always ends the process, shielded from cancellation, so a cancelled
recording never leaves an orphan.

``serve`` runs the one client of a stdio server: whoever started us, on our stdin and
stdout. stdout carries frames only; nothing else in the process may write to it. A
client line over ``ServeOptions.max_message_bytes`` is dropped as it arrives and handed
on as an empty frame marked ``oversized``, so a replay refuses it without holding it.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from subprocess import PIPE
from typing import ClassVar, Final

import anyio
import anyio.abc

from cassette.core.limits import DEFAULT_MAX_BYTES
from cassette.errors import TransportClosedError, TransportError
from cassette.transport import (
    ConnectOptions,
    Frame,
    Handler,
    ServeOptions,
    SideEventHandler,
    StderrLine,
    Target,
    Upstream,
)
from cassette.transports._drain import until_read
from cassette.transports._fdio import FdReader, FdWriter, unread_counter
from cassette.transports._lines import LineBuffer, Oversized

__all__ = ["StdioClientStream", "StdioTransport", "StdioUpstream"]

GRACE: Final = 5.0  # seconds a server gets to exit after its stdin closes
KILL_AFTER: Final = 2.0  # seconds between terminate and kill
LINE_LIMIT: Final = DEFAULT_MAX_BYTES  # bytes of one line a replay accepts from its client


class _Framer:
    """Turns a chunk source into line frames; the unterminated tail comes last."""

    def __init__(self, limit: int | None = None) -> None:
        self._buffer = LineBuffer(limit)
        self._ready: list[bytes] = []
        self._index = 0
        self.eof = False

    def next_ready(self) -> bytes | None:
        if self._index < len(self._ready):
            line = self._ready[self._index]
            self._index += 1
            return line
        return None

    async def next_frame(self, read: Callable[[], Awaitable[bytes]]) -> Frame:
        """The next line, reading chunks with ``read`` (``b""`` = end) as needed."""
        while True:
            line = self.next_ready()
            if isinstance(line, Oversized):
                return Frame(b"", meta={"oversized": line.size})
            if line is not None:
                return Frame(line)
            if self.eof:
                raise anyio.EndOfStream
            self.push(await read())

    def push(self, chunk: bytes) -> None:
        if chunk:
            self._ready = self._buffer.feed(chunk)
        else:
            self.eof = True
            tail = self._buffer.tail()
            self._ready = [tail] if tail else []
        self._index = 0


class StdioUpstream:
    """A spawned server process, spoken to over its stdin and stdout."""

    def __init__(self, process: anyio.abc.Process, grace: float, kill_after: float) -> None:
        self.process = process
        self._framer = _Framer()
        self._grace = grace
        self._kill_after = kill_after
        self._input_closed = False
        self._input_closed_at: float | None = None

    async def send(self, frame: Frame) -> None:
        stdin = self.process.stdin
        if stdin is None or self._input_closed:
            raise TransportClosedError("the server's stdin is closed")
        try:
            await stdin.send(frame.data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            raise TransportClosedError(f"the server stopped reading its stdin: {exc}") from exc

    async def receive(self) -> Frame:
        return await self._framer.next_frame(self._read_stdout)

    async def _read_stdout(self) -> bytes:
        stdout = self.process.stdout
        assert stdout is not None
        try:
            return await stdout.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return b""

    async def send_eof(self) -> None:
        """The client has finished: close the server's stdin."""
        if self._input_closed:
            return
        self._input_closed = True
        self._input_closed_at = anyio.current_time()
        if self.process.stdin is not None:
            # The server may already be gone; closing is all we wanted.
            with contextlib.suppress(anyio.BrokenResourceError, OSError):
                await self.process.stdin.aclose()

    async def wait(self) -> int | None:
        return await self.process.wait()

    async def aclose(self) -> None:
        await self.shutdown()

    async def shutdown(self) -> None:
        """Close stdin, wait, terminate, kill: the MCP stdio shutdown sequence. The grace is
        counted from when stdin closed, so a server that ignores end of input is
        terminated ``grace`` seconds after it, however the ending was reached."""
        with anyio.CancelScope(shield=True):
            await self.send_eof()
            closed_at = self._input_closed_at or anyio.current_time()
            left = max(0.0, closed_at + self._grace - anyio.current_time())
            with anyio.move_on_after(left):
                await self.process.wait()
                return
            _signal(self.process, signal.SIGTERM)
            with anyio.move_on_after(self._kill_after):
                await self.process.wait()
                return
            _signal(self.process, signal.SIGKILL if hasattr(signal, "SIGKILL") else None)
            await self.process.wait()


def _signal(process: anyio.abc.Process, sig: signal.Signals | None) -> None:
    try:
        if sig is None or sig == getattr(signal, "SIGKILL", None):
            process.kill()
        else:
            process.terminate()
    except ProcessLookupError:
        pass  # it exited between our check and the signal


async def _pump_stderr(
    process: anyio.abc.Process, on_side_event: SideEventHandler, done: anyio.Event
) -> None:
    try:
        await _read_stderr(process, on_side_event)
    finally:
        done.set()


async def _read_stderr(process: anyio.abc.Process, on_side_event: SideEventHandler) -> None:
    stream = process.stderr
    if stream is None:
        return
    buffer = LineBuffer()
    while True:
        try:
            chunk = await stream.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            break
        for line in buffer.feed(chunk):
            on_side_event(StderrLine(line))
    tail = buffer.tail()
    if tail:
        on_side_event(StderrLine(tail))


class StdioClientStream:
    """Our own stdin and stdout: the channel to the client that launched us."""

    def __init__(
        self, stdin_fd: int = 0, stdout_fd: int = 1, *, line_limit: int | None = None
    ) -> None:
        self._reader = FdReader(stdin_fd)
        self._writer = FdWriter(stdout_fd)
        self._unread = unread_counter(stdout_fd)
        self._framer = _Framer(line_limit)
        self._stdout_fd = stdout_fd
        self._closed = False

    async def receive(self) -> Frame:
        return await self._framer.next_frame(self._read_stdin)

    async def _read_stdin(self) -> bytes:
        try:
            return await self._reader.read()
        except OSError:
            return b""  # stdin went away under us: treat it as the client finishing

    async def send(self, frame: Frame) -> None:
        if self._closed:
            raise TransportClosedError("stdout is closed")
        try:
            await self._writer.write(frame.data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise TransportClosedError("the client stopped reading our stdout") from exc

    async def drained(self) -> bool:
        """Wait until the client has read all we wrote (``Drainable``; the caller bounds
        the wait; ``cassette.transports._drain`` says why and how)."""
        if self._unread is None or self._closed:
            return False
        return await until_read(self._unread)

    async def send_eof(self) -> None:
        """End our output: the client sees end of file, as from a server that exited."""
        if self._closed:
            return
        self._closed = True
        self._writer.restore()
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            # Keep descriptor 1 valid (nothing may reuse it for a file) but let go of the pipe.
            os.dup2(devnull, self._stdout_fd)
        finally:
            os.close(devnull)

    async def aclose(self) -> None:
        """Done with the client: end our output and give stdin back its blocking mode."""
        await self.send_eof()
        self._reader.restore()


class StdioTransport:
    """The ``stdio`` transport plugin."""

    name: ClassVar[str] = "stdio"

    def __init__(self, *, grace: float = GRACE, kill_after: float = KILL_AFTER) -> None:
        self.grace = grace
        self.kill_after = kill_after

    @asynccontextmanager
    async def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AsyncIterator[Upstream]:
        if not target.command:
            raise TransportError("the stdio transport needs a server command to run")
        env = None if target.env is None else {**os.environ, **target.env}
        try:
            process = await anyio.open_process(
                list(target.command), stdin=PIPE, stdout=PIPE, stderr=PIPE, cwd=target.cwd, env=env
            )
        except OSError as exc:
            raise TransportError(
                f"cannot start server {target.command[0]!r}: {exc.strerror or exc}"
            ) from exc
        upstream = StdioUpstream(process, self.grace, self.kill_after)
        report: SideEventHandler = options.on_side_event or (lambda _event: None)
        stderr_done = anyio.Event()
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_pump_stderr, process, report, stderr_done)
                try:
                    yield upstream
                finally:
                    await upstream.shutdown()
                    # Let the last stderr lines arrive, but a grandchild that inherited the
                    # pipe must not keep us waiting forever.
                    with anyio.move_on_after(1.0, shield=True):
                        await stderr_done.wait()
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await process.aclose()

    async def serve(self, handler: Handler, options: ServeOptions = ServeOptions()) -> None:
        # A replay keeps no line over the limit in memory (a recording proxy has none:
        # it must forward whatever the client sends).
        await handler(StdioClientStream(line_limit=options.max_message_bytes))
