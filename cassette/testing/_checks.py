"""The transport check-suite: run a plugin through the properties every transport must have.

Theory of operation
-------------------
Each property is checked on connections of its own, so one failure cannot hide another,
and under a deadline, so a hang is reported as a failure instead of hanging the caller.
A property either passes, fails with a reason naming what the plugin did and what the
contract says instead, or is skipped because nothing was given to check it with.

Two sides of a plugin can be checked, each with the same client-side properties:

* the **connect** side (``target``): the plugin reaches a live server. Any MCP server
  will do for the standard properties; when the server is the reference peer
  (``cassette.testing.peer``), the exact ones run too (raw lines byte for byte, a burst of
  notifications in order, the server ending the session);
* the **serve** side (``client``): the check-suite serves the reference peer through
  ``serve(handler)`` and reaches it with the ``client`` factory the author passes.

Network fronts (``record_proxy``/``serve_cassette``) are round-tripped through the
plugin's own client side: record through the proxy, replay through the front, compare.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import socket
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any, Final, Literal, Protocol
from urllib.parse import urlsplit, urlunsplit

import anyio
import attrs

from cassette.errors import CassetteError, TransportClosedError, TransportError
from cassette.jsonrpc import Kind, classify
from cassette.recorder import Record, Recorder
from cassette.registry import available, load_transport
from cassette.replayer import Replayer
from cassette.storage import Cassette, CassetteWriter
from cassette.testing.peer import BANNER, PEER_NAME, ReferencePeer
from cassette.transport import (
    CassetteFront,
    Frame,
    FrameStream,
    RecordingFront,
    SideEvent,
    StderrLine,
    Target,
    Transport,
    Upstream,
)
from cassette.transports.memory import MemoryTransport

__all__ = [
    "PROPERTIES",
    "CheckReport",
    "CheckResult",
    "ClientFactory",
    "TransportCheckError",
    "check_transport",
    "check_transport_sync",
]

#: The properties, in the order they are checked (the serve side prefixes ``serve: ``).
PROPERTIES: Final = (
    "plugin",
    "round trip",
    "framing",
    "ordering",
    "cancellation",
    "end of stream",
    "error conversion",
    "record/replay",
)

#: How a client reaches ``serve``: given what the plugin reported through ``task_status``
#: (``None`` when its ``serve`` takes none), returns a stream to a new connection.
ClientFactory = Callable[[Any], Awaitable[FrameStream]]

_PINGS: Final = 20
_BURST: Final = 50
_RAW_TEXT: Final = "not JSON-RPC: caf\u00e9 \u2603\r"
_INIT_PARAMS: Final = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "cassette-check", "version": "1"},
}
# What serve_replay hands a network front's serve_cassette / record_proxy.
_FRONT_KEYWORDS: Final = (
    "strategy",
    "host",
    "port",
    "on_miss",
    "on_ready",
    "on_finish",
    "on_warning",
    "answer_timeout",
)
_PROXY_KEYWORDS: Final = ("host", "port", "on_ready")


class _Failure(Exception):
    """A property does not hold; the message says how."""


@attrs.frozen
class CheckResult:
    """One property's outcome."""

    property: str
    outcome: Literal["passed", "failed", "skipped"]
    detail: str = ""


@attrs.frozen
class CheckReport:
    """Every property's outcome for one transport."""

    transport: str
    results: tuple[CheckResult, ...]

    @property
    def failed(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "failed")

    @property
    def passed(self) -> tuple[str, ...]:
        return tuple(r.property for r in self.results if r.outcome == "passed")

    @property
    def skipped(self) -> tuple[CheckResult, ...]:
        return tuple(r for r in self.results if r.outcome == "skipped")

    @property
    def ok(self) -> bool:
        return not self.failed

    def __str__(self) -> str:
        marks = {"passed": "ok  ", "failed": "FAIL", "skipped": "skip"}
        lines = [f"transport {self.transport!r}:"]
        for r in self.results:
            lines.append(
                f"  {marks[r.outcome]} {r.property}" + (f": {r.detail}" if r.detail else "")
            )
        return "\n".join(lines)


class TransportCheckError(AssertionError):
    """At least one property failed; ``report`` has them all."""

    def __init__(self, report: CheckReport) -> None:
        names = ", ".join(r.property for r in report.failed)
        super().__init__(f"transport {report.transport!r} fails: {names}\n{report}")
        self.report = report


# -- one client connection -----------------------------------------------------------------


