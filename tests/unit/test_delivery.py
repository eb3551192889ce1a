"""Delivery a batch-reading client can consume: each message its own write, and a response
that follows notifications written only once the client has read them (``Drainable``)."""

from __future__ import annotations

import json
from typing import Any

import anyio

from cassette.runtime import replay_sessions
from cassette.runtime.frames import serve_frames
from cassette.transport import Drainable, Eager, Frame
from tests.unit.test_replayer import progress, req, res, tape

CALL = req(1, "tools/call", {"name": "slow", "_meta": {"progressToken": 1}})


class Client:
    """A client that sends one request, then finishes; every write is logged."""

    def __init__(self) -> None:
        self.log: list[str] = []
        self._incoming = [Frame(json.dumps(CALL).encode() + b"\n")]

    async def send(self, frame: Frame) -> None:
        (line,) = frame.data.splitlines()  # one message per write
        message = json.loads(line)
        self.log.append(message.get("method") or f"response {message['id']}")

    async def receive(self) -> Frame:
        if not self._incoming:
            raise anyio.EndOfStream
        return self._incoming.pop(0)

    async def send_eof(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


class DrainableClient(Client):
    async def drained(self) -> bool:
        self.log.append("drained")
        return True


def recording() -> Any:
    return tape(
        ("c2s", CALL),
        ("s2c", progress(1, 1)),
        ("s2c", progress(1, 2)),
        ("s2c", res(1, {"content": []})),
    )


def serve(client: Client) -> list[str]:
    async def main() -> None:
        with anyio.fail_after(10):
            await serve_frames(client, replay_sessions(recording()))  # type: ignore[arg-type]

    anyio.run(main)
    return client.log


def test_the_response_waits_until_the_client_has_read_the_notifications() -> None:
    client = DrainableClient()
    assert isinstance(client, Drainable)
    assert serve(client) == [
        "notifications/progress",
        "notifications/progress",
        "drained",
        "response 1",
    ]


def test_each_message_is_its_own_write_on_any_stream() -> None:
    client = Client()
    assert not isinstance(client, Drainable)
    assert serve(client) == ["notifications/progress", "notifications/progress", "response 1"]


class EagerClient:
    """An ``Eager`` stream: its frames are all there at once, then it finishes. Each
    ``send_ready`` takes at most ``takes`` bytes (``None``: all), as a pipe with that much
    room would; the rest must come through ``send``. Every write is logged."""

    def __init__(self, frames: list[dict[str, Any]], takes: int | None = None) -> None:
        self._incoming = [json.dumps(f).encode() + b"\n" for f in frames]
        self.takes = takes
        self.out = bytearray()
        self.log: list[tuple[str, int]] = []

    def receive_ready(self) -> Frame | None:
        return Frame(self._incoming.pop(0)) if self._incoming else None

    async def receive(self) -> Frame:
        if not self._incoming:
            raise anyio.EndOfStream
        return Frame(self._incoming.pop(0))

    def send_ready(self, data: bytes) -> int:
        taken = len(data) if self.takes is None else min(self.takes, len(data))
        self.out += data[:taken]
        self.log.append(("now", taken))
        return taken

    async def send(self, frame: Frame) -> None:
        self.out += frame.data
        self.log.append(("later", len(frame.data)))

    async def send_eof(self) -> None:
        pass

    async def aclose(self) -> None:
        pass

    def messages(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in bytes(self.out).splitlines()]


def serve_eager(client: EagerClient, recorded: Any) -> list[dict[str, Any]]:
    async def main() -> None:
        with anyio.fail_after(10):
            await serve_frames(client, replay_sessions(recorded))  # type: ignore[arg-type]

    anyio.run(main)
    return client.messages()


def test_an_eager_stream_gets_the_answers_from_the_reading_loop() -> None:
    client = EagerClient([CALL])
    assert isinstance(client, Eager)
    messages = serve_eager(client, recording())
    assert messages == [progress(1, 1), progress(1, 2), res(1, {"content": []})]
    assert {how for how, _ in client.log} == {"now"}  # no write was left to the writer task


def test_what_a_full_pipe_does_not_take_at_once_follows_whole_and_in_order() -> None:
    client = EagerClient([CALL], takes=7)
    messages = serve_eager(client, recording())
    assert [m.get("method") or m["id"] for m in messages] == [
        "notifications/progress",
        "notifications/progress",
        1,
    ]
    assert client.log[0] == ("now", 7)  # the first line began at once ...
    assert all(how == "later" for how, _ in client.log[1:])  # ... the writer task did the rest


def test_requests_that_arrive_together_are_answered_in_recorded_order() -> None:
    first, second = req(1, "tools/call", {"name": "a"}), req(2, "tools/call", {"name": "b"})
    recorded = tape(
        ("c2s", first),
        ("c2s", second),
        ("s2c", res(2, {"content": ["b"]})),
        ("s2c", res(1, {"content": ["a"]})),
    )
    messages = serve_eager(EagerClient([first, second]), recorded)
    assert [m["id"] for m in messages] == [2, 1]


class EagerDrainableClient(EagerClient):
    async def drained(self) -> bool:
        self.log.append(("drained", 0))
        return True


def test_an_eager_stream_still_waits_until_the_notifications_are_read() -> None:
    client = EagerDrainableClient([CALL])
    messages = serve_eager(client, recording())
    assert [m.get("method") or m["id"] for m in messages][-1] == 1
    hows = [how for how, _ in client.log]
    assert hows == ["now", "now", "drained", "later"]
