"""Where one recording goes, from its first byte to the name it ends under.

Theory of operation
-------------------
Two rules make a cassette trustworthy before a single frame is written:

* **one writer per cassette.** A recording holds the cassette's ``FileLock`` from the
  moment it picks its file until the file has its final name. When another process holds
  it (an MCP client that starts the configured server twice), this recording does not
  wait (its client is waiting for a server) and does not interleave: it takes the next
  numbered sibling that is free (``t.jsonl`` -> ``t.2.jsonl``, the numbering
  ``--sessions`` uses), and says so. The record modes lock before deciding what to do;
  they hand the recording a destination already theirs (``locked``).
* **a recording that never succeeded is not a cassette.** A session in which no request
  got a successful answer (a typo in the server command, a missing token, an upstream
  that is down) is kept for the person debugging it as ``<cassette>.failed``, a name no
  replay and no ``once`` run takes for a cassette, and the cassette's own name is left as
  it was. A recording that replaces a cassette (``--overwrite``, mode ``all``) is written
  to a hidden sibling and moved over the old one only once it succeeded, keeping the old
lines of the events that did not change (``quiet``).

The file is written in place otherwise, so a SIGKILL leaves a cassette whose events are a
prefix of the session (see ``storage``).

A later start of the same client run (``cassette.store.run_note``: a client that starts
the server once per call, or twice at once) is no new cassette: ``later_start`` has the
session written to a hidden sibling, appended to the cassette as its next start
(``meta.start``) once it succeeded and every earlier start has ended, so the cassette is
never a half-appended start; it holds the cassette's lock too when nobody else does.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Final

import attrs

from cassette.core.words.volatile import Ignores
from cassette.errors import CassetteError, CassetteExistsError
from cassette.store.files import check_writable, describe_os_error, make_parent
from cassette.store.lock import FileLock
from cassette.store.quiet import settle
from cassette.store.run_note import RunTicket
from cassette.store.run_note import settle as settle_start
from cassette.store.storage import has_recording

__all__ = ["FAILED_SUFFIX", "Destination", "failed_path", "session_path"]

#: Appended to a cassette's name for a recording that never succeeded.
FAILED_SUFFIX: Final = ".failed"
#: How many numbered siblings a recording tries before giving up.
_MOST_SIBLINGS: Final = 1000


def session_path(path: str | os.PathLike[str], number: int) -> Path:
    """The cassette of the ``number``-th session: ``t.jsonl``, then ``t.2.jsonl``, ..."""
    base = Path(path)
    return base if number <= 1 else base.with_name(f"{base.stem}.{number}{base.suffix}")


def failed_path(path: str | os.PathLike[str]) -> Path:
    """Where a recording of ``path`` that never succeeded is kept."""
    base = Path(path)
    return base.with_name(base.name + FAILED_SUFFIX)


@attrs.define
class Destination:
    """One recording's files: ``path`` is the cassette it becomes, ``writing`` the file
    written meanwhile (``path``, or a hidden sibling when it replaces a recording or is a
    later start); ``busy`` names who held the asked-for path when the recording moved to
    a sibling."""

    asked: Path
    path: Path
    writing: Path
    lock: FileLock | None
    busy: int | None = None  # the holder's process id (0: unknown) when ``path`` moved on
    #: the client run's start this recording is (``None``: no run, or another cassette)
    ticket: RunTicket | None = None
    #: the start number this session became in ``path`` once appended (set by ``finish``)
    appended: int | None = None

    @property
    def start(self) -> int | None:
        """The run's ticket of a later start (``None``: the first start, or no run)."""
        return self.ticket.ticket if self.ticket is not None and self.ticket.ticket > 1 else None

    @classmethod
    def later_start(cls, ticket: RunTicket) -> Destination:
        """A later start of a client run (``ticket``, its sibling's lock taken): written to
        its sibling, and holding the cassette's lock when nobody else does, so another
        run is sent to a numbered sibling meanwhile."""
        lock = FileLock(ticket.path)
        held = lock if lock.try_acquire() else None
        return cls(ticket.path, ticket.path, ticket.writing, held, ticket=ticket)

    @classmethod
    def claim(
        cls, asked: str | os.PathLike[str], *, overwrite: bool, locked: bool = False
    ) -> Destination:
        """Take the cassette ``asked`` (or its next free numbered sibling) for a recording.

        ``locked``: the caller holds ``asked``'s lock already (a record mode). Without
        ``overwrite``, a cassette that holds a recording is refused, and a numbered
        sibling that holds one is passed over."""
        wanted = Path(asked)
        make_parent(wanted)
        check_writable(wanted)
        if locked:
            return cls(wanted, wanted, _writing(wanted, overwrite), None)
        holder: int | None = None
        for number in range(1, _MOST_SIBLINGS + 1):
            candidate = session_path(wanted, number)
            lock = FileLock(candidate)
            if not lock.try_acquire():
                holder = holder if holder is not None else lock.holder(within=1.0) or 0
                continue
            if not has_recording(candidate) or (overwrite and number == 1):
                return cls(wanted, candidate, _writing(candidate, overwrite), lock, holder)
            lock.release()
            if number == 1:
                raise CassetteExistsError(
                    f"{candidate}: already holds a recording; refusing to overwrite it "
                    "(pass --overwrite, or choose another path)"
                )
        raise CassetteError(f"{wanted}: {_MOST_SIBLINGS} numbered siblings are taken")

    def finish(
        self, succeeded: bool, *, happened: bool = True, volatile: Ignores | None = None
    ) -> Path | None:
        """Give the recording its name and let go of the lock: on success ``path`` holds
        it (a replaced recording's unchanged lines kept, and with ``volatile`` the lines
        of answers that changed only in volatile values: ``quiet``); otherwise it is kept
        as ``<path>.failed``, returned, unless nothing ``happened`` in it (a server that
        could not even be started): then it is gone, and ``None`` is returned. A start of
        a client run then settles the run's starts (``cassette.store.run_note.settle``): a
        later start is appended there, once every earlier one has ended."""
        try:
            failed = self._name(succeeded, happened=happened, volatile=volatile)
            if self.ticket is not None:
                self.appended = settle_start(self.ticket, succeeded, holding=self.lock)
            return failed
        except OSError as exc:
            raise CassetteError(f"{self.path}: cannot finish: {describe_os_error(exc)}") from exc
        finally:
            if self.lock is not None:
                self.lock.release()

    def _name(self, succeeded: bool, *, happened: bool, volatile: Ignores | None) -> Path | None:
        if succeeded and self.start is not None:
            return None  # appended when the run settles
        if succeeded:
            if self.writing != self.path:  # unchanged lines stay as they were
                settle(self.writing, self.path, volatile)
            return None
        if not happened:
            with contextlib.suppress(FileNotFoundError):
                self.writing.unlink()
            return None
        return _set_aside(self.writing, failed_path(self.path))


def _writing(path: Path, overwrite: bool) -> Path:
    """Replacing a recording: write beside it, so a failure leaves it as it was."""
    if overwrite and has_recording(path):
        return path.with_name(f".{path.name}.recording")
    return path


def _set_aside(writing: Path, failed: Path) -> Path | None:
    try:
        held = writing.stat().st_size > 0
    except FileNotFoundError:
        return None
    if held:
        os.replace(writing, failed)
        return failed
    with contextlib.suppress(FileNotFoundError):
        writing.unlink()
    return None