class _Conn:
    """The client end of one connection, speaking JSON-RPC over frames."""

    def __init__(self, stream: FrameStream, upstream: Upstream | None) -> None:
        self.stream = stream
        self.upstream = upstream
        self.frames: list[bytes] = []
        self.others: list[dict[str, Any]] = []
        self.peer = False
        self._queue: list[dict[str, Any]] = []
        self._next_id = 0

    async def send(self, message: Mapping[str, Any]) -> None:
        await self.stream.send(Frame(json.dumps(message).encode("utf-8") + b"\n"))

    async def frame(self) -> bytes:
        frame = await self.stream.receive()
        if not isinstance(frame, Frame) or type(frame.data) is not bytes:
            raise _Failure(f"receive() must return a Frame holding bytes, got {frame!r}")
        self.frames.append(frame.data)
        return frame.data

    async def message(self) -> dict[str, Any]:
        while not self._queue:
            data = await self.frame()
            whole = classify(data)
            # A replay hands a transport what it says at once as one frame of several lines.
            for classified in [whole] if whole.kind is not Kind.NOT_JSON else _lines(data):
                if classified.kind is Kind.BATCH:
                    self._queue.extend(m for m in classified.value if isinstance(m, dict))
                elif classified.is_message:
                    self._queue.append(classified.value)
        return self._queue.pop(0)

    async def answer(self, msg_id: object) -> dict[str, Any]:
        """Read until the response to ``msg_id``, keeping everything else in ``others``."""
        while True:
            message = await self.message()
            if message.get("id") == msg_id and "method" not in message:
                return message
            self.others.append(message)

    async def request(self, method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        self._next_id += 1
        request: dict[str, Any] = {"jsonrpc": "2.0", "id": self._next_id, "method": method}
        if params is not None:
            request["params"] = dict(params)
        await self.send(request)
        return await self.answer(self._next_id)

    async def initialize(self) -> dict[str, Any]:
        reply = await self.request("initialize", _INIT_PARAMS)
        result = reply.get("result")
        if not isinstance(result, dict):
            raise _Failure(f"initialize was not answered with a result: {_short(reply)}")
        info = result.get("serverInfo")
        self.peer = isinstance(info, dict) and info.get("name") == PEER_NAME
        await self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    async def finish(self) -> None:
        """The client is done: say so, and read on to the end of the stream."""
        if self.upstream is not None:
            await self.upstream.close_input()
        else:
            await self.stream.aclose()
        await self.drain()

    async def drain(self) -> None:
        while True:
            try:
                await self.frame()
            except anyio.EndOfStream:
                return


class _Side(Protocol):
    """How a check gets connections: through ``connect`` or through ``serve``."""

    def open(self) -> AbstractAsyncContextManager[_Conn]: ...


class _ConnectSide:
    def __init__(self, plugin: Transport, target: Target) -> None:
        self.plugin = plugin
        self.target = target

    @asynccontextmanager
    async def open(self) -> AsyncIterator[_Conn]:
        async with self.plugin.connect(self.target) as upstream:
            yield _Conn(upstream, upstream)


class _ServeSide:
    def __init__(self, factory: ClientFactory, address: object) -> None:
        self.factory = factory
        self.address = address

    @asynccontextmanager
    async def open(self) -> AsyncIterator[_Conn]:
        stream = await self.factory(self.address)
        try:
            yield _Conn(stream, None)
        finally:
            with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                await stream.aclose()


# -- the properties ------------------------------------------------------------------------


async def _round_trip(side: _Side) -> str:
    async with side.open() as conn:
        await conn.initialize()
        reply = await conn.request("tools/list")
        if "result" not in reply and "error" not in reply:
            raise _Failure(f"tools/list got neither result nor error: {_short(reply)}")
        await conn.finish()
    return "the reference peer answered" if conn.peer else ""


async def _framing(side: _Side) -> str:
    async with side.open() as conn:
        await conn.initialize()
        await conn.request("tools/list")
        if conn.peer:
            await conn.request("check/raw", {"text": _RAW_TEXT})
        await conn.finish()
    _whole_frames(conn.frames)
    if not conn.peer:
        return "raw lines not checked (the target is not the reference peer)"
    raw = _RAW_TEXT.encode("utf-8")
    if raw not in conn.frames and raw + b"\n" not in conn.frames:
        near = [f for f in conn.frames if f.startswith(b"not JSON-RPC")]
        raise _Failure(
            f"a raw line must arrive as one frame, byte for byte (carriage return and UTF-8 "
            f"kept): expected {raw!r}, got {near[0]!r}"
            if near
            else f"the raw line {raw!r} never arrived as a frame of its own"
        )
    if conn.frames[0] not in (BANNER, BANNER.rstrip(b"\n")):
        raise _Failure(f"the peer's greeting should be the first frame, got {conn.frames[0]!r}")
    return ""


def _whole_frames(frames: Sequence[bytes]) -> None:
    """Each frame is one message (or one raw line): never two glued, never one cut."""
    previous_raw: bytes | None = None
    for data in frames:
        if classify(data).kind is not Kind.NOT_JSON:
            previous_raw = None
            continue
        lines = [line for line in data.split(b"\n") if line.strip()]
        if len(lines) > 1 and any(classify(line).is_message for line in lines):
            raise _Failure(
                f"one frame held {len(lines)} lines ({_short(data)}): a frame is one message"
            )
        if previous_raw is not None and classify(previous_raw + data).is_message:
            raise _Failure(f"one message was cut into two frames: {previous_raw!r} + {data!r}")
        previous_raw = data


async def _ordering(side: _Side) -> str:
    async with side.open() as conn:
        await conn.initialize()
        ids = list(range(1000, 1000 + _PINGS))
        for msg_id in ids:  # pipelined: nothing is awaited in between
            await conn.send({"jsonrpc": "2.0", "id": msg_id, "method": "ping"})
        answered: list[object] = []
        while len(answered) < len(ids):
            message = await conn.message()
            if "method" not in message and message.get("id") in ids:
                answered.append(message["id"])
        if sorted(answered, key=str) != sorted(ids, key=str):
            raise _Failure(f"{_PINGS} pipelined pings got answers for {answered}")
        if conn.peer:
            if answered != ids:
                raise _Failure(f"answers from a sequential server came out of order: {answered}")
            conn.others.clear()
            await conn.request("check/burst", {"count": _BURST})
            ticks = [
                m["params"]["n"]
                for m in conn.others
                if m.get("method") == "check/tick" and isinstance(m.get("params"), dict)
            ]
            if ticks != list(range(_BURST)):
                raise _Failure(f"{_BURST} notifications sent in order arrived as {ticks}")
        await conn.finish()
    return "" if conn.peer else "exact order not checked (the target is not the reference peer)"


async def _cancellation(side: _Side) -> str:
    async with side.open() as conn:
        await conn.initialize()
        for _ in range(5):  # a receive cancelled at once must not lose what comes next
            conn._next_id += 1
            await conn.send({"jsonrpc": "2.0", "id": conn._next_id, "method": "ping"})
            with anyio.CancelScope() as scope:
                scope.cancel()
                early = await conn.message()  # returned without a checkpoint: keep it
                conn._queue.insert(0, early)
            await conn.answer(conn._next_id)
        with anyio.move_on_after(0.05):  # a receive cancelled while it waits
            while True:
                await conn.message()
        reply = await conn.request("ping")
        if "result" not in reply and "error" not in reply:
            raise _Failure(f"after a cancelled receive, ping got {_short(reply)}")
        await conn.finish()
    with anyio.CancelScope() as outer:  # leaving the connection while cancelled
        async with side.open() as conn:
            await conn.initialize()
            outer.cancel()
            await anyio.sleep_forever()
    return ""


async def _end_of_stream(side: _Side) -> str:
    async with side.open() as conn:
        await conn.initialize()
        await conn.request("tools/list")
        await conn.finish()
        for _ in range(2):
            try:
                data = await conn.frame()
            except anyio.EndOfStream:
                continue
            raise _Failure(f"receive() returned {_short(data)} after raising EndOfStream")
        if conn.upstream is not None:
            code = await conn.upstream.wait()
            if code is not None and not isinstance(code, int):
                raise _Failure(f"wait() must return an int or None, not {code!r}")
        await conn.stream.aclose()
        await conn.stream.aclose()  # a second close is harmless
    if not conn.peer:
        return "the server ending the session not checked (the target is not the reference peer)"
    async with side.open() as conn:
        await conn.initialize()
        await conn.request("check/exit", {"code": 3})
        await conn.drain()
        if conn.upstream is not None:
            code = await conn.upstream.wait()
            if code is not None and code != 3:
                raise _Failure(f"the server exited with 3 but wait() returned {code!r}")
            try:
                await conn.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
            except TransportClosedError:
                pass
            else:
                raise _Failure("send() after the server ended did not raise TransportClosedError")
    return ""


async def _error_conversion(plugin: Transport, target: Target | None, bad: Target) -> str:
    caught: BaseException | None = None
    answered: Frame | None = None
    try:
        async with plugin.connect(bad) as upstream:
            try:
                await upstream.send(Frame(_init_frame()))
                answered = await upstream.receive()
            except Exception as exc:  # judged below
                caught = exc
    except Exception as exc:
        caught = caught or exc
    if answered is not None:
        raise _Failure(
            f"something answered at {bad} ({_short(answered.data)}): pass `unreachable=` a "
            "target nothing answers at"
        )
    _judge_unreachable(bad, caught)
    if target is None:
        return "send() after close_input() not checked (no target given)"
    async with plugin.connect(target) as upstream:
        conn = _Conn(upstream, upstream)
        await conn.initialize()
        await upstream.close_input()
        try:
            await conn.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
        except TransportClosedError:
            pass
        except Exception as exc:
            raise _Failure(
                f"send() after close_input() raised {type(exc).__name__} "
                "instead of TransportClosedError"
            ) from exc
        else:
            raise _Failure("send() after close_input() did not raise TransportClosedError")
        await conn.drain()
    return ""


def _judge_unreachable(bad: Target, caught: BaseException | None) -> None:
    where = bad.url or " ".join(bad.command) or "an empty Target()"
    if isinstance(caught, TransportError):
        return
    if isinstance(caught, BaseExceptionGroup) and all(
        isinstance(e, TransportError) for e in _leaves(caught)
    ):
        raise _Failure(
            f"reaching {where} raised a TransportError inside an exception group: raise it "
            "bare, callers write `except TransportError`"
        )
    if caught is None or isinstance(caught, anyio.EndOfStream):
        raise _Failure(
            f"reaching {where} must raise TransportError (from connect, send or receive), "
            f"not {'end of stream' if caught else 'nothing'}"
        )
    raise _Failure(
        f"reaching {where} raised {type(caught).__name__}: {caught}; convert it at the "
        "boundary: `raise TransportError(...) from exc`"
    )


async def _record_replay_connect(plugin: Transport, name: str, target: Target) -> str:
    with tempfile.TemporaryDirectory(prefix="cassette-check-") as folder:
        path = Path(folder) / "check.jsonl"
        tape = _Tape(name, path, {"url": target.url} if target.url else {})
        async with plugin.connect(target, on_side_event=tape.side) as upstream:
            conn = _Conn(_RecordingStream(upstream, tape), upstream)
            live = await _script(conn)
            await conn.finish()
            code = await upstream.wait()
            tape.put(tape.recorder.exit(code, tape.clock()))
        cassette = tape.close()
        replayed = await _replay_in_memory(cassette, live.peer)
        _same(live.answers, replayed, "an in-process replay of what was recorded")
        if isinstance(plugin, RecordingFront) and isinstance(plugin, CassetteFront) and target.url:
            await _record_replay_fronts(plugin, name, target, Path(folder))
            return "recorded and replayed in process, and through the plugin's own fronts"
    return ""


async def _record_replay_fronts(plugin: Any, name: str, target: Target, folder: Path) -> None:
    tape = _Tape(name, folder / "fronts.jsonl", {"url": target.url})
    async with (
        _listening(partial(plugin.record_proxy, target.url, tape)) as url,
        plugin.connect(Target(url=url)) as upstream,
    ):
        conn = _Conn(upstream, upstream)
        live = await _script(conn)
        await conn.finish()
    cassette = tape.close()
    async with (
        _listening(partial(plugin.serve_cassette, cassette)) as url,
        plugin.connect(Target(url=url)) as upstream,
    ):
        conn = _Conn(upstream, upstream)
        replayed = await _script(conn)
        await conn.finish()
    _same(live.answers, replayed.answers, "a replay through the plugin's own front")


@asynccontextmanager
async def _listening(start: Callable[..., Any]) -> AsyncIterator[str]:
    """Run a network front on a free port until the block ends; yields its URL."""
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(start, port=0, on_ready=on_ready))
        await ready.wait()
        try:
            yield urls[0]
        finally:
            tg.cancel_scope.cancel()


