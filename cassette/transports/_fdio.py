"""Asynchronous reads and writes on our own stdin and stdout, without a thread per call.

Why not ``anyio.wrap_file``: it sends every read and write to a worker thread, and a
thread hop per message is most of what a replay costs per call. On POSIX, when a standard
descriptor is a pipe or a socket (which is what an MCP client gives a stdio server), we
make it non-blocking and wait on the event loop for readiness instead. Everything else
(a terminal, a regular file, any descriptor on Windows) falls back to a worker thread, or,
for a regular file that never blocks, to a plain read.

Non-blocking mode belongs to the open file description, which other processes may share,
so it is restored on close. stdout is left blocking (and written from a thread) when
stderr shares its pipe, because Python's own stderr writes do not expect ``EAGAIN``.

What is specific to asyncio (a descriptor kept registered with its loop) is
``cassette.transports._asyncio_backend``, the one module that imports asyncio.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import sys
from collections.abc import Callable
from typing import Final, Literal

import anyio
import anyio.lowlevel
import anyio.to_thread

from cassette.transports._asyncio_backend import LoopReads, running_loop

__all__ = ["FdReader", "FdWriter", "unread_counter"]

_CHUNK: Final = LoopReads.chunk_size
Mode = Literal["poll", "thread", "direct"]


def _kind(fd: int) -> int:
    try:
        return os.fstat(fd).st_mode
    except OSError:
        return 0


def _pollable(fd: int) -> bool:
    mode = _kind(fd)
    return sys.platform != "win32" and (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode))


def _same_file(a: int, b: int) -> bool:
    try:
        sa, sb = os.fstat(a), os.fstat(b)
    except OSError:
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


class _Fd:
    def __init__(self, fd: int, mode: Mode) -> None:
        self.fd = fd
        self.mode: Mode = mode
        self._was_blocking = True
        if sys.platform != "win32" and mode == "poll":  # never chosen on Windows
            self._was_blocking = os.get_blocking(fd)
            os.set_blocking(fd, False)

    def restore(self) -> None:
        if sys.platform != "win32" and self.mode == "poll":
            with contextlib.suppress(OSError):  # already closed: nothing to restore
                os.set_blocking(self.fd, self._was_blocking)


class FdReader(_Fd, LoopReads):
    """Reads chunks from a descriptor; ``b""`` means end of file.

    On asyncio the descriptor stays registered with the event loop from one wait to the
    next, and the loop's callback reads the chunk for the waiting task: a replay waits
    for stdin once per call, and ``anyio.wait_readable`` registers and unregisters the
    descriptor (two ``epoll_ctl`` calls, an event, a cancel scope) on every wait. The
    callback reads only while a task waits; called with none (the client wrote while we
    were busy) it unregisters, so a level-triggered loop does not call it again on every
    iteration, and the next wait registers afresh (``LoopReads``, in the asyncio
    backend). Other backends use ``anyio.wait_readable``.
    """

    def __init__(self, fd: int) -> None:
        if _pollable(fd):
            mode: Mode = "poll"
        elif stat.S_ISREG(_kind(fd)):
            mode = "direct"
        else:
            mode = "thread"
        super().__init__(fd, mode)
        self._init_loop_reads()
        self._empty = False  # read_now just found nothing: read need not try again first
        self._available = _available_counter(fd) if mode == "poll" else None

    def read_now(self) -> bytes | None:
        """A chunk that can be read without waiting, or ``None`` when reading would wait,
        or this mode cannot tell without waiting. (At end of file it may say ``None``:
        ``read`` then finds the end.)"""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            return pending.result()
        if sys.platform == "win32" or self.mode != "poll":
            return None
        if self._available is not None and self._available() == 0:
            # nothing there, asked without the exception a failed read raises (cheaper:
            # the speed-exceptions table's FIONREAD row; asked once per call a replay answers)
            self._empty = True
            return None
        try:
            return os.read(self.fd, _CHUNK)
        except BlockingIOError:
            self._empty = True
            return None

    async def read(self) -> bytes:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            return pending.result()
        if sys.platform != "win32" and self.mode == "poll":
            empty, self._empty = self._empty, False
            try:
                if not empty:  # a failed read costs a system call and an exception
                    return os.read(self.fd, _CHUNK)
            except BlockingIOError:
                pass
            loop = running_loop()
            if loop is not None:
                chunk = await self._read_on(loop)
                # What the loop read was the peer's answer to what we just sent; it rarely
                # has more behind it, so the next read waits on the loop first, where a
                # read that finds nothing costs a system call and an exception a message
                self._empty = True
                return chunk
            while True:
                await anyio.wait_readable(self.fd)
                try:
                    return os.read(self.fd, _CHUNK)
                except BlockingIOError:
                    continue
        if self.mode == "direct":
            await anyio.lowlevel.checkpoint()
            return os.read(self.fd, _CHUNK)
        return await anyio.to_thread.run_sync(os.read, self.fd, _CHUNK, abandon_on_cancel=True)

    def restore(self) -> None:
        self._unregister()
        super().restore()


def _available_counter(fd: int) -> Callable[[], int | None] | None:
    """A way to ask how many bytes ``fd`` has to read (``FIONREAD``), or ``None`` where
    that cannot be asked; the answer is ``None`` when the asking fails."""
    if sys.platform == "win32":
        return None
    import termios

    request = getattr(termios, "FIONREAD", None)
    return None if request is None else _int_ioctl(fd, request)


def _int_ioctl(fd: int, request: int) -> Callable[[], int | None]:
    """Asks ``fd`` the ``ioctl`` ``request`` that answers one C int; ``None`` when it
    fails. The answer's buffer is made once: it is asked once per call a replay answers."""
    if sys.platform == "win32":  # callers ask only where fcntl exists
        raise NotImplementedError("ioctl is POSIX only")
    import array
    import fcntl

    answer = array.array("i", [0])

    def ask() -> int | None:
        try:
            fcntl.ioctl(fd, request, answer, True)
        except OSError:
            return None
        return answer[0]

    return ask


