"""The check-suite catches what it claims to: an in-process transport that passes, then the
same transport with one fault at a time, each failing exactly the property it breaks."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar

import anyio
import pytest

from cassette import Frame, Target, TransportError
from cassette.testing import (
    PROPERTIES,
    CheckReport,
    ReferencePeer,
    TransportCheckError,
    check_transport,
    check_transport_sync,
)
from cassette.transport import ConnectOptions, Upstream
from cassette.transports.memory import MemoryFrameStream, memory_pair

TARGET = Target(command=("loopback",))


async def peer(stream: MemoryFrameStream) -> None:
    reference = ReferencePeer()
    try:
        for line in reference.greeting():
            await stream.send(Frame(line))
        while reference.exit_code is None:
            try:
                frame = await stream.receive()
            except anyio.EndOfStream:
                break
            for line in reference.feed(frame.data):
                await stream.send(Frame(line))
    finally:
        await stream.aclose()  # the peer is gone, in both directions


class Wrapped:
    """A frame stream with the client's lifecycle; subclasses add one fault each."""

    def __init__(self, inner: MemoryFrameStream) -> None:
        self.inner = inner

    async def send(self, frame: Frame) -> None:
        await self.inner.send(frame)

    async def receive(self) -> Frame:
        return await self.inner.receive()

    async def send_eof(self) -> None:
        await self.inner.send_eof()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def wait(self) -> int | None:
        return None


class Loopback:
    """A correct transport: ``connect`` reaches the reference peer running in a task (an
    ``UpstreamConnector``, and nothing else)."""

    name: ClassVar[str] = "loopback"
    stream = Wrapped

    @asynccontextmanager
    async def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AsyncIterator[Upstream]:
        if target != TARGET:
            raise TransportError(f"nothing answers at {target}")
        client_end, server_end = memory_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer, server_end)
            upstream = self.stream(client_end)
            try:
                yield upstream
            finally:
                await upstream.send_eof()
                tg.cancel_scope.cancel()


class Gluing(Wrapped):
    async def receive(self) -> Frame:
        first = await self.inner.receive()
        with anyio.move_on_after(0.01):  # whatever follows at once goes in the same frame
            try:
                second = await self.inner.receive()
            except anyio.EndOfStream:
                return first
            return Frame(first.data + second.data)
        return first


class Reversing(Wrapped):
    def __init__(self, inner: MemoryFrameStream) -> None:
        super().__init__(inner)
        self.ready: list[Frame] = []

    async def receive(self) -> Frame:
        if not self.ready:
            self.ready.append(await self.inner.receive())
            with anyio.move_on_after(0.01):
                while True:
                    try:
                        self.ready.append(await self.inner.receive())
                    except anyio.EndOfStream:
                        break
        return self.ready.pop()  # the newest first


class BrokenByCancellation(Wrapped):
    async def receive(self) -> Frame:
        try:
            return await self.inner.receive()
        except anyio.get_cancelled_exc_class():
            await self.inner.aclose()  # as a client that drops the connection on cancel
            raise


class NoEndOfStream(Wrapped):
    async def receive(self) -> Frame:
        try:
            return await self.inner.receive()
        except anyio.EndOfStream:
            raise anyio.ClosedResourceError from None


class ForeignErrors(Loopback):
    @asynccontextmanager
    async def connect(
        self, target: Target, options: ConnectOptions = ConnectOptions()
    ) -> AsyncIterator[Upstream]:
        if target != TARGET:
            raise ConnectionRefusedError(111, "Connection refused")
        async with super().connect(target) as upstream:
            yield upstream


class SwallowsSendErrors(Wrapped):
    async def send(self, frame: Frame) -> None:
        with contextlib.suppress(Exception):  # "best effort": the caller never learns
            await self.inner.send(frame)


def variant(stream: type[Wrapped]) -> Loopback:
    return type(f"With{stream.__name__}", (Loopback,), {"stream": stream})()


def check(plugin: Any) -> CheckReport:
    return check_transport_sync(plugin, target=TARGET, deadline=3, raise_on_failure=False)


def test_a_correct_transport_passes_every_property() -> None:
    report = check(Loopback())
    assert report.passed == PROPERTIES, str(report)
    assert "plugin" in str(report)


@pytest.mark.parametrize(
    ("plugin", "failed"),
    [
        (variant(Gluing), {"framing", "record/replay"}),  # glued frames record as raw
        (variant(Reversing), {"ordering", "framing"}),  # the greeting came last
        (variant(BrokenByCancellation), {"cancellation"}),
        (variant(NoEndOfStream), None),  # every property that reads to the end
        (ForeignErrors(), {"error conversion"}),
        (variant(SwallowsSendErrors), {"error conversion", "end of stream"}),
    ],
    ids=[
        "glued frames",
        "reordered",
        "broken by cancellation",
        "no EndOfStream",
        "OSError",
        "silent send",
    ],
)
def test_each_fault_fails_the_property_it_breaks(plugin: Any, failed: set[str] | None) -> None:
    report = check(plugin)
    names = {r.property for r in report.failed}
    if failed is None:
        assert "end of stream" in names, str(report)
        assert any("ClosedResourceError" in r.detail for r in report.failed), str(report)
    else:
        assert names == failed, str(report)


def test_failure_reasons_say_what_to_do() -> None:
    details = {r.property: r.detail for r in check(ForeignErrors()).failed}
    assert "ConnectionRefusedError" in details["error conversion"]
    assert "raise TransportError(...) from exc" in details["error conversion"]
    details = {r.property: r.detail for r in check(variant(Gluing)).failed}
    assert "a frame is one message" in details["framing"]


def test_a_failed_check_raises_an_assertion_error_naming_the_property() -> None:
    with pytest.raises(AssertionError, match="fails: framing") as raised:
        check_transport_sync(variant(Gluing), target=TARGET, deadline=3)
    assert isinstance(raised.value, TransportCheckError)
    assert raised.value.report.failed[0].property == "framing"


def test_the_plugins_shape_is_checked() -> None:
    class Nameless(Loopback):
        name = ""

    class NarrowFront(Loopback):
        async def serve_sessions(self, recording: Any, *, port: int = 0) -> None:
            raise NotImplementedError

    async def both() -> tuple[CheckReport, CheckReport]:
        first = await check_transport(Nameless(), raise_on_failure=False)
        second = await check_transport(NarrowFront(), raise_on_failure=False)
        return first, second

    nameless, narrow = anyio.run(both)
    assert "`name` class attribute" in nameless.failed[0].detail
    assert "`serve_sessions` must take (sessions, options)" in narrow.failed[0].detail
    skipped = {r.property for r in nameless.skipped}
    assert skipped == set(PROPERTIES) - {"plugin", "error conversion"}


def test_a_registered_name_must_match_and_be_listed() -> None:
    report = check_transport_sync("no-such-transport", raise_on_failure=False)
    assert report.failed[0].property == "plugin"
    assert "UnknownTransportError" in report.failed[0].detail
