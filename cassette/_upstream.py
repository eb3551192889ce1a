"""``Target``, ``StderrLine`` and ``Exited``, exported by ``cassette.transport`` and built on
first use.

They say what a live server is and what it does outside the protocol: values of reaching
a server, which a replay never does. Building an attrs class at import costs start-up instructions
(docs/architecture.md, "Speed exceptions", has the figure), and a replay imports
``cassette.transport`` on every start.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import attrs

__all__ = ["Exited", "SideEvent", "SideEventHandler", "StderrLine", "Target"]


@attrs.frozen(slots=True)
class Target:
    """What to reach: a command to spawn (stdio) or a URL (network transports).

    ``headers`` are for network transports: sent with every request (credentials a client
    gave); they are never written to a cassette."""

    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] | None = None
    cwd: str | None = None
    headers: Mapping[str, str] | None = None


@attrs.frozen(slots=True)
class StderrLine:
    """The server wrote one line on stderr (``data`` keeps its newline, verbatim)."""

    data: bytes


@attrs.frozen(slots=True)
class Exited:
    """The server process ended with ``code`` (negative: killed by that signal)."""

    code: int | None


SideEvent = StderrLine | Exited
SideEventHandler = Callable[[SideEvent], None]

if not TYPE_CHECKING:  # re-homed at once: ``SideEvent`` names them before they are looked up
    from cassette._lazy import publish

    for _value in (Target, StderrLine, Exited):
        publish(_value, "cassette.transport")