async def _record_replay_serve(plugin: Transport, name: str, client: ClientFactory) -> str:
    with tempfile.TemporaryDirectory(prefix="cassette-check-") as folder:
        tape = _Tape(name, Path(folder) / "check.jsonl", {})
        async with _serving(plugin, _peer_handler) as address:
            stream = await client(address)
            conn = _Conn(_RecordingStream(stream, tape), None)
            live = await _script(conn)
            await conn.finish()
        cassette = tape.close()
    async with (
        _serving(plugin, partial(_replay_handler, cassette)) as address,
        _ServeSide(client, address).open() as conn,
    ):
        replayed = await _script(conn)
        await conn.finish()
    _same(live.answers, replayed.answers, "a replay served through the plugin")
    return ""


# -- recording, replaying, serving ---------------------------------------------------------


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
        tg.start_soon(memory.serve, partial(_replay_handler, cassette))
        conn = _Conn(memory.open_connection(), None)
        replayed = await _script(conn)
        await conn.finish()
        memory.stop()
    if replayed.peer != peer:
        raise _Failure("the replay did not answer initialize as the recording did")
    return replayed.answers


async def _replay_handler(cassette: Cassette, stream: FrameStream) -> None:
    from cassette.session import replay

    await replay(stream, Replayer(cassette))


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

    async def aclose(self) -> None:
        await self.stream.aclose()


