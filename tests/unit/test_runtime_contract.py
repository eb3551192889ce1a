"""The runtime redesign's promises, checked: the layers hold (and the contract fails an
upward import), no plugin is probed with getattr/hasattr, a third-party transport written
to the Protocols alone works with every option set, every responder goes through the one
serve path, and the old import paths still work, with a warning."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import anyio
import attrs
import pytest

from cassette import (
    Cassette,
    ClientConnection,
    ConnectOptions,
    DeliveryPolicy,
    Frame,
    FrameServer,
    ServeOptions,
    Target,
    TransportError,
    UpstreamConnector,
    serve,
)
from cassette.core.replay.pacing import Pacing
from cassette.core.replay.sessions import ReplayPool
from cassette.mock import MockServer
from cassette.transport import FrameStream, Handler, Upstream
from cassette.transports.memory import MemoryFrameStream, memory_pair
from tests.helpers.support import ROOT, run, scaled

EXAMPLE = ROOT / "examples" / "everything.jsonl"
INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}


def ping(padding: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"p": "x" * padding}}


# -- the layers ----------------------------------------------------------------------------


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--no-cache", "--config", str(tree / "pyproject.toml")],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
    )


def _copy_of_the_tree(tmp_path: Path, *packages: str) -> Path:
    """The packages (default: ``cassette``) and pyproject.toml, copied to break at will."""
    tree = tmp_path / "tree"
    for package in packages or ("cassette",):
        ignore = shutil.ignore_patterns("*.pyc")
        shutil.copytree(ROOT / package, tree / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tree / "pyproject.toml")
    return tree


def test_the_import_contract_holds_and_fails_on_an_upward_import(tmp_path: Path) -> None:
    tree = _copy_of_the_tree(tmp_path)
    kept = lint_imports(tree)
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert "Contracts: 8 kept, 0 broken." in kept.stdout

    ids = tree / "cassette" / "core" / "wire" / "ids.py"  # the ground floor reaches the top
    ids.write_text(ids.read_text() + "\nimport cassette.runtime.serve  # an upward import\n")
    broken = lint_imports(tree)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "cassette.core is not allowed to import cassette.runtime" in broken.stdout
    assert "The sans-IO core imports no I/O library BROKEN" in broken.stdout  # anyio, via it


def test_the_core_floors_fail_on_an_upward_or_a_sideways_import(tmp_path: Path) -> None:
    """Inside ``cassette.core`` a room imports only the floors below it (pyproject.toml's
    ``layers`` contract on ``cassette.core``): the wire reaching up to the replay, or the
    eras reaching across to redaction on their own floor, each breaks it."""
    tree = _copy_of_the_tree(tmp_path)
    core = tree / "cassette" / "core"
    ids = core / "wire" / "ids.py"
    ids.write_text(ids.read_text() + "\nimport cassette.core.replay.matching  # upward\n")
    fits = core / "eras" / "fits.py"
    fits.write_text(fits.read_text() + "\nimport cassette.core.redaction.redacted  # sideways\n")
    broken = lint_imports(tree)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "The core's floors: each room imports only the rooms below it BROKEN" in broken.stdout
    assert "cassette.core.wire is not allowed to import cassette.core.replay" in broken.stdout
    assert "cassette.core.eras is not allowed to import cassette.core.redaction" in broken.stdout


def test_the_library_may_never_import_its_front_door(tmp_path: Path) -> None:
    """``cassette_mcp`` checks that ``import cassette`` is ours before anything of it runs;
    the library importing it back would tie the two (and break that order)."""
    tree = _copy_of_the_tree(tmp_path, "cassette", "cassette_mcp")
    registry = tree / "cassette" / "registry.py"
    registry.write_text(registry.read_text() + "\nimport cassette_mcp._install\n")
    broken = lint_imports(tree)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert "The library never imports its front door" in broken.stdout
    assert "cassette.registry -> cassette_mcp" in broken.stdout


def _lines_of_the_package(pattern: re.Pattern[str]) -> list[str]:
    """Every line of ``cassette`` that ``pattern`` finds, as ``path:line: text``."""
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "cassette").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line)
    ]


def test_a_served_session_is_reached_by_capability_never_by_its_class() -> None:
    """The runtime asks a served session what it can do (``AnswersAtOnce``), as it asks a
    plugin, so any session (the fault overlay, a mock's, a plugin's) keeps every path."""
    concrete = re.compile(
        r"isinstance\([^()]*,\s*\(?[^()]*\b(?:PolicyServedSession|FaultedSession)\b"
    )
    assert _lines_of_the_package(concrete) == []
    from cassette.runtime.conversation import PolicyServedSession
    from cassette.runtime.faults import FaultedSession
    from cassette.runtime.policy import AnswersAtOnce

    wanted = {"always_at_once", "receive_now", "receive_data_now"}
    assert wanted <= set(dir(PolicyServedSession))
    assert not wanted & set(dir(FaultedSession))  # awaited through receive, whatever it wraps
    assert wanted == {n for n in dir(AnswersAtOnce) if not n.startswith("_")}


def test_no_plugin_is_probed_with_getattr_or_hasattr() -> None:
    """What a plugin can do is chosen with isinstance against the Protocols, never probed."""
    probing = re.compile(r"\b(?:getattr|hasattr)\((?:self\.)?(?:plugin|transport|front|app)\b")
    assert _lines_of_the_package(probing) == []


# -- a third-party transport, written to the Protocols alone -------------------------------


class PipeStream:
    """A frame stream over one memory pair end, as a plugin author would write it."""

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


class PipeTransport:
    """Serves clients that ``dial`` connects, and reaches nothing: a ``FrameServer``. It
    records every option value it was handed, to show it got them whole."""

    name: ClassVar[str] = "pipe"

    def __init__(self) -> None:
        self.options: list[ServeOptions] = []
        self._clients: list[MemoryFrameStream] = []
        self._arrived = anyio.Event()

    async def dial(self) -> ClientConnection:
        client, server = memory_pair()
        self._clients.append(server)
        self._arrived.set()
        return ClientConnection(client)

    async def serve(self, handler: Handler, options: ServeOptions) -> None:
        self.options.append(options)
        if options.on_ready is not None:
            options.on_ready("pipe:")
        await self._arrived.wait()
        await handler(PipeStream(self._clients[0]))


def test_a_third_party_frame_server_works_with_every_option_set() -> None:
    plugin = PipeTransport()
    assert isinstance(plugin, FrameServer)
    assert not isinstance(plugin, UpstreamConnector)
    ready: list[str] = []
    misses: list[str] = []
    warnings: list[str] = []
    finished: list[Any] = []
    options = ServeOptions(
        host="127.0.0.1", port=0, max_message_bytes=10_000, on_ready=ready.append
    )
    policy = DeliveryPolicy(
        on_miss=misses.append,
        on_warning=warnings.append,
        answer_timeout=5.0,
        pacing=Pacing(scale=0.01, cap=0.05),
        max_message_bytes=2_000,
    )

    async def go() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        responders = ReplayPool(Cassette.load(EXAMPLE), "strict")
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: serve(
                    plugin,
                    responders,
                    options=options,
                    policy=attrs.evolve(policy, on_finish=finished.append),
                )
            )
            conn = await plugin.dial()
            init = await conn.request("initialize", INIT)
            missed = await conn.request("tools/call", {"name": "nope", "arguments": {}})
            await conn.send(
                {"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"p": "x" * 3_000}}
            )
            big = await conn.receive()  # refused unread: an error with a null id
            await conn.send_eof()
        return init, missed, big

    init, missed, big = run(go, timeout=30)
    assert init["result"]["serverInfo"]["name"]
    assert missed["error"]["code"] == -32099
    assert big["error"]["code"] == -32600  # the policy's limit, also handed to the plugin
    assert ready == ["pipe:"]
    assert plugin.options[0].max_message_bytes == 2_000
    assert plugin.options[0].host == "127.0.0.1"
    assert len(misses) == 1
    assert "nope" in misses[0]
    assert len(finished) == 1
    assert "nope" in finished[0].summary


class EchoUpstream:
    """An upstream that answers every request with its own params (for ``connect``)."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []
        self._inbox, self._outbox = anyio.create_memory_object_stream[Frame](10)
        self.eof = False

    async def send(self, frame: Frame) -> None:
        if self.eof:
            raise TransportError("closed")
        message = json.loads(frame.data)
        if "id" in message:
            answer = {"jsonrpc": "2.0", "id": message["id"], "result": message.get("params", {})}
            await self._inbox.send(Frame(json.dumps(answer).encode() + b"\n"))

    async def receive(self) -> Frame:
        try:
            return await self._outbox.receive()
        except anyio.ClosedResourceError:
            raise anyio.EndOfStream from None

    async def send_eof(self) -> None:
        self.eof = True
        self._inbox.close()

    async def aclose(self) -> None:
        await self.send_eof()

    async def wait(self) -> int | None:
        return 0


