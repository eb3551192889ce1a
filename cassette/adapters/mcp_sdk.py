"""The official MCP Python SDK on a cassette, in this process: no subprocess, no port.

Needs the ``mcp`` extra (``pip install 'cassette-mcp[mcp]'``). Each function returns a
``CassetteTransport``, which is what the SDK calls a ``Transport``: an async context
manager whose value is the ``(read_stream, write_stream)`` pair of ``SessionMessage``
streams its ``ClientSession`` runs on. So it goes wherever the SDK takes a transport::

    from mcp import Client, ClientSession
    from cassette.adapters.mcp_sdk import cassette_transport, record_transport, replay_transport

    async with Client(replay_transport("tape.jsonl")) as client:      # replay only
        await client.call_tool("echo", {"message": "hi"})

    async with replay_transport("tape.jsonl") as (read, write):       # the low-level way
        async with ClientSession(read, write) as session:
            await session.initialize()

    async with Client(cassette_transport("tape.jsonl", ["node", "server.js"])) as client:
        ...                                      # MCP_CASSETTE_MODE, else once (record, replay)

How it works: the SDK's messages are serialised exactly as its stdio transport writes
them and handed, as frames, to the same session loops the command line runs (replay,
record, new_episodes); what those send back is validated into ``SessionMessage`` values
as the SDK's stdio transport reads them (a line that is not JSON-RPC reaches the session
as an exception value, as it would over stdio). A replay is therefore the very replay
``cassette replay`` serves, minus the pipe.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any, Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from cassette.core.replay.faults import FaultPlan, FaultRule
from cassette.core.replay.matching import Strategy
from cassette.errors import PluginLoadError, TransportClosedError
from cassette.modes.policy import ModeChoice, env_value, resolve_mode
from cassette.store.storage import Cassette
from cassette.transport import Frame, FrameStream

try:
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter
except ImportError as exc:  # pragma: no cover  (the test environment has the SDK)
    from cassette._install import install_command

    raise PluginLoadError(
        f"cassette.adapters.mcp_sdk needs the official MCP SDK: {install_command('mcp')}"
    ) from exc

__all__ = ["CassetteTransport", "cassette_transport", "record_transport", "replay_transport"]

#: How long leaving the transport waits for the session to finish (a recording winds its
#: server down: 5 s for it to exit, then a signal, then 2 s more) before cancelling it.
SHUTDOWN_TIMEOUT: Final = 15.0

#: What ``replay_transport(faults=...)`` takes: a plan, its rules (or their tables, as in
#: a plan file), or a plan file's path; ``None`` for no faults.
Faults = FaultPlan | Sequence[FaultRule | Mapping[str, Any]] | str | os.PathLike[str] | None

SessionRun = Callable[[FrameStream], Awaitable[Any]]
Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]


class _SdkSide:
    """The SDK's end of the streams, seen by a session loop as its client ``FrameStream``."""

    def __init__(
        self,
        to_sdk: MemoryObjectSendStream[SessionMessage | Exception],
        from_sdk: MemoryObjectReceiveStream[SessionMessage],
    ) -> None:
        self._to_sdk = to_sdk
        self._from_sdk = from_sdk

    async def receive(self) -> Frame:
        try:
            message = await self._from_sdk.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise anyio.EndOfStream from None
        text = message.message.model_dump_json(by_alias=True, exclude_unset=True)
        return Frame(text.encode("utf-8") + b"\n")

    async def send(self, frame: Frame) -> None:
        for line in frame.data.splitlines():
            if not line.strip():
                continue
            item: SessionMessage | Exception
            try:
                item = SessionMessage(jsonrpc_message_adapter.validate_json(line, by_name=False))
            except ValueError as exc:
                item = exc
            try:
                await self._to_sdk.send(item)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                raise TransportClosedError("the SDK client closed its session") from exc

    async def send_eof(self) -> None:
        """The session is over: the SDK reads the end of its stream."""
        await self._to_sdk.aclose()

    async def aclose(self) -> None:
        await self._to_sdk.aclose()
        await self._from_sdk.aclose()


