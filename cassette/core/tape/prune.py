"""Which lines of a cassette go when recordings are pruned: a recorded request and
everything the recording attributes to it.

Theory of operation
-------------------
``cassette prune`` drops the recordings a run never played (the ``unplayed`` facts of a
``--report``), without recording anything again. A recording is an *exchange* of the
main session (``cassette.core.wire.exchanges``): the client's request, and what the server
said for it: its answer, its progress notifications, the requests the server sent the
client while answering and the client's answers to them, and over HTTP the status line
of the POST that carried it. All of those lines go together, so what is left still
pairs every request with its answer (lint stays clean), and a client's cancellation of a
pruned request goes with it. Nothing else is touched: every line that stays is kept byte
for byte, so its time, its redaction placeholders (numbered in the order they were
found) and everything a diff shows stay as they were.

Lines are what the caller gives and gets: an event's ``seq`` is its line index in the
file (the header is 0), so line ``n`` of a report is ``seq`` ``n - 1``. A report names
each request by its line and its ``request_digest`` too, so a line that holds another
request since the run is never taken for it. Pure: events in, line indices out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cassette.core.eras.variants import split
from cassette.core.wire.exchanges import Exchange, cut
from cassette.core.wire.ids import id_key
from cassette.core.wire.meta import SESSION
from cassette.core.wire.model import HttpEvent, MessageEvent
from cassette.core.wire.pairing import cancellations

__all__ = ["pruned_seqs", "request_digest", "requests_at"]


def request_digest(message: Mapping[str, Any]) -> str:
    """A short digest of a recorded request, exactly as recorded: a report says which
    request it means by its line and this, so a line that holds another request since
    (the cassette recorded again, edited, pruned already) is told apart."""
    import hashlib

    from cassette.core.replay.matching import canonical

    return hashlib.sha256(canonical(message).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def requests_at(events: Sequence[Any], seqs: Iterable[int]) -> dict[int, MessageEvent]:
    """The client requests of the main session at ``seqs`` (a seq that holds none is left
    out: the caller says why)."""
    wanted = set(seqs)
    return {
        event.seq: event
        for event in split(events)[0]
        if isinstance(event, MessageEvent)
        and event.seq in wanted
        and event.dir == "c2s"
        and "method" in event.message
        and "id" in event.message
    }


def pruned_seqs(events: Sequence[Any], requests: Iterable[int]) -> set[int]:
    """Every seq that goes with the recorded requests at ``requests`` (seqs of client
    requests of the main session): see the module docstring."""
    wanted = set(requests)
    main = split(events)[0]
    _preamble, exchanges = cut(main)
    chosen = [x for x in exchanges if x.seq in wanted and x.raw is None]
    if not chosen:
        return set()
    seq_of = {id(e.message): e.seq for e in main if isinstance(e, MessageEvent)}
    out: set[int] = set()
    for exchange in chosen:
        out.add(exchange.seq)
        out.update(
            seq_of[id(item.message)] for item in exchange.items if id(item.message) in seq_of
        )
    out.update(_http_statuses(main, chosen))
    out.update(_cancellations(main, chosen))
    return out


def _http_statuses(events: Sequence[Any], chosen: list[Exchange]) -> set[int]:
    """The status lines of the POSTs that carried the chosen requests."""
    streams = {x.stream for x in chosen if x.stream is not None}
    return {
        e.seq
        for e in events
        if isinstance(e, HttpEvent) and e.method == "POST" and e.stream in streams
    }


def _cancellations(events: Sequence[Any], chosen: list[Exchange]) -> set[int]:
    """The client's ``notifications/cancelled`` of a chosen request (its id, in its
    session): nothing is left for them to cancel."""
    ids = {(_session(x.meta), id_key(x.message.get("id"))) for x in chosen}
    return {
        event.seq
        for event, request in cancellations(events)
        if (_session(event.meta), id_key(request)) in ids
    }


def _session(meta: Mapping[str, Any] | None) -> object:
    return meta.get(SESSION) if meta else None
