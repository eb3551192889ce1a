"""A plain stdio recording's server, spawned before the command line is even imported.

Why: a recording cannot answer ``initialize`` before its server does, and a server takes
its own time to boot (Node's ``server-everything`` about 200 ms here). Spawned only once
the command line, the recorder and the redaction rules are imported and set up, the
server boots after all that; spawned first, it boots while they load, and the recording
answers as soon as the slower of the two is ready. So ``python -m cassette`` (and the
``cassette`` script) call ``spawn`` with the raw arguments, first thing, and the stdio
transport's ``connect`` takes the process (``claim``) when its command is the one spawned.

Only a plain stdio recording spawns early: ``record ... -- COMMAND`` with none of the
options that make it something else (a mode, scenarios, an upstream URL, another
transport, help) and no ``MCP_CASSETTE_MODE`` in the environment; and only on Linux,
where ``os.posix_spawnp`` starts it without importing ``subprocess`` and a pidfd tells
the event loop when it exits. Anything else spawns as before, from ``connect``. A process
that was spawned early and never claimed (a usage error, say) is ended by ``discard``,
which the entry point calls on its way out.

Nothing changes for crash safety: the server is spawned exactly as ``connect`` spawns it
(pipes for its stdio, a session and process group of its own, SIGPIPE and SIGXFSZ back
to their defaults, no descriptor of ours but the three pipes), and ``connect`` starts its
keeper as soon as it claims it, before the first frame is forwarded.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Final

__all__ = ["Early", "claim", "discard", "plain_stdio_record", "spawn"]

#: Options (and their ``--name=value`` forms) that make ``record`` something other than a
#: plain stdio recording of a command, or make it exit before recording.
_NOT_PLAIN: Final = frozenset(
    {
        "-h",
        "--help",
        "--mode",
        "--scenarios",
        "--scenario",
        "--upstream",
        "--transport",
        "--prime",
        "--sessions",
        "--report",
        "--faults",
    }
)
_MODE_VARIABLE: Final = "MCP_CASSETTE_MODE"


class Early:
    """A server spawned early: its process id and our ends of its three pipes."""

    def __init__(self, argv: tuple[str, ...], pid: int, fds: tuple[int, int, int]) -> None:
        self.argv = argv
        self.pid = pid
        self.stdin, self.stdout, self.stderr = fds


_spawned: list[Early] = []


def plain_stdio_record(args: list[str]) -> tuple[str, ...] | None:
    """The server command of ``args`` (the command line's words after the program) when
    they ask for a plain stdio recording, else ``None``."""
    if len(args) < 3 or args[0] != "record" or _MODE_VARIABLE in os.environ:
        return None
    try:
        dash = args.index("--")
    except ValueError:
        return None
    options, command = args[1:dash], tuple(args[dash + 1 :])
    if not command or not any(
        o in ("-o", "--output") or o.startswith("--output=") for o in options
    ):
        return None
    for option in options:
        if option.split("=", 1)[0] in _NOT_PLAIN:
            return None
    return command


def spawn(args: list[str]) -> None:
    """Spawn the server of a plain stdio recording now (see the module docstring); any
    failure leaves it to ``connect``, which reports it as it always did."""
    if sys.platform != "linux":
        return
    command = plain_stdio_record(args)
    if command is None or _spawned:
        return
    pipes = [os.pipe() for _ in range(3)]
    child = (pipes[0][0], pipes[1][1], pipes[2][1])
    ours = (pipes[0][1], pipes[1][0], pipes[2][0])
    actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, fd, n) for n, fd in enumerate(child)]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited()]
    try:
        pid = os.posix_spawnp(
            command[0],
            list(command),
            os.environ,
            file_actions=actions,
            setsid=True,
            setsigdef=(_SIGPIPE, _SIGXFSZ),
        )
    except (OSError, NotImplementedError, ValueError):
        for fd in (*child, *ours):
            os.close(fd)
        return
    for fd in child:
        os.close(fd)
    _spawned.append(Early(command, pid, ours))


#: Signal numbers, without importing ``signal`` (its enums) this early (Linux's values).
_SIGPIPE: Final = 13
_SIGXFSZ: Final = 25


def _inherited() -> list[int]:
    """Our inheritable descriptors above stderr: a spawned server must not get them (as
    ``subprocess`` closes them for ``connect``'s spawn)."""
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return []
    found = []
    for name in names:
        fd = int(name)
        if fd > 2:
            try:
                if os.get_inheritable(fd):
                    found.append(fd)
            except OSError:
                continue  # the listing's own descriptor, closed by now
    return found


def claim(command: tuple[str, ...]) -> Early | None:
    """The server spawned early for ``command``, handed over once; ``None`` when none was
    (the caller spawns it). A different command's early process is ended."""
    if not _spawned:
        return None
    early = _spawned.pop()
    if early.argv == command:
        return early
    _end(early)
    return None


def discard() -> None:
    """End the early server nobody claimed (the command failed before recording)."""
    while _spawned:
        _end(_spawned.pop())


def _end(early: Early) -> None:
    if sys.platform != "linux":  # never spawned elsewhere
        return
    for fd in (early.stdin, early.stdout, early.stderr):
        with contextlib.suppress(OSError):
            os.close(fd)
    with contextlib.suppress(OSError):
        os.killpg(early.pid, 9)  # its own group (setsid): what it started goes with it
    with contextlib.suppress(OSError):
        os.waitpid(early.pid, 0)
