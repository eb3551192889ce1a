"""The recorder's note of a client run: which of its server starts a cassette holds, and
which are still being recorded.

Theory of operation
-------------------
A client run (``cassette.store.starts.client_run``) may start the stdio server several
times: once per tool call, one after the other (langchain-mcp-adapters), or twice at
once, a discovery probe process and then the session while the probe still runs (the
OpenAI Agents SDK for TypeScript). Every start is a ``cassette record`` process of its
own; the note, one small JSON file per cassette in the user's state folder, is how they
agree. It is read and written only under its own lock, held for moments (never while a
session runs), so deciding what a start is and taking its place is one step:

* the first start of a run takes the cassette as any recording does and notes ticket 1;
* a start of the same run that finds a ticket still open (being recorded, or recorded and
  waiting for an earlier one), or the cassette exactly as the run left it (its digest),
  takes the next ticket and records to a hidden sibling, ``.<name>.start-<ticket>``; it
  also takes the cassette's lock when nobody holds it, so that another run is still sent
  to a numbered sibling rather than refused;
* a start that ends marks its ticket ready (or failed) and then *settles* the run: with
  the cassette's lock, the tickets are appended in order (``append_start``), each as the
  cassette's next start (``meta.start``), stopping at the first one still being
  recorded. Whoever ends last appends what is ready, so a session that ends before the
  earlier start it overlapped waits in its sibling instead of holding its client.

Tickets give the order the starts began in, which is the order a replay serves them
(``claim_start``); start numbers are given when appended, so a failed start leaves no
gap. A ticket whose recorder died (its lock is free, and it never said it ended) is
dropped with its sibling. Nothing here is a secret: a digest, process-free numbers.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

import attrs

from cassette.store.lock import FileLock
from cassette.store.start_append import append_start
from cassette.store.starts import file_digest, record_note_path

__all__ = ["RunTicket", "claiming", "join", "settle", "sibling"]

#: how long a start waits for the note's lock (it is held for moments, never a session)
_NOTE_WAIT: Final = 30.0
#: a ticket's states: being recorded, recorded and waiting for an earlier one, failed
_RECORDING: Final = "recording"
_READY: Final = "ready"
_FAILED: Final = "failed"


@attrs.define
class RunTicket:
    """One start of a client run recording the cassette ``path``: ``ticket`` is its place
    in the order the run's starts began (1: the start that took the cassette);
    ``own`` is the lock on its sibling, held while it records (a later start)."""

    path: Path
    run: str
    ticket: int
    folder: Path | None = None
    own: FileLock | None = None

    @property
    def writing(self) -> Path:
        """Where a later start's session is written until it is appended."""
        return sibling(self.path, self.ticket)


def sibling(path: str | os.PathLike[str], ticket: int) -> Path:
    """The hidden file a later start of ``path`` is recorded to."""
    wanted = Path(path)
    return wanted.with_name(f".{wanted.name}.start-{ticket}")


@contextlib.contextmanager
def _noted(path: str | os.PathLike[str], folder: Path | None) -> Iterator[dict[str, Any]]:
    """The note of ``path``, under its lock; what the caller leaves in it is written back
    (an empty note is removed). A folder that refuses the note: an empty note, kept
    nowhere, so every start is a recording of its own, as without a run."""
    note_path = record_note_path(path, folder)
    lock = FileLock(note_path)
    try:
        lock.acquire(timeout=_NOTE_WAIT)
    except (OSError, TimeoutError):
        yield {}
        return
    try:
        note = _read(note_path)
        yield note
        _write(note_path, note)
    finally:
        lock.release()


