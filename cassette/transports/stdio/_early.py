"""A plain stdio recording's server, spawned before the command line is even imported.

Why: a recording cannot answer ``initialize`` before its server does, and a server takes
its own time to boot (Node's ``server-everything``: docs/architecture.md, "Speed exceptions", has
the figure). Spawned only once the command line, the recorder and the redaction rules are imported
and set up, the server boots after all that; spawned first, it boots while they load, and the
recording answers as soon as the slower of the two is ready. So ``python -m cassette`` (and the
``cassette`` script) call ``spawn`` with the raw arguments, first thing, and the stdio
transport's ``connect`` takes the process (``claim``) when its command is the one spawned.

Only a plain stdio recording spawns early: ``record ... -- COMMAND`` with none of the
options that make it something else (a mode, scenarios, an upstream URL, another
transport, help) and no ``MCP_CASSETTE_MODE`` in the environment; and only on Linux,
where ``os.posix_spawnp`` starts it without importing ``subprocess`` and a pidfd tells
the event loop when it exits (where pidfds are refused, it is spawned late, as before).
Anything else spawns as before, from ``connect``. A process
that was spawned early and never claimed (a usage error, say) is ended by ``discard``,
which the entry point calls on its way out.

Nothing changes for crash safety: the server is spawned as ``anyio.open_process`` would
spawn it (pipes for its stdio, a session and process group of its own, SIGPIPE and SIGXFSZ
back to their defaults, no descriptor of ours but the three pipes), and its keeper
(``cassette.transports.stdio._keeper``) is spawned just before it, so a recorder killed while
it is still starting leaves no server behind either; ``connect`` adopts both.

The same two spawns serve ``connect`` itself on Linux (``start_kept``), for every server it
starts later (a probe's, a later session's): spawned by the event loop, a server and its
keeper were two awaits apart, other tasks ran between them, and a recorder killed there
(SIGKILL, while its probes start their servers) left a server without a keeper, running
on after it. The keeper is spawned first (``start_kept`` says how it then finds its
server), so there is no such moment.
"""

from __future__ import annotations

import contextlib
import os
import sys

#: ``typing.TYPE_CHECKING`` without importing ``typing`` (and ``re``, ``enum``) before
#: the server is spawned: type checkers treat the name as true wherever it comes from
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final

__all__ = ["Early", "claim", "discard", "plain_stdio_record", "spawn", "start_kept"]

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
    """A process spawned early: its id and our ends of its pipes (``-1``: none)."""

    def __init__(self, argv: tuple[str, ...], pid: int, fds: tuple[int, int, int]) -> None:
        self.argv = argv
        self.pid = pid
        self.stdin, self.stdout, self.stderr = fds
        #: readable once the process has exited (``-1`` until ``_start`` opens it)
        self.pidfd = -1
        #: the server's keeper, spawned just before it (``cassette.transports.stdio._keeper``)
        self.keeper: Early | None = None


#: What a server spawned by ``connect`` is given (``StdioTransport``'s defaults): seconds
#: it has to exit once its stdin closes, then between SIGTERM and SIGKILL.
GRACE: Final = 5.0
KILL_AFTER: Final = 2.0
KEEPER: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_keeper.py")

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
    """Spawn the server of a plain stdio recording now, and its keeper (see the module
    docstring); any failure leaves it to ``connect``, which reports it as it always did."""
    if sys.platform != "linux":
        return
    command = plain_stdio_record(args)
    if command is None or _spawned:
        return
    server = start_kept(command, None, GRACE, KILL_AFTER)
    if server is not None:
        _spawned.append(server)


def start_kept(
    command: tuple[str, ...], env: dict[str, str] | None, grace: float, kill_after: float
) -> Early | None:
    """``command`` spawned now, with ``env`` (``None``: ours), its keeper spawned just
    before it and told the inode of the server's stdin pipe, not its process id: a keeper
    spawned after its server leaves a window where a recorder killed between the two
    spawns (the probes start servers during the session, so kills land there) leaves a
    server nobody keeps (``cassette.transports.stdio._keeper`` says how it finds it).
    ``None`` where it cannot be done (not Linux, no pidfds, a failed spawn): the caller
    spawns as before. The keeper is ``None`` when it alone failed to start (the caller
    starts one)."""
    if sys.platform != "linux" or not _pidfds():
        return None
    pipes = _pipes(3)
    whom = f"pipe:{os.fstat(pipes[0][0]).st_ino}"
    keeper = _start(
        (sys.executable, "-I", "-S", KEEPER, whom, str(grace), str(kill_after)), _pipes(1)
    )
    server = _start(command, pipes, env=env)
    if server is None:
        if keeper is not None:
            dismiss(keeper)
        return None
    server.keeper = keeper
    return server


def _pidfds() -> bool:
    """Whether this system gives pidfds, which the event loop waits on for an adopted
    process's exit (Linux 5.3 and later, outside sandboxes that refuse the call)."""
    if sys.platform != "linux":
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except OSError:
        return False
    return True


def _pipes(count: int) -> list[tuple[int, int]]:
    """Pipes for a child's first ``count`` standard descriptors (each ``(read, write)``)."""
    return [os.pipe() for _ in range(count)]


def _start(
    argv: tuple[str, ...], pipes: list[tuple[int, int]], *, env: dict[str, str] | None = None
) -> Early | None:
    """``argv`` spawned as ``connect`` spawns it, in a session of its own, its first
    standard descriptors on ``pipes`` (ours are the other ends) and the others on the null
    device, with ``env`` (``None``: ours). The pipes are closed if it fails."""
    if sys.platform != "linux":
        return None
    piped = len(pipes)
    child = [pipe[0] if n == 0 else pipe[1] for n, pipe in enumerate(pipes)]
    ours = [pipe[1] if n == 0 else pipe[0] for n, pipe in enumerate(pipes)]
    null = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC) if piped < 3 else -1
    child += [null] * (3 - piped)
    actions: list[tuple[int, ...]] = [(os.POSIX_SPAWN_DUP2, fd, n) for n, fd in enumerate(child)]
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inherited()]
    try:
        pid = os.posix_spawnp(
            argv[0],
            list(argv),
            os.environ if env is None else env,
            file_actions=actions,
            setsid=True,
            setsigdef=(_SIGPIPE, _SIGXFSZ),
        )
    except (OSError, NotImplementedError, ValueError):
        for fd in {*child, *ours}:
            os.close(fd)
        return None
    for fd in set(child):
        os.close(fd)
    fds = (*ours, -1, -1, -1)
    early = Early(argv, pid, (fds[0], fds[1], fds[2]))
    try:
        early.pidfd = os.pidfd_open(pid)
    except OSError:  # no pidfds here (a kernel before 5.3, a sandbox): connect spawns
        _end(early)
        return None
    return early


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
    (the caller spawns it). A different command's early server is ended."""
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


def dismiss(keeper: Early) -> None:
    """Tell a keeper nobody will use that its server is gone (or never was), and reap it."""
    if sys.platform != "linux":  # never spawned elsewhere
        return
    with contextlib.suppress(OSError):
        os.write(keeper.stdin, b"done\n")
    _end(keeper, kill=False)


def _end(early: Early, *, kill: bool = True) -> None:
    if sys.platform != "linux":  # never spawned elsewhere
        return
    for fd in (early.stdin, early.stdout, early.stderr, early.pidfd):
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
    if kill:
        with contextlib.suppress(OSError):
            os.killpg(early.pid, 9)  # its own group (setsid): what it started goes with it
    with contextlib.suppress(OSError):
        os.waitpid(early.pid, 0)
    if early.keeper is not None:
        dismiss(early.keeper)