async def _peer_handler(stream: FrameStream) -> None:
    """The reference peer behind a plugin's ``serve``."""
    peer = ReferencePeer()
    try:
        for line in peer.greeting():
            await stream.send(Frame(line))
        while peer.exit_code is None:
            try:
                frame = await stream.receive()
            except anyio.EndOfStream:
                break
            for line in peer.feed(frame.data):
                await stream.send(Frame(line))
    except TransportClosedError:
        pass  # the client went away
    finally:
        with anyio.CancelScope(shield=True):
            await stream.aclose()


@asynccontextmanager
async def _serving(
    plugin: Transport, handler: Callable[[FrameStream], Awaitable[None]]
) -> AsyncIterator[object]:
    async with anyio.create_task_group() as tg:
        if "task_status" in inspect.signature(plugin.serve).parameters:
            address = await tg.start(partial(plugin.serve, handler))
        else:
            tg.start_soon(plugin.serve, handler)
            address = None
        try:
            yield address
        finally:
            tg.cancel_scope.cancel()


# -- the shape of the plugin ---------------------------------------------------------------


def _plugin_shape(plugin: Transport, registered: str | None) -> str:
    name = getattr(type(plugin), "name", None)
    if not isinstance(name, str) or not name:
        raise _Failure("the plugin class needs a `name` class attribute (a non-empty str)")
    if registered is not None:
        if name != registered:
            raise _Failure(f"registered as {registered!r} but its `name` says {name!r}")
        if registered not in available():
            raise _Failure(f"{registered!r} is not listed by cassette.available()")
    for method in ("connect", "serve"):
        if not callable(getattr(plugin, method, None)):
            raise _Failure(f"the plugin has no `{method}` method")
    notes = []
    for method, keywords in (
        ("serve_cassette", _FRONT_KEYWORDS),
        ("record_proxy", _PROXY_KEYWORDS),
    ):
        function = getattr(plugin, method, None)
        if function is None:
            continue
        parameters = inspect.signature(function).parameters
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
        missing = [k for k in keywords if k not in parameters and not takes_any]
        if missing:
            raise _Failure(f"`{method}` must accept the keywords {', '.join(missing)}")
        notes.append(method)
    return f"network front: {', '.join(notes)}" if notes else ""


