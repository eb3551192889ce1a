"""Our stdin reader on asyncio: registered once with the event loop, nothing lost.

``FdReader`` keeps a pipe registered with the loop between waits and lets the loop's
callback read the chunk for the waiting task (``cassette.transports._fdio`` says why).
These tests hold what that must keep: every byte arrives once and in order, a chunk read
for a task cancelled at that moment is not lost, nobody waiting means no registration
(no busy loop), and closing leaves nothing registered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from cassette.transports._fdio import FdReader

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pipes are polled on POSIX only")


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read_fd, write_fd = os.pipe()
    yield read_fd, write_fd
    for fd in (read_fd, write_fd):
        with contextlib.suppress(OSError):
            os.close(fd)


async def _until(condition: Callable[[], bool], what: str, seconds: float = 10.0) -> None:
    """Let the loop run until ``condition`` holds, within a deadline."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        await asyncio.sleep(0)


def _registered(loop: asyncio.AbstractEventLoop, fd: int) -> bool:
    selector = loop._selector  # type: ignore[attr-defined]
    try:
        key = selector.get_key(fd)
    except KeyError:
        return False
    return key.data[0] is not None  # (reader handle, writer handle)


def test_chunks_written_after_the_wait_arrive_in_order_and_eof_ends(
    pipe: tuple[int, int],
) -> None:
    read_fd, write_fd = pipe

    async def main() -> list[bytes]:
        reader = FdReader(read_fd)
        assert reader.mode == "poll"
        got: list[bytes] = []
        try:
            for chunk in (b"one\n", b"two\n", b"three\n"):
                task = asyncio.create_task(reader.read())
                await _until(lambda: reader._waiter is not None, "the reader waits")
                assert _registered(asyncio.get_running_loop(), read_fd)
                os.write(write_fd, chunk)
                got.append(await task)
            os.close(write_fd)
            got.append(await reader.read())
        finally:
            reader.restore()
        return got

    assert asyncio.run(main()) == [b"one\n", b"two\n", b"three\n", b""]


def test_a_chunk_read_for_a_cancelled_waiter_is_the_next_read(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe

    async def main() -> bytes:
        reader = FdReader(read_fd)
        try:
            task = asyncio.create_task(reader.read())
            await _until(lambda: reader._waiter is not None, "the reader waits")
            os.write(write_fd, b"kept\n")
            reader._on_readable()  # the loop's callback reads the chunk for the task ...
            task.cancel()  # ... which is cancelled before it runs again
            with pytest.raises(asyncio.CancelledError):
                await task
            return await reader.read()
        finally:
            reader.restore()

    assert asyncio.run(main()) == b"kept\n"


def test_nobody_waiting_unregisters_and_closing_leaves_nothing(pipe: tuple[int, int]) -> None:
    read_fd, write_fd = pipe

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reader = FdReader(read_fd)
        task = asyncio.create_task(reader.read())
        await _until(lambda: reader._waiter is not None, "the reader waits")
        os.write(write_fd, b"first\n")
        assert await task == b"first\n"
        assert _registered(loop, read_fd)  # kept between waits
        os.write(write_fd, b"second\n")  # readable, and nobody waits
        await _until(lambda: not _registered(loop, read_fd), "the reader unregisters")
        assert await reader.read() == b"second\n"  # nothing was consumed meanwhile
        task = asyncio.create_task(reader.read())
        await _until(lambda: _registered(loop, read_fd), "the next wait registers again")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        reader.restore()
        assert not _registered(loop, read_fd)
        assert os.get_blocking(read_fd)  # its blocking mode is given back

    asyncio.run(main())