def _read(note_path: Path) -> dict[str, Any]:
    try:
        note = json.loads(note_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(note, dict) or not isinstance(note.get("run"), str):
        return {}
    tickets = note.get("tickets")
    open_ = note.get("open")
    if not isinstance(tickets, int) or isinstance(tickets, bool) or not isinstance(open_, dict):
        return {}
    return note


def _write(note_path: Path, note: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        if not note:
            note_path.unlink(missing_ok=True)
            return
        note_path.parent.mkdir(parents=True, exist_ok=True)
        temporary = note_path.with_name(f".{note_path.name}.{os.getpid()}")
        temporary.write_text(json.dumps(note), encoding="utf-8")
        os.replace(temporary, note_path)


@contextlib.contextmanager
def claiming(
    path: str | os.PathLike[str], run: str, *, folder: Path | None = None
) -> Iterator[_Claim]:
    """Decide, in one step under the note's lock, whether this start of ``run`` joins the
    run's recording of ``path`` (``claim.joined``: its ticket, its sibling's lock taken)
    or is a recording of its own, which the caller then takes; ``claim.took(ticket)``
    notes that it took the cassette as ticket 1."""
    with _noted(path, folder) as note:
        claim = _Claim(Path(path), run, folder, note)
        claim.joined = _join(claim)
        yield claim


@attrs.define
class _Claim:
    path: Path
    run: str
    folder: Path | None
    note: dict[str, Any]
    joined: RunTicket | None = None

    def took(self) -> RunTicket:
        """This start took the cassette itself: the run's ticket 1."""
        self.note.clear()
        self.note.update({"run": self.run, "tickets": 1, "open": {"1": _RECORDING}})
        return RunTicket(self.path, self.run, 1, self.folder)


def join(
    path: str | os.PathLike[str], run: str | None, *, folder: Path | None = None
) -> RunTicket | None:
    """A later start of ``run`` recording ``path``, when the run holds it (a ticket open,
    or the file as the run left it); ``None``: a recording of its own."""
    if run is None:
        return None
    with claiming(path, run, folder=folder) as claim:
        return claim.joined


def _join(claim: _Claim) -> RunTicket | None:
    note = claim.note
    if note.get("run") != claim.run:
        return None
    _drop_dead(claim.path, note)
    left_as_is = not note["open"] and note.get("digest") == file_digest(claim.path)
    if not (note["open"] or left_as_is):
        return None
    ticket = int(note["tickets"]) + 1
    own = FileLock(sibling(claim.path, ticket))
    if not own.try_acquire():
        return None  # a leftover of a dead run holds the name: a recording of its own
    note["tickets"] = ticket
    note["open"][str(ticket)] = _RECORDING
    return RunTicket(claim.path, claim.run, ticket, claim.folder, own)


def _drop_dead(path: Path, note: dict[str, Any]) -> None:
    """Tickets still marked as being recorded whose recorder is gone (nobody holds their
    lock): a later start's sibling is removed; the first start's file is what it left."""
    for key, state in list(note["open"].items()):
        if state != _RECORDING or not key.isdigit() or not _gone(path, int(key)):
            continue
        del note["open"][key]
        if int(key) > 1:
            with contextlib.suppress(OSError):
                sibling(path, int(key)).unlink()


def _gone(path: Path, ticket: int) -> bool:
    lock = FileLock(path if ticket == 1 else sibling(path, ticket))
    try:
        if not lock.try_acquire():
            return False
    except OSError:
        return False
    lock.release()
    return True


def settle(start: RunTicket, succeeded: bool, *, holding: FileLock | None) -> int | None:
    """Ticket ``start`` ended (``succeeded``: its session is a recording); append every
    ticket that is ready, in order, as the cassette's next starts. ``holding``: the
    cassette's lock, when this start holds it (else it is taken if free: when it is not,
    whoever holds it settles at its end). Returns the start number this ticket's session
    became, when it was appended now (``None``: it failed, or waits for an earlier one)."""
    with _noted(start.path, start.folder) as note:
        ours = note.get("run") == start.run  # else another run took the cassette since
        if ours:
            note["open"][str(start.ticket)] = _READY if succeeded else _FAILED
        if start.own is not None:
            start.own.release()
        if not ours:
            _discard(start.path, start.ticket)
            return None
        return _flushed(start, note, holding)


def _flushed(start: RunTicket, note: dict[str, Any], holding: FileLock | None) -> int | None:
    lock = holding
    if lock is None:
        lock = FileLock(start.path)
        if not lock.try_acquire():
            return None  # its holder (an earlier start) settles when it ends
    try:
        return _append_ready(start, note)
    finally:
        if holding is None:
            lock.release()


def _append_ready(start: RunTicket, note: dict[str, Any]) -> int | None:
    """Under the cassette's lock: the ready tickets appended in order, up to the first
    one still being recorded; the number ``start``'s session became, if it was."""
    became = None
    for key in sorted(note["open"], key=int):
        state, ticket = note["open"][key], int(key)
        if state == _RECORDING and ticket != 1 and not _gone(start.path, ticket):
            break
        if state == _RECORDING and ticket == 1:
            state = _FAILED  # we hold the cassette's lock, so the first start has ended
        del note["open"][key]
        if state != _READY or ticket == 1:
            _discard(start.path, ticket)
            continue
        number = append_start(sibling(start.path, ticket), start.path)
        if ticket == start.ticket:
            became = number
    if not note["open"]:
        note["digest"] = file_digest(start.path)
    return became


def _discard(path: Path, ticket: int) -> None:
    if ticket > 1:
        with contextlib.suppress(OSError):
            sibling(path, ticket).unlink()
