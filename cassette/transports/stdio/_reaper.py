"""Descendants that left the server's process group, ended with it (Linux).

Theory of operation
-------------------
A stdio server leads a process group of its own, and its shutdown signals the group. A
descendant that starts a session of its own (``setsid``, a daemonizing helper) leaves the
group, so no group signal reaches it, and when its parent exits it is re-parented to init:
it would outlive every shutdown. On Linux the recording process can be a *child
subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``): orphaned descendants are then re-parented
to it instead of init. Once a server has exited and its group has been ended, every child
of this process that it did not start itself (``started``) is such an orphan: it gets
SIGKILL and is reaped, so none is left behind, and no zombie either.

A child being started is not in ``started`` until its start returns, and other tasks run
meanwhile (the recorder's probes start servers while others end theirs): while one is
being started (``starting``), nothing is taken for an orphan; the next end takes them.

Only a process that owns its whole life may do this: the command line's ``record`` turns
it on (``adopt_orphans``); a library caller's process (a test run) is never changed.
Other platforms: macOS and the BSDs have no subreaper for an unprivileged process and
Windows no process groups; there only the group is ended (docs/reliability.md).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import Iterator

__all__ = ["adopt_orphans", "end_adopted", "started", "starting"]

#: ``prctl`` option number (linux/prctl.h).
_PR_SET_CHILD_SUBREAPER = 36
#: Whether this process is a subreaper (``adopt_orphans`` succeeded).
_adopting = [False]
#: Children this process started itself (servers, keepers): never taken for orphans.
started: set[int] = set()
#: How many children are being started now (``starting``).
_in_flight = [0]


@contextlib.contextmanager
def starting() -> Iterator[None]:
    """Around the start of a child that is then added to ``started``: until it is,
    ``end_adopted`` takes nothing for an orphan (see the module docstring)."""
    _in_flight[0] += 1
    try:
        yield
    finally:
        _in_flight[0] -= 1


def adopt_orphans() -> bool:
    """Make this process the subreaper of its descendants, where the platform allows it."""
    if sys.platform != "linux":
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = bool(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        done = False
    _adopting[0] = done
    return done


def _children() -> list[int]:
    """The process ids whose parent is this process (from ``/proc``)."""
    me = os.getpid()
    found: list[int] = []
    with contextlib.suppress(OSError):
        entries = os.listdir("/proc")
        for entry in entries:
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue  # it ended while we looked
            if len(fields) > 1 and int(fields[1]) == me:
                found.append(int(entry))
    return found


def end_adopted() -> list[int]:
    """SIGKILL and reap every orphan re-parented to this process; returns their ids.
    Nothing unless ``adopt_orphans`` made this process a subreaper."""
    if sys.platform == "win32" or not _adopting[0] or _in_flight[0]:
        return []
    orphans = [pid for pid in _children() if pid not in started]
    for pid in orphans:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    for pid in orphans:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
    return orphans
