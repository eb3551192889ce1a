"""Appending live exchanges to a cassette: one write each, under the cassette's lock.

``new_episodes`` (``cassette.modes.extend``) hands over each settled exchange; this module
writes it as the cassette's transport records one. Over streamable HTTP that means
numbered streams and sessions: each POST becomes the file's next ``post-N`` and a live leg
the next session ordinal, *read off the file under the lock at the moment of the write*,
since another process may have appended since this one loaded the cassette. So two
extenders of one cassette never share a stream name or a session ordinal, and the file
reads as a recording with more client sessions in it. The file is read through the codec
(``cassette.store.storage.highest_numbers``), as events, never scanned as bytes: a
message that quotes a stream name cannot move the numbering.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import anyio
import attrs

from cassette.core.wire.meta import SESSION, STREAM
from cassette.core.wire.model import Event, HttpEvent, MessageEvent, RawEvent, era_of
from cassette.store.lock import FileLock
from cassette.store.storage import Cassette, append_events, highest_numbers

__all__ = ["Appender", "Leg", "renumbered"]


class Leg(Protocol):
    """Whoever appends: a live leg keeps the session ordinal its first append fixed."""

    ordinal: int | None


class Appender:
    """Appends live exchanges to the cassette file, each under its lock, shaped as the
    cassette's transport records them."""

    def __init__(
        self, cassette: Cassette, path: str | os.PathLike[str], on_info: Callable[[str], None]
    ) -> None:
        self.path = Path(path)
        self.http = cassette.header.transport == "streamable-http"
        self.modern = era_of(cassette.header) == "modern"
        self.on_info = on_info
        self._lock = FileLock(self.path)
        self._one_at_a_time = anyio.Lock()  # one FileLock, taken by one task at a time

    async def append(self, events: list[Event], leg: Leg) -> None:
        async with self._one_at_a_time:
            await self._lock.wait(on_wait=self._waiting)
            try:
                if self.http:
                    events = self._numbered(events, leg)
                append_events(self.path, events)
            finally:
                self._lock.release()

    def _waiting(self) -> None:
        self.on_info(f"waiting for {self.path}: another process holds it")

    def _numbered(self, events: list[Event], leg: Leg) -> list[Event]:
        """Local stream names become the file's next ``post-N``, read under the lock (another
        process may have appended since); a legacy leg keeps one session ordinal."""
        stream, session = highest_numbers(self.path)
        if leg.ordinal is None and not self.modern:
            leg.ordinal = session + 1
        return renumbered(events, stream + 1, leg.ordinal)


def renumbered(events: list[Event], first: int, session: int | None) -> list[Event]:
    """Local stream names become ``post-<first>``, ``post-<first+1>``, ... in order of
    appearance; ``session``, when given, is added to every event."""
    names: dict[str, str] = {}

    def name(local: str) -> str:
        return names.setdefault(local, f"post-{first + len(names)}")

    out: list[Event] = []
    for event in events:
        if isinstance(event, HttpEvent):
            out.append(attrs.evolve(event, stream=name(event.stream), session=session))
        elif isinstance(event, MessageEvent | RawEvent) and event.meta is not None:
            meta = dict(event.meta)
            head: dict[str, Any] = {STREAM: name(str(meta.pop(STREAM)))}
            if session is not None:
                head[SESSION] = session
            out.append(attrs.evolve(event, meta={**head, **meta}))
        else:
            out.append(event)
    return out
