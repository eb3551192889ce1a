"""The session pool: every replay session a front serves from one cassette.

A front does not answer clients itself; it asks a *responder*, one per client session
(``Responder``: a ``Replayer``, a mock's server, anything that answers the same way), which
it gets from a *pool* (``ResponderPool``). ``ReplayPool`` is the cassette's pool: each
session gets its own ``Replayer`` (its own consumption state), all sharing the cassette's
``Prepared`` work, and what an ended session leaves is only what the end-of-run report
needs (its misses), so a long run keeps no ended session.

A cassette of several server starts (``cassette.core.replay.starts``: a client that started the
stdio server once per call) serves them in order: each session takes the next start,
beginning at ``first_start`` (a stdio replay's claimed start; 1 over HTTP, where each
client session is a start), and after the last start comes the first again. A
session's start is taken when it is first used (``StartResponder``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from cassette.core.replay.matching import FingerprintMatcher, Strategy, get_strategy
from cassette.core.replay.prepared import Prepared, check_redaction
from cassette.core.replay.replayer import Replayer, ShownPolicy
from cassette.core.replay.reply import Reply
from cassette.core.replay.start_responder import StartResponder, start_note
from cassette.core.replay.starts import StartRecording, split_starts
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.model import Recording

if TYPE_CHECKING:
    from cassette.core.replay.misses import MissReport

__all__ = ["EndsInput", "ReplayPool", "Responder", "ResponderPool"]


class Responder(Protocol):
    """One client session's sans-IO answerer, as the fronts drive it: a ``Replayer``, or
    anything that answers the same way (``cassette.mock.MockServer``)."""

    misses: list[MissReport]

    @property
    def waiting(self) -> tuple[object, ...]: ...

    def start(self) -> Reply: ...

    def receive_frame(self, data: bytes | str) -> Reply: ...

    def receive(self, message: Any) -> Reply:
        """One client message already decoded (a front that checked the frame decoded
        it): answered as ``receive_frame`` answers its frame."""
        ...

    def expire(self, server_id: object) -> Reply: ...

    def give_up(self, request_id: object) -> Reply: ...

    def undelivered(self, server_id: object) -> Reply: ...

    def describe(self, report: MissReport) -> str: ...

    def summary(self) -> str: ...


@runtime_checkable
class EndsInput(Protocol):
    """A responder that says what the server still sends when its client's input ends
    (optional; a front's session checks it with ``isinstance``). A ``Replayer`` sends
    what the server asked the recorder's probe of its own accord (``Replayer.end_of_input``);
    a responder without it sends nothing then."""

    def end_of_input(self) -> Reply: ...


class ResponderPool(Protocol):
    """Every session a front serves: ``ReplayPool``, or a mock's. ``recording`` says
    how the answering server was reached (era, transport, recorded HTTP facts), so a
    network front serves its sessions as that server did. ``release`` is told when a
    session has ended: what it kept for the end of the run (its misses) is taken from it,
    and the rest let go, so a front serving a long run keeps no ended session."""

    @property
    def recording(self) -> Recording: ...

    def new(self) -> Responder: ...

    def release(self, responder: Responder) -> None: ...

    @property
    def misses(self) -> list[MissReport]: ...

    def summary(self) -> str: ...


class ReplayPool:
    """Every replay session a network front serves from one cassette.

    Each session gets its own ``Replayer`` (its own consumption state), all sharing the
    cassette's ``Prepared`` work. A session's replayer is kept while it is open; when it
    ends (``release``) only its misses and their summary stay, for the end-of-run report:
    the memory a long run keeps grows with its misses, not with its sessions.
    """

    def __init__(
        self,
        recording: Recording,
        strategy: str | Strategy = "default",
        *,
        environ: Mapping[str, str] | None = None,
        shown: ShownPolicy | None = None,
        first_start: int = 1,
    ) -> None:
        check_redaction(recording)  # refused before any client is served
        self._shown = shown  # the policy a miss is described through (``Replayer``)
        self.recording = recording
        #: what every session matches with (the replay's banner names it)
        self.strategy = get_strategy(strategy)
        self._environ = environ
        self._ignore = self.strategy.ignore
        self._starts = split_starts(recording)
        #: each start's prepared work, made when a session first takes the start
        self._start_work: dict[int, Prepared] = {}
        self._next_start = (max(first_start, 1) - 1) % len(self._starts)
        #: the server start the first session takes (1 unless a later one was claimed)
        self.first_start = self._next_start + 1
        if len(self._starts) == 1:
            self._prepared = Prepared.of(recording, self._ignore)
        self._open: dict[int, Replayer | StartResponder] = {}
        self._ended_misses: list[MissReport] = []
        self._ended_repeats = 0
        self._ended_summaries: list[str] = []
        #: what the ended sessions left unplayed, folded as each ends (``unplayed``)
        self._ended_unplayed: dict[int, JSONObject] | None = None
        self._unplayed_unknown = False
        self.sessions = 0  # sessions opened so far

    @property
    def starts(self) -> int:
        """How many server starts the cassette holds (1 for most)."""
        return len(self._starts)

    def new(self) -> Replayer | StartResponder:
        """A fresh session (of the next start, on a cassette of several)."""
        if len(self._starts) > 1:
            responder = StartResponder(self._next)
            self._open[id(responder)] = responder
            self.sessions += 1
            return responder
        replayer = Replayer(
            self.recording,
            self.strategy,
            environ=self._environ,
            prepared=self._prepared,
            shown=self._shown,
        )
        self._open[id(replayer)] = replayer
        self.sessions += 1
        return replayer

    def _next(self) -> Replayer:
        """The replayer of the next start in turn (after the last, the first again)."""
        index = self._next_start
        self._next_start = (index + 1) % len(self._starts)
        chosen: StartRecording = self._starts[index]
        work = self._start_work.get(index)
        if work is None:
            work = self._start_work[index] = Prepared.of(chosen, self._ignore)
        return Replayer(
            chosen,
            self.strategy,
            environ=self._environ,
            prepared=work,
            shown=self._shown,
            start_note=start_note(chosen.number, chosen.of),
        )

    @property
    def live(self) -> int:
        """Sessions opened and not ended yet (each holds its replayer)."""
        return len(self._open)

    def release(self, responder: Responder) -> None:
        """The session of ``responder`` has ended: keep its misses, let go of the rest."""
        replayer = self._open.pop(id(responder), None)
        if replayer is None or (isinstance(replayer, StartResponder) and replayer.bound is None):
            return  # a session no client used took no start and left nothing
        self._ended_misses += replayer.misses
        self._ended_repeats += replayer.repeats
        summary = replayer.summary()
        if summary:
            self._ended_summaries.append(summary)
        self._ended_unplayed = self._fold(self._ended_unplayed, replayer)

    def _fold(
        self, unplayed: dict[int, JSONObject] | None, replayer: Replayer | StartResponder
    ) -> dict[int, JSONObject] | None:
        """``unplayed`` narrowed to what ``replayer`` left unplayed too (at most the
        cassette's requests, however many sessions are folded in). On a cassette of
        several starts each start's requests are its own: what no session left unplayed
        is told per start, so nothing is folded across them."""
        if isinstance(replayer, StartResponder):
            return self._fold_start(unplayed, replayer)
        matcher = replayer.main_matcher
        if not isinstance(matcher, FingerprintMatcher):
            self._unplayed_unknown = True
            return unplayed
        left = {c.seq: c.message for c in matcher.unconsumed()}
        if unplayed is None:
            return left
        return {seq: message for seq, message in unplayed.items() if seq in left}

    def _fold_start(
        self, unplayed: dict[int, JSONObject] | None, responder: StartResponder
    ) -> dict[int, JSONObject] | None:
        """A start's session: what it left unplayed, beside what the other starts'
        sessions left (a session never used left nothing to say)."""
        matcher = responder.main_matcher
        if matcher is None:
            return unplayed
        if not isinstance(matcher, FingerprintMatcher):
            self._unplayed_unknown = True
            return unplayed
        left = {c.seq: c.message for c in matcher.unconsumed()}
        return {**(unplayed or {}), **left}

    def unplayed(self) -> list[tuple[int, JSONObject]]:
        """The recorded requests no session played, as (event index, message) in order;
        empty when a session's matcher cannot tell (not a fingerprint matcher)."""
        unplayed = self._ended_unplayed
        for replayer in self._open.values():
            unplayed = self._fold(unplayed, replayer)
        if self._unplayed_unknown:
            return []
        return sorted((unplayed or {}).items())

    def _bound(self) -> list[Replayer | StartResponder]:
        """The open sessions that have served a client (a start's, once it took one)."""
        return [
            r
            for r in self._open.values()
            if not isinstance(r, StartResponder) or r.bound is not None
        ]

    @property
    def misses(self) -> list[MissReport]:
        """Every miss of every session so far."""
        return [*self._ended_misses, *(m for r in self._bound() for m in r.misses)]

    @property
    def repeats(self) -> int:
        """Answers every session gave again on request (``allow_repeats``) so far."""
        return self._ended_repeats + sum(r.repeats for r in self._bound())

    def summary(self) -> str:
        """All sessions' misses, for a person ("" when there were none)."""
        open_ = (s for s in (r.summary() for r in self._bound()) if s)
        from cassette.core.replay.replay_parts import joined  # what each quotes stays apart

        return joined([*self._ended_summaries, *open_])
