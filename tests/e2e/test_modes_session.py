"""Record modes end to end in-process: a harness connection, a real stdio server (the
standard-library episode server, which logs every start), and the files it leaves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from cassette import Cassette, ClientConnection, MessageEvent
from cassette.errors import CassetteNotFoundError, TransportError
from cassette.modes.policy import Action, ModeChoice
from cassette.modes.runner import ModeOptions, ModeResult, run_mode
from cassette.runtime.conversation import DeliveryPolicy
from cassette.transport import Target
from cassette.transports.memory import memory_pair
from tests.helpers.support import PY, ROOT, client_starts, run

SERVER = ROOT / "tests" / "servers" / "episode_server.py"
INIT = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "harness", "version": "1"},
}
Script = Callable[[ClientConnection], Awaitable[Any]]


def server(log: Path, tag: str = "live") -> list[str]:
    return [PY, str(SERVER), "--log", str(log), "--tag", tag]


def starts(log: Path) -> int:
    return client_starts(log)  # the recorder's probes apart


async def handshake(conn: ClientConnection) -> None:
    await conn.request("initialize", INIT)
    await conn.notify("notifications/initialized")


def text_of(reply: dict[str, Any]) -> str:
    return str(reply["result"]["content"][0]["text"])


def session(
    path: Path, command: list[str], mode: str, script: Script
) -> tuple[ModeResult, Any, list[str]]:
    """Run ``script`` as the client of one session in ``mode``."""
    infos: list[str] = []

    async def scenario() -> tuple[ModeResult, Any]:
        harness, end = memory_pair()
        results: list[ModeResult] = []

        async def serve() -> None:
            results.append(
                await run_mode(
                    path,
                    ModeChoice(mode),  # type: ignore[arg-type]
                    ModeOptions(
                        target=Target(command=tuple(command)),
                        passthrough_stderr=False,
                        policy=DeliveryPolicy(
                            on_warning=lambda text: infos.append(f"warning: {text}")
                        ),
                        on_info=infos.append,
                    ),
                    client=end,
                )
            )

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                out = await script(ClientConnection(harness))
                await harness.aclose()
        except BaseExceptionGroup as group:  # the session's own error, as a caller sees it
            if len(group.exceptions) == 1:
                raise group.exceptions[0] from None
            raise
        return results[0], out

    result, out = run(scenario, timeout=60)
    return result, out, infos


async def echo_a(conn: ClientConnection) -> list[str]:
    await handshake(conn)
    return [text_of(await conn.request("tools/call", {"name": "echo", "arguments": {"text": "a"}}))]


async def echo_a_then_b(conn: ClientConnection) -> list[Any]:
    await handshake(conn)
    a = await conn.request("tools/call", {"name": "echo", "arguments": {"text": "a"}})
    b = await conn.request("tools/call", {"name": "echo", "arguments": {"text": "b"}})
    count = await conn.request("tools/call", {"name": "count", "arguments": {}})
    return [a, b, count]


def test_once_records_a_missing_cassette_then_replays_it(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    first, out, infos = session(tape, server(log), "once", echo_a)
    assert first.action is Action.RECORD
    assert out == ["live:a"]
    assert starts(log) == 1
    assert any("is missing; recording it" in i for i in infos)

    second, again, _ = session(tape, server(log), "once", echo_a)
    assert second.action is Action.REPLAY
    assert again == out
    assert starts(log) == 1  # nothing went live


def test_none_on_a_missing_cassette_starts_nothing_and_names_path_and_mode(
    tmp_path: Path,
) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    with pytest.raises(CassetteNotFoundError) as info:
        session(tape, server(log), "none", echo_a)
    assert str(tape) in str(info.value)
    assert "mode none" in str(info.value)
    assert not tape.exists()
    assert starts(log) == 0


def test_new_episodes_replays_without_starting_the_server_when_nothing_misses(
    tmp_path: Path,
) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    session(tape, server(log), "once", echo_a)
    size = tape.stat().st_size
    result, out, _ = session(tape, server(log), "new_episodes", echo_a)
    assert result.action is Action.EXTEND
    assert out == ["live:a"]
    assert result.appended == ()
    assert starts(log) == 1  # only the recording started it: lazily means not at all here
    assert tape.stat().st_size == size


def test_new_episodes_sends_a_miss_to_the_server_and_appends_it(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    session(tape, server(log), "once", echo_a)
    result, (a, b, count), infos = session(tape, server(log, "v2"), "new_episodes", echo_a_then_b)
    assert text_of(a) == "live:a"  # from the cassette
    assert text_of(b) == "v2:b"  # from the server, started for it
    # the server got a handshake of its own (with this client's initialize) before the call,
    # and answered only what the cassette lacked
    assert text_of(count) == "2 call(s), initialized by harness"
    assert (b["id"], count["id"]) == (3, 4)  # the client's ids, not the live leg's
    assert result.misses == ()
    assert result.appended == ('tools/call "echo"', 'tools/call "count"')
    assert starts(log) == 2
    assert any("appended 2 new episode(s)" in i for i in infos)

    appended = Cassette.load(tape).events[-4:]
    assert all(isinstance(e, MessageEvent) for e in appended)
    messages = [e.message for e in appended if isinstance(e, MessageEvent)]
    assert [m.get("method") for m in messages] == ["tools/call", None, "tools/call", None]
    assert messages[1]["id"] == messages[0]["id"] == 3

    # the next run needs no server at all
    offline = [str(tmp_path / "no-such-server")]
    replayed, again, _ = session(tape, offline, "none", echo_a_then_b)
    assert replayed.misses == ()
    assert [text_of(r) for r in again] == ["live:a", "v2:b", "2 call(s), initialized by harness"]


def test_new_episodes_progress_tokens_are_the_clients_own(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    session(tape, server(log), "once", echo_a)

    def with_token(token: str) -> Script:
        async def script(conn: ClientConnection) -> Any:
            await handshake(conn)
            params = {"name": "progress", "arguments": {}, "_meta": {"progressToken": token}}
            reply = await conn.request("tools/call", params)
            return reply, conn.received

        return script

    _, (reply, received), _ = session(tape, server(log), "new_episodes", with_token("live-7"))
    assert text_of(reply) == "done"
    assert [m["params"]["progressToken"] for m in received] == ["live-7"]
    # replayed, the recorded notification carries the new run's token
    _, (_, received), _ = session(tape, server(log), "none", with_token("next-9"))
    assert [m["params"]["progressToken"] for m in received] == ["next-9"]


def test_new_episodes_without_a_server_answers_the_miss_and_never_hangs(tmp_path: Path) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    session(tape, server(log), "once", echo_a)
    broken = [str(tmp_path / "no-such-server")]
    result, (a, b, _), infos = session(tape, broken, "new_episodes", echo_a_then_b)
    assert text_of(a) == "live:a"
    assert b["error"]["code"] == -32099
    assert 'tools/call "echo" not recorded' in b["error"]["message"]
    assert len(result.misses) == 2  # the server is tried once; both calls are misses
    assert sum("could not answer" in i for i in infos) == 1


def test_all_replaces_a_cassette_and_keeps_it_when_the_server_cannot_start(
    tmp_path: Path,
) -> None:
    tape, log = tmp_path / "t.jsonl", tmp_path / "starts.log"
    session(tape, server(log, "old"), "once", echo_a)
    before = tape.read_bytes()
    with pytest.raises(TransportError):
        session(tape, [str(tmp_path / "no-such-server")], "all", echo_a)
    assert tape.read_bytes() == before  # a failed re-recording destroys nothing
    assert not list(tmp_path.glob(".t.jsonl.*"))  # and leaves nothing behind

    result, out, _ = session(tape, server(log, "new"), "all", echo_a)
    assert result.action is Action.RECORD
    assert out == ["new:a"]
    _, again, _ = session(tape, server(log), "none", echo_a)
    assert again == ["new:a"]
