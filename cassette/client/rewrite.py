"""Rewrite chosen lines of a cassette, atomically and under its lock.

``verify --update`` accepts a server's new answers by replacing the lines that hold the
old ones (and the header, which names the program that last wrote the file). Every other
line stays byte for byte as it was, so the change a reviewer sees in version control is
exactly the answers that changed.

Order of operations, each for a reason:

* the cassette's ``FileLock`` is taken first: a recording, an ``all`` run or another
  update of the same path cannot interleave with this one;
* the file must still be the one that was verified (same size and modification time):
  if someone wrote it meanwhile, the update is refused rather than merged blindly;
* the new bytes are written by the store's one whole-file writer
  (``cassette.store.files.write_atomic``: a hidden sibling, flushed to the disk, renamed
  over the cassette): a crash leaves the old file or the new one, never half of each.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import attrs

from cassette.core.tape.codec import encode_line
from cassette.core.wire.model import Event, Header
from cassette.errors import CassetteError
from cassette.store.files import write_atomic
from cassette.store.lock import FileLock

__all__ = ["Snapshot", "rewrite_lines"]


@attrs.frozen
class Snapshot:
    """The size and modification time of a file when it was read: how a writer tells that
    someone else wrote it since."""

    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str | os.PathLike[str]) -> Snapshot:
        stat = Path(path).stat()
        return cls(stat.st_size, stat.st_mtime_ns)


async def rewrite_lines(
    path: str | os.PathLike[str],
    read_as: Snapshot,
    header: Header | None,
    events: Mapping[int, Event],
) -> None:
    """Replace the header (when given) and the events at their ``seq`` (the line index)."""
    target = Path(path)
    lock = FileLock(target)
    await lock.wait()
    try:
        _rewrite(target, read_as, header, events)
    finally:
        lock.release()


def _rewrite(
    target: Path, read_as: Snapshot, header: Header | None, events: Mapping[int, Event]
) -> None:
    if Snapshot.of(target) != read_as:
        raise CassetteError(
            f"{target}: changed on disk while it was verified; not updated (run again)"
        )
    lines = target.read_bytes().split(b"\n")
    if header is not None:
        lines[0] = encode_line(header).rstrip(b"\n")
    for seq, event in events.items():
        if not 0 < seq < len(lines):
            raise CassetteError(f"{target}: has no line {seq + 1} to update")
        lines[seq] = encode_line(event).rstrip(b"\n")
    write_atomic(target, b"\n".join(lines))
