"""A stdio replay answers from the reader's callback while its loop waits (``Pushing``).

Through real pipes: the lines written once the loop waits are handed to the callback;
False from it ends the wait as the end of input does; an exception in it is raised by the
waiting ``receive``, never lost in the event loop; and a recording whose server exited
ends the session there. Each test writes only once the reader waits (a condition,
checked at each turn of the event loop)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import anyio
import anyio.lowlevel
import attrs
import pytest

from cassette.core.wire.model import ExitEvent
from cassette.runtime import replay_sessions
from cassette.runtime.frames import serve_frames
from cassette.transport import Pushing
from cassette.transports.stdio.transport import StdioClientStream
from tests.unit.test_replayer import req, res, tape

pytestmark = pytest.mark.skipif(os.name == "nt", reason="pipes are polled on POSIX")


@contextlib.contextmanager
def _pipes(line_limit: int | None = None) -> Iterator[tuple[StdioClientStream, int, int]]:
    to_us, client_writes = os.pipe()
    client_reads, from_us = os.pipe()
    stream = StdioClientStream(to_us, from_us, line_limit=line_limit)
    try:
        yield stream, client_writes, client_reads
    finally:
        for fd in (to_us, client_writes, client_reads, from_us):
            with contextlib.suppress(OSError):
                os.close(fd)


@pytest.fixture
def pipes() -> Iterator[tuple[StdioClientStream, int, int]]:
    """Our stream on two pipes, and the client's ends: where it writes, where it reads."""
    with _pipes() as ends:
        yield ends


def _push_then_write(
    stream: StdioClientStream,
    client_writes: int,
    handle: Callable[[bytes, Mapping[str, Any] | None], bool],
    data: bytes,
    *,
    raised: type[BaseException],
    match: str | None = None,
) -> None:
    """Push to ``handle``, write ``data`` once the reader waits, and expect the waiting
    ``receive`` to raise ``raised``."""

    async def main() -> None:
        stream.push_frames(handle, lambda: True)
        async with anyio.create_task_group() as tg:

            async def write() -> None:
                await waiting(stream)
                os.write(client_writes, data)

            tg.start_soon(write)
            with anyio.fail_after(5), pytest.raises(raised, match=match):
                await stream.receive()

    anyio.run(main)


async def waiting(stream: StdioClientStream) -> None:
    """Until the stream's reader waits for input (its loop would now wait)."""
    with anyio.fail_after(5):
        while stream._reader._waiter is None:
            await anyio.lowlevel.checkpoint()


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def test_frames_read_while_receive_waits_go_to_the_callback(
    pipes: tuple[StdioClientStream, int, int],
) -> None:
    stream, client_writes, _ = pipes
    assert isinstance(stream, Pushing)
    seen: list[bytes] = []
    idles: list[int] = []

    def handle(data: bytes, meta: Mapping[str, Any] | None) -> bool:
        assert meta is None
        seen.append(data)
        return len(seen) < 3

    def idle() -> bool:
        idles.append(len(seen))
        return True

    async def main() -> None:
        stream.push_frames(handle, idle)
        async with anyio.create_task_group() as tg:

            async def write() -> None:
                await waiting(stream)
                os.write(client_writes, b"one\ntwo\n")
                with anyio.fail_after(5):
                    while not idles:
                        await anyio.lowlevel.checkpoint()
                os.write(client_writes, b"three\nfour\n")

            tg.start_soon(write)
            with anyio.fail_after(5), pytest.raises(anyio.EndOfStream):
                await stream.receive()  # the third frame said stop

    anyio.run(main)
    assert seen == [b"one\n", b"two\n", b"three\n"]
    assert idles == [2]  # called once the first two were handled and nothing was left


