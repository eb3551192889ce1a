"""Server starts: one cassette holding every time a client started the stdio server.

Some clients start the server once per tool call (langchain-mcp-adapters' default): a
run of such a client is several sessions in a row, each with its own process and its
own ``initialize``. A plain ``cassette record`` keeps them in one cassette: the first
start as any recording, each later one appended after it, its message and raw events
carrying ``meta.start = N`` (2, 3, ...; an event without it is start 1). Stderr, exit
and HTTP status events carry no ``meta``: they belong to the start of the message
before them, as they were written in order.

This module is the sans-IO half: it tells an event's start, splits a recording into
its starts (each a recording of its own, sharing the header), and counts them. A
replay serves start N from its own slice, so a later start's ``initialize`` and tool
calls are answered as that start's server answered them (``cassette.core.replay.sessions``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import attrs

from cassette.core.wire.meta import START
from cassette.core.wire.model import Event, Header, Recording

__all__ = ["StartRecording", "count_starts", "split_starts", "start_of"]


def start_of(event: Any) -> int | None:
    """The start a message or raw event names (``None``: none named, so start 1 or, for
    an event without ``meta``, the start of the event before it)."""
    meta = getattr(event, "meta", None)
    number = meta.get(START) if isinstance(meta, Mapping) else None
    return number if isinstance(number, int) and not isinstance(number, bool) else None


@attrs.frozen
class StartRecording:
    """One start's slice of a cassette: the cassette's header and that start's events,
    which keep their file positions (``seq``), so a miss still names the cassette's line."""

    header: Header
    events: Sequence[Event]
    source: str | None = None
    number: int = 1
    of: int = 1


def _numbered(events: Sequence[Event]) -> list[tuple[int, Event]]:
    """Each event with its start: a message or raw event's own (1 when it names none),
    anything else the start of the message or raw event before it."""
    current = 1
    out: list[tuple[int, Event]] = []
    for event in events:
        if event.kind in _CARRIERS:
            current = start_of(event) or 1
        out.append((current, event))
    return out


#: the events that carry ``meta`` and so say which start they belong to
_CARRIERS: Final = frozenset({"message", "raw"})


def split_starts(recording: Recording) -> list[StartRecording]:
    """The recording's starts in order, each as a recording of its own; a cassette of
    one start comes back as one slice holding all its events."""
    events = recording.events
    source = getattr(recording, "source", None)
    if not any(start_of(e) for e in events):
        return [StartRecording(recording.header, events, source)]
    groups: dict[int, list[Event]] = {}
    for number, event in _numbered(events):
        groups.setdefault(number, []).append(event)
    total = len(groups)
    return [
        StartRecording(recording.header, groups[n], source, index + 1, total)
        for index, n in enumerate(sorted(groups))
    ]


def count_starts(events: Sequence[Any]) -> int:
    """How many server starts the events hold (1 for any cassette without ``meta.start``)."""
    numbers = {start_of(e) or 1 for e in events if getattr(e, "kind", None) in _CARRIERS}
    return len(numbers) or 1
