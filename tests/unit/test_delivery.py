"""Delivery a batch-reading client can consume: each message its own write, and a response
that follows notifications written only once the client has read them (``Drainable``)."""

from __future__ import annotations

import json
from typing import Any

import anyio

from cassette.runtime import replay_sessions
from cassette.runtime.frames import serve_frames
from cassette.transport import Drainable, Frame
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
