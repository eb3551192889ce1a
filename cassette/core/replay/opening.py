"""A session answered from the cassette's opening until it needs the rest.

A long cassette takes most of a second to load and prepare, and a client waits that long
for its ``initialize`` answer. When the command line has proved that the answer to a
session's ``initialize`` cannot depend on anything after the cassette's opening (its first
lines: the header, the handshake and the next client message; ``cassette.store.opening``
reads them and says what is proved), the session's first frame is answered from a
``Replayer`` of that opening, and the whole cassette is loaded and prepared when the
session sends anything else, asks anything else, or ends.

The whole cassette's replayer is then brought to where the session is by hearing again
what the opening's heard (its start and that ``initialize``), so every later answer is
the one a replay of the whole cassette gives from the first. What it answered the
``initialize`` is compared with what the opening answered: a difference is told as a
warning with the next reply (the proof above rules it out; the check keeps it visible).

The opening answers only a single ``initialize`` request, and only when its answer is a
plain hit: a miss (whose message names the closest of all recordings), an answer that
waits for the client, or one with a warning is answered by the whole cassette instead,
loaded there and then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cassette.core.replay.replayer import Replayer
from cassette.core.replay.reply import Reply
from cassette.core.replay.sessions import ReplayPool, Responder
from cassette.core.wire.jsonrpc import Kind, classify_parts, classify_value
from cassette.core.wire.model import Recording

if TYPE_CHECKING:
    from cassette.core.replay.misses import MissReport
    from cassette.core.replay.strategies import Strategy

__all__ = ["OpeningPool", "OpeningResponder"]


class OpeningPool:
    """A ``ResponderPool`` whose first session is answered from ``opening`` (a pool of the
    cassette's opening) until it needs the rest; ``whole`` loads and prepares the whole
    cassette's pool, once, which serves everything else."""

    def __init__(self, opening: ReplayPool, whole: Callable[[], ReplayPool]) -> None:
        self._opening: ReplayPool | None = opening
        self._load = whole
        self._whole: ReplayPool | None = None
        self._first = True

    @property
    def whole(self) -> ReplayPool:
        """The whole cassette's pool, loaded and prepared on first use."""
        if self._whole is None:
            self._whole = self._load()
            self._opening = None  # its work is no longer needed
        return self._whole

    @property
    def loaded(self) -> bool:
        """Whether the whole cassette has been loaded."""
        return self._whole is not None

    @property
    def recording(self) -> Recording:
        if self._opening is not None:  # the same header as the whole cassette's
            return self._opening.recording
        return self.whole.recording

    @property
    def strategy(self) -> Strategy:
        """What the sessions match with (decided from the header the two share)."""
        return (self._opening or self.whole).strategy

    @property
    def first_start(self) -> int:
        """An opening is served only from a cassette of one server start: the first."""
        return 1

    def new(self) -> Responder:
        if self._first and self._opening is not None:
            self._first = False
            early = self._opening.new()
            assert isinstance(early, Replayer)  # an opening holds one server start
            return OpeningResponder(early, self)
        return self.whole.new()

    def release(self, responder: Responder) -> None:
        if isinstance(responder, OpeningResponder):
            responder = responder.whole()  # the end of the run is the whole cassette's
        self.whole.release(responder)

    @property
    def misses(self) -> list[MissReport]:
        return self.whole.misses

    def summary(self) -> str:
        return self.whole.summary()


class OpeningResponder:
    """A ``Responder`` answering a session's ``initialize`` from the cassette's opening,
    and everything else from the whole cassette (see the module docstring)."""

    def __init__(self, early: Replayer, pool: OpeningPool) -> None:
        self._early: Replayer | None = early
        self._pool = pool
        self._full: Responder | None = None
        self._started: Reply | None = None
        #: what the opening heard and answered, in order: (frame or message, reply)
        self._heard: list[tuple[bool, Any, Reply]] = []
        #: told with the next reply: the whole cassette answered the opening differently
        self._pending: tuple[str, ...] = ()

    def whole(self) -> Responder:
        """The whole cassette's responder, brought to where this session is."""
        if self._full is None:
            full = self._pool.whole.new()
            if self._started is not None:
                full.start()
            differs = False
            for is_frame, value, told in self._heard:
                again = full.receive_frame(value) if is_frame else full.receive(value)
                differs = differs or again.messages != told.messages
            if differs:
                self._pending = (
                    "the whole cassette answers the handshake differently from its opening, "
                    "which answered it; the replay goes on from the whole cassette",
                )
            self._full, self._early, self._heard = full, None, []
        return self._full

    def _told(self, reply: Reply) -> Reply:
        if not self._pending:
            return reply
        import attrs

        warnings, self._pending = (*reply.warnings, *self._pending), ()
        return attrs.evolve(reply, warnings=warnings)

    @property
    def misses(self) -> list[MissReport]:
        return self.whole().misses if self._early is None else self._early.misses

    @misses.setter
    def misses(self, value: list[MissReport]) -> None:
        self.whole().misses = value

    @property
    def waiting(self) -> tuple[object, ...]:
        return self.whole().waiting if self._early is None else ()

    def start(self) -> Reply:
        if self._early is None:
            return self.whole().start()
        self._started = self._early.start()
        return self._started

    def receive_frame(self, data: bytes | str) -> Reply:
        early = self._early
        if early is not None and not self._heard and _initialize(*classify_parts(data)[:2]):
            reply = early.receive_frame(data)
            if _plain_hit(early, reply):
                self._heard.append((True, data, reply))
                return reply
        return self._told(self.whole().receive_frame(data))

    def receive(self, message: Any) -> Reply:
        early = self._early
        if early is not None and not self._heard and _initialize(classify_value(message), message):
            reply = early.receive(message)
            if _plain_hit(early, reply):
                self._heard.append((False, message, reply))
                return reply
        return self._told(self.whole().receive(message))

    def expire(self, server_id: object) -> Reply:
        return self._told(self.whole().expire(server_id))

    def give_up(self, request_id: object) -> Reply:
        return self._told(self.whole().give_up(request_id))

    def undelivered(self, server_id: object) -> Reply:
        return self._told(self.whole().undelivered(server_id))

    def describe(self, report: MissReport) -> str:
        return self.whole().describe(report)

    def summary(self) -> str:
        return self.whole().summary()


def _initialize(kind: Kind, value: Any) -> bool:
    """Whether a client frame is one ``initialize`` request, without a pagination
    ``cursor`` (whether one is matched depends on the cursors the whole cassette's answers
    hand out)."""
    if kind is not Kind.REQUEST or value.get("method") != "initialize":
        return False
    params = value.get("params")
    return not (isinstance(params, dict) and "cursor" in params)


def _plain_hit(early: Replayer, reply: Reply) -> bool:
    """Whether the opening's answer is one the whole cassette is proved to give: the
    recorded answer, complete, with nothing waited for and nothing to warn of."""
    return (
        not early.misses
        and reply.miss is None
        and reply.responded
        and not reply.awaiting
        and not reply.warnings
        and not early.waiting
    )
