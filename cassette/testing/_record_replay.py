"""The record/replay property: a session recorded through the plugin replays the same.

A short scripted session (``_script``) is played live while ``_Tape`` records it, as the
recording proxy would, then replayed (in process, or through the plugin's own front by
the runtime's one serve path) and the answers compared. Kept apart from the stream
properties because it alone needs the recorder, the runtime and cassette storage.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import anyio
import attrs

from cassette.core.recording.recorder import Record, Recorder
from cassette.errors import CassetteError
from cassette.runtime.replay_pool import ReplayOptions
from cassette.runtime.serve import serve_replay
from cassette.store.storage import Cassette, CassetteWriter
from cassette.testing._report import _Failure
from cassette.testing._sides import ClientFactory, _Conn, _peer_handler, _ServeSide, _serving
from cassette.testing._util import _Ready, _short
from cassette.transport import (
    CassetteFront,
    ConnectOptions,
    Frame,
    FrameServer,
    FrameStream,
    RecordingFront,
    RecordOptions,
    ServeOptions,
    SideEvent,
    StderrLine,
    Target,
    UpstreamConnector,
)
from cassette.transports.memory import MemoryTransport


async def _record_replay_connect(plugin: UpstreamConnector, name: str, target: Target) -> str:
    with tempfile.TemporaryDirectory(prefix="cassette-check-") as folder:
        path = Path(folder) / "check.jsonl"
        tape = _Tape(name, path, {"url": target.url} if target.url else {})
        async with plugin.connect(target, ConnectOptions(on_side_event=tape.side)) as upstream:
            conn = _Conn(_RecordingStream(upstream, tape), upstream)
            live = await _script(conn)
            await conn.finish()
            code = await upstream.wait()
            tape.put(tape.recorder.exit(code, tape.clock()))
        cassette = tape.close()
        replayed = await _replay_in_memory(cassette, live.peer)
        _same(live.answers, replayed, "an in-process replay of what was recorded")
        fronts = isinstance(plugin, RecordingFront) and isinstance(plugin, CassetteFront)
        if fronts and target.url:
            await _record_replay_fronts(plugin, name, target, Path(folder))
            return "recorded and replayed in process, and through the plugin's own fronts"
    return ""


async def _record_replay_fronts(plugin: Any, name: str, target: Target, folder: Path) -> None:
    """Record through the plugin's proxy, replay through its front (by the runtime's one
    serve path), both reached with its own ``connect``."""
    tape = _Tape(name, folder / "fronts.jsonl", {"url": target.url})

    def proxy(on_ready: Callable[[str], None]) -> Any:
        return plugin.record_proxy(target.url, tape, RecordOptions(on_ready=on_ready))

    async with (
        _listening(proxy) as url,
        plugin.connect(Target(url=url)) as upstream,
    ):
        conn = _Conn(upstream, upstream)
        live = await _script(conn)
        await conn.finish()
    cassette = tape.close()

    def front(on_ready: Callable[[str], None]) -> Any:
        options = ReplayOptions(transport=plugin, listen=ServeOptions(on_ready=on_ready))
        return serve_replay(cassette, options)

    async with (
        _listening(front) as url,
        plugin.connect(Target(url=url)) as upstream,
    ):
        conn = _Conn(upstream, upstream)
        replayed = await _script(conn)
        await conn.finish()
    _same(live.answers, replayed.answers, "a replay through the plugin's own front")


@asynccontextmanager
async def _listening(start: Callable[[Callable[[str], None]], Any]) -> AsyncIterator[str]:
    """Run a network front on a free port until the block ends; yields its URL."""
    ready = _Ready()
    async with anyio.create_task_group() as tg:
        tg.start_soon(start, ready)
        url = await ready.wait()
        try:
            yield url
        finally:
            tg.cancel_scope.cancel()


async def _record_replay_serve(plugin: FrameServer, name: str, client: ClientFactory) -> str:
    with tempfile.TemporaryDirectory(prefix="cassette-check-") as folder:
        tape = _Tape(name, Path(folder) / "check.jsonl", {})
        async with _serving(plugin, _peer_handler) as address:
            stream = await client(address)
            conn = _Conn(_RecordingStream(stream, tape), None)
            live = await _script(conn)
            await conn.finish()
        cassette = tape.close()
    replayed = await _replay_through(plugin, cassette, client)
    _same(live.answers, replayed.answers, "a replay served through the plugin")
    return ""


async def _replay_through(plugin: FrameServer, cassette: Cassette, client: ClientFactory) -> Any:
    """The cassette served on the plugin by the runtime's one serve path, as
    ``cassette replay --front NAME`` serves it, reached with the author's client."""
    ready = _Ready()
    options = ReplayOptions(transport=plugin, listen=ServeOptions(on_ready=ready))
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_replay, cassette, options)
        address = await ready.wait()
        async with _ServeSide(client, address).open() as conn:
            replayed = await _script(conn)
            await conn.finish()
        tg.cancel_scope.cancel()
    return replayed


