"""Cross-process coordination for cassette files: an exclusive lock and numbered slots.

Theory of operation
-------------------
``FileLock`` is an advisory, exclusive lock on a hidden file beside the cassette
(``.<name>.lock``), taken with ``fcntl.flock`` on POSIX and ``msvcrt.locking`` on
Windows; the standard library only. Whoever records a cassette, or appends to one, holds
it; replaying never takes it, so a read-only checkout replays fine.

On POSIX the holder deletes the lock file before unlocking, so none is left in a
directory people commit. That opens a classic race (a waiter may lock the inode just
deleted while a newcomer creates and locks a fresh file), closed the classic way: after
locking, the lock is only held if the path still names the inode we locked; otherwise
we let go and try again. On Windows an open file cannot be deleted, so the file stays.

The lock file sits in a folder people commit and pull, so it may be planted: a pull
request can add ``.<name>.lock`` as a symbolic link to a file of the reviewer's, which
the holder would truncate to write its id. So the lock is opened without following a
link (``O_NOFOLLOW`` on POSIX) and the opened descriptor is asked what it is: anything
but a regular file with one name (a link, a FIFO, a device, a hard link to another file)
is refused in one line naming it, before a byte is written.

The holder writes its process id into the lock file, so a process that finds the lock
taken can say who holds it (``holder``): a person can then tell a test run from a stray
recorder. The kernel drops a lock when its holder dies, so a killed recorder never blocks
anyone.
Locks conflict between open files even within one process (``flock`` semantics), which is
what lets two threads of a test process exclude each other too.

``claim_slot`` hands out 1, 2, 3, ... to successive callers, across processes, by
creating files with ``O_EXCL``: how the sessions a test starts get distinct cassettes.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from cassette.errors import CassetteError, NotWritableError
from cassette.store.files import describe_os_error, make_parent

__all__ = ["FileLock", "claim_slot"]


class FileLock:
    """An exclusive lock guarding one cassette (see the module docstring)."""

    def __init__(self, cassette: str | os.PathLike[str]) -> None:
        self.cassette = Path(cassette)
        self.path = self.cassette.with_name(f".{self.cassette.name}.lock")
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        """Take the lock if nobody holds it; never waits."""
        if self._fd is not None:
            raise RuntimeError(f"{self.path}: already held by this FileLock")
        make_parent(self.cassette)  # a file in the way is named, for the cassette
        while True:
            fd = self._open()
            if not _lock(fd):
                os.close(fd)
                return False
            if sys.platform == "win32" or _same_file(fd, self.path):
                self._fd = fd
                _write_holder(fd)
                return True
            os.close(fd)  # the previous holder deleted it under us: lock the new one

    def _open(self) -> int:
        """The lock file, opened (made if need be) and proved a regular file of its own
        (see the module docstring); a folder that refuses it is one line naming the
        cassette, since only a command that will write takes the lock."""
        flags = os.O_RDWR | os.O_CREAT
        if sys.platform != "win32":
            flags |= os.O_NOFOLLOW  # a planted link is never followed, its target never touched
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise self._refused("a symbolic link") from exc
            if exc.errno == errno.EISDIR:
                raise self._refused("a directory") from exc
            if exc.errno not in _REFUSED:
                raise
            raise NotWritableError(
                f"{self.cassette}: cannot write here: {describe_os_error(exc)} (the lock "
                f"file {self.path.name} cannot be made beside it)"
            ) from exc
        found = os.fstat(fd)
        what = None
        if not stat.S_ISREG(found.st_mode):
            what = "not a regular file"
        elif found.st_nlink > 1:
            what = "a hard link to another file"
        if what is not None:
            os.close(fd)
            raise self._refused(what)
        return fd

    def _refused(self, what: str) -> CassetteError:
        return CassetteError(
            f"{self.path}: the lock file of {self.cassette.name} is {what}; refusing to use "
            "it (it is never followed nor written): remove it if you did not make it"
        )

    def acquire(
        self,
        timeout: float | None = None,
        *,
        poll: float = 0.05,
        on_wait: Callable[[], None] | None = None,
    ) -> None:
        """Wait for the lock (``timeout`` seconds at most; ``None``: as long as it takes).

        ``on_wait`` is called once, when the lock turns out to be taken, so a person can
        be told why nothing is happening.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        told = False
        while not self.try_acquire():
            if not told and on_wait is not None:
                on_wait()
                told = True
            if deadline is not None and time.monotonic() >= deadline:
                raise TimeoutError(f"{self.path}: still locked after {timeout} s")
            time.sleep(poll)

    async def wait(self, *, poll: float = 0.05, on_wait: Callable[[], None] | None = None) -> None:
        """``acquire`` for async code: the event loop runs on while another process holds
        the lock, and waiting can be cancelled."""
        import anyio

        told = False
        while not self.try_acquire():
            if not told and on_wait is not None:
                on_wait()
                told = True
            await anyio.sleep(poll)

    def holder(self, *, within: float = 0.0) -> int | None:
        """The process id of whoever holds the lock now, as it wrote it (``None``: unknown).

        A holder writes its id just after it takes the lock, so a look in between finds
        the file empty: ``within`` is how many seconds to wait for the id to appear."""
        deadline = time.monotonic() + within
        while True:
            try:
                text = self.path.read_text(encoding="ascii", errors="replace").strip()
            except OSError:
                text = ""
            if text.isdigit():
                return int(text)
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.005)

    def release(self) -> None:
        """Let go (safe to call when not held)."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        if sys.platform != "win32":
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)
        _unlock(fd)
        os.close(fd)

    def __enter__(self) -> FileLock:
        self.acquire()
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _value: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.release()


#: What a folder that refuses new files answers: read-only, or not ours to write.
_REFUSED = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})


def _write_holder(fd: int) -> None:
    if sys.platform == "win32":  # pragma: no cover  (the locked byte cannot be written there)
        return
    with contextlib.suppress(OSError):  # only a courtesy: the lock holds without it
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)


def _same_file(fd: int, path: Path) -> bool:
    try:
        on_disk = os.stat(path)
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (on_disk.st_dev, on_disk.st_ino)


if sys.platform == "win32":  # pragma: no cover  (CI runs on Linux)
    import msvcrt

    def _lock(fd: int) -> bool:
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        with contextlib.suppress(OSError):
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _lock(fd: int) -> bool:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


def claim_slot(directory: str | os.PathLike[str], key: str) -> int:
    """The next unclaimed number (1, 2, ...) for ``key`` in ``directory``, atomically."""
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    number = 1
    while True:
        try:
            fd = os.open(folder / f"{key}.{number}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            number += 1
            continue
        os.close(fd)
        return number
