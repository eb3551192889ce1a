"""One client on a frame stream: read its messages, write what its served session replies.

Theory of operation
-------------------
Frames are read one at a time and each is answered by the client's served session (a
``PolicyServedSession``, or the fault overlay over one), through the contract's ``receive``, or
without awaiting where the session offers it (``AnswersAtOnce``: never a concrete class).
Writing follows the recording's order and clock, not only the arrival order:

* a reply the policy paces (``--pace recorded``) is written by a task of its own, each
  group of messages when its recorded gap has passed, so one slow exchange never holds
  back the next request or another reply;
* other replies are gathered until the reading loop would next wait for the client, then
  written as one frame, their messages in the order the recording shows them. A client
  that sends several requests at once (they arrive together, before the loop waits) gets
  the answers interleaved as the live server interleaved them; a client that waits for
  each answer loses nothing: its reply goes out the moment the loop waits again. On a
  stream that can tell what is there and write without waiting (``Eager``: stdio), the
  reading loop writes them itself, as far as the pipe takes them at once; otherwise, and
  for what the pipe does not take, one writer task does, so the loop goes on reading a
  client that does not read its answers;
* what comes on its own (a live server's message, an error for an overdue request) is
  written at once. One lock keeps frames whole.

Each message is its own write, and a response that follows notifications waits (at most
``DRAIN_DEADLINE``) until the client has read them, where the stream can tell
(``Drainable``: stdio on Linux). A live server's notifications and response arrive apart;
a client that handles one read as one batch (the TypeScript SDK) handles a response before
notifications that came in the same read, and drops the progress it was waiting for. A
yield to the event loop between writes is not enough: measured on stdio, the TypeScript
client's progress callbacks fired in 0 of 10 replays with it, as with one write.

Framing is the transport's: it cuts what it reads into frames (stdio's lines, by
``cassette.transports.stdio._lines``) and carries each frame it is given as one message. This
module only writes each message as the contract's frame (its JSON and the newline every
frame of a line-framed wire ends with: docs/transports.md, "Frames") and, on an ``Eager``
stream, keeps the unwritten rest of a partial non-blocking write for the next write, as a
caller of ``os.write`` must.

The loop ends when the client finishes or stops reading, or when a reply ``closes`` the
session (the recorded server exited there): what is gathered is written first, paced
replies are let finish, then the stream is closed. A client that finished (its input
ended) is first written what the session says then (``end_of_input``: a request the
server asks as its input ends), since a live client still reads its server's output until
that server exits.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import anyio
import anyio.abc

from cassette.core.replay.reply import Reply
from cassette.core.wire.jsonrpc import Kind, classify_value, dumps_bytes, is_answer
from cassette.errors import TransportClosedError
from cassette.runtime.conversation import PolicySessionPool
from cassette.runtime.policy import AnswersAtOnce, ReplayResult, RuntimeServedSession
from cassette.transport import DRAIN_DEADLINE, Drainable, Eager, Frame, FrameStream, Pushing

__all__ = ["serve_frames"]


class _Writer:
    """Writes one client's replies (see the module docstring)."""

    def __init__(self, stream: FrameStream) -> None:
        self.stream = stream
        self.session: RuntimeServedSession
        self.gone = False  # the client stopped reading: nothing more is written
        # fast_acquire: an uncontended acquire does not yield to the event loop, which
        # would cost a loop iteration on every call (writers rarely contend).
        self._lock = anyio.Lock(fast_acquire=True)
        self._gathered: list[Reply] = []
        self._wake = anyio.Event()
        self._drainable = stream if isinstance(stream, Drainable) else None
        self._eager = stream if isinstance(stream, Eager) else None
        self._noted = False  # the last message written was a notification
        self.ended = False  # a reply ended the session (the recorded server exited there)
        # what write_now could not write at once, in order: the rest of a frame, then
        # messages; every write writes these first
        self._rest = b""
        self._backlog: list[object] = []

    async def now(self, reply: Reply) -> None:
        """Write ``reply``, paced as the policy says, before returning."""
        async for group in self.session.paced(reply):
            await self._send([message for message, _ in group])

    def submit(self, reply: Reply, tg: anyio.abc.TaskGroup) -> None:
        """Write ``reply`` soon: paced on its own clock, or with what else is gathered."""
        if not reply.messages or self.gone:
            return
        if self.session.paces(reply):
            tg.start_soon(self.now, reply)
            return
        self._gathered.append(reply)
        if self._eager is None:
            self._wake.set()

    def write_now(self) -> None:
        """The reading loop is about to wait: write what is gathered, as ``flush`` would,
        as far as the stream takes it at once (``Eager``); the writer task writes the
        rest, and a response that must wait until notifications are read."""
        if not self._gathered:
            return
        eager = self._eager
        if eager is None or self._rest or self._backlog or self._lock.locked():
            self._wake.set()
            return
        replies, self._gathered = self._gathered, []
        messages = _in_recorded_order(replies)
        for index, message in enumerate(messages):
            if self._noted and self._drainable is not None and is_answer(message):
                self._backlog = messages[index:]
                break
            self._noted = _is_notification(message)
            data = dumps_bytes(message) + b"\n"
            try:
                written = eager.send_ready(data)
            except TransportClosedError:
                self.gone = True
                return
            if written < len(data):
                self._rest, self._backlog = data[written:], messages[index + 1 :]
                break
        if self._rest or self._backlog:
            self._wake.set()

    async def run(self) -> None:
        """Write what is gathered each time the reading loop lets others run."""
        while True:
            await self._wake.wait()
            self._wake = anyio.Event()
            await self.flush()

    async def flush(self) -> None:
        """Write what is gathered, in recorded order, as one frame."""
        replies, self._gathered = self._gathered, []
        messages = _in_recorded_order(replies) if replies else []
        if messages or self._rest or self._backlog:
            await self._send(messages)

    async def drain(self) -> None:
        """Write what is gathered, and wait for a write under way: the session is ending."""
        await self.flush()
        async with self._lock:
            pass

    async def _send(self, messages: list[object]) -> None:
        if self.gone:
            return
        try:
            async with self._lock:
                if self._rest:
                    rest, self._rest = self._rest, b""
                    await self.stream.send(Frame(rest))
                if self._backlog:
                    messages, self._backlog = [*self._backlog, *messages], []
                for message in messages:
                    if self._noted and is_answer(message) and self._drainable is not None:
                        with anyio.move_on_after(DRAIN_DEADLINE):
                            await self._drainable.drained()
                    self._noted = _is_notification(message)
                    await self.stream.send(Frame(dumps_bytes(message) + b"\n"))
        except TransportClosedError:
            self.gone = True  # the client stopped reading: the session is over


