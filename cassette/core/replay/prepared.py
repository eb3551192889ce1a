"""A cassette prepared for replay: the read-only work every session shares.

Cutting the event log into exchanges and indexing the recorded requests by fingerprint is
done once per cassette (``Prepared.of``); a session (``cassette.core.replay.replayer.Replayer``)
only adds its consumption state. A cassette with variant sessions
(``cassette.core.eras.variants``) is prepared as one ``Prepared`` per group: the main
recording's, holding the variants' in ``variants``. Which group answers a session is not
decided here but by the era-and-variant authority (``cassette.core.replay.negotiation``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from cassette.core.eras.variants import PROBE_VARIANT, Fit, group_era, split_all
from cassette.core.redaction.redacted import check_header
from cassette.core.replay.matching import Candidate, CandidateIndex
from cassette.core.wire._gc import paused_gc
from cassette.core.wire.exchanges import Exchange, Item, cut
from cassette.core.wire.jsonrpc import JSONObject
from cassette.core.wire.meta import SESSION
from cassette.core.wire.model import Era, Recording, era_of
from cassette.errors import CassetteFormatError

if TYPE_CHECKING:
    from cassette.core.eras.listings import Surface

__all__ = ["Prepared", "check_redaction"]


@attrs.frozen(eq=False)  # compared by identity: no __eq__ to build at import
class Prepared:
    """The read-only work of replaying a cassette, done once and shared by every session:
    the exchanges and the fingerprint indexes. Sessions only add their consumption state.

    A cassette with variant sessions (``cassette.core.eras.variants``) is prepared as one
    ``Prepared`` per group: the main recording's, holding the variants' in ``variants``;
    a session adopts the group its handshake fits."""

    preamble: list[Item]
    exchanges: list[Exchange]
    requests: CandidateIndex
    notifications: CandidateIndex
    #: raw exchanges by their frame (``raw_key``), in recorded order
    raws: Mapping[str, tuple[int, ...]] = attrs.field(factory=dict)
    #: the recorded server's own account of itself: its ``initialize`` result (legacy) or
    #: its ``server/discover`` result (modern), when the recording holds one
    handshake: JSONObject | None = None
    #: requests the server refused for want of a session (HTTP, legacy era)
    refused: CandidateIndex | None = None
    #: the era this group serves (the header's, for the main recording)
    era: Era = "legacy"
    #: what this group's handshake shows about its client (set when there are variants)
    fit: Fit | None = None
    #: the variant sessions' groups, in file order (the main recording's only)
    variants: tuple[Prepared, ...] = ()
    #: what the recorded server answered a legacy ``initialize`` probe at record time
    #: (the ``legacy-probe`` variant of older recorders, else a ``legacy:*`` probe of
    #: ``cassette.runtime.probe``; a modern main recording's only), when one was kept
    probe: JSONObject | None = None
    #: what the recorder's probes captured: each listing under each capability set
    #: (``cassette.core.eras.listings``; the main recording's only)
    surface: Surface | None = None

    @classmethod
    def of(cls, recording: Recording, ignore: Sequence[str] = ()) -> Prepared:
        """``ignore``: the params fingerprints leave out (``Strategy.ignore``)."""
        main, groups, probes = split_all(recording.events)
        era = era_of(recording.header)
        if not groups and not probes:
            return cls._group(main, era, ignore)
        probed = groups.pop(PROBE_VARIANT, None)
        probe = None
        if probed is not None:
            probe = _recorded_result(cut(probed)[1], {"initialize"})
        surface = None
        if probes:
            from cassette.core.eras.listings import Surface  # only a cassette the recorder probed

            surface = Surface.of(probes)
        if probe is None and surface is not None and era == "modern":
            probe = surface.handshake
        variants = tuple(cls._group(events, None, ignore) for events in groups.values())
        main_group = cls._group(main, era, ignore)
        return attrs.evolve(main_group, variants=variants, probe=probe, surface=surface)

    @classmethod
    def _group(cls, events: Sequence[Any], era: Era | None, ignore: Sequence[str]) -> Prepared:
        """One group's work; ``era`` ``None`` (a variant): the era its handshake shows."""
        with paused_gc():
            preamble, exchanges = cut(events)
            era = group_era(events) if era is None else era
            legacy = era == "legacy"
            sessionless = [x for x in exchanges if legacy and _sessionless(x)]
            messages = [x for x in exchanges if x.raw is None and not (legacy and _sessionless(x))]
            requests = [_candidate(x) for x in messages if "id" in x.message]
            notes = [_candidate(x) for x in messages if "id" not in x.message]
            refused = [_candidate(x) for x in sessionless if "id" in x.message]
            request_index = CandidateIndex.build(requests, _handed_out(exchanges), ignore)
            note_index = CandidateIndex.build(notes, ignore=ignore)
            raws: dict[str, list[int]] = {}
            for x in exchanges:
                if x.raw is not None:
                    raws.setdefault(x.raw, []).append(x.key)
        frozen = {k: tuple(v) for k, v in raws.items()}
        handshake = _recorded_result(exchanges, {"initialize", "server/discover"})
        refused_index = CandidateIndex.build(refused) if refused else None
        fit = Fit.of(era, (x.message for x in exchanges))
        return cls(
            preamble,
            exchanges,
            request_index,
            note_index,
            frozen,
            handshake,
            refused_index,
            era,
            fit,
        )

    @property
    def groups(self) -> tuple[Prepared, ...]:
        """The main recording's group, then each variant's."""
        return (self, *self.variants)


def check_redaction(recording: Recording) -> None:
    """A header's ``redaction`` is read, never run; a malformed one is refused, as ``lint``
    reports it (``check_header``)."""
    info = recording.header.redaction
    problems = [] if info is None else check_header(info)
    if problems:
        source = getattr(recording, "source", None)
        raise CassetteFormatError(str(source) if source else "cassette", 1, problems[0])


def _candidate(exchange: Exchange) -> Candidate:
    return Candidate(exchange.key, exchange.message, exchange.seq, exchange.redacted)


def _sessionless(exchange: Exchange) -> bool:
    """A request the recorded server refused for want of a session (HTTP, legacy era):
    refused and sent without one. Refused in a session (or in the stateless 2026-07-28
    era), a request is an ordinary recording: the same request is refused the same way."""
    return exchange.rejected and not (exchange.meta or {}).get(SESSION)


def _recorded_result(exchanges: Sequence[Exchange], methods: set[str]) -> JSONObject | None:
    """The result of the first recorded request of ``methods`` that succeeded."""
    for exchange in exchanges:
        if exchange.message.get("method") not in methods:
            continue
        for item in exchange.items:
            result = item.message.get("result") if item.role == "response" else None
            if isinstance(result, dict):
                return result
    return None


def _handed_out(exchanges: Sequence[Exchange]) -> frozenset[str]:
    """Every pagination cursor the recorded server gave (a ``nextCursor``): a request that
    carries one of them asks for that page."""
    cursors: set[str] = set()
    for exchange in exchanges:
        for item in exchange.items:
            if item.role != "response" or not isinstance(item.message, dict):
                continue  # a raw exchange's answer may be a batch
            result = item.message.get("result")
            cursor = result.get("nextCursor") if isinstance(result, dict) else None
            if isinstance(cursor, str):
                cursors.add(cursor)
    return frozenset(cursors)
