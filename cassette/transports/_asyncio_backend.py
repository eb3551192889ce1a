"""The one module of ``cassette`` that speaks asyncio itself, rather than through anyio.

Everything else is written against anyio (an import-linter contract in pyproject.toml
forbids ``asyncio`` in every other module). This module holds the one place where going
around anyio pays: a descriptor kept registered with the running asyncio loop between
reads (``LoopReads``), which saves a replay two ``epoll_ctl`` calls, an event and a
cancel scope per call it answers (a speed exception: docs/performance.md has the
per-call figures).

Theory of operation (``LoopReads``): the descriptor is registered with the loop
(``add_reader``) on the first wait and stays registered; the loop's callback reads the
chunk for the task that waits. The callback reads only while a task waits; called with
none (the client wrote while we were busy) it unregisters, so a level-triggered loop does
not call it again on every iteration, and the next wait registers afresh. A chunk read
for a waiter cancelled at that moment is kept (``_pending``) and is the next read.
``on_chunk``, when set, takes each chunk read while a task waits, on the loop itself
(how replies are pushed from the reading loop); the task goes on waiting.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import ClassVar

import anyio

__all__ = ["LoopReads", "running_loop"]


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The running asyncio loop, when the current backend is asyncio."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class LoopReads:
    """Reads of ``fd`` by the asyncio loop's reader callback (see the module docstring).

    A base of ``cassette.transports._fdio.FdReader``, so the hot path reads its own
    attributes, with no object in between."""

    fd: int
    #: the most one read takes
    chunk_size: ClassVar[int] = 1 << 16

    def _init_loop_reads(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None  # where fd is registered
        self._waiter: asyncio.Future[bytes] | None = None  # the task waiting for a chunk
        self._pending: asyncio.Future[bytes] | None = None  # read for a waiter cancelled
        #: takes each chunk read while a task waits, on the event loop (``Pushing``):
        #: False ends the wait with ``anyio.EndOfStream``
        self.on_chunk: Callable[[bytes], bool] | None = None

    async def _read_on(self, loop: asyncio.AbstractEventLoop) -> bytes:
        """The next chunk, read by ``_on_readable`` when the loop finds fd readable."""
        if sys.platform == "win32":  # ``read`` takes this path on POSIX only
            raise NotImplementedError("add_reader needs a selector event loop")
        if self._loop is not loop:
            self._unregister()
            loop.add_reader(self.fd, self._on_readable)
            self._loop = loop
        waiter: asyncio.Future[bytes] = loop.create_future()
        self._waiter = waiter
        try:
            return await waiter
        except BaseException:
            # Cancelled after the chunk was read for us: the next read returns it.
            if waiter.done() and not waiter.cancelled():
                self._pending = waiter
            raise
        finally:
            self._waiter = None

    def _on_readable(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            self._unregister()
            return
        try:
            chunk = os.read(self.fd, self.chunk_size)
        except BlockingIOError:
            return  # a readiness the waiting task already consumed
        except OSError as exc:
            waiter.set_exception(exc)
            return
        if chunk and self.on_chunk is not None:
            try:
                going = self.on_chunk(chunk)
            except Exception as exc:  # the waiting task raises it, as from its own read
                waiter.set_exception(exc)
                return
            if not going:
                waiter.set_exception(anyio.EndOfStream())
            return  # the chunk was taken: the task goes on waiting
        waiter.set_result(chunk)

    def _unregister(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None and not loop.is_closed():
            loop.remove_reader(self.fd)
