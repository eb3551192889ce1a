"""A later server start, recorded beside its cassette, appended to it as its next start.

The session was written as a cassette of its own (a hidden sibling, with its own
header), so every rule of a recording held while it ran. Appending keeps its events
and drops its header: the cassette's header says what was recorded, and the events of
the start carry ``meta.start`` (``cassette.core.replay.starts``). Times go on from the
cassette's last line, so ``--pace recorded`` waits between starts as little as it
waits within one, and a line's time never goes back.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import attrs

from cassette.core.replay.starts import start_of
from cassette.core.wire.meta import START
from cassette.core.wire.model import Event, MessageEvent, RawEvent
from cassette.store.storage import Cassette, append_events, has_recording

__all__ = ["append_start", "tagged"]


def tagged(events: tuple[Event, ...] | list[Event], number: int, after: float) -> list[Event]:
    """``events`` as start ``number`` of a cassette whose last line is at ``after``: each
    message and raw event names the start, and every time is moved on by ``after``."""
    out: list[Event] = []
    for event in events:
        moved: Any = attrs.evolve(event, t=round(event.t + after, 6))
        if isinstance(moved, MessageEvent | RawEvent):
            moved = attrs.evolve(moved, meta={START: number, **(moved.meta or {})})
        out.append(moved)
    return out


def append_start(writing: str | os.PathLike[str], path: str | os.PathLike[str]) -> int:
    """Append the session recorded in ``writing`` to the cassette ``path`` as its next
    start, then remove ``writing``; the number it became. When ``path`` holds no recording
    (the run's first start failed), the session becomes the cassette, start 1. The caller
    holds ``path``'s lock."""
    if not has_recording(path):
        os.replace(writing, path)
        return 1
    session = Cassette.load(writing)
    main = Cassette.load(path)
    number = max((start_of(e) or 1 for e in main.events if e.kind in _CARRIERS), default=1) + 1
    after = main.events[-1].t if main.events else 0.0
    append_events(path, tagged(session.events, number, after))
    with contextlib.suppress(FileNotFoundError):
        Path(writing).unlink()
    return number


#: the events that name their start
_CARRIERS = frozenset({"message", "raw"})