# -- running it all ------------------------------------------------------------------------


class _Run:
    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.results: list[CheckResult] = []

    async def check(self, name: str, run: Callable[[], Awaitable[str]]) -> None:
        try:
            with anyio.fail_after(self.timeout):
                detail = await run()
        except Exception as exc:
            # A plugin's task group may have wrapped what went wrong: report the cause.
            leaf = _leaves(exc)[0]
            if isinstance(leaf, _Failure):
                text = str(leaf)
            elif isinstance(leaf, TimeoutError):
                text = f"did not finish within {self.timeout:g} s (a hang, or a lost frame)"
            else:
                text = f"raised {type(leaf).__name__}: {leaf}"
            self.results.append(CheckResult(name, "failed", text))
        else:
            self.results.append(CheckResult(name, "passed", detail))

    def skip(self, name: str, why: str) -> None:
        self.results.append(CheckResult(name, "skipped", why))


async def check_transport(
    transport: str | Transport,
    *,
    target: Target | None = None,
    client: ClientFactory | None = None,
    unreachable: Target | None = None,
    deadline: float = 10.0,
    raise_on_failure: bool = True,
) -> CheckReport:
    """Check a transport plugin against the contract in docs/transports.md.

    ``transport`` is a registered name (the registration is checked too) or a plugin
    instance. ``target`` is a live server the plugin's ``connect`` reaches: any MCP server,
    or, for the exact checks, the reference peer (``python -m cassette.testing.peer`` over
    stdio; ``cassette.testing.ReferencePeer`` behind anything else). ``client`` reaches the
    plugin's ``serve`` (see ``ClientFactory``); the check-suite serves the reference peer
    there. ``unreachable`` is a target nothing answers at (by default one is made up from
    ``target``). Each property gets ``deadline`` seconds.

    Returns the report; raises ``TransportCheckError`` (an ``AssertionError``) naming every
    failed property unless ``raise_on_failure`` is false.
    """
    run = _Run(deadline)
    registered = transport if isinstance(transport, str) else None
    plugin: Transport | None = None
    try:
        plugin = load_transport(transport)() if isinstance(transport, str) else transport
    except Exception as exc:
        run.results.append(CheckResult("plugin", "failed", f"{type(exc).__name__}: {exc}"))
    if plugin is not None:
        found = plugin
        await run.check("plugin", lambda: _async(_plugin_shape, found, registered))
        name = registered or str(getattr(type(plugin), "name", "plugin"))
        await _connect_side(run, plugin, name, target, unreachable)
        if client is not None:
            await _serve_side(run, plugin, name, client)
    label = registered or str(getattr(type(plugin), "name", transport))
    report = CheckReport(label, tuple(run.results))
    if raise_on_failure and report.failed:
        raise TransportCheckError(report)
    return report