class EchoConnector:
    """A third-party ``UpstreamConnector``: what a recording with its every option needs."""

    name: ClassVar[str] = "echo"

    def __init__(self) -> None:
        self.options: list[ConnectOptions] = []

    @asynccontextmanager
    async def connect(
        self,
        target: Target,
        options: ConnectOptions = ConnectOptions(),  # noqa: B008
    ) -> AsyncIterator[Upstream]:
        self.options.append(options)
        yield EchoUpstream()


def test_a_third_party_upstream_connector_records_with_every_option(tmp_path: Path) -> None:
    from cassette.runtime import RecordConfig, record_session

    plugin = EchoConnector()
    assert isinstance(plugin, UpstreamConnector)
    tape = tmp_path / "echo.jsonl"
    config = RecordConfig(
        path=tape,
        transport=plugin,
        overwrite=True,
        fsync=True,
        strategy="loose",
        passthrough_stderr=False,
        upstream_timeout=5.0,
        on_warning=print,
    )

    async def go() -> dict[str, Any]:
        client, end = memory_pair()
        async with anyio.create_task_group() as tg:
            tg.start_soon(record_session, Target(url="echo://x"), config, end)
            conn = ClientConnection(client)
            answer = await conn.request("initialize", INIT)
            await conn.send_eof()
        return answer

    answer = run(go, timeout=30)
    assert answer["result"] == INIT
    assert plugin.options[0].on_side_event is not None
    recorded = Cassette.load(tape)
    assert recorded.header.target == {"url": "echo://x", "strategy": "loose"}
    sent = [e for e in recorded.events if getattr(e, "dir", None) == "c2s"]
    session = [e.message.get("method") for e in sent if not (e.meta or {}).get("probe")]
    assert session == ["initialize"]  # the probes beside it, through the same plugin, apart
    assert len(plugin.options) > 1