def _is_notification(message: object) -> bool:
    """``classify_value(message) is Kind.NOTIFICATION``, for the one message in most
    replies that is an answer, without classifying it."""
    if isinstance(message, dict) and "id" in message:
        return False
    return classify_value(message) is Kind.NOTIFICATION


def _in_recorded_order(replies: list[Reply]) -> list[object]:
    """The messages of replies gathered together, ordered as the recording shows them (by
    recorded time; made-up messages, with no recorded time, first); ties keep arrival."""
    if len(replies) == 1 and len(replies[0].messages) == 1:
        return list(replies[0].messages)  # a call's one answer: nothing to order
    keyed: list[tuple[float, int, int, object]] = []
    for arrival, reply in enumerate(replies):
        timed = len(reply.times) == len(reply.messages)
        for position, message in enumerate(reply.messages):
            when = reply.times[position] if timed else float("-inf")
            keyed.append((when, arrival, position, message))
    keyed.sort(key=lambda entry: entry[:3])
    return [message for *_, message in keyed]


async def serve_frames(stream: FrameStream, pool: PolicySessionPool) -> ReplayResult:
    """Serve one client on a frame stream until it finishes; the stream is closed at the
    end (see the module docstring)."""
    writer = _Writer(stream)
    session = pool.open(writer.now)
    writer.session = session
    try:
        async with anyio.create_task_group() as watchers:
            watchers.start_soon(_watch_deadlines, session, writer.now)
            watchers.start_soon(writer.run)
            async with anyio.create_task_group() as writes:
                await _answer(stream, session, writer, writes)
            watchers.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await session.aclose()
            await stream.aclose()
    return session.result()


async def _answer(
    stream: FrameStream,
    session: RuntimeServedSession,
    writer: _Writer,
    writes: anyio.abc.TaskGroup,
) -> None:
    """The reading loop: each frame's reply submitted to the writer."""
    writer.submit(session.start(), writes)
    pushing = _pushing(stream, session, writer, writes)
    try:
        await _read_loop(stream, session, writer, writes)
    finally:
        if pushing is not None:
            pushing.push_frames(None, None)
    if not (writer.ended or writer.gone):  # the client's input ended
        writer.submit(session.end_of_input(), writes)
    await writer.drain()


def _pushing(
    stream: FrameStream, session: RuntimeServedSession, writer: _Writer, writes: anyio.abc.TaskGroup
) -> Pushing | None:
    """Answer from the reader's callback while the loop waits (``Pushing``), where no
    answer can need waiting: a plain session, with no live fallback and no pacing.
    A reply that ends the session (the recorded server exited, the client stopped
    reading) stops it, and the loop ends as at the end of the client's input."""
    if not isinstance(stream, Pushing) or not isinstance(session, AnswersAtOnce):
        return None
    if not session.always_at_once:
        return None
    receive_now = session.receive_data_now

    def handle(data: bytes, meta: Mapping[str, Any] | None) -> bool:
        reply = receive_now(data, meta)
        assert reply is not None  # no fallback: answered at once
        writer.submit(reply, writes)
        writer.ended = writer.ended or reply.closes or reply.drops
        return not (writer.ended or writer.gone)

    def idle() -> bool:
        writer.write_now()
        return not writer.gone

    stream.push_frames(handle, idle)
    return stream


async def _read_loop(
    stream: FrameStream,
    session: RuntimeServedSession,
    writer: _Writer,
    writes: anyio.abc.TaskGroup,
) -> None:
    """Each frame the loop reads (the ones a ``Pushing`` stream did not take) answered."""
    eager = stream if isinstance(stream, Eager) else None
    # the sync path of a session that has one (``AnswersAtOnce``); anything else is awaited
    receive_now = session.receive_now if isinstance(session, AnswersAtOnce) else None
    while not writer.gone:
        frame = eager.receive_ready() if eager is not None else None
        if frame is None:
            writer.write_now()  # the loop waits now: what is gathered goes out
            try:
                frame = await stream.receive()
            except anyio.EndOfStream:
                break
        reply = receive_now(frame) if receive_now is not None else None
        if reply is None:
            reply = await session.receive(frame)
        writer.submit(reply, writes)
        if reply.closes or reply.drops:
            writer.ended = True
            break  # the recorded server exited here (or a fault cut it): so does this session


async def _watch_deadlines(
    session: RuntimeServedSession, write: Callable[[Reply], Awaitable[None]]
) -> None:
    """Fail each request the client leaves unanswered past its deadline, and each request
    the recording never answered that the client did not cancel in time."""
    while True:
        changed = session.changed
        with anyio.move_on_after(session.remaining()):
            await changed.wait()
            continue
        for reply in session.overdue():
            await write(reply)
