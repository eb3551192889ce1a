"""A session's responder for a cassette of several server starts, bound when first used.

A front opens a session before it knows whether a client will use it: the HTTP front
opens its shared, session-less one when it starts, and a legacy client never sends on
it. So the start a session serves is taken from the pool when the session first does
something (``start`` on stdio, its first message over HTTP), never at ``open``: a
session no client used takes no start, and the first client session gets start 1.

That shared session is where every 2026-07-28 client of the HTTP front is served, with
no session of its own: there a ``server/discover`` after other requests is the client
connecting again, and takes the next start. The misses of the start left behind stay
in the session's account.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cassette.core.replay.matching import Matcher
from cassette.core.replay.replayer import Replayer
from cassette.core.replay.reply import Reply

if TYPE_CHECKING:
    from cassette.core.replay.misses import MissReport

__all__ = ["StartResponder", "start_note"]

#: requests that are no part of what a client connected for: a handshake, a ping
_QUIET = frozenset({"initialize", "server/discover", "ping"})


def start_note(number: int, of: int) -> str | None:
    """What a miss of start ``number`` adds (``None`` for the first start): the client
    started the server again, and the cassette keeps each start as a session of its own."""
    if number <= 1:
        return None
    return (
        f"served from start {number} of {of}: the client started the server again, and "
        f"the cassette holds each start after its first as events with meta.start = N "
        "(replays serve them in order; record the client's whole run again to change them)"
    )


class StartResponder:
    """A ``Responder`` that becomes the replayer of the next start on first use."""

    def __init__(self, bind: Callable[[], Replayer]) -> None:
        self._bind = bind
        self._replayer: Replayer | None = None
        #: the bound start has answered a request other than a handshake
        self._served = False

    @property
    def bound(self) -> Replayer | None:
        """The start's replayer, once the session was used (``None`` before)."""
        return self._replayer

    def _inner(self) -> Replayer:
        if self._replayer is None:
            self._replayer = self._bind()
        return self._replayer

    @property
    def misses(self) -> list[MissReport]:
        return self._inner().misses

    @misses.setter
    def misses(self, value: list[MissReport]) -> None:
        self._inner().misses = value

    @property
    def waiting(self) -> tuple[object, ...]:
        return self._inner().waiting if self._replayer is not None else ()

    @property
    def repeats(self) -> int:
        return self._replayer.repeats if self._replayer is not None else 0

    @property
    def main_matcher(self) -> Matcher | None:
        return self._replayer.main_matcher if self._replayer is not None else None

    def start(self) -> Reply:
        return self._inner().start()

    def receive_frame(self, data: bytes | str) -> Reply:
        return self._inner().receive_frame(data)

    def receive(self, message: Any) -> Reply:
        method = message.get("method") if isinstance(message, dict) else None
        if method == "server/discover" and self._served:
            self._next_start()
        elif isinstance(method, str) and "id" in message and method not in _QUIET:
            self._served = True
        return self._inner().receive(message)

    def _next_start(self) -> None:
        """The client connected again: the next start, its account holding the last's."""
        left = self._inner()
        self._replayer = self._bind()
        self._replayer.misses.extend(left.misses)
        self._served = False

    def end_of_input(self) -> Reply:
        return self._replayer.end_of_input() if self._replayer is not None else Reply()

    def expire(self, server_id: object) -> Reply:
        return self._inner().expire(server_id)

    def give_up(self, request_id: object) -> Reply:
        return self._inner().give_up(request_id)

    def undelivered(self, server_id: object) -> Reply:
        return self._inner().undelivered(server_id)

    def describe(self, report: MissReport) -> str:
        return self._inner().describe(report)

    def summary(self) -> str:
        return self._replayer.summary() if self._replayer is not None else ""
