"""A cassette recorded with ``cassette record --strategy strict`` replays strictly through
every door, as ``cassette replay`` replays it: the strategy (given, else the recorded one,
else ``default``) is decided in one place, ``replay_pool``. ``serve_replay`` used to
replay it with ``default``, answering a second ``tools/list`` a strict replay refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from cassette import (
    Cassette,
    ClientConnection,
    DeliveryPolicy,
    ReplayOptions,
    ReplayPool,
    open_replay,
    replay_sessions,
    serve_replay,
)
from cassette.transports.memory import MemoryTransport
from tests.helpers.support import PY, ROOT, LineClient, record_command, replay_command, run

pytestmark = pytest.mark.e2e

NOTES = [PY, str(ROOT / "examples" / "notes_server.py")]
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "line-client", "version": "0"},
}


@pytest.fixture
def strict_tape(tmp_path: Path) -> Path:
    """The notes server, recorded with ``--strategy strict``: one ``tools/list``."""
    path = tmp_path / "notes.jsonl"
    client = LineClient(record_command(path, NOTES, "--strategy", "strict"))
    client.initialize()
    assert "result" in client.request("tools/list")
    code, err = client.finish()
    assert code == 0, err
    assert Cassette.load(path).header.target["strategy"] == "strict"
    return path


def _second_listing_by_the_command_line(tape: Path) -> tuple[dict[str, Any], int]:
    client = LineClient(replay_command(tape))
    client.initialize()
    assert "result" in client.request("tools/list")
    again = client.request("tools/list")
    code, _err = client.finish()
    return again, code


async def _listings(conn: ClientConnection) -> dict[str, Any]:
    """initialize, then ``tools/list`` twice: the second answer (a strict replay's miss)."""
    await conn.request("initialize", INIT)
    await conn.notify("notifications/initialized")
    assert "result" in await conn.request("tools/list")
    return await conn.request("tools/list")


async def _second_listing_by_serve_replay(
    tape: Path | Cassette, options: ReplayOptions
) -> tuple[dict[str, Any], list[str]]:
    front = MemoryTransport()
    missed: list[str] = []
    options = ReplayOptions(
        strategy=options.strategy, transport=front, policy=DeliveryPolicy(on_miss=missed.append)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(serve_replay, tape, options)
        conn = ClientConnection(front.open_connection())
        again = await _listings(conn)
        await conn.aclose()
        tg.cancel_scope.cancel()
    return again, missed


def test_serve_replay_replays_a_strict_recording_strictly_as_the_command_line(
    strict_tape: Path,
) -> None:
    by_cli, code = _second_listing_by_the_command_line(strict_tape)
    assert code == 1
    assert "played already (strategy strict" in by_cli["error"]["message"]

    for tape in (strict_tape, Cassette.load(strict_tape)):  # a path, and a loaded cassette
        again, missed = run(
            lambda tape=tape: _second_listing_by_serve_replay(tape, ReplayOptions())
        )
        assert again["error"] == by_cli["error"]  # the very miss the command line sent
        assert len(missed) == 1

    # what made it strict is the recording: a strategy given is still the one used
    given = ReplayOptions(strategy="default")
    again, missed = run(lambda: _second_listing_by_serve_replay(strict_tape, given))
    assert "result" in again
    assert missed == []


def test_the_harness_and_an_asgi_apps_sessions_honour_it_too(strict_tape: Path) -> None:
    async def by_open_replay() -> dict[str, Any]:
        async with open_replay(strict_tape) as conn:
            return await _listings(conn)

    assert "played already (strategy strict" in run(by_open_replay)["error"]["message"]
    pool = replay_sessions(strict_tape).responders
    assert isinstance(pool, ReplayPool)
    assert pool.strategy.name == "strict"