# -- recording and replaying ---------------------------------------------------------------


@attrs.define
class _Script:
    answers: list[Any]
    peer: bool


async def _script(conn: _Conn) -> _Script:
    """The session every round trip plays: the same requests live and replayed."""
    answers: list[Any] = [_answer_part(await conn.initialize())]
    answers.append(_answer_part(await conn.request("tools/list")))
    if conn.peer:
        reply = await conn.request("tools/call", {"name": "echo", "arguments": {"text": "é1"}})
        answers.append(_answer_part(reply))
    return _Script(answers, conn.peer)


async def _replay_in_memory(cassette: Cassette, peer: bool) -> list[Any]:
    memory = MemoryTransport()
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_replay, cassette, ReplayOptions(transport=memory))
        conn = _Conn(memory.open_connection(), None)
        replayed = await _script(conn)
        await conn.finish()
        memory.stop()
    if replayed.peer != peer:
        raise _Failure("the replay did not answer initialize as the recording did")
    return replayed.answers


def _answer_part(reply: Mapping[str, Any]) -> Any:
    return reply.get("result", reply.get("error"))


def _same(live: list[Any], replayed: list[Any], what: str) -> None:
    if live != replayed:
        for index, (a, b) in enumerate(zip(live, replayed, strict=False)):
            if a != b:
                raise _Failure(
                    f"{what} answered request {index + 1} with {_short(b)}, not {_short(a)}"
                )
        raise _Failure(f"{what} gave {len(replayed)} answers, not {len(live)}")


class _Tape:
    """A recorder writing to a file: what the check-suite records a session with."""

    def __init__(self, transport: str, path: Path, target: Mapping[str, Any]) -> None:
        started = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.recorder = Recorder(transport=transport, started_at=started, target=dict(target))
        self.writer = CassetteWriter(path, overwrite=True).open()
        self.path = path
        self._t0 = time.monotonic()

    def clock(self) -> float:
        return round(time.monotonic() - self._t0, 6)

    def put(self, records: list[Record]) -> None:
        if records:
            self.writer.write(records)

    # the Tap protocol, for recording proxies
    def frame(self, direction: Literal["c2s", "s2c"], data: bytes, meta: Mapping[str, Any]) -> None:
        self.put(self.recorder.observe(direction, data, self.clock(), dict(meta)))

    def http(self, method: str, stream: str, status: int, session: int | None) -> None:
        self.put(self.recorder.http(method, stream, status, self.clock(), session))

    def side(self, event: SideEvent) -> None:
        if isinstance(event, StderrLine):
            text = event.data.decode("utf-8", "replace").rstrip("\n")
            self.put(self.recorder.stderr(text, self.clock()))

    def close(self) -> Cassette:
        self.put(self.recorder.close())
        self.writer.close()
        try:
            cassette = Cassette.load(self.path)
        except CassetteError as exc:
            text = f"what the transport delivered did not make a readable cassette: {exc}"
            raise _Failure(text) from exc
        if cassette.header.era is None:
            raise _Failure(
                "the recorded initialize was never paired with its answer (the era stayed "
                "undecided): the frames the transport delivered are not the messages sent"
            )
        return cassette


class _RecordingStream:
    """A frame stream that records each frame, as the recording proxy does, before it goes."""

    def __init__(self, stream: FrameStream, tape: _Tape) -> None:
        self.stream = stream
        self.tape = tape

    async def send(self, frame: Frame) -> None:
        self.tape.put(self.tape.recorder.observe("c2s", frame.data, self.tape.clock()))
        await self.stream.send(frame)

    async def receive(self) -> Frame:
        frame = await self.stream.receive()
        self.tape.put(self.tape.recorder.observe("s2c", frame.data, self.tape.clock()))
        return frame

    async def send_eof(self) -> None:
        await self.stream.send_eof()

    async def aclose(self) -> None:
        await self.stream.aclose()