def _family(fd: int) -> int | None:
    try:
        with socket.socket(fileno=os.dup(fd)) as sock:
            return int(sock.family)
    except OSError:
        return None


def unread_counter(fd: int) -> Callable[[], int | None] | None:
    """A way to ask how much of what we wrote to ``fd`` its reader has not read yet;
    ``None`` where that cannot be known. Linux only: a pipe's ``FIONREAD`` counts its
    unread bytes from either end, and a Unix socket's ``SIOCOUTQ`` what the peer has not
    consumed (Node gives a child a socketpair, Python a pipe). A TCP socket's would count
    only unacknowledged bytes, which the peer's kernel holds but its program may not have
    read: not asked."""
    if not sys.platform.startswith("linux"):
        return None
    import termios

    kind = _kind(fd)
    if stat.S_ISFIFO(kind):
        return _int_ioctl(fd, termios.FIONREAD)
    if stat.S_ISSOCK(kind) and _family(fd) == socket.AF_UNIX:
        return _int_ioctl(fd, termios.TIOCOUTQ)  # SIOCOUTQ
    return None


class FdWriter(_Fd):
    """Writes all of a buffer to a descriptor."""

    def __init__(self, fd: int) -> None:
        shares_stderr = fd != 2 and _same_file(fd, 2)
        mode: Mode = "poll" if _pollable(fd) and not shares_stderr else "thread"
        if mode == "thread" and stat.S_ISREG(_kind(fd)):
            mode = "direct"
        super().__init__(fd, mode)

    def write_now(self, data: bytes) -> int:
        """Write what the descriptor takes without waiting; how many bytes that was (none
        in the thread mode, where a write may block)."""
        if sys.platform != "win32" and self.mode == "poll":
            try:
                return os.write(self.fd, data)
            except BlockingIOError:
                return 0
        if self.mode == "direct":
            return os.write(self.fd, data)
        return 0

    async def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if sys.platform != "win32" and self.mode == "poll":
                try:
                    written = os.write(self.fd, view)
                except BlockingIOError:
                    await anyio.wait_writable(self.fd)
                    continue
            elif self.mode == "direct":
                written = os.write(self.fd, view)
            else:
                written = await anyio.to_thread.run_sync(os.write, self.fd, view)
            view = view[written:]
