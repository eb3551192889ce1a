"""Reading and writing files a person hands us, without being fooled by what they are.

Theory of operation
-------------------
A path named on the command line may be anything: a FIFO (opening it to read blocks
until someone writes), a symbolic link to ``/dev/zero`` (reading never ends), a loop of
links, a folder, a sparse file of a gigabyte of zeros with no newline. So:

* ``open_regular`` opens with ``O_NONBLOCK`` (a FIFO cannot block the open) and then
  asks the opened descriptor, not the path, what it is (nothing can swap the file between
  the check and the read); anything but a regular file is refused, with one line saying
  what it is instead;
* ``bounded_lines`` reads a line at a time and never more than ``limit`` bytes of one
  (``readline`` with a size, in C), so a file without newlines costs the limit, not the
  file;
* ``write_atomic`` writes a whole file (a cassette, an updated cassette, a manifest, an
  HTML page, a redacted copy) beside its destination, flushes it, and renames it into
  place, so a failure half-way (a full disk, a crash, a power cut) leaves the old file or
  none, never a truncated one.

Every failure is a ``CassetteError`` (``CassetteNotFoundError`` for a missing file) whose
message starts with the path: the command line prints it as its one line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Final, TextIO

from cassette.core.tape.codec import BOMS
from cassette.core.wire.limits import Limits, current_limits
from cassette.errors import CassetteError, CassetteNotFoundError

__all__ = [
    "LineTooLong",
    "bounded_lines",
    "check_writable",
    "describe_os_error",
    "make_parent",
    "open_log",
    "open_regular",
    "read_definitions",
    "write_atomic",
]

_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_os_error(exc: OSError) -> str:
    """What went wrong with a path, in words (the errno's text, made clearer where the
    usual one misleads)."""
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links (too many levels to follow)"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is a file, not a folder"
    if exc.errno == errno.ENOSPC:
        return "no space left on the device"
    if exc.errno == errno.EFBIG:
        return "file too large (over the file-size limit, see `ulimit -f`)"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    return exc.strerror or str(exc)


def open_regular(path: str | os.PathLike[str], what: str = "cassette") -> BinaryIO:
    """Open ``path`` to read, only if it is a regular file (see the module docstring)."""
    source = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(source, flags)
    except FileNotFoundError as exc:
        raise CassetteNotFoundError(f"{source}: no such {what}") from exc
    except OSError as exc:
        raise CassetteError(f"{source}: cannot read: {describe_os_error(exc)}") from exc
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            if kind == "a directory":
                raise CassetteError(f"{source}: is a directory, not a {what}")
            raise CassetteError(f"{source}: is {kind}, not a {what}; only regular files are read")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_definitions(path: str | os.PathLike[str], what: str, limits: Limits | None = None) -> str:
    """The text of a file of definitions (a mock manifest, a scenarios file), read whole:
    a regular file, no larger than ``limits.definitions_limit`` (default: the run's
    limits), UTF-8 without a byte order mark. Anything else is a ``CassetteError`` whose
    message starts with the path."""
    source = os.fspath(path)
    limit = (current_limits() if limits is None else limits).definitions_limit
    try:
        with open_regular(source, what) as file:
            data = file.read(limit + 1)
    except CassetteError:
        raise  # already one line naming the file (a missing file is also an OSError)
    except OSError as exc:
        raise CassetteError(f"{source}: cannot read: {describe_os_error(exc)}") from exc
    if len(data) > limit:
        raise CassetteError(
            f"{source}: larger than {limit} bytes, the size limit for a {what} (the message "
            "size limit, at least 64 MiB: raise it with --max-message-bytes, or "
            "max-message-bytes in [tool.cassette])"
        )
    for mark, bom in BOMS:
        if data.startswith(mark):
            raise CassetteError(f"{source}:1: the file {bom}; a {what} is UTF-8 without one")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CassetteError(f"{source}: not UTF-8 text (byte {exc.start})") from None


def check_writable(path: str | os.PathLike[str], what: str = "cassette") -> None:
    """Refuse to write over what is not a regular file (a FIFO would block the open, a
    device would swallow the writes), naming what it is; a missing path is fine."""
    source = os.fspath(path)
    try:
        mode = os.stat(source).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise CassetteError(f"{source}: cannot write: {describe_os_error(exc)}") from exc
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
        raise CassetteError(f"{source}: is {kind}, not a {what}; only regular files are written")


def bounded_lines(file: BinaryIO, limit: int) -> Iterator[bytes]:
    """The file's lines, each with its newline (the last may lack one); a line longer than
    ``limit`` ends the reading with ``LineTooLong`` once ``limit`` bytes of it are read."""
    number = 0
    while True:
        line = file.readline(limit + 1)
        if not line:
            return
        number += 1
        if len(line) > limit:
            raise LineTooLong(number, limit)
        yield line


class LineTooLong(Exception):
    """A line over the limit (the caller knows the file and says so)."""

    def __init__(self, line: int, limit: int) -> None:
        super().__init__(f"line {line} is longer than {limit} bytes")
        self.line = line
        self.limit = limit


def open_log(path: str | os.PathLike[str]) -> TextIO:
    """A log file opened to append lines for people (``--log``): created if missing,
    never truncated, so several runs of a client's server add to one file. An error is a
    ``UsageError`` naming the path."""
    from cassette.errors import UsageError

    try:
        return open(path, "a", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--log {os.fspath(path)}: {describe_os_error(exc)}") from exc


def make_parent(target: Path) -> None:
    """Create ``target``'s folder (and its parents); a file in the way is named."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as exc:
        blocker = next((p for p in target.parents if p.exists() and not p.is_dir()), None)
        where = f"{blocker} is a file, not a folder" if blocker else describe_os_error(exc)
        raise CassetteError(f"{target}: cannot create it: {where}") from exc
    except OSError as exc:
        raise CassetteError(f"{target}: cannot create it: {describe_os_error(exc)}") from exc


def write_atomic(path: str | os.PathLike[str], data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` all at once: beside it first, then renamed over it.

    The one whole-file writer: every file we replace (a cassette, an updated cassette, a
    derived file) goes through it. ``durable`` (the default) flushes the new file to the
    disk before the rename and the folder after it, so a power cut leaves the old file or
    the new one, never an empty one; a scratch file another process reads at once (a
    fault plan handed to a server command) skips the flushes.

    Raises ``CassetteError`` naming ``path`` and the reason (a full disk, a folder in the
    way, a path through a file); the destination is then as it was."""
    target = Path(path)
    make_parent(target)
    check_writable(target, "file")
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except OSError:
        mode = 0o644
    import tempfile  # with its random and hashlib: only where a file is written

    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise CassetteError(f"{target}: cannot write: {describe_os_error(exc)}") from exc
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            if durable:
                file.flush()
                os.fsync(file.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise CassetteError(f"{target}: cannot write: {describe_os_error(exc)}") from exc
    if durable:
        _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Flush a folder's entries (the rename just made) to the disk. POSIX only: Windows
    cannot open a folder, and its rename is already durable once ``MoveFileEx`` returns.
    A file system that refuses (some network mounts) is no error: the rename happened."""
    if sys.platform == "win32":
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
