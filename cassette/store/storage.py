"""The only module that touches cassette files: an append-only writer and the reader.

The writer appends each batch of records with a single ``os.write`` on a descriptor opened
with ``O_APPEND`` and no user-space buffer, so once a call returns its bytes belong to the
kernel: a crash or SIGKILL of our process loses nothing already written. Writes are small
and land in the page cache, so they run inline on the event loop; ``fsync=True`` adds a
flush to the disk for users who must survive a power cut and accept the cost.

``Cassette`` is the value a reader returns: the header, the events, the warnings reading
produced, and where it came from.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from cassette.core.tape.codec import (
    FAST_JSON_FROM,
    decode,
    decode_lines,
    encode_line,
    line_too_long,
)
from cassette.core.wire._gc import paused_gc
from cassette.core.wire.limits import Limits, current_limits
from cassette.core.wire.meta import SESSION, STREAM
from cassette.core.wire.model import Era, Event, Header, HttpEvent, MessageEvent, RawEvent, era_of
from cassette.errors import CassetteError, CassetteExistsError, CassetteNotFoundError
from cassette.store.files import (
    LineTooLong,
    bounded_lines,
    check_writable,
    describe_os_error,
    make_parent,
    open_regular,
    write_atomic,
)
from cassette.store.lock import FileLock

if TYPE_CHECKING:  # the recorder is no part of reading a cassette, nor of a replay
    from cassette.core.recording.recorder import Record

__all__ = [
    "Cassette",
    "CassetteWriter",
    "append_events",
    "has_recording",
    "highest_numbers",
    "timed_after",
]


@attrs.frozen
class Cassette:
    """One recorded session: a header and its events, in the order they happened."""

    header: Header
    events: tuple[Event, ...] = ()
    source: str | None = None
    warnings: tuple[str, ...] = ()

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, limits: Limits | None = None) -> Cassette:
        """Read a cassette file; errors name ``file:line`` (see ``codec``). Only a regular
        file is read, one line at a time, none longer than ``limits.line_limit`` (default:
        the run's limits; ``cassette.store.files`` says why)."""
        source = os.fspath(path)
        chosen = current_limits() if limits is None else limits
        limit = chosen.line_limit
        with open_regular(source, "cassette") as file, paused_gc():
            try:
                fast = _fast_json(os.fstat(file.fileno()).st_size)
                lines = bounded_lines(file, limit)
                decoded = decode_lines(lines, source, limit, fast=fast, limits=chosen)
            except LineTooLong as exc:
                raise line_too_long(source, exc.line, limit) from None
            except OSError as exc:
                raise CassetteError(f"{source}: cannot read: {describe_os_error(exc)}") from exc
        return cls(decoded.header, tuple(decoded.events), source, tuple(decoded.warnings))

    @classmethod
    def loads(
        cls, data: bytes | str, source: str = "<cassette>", *, limits: Limits | None = None
    ) -> Cassette:
        """Read a cassette from its bytes; ``source`` names it in messages; ``limits`` as
        for ``load``."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        with paused_gc():
            decoded = decode(raw, source, fast=_fast_json(len(raw)), limits=limits)
        return cls(decoded.header, tuple(decoded.events), source, tuple(decoded.warnings))

    def dumps(self) -> bytes:
        """The cassette as JSONL bytes."""
        return b"".join(encode_line(r) for r in (self.header, *self.events))

    def dump(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
        """Write the cassette to ``path``, whole or not at all, under the cassette's lock
        (one writer per cassette: a recording or another dump in progress is refused,
        naming its process); a non-empty file is replaced only with ``overwrite``."""
        target = Path(path)
        lock = FileLock(target)
        if not lock.try_acquire():
            holder = lock.holder()
            who = f"process {holder}" if holder else "another process"
            raise CassetteError(f"{target}: being written by {who}; try again once it is done")
        try:
            check_writable(target)
            if not overwrite and has_recording(target):
                raise CassetteExistsError(
                    f"{target}: already holds a recording; refusing to overwrite it "
                    "(pass --overwrite, or choose another path)"
                )
            write_atomic(target, self.dumps())
        finally:
            lock.release()

    @property
    def era(self) -> Era:
        """The era a replay serves (legacy when the header names none)."""
        return era_of(self.header)

    def messages(self, direction: str | None = None) -> Iterator[dict[str, Any]]:
        """The JSON-RPC messages, optionally only one direction (``c2s`` or ``s2c``)."""
        for event in self.events:
            if isinstance(event, MessageEvent) and direction in (None, event.dir):
                yield event.message


def _fast_json(size: int) -> bool:
    """Whether a cassette of ``size`` bytes is parsed by orjson: only a large one (importing
    orjson costs more than it saves below ``FAST_JSON_FROM``), and only when the
    environment's switch allows it (read here, never in the core; the settings module is
    imported only for a cassette that large, so a replay's start-up pays nothing)."""
    if size < FAST_JSON_FROM:
        return False
    from cassette.store.config import fast_json_enabled

    return fast_json_enabled()


class CassetteWriter:
    """Append-only writer: every ``write`` reaches the kernel before it returns."""

    def __init__(
        self, path: str | os.PathLike[str], *, overwrite: bool = False, fsync: bool = False
    ) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._fd: int | None = None
        self._overwrite = overwrite
        #: why writing stopped: every later write says the same, so requests that overlap
        #: a full disk fail with one error, not that error and "writer is not open"
        self._failed: str | None = None

    def open(self) -> CassetteWriter:
        """Create the file; refuses to replace a non-empty cassette unless ``overwrite``."""
        path = self.path
        make_parent(path)
        try:
            if path.is_dir():
                raise CassetteError(f"{path}: is a directory, not a cassette")
            if not self._overwrite and path.exists() and path.stat().st_size > 0:
                raise CassetteExistsError(
                    f"{path}: already holds a recording; refusing to overwrite it "
                    "(pass --overwrite, or choose another path)"
                )
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND | getattr(os, "O_BINARY", 0)
            self._fd = os.open(path, flags, 0o644)
        except OSError as exc:
            if isinstance(exc, CassetteError):
                raise
            reason = describe_os_error(exc)
            raise CassetteError(f"{path}: cannot create cassette: {reason}") from exc
        return self

    def write(self, records: Iterable[Record]) -> int:
        """Append records (a header first, then events) in one system call; returns the
        length of the longest line written.

        A write the system refuses (a full disk, a file-size limit) is a ``CassetteError``
        saying so; the writer then writes nothing more, so what is on disk stays a prefix
        of the session (a line cut short by the refusal is what readers drop)."""
        lines = [encode_line(r) for r in records]
        if not lines:
            return 0
        if self._fd is None:
            raise CassetteError(self._failed or f"{self.path}: writer is not open")
        data = lines[0] if len(lines) == 1 else b"".join(lines)  # nearly always one line
        try:
            written = os.write(self._fd, data)
            if written < len(data):  # a short write (a signal, a nearly full disk): the rest
                view = memoryview(data)[written:]
                while view:
                    view = view[os.write(self._fd, view) :]
            if self._fsync:
                os.fsync(self._fd)
        except OSError as exc:
            self.close()
            self._failed = (
                f"{self.path}: cannot write: {describe_os_error(exc)}; the recording stopped "
                "here, and every frame the client saw before is in the file"
            )
            raise CassetteError(self._failed) from exc
        return len(data) if len(lines) == 1 else max(map(len, lines))

    @property
    def closed(self) -> bool:
        return self._fd is None

    def close(self) -> None:
        """Close the file; safe to call twice."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> CassetteWriter:
        return self.open()

    def __exit__(self, *_exc: object) -> None:
        self.close()


def has_recording(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a file with bytes in it (an empty leftover is no recording).

    Something that is not a file at all (a folder, a FIFO, a loop of links) counts as
    there: whoever reads it next says what it is, rather than a recording replacing it."""
    try:
        return Path(path).stat().st_size > 0 or not Path(path).is_file()
    except FileNotFoundError:
        return False
    except OSError:
        return True


def append_events(path: str | os.PathLike[str], events: Sequence[Event]) -> None:
    """Append events to an existing cassette in one write; the caller holds its lock.

    A last line cut off mid-write (which every reader drops with a warning) is cut away
    first, so the new lines never glue onto it. ``t`` never decreases from one line to
    the next in a file we write: events timed before the file's last line (another
    process appended meanwhile) are moved to its time.
    """
    if not events:
        return
    try:
        fd = os.open(path, os.O_RDWR | os.O_APPEND | getattr(os, "O_BINARY", 0))
    except FileNotFoundError as exc:
        raise CassetteNotFoundError(f"{os.fspath(path)}: no such cassette to append to") from exc
    try:
        last = _drop_partial_tail(fd, os.fspath(path))
        events = timed_after(events, _t_of(last))
        data = memoryview(b"".join(encode_line(e) for e in events))
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def highest_numbers(path: str | os.PathLike[str]) -> tuple[int, int]:
    """The highest stream number (``post-3``: 3) and session ordinal a cassette's events
    use, 0 where none does, read through the codec: what an appender numbers on from.
    The caller holds the lock, so nobody appends between this reading and its write."""
    streams = [0]
    sessions = [0]
    stream: object
    session: object
    for event in Cassette.load(path).events:
        if isinstance(event, HttpEvent):
            stream, session = event.stream, event.session
        elif isinstance(event, MessageEvent | RawEvent) and event.meta is not None:
            stream, session = event.meta.get(STREAM), event.meta.get(SESSION)
        else:
            continue
        if isinstance(stream, str):
            number = stream.rpartition("-")[2]
            if number.isascii() and number.isdigit():
                streams.append(int(number))
        if isinstance(session, int) and not isinstance(session, bool):
            sessions.append(session)
    return max(streams), max(sessions)


def timed_after(events: Sequence[Event], last_t: float | None) -> Sequence[Event]:
    """``events`` moved in time so the first is not before ``last_t`` (a file's last line),
    keeping their spacing: ``t`` never decreases from one line to the next in a file we
    write."""
    if last_t is None or not events or events[0].t >= last_t:
        return events
    shift = last_t - events[0].t
    return [attrs.evolve(e, t=round(e.t + shift, 6)) for e in events]


def _read_at(fd: int, offset: int, size: int) -> bytes:
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, size)


def _drop_partial_tail(fd: int, source: str) -> bytes:
    """Truncate an unterminated last line; return the last complete line."""
    size = os.fstat(fd).st_size
    buf = b""
    position = size
    while position > 0:  # backwards, until the last complete line is whole in ``buf``
        step = min(65536, position)
        position -= step
        buf = _read_at(fd, position, step) + buf
        end = buf.rfind(b"\n")
        if end >= 0 and (position == 0 or buf.rfind(b"\n", 0, end) >= 0):
            break
    end = buf.rfind(b"\n")
    if end < 0:
        raise CassetteError(f"{source}: cannot append to a cassette with no complete line")
    if position + end + 1 != size:
        os.ftruncate(fd, position + end + 1)
    return buf[buf.rfind(b"\n", 0, end) + 1 : end]


def _t_of(line: bytes) -> float | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    t = value.get("t") if isinstance(value, dict) else None
    return float(t) if isinstance(t, int | float) and not isinstance(t, bool) else None
