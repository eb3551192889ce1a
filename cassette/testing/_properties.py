"""The stream properties: what a transport's frames must do on either side.

Round trip, framing, ordering, cancellation and end of stream are written against a
``_Side`` and so run on the connect side and the serve side alike; error conversion
reaches the plugin's ``connect`` directly. Each returns a note for the report (empty when
there is nothing to add) or raises ``_Failure`` saying what the plugin did wrong.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Final

import anyio

from cassette.core.wire.jsonrpc import Kind, classify
from cassette.errors import TransportClosedError, TransportError
from cassette.testing._report import _Failure
from cassette.testing._sides import _INIT_PARAMS, _Conn, _Side
from cassette.testing._util import _leaves, _short
from cassette.testing.peer import BANNER
from cassette.transport import Frame, Target, UpstreamConnector

_PINGS: Final = 20
_BURST: Final = 50
_RAW_TEXT: Final = "not JSON-RPC: caf\u00e9 \u2603\r"


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
        await conn.stream.send_eof()  # a second half-close is harmless
        await conn.stream.aclose()
        await conn.stream.aclose()  # and so is a second close
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


async def _error_conversion(plugin: UpstreamConnector, target: Target | None, bad: Target) -> str:
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
        return "send() after send_eof() not checked (no target given)"
    async with plugin.connect(target) as upstream:
        conn = _Conn(upstream, upstream)
        await conn.initialize()
        await upstream.send_eof()
        try:
            await conn.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
        except TransportClosedError:
            pass
        except Exception as exc:
            raise _Failure(
                f"send() after send_eof() raised {type(exc).__name__} "
                "instead of TransportClosedError"
            ) from exc
        else:
            raise _Failure("send() after send_eof() did not raise TransportClosedError")
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


# -- small helpers -------------------------------------------------------------------------


def _init_frame() -> bytes:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": _INIT_PARAMS}
    return json.dumps(message).encode("utf-8") + b"\n"