# -- one serve path for every responder ----------------------------------------------------


def test_a_mock_goes_through_the_same_serve_path_and_policy() -> None:
    """A mock manifest is a responder like a replay: same limits, same miss reporting."""
    from cassette.transports.memory import MemoryTransport

    manifest = {"manifest": 1, "tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    memory = MemoryTransport()
    misses: list[str] = []

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        policy = DeliveryPolicy(on_miss=misses.append, max_message_bytes=300)
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: serve(memory, MockServer(manifest), policy=policy))
            conn = ClientConnection(memory.open_connection())
            missed = await conn.request("tools/call", {"name": "u", "arguments": {}})
            await conn.send(
                {"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"p": "x" * 400}}
            )
            big = await conn.receive()  # refused unread: an error with a null id
            await conn.send_eof()
            memory.stop()
        return missed, big

    missed, big = run(go, timeout=30)
    assert missed["error"]["code"] == -32099
    assert big["error"]["code"] == -32600
    assert len(misses) == 1


def test_a_front_that_serves_nobody_is_refused_with_one_line() -> None:
    from cassette import UsageError
    from cassette.runtime.serve import front_of

    class Nothing:
        name: ClassVar[str] = "nothing"

    with pytest.raises(UsageError, match="transport 'nothing' cannot serve clients"):
        front_of(Nothing())  # type: ignore[arg-type]


def test_the_streams_say_half_close_and_full_close() -> None:
    """``send_eof`` ends our side only: the peer sees the end and can still answer."""
    a, b = memory_pair()

    async def go() -> bytes:
        await a.send_eof()
        with pytest.raises(anyio.EndOfStream):
            await b.receive()
        await b.send(Frame(b"still heard\n"))
        data = (await a.receive()).data
        await a.aclose()
        with pytest.raises(TransportError):  # fully closed: nobody hears b any more
            await b.send(Frame(b"lost\n"))
        return data

    assert run(go) == b"still heard\n"
    assert isinstance(a, FrameStream)
