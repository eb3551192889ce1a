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
from collections import deque
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Final, Literal

import attrs

from cassette.core.recording.local_paths import LocalPaths
from cassette.core.recording.recorder import BeforeRecord, Record, Recorder
from cassette.core.redaction.redactor import Redactor
from cassette.core.wire.limits import line_limit
from cassette.store.storage import CassetteWriter
from cassette.transport import Exited, SideEvent, StderrLine

__all__ = [
    "STDERR_TAIL",
    "Clock",
    "Sink",
    "SinkOptions",
    "SinkTap",
    "open_sink",
    "stderr_passthrough",
]

#: Lines of the server's stderr kept to explain a session that never succeeded.
STDERR_TAIL: Final = 40  # enough to hold the error line above a Node or Python stack


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
    """Recorder plus writer: observe, then append, in one step.

    It also keeps what a person needs when the session went wrong: whether any request
    succeeded, the server's exit code and the last lines of its stderr."""

    def __init__(
        self,
        recorder: Recorder,
        writer: CassetteWriter,
        clock: Clock,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.recorder = recorder
        self.writer = writer
        self.clock = clock
        self.count = 0
        self.exit_recorded = False
        self.exit_code: int | None = None
        self.stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL)
        self._on_warning = on_warning
        self._told_long = False
        #: the start of its cassette this session is appended as (``None``: its own)
        self.start: int | None = None
        #: called once, as soon as the cassette's header is written (its era is known)
        self.on_header: Callable[[], None] | None = None

    @property
    def succeeded(self) -> bool:
        """Whether some request got a successful answer (else this is no cassette)."""
        return self.recorder.succeeded

    def put(self, records: list[Record]) -> None:
        """Append what the recorder made (nothing: no write)."""
        if records:
            self.count += len(records)
            longest = self.writer.write(records)
            if longest > line_limit() and not self._told_long:
                self._tell_long(longest)
            if self.on_header is not None and self.recorder.header is not None:
                told, self.on_header = self.on_header, None
                told()

    def _tell_long(self, size: int) -> None:
        self._told_long = True
        if self._on_warning is not None:
            self._on_warning(
                f"{self.writer.path}: a line of {size} bytes is over the {line_limit()}-byte "
                "limit readers apply; replay and lint will refuse it unless max-message-bytes "
                "is raised (--max-message-bytes, or [tool.cassette])"
            )

    def frame(
        self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any] | None = None
    ) -> None:
        """One message passed the proxy."""
        self.put(self.recorder.observe(direction, data, self.clock(), dict(meta) if meta else None))

    def side_event(self, event: SideEvent, passthrough: Callable[[bytes], None] | None) -> None:
        """The server said something outside the protocol: a stderr line, its exit."""
        if isinstance(event, StderrLine):
            if passthrough is not None:
                passthrough(event.data)
            text = event.data.decode("utf-8", "replace").rstrip("\n")
            records = self.recorder.stderr(text, self.clock())
            self.stderr_tail.append(self.recorder.redacted(text))
            self.put(records)
        elif isinstance(event, Exited):
            self.exit(event.code)

    def exit(self, code: int | None) -> None:
        """The server is gone, with ``code``. Recorded once, however many ways it is told
        (the records of a session with no success yet are still held in memory then)."""
        if self.exit_recorded:
            return
        self.exit_recorded = True
        self.exit_code = code
        self.put(self.recorder.exit(code, self.clock()))

    def finish(self) -> None:
        """The session is over: flush what the recorder still holds, close the file. After
        a failed write nothing more is written (the file keeps its prefix)."""
        try:
            if not self.writer.closed:
                self.put(self.recorder.close())
        finally:
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


@attrs.frozen(kw_only=True)
class SinkOptions:
    """How a fresh recording is written: the ``strategy`` its header stores for replays,
    its ``redactor`` and ``before_record`` hook (``cassette.core.recording.recorder``), whether it
    keeps the server's stderr and which folders it writes portably there, whether it may
    ``overwrite`` a file, ``fsync`` after each record, and who hears a warning."""

    strategy: str | None = None
    redactor: Redactor | None = None
    overwrite: bool = False
    fsync: bool = False
    on_warning: Callable[[str], None] | None = None
    before_record: BeforeRecord | None = None
    #: whether the server's stderr lines are kept (``Recorder.keep_stderr``)
    keep_stderr: bool = True
    #: the folders stderr and raw lines are written without (``Recorder.local``)
    local: LocalPaths | None = None


def open_sink(
    path: str | os.PathLike[str],
    transport: str,
    target: Mapping[str, Any],
    options: SinkOptions = SinkOptions(),
) -> Sink:
    """A fresh recording's recorder and writer: the header names what was recorded
    (``target``, already redacted) and the strategy a replay should use by default."""
    header_target = dict(target)
    if options.strategy is not None:
        header_target["strategy"] = options.strategy
    recorder = Recorder(
        transport=transport,
        started_at=now_iso(),
        target=header_target,
        redactor=options.redactor,
        before_record=options.before_record,
        keep_stderr=options.keep_stderr,
        local=options.local,
    )
    writer = CassetteWriter(path, overwrite=options.overwrite, fsync=options.fsync).open()
    return Sink(recorder, writer, Clock(), options.on_warning)


def stderr_passthrough(data: bytes) -> None:
    """Show a server's stderr line to the person, as it would be without us."""
    with contextlib.suppress(OSError):  # our stderr is gone; the line is still recorded
        os.write(2, data)
