"""``show --against`` and ``show --faults``: what a replay of TAPE would do for another
session's client messages, and which recorded requests a fault plan would fault.

``misses_against`` feeds OTHER's client messages, in order, to a ``Replayer`` of TAPE
under a strategy, exactly as a replay would see them: one replayer per HTTP session, and
for a cassette of several server starts, the start of the same number. The misses are
the replay's own reports; a recording of TAPE no replayer consumed is unplayed.
``faults_preview`` is the fault plan's dry run over the recorded requests. Both only
read; ``cassette.tools.show`` draws what they find.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from cassette.core.eras.variants import probe_of
from cassette.core.replay.faults import FaultPlan, preview
from cassette.core.replay.matching import FingerprintMatcher, get_strategy
from cassette.core.replay.prepared import Prepared
from cassette.core.replay.replayer import Replayer
from cassette.core.replay.start_responder import start_note
from cassette.core.replay.starts import split_starts, start_of
from cassette.core.wire.meta import SESSION
from cassette.core.wire.model import MessageEvent
from cassette.store.storage import Cassette
from cassette.tools.diff import label as request_label

__all__ = ["Against", "FaultHit", "Miss", "faults_preview", "misses_against", "session_of"]


@attrs.frozen(slots=True)
class Miss:
    """A client message of the other session that TAPE would not answer."""

    line: int  # in the other cassette
    request: str
    kind: str  # MissReport.kind: not-recorded, already-played, answer-differs, no-answer
    summary: str  # the replay's own one-line diagnosis
    closest_line: int | None  # in TAPE

    def as_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class Against:
    """What replaying another session's client messages against TAPE would do."""

    source: str
    strategy: str
    misses: tuple[Miss, ...]
    unplayed: frozenset[int]  # lines of TAPE's requests nothing used
    requests: int  # requests recorded in TAPE

    def as_data(self) -> dict[str, Any]:
        return {
            "cassette": self.source,
            "strategy": self.strategy,
            "misses": [m.as_data() for m in self.misses],
            "unplayed": sorted(self.unplayed),
        }

    def text(self, tape: str) -> str:
        lines = [
            f"against {self.source} (strategy {self.strategy}): {len(self.misses)} miss(es), "
            f"{len(self.unplayed)} of {self.requests} recorded request(s) of {tape} unplayed"
        ]
        lines += [f"  {self.source}:{m.line}: {m.summary}" for m in self.misses]
        return "\n".join(lines)


def session_of(event: MessageEvent) -> Any:
    """Over HTTP each session replays on its own, as the fronts do; stdio is one session
    per server start (``cassette.core.replay.starts``)."""
    session = event.meta.get(SESSION) if isinstance(event.meta, Mapping) else None
    return (session, start_of(event) or 1)


def _replayer_for(cassette: Cassette, key: Any, chosen: str, prepared: Prepared) -> Replayer:
    """The replay a session of the other cassette meets: of ``tape``'s start of the same
    number when ``tape`` holds several (the last, past its end), else of all of it."""
    starts = split_starts(cassette)
    if len(starts) == 1:
        return Replayer(cassette, chosen, prepared=prepared)
    chosen_start = starts[min(key[1], len(starts)) - 1]
    note = start_note(chosen_start.number, chosen_start.of)
    return Replayer(chosen_start, chosen, start_note=note)


def misses_against(
    tape: Cassette | str | os.PathLike[str],
    other: Cassette | str | os.PathLike[str],
    strategy: str = "default",
) -> Against:
    """Feed ``other``'s client messages to a replay of ``tape`` under ``strategy``; collect
    the misses and the recordings of ``tape`` that nothing played."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    session = other if isinstance(other, Cassette) else Cassette.load(other)
    chosen = get_strategy(strategy).name
    prepared = Prepared.of(cassette)
    replayers: dict[Any, Replayer] = {}
    misses: list[Miss] = []
    for event in session.events:
        if not isinstance(event, MessageEvent) or event.dir != "c2s" or probe_of(event):
            continue  # the recorder's probes are no client's
        key = session_of(event)
        if key not in replayers:
            replayers[key] = _replayer_for(cassette, key, chosen, prepared)
        replayer = replayers[key]
        seen = len(replayer.misses)
        replayer.receive(event.message)
        for report in replayer.misses[seen:]:
            message = event.message
            what = request_label(message) if "method" in message else f"answer to {report.method}"
            line = event.seq + 1
            misses.append(
                Miss(line, what, report.kind, replayer.describe(report), report.closest_line)
            )
    every = {c.seq + 1 for c in prepared.requests.candidates}
    unplayed = set(every)
    for replayer in replayers.values():
        if isinstance(replayer.main_matcher, FingerprintMatcher):
            unplayed &= {c.seq + 1 for c in replayer.main_matcher.unconsumed()}
    source = session.source or "other"
    return Against(source, chosen, tuple(misses), frozenset(unplayed), len(every))


@attrs.frozen
class FaultHit:
    """A recorded request a fault plan would fault, for a client making the recorded calls."""

    line: int
    what: str
    rule: int  # 1-based, as a person counts the plan's [[fault]] entries
    fault: str

    def as_data(self) -> dict[str, Any]:
        return {"line": self.line, "request": self.what, "rule": self.rule, "fault": self.fault}


def faults_preview(tape: Cassette | str | os.PathLike[str], plan: FaultPlan) -> list[FaultHit]:
    """A dry run of ``plan`` over ``tape``: each recorded client request (in each session,
    in recorded order) the plan would fault, and how. The cassette is only read."""
    cassette = tape if isinstance(tape, Cassette) else Cassette.load(tape)
    sessions: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    for event in cassette.events:
        if not isinstance(event, MessageEvent) or event.dir != "c2s" or probe_of(event):
            continue  # the recorder's probes are no client's
        if "method" in event.message and "id" in event.message:
            sessions.setdefault(session_of(event), []).append((event.seq + 1, event.message))
    labels = {line: request_label(m) for requests in sessions.values() for line, m in requests}
    hits = [
        FaultHit(line, labels[line], index + 1, plan.rules[index].describe())
        for requests in sessions.values()
        for line, index in preview(plan, requests)
    ]
    return sorted(hits, key=lambda hit: hit.line)
