"""Which client run a server start belongs to, and the counters that follow one across starts.

Theory of operation
-------------------
A client that starts the stdio server once per tool call starts ``cassette record`` (or
``replay``) once per call, each a process that knows nothing of the others. What ties
them is the *client run*: ``CASSETTE_CLIENT_RUN`` when the environment names one (the
pytest fixture names one per test), else the parent process, by its id and its start
time (Linux ``/proc``; elsewhere the id alone). A start whose parent is the same live
process as the last start's is the same run; a parent that ended and was followed by
another (two commands from a script, two test runs) is another run. Standard input on
a terminal is a person, not a client: no run.

What a run did is kept outside the project, in a folder of the user's own (under
``$XDG_RUNTIME_DIR`` or the temporary folder), so nothing appears beside a cassette and
there is nothing to create:

* a recording notes, per cassette, the run that wrote it, which of its starts are
  still being recorded and the digest of the file as that run left it
  (``cassette.store.run_note``): a later start of the same run, finding a start still
  open or the cassette exactly so, is appended as the next start; anything else
  (another run, a file changed since) is a new recording as before;
* a replay counts the starts it served, per cassette content and run, under a lock
  (``claim_start``): start 1, 2, ..., then 1 again after the last.

Nothing here is a secret (a digest, process numbers), and a lost state file only
makes the next start a fresh recording (refused as one) or replay start 1.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from cassette.store.lock import FileLock

__all__ = [
    "RUN_VAR",
    "claim_start",
    "client_run",
    "file_digest",
    "first_start",
    "next_start",
    "record_note_path",
    "state_folder",
]

#: names the client run explicitly: every start with the same value is one run
RUN_VAR: Final = "CASSETTE_CLIENT_RUN"


def parent_started(pid: int) -> str | None:
    """When process ``pid`` started, as the kernel counts it (Linux), else ``None``."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()  # the name before ")" may hold spaces
    return fields[19] if len(fields) > 19 else None


def client_run(environ: Mapping[str, str] | None = None, *, tty: bool | None = None) -> str | None:
    """The client run this process is a start of (module docstring), ``None`` for none."""
    env = os.environ if environ is None else environ
    named = env.get(RUN_VAR, "").strip()
    if named:
        return f"named:{named}"
    if tty is None:
        try:
            tty = os.isatty(0)
        except OSError:
            tty = False
    if tty:
        return None
    ppid = os.getppid()
    return f"parent:{ppid}:{parent_started(ppid) or '?'}"


def state_folder() -> Path:
    """The user's own folder for run state (made when first written)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return Path(runtime) / "cassette-mcp" / "starts"
    import tempfile  # only once a note is read or written

    if sys.platform == "win32":
        uid = os.environ.get("USERNAME", "user")
    else:
        uid = str(os.getuid())
    return Path(tempfile.gettempdir()) / f"cassette-mcp-{uid}" / "starts"


def _key(*parts: str) -> str:
    import hashlib  # on first use: loading OpenSSL is paid only by a cassette of several starts

    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def _where(path: str | os.PathLike[str]) -> str:
    """The cassette's absolute path, never resolved: a loop of links is no error here."""
    return os.path.abspath(os.fspath(path))


def file_digest(path: str | os.PathLike[str]) -> str | None:
    """The digest of the file's bytes (``None``: it cannot be read)."""
    import hashlib

    digest = hashlib.sha256()
    try:
        with open(path, "rb") as file:
            for block in iter(lambda: file.read(1 << 20), b""):
                digest.update(block)
    except (OSError, RuntimeError):
        return None
    return digest.hexdigest()


def record_note_path(path: str | os.PathLike[str], folder: Path | None = None) -> Path:
    """Where the recorder's note of the cassette ``path`` is kept
    (``cassette.store.run_note``)."""
    return (folder or state_folder()) / f"rec-{_key(_where(path))}.json"


def next_start(previous: int, count: int) -> int:
    """The start after ``previous`` (0: none served yet) of ``count``: 1 after the last."""
    return previous % max(count, 1) + 1


def claim_start(digest: str, run: str | None, count: int, *, folder: Path | None = None) -> int:
    """The start this replay serves of a cassette of ``count`` starts whose bytes have
    ``digest``: the one after what the run's last replay served, under a lock, so two
    starts at once never serve the same. No run, one start, or a folder that refuses
    the counter: start 1."""
    if run is None or count <= 1:
        return 1
    counter = (folder or state_folder()) / f"play-{_key(digest, run)}"
    try:
        counter.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(counter):
            try:
                text = counter.read_text(encoding="ascii").strip()
            except FileNotFoundError:
                text = ""
            previous = int(text) if text.isdigit() else 0
            number = next_start(previous, count)
            counter.write_text(str(number), encoding="ascii")
    except OSError:
        return 1
    return number


def first_start(path: str | os.PathLike[str], events: Sequence[Any], front: str) -> int:
    """The server start a replay of the cassette ``path`` (holding ``events``) serves
    first: on stdio, a cassette of several starts serves this process the next start of
    its client run (``claim_start``); over a network front each client session is a
    start of its own, from the first."""
    from cassette.core.replay.starts import count_starts

    count = count_starts(events)
    if count <= 1 or front != "stdio":
        return 1
    digest = file_digest(path) or _where(path)
    return claim_start(digest, client_run(), count)
