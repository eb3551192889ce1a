"""In-process replay through the memory transport, and the harness connection."""

from __future__ import annotations

import anyio
import pytest

from cassette import Cassette, Header, MessageEvent, open_replay
from cassette.core.wire.model import RecorderInfo
from cassette.transports.memory import MemoryTransport

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}}


def tape() -> Cassette:
    def ev(seq: int, d: str, m: dict) -> MessageEvent:  # type: ignore[type-arg]
        return MessageEvent(t=seq / 10, dir=d, message=m, seq=seq)  # type: ignore[arg-type]

    return Cassette(
        Header(transport="stdio", recorder=RecorderInfo("t", "0"), started_at="x", era="legacy"),
        (
            ev(1, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}),
            ev(2, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}),
            ev(3, "c2s", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
            ev(4, "s2c", {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}),
        ),
    )


def test_open_replay_answers_and_collects_notifications() -> None:
    async def scenario() -> None:
        with anyio.fail_after(10):
            async with open_replay(tape()) as server:
                reply = await server.request("initialize", INIT)
                assert reply == {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "result": {"protocolVersion": "2025-11-25"},
                }
                await server.notify("notifications/initialized")
                assert (await server.request("ping"))["result"] == {}
                assert server.received == [
                    {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
                ]
                miss = await server.request("tools/list")
                assert miss["error"]["code"] == -32099

    anyio.run(scenario)


def test_memory_transport_has_no_upstream() -> None:
    from cassette import UpstreamConnector, UsageError
    from cassette.registry import get_connector

    assert not isinstance(MemoryTransport(), UpstreamConnector)  # a FrameServer only
    with pytest.raises(UsageError, match="cannot reach a live server"):
        get_connector(MemoryTransport())


def test_pacing_delays_are_scaled_and_capped() -> None:
    from cassette.runtime import Pacing

    assert Pacing(scale=0.5, cap=1.0).delay(1.0) == 0.5
    assert Pacing(scale=2.0, cap=1.0).delay(3.0) == 1.0
    assert Pacing().delay(-1.0) == 0.0  # out-of-order timestamps never wait


def test_a_paced_replay_sends_the_same_messages_in_order() -> None:
    import functools

    from cassette import DeliveryPolicy, Replayer, replay
    from cassette.runtime import Pacing
    from cassette.transports.memory import memory_pair

    async def scenario() -> list[bytes]:
        client, server = memory_pair()
        got: list[bytes] = []
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                paced = functools.partial(replay, policy=DeliveryPolicy(pacing=Pacing(scale=0.0)))
                tg.start_soon(paced, server, Replayer(tape()))
                await client.send(
                    Frame(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n')
                )
                await client.send(
                    Frame(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
                )
                got.append((await client.receive()).data)
                got.append((await client.receive()).data)
                await client.aclose()
        return got

    from cassette import Frame

    got = anyio.run(scenario)
    assert b'"id":1' in got[0]
    assert b"list_changed" in got[1]
