"""Taking back what a failed test recorded, under the cassette's lock.

A test that fails keeps no recording it made (unless asked to): a cassette it recorded is
removed, and the episodes it appended to an existing cassette are cut off, back to the
size the file had before. Both happen under the cassette's ``FileLock``, the one every
recorder and appender holds while it writes: a process still appending (another test of
the run extending the same cassette) finishes its line before the cut, and never sees
its file shrink under it. A missing cassette is nothing to take back.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Final

from cassette.errors import CassetteError
from cassette.store.files import describe_os_error
from cassette.store.lock import FileLock

__all__ = ["take_back"]

#: How long a take-back waits for a writer that holds the cassette (seconds).
_WAIT: Final = 30.0


def take_back(path: str | os.PathLike[str], size: int | None = None) -> None:
    """Remove the cassette at ``path`` (``size`` ``None``: the test recorded all of it), or
    cut it back to its first ``size`` bytes (the test appended the rest)."""
    target = Path(path)
    if not target.exists():
        return  # nothing recorded there (and no lock file, nor its folder, is made for it)
    lock = FileLock(target)
    try:
        lock.acquire(timeout=_WAIT)
    except TimeoutError as exc:
        holder = lock.holder()
        who = f"process {holder}" if holder else "another process"
        raise CassetteError(f"{target}: held by {who}; cannot take back what it recorded") from exc
    try:
        with contextlib.suppress(FileNotFoundError):
            if size is None:
                target.unlink()
            else:
                os.truncate(target, size)
    except OSError as exc:
        raise CassetteError(f"{target}: cannot take back: {describe_os_error(exc)}") from exc
    finally:
        lock.release()
