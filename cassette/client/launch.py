"""Starting the server a cassette's header names, and saying why it would not start.

``variant``, ``verify`` and ``check`` take TAPE's server when no other is given, and each
must start it the same way, from any working directory: the recorder wrote a path under
the project relative to the project's root, one under the home folder as ``~/...``, and
the folder the recording was made in (``cassette.store.target_paths``), so
``recorded_server`` turns those back into paths and runs the command in that folder, as
it ran when recorded (a header that names no folder: from the root of the cassette's
project, else the working directory's).

A server that cannot start usually says why on its stderr, which a client-side command
otherwise drops: ``StderrTail`` keeps its last lines, and ``explained`` makes the error a
person sees quote the line that states the error (``stderr_excerpt``, as ``record`` does
for a failed recording), through the redaction gate. ``with_hint`` adds, for a server
taken from the header, how to start it another way.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Final

from cassette.client.target import ServerTarget
from cassette.errors import CassetteError, TransportError, UsageError
from cassette.transport import SideEvent, StderrLine

__all__ = ["HEADER_HINT", "StderrTail", "explained", "recorded_server", "with_hint"]

#: what a failure to start or reach the server a header names adds
HEADER_HINT: Final = (
    "the server was started as {tape}'s header names it; give -- COMMAND to start it another way"
)
#: lines of the server's stderr kept (enough for the error line above a Node or Python stack)
_KEPT: Final = 40


def recorded_server(
    header: Any, tape: str | None, transport: str | None = None, source: str = "TAPE"
) -> ServerTarget:
    """The server ``header`` (a cassette's, read from the file ``tape``) recorded: its
    command made startable from anywhere and run from the project's root (see the module
    docstring), or its URL over ``transport`` (default: the one recorded, streamable HTTP
    for a stdio recording)."""
    from cassette.store.target_paths import startable

    target = header.target or {}
    url = target.get("url")
    if target.get("command"):
        argv, cwd = startable(target, tape)
        return ServerTarget(command=tuple(argv), cwd=cwd, transport=transport or "stdio")
    if isinstance(url, str):
        recorded = str(header.transport)
        chosen = transport or (recorded if recorded != "stdio" else "streamable-http")
        return ServerTarget(url=url, transport=chosen)
    raise UsageError(
        f"{source}: its header names no server to reach; give -- COMMAND or --upstream URL"
    )


def with_hint(text: str, tape: str | None) -> str:
    """``text``, and for a server taken from ``tape``'s header, how to start another."""
    return text if tape is None else f"{text}; {HEADER_HINT.format(tape=tape)}"


class StderrTail:
    """A connection's side-event handler that keeps the last lines of the server's stderr
    (``ConnectOptions(on_side_event=tail)``), to quote when the server fails."""

    def __init__(self) -> None:
        self.lines: deque[str] = deque(maxlen=_KEPT)

    def __call__(self, event: SideEvent) -> None:
        if isinstance(event, StderrLine):
            self.lines.append(event.data.decode("utf-8", "replace").rstrip("\r\n"))

    def said(self) -> str:
        """``its last stderr: ...`` for a person (redacted), or ``""`` when it said
        nothing."""
        if not any(line.strip() for line in self.lines):
            return ""
        from cassette.runtime.record import stderr_excerpt
        from cassette.store.gate import shown

        return shown(stderr_excerpt(list(self.lines)))


def explained(exc: BaseException, tail: StderrTail, closed: str) -> BaseException:
    """``exc`` as a person should see it when it says the server failed (it went away:
    ``closed`` is the line for that; or the connection to it broke): with what the server
    last said on its stderr, when it said anything. Any other error (an answer the server
    gave, a cassette's) comes back as it is: the server's stderr does not explain it."""
    from cassette.client.connection import closed_errors

    said = tail.said()
    gone = isinstance(exc, closed_errors())
    broken = isinstance(exc, OSError) and not isinstance(exc, CassetteError | TransportError)
    if not said or not (gone or broken):
        return exc
    text = closed if gone or not str(exc) else str(exc)
    return TransportError(f"{text}; {said}")
