"""stdio: newline-delimited JSON-RPC over a child's pipes, or over our own stdin/stdout.

Theory of operation
-------------------
``connect`` spawns the server command (an argv list, never a shell string, so quoting
cannot differ between platforms) and frames its stdout into lines. On Linux it spawns it
and its keeper (below) with no await between the two (``_early.start_kept``) and adopts
both as anyio processes; elsewhere, and for a server that needs its own directory, with
anyio's process API. Its stderr is read by a task of its own and reported line by line as
``StderrLine`` side events, verbatim. When the client has finished, ``send_eof``
closes the server's stdin; the specification's shutdown order follows if it does not
exit on its own: wait ``grace`` seconds, terminate, wait ``kill_after`` more, kill.
Leaving the context always ends the process, shielded from cancellation, so a cancelled
recording never leaves an orphan; ``hurry`` shortens the waits when the recorder itself
was asked to stop (a signal), so the sequence ends before whoever signalled us loses
patience.

On POSIX the server leads a process group of its own, and the signals go to the group:
what the command started (``npx`` and its ``node``, a shell and its child) ends with it,
and a Ctrl-C in the terminal reaches the recorder alone, which ends the server in order,
recording what it still says. Beside it runs a *keeper* (``cassette.transports.stdio._keeper``):
if this process is killed outright (SIGKILL), before it could end the server, the keeper
gives the server's group the same sequence. No server outlives its recorder by more than
``grace + kill_after`` seconds.

``serve`` runs the one client of a stdio server: whoever started us, on our stdin and
stdout. stdout carries frames only; nothing else in the process may write to it. A
client line over ``ServeOptions.max_message_bytes`` is dropped as it arrives and handed
on as an empty frame marked ``oversized``, so a replay refuses it without holding it.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from subprocess import DEVNULL, PIPE
from typing import TYPE_CHECKING, Any, ClassVar, Final

import anyio
import anyio.abc

from cassette.core.wire.limits import DEFAULT_MAX_BYTES
from cassette.core.wire.meta import OVERSIZED
from cassette.transport import (
    ConnectOptions,
    Frame,
    Handler,
    ServeOptions,
    TransportClosedError,
    TransportError,
    Upstream,
    map_exceptions,
)
from cassette.transports._drain import until_read
from cassette.transports._fdio import FdReader, FdWriter, unread_counter
from cassette.transports.stdio import _early
from cassette.transports.stdio._lines import LineBuffer, Oversized

if TYPE_CHECKING:  # values of reaching a server, built on first use (a replay never does)
    from cassette.transport import SideEventHandler, Target

__all__ = ["StdioClientStream", "StdioTransport", "StdioUpstream"]

KEEPER: Final = str(Path(__file__).with_name("_keeper.py"))
GRACE: Final = _early.GRACE  # seconds a server gets to exit after its stdin closes
KILL_AFTER: Final = _early.KILL_AFTER  # seconds between terminate and kill
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
            frame = self.take()
            if frame is not None:
                return frame
            self.push(await read())

    def take(self) -> Frame | None:
        """The next line if one is read already; ``anyio.EndOfStream`` after the last."""
        line = self.next_ready()
        if line is not None:
            return _frame(line)
        if self.eof:
            raise anyio.EndOfStream
        return None

    def frame_now(self, read_now: Callable[[], bytes | None]) -> Frame | None:
        """The next line if it is there without waiting (``read_now``: a chunk, or
        ``None`` when reading would wait)."""
        while True:
            line = self.next_ready()
            if line is not None:
                return _frame(line)
            if self.eof:
                return None
            chunk = read_now()
            if chunk is None:
                return None
            self.push(chunk)

    def push(self, chunk: bytes) -> None:
        if chunk:
            self._ready = self._buffer.feed(chunk)
        else:
            self.eof = True
            tail = self._buffer.tail()
            self._ready = [tail] if tail else []
        self._index = 0


def _frame(line: bytes) -> Frame:
    if isinstance(line, Oversized):
        return Frame(b"", meta={OVERSIZED: line.size})
    return Frame(line)


class StdioUpstream:
    """A spawned server process, spoken to over its stdin and stdout."""

    def __init__(
        self,
        process: anyio.abc.Process,
        grace: float,
        kill_after: float,
        *,
        group: bool = False,
    ) -> None:
        self.process = process
        self._framer = _Framer()
        self._grace = grace
        self._kill_after = kill_after
        self._group = group  # the server leads its own process group: signal all of it
        self._input_closed = False
        self._input_closed_at: float | None = None
        self._hurry_at = math.inf  # when a hurried stop wants SIGTERM sent
        self._terminated_at: float | None = None
        self._waiting: anyio.CancelScope | None = None  # the shutdown's current wait

    async def send(self, frame: Frame) -> None:
        stdin = self.process.stdin
        if stdin is None or self._input_closed:
            raise TransportClosedError("the server's stdin is closed")
        with _STDIN_ERRORS:
            await stdin.send(frame.data)

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

    def hurry(self, grace: float, kill_after: float) -> None:
        """A stop was asked for (the recorder got a signal): SIGTERM at most ``grace``
        seconds from now, SIGKILL at most ``kill_after`` after it, sooner than usual."""
        self._hurry_at = min(self._hurry_at, anyio.current_time() + grace)
        self._kill_after = min(self._kill_after, kill_after)
        if self._waiting is not None:
            self._waiting.deadline = min(self._waiting.deadline, self._due())

    def _due(self) -> float:
        """When the shutdown's current wait ends: SIGTERM is due ``grace`` after stdin
        closed (or when hurried), SIGKILL ``kill_after`` after SIGTERM."""
        if self._terminated_at is not None:
            return self._terminated_at + self._kill_after
        closed_at = self._input_closed_at or anyio.current_time()
        return min(closed_at + self._grace, self._hurry_at)

    async def shutdown(self) -> None:
        """Close stdin, wait, terminate, kill: the MCP stdio shutdown sequence. The grace is
        counted from when stdin closed, so a server that ignores end of input is
        terminated ``grace`` seconds after it, however the ending was reached; ``hurry``
        shortens it."""
        with anyio.CancelScope(shield=True):
            await self.send_eof()
            if await self._exited_when_due():
                return
            self._terminated_at = anyio.current_time()
            self._signal(signal.SIGTERM)
            if await self._exited_when_due():
                return
            self._signal(getattr(signal, "SIGKILL", signal.SIGTERM))
            await self.process.wait()

    async def _exited_when_due(self) -> bool:
        """Wait for the process to exit until the current step is due."""
        with anyio.CancelScope(deadline=self._due()) as scope:
            self._waiting = scope
            try:
                await self.process.wait()
            finally:
                self._waiting = None
        return self.process.returncode is not None

    def _signal(self, sig: signal.Signals) -> None:
        """Signal the server (its whole process group, where it leads one; the process
        itself if it left the group)."""
        if self._group and _signal_group(self.process.pid, sig):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            if sig == signal.SIGTERM:
                self.process.terminate()
            else:
                self.process.kill()

    def end_stragglers(self) -> None:
        """The server has exited: end what it started and left behind in its group (a
        child holding its stdout would keep the recording open)."""
        if self._group:
            _signal_group(self.process.pid, getattr(signal, "SIGKILL", signal.SIGTERM))


def _signal_group(group: int, sig: signal.Signals) -> bool:
    """Signal a process group; False when there is no such group (any more)."""
    if sys.platform == "win32":  # no process groups of this kind
        return False
    try:
        os.killpg(group, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


async def _pump_stderr(
    process: anyio.abc.Process, on_side_event: SideEventHandler, done: anyio.Event
) -> None:
    try:
        await _read_stderr(process, on_side_event)
    finally:
        done.set()


async def _read_stderr(process: anyio.abc.Process, on_side_event: SideEventHandler) -> None:
    from cassette.transport import StderrLine

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
        # next_frame's loop, written out: a replay waits here once per call, and each
        # coroutine between the task and the wait is resumed on every wake-up
        framer = self._framer
        while True:
            frame = framer.take()
            if frame is not None:
                return frame
            try:
                chunk = await self._reader.read()
            except OSError:
                chunk = b""  # stdin went away under us: treat it as the client finishing
            framer.push(chunk)

    def push_frames(
        self,
        handle: Callable[[bytes, Mapping[str, Any] | None], bool] | None,
        idle: Callable[[], bool] | None,
    ) -> None:
        """Hand each line read while ``receive`` waits to ``handle`` (``Pushing``)."""
        if handle is None or idle is None:
            self._reader.on_chunk = None
            return
        framer = self._framer

        def on_chunk(chunk: bytes) -> bool:
            # frame_now's loop, written out: calling it per line costs two more calls a
            # line (docs/architecture.md, "Speed exceptions", has the figure)
            framer.push(chunk)
            while True:
                line = framer.next_ready()
                if line is not None:
                    if isinstance(line, Oversized):  # as _frame has it
                        if not handle(b"", {OVERSIZED: line.size}):
                            return False
                    elif not handle(line, None):
                        return False
                    continue
                more = self._read_stdin_now()
                if not more:  # nothing there (or the end, which the next read finds)
                    return idle()
                framer.push(more)

        self._reader.on_chunk = on_chunk

    def receive_ready(self) -> Frame | None:
        """A line already sent, read without waiting (``Eager``)."""
        return self._framer.frame_now(self._read_stdin_now)

    def _read_stdin_now(self) -> bytes | None:
        try:
            return self._reader.read_now()
        except OSError:
            return b""  # as in receive: the client finished

    async def send(self, frame: Frame) -> None:
        if self._closed:
            raise TransportClosedError("stdout is closed")
        with _STDOUT_ERRORS:
            await self._writer.write(frame.data)

    def send_ready(self, data: bytes) -> int:
        """Write what stdout takes without waiting (``Eager``)."""
        if self._closed:
            raise TransportClosedError("stdout is closed")
        try:  # _STDOUT_ERRORS written out: this runs once per answer (docs/architecture.md)
            return self._writer.write_now(data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _stdout_closed(exc) from exc

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


def _stdin_closed(exc: BaseException) -> TransportClosedError:
    detail = f": {exc}" if str(exc) else ""  # anyio's errors often carry no text
    return TransportClosedError(f"the server stopped reading its stdin{detail}")


def _stdout_closed(_exc: BaseException) -> TransportClosedError:
    return TransportClosedError("the client stopped reading our stdout")


def _cannot_start(program: str) -> Callable[[BaseException], TransportError]:
    def make(exc: BaseException) -> TransportError:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return TransportError(f"cannot start server {program!r}: {reason}")

    return make


#: Where a foreign error crosses into a stdio stream (``map_exceptions``, built once).
_STDIN_ERRORS: Final = map_exceptions(
    {
        anyio.BrokenResourceError: _stdin_closed,
        anyio.ClosedResourceError: _stdin_closed,
        OSError: _stdin_closed,
    }
)
_STDOUT_ERRORS: Final = map_exceptions(
    {BrokenPipeError: _stdout_closed, ConnectionResetError: _stdout_closed}
)


async def _spawn(argv: list[str], cwd: str | None, env: dict[str, str] | None) -> anyio.abc.Process:
    """Start the server with its stdio piped to us, leading a process group of its own
    where there are process groups (see the module docstring)."""
    if sys.platform == "win32":
        return await anyio.open_process(
            argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, cwd=cwd, env=env
        )
    from cassette.transports.stdio._reaper import started, starting  # not a replay's

    with starting():
        process = await anyio.open_process(
            argv, stdin=PIPE, stdout=PIPE, stderr=PIPE, cwd=cwd, env=env, start_new_session=True
        )
        started.add(process.pid)
    return process


def _adopt(
    target: Target, grace: float, kill_after: float
) -> tuple[anyio.abc.Process | None, anyio.abc.Process | None]:
    """The server spawned for ``target`` before the command line was imported, if it was
    (``cassette.transports.stdio._early``): a plain recording's server boots while we start.
    With it, its keeper, when it keeps the server as this transport would."""
    if target.cwd is not None or target.env is not None:
        return None, None
    early = _early.claim(tuple(target.command))
    if early is None:
        return None, None
    keeper = early.keeper
    if keeper is not None and (grace, kill_after) != (_early.GRACE, _early.KILL_AFTER):
        _early.dismiss(keeper)  # it would keep other times: one is started that does
        early.keeper = None
    return _adopted(early)


def _spawn_kept(
    target: Target, grace: float, kill_after: float
) -> tuple[anyio.abc.Process | None, anyio.abc.Process | None]:
    """The server and its keeper, spawned with no await between them where that can be
    done (``cassette.transports.stdio._early.start_kept`` says why); ``None, None``
    elsewhere, and for a ``cwd`` (a spawn there cannot change directory) or an ``env``
    that sets ``PATH`` (the command would be looked up in ours): ``_spawn`` does it."""
    if target.cwd is not None or (target.env is not None and "PATH" in target.env):
        return None, None
    env = None if target.env is None else {**os.environ, **target.env}
    server = _early.start_kept(tuple(target.command), env, grace, kill_after)
    if server is None:
        return None, None
    return _adopted(server)


def _adopted(
    early: _early.Early,
) -> tuple[anyio.abc.Process, anyio.abc.Process | None]:
    """``early`` and its keeper as anyio processes, both known to the reaper as ours."""
    from cassette.transports.stdio._adopted import AdoptedProcess
    from cassette.transports.stdio._reaper import started

    started.add(early.pid)
    if early.keeper is None:
        return AdoptedProcess(early), None
    started.add(early.keeper.pid)
    return AdoptedProcess(early), AdoptedProcess(early.keeper)


async def _start_keeper(
    process: anyio.abc.Process, grace: float, kill_after: float
) -> anyio.abc.Process | None:
    """The keeper of ``process`` (``cassette.transports.stdio._keeper`` says why), or ``None``
    where there are no process groups, or when it cannot start (the recording goes on:
    the keeper is a safety net, not a condition)."""
    if sys.platform == "win32":
        return None
    argv = [sys.executable, "-I", "-S", KEEPER, str(process.pid), str(grace), str(kill_after)]
    from cassette.transports.stdio._reaper import started, starting

    with starting():
        try:
            keeper = await anyio.open_process(
                argv, stdin=PIPE, stdout=DEVNULL, stderr=DEVNULL, start_new_session=True
            )
        except OSError:
            return None
        started.add(keeper.pid)
    return keeper


async def _dismiss_keeper(keeper: anyio.abc.Process | None) -> None:
    """The server is gone: tell its keeper so, and reap it."""
    if keeper is None:
        return
    if keeper.stdin is not None:
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            await keeper.stdin.send(b"done\n")
    with anyio.move_on_after(5.0):
        await keeper.aclose()
    if keeper.returncode is None:  # pragma: no cover  (it exits at once when told)
        keeper.kill()
        await keeper.wait()


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
        process, early_keeper = _adopt(target, self.grace, self.kill_after)
        if process is None:
            process, early_keeper = _spawn_kept(target, self.grace, self.kill_after)
        if process is None:
            env = None if target.env is None else {**os.environ, **target.env}
            with map_exceptions({OSError: _cannot_start(target.command[0])}):
                process = await _spawn(list(target.command), target.cwd, env)
        group = sys.platform != "win32"  # it leads its own process group (see _spawn)
        upstream = StdioUpstream(process, self.grace, self.kill_after, group=group)
        report: SideEventHandler = options.on_side_event or (lambda _event: None)
        stderr_done = anyio.Event()
        keeper = early_keeper or await _start_keeper(process, self.grace, self.kill_after)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(_pump_stderr, process, report, stderr_done)
                try:
                    yield upstream
                finally:
                    await upstream.shutdown()
                    # Let the last stderr lines arrive, but a grandchild that inherited the
                    # pipe must not keep us waiting forever: once that wait is over, what
                    # the server left running in its group is ended.
                    with anyio.move_on_after(1.0, shield=True):
                        await stderr_done.wait()
                    upstream.end_stragglers()
                    tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await process.aclose()
                await _dismiss_keeper(keeper)
            from cassette.transports.stdio._reaper import end_adopted, started

            started.discard(process.pid)
            if keeper is not None:
                started.discard(keeper.pid)
            end_adopted()  # what left the group, re-parented here (``_reaper``)

    async def serve(self, handler: Handler, options: ServeOptions = ServeOptions()) -> None:
        # A replay keeps no line over the limit in memory (a recording proxy has none:
        # it must forward whatever the client sends).
        await handler(StdioClientStream(line_limit=options.max_message_bytes))
