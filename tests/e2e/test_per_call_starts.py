"""A client that starts the stdio server once per call, recorded by a plain ``record`` and
replayed by a plain ``replay``: langchain-mcp-adapters in its default mode (from
tests/clients/.venv-mcp1) and an SDK client that starts its server twice.

The server (tests/servers/starts_server.py) answers ``visit`` with how often it was
started, so a replay that served the wrong start answers with the wrong number.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cassette import Cassette
from cassette.core.replay.starts import count_starts, start_of
from tests.helpers.support import (
    MODERN_SERVER,
    OFFLINE_ENV,
    PY,
    ROOT,
    Background,
    run,
    scaled,
    stdio_params,
)

pytestmark = pytest.mark.e2e

STARTS_SERVER = ROOT / "tests" / "servers" / "starts_server.py"
MCP1_PY = ROOT / "tests" / "clients" / ".venv-mcp1" / "bin" / "python"
LANGCHAIN = ROOT / "tests" / "clients" / "langchain_per_call.py"
needs_langchain = pytest.mark.skipif(
    not MCP1_PY.exists(), reason="tests/clients/.venv-mcp1 (langchain-mcp-adapters) is missing"
)
#: what the langchain run sees live: tools listed by start 1, a call per start after it
LIVE = {"tools": ["echo", "visit"], "calls": ["start 2", "echo: hi", "start 4"]}


#: the starts server numbers its starts, and the recorder's probes start it again beside a
#: recording: where the numbers are what a test checks, it records without them
UNPROBED = ("--no-probe",)


def langchain(*target: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    done = subprocess.run(
        [str(MCP1_PY), str(LANGCHAIN), *target],
        capture_output=True,
        text=True,
        timeout=scaled(120),
        check=False,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def cassette(*args: str) -> list[str]:
    return [PY, "-m", "cassette", *args]


def server(counter: Path) -> list[str]:
    return [PY, str(STARTS_SERVER), str(counter)]


@needs_langchain
def test_langchain_per_call_records_every_start_and_replays_them_in_order(
    tmp_path: Path,
) -> None:
    assert langchain(*server(tmp_path / "live.count")) == LIVE
    tape = tmp_path / "per-call.jsonl"
    record = cassette("record", "-o", str(tape), *UNPROBED, "--", *server(tmp_path / "rec.count"))
    assert langchain(*record) == LIVE

    recorded = Cassette.load(tape)
    assert count_starts(recorded.events) == 4
    opened = [start_of(e) for e in recorded.events if e.kind == "message"]
    assert opened[0] is None
    assert opened[-1] == 4
    assert not list(tmp_path.glob("per-call.*.jsonl"))  # no numbered sibling

    # stdio: every start of the client's run takes the next start of the cassette
    replay = cassette("replay", str(tape))
    assert langchain(*replay, env=OFFLINE_ENV) == LIVE
    assert langchain(*replay) == LIVE  # a second run of the flow begins at start 1 again

    # CI: the record command told to replay only (mode none; the SDK 1.x stdio client
    # passes its server no MCP_CASSETTE_MODE) serves the starts in order too
    counter = tmp_path / "rec.count"
    counter.unlink()
    replay_only = cassette("record", "--mode", "none", *record[4:])
    assert langchain(*replay_only, env=OFFLINE_ENV) == LIVE
    assert not counter.exists()  # no server was started

    # streamable HTTP: each client session is the next start
    front = Background(cassette("replay", str(tape), "--front", "http", "--port", "0"))
    with front:
        url = front.wait_for(r"serving on (http://127\.0\.0\.1:\d+/mcp)").group(1)
        assert langchain(url) == LIVE


def test_an_sdk_client_that_starts_the_server_twice_is_recorded_as_two_starts(
    tmp_path: Path,
) -> None:
    tape = tmp_path / "twice.jsonl"

    async def twice(command: list[str]) -> list[str]:
        from mcp import Client

        out = []
        for _ in range(2):
            async with Client(stdio_params(command)) as client:
                result = await client.call_tool("visit", {})
                out.append(result.content[0].text)  # type: ignore[union-attr]
        return out

    record = cassette("record", "-o", str(tape), *UNPROBED, "--", *server(tmp_path / "c"))
    assert run(lambda: twice(record)) == ["start 1", "start 2"]
    assert count_starts(Cassette.load(tape).events) == 2
    assert run(lambda: twice(cassette("replay", str(tape)))) == ["start 1", "start 2"]


async def overlapping(command: list[str], first_ends_first: bool) -> list[str]:
    """Two sessions of the SDK's stdio client, the second started while the first is
    still open (a discovery probe process, then the session, as the OpenAI Agents SDK
    for TypeScript does); each calls ``visit``. ``first_ends_first``: the first session
    closes before the second, else after it."""
    import anyio
    from mcp import Client

    out: dict[int, str] = {}
    opened = [anyio.Event(), anyio.Event()]
    close = [anyio.Event(), anyio.Event()]
    closed = [anyio.Event(), anyio.Event()]

    async def one(index: int) -> None:
        async with Client(stdio_params(command)) as client:
            result = await client.call_tool("visit", {})
            out[index] = result.content[0].text  # type: ignore[union-attr]
            opened[index].set()
            await close[index].wait()
        closed[index].set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(one, 0)
        await opened[0].wait()
        tg.start_soon(one, 1)
        await opened[1].wait()
        order = (0, 1) if first_ends_first else (1, 0)
        for index in order:  # one closed and its recorder gone before the other closes
            close[index].set()
            await closed[index].wait()
    return [out[0], out[1]]


@pytest.mark.parametrize("first_ends_first", [True, False], ids=["first-ends-first", "last"])
def test_starts_that_overlap_are_starts_of_the_same_run(
    tmp_path: Path, first_ends_first: bool
) -> None:
    tape = tmp_path / "overlap.jsonl"
    # the server numbers its starts: no start of the recorder's own beside the client's
    record = cassette("record", "-o", str(tape), "--no-probe", "--", *server(tmp_path / "c"))
    seen = run(lambda: overlapping(record, first_ends_first))
    assert seen == ["start 1", "start 2"]
    events = Cassette.load(tape).events
    assert count_starts(events) == 2
    assert [start_of(e) for e in events if e.kind == "message"][-1] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "overlap.jsonl"]  # nothing else
    # replayed the same way, each start is served the session recorded for it
    assert run(lambda: overlapping(cassette("replay", str(tape)), first_ends_first)) == seen


def test_a_miss_in_a_later_start_says_the_client_restarted_the_server(tmp_path: Path) -> None:
    tape = tmp_path / "miss.jsonl"

    async def calls(command: list[str], names: list[str]) -> list[str]:
        from mcp import Client

        out = []
        for name in names:
            async with Client(stdio_params(command)) as client:
                try:
                    result = await client.call_tool(name, {"text": name})
                    out.append(result.content[0].text)  # type: ignore[union-attr]
                except Exception as exc:  # the replay's miss error reaches the client
                    out.append(str(exc))
        return out

    record = cassette("record", "-o", str(tape), *UNPROBED, "--", *server(tmp_path / "c"))
    assert run(lambda: calls(record, ["visit", "echo"])) == ["start 1", "echo: echo"]
    log = tmp_path / "replay.log"
    replay = cassette("replay", str(tape), "--log", str(log))
    seen = run(lambda: calls(replay, ["visit", "unknown"]))
    assert seen[0] == "start 1"
    assert "served from start 2 of 2: the client started the server again" in seen[1]
    text = log.read_text()
    assert "miss:" in text
    assert "meta.start = N" in text


def test_a_modern_client_per_call_is_served_start_by_start_over_http(tmp_path: Path) -> None:
    """2026-07-28 clients of the HTTP front share its session-less session: a client that
    connects again (its ``server/discover``) is served the next start there."""
    tape = tmp_path / "modern.jsonl"

    async def adds(target: Any) -> list[Any]:
        from mcp import Client

        out = []
        for a in (2, 4):
            async with Client(target() if callable(target) else target) as client:
                assert client.protocol_version == "2026-07-28"
                out.append((await client.call_tool("add", {"a": a, "b": 3})).structured_content)
        return out

    record = cassette("record", "-o", str(tape), "--", PY, str(MODERN_SERVER))
    live = run(lambda: adds(lambda: stdio_params(record)))
    assert count_starts(Cassette.load(tape).events) == 2
    front = Background(cassette("replay", str(tape), "--front", "http", "--port", "0"))
    with front:
        url = front.wait_for(r"serving on (http://127\.0\.0\.1:\d+/mcp)").group(1)
        assert run(lambda: adds(url)) == live
