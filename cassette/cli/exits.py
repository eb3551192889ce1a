"""What a command exits with: the documented exit codes, and the code of an error or
a recording's end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from cassette.cli.output import err
from cassette.errors import PluginError, TransportError, UsageError

if TYPE_CHECKING:
    from cassette.runtime.record import RecordResult

__all__ = [
    "EXIT_CASSETTE",
    "EXIT_INTERNAL",
    "EXIT_MISSES",
    "EXIT_SERVER",
    "EXIT_TRANSPORT",
    "EXIT_USAGE",
    "exit_code",
    "recording_exit",
]

EXIT_MISSES: Final = 1
EXIT_USAGE: Final = 2
EXIT_CASSETTE: Final = 3
EXIT_TRANSPORT: Final = 4
EXIT_SERVER: Final = 5
EXIT_INTERNAL: Final = 70


def exit_code(exc: BaseException) -> int:
    """The documented exit code of an anticipated error (a ``CassetteError``)."""
    if isinstance(exc, UsageError | PluginError):
        return EXIT_USAGE
    if isinstance(exc, TransportError):
        return EXIT_TRANSPORT
    return EXIT_CASSETTE


def recording_exit(result: RecordResult | None, *, told: bool = False) -> int:
    """``record``'s exit code once the recording has its name, and the line that explains
    one that is not 0: no request succeeded (4, and why: the server's exit code and last
    stderr, where the session is kept), or the server exited by itself with an error
    (5; its own code is named, never passed on, so it cannot pass for one of ours).
    ``told``: the failure was said already (a record mode says it as it happens)."""
    if result is None:
        return 0
    if not result.succeeded:
        if not told:
            err(f"error: {result.failure()}")
        return EXIT_TRANSPORT
    code = result.exit_code
    if isinstance(code, int) and code > 0:
        err(f"the recorded server exited with code {code}; the recording is in {result.path}")
        return EXIT_SERVER
    return 0
