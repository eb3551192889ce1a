"""The group of a cassette a session is answered from, and what each group holds of it.

A cassette with variant sessions is prepared as one ``Prepared`` per group (the main
recording's and each variant's, ``cassette.core.replay.prepared``); a session answers from one
group at a time. What a session has used of a group is a ``GroupState``: the matcher's
consumption, the playback's server ids, log level and declared capabilities, the raw frames
played, the refusals still to replay.

``Groups`` is the seat the replayer and the era-and-variant authority share: the replayer
reads ``current`` at each message (it matches and plays from it), and only the authority
(``cassette.core.replay.negotiation``) changes it, with ``adopt``. So neither calls the other to
learn which group answers, and neither holds the other.

Invariants: a group left is kept whole, and adopted again goes on where it was left,
unless adopted afresh (a new handshake starts its session over); the server-id sequence
never goes back, whichever group answers (ids already given to server requests stay
given); the main recording's state is the first ``current``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cassette.core.replay.matching import (
    STRATEGIES,
    Candidate,
    FingerprintMatcher,
    Matcher,
    Strategy,
)
from cassette.core.replay.playback import Playback
from cassette.core.replay.prepared import Prepared

__all__ = ["GroupState", "Groups", "MatcherFactory"]

#: notifications are matched strictly and silently, with the session's ignore rules
STRICT = STRATEGIES["strict"]

#: builds a matcher for a group's recorded requests (``Replayer``'s ``matcher_factory``)
MatcherFactory = Callable[[Sequence[Candidate], "str | Strategy"], Matcher]


class GroupState:
    """What one session holds for one group of the cassette (the main recording, or a
    variant session): swapped whole when the authority chooses another group, and kept,
    so a group adopted again goes on from where it was left.

    A machine's state compared by identity, written as a plain slotted class rather than
    an attrs class: attrs writes and compiles its methods at import, a cost to every
    replay's start-up for a class built once per session (a speed exception, listed with
    its figure in docs/architecture.md)."""

    __slots__ = ("matcher", "notes", "playback", "prepared", "raws_played", "refusals")

    def __init__(
        self,
        prepared: Prepared,
        matcher: Matcher,
        notes: FingerprintMatcher,
        refusals: FingerprintMatcher | None,
        playback: Playback,
    ) -> None:
        self.prepared = prepared
        self.matcher = matcher
        #: notifications, matched strictly and silently with the session's ignore rules
        self.notes = notes
        #: requests the recorded server refused without a session: they answer only
        #: requests sent before this session's own handshake succeeded; ``None`` after
        self.refusals = refusals
        self.playback = playback
        #: how many times each raw frame was played
        self.raws_played: dict[str, int] = {}

    def __repr__(self) -> str:
        return f"GroupState(era={self.prepared.era!r}, playback={self.playback!r})"


class Groups:
    """One session's groups: the one answering it (``current``), and those it left.
    ``strategy`` and ``factory`` make each group's matcher as the session's own."""

    __slots__ = ("_factory", "_ignore", "_kept", "_strategy", "current", "main")

    def __init__(
        self,
        main: Prepared,
        strategy: str | Strategy = "default",
        factory: MatcherFactory | None = None,
        ignore: Sequence[str] = (),
    ) -> None:
        self._strategy = strategy
        self._factory = factory
        self._ignore = ignore
        #: the main recording's group (its ``variants``, ``probe`` and ``surface`` are
        #: the cassette's)
        self.main = main
        #: the state of each group the session left, by ``id`` of its ``Prepared``
        self._kept: dict[int, GroupState] = {}
        self.current = self.fresh(main)

    def fresh(self, ready: Prepared) -> GroupState:
        """A session's state for ``ready``'s group, before anything was played from it."""
        if self._factory is None:
            matcher: Matcher = FingerprintMatcher(ready.requests, self._strategy)
        else:
            matcher = self._factory(ready.requests.candidates, self._strategy)
        # Notifications are matched strictly and silently: a client may send any it likes.
        notes = FingerprintMatcher(ready.notifications, STRICT.ignoring(self._ignore))
        refusals = FingerprintMatcher(ready.refused, "strict") if ready.refused else None
        return GroupState(ready, matcher, notes, refusals, Playback(modern=ready.era == "modern"))

    def adopt(self, ready: Prepared, fresh: bool) -> None:
        """Answer from ``ready``'s group. The group left is kept as it was; unless
        ``fresh``, one adopted again goes on from where it was left."""
        served = self.current
        self._kept[id(served.prepared)] = served
        kept = None if fresh else self._kept.get(id(ready))
        state = kept if kept is not None else self.fresh(ready)
        playback = state.playback  # ids already given to server requests stay given
        playback.next_server_id = max(playback.next_server_id, served.playback.next_server_id)
        self.current = state

    def kept(self, ready: Prepared) -> GroupState | None:
        """The state the session left ``ready``'s group in (``None``: never left)."""
        return self._kept.get(id(ready))