class CassetteTransport(AbstractAsyncContextManager[Streams]):
    """An SDK ``Transport`` whose server is a cassette session running in this process.

    ``misses`` lists each request the cassette could not answer, as it happens (the
    client also gets each one as a JSON-RPC error); ``result`` is the session's result
    once the transport is left. An error that ends the session (a missing cassette, a
    server that cannot start) is raised when the transport is left, so it is not lost
    behind the SDK's "connection closed".
    """

    def __init__(self, run: Callable[[FrameStream, CassetteTransport], Awaitable[Any]]):
        self._run = run
        self.misses: list[str] = []
        self.result: Any = None
        self._error: BaseException | None = None
        self._cm: AbstractAsyncContextManager[Streams] | None = None

    def _miss(self, text: str) -> None:
        self.misses.append(text)

    async def _serve(self, side: _SdkSide, done: anyio.Event) -> None:
        try:
            self.result = await self._run(side, self)
        except Exception as exc:  # kept for __aexit__; the SDK sees its stream end
            self._error = exc
        finally:
            await side.aclose()
            done.set()

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Streams]:
        to_sdk, sdk_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        sdk_writes, from_sdk = anyio.create_memory_object_stream[SessionMessage](0)
        done = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._serve, _SdkSide(to_sdk, from_sdk), done)
            try:
                yield sdk_reads, sdk_writes
            finally:
                await sdk_writes.aclose()  # the client is done: the session sees end of stream
                with anyio.move_on_after(SHUTDOWN_TIMEOUT, shield=True):
                    await done.wait()
                tg.cancel_scope.cancel()
                for stream in (sdk_reads, from_sdk, to_sdk):
                    await stream.aclose()

    async def __aenter__(self) -> Streams:
        self._cm = self._connect()
        return await self._cm.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        cm, self._cm = self._cm, None
        try:
            if cm is not None:
                await cm.__aexit__(exc_type, exc, tb)
        finally:
            # The session's own error is the cause of whatever the SDK raised ("connection
            # closed"): it is what a person needs to see, with the SDK's as its context.
            if self._error is not None:
                error, self._error = self._error, None
                raise error
        return None


def replay_transport(
    cassette: Cassette | str | os.PathLike[str],
    *,
    strategy: str | Strategy | None = None,
    faults: Faults = None,
) -> CassetteTransport:
    """Replay ``cassette`` to the SDK; nothing is started, nothing is written.

    ``faults`` lays a fault plan over the replay (docs/faults.md): a ``FaultPlan``, rule
    tables, or a plan file's path. The SDK meets each fault as it meets the real one
    in-process: a ``timeout`` times out, an ``error`` is an ``MCPError``, a
    ``disconnect`` ends its stream; an ``exit`` also raises ``FaultExit`` (with the
    plan's code) when the transport is left, as a crashed server is an error.

    The cassette and the plan are read now, so a missing or malformed one fails here, not
    mid-session.
    """
    from cassette.runtime.conversation import DeliveryPolicy
    from cassette.runtime.replay_pool import ReplayOptions, replay_pool
    from cassette.runtime.serve import replay

    # in process, as on the memory transport: each session from the first server start
    pool = replay_pool(cassette, ReplayOptions(strategy=strategy, transport="memory"))
    plan = _fault_plan(faults)

    async def run(side: FrameStream, transport: CassetteTransport) -> Any:
        policy = DeliveryPolicy(on_miss=transport._miss, faults=plan)
        return await replay(side, pool.new(), policy)

    return CassetteTransport(run)


def _fault_plan(
    faults: Faults,
) -> FaultPlan | None:
    """A plan from what a caller may hand over: a plan, rule tables or a file's path."""
    if faults is None or isinstance(faults, FaultPlan):
        return faults
    if isinstance(faults, str | os.PathLike):
        from cassette.store.faults import load_fault_plan

        return load_fault_plan(faults)
    return FaultPlan.of(faults)


def record_transport(
    command: Sequence[str],
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    strategy: str | None = None,
    transport: str = "stdio",
) -> CassetteTransport:
    """Start ``command`` and record the SDK's session with it to ``path``.

    Like ``cassette record``: a non-empty ``path`` is refused unless ``overwrite``.
    """
    from cassette.runtime.record import RecordConfig, record_session
    from cassette.transport import Target

    target = Target(command=tuple(command))

    async def run(side: FrameStream, _transport: CassetteTransport) -> Any:
        config = RecordConfig(
            path=path,
            transport=transport,
            overwrite=overwrite,
            strategy=strategy,
            passthrough_stderr=False,
        )
        return await record_session(target, config, side)

    return CassetteTransport(run)


def cassette_transport(
    path: str | os.PathLike[str],
    command: Sequence[str],
    *,
    mode: str | None = None,
    strategy: str | None = None,
    on_info: Callable[[str], None] | None = None,
) -> CassetteTransport:
    """Record, replay or extend ``path`` as the record mode says (``cassette.modes.policy``).

    The mode is ``mode``, else ``MCP_CASSETTE_MODE``, else ``once``. Under ``none`` a
    missing cassette fails here, naming the path and the mode, and nothing is started.
    """
    from cassette.modes.runner import ModeOptions, run_mode
    from cassette.runtime.conversation import DeliveryPolicy
    from cassette.store.storage import has_recording
    from cassette.transport import Target

    choice: ModeChoice = resolve_mode(("mode=", mode), env_value())
    if choice.mode == "none" and not has_recording(path):
        from cassette.errors import CassetteNotFoundError
        from cassette.modes.policy import missing_cassette_message

        raise CassetteNotFoundError(missing_cassette_message(path, choice))

    async def run(side: FrameStream, transport: CassetteTransport) -> Any:
        warn = None if on_info is None else (lambda text: on_info(f"warning: {text}"))
        options = ModeOptions(
            target=Target(command=tuple(command)),
            strategy=strategy,
            passthrough_stderr=False,
            policy=DeliveryPolicy(on_miss=transport._miss, on_warning=warn),
            on_info=on_info,
        )
        return await run_mode(path, choice, options, client=side)

    return CassetteTransport(run)
