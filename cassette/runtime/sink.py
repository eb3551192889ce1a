"""Where a recording goes: the sans-IO ``Recorder`` joined to the append-only writer.

Observing and appending are one step, so every record the recorder makes is in the file
before the caller forwards the frame it came from: whatever the other side has seen is
on disk when a kill arrives (once the era is known; see ``Recorder`` for why the first
exchange waits in memory).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from cassette.core.model import ExitEvent
from cassette.core.recorder import Record, Recorder
from cassette.core.redaction import Redactor
from cassette.store.storage import CassetteWriter
from cassette.transport import Exited, SideEvent, StderrLine

__all__ = ["Clock", "Sink", "SinkTap", "open_sink", "stderr_passthrough"]


def now_iso() -> str:
    """The wall-clock time a recording started, as the header keeps it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Clock:
    """Seconds since the session started, rounded to the microsecond."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def __call__(self) -> float:
        return round(time.monotonic() - self._t0, 6)


class Sink:
    """Recorder plus writer: observe, then append, in one step."""

    def __init__(self, recorder: Recorder, writer: CassetteWriter, clock: Clock) -> None:
        self.recorder = recorder
        self.writer = writer
        self.clock = clock
        self.count = 0
        self.exit_recorded = False

    def put(self, records: list[Record]) -> None:
        """Append what the recorder made (nothing: no write)."""
        if records:
            self.count += len(records)
            self.exit_recorded = self.exit_recorded or isinstance(records[-1], ExitEvent)
            self.writer.write(records)

    def frame(
        self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any] | None = None
    ) -> None:
        """One message passed the proxy."""
        self.put(self.recorder.observe(direction, data, self.clock(), dict(meta or {}) or None))

    def side_event(self, event: SideEvent, passthrough: Callable[[bytes], None] | None) -> None:
        """The server said something outside the protocol: a stderr line, its exit."""
        if isinstance(event, StderrLine):
            if passthrough is not None:
                passthrough(event.data)
            text = event.data.decode("utf-8", "replace").rstrip("\n")
            self.put(self.recorder.stderr(text, self.clock()))
        elif isinstance(event, Exited):
            self.exit(event.code)

    def exit(self, code: int | None) -> None:
        """The server is gone, with ``code``."""
        self.put(self.recorder.exit(code, self.clock()))

    def finish(self) -> None:
        """The session is over: flush what the recorder still holds, close the file."""
        self.put(self.recorder.close())
        self.writer.close()


class SinkTap:
    """A recording proxy's ``Tap``: what it reports becomes records in the cassette."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink

    def frame(self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any]) -> None:
        self.sink.put(self.sink.recorder.observe(direction, data, self.sink.clock(), dict(meta)))

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        self.sink.put(self.sink.recorder.http(method, stream, status, self.sink.clock(), session))

    def secret(self, value: str) -> None:
        """A credential from a client's HTTP header: redacted wherever it is echoed."""
        self.sink.recorder.secret(value)


def open_sink(
    path: str | os.PathLike[str],
    transport: str,
    target: Mapping[str, Any],
    *,
    strategy: str | None,
    redactor: Redactor | None,
    overwrite: bool,
    fsync: bool,
) -> Sink:
    """A fresh recording's recorder and writer: the header names what was recorded
    (``target``, already redacted) and the strategy a replay should use by default."""
    header_target = dict(target)
    if strategy is not None:
        header_target["strategy"] = strategy
    recorder = Recorder(
        transport=transport, started_at=now_iso(), target=header_target, redactor=redactor
    )
    writer = CassetteWriter(path, overwrite=overwrite, fsync=fsync).open()
    return Sink(recorder, writer, Clock())


def stderr_passthrough(data: bytes) -> None:
    """Show a server's stderr line to the person, as it would be without us."""
    with contextlib.suppress(OSError):  # our stderr is gone; the line is still recorded
        os.write(2, data)
