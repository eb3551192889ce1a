"""The keeper: ends a recorded server whose recorder died without ending it.

Run as a script (``python -I -S _keeper.py WHOM GRACE KILL_AFTER``) by the stdio
transport beside every server it starts, never imported. ``WHOM`` is the server's process
group, or ``pipe:N``: the groups of whoever holds the pipe of inode ``N`` (the server's
stdin) when the keeper is needed. It imports nothing of cassette,
so it starts in milliseconds and cannot fail on a broken install.

Why it exists: the recorder ends its server in the documented order (close its stdin,
wait, SIGTERM, wait, SIGKILL) whenever it can, but nothing runs in a process killed with
SIGKILL (the TypeScript SDK kills a server it closed after 2 s; a CI runner kills what
outlives a job). The server sees its stdin close then, and one that honours end of input
exits; one that does not would run on, an orphan. So the keeper holds the read end of a
pipe only the recorder writes to. Normal end: the recorder writes ``done`` once its
server is gone, and the keeper exits. End of input without ``done``: the recorder died,
and the keeper gives the server's process group the same sequence (``GRACE`` seconds,
SIGTERM, ``KILL_AFTER`` seconds, SIGKILL). The server leads its own process group, so
what it started (``npx`` and its ``node``, a shell and its child) ends with it.

The keeper ignores SIGINT and SIGHUP and sits in a session of its own: a Ctrl-C or a
closed terminal that stops the recorder must not stop the one process meant to clean up.

A group id is a number the system hands out again once nothing uses it (on Linux every
32,768 processes by default, a few minutes of a busy test run): a keeper that wakes late,
its server long gone, must not signal whoever holds the number now. So on Linux it notes
its server's start time when it starts, and signals the group only while the number is
still its server's: the leader with that start time, or no process of that id but
members of the group (which keep the number from being handed out again).

Why ``pipe:N``: a keeper told its server's group can only be started once the server is,
and a recorder killed between the two spawns (its probes start servers during the
session, so a kill lands there) leaves a server nobody keeps. So on Linux the keeper is
spawned first, given the inode of the pipe that will be its server's stdin, and finds the
server only when the recorder is dead: whoever holds that pipe then is the server (or what
it started and gave its stdin). The recorder holds both ends until it spawns the server
and nothing else is given them, so no stranger can hold it; a pipe's inode is not reused
while any end is open. A server the recorder never got to spawn holds nothing: the keeper
exits.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

POLL = 0.05  # seconds between checks that the group still has a live process


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (Linux ``/proc``, clock ticks since boot), or
    ``None`` when there is no such process or no ``/proc`` to ask. The same reading as
    ``cassette.store.starts.parent_started``, written again because a keeper runs with
    ``-I -S`` and imports nothing of cassette (module docstring)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode("ascii") if len(fields) > 19 else None


def _ours(group: int, born: str | None) -> bool:
    """Whether ``group`` is still the group of the server born at ``born`` (see the module
    docstring): a leader of another start time means the number went to someone else."""
    if born is None:  # no /proc (macOS, the BSDs), or the server was gone at our start
        return True
    now = _started(group)
    return now is None or now == born


def _alive(group: int, born: str | None = None) -> bool:
    if sys.platform == "win32":  # never run there: no process groups to keep
        return False
    if not _ours(group, born):
        return False
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # the id went to someone else's process: ours is gone
        return False
    return True


def _signal(group: int, sig: signal.Signals, born: str | None) -> None:
    if sys.platform == "win32" or not _ours(group, born):
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, sig)


def _holders(inode: str, spared: int) -> dict[int, str | None]:
    """The process groups of every process that holds the pipe of ``inode`` open, each
    with its leader's start time (see the module docstring), but group ``spared``: the
    recorder's, which holds the pipe while it lives (it is gone when this is asked, unless
    it closed our pipe without ``done``, which it never does; whatever it was, a keeper
    must not end the process group of whoever started the recording)."""
    link = f"pipe:[{inode}]"
    groups: dict[int, str | None] = {}
    if sys.platform == "win32":  # never run there: no process groups to keep
        return groups
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:  # no /proc: never given a pipe there (see ``_early.start_kept``)
        return groups
    for pid in pids:
        if _holds(pid, link):
            with contextlib.suppress(OSError):
                group = os.getpgid(pid)
                if group != spared:
                    groups[group] = _started(group)
    return groups


def _holds(pid: int, link: str) -> bool:
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:  # gone, or someone else's
        return False
    for fd in fds:
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == link:
                return True
    return False


def _all_gone_within(groups: dict[int, str | None], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(_alive(group, born) for group, born in groups.items()):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL)
    return True


def _end(groups: dict[int, str | None], grace: float, kill_after: float) -> None:
    """The recorder's sequence, given to every group at once."""
    if sys.platform == "win32" or _all_gone_within(groups, grace):  # never run on Windows
        return
    for group, born in groups.items():
        _signal(group, signal.SIGTERM, born)
    if _all_gone_within(groups, kill_after):
        return
    for group, born in groups.items():
        _signal(group, signal.SIGKILL, born)


def main(argv: list[str]) -> int:
    if sys.platform == "win32":
        return 2  # the stdio transport starts no keeper there
    whom, grace, kill_after = argv[1], float(argv[2]), float(argv[3])
    pipe = whom[len("pipe:") :] if whom.startswith("pipe:") else None
    # who the number belongs to now: our server, just started
    groups = {} if pipe is not None else {int(whom): _started(int(whom))}
    recorder = os.getpgid(os.getppid())  # the recorder's group (see ``_holders``)
    for sig in (signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    told = sys.stdin.buffer.read()  # until the recorder says done, or dies
    if told.startswith(b"done"):
        return 0
    _end(_holders(pipe, recorder) if pipe is not None else groups, grace, kill_after)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