async def _connect_side(
    run: _Run, plugin: Transport, name: str, target: Target | None, unreachable: Target | None
) -> None:
    checks: list[tuple[str, Callable[[_Side], Awaitable[str]]]] = [
        ("round trip", _round_trip),
        ("framing", _framing),
        ("ordering", _ordering),
        ("cancellation", _cancellation),
        ("end of stream", _end_of_stream),
    ]
    if target is None:
        for label, _ in checks:
            run.skip(label, "no target given (a live server for connect)")
    else:
        side = _ConnectSide(plugin, target)
        for label, prop in checks:
            await run.check(label, partial(prop, side))
    bad = unreachable or _unreachable(target)
    await run.check("error conversion", partial(_error_conversion, plugin, target, bad))
    if target is None:
        run.skip("record/replay", "no target given")
    else:
        await run.check("record/replay", partial(_record_replay_connect, plugin, name, target))


async def _serve_side(run: _Run, plugin: Transport, name: str, client: ClientFactory) -> None:
    checks: list[tuple[str, Callable[[_Side], Awaitable[str]]]] = [
        ("round trip", _round_trip),
        ("framing", _framing),
        ("ordering", _ordering),
        ("cancellation", _cancellation),
        ("end of stream", _end_of_stream),
    ]

    async def served(prop: Callable[[_Side], Awaitable[str]]) -> str:
        async with _serving(plugin, _peer_handler) as address:
            return await prop(_ServeSide(client, address))

    for label, prop in checks:
        await run.check(f"serve: {label}", partial(served, prop))
    await run.check("serve: record/replay", partial(_record_replay_serve, plugin, name, client))


def check_transport_sync(transport: str | Transport, **options: Any) -> CheckReport:
    """``check_transport`` for synchronous code (a plain pytest test)."""
    return anyio.run(partial(check_transport, transport, **options))


# -- small helpers -------------------------------------------------------------------------


async def _async(function: Callable[..., str], *args: Any) -> str:
    return function(*args)


def _leaves(group: BaseException) -> list[BaseException]:
    if isinstance(group, BaseExceptionGroup):
        return [leaf for e in group.exceptions for leaf in _leaves(e)]
    return [group]


def _lines(data: bytes) -> list[Any]:
    return [classify(line) for line in data.split(b"\n") if line.strip()]


def _init_frame() -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _INIT_PARAMS}
    return json.dumps(message).encode("utf-8") + b"\n"


def _unreachable(target: Target | None) -> Target:
    """A target like ``target`` that nothing answers at."""
    if target is None:
        return Target()
    if target.url:
        parts = urlsplit(target.url)
        with socket.socket() as sock:  # a port that was free a moment ago: nobody listens
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        return Target(url=urlunsplit(parts._replace(netloc=f"127.0.0.1:{port}")))
    missing = Path(tempfile.gettempdir()) / "cassette-check" / "no-such-server"
    return Target(command=(str(missing),))


def _short(value: object, limit: int = 160) -> str:
    text = value.decode("utf-8", "replace") if isinstance(value, bytes) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