def test_an_error_in_the_callback_is_raised_by_the_waiting_receive(
    pipes: tuple[StdioClientStream, int, int],
) -> None:
    stream, client_writes, _ = pipes

    def handle(data: bytes, meta: Mapping[str, Any] | None) -> bool:
        raise ValueError(f"cannot take {data!r}")

    _push_then_write(
        stream, client_writes, handle, b"bad\n", raised=ValueError, match="cannot take"
    )


def test_an_oversized_line_is_pushed_as_its_size_without_its_bytes() -> None:
    seen: list[tuple[bytes, Mapping[str, Any] | None]] = []

    def handle(data: bytes, meta: Mapping[str, Any] | None) -> bool:
        seen.append((data, meta))
        return len(seen) < 2

    with _pipes(line_limit=8) as (stream, client_writes, _):
        line = b"far too long a line\n"
        _push_then_write(stream, client_writes, handle, line + b"ok\n", raised=anyio.EndOfStream)
    assert seen == [(b"", {"oversized": len(line)}), (b"ok\n", None)]


def test_a_session_answered_from_the_callback_ends_where_the_recorded_server_exited(
    pipes: tuple[StdioClientStream, int, int],
) -> None:
    stream, client_writes, client_reads = pipes
    recorded = tape(("c2s", req(1, "a")), ("s2c", res(1, {"n": 1})), ("c2s", req(2, "b")))
    recording = attrs.evolve(recorded, events=(*recorded.events, ExitEvent(t=9.0, code=1)))

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def write() -> None:
                await waiting(stream)
                os.write(client_writes, line(req(1, "a")) + line(req(2, "b")) + line(req(3, "c")))

            tg.start_soon(write)
            with anyio.fail_after(10):
                await serve_frames(stream, replay_sessions(recording))

    anyio.run(main)
    answers = [json.loads(x) for x in os.read(client_reads, 65536).splitlines()]
    assert answers[0] == res(1, {"n": 1})
    assert answers[1]["id"] == 2
    assert "error" in answers[1]  # never answered: the recorded server exited there
    assert len(answers) == 2  # and nothing after it: the session ended


def test_a_session_answers_alike_awaited_at_once_and_from_its_two_fields() -> None:
    """``receive``, ``receive_now`` and ``receive_data_now`` are three doors to one answer
    (``AnswersAtOnce``): fed the same frames, sessions of the same cassette reply alike,
    an oversized frame included."""
    from cassette.core.replay.replayer import Replayer
    from cassette.runtime.conversation import DeliveryPolicy, PolicyServedSession
    from cassette.runtime.policy import AnswersAtOnce
    from cassette.transport import Frame

    recording = tape(
        ("c2s", req(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})),
        ("s2c", res(0, {"protocolVersion": "2025-06-18", "capabilities": {}})),
        ("c2s", req(1, "tools/list")),
        ("s2c", res(1, {"tools": []})),
    )
    frames = [
        Frame(json.dumps(req(0, "initialize", {"protocolVersion": "2025-06-18"})).encode()),
        Frame(json.dumps(req(1, "tools/list")).encode()),
        Frame(json.dumps(req(2, "tools/call", {"name": "absent"})).encode()),
        Frame(b"", {"oversized": 10_000_000}),
    ]

    def session() -> PolicyServedSession:
        return PolicyServedSession(Replayer(recording), DeliveryPolicy(max_message_bytes=1024))

    async def awaited() -> list[Any]:
        one = session()
        return [(await one.receive(frame)).messages for frame in frames]

    now, data = session(), session()
    assert isinstance(now, AnswersAtOnce)
    assert now.always_at_once
    at_once = [now.receive_now(frame) for frame in frames]
    fields = [data.receive_data_now(frame.data, frame.meta) for frame in frames]
    expected = anyio.run(awaited)
    assert [reply.messages for reply in at_once if reply is not None] == expected
    assert [reply.messages for reply in fields if reply is not None] == expected
    assert len(expected) == len(frames)
    assert expected[-1][0]["error"]["code"] != 0  # the oversized one is refused
