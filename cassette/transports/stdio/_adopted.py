"""A process spawned early (``cassette.transports.stdio._early``), as an anyio process: the
server of a plain recording, and its keeper.

``StdioUpstream`` speaks to an ``anyio.abc.Process``; anyio makes one only for a process
it spawns itself. This one wraps a process we spawned before the event loop existed: its
pipes are read and written on the loop like our own stdin and stdout (``_fdio``), and its
exit is seen through a pidfd that becomes readable when it ends (Linux, where alone a
server is spawned early), then reaped with ``waitpid``.
"""

from __future__ import annotations

import os
import signal
import sys

import anyio
import anyio.abc

from cassette.transports._fdio import FdReader, FdWriter
from cassette.transports.stdio._early import Early

__all__ = ["AdoptedProcess"]


class _Receive(anyio.abc.ByteReceiveStream):
    """Our end of the server's stdout or stderr."""

    def __init__(self, fd: int) -> None:
        self._reader = FdReader(fd)
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if self._closed:
            raise anyio.ClosedResourceError
        chunk = await self._reader.read()
        if not chunk:
            raise anyio.EndOfStream
        return chunk

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            self._reader.restore()
            os.close(self._reader.fd)


class _Send(anyio.abc.ByteSendStream):
    """Our end of the server's stdin."""

    def __init__(self, fd: int) -> None:
        self._writer = FdWriter(fd)
        self._closed = False

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        await self._writer.write(item)

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._writer.fd)


class AdoptedProcess(anyio.abc.Process):
    """The early server, as ``anyio.open_process`` would have handed it to us."""

    def __init__(self, early: Early) -> None:
        self._pid = early.pid
        self._stdin = _Send(early.stdin)
        self._stdout = _Receive(early.stdout) if early.stdout >= 0 else None
        self._stderr = _Receive(early.stderr) if early.stderr >= 0 else None
        self._returncode: int | None = None
        self._waiting = anyio.Lock()
        #: readable once the process has exited (closed once it is reaped)
        self._pidfd = early.pidfd

    async def wait(self) -> int:
        if sys.platform != "linux":  # never adopted elsewhere (see ``_early``)
            raise NotImplementedError("a server is spawned early on Linux only")
        async with self._waiting:  # one waiter on the pidfd; the others find the code
            while self._returncode is None:
                await anyio.wait_readable(self._pidfd)
                self._reap()
        return self._returncode

    def _reap(self) -> None:
        """The exit code, once the pidfd says there is one (``WNOHANG``: never blocks)."""
        if sys.platform == "win32":  # never adopted there (see ``_early``)
            raise NotImplementedError
        pid, status = os.waitpid(self._pid, os.WNOHANG)
        if pid:
            self._returncode = os.waitstatus_to_exitcode(status)
            os.close(self._pidfd)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(getattr(signal, "SIGKILL", signal.SIGTERM))

    def send_signal(self, signal: signal.Signals) -> None:
        if self._returncode is None:  # a reaped id may belong to someone else by now
            os.kill(self._pid, signal)

    async def aclose(self) -> None:
        """As anyio's: close the pipes, then wait for the process to exit."""
        with anyio.CancelScope(shield=True):
            for stream in (self._stdin, self._stdout, self._stderr):
                if stream is not None:
                    await stream.aclose()
        await self.wait()

    @property
    def pid(self) -> int:
        return self._pid

    @property
    def returncode(self) -> int | None:
        return self._returncode

    @property
    def stdin(self) -> anyio.abc.ByteSendStream:
        return self._stdin

    @property
    def stdout(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stdout

    @property
    def stderr(self) -> anyio.abc.ByteReceiveStream | None:
        return self._stderr
