"""A frame recording proxy's answer to a server that stops answering: ``record
--upstream-timeout`` over stdio (and any frame transport).

A request the server has not answered within the timeout gets, in the server's place, the
JSON-RPC error the HTTP proxy's 504 carries (code -32000, "did not answer within N s"),
under the request's id. The error is recorded as the server message it stands for, marked
``meta.synthetic = "upstream-timeout"``, so a replay gives the client the same error and
``lint`` sees the request answered. If the server's answer comes after all, the client has
already been answered: that late answer is recorded as a raw line marked ``meta.late`` (a
replay never plays raw lines) and not forwarded.

Cost: one parse of each client frame to learn the request ids (only with the option on);
server frames are parsed a second time only while a timed-out request still waits for its
late answer. Deadlines are kept in one queue in arrival order (every request gets the same
timeout, so the queue is sorted), watched by one task: O(1) per request.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, Final

import anyio

from cassette.core.wire.ids import IdKey, id_key
from cassette.core.wire.jsonrpc import Kind, classify, dumps_bytes, error_response
from cassette.core.wire.meta import SYNTHETIC
from cassette.errors import TransportClosedError
from cassette.runtime.sink import Sink
from cassette.transport import Frame, FrameStream

__all__ = ["UPSTREAM_TIMEOUT_CODE", "Watchdog"]

#: The code the HTTP recording proxy's 504 body carries too (a JSON-RPC server error).
UPSTREAM_TIMEOUT_CODE: Final = -32000
TIMED_OUT: Final = {SYNTHETIC: "upstream-timeout"}


class Watchdog:
    """Times client requests; answers for the server when it is too slow (see above)."""

    def __init__(
        self,
        timeout: float,
        sink: Sink,
        client: FrameStream,
        on_warning: Callable[[str], None],
    ) -> None:
        self.timeout = timeout
        self.sink, self.client, self.on_warning = sink, client, on_warning
        # Two tasks write to the client (the relay and this one): whole frames, one at a time.
        self.lock = anyio.Lock(fast_acquire=True)
        self._queue: deque[tuple[float, IdKey, Any, str]] = deque()
        self._latest: dict[IdKey, float] = {}  # id -> deadline of its newest use
        self._late: set[IdKey] = set()
        self._wake = anyio.Event()

    def client_frame(self, data: bytes) -> None:
        """A client frame passed: time it if it is a request. Requests inside a batch
        (2025-03-26 only) are not timed: their answers come back as a batch, which the
        recorder keeps as one raw frame, so it could not tell them answered."""
        classified = classify(data)
        if classified.kind is Kind.REQUEST:
            self._start(classified.value)

    def _start(self, request: dict[str, Any]) -> None:
        deadline = anyio.current_time() + self.timeout
        key = id_key(request["id"])
        self._latest[key] = deadline  # a reused id supersedes the older request's timer
        self._queue.append((deadline, key, request["id"], str(request.get("method"))))
        self._wake.set()

    def late_answer(self, data: bytes) -> bool:
        """True (and recorded as late) when a server frame answers a timed-out request."""
        if not self._late:
            return False
        classified = classify(data)
        if classified.kind not in (Kind.RESPONSE, Kind.ERROR):
            return False
        key = id_key(classified.value.get("id"))
        if key not in self._late:
            return False
        self._late.discard(key)
        self.sink.put(self.sink.recorder.late(data, self.sink.clock()))
        return True

    async def run(self) -> None:
        """Fire each deadline in turn, until cancelled."""
        while True:
            if not self._queue:
                self._wake = anyio.Event()
                await self._wake.wait()
                continue
            deadline, key, msg_id, method = self._queue[0]
            wait = deadline - anyio.current_time()
            if wait > 0:
                await anyio.sleep(wait)
                continue
            self._queue.popleft()
            if self._latest.get(key) == deadline:
                del self._latest[key]
                await self._expire(key, msg_id, method)

    async def _expire(self, key: IdKey, msg_id: object, method: str) -> None:
        recorder = self.sink.recorder
        if not recorder.awaiting(msg_id):
            return  # answered in time
        why = f"cassette-mcp: the server did not answer within {self.timeout:g} s"
        data = dumps_bytes(error_response(msg_id, UPSTREAM_TIMEOUT_CODE, why)) + b"\n"
        self.sink.frame("s2c", data, TIMED_OUT)
        self._late.add(key)
        self.on_warning(
            f"the server did not answer request {msg_id!r} ({method}) within "
            f"{self.timeout:g} s; the client got an error in its place"
        )
        try:
            async with self.lock:
                await self.client.send(Frame(data))
        except TransportClosedError:
            pass  # the client is gone; the error is recorded all the same
