"""Options are values: the keyword forms of earlier releases still work for one release,
with a ``DeprecationWarning`` naming the value to pass, and none of our own code (the
command line, the pytest plugin, the SDK adapter, the examples) uses them."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest

from cassette import Cassette, Header, MessageEvent, Replayer
from cassette.core.model import RecorderInfo
from cassette.errors import UsageError
from cassette.runtime.keywords import DEPRECATED, deprecated_keywords
from cassette.transport import Frame
from cassette.transports.memory import MemoryTransport, memory_pair
from tests.support import ROOT

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}}
PING = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n'
MISSING = b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}\n'

#: the functions whose keyword options are deprecated, and the keywords they still take
KEYWORD_FORMS = {
    "record": {"client"},
    "record_http": set(),
    "replay": {"policy"},
    "serve_replay": {"options"},
    "run_stdio": {"choice", "client"},
    "run_http": {"choice"},
    "run_mode": {"client"},
    "serve_mock": {"options"},
    "serve": {"options", "policy", "fallback"},
    "record_scenario": {"options"},
    "record_scenarios": {"options"},
    "verify_cassette": {"options"},
    "Extension": {"options"},
    "verify": {"options"},
    "snapshot": {"options"},
    "record_variant": {"options"},
}
#: methods of the same names that are no keyword forms (``mcp_cassette.verify(...)``,
#: an ASGI server's ``server.serve(sockets=...)``)
NOT_KEYWORD_FORMS = {"verify", "serve"}


def tape() -> Cassette:
    def ev(seq: int, d: str, m: dict[str, Any]) -> MessageEvent:
        return MessageEvent(t=seq / 10, dir=d, message=m, seq=seq)  # type: ignore[arg-type]

    return Cassette(
        Header(transport="stdio", recorder=RecorderInfo("t", "0"), started_at="x", era="legacy"),
        (
            ev(1, "c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INIT}),
            ev(2, "s2c", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-11-25"}}),
        ),
    )


async def _exchange(client: Any) -> list[bytes]:
    await client.send(Frame(PING))
    await client.send(Frame(MISSING))
    got = [(await client.receive()).data, (await client.receive()).data]
    await client.aclose()
    return got


def test_replay_with_keywords_warns_names_the_policy_and_still_works() -> None:
    from cassette.runtime.serve import replay

    missed: list[str] = []

    async def go() -> list[bytes]:
        client, server = memory_pair()

        async def serve() -> None:
            await replay(server, Replayer(tape()), on_miss=missed.append)

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(serve)
                return await _exchange(client)

    with pytest.warns(DeprecationWarning, match=r"replay\(on_miss=.*DeliveryPolicy") as caught:
        got = anyio.run(go)
    assert b'"id":1' in got[0]
    assert b'"id":2' in got[1]
    assert b"error" in got[1]
    assert len(missed) == 1
    assert "tools/list" in missed[0]
    assert caught[0].filename == __file__  # attributed to the caller's line


def test_serve_replay_with_keywords_warns_and_serves_as_the_value_form() -> None:
    from cassette.runtime.serve import serve_replay

    front = MemoryTransport()
    finished: list[int] = []

    async def go() -> list[bytes]:
        done = anyio.Event()

        def on_finish(result: Any) -> None:
            finished.append(len(result.misses))
            done.set()

        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve_replay(tape(), transport=front, on_finish=on_finish))
                # the front's accept queue is unbounded: a client may connect before it serves
                got = await _exchange(front.open_connection())
                await done.wait()
                tg.cancel_scope.cancel()
                return got

    with pytest.warns(DeprecationWarning, match=r"serve_replay\(transport=, on_finish=.*"):
        got = anyio.run(go)
    assert b'"id":1' in got[0]
    assert b"error" in got[1]
    assert finished == [1]


def test_serve_with_on_finish_warns_and_the_policy_hears_the_result() -> None:
    from cassette import DeliveryPolicy, ReplaySessions, serve

    front = MemoryTransport()
    heard: dict[str, list[int]] = {"keyword": [], "policy": []}

    async def go(keyword: bool) -> None:
        done = anyio.Event()
        into = heard["keyword" if keyword else "policy"]

        def on_finish(result: Any) -> None:
            into.append(len(result.misses))
            done.set()

        policy = DeliveryPolicy() if keyword else DeliveryPolicy(on_finish=on_finish)
        extra = {"on_finish": on_finish} if keyword else {}
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve(front, ReplaySessions(tape()), policy=policy, **extra))
                await _exchange(front.open_connection())
                await done.wait()
                tg.cancel_scope.cancel()

    with pytest.warns(DeprecationWarning, match=r"serve\(on_finish=.*DeliveryPolicy\(on_finish"):
        anyio.run(go, True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        anyio.run(go, False)
    assert heard == {"keyword": [1], "policy": [1]}


def test_serve_mock_with_keywords_warns_and_serves() -> None:
    from cassette.mock.serve import serve_mock

    manifest = {"manifest": 1, "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
    front = MemoryTransport()

    async def go() -> list[bytes]:
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                tg.start_soon(lambda: serve_mock(manifest, front=front, max_message_bytes=None))
                got = await _exchange(front.open_connection())
                tg.cancel_scope.cancel()
                return got

    with pytest.warns(DeprecationWarning, match=r"serve_mock\(front=, max_message_bytes=.*"):
        got = anyio.run(go)
    assert b'"id":1' in got[0]


def test_verify_cassette_maps_its_keywords_onto_the_value() -> None:
    from cassette.tools.verify import verify_cassette

    async def go() -> None:
        await verify_cassette(tape(), None, ignore=["/a"], time_limit=1.0)

    with (
        pytest.warns(DeprecationWarning, match=r"VerifyOptions"),
        pytest.raises(UsageError, match="needs either a server command"),
    ):
        anyio.run(go)


def test_run_mode_takes_its_channels_from_the_options_or_warns(tmp_path: Path) -> None:
    from cassette.errors import CassetteNotFoundError
    from cassette.modes.policy import ModeChoice
    from cassette.modes.runner import ModeOptions, run_mode
    from cassette.transport import Target

    told: list[str] = []
    options = ModeOptions(target=Target(command=("server",)), redactor=None)
    missing = tmp_path / "missing.jsonl"

    async def go() -> None:
        await run_mode(missing, ModeChoice("none"), options, on_info=told.append)

    with (
        pytest.warns(DeprecationWarning, match=r"run_mode\(on_info=.*ModeOptions"),
        pytest.raises(CassetteNotFoundError),
    ):
        anyio.run(go)


def test_a_keyword_the_old_signature_never_had_is_still_a_type_error() -> None:
    from cassette.runtime.serve import replay

    _client, server = memory_pair()
    with pytest.raises(TypeError, match="unexpected keyword argument 'on_mis'"):
        anyio.run(lambda: replay(server, Replayer(tape()), on_mis=print))


def test_no_keywords_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        deprecated_keywords("f", "f(Value())", {}, ())


@pytest.mark.filterwarnings(f"error:{DEPRECATED}:DeprecationWarning")
def test_the_value_forms_raise_no_deprecation_warning() -> None:
    from cassette.runtime import DeliveryPolicy, ReplayOptions
    from cassette.runtime.serve import replay, serve_replay

    front = MemoryTransport()

    async def go() -> list[bytes]:
        client, server = memory_pair()
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:
                policy = DeliveryPolicy(on_miss=lambda _text: None)
                tg.start_soon(replay, server, Replayer(tape()), policy)
                got = await _exchange(client)
                tg.start_soon(serve_replay, tape(), ReplayOptions(transport=front, policy=policy))
                got += await _exchange(front.open_connection())
                tg.cancel_scope.cancel()
                return got

    assert len(anyio.run(go)) == 4


def _keyword_calls(path: Path) -> list[str]:
    """Calls in ``path`` to a keyword form with a keyword it no longer takes as a value."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "partial" and node.args:
            func = node.args[0]  # functools.partial(replay, on_miss=...)
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if isinstance(func, ast.Attribute) and name in NOT_KEYWORD_FORMS:
            continue
        allowed = KEYWORD_FORMS.get(name or "")
        if allowed is None:
            continue
        extra = [k.arg for k in node.keywords if k.arg is not None and k.arg not in allowed]
        if extra:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}({', '.join(extra)}=)")
    return found


def test_our_own_code_calls_the_value_forms() -> None:
    """The command line, the plugin, the adapter, the tools, the examples and the
    benchmarks: a deprecated keyword form in any of them would warn at every user."""
    roots = [ROOT / "cassette", ROOT / "examples", ROOT / "benchmarks"]
    found = [
        call
        for root in roots
        for path in sorted(root.rglob("*.py"))
        for call in _keyword_calls(path)
    ]
    assert found == []
